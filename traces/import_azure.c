/* Imports Azure's public LLM inference traces (2023 and 2024 CSV samples)
 * into the request table: one request per row, each its own session. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_csv.h"
#include "common/wz_str.h"
#include "traces/traffic_import.h"

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (Hinnant's days_from_civil): timegm() is not in C11 and mktime() would
 * apply the machine's time zone. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int days[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return days[m - 1] + (m == 2 && leap);
}

static int digits(const char **p, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)**p))
			return -1;
		v = v * 10 + (**p - '0');
		(*p)++;
	}
	*out = v;
	return 0;
}

/* Years a timestamp may name: int64 nanoseconds since 1970 reach only
 * 1677-2262, and the importer subtracts the first row's time from each
 * row's, so both must lie within 146 years of 1970 for the difference to
 * fit.  Azure's samples are from 2023 and 2024. */
#define AZURE_YEAR_MIN 1900
#define AZURE_YEAR_MAX 2099

/* Parses "YYYY-MM-DD HH:MM:SS[.f{1,9}][Z|+HH:MM|-HH:MM]" (a 'T' may stand
 * for the blank) into nanoseconds since 1970 UTC.  Integer nanoseconds keep
 * the traces' 100-ns resolution, which a double of epoch seconds would
 * round away.  -1: not a date and time; -2: a year out of range. */
static int parse_datetime(const char *text, int64_t *ns)
{
	const char *p = text;
	while (*p == ' ' || *p == '\t')
		p++;
	int y, mo, d, h, mi, s;
	if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
	    digits(&p, 2, &d) || (*p != ' ' && *p != 'T'))
		return -1;
	p++;
	if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
	    digits(&p, 2, &s))
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || s > 60)
		return -1;
	if (y < AZURE_YEAR_MIN || y > AZURE_YEAR_MAX)
		return -2;
	int64_t frac = 0;
	if (*p == '.') {
		p++;
		int nd = 0;
		while (isdigit((unsigned char)*p)) {
			if (nd < 9) {
				frac = frac * 10 + (*p - '0');
				nd++;
			}
			p++;
		}
		if (nd == 0)
			return -1;
		for (; nd < 9; nd++)
			frac *= 10;
	}
	int64_t offset_s = 0;
	if (*p == 'Z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
		if (digits(&p, 2, &oh))
			return -1;
		if (*p == ':')
			p++;
		if (isdigit((unsigned char)*p) && digits(&p, 2, &om))
			return -1;
		offset_s = sign * (oh * 3600 + om * 60);
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p)
		return -1;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset_s;
	*ns = secs * 1000000000 + frac;
	return 0;
}

/* Column names seen in Azure's samples, first match wins. */
static int find_column(const wz_csv *csv, const char *const *names)
{
	for (; *names; names++) {
		int c = wz_csv_column(csv, *names);
		if (c >= 0)
			return c;
	}
	return -1;
}

wz_err wzt_import_azure(const char *path, wzt_unsorted_policy policy, wzt_traffic **out,
			size_t *n_reordered, wz_diag *diag)
{
	static const char *const time_names[] = { "TIMESTAMP", NULL };
	static const char *const ctx_names[] = { "ContextTokens", "Context Tokens", NULL };
	static const char *const gen_names[] = { "GeneratedTokens", "Generated Tokens", NULL };
	*out = NULL;
	wz_csv *csv;
	wz_err err = wzt_csv_load(path, &csv, diag);
	if (err)
		return err;
	int c_time = -1, c_ctx = -1, c_gen = -1;
	if (csv->nrows > 0) {
		c_time = find_column(csv, time_names);
		c_ctx = find_column(csv, ctx_names);
		c_gen = find_column(csv, gen_names);
	}
	if (c_time < 0 || c_ctx < 0 || c_gen < 0) {
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s:1: header: not an Azure LLM inference trace (want columns "
				  "TIMESTAMP, ContextTokens, GeneratedTokens; missing %s)",
				  path, c_time < 0 ? "TIMESTAMP" : c_ctx < 0 ? "ContextTokens"
									   : "GeneratedTokens");
		wz_csv_free(csv);
		return err;
	}
	wzt_traffic *t = NULL;
	{
		wz_buf src = { 0 };
		wz_buf_printf(&src, "azure-csv:%s", path);
		t = wzt_traffic_new(path, wz_buf_str(&src));
		wz_buf_free(&src);
	}
	if (!t) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	int64_t base_ns = 0;
	double latest = -INFINITY, first = NAN;
	for (int i = 1; i < csv->nrows && !err; i++) {
		const wz_csv_row *row = &csv->rows[i];
		const char *ts = wz_csv_field(row, c_time);
		int64_t ns;
		int bad = parse_datetime(ts, &ns);
		if (bad == -2) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: field TIMESTAMP: '%s': the year is not in %d..%d",
					  path, row->line, ts, AZURE_YEAR_MIN, AZURE_YEAR_MAX);
			break;
		}
		if (bad) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: field TIMESTAMP: '%s' is not a date and time "
					  "(YYYY-MM-DD HH:MM:SS.fffffff)",
					  path, row->line, ts);
			break;
		}
		if (i == 1)
			base_ns = ns;
		/* Relative to the first row, in integer nanoseconds first, so
		 * the double keeps sub-microsecond differences. */
		wzt_request r = { .session = i - 1, .arrival_s = (double)(ns - base_ns) * 1e-9 };
		err = wzt_check_span(&first, r.arrival_s, ts, path, row->line, "TIMESTAMP", diag);
		if (!err)
			err = wzt_check_order(&latest, r.arrival_s, policy, path, row->line,
					      "TIMESTAMP", diag);
		if (!err)
			err = wzt_parse_tokens(wz_csv_field(row, c_ctx), path, row->line,
					       "ContextTokens", &r.prompt_tokens, diag);
		if (!err)
			err = wzt_parse_tokens(wz_csv_field(row, c_gen), path, row->line,
					       "GeneratedTokens", &r.output_tokens, diag);
		if (!err)
			err = wzt_traffic_push(t, &r, diag);
	}
	wz_csv_free(csv);
	if (!err)
		err = wzt_traffic_finish(t, n_reordered, diag);
	if (err) {
		wzt_traffic_free(t);
		return err;
	}
	*out = t;
	return WZ_OK;
}
