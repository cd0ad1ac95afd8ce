/* Imports BurstGPT's CSV traces (Azure OpenAI usage behind a campus
 * service): one request per row, each its own session unless the file has
 * a SessionID column. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_csv.h"
#include "common/wz_io.h"
#include "common/wz_str.h"
#include "traces/traffic_import.h"

wz_err wzt_import_burstgpt(const char *path, const char *model, wzt_unsorted_policy policy,
			   wzt_traffic **out, size_t *n_reordered, wz_diag *diag)
{
	*out = NULL;
	wz_csv *csv;
	wz_err err = wzt_csv_load(path, &csv, diag);
	if (err)
		return err;
	static const char *const need[] = { "Timestamp", "Request tokens", "Response tokens" };
	int col[3];
	for (int c = 0; c < 3; c++) {
		col[c] = csv->nrows ? wz_csv_column(csv, need[c]) : -1;
		if (col[c] < 0) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:1: header: not a BurstGPT trace (no column '%s')", path,
					  need[c]);
			wz_csv_free(csv);
			return err;
		}
	}
	int c_model = csv->nrows ? wz_csv_column(csv, "Model") : -1;
	/* Announced for later releases; earlier files have no sessions. */
	int c_session = csv->nrows ? wz_csv_column(csv, "SessionID") : -1;
	if (c_session < 0 && csv->nrows)
		c_session = wz_csv_column(csv, "Session ID");
	if (model && c_model < 0) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:1: header: no column 'Model' to select '%s' by", path, model);
	}
	wz_buf src = { 0 };
	wz_buf_printf(&src, "burstgpt:%s%s%s", path, model ? " model=" : "", model ? model : "");
	wzt_traffic *t = wzt_traffic_new(path, wz_buf_str(&src));
	wz_buf_free(&src);
	if (!t) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	double latest = -INFINITY, first = NAN;
	for (int i = 1; i < csv->nrows && !err; i++) {
		const wz_csv_row *row = &csv->rows[i];
		if (model && !wz_name_eq(wz_csv_field(row, c_model), model))
			continue;
		const char *ts = wz_csv_field(row, col[0]);
		wzt_request r = { .session = i - 1 };
		/* Session ids are text: key them by a 64-bit hash (a collision
		 * between two of a million sessions has odds near 10^-8). */
		const char *sid = wz_csv_field(row, c_session);
		if (*sid)
			r.session = (int64_t)(wz_hash_bytes(sid, strlen(sid)) >> 1);
		if (wz_parse_double(ts, &r.arrival_s) != 0 || r.arrival_s < 0) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: field Timestamp: '%s' is not a non-negative number "
					  "of seconds",
					  path, row->line, ts);
			break;
		}
		err = wzt_check_span(&first, r.arrival_s, ts, path, row->line, "Timestamp", diag);
		if (!err)
			err = wzt_check_order(&latest, r.arrival_s, policy, path, row->line,
					      "Timestamp", diag);
		if (!err)
			err = wzt_parse_tokens(wz_csv_field(row, col[1]), path, row->line,
					       "Request tokens", &r.prompt_tokens, diag);
		if (!err)
			err = wzt_parse_tokens(wz_csv_field(row, col[2]), path, row->line,
					       "Response tokens", &r.output_tokens, diag);
		if (!err)
			err = wzt_traffic_push(t, &r, diag);
	}
	wz_csv_free(csv);
	if (!err && model && t->n == 0)
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s: field Model: no row has the model '%.80s' (an empty table is "
				  "not written)",
				  path, model);
	if (!err)
		err = wzt_traffic_finish(t, n_reordered, diag);
	if (err) {
		wzt_traffic_free(t);
		return err;
	}
	*out = t;
	return WZ_OK;
}
