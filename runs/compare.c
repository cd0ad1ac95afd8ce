/* A codec comparison as a job (compare.h): every listed format against
 * every reference format on each trace window, paired
 * (codec/measure/paired.h): the error ratios with their intervals and the
 * share of tokens and queries where the format has the lower error, as a
 * table.  measure's ratios are all to fp8-mix; this one puts wz beside any
 * baseline at that baseline's own rate. */
#include "runs/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/formats/format.h"
#include "codec/kvtc/kvtc.h"
#include "codec/measure/measure_run.h"
#include "codec/measure/paired.h"
#include "codec/profile/profile.h"
#include "common/wz_str.h"
#include "runs/measure.h"
#include "runs/say.h"

#define CMD "codec"
#define MAX_FORMATS WZ_MEASURE_MAX_FORMATS

/* Parses a comma list of format names into fmts; returns the count or -1
 * after reporting the error (exit status in *rc). */
static int parse_formats(const char *opt, const char *list, wzc_format *fmts, int max, int *rc)
{
	char **items;
	wz_diag diag;
	int n = wz_split_list(list, &items);
	if (n <= 0) {
		*rc = wz_say_usage(CMD, "%s: an empty list", opt);
		return -1;
	}
	if (n > max) {
		wz_strlist_free(items, n);
		*rc = wz_say_usage(CMD, "%s: at most %d formats", opt, max);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (wzc_format_parse(items[i], &fmts[i], &diag)) {
			wz_strlist_free(items, n);
			*rc = wz_say_fail(CMD, &diag);
			return -1;
		}
	wz_strlist_free(items, n);
	return n;
}

static void ci_cells(wzp_table *t, int wide, wzc_ci ci)
{
	char a[32], b[32], c[32], disp[112];
	if (isnan(ci.value)) {
		for (int i = 0; i < (wide ? 3 : 1); i++)
			wzp_table_empty(t);
		return;
	}
	snprintf(a, sizeof a, "%.3f", ci.value);
	snprintf(b, sizeof b, "%.3f", ci.lo);
	snprintf(c, sizeof c, "%.3f", ci.hi);
	if (wide) {
		wzp_table_num(t, ci.value, a);
		wzp_table_num(t, ci.lo, b);
		wzp_table_num(t, ci.hi, c);
		return;
	}
	snprintf(disp, sizeof disp, "%s [%s, %s]", a, b, c);
	wzp_table_num(t, ci.value, disp);
}

static void share_cell(wzp_table *t, double share)
{
	char d[16];
	if (isnan(share)) {
		wzp_table_empty(t);
		return;
	}
	snprintf(d, sizeof d, "%.0f%%", 100 * share);
	wzp_table_num(t, share, d);
}

static wzp_table *compare_table(int wide)
{
	wzp_table *t = wzp_table_new("Formats against references, paired per window "
				     "(95% bootstrap intervals)");
	wzp_table_column(t, "window", "Window", 0);
	wzp_table_column(t, "format", "Format", 0);
	wzp_table_column(t, "bits", "Bits/value", 1);
	wzp_table_column(t, "against", "Against", 0);
	wzp_table_column(t, "against_bits", "Its bits/value", 1);
	wzp_table_ci_columns(t, wide, "nmse_ratio", "nmse ratio");
	wzp_table_column(t, "tokens_better", "Tokens better", 1);
	wzp_table_ci_columns(t, wide, "kl_ratio", "KL ratio");
	wzp_table_column(t, "queries_better", "Queries better", 1);
	return t;
}

static void compare_row(wzp_table *t, int wide, const char *window, const wzc_format *a,
			const wzc_format *b, const wzc_pair_result *r)
{
	char d[32];
	wzp_table_row(t);
	wzp_table_str(t, window);
	wzp_table_str(t, a->name);
	snprintf(d, sizeof d, "%.3f", r->bits_a);
	wzp_table_num(t, r->bits_a, d);
	wzp_table_str(t, b->name);
	snprintf(d, sizeof d, "%.3f", r->bits_b);
	wzp_table_num(t, r->bits_b, d);
	ci_cells(t, wide, r->nmse_ratio);
	share_cell(t, r->tokens_better);
	ci_cells(t, wide, r->kl_ratio);
	share_cell(t, r->queries_better);
}

int wz_compare_run(const wz_compare_req *rq, int wide, wzp_table **out)
{
	int rc;
	wz_diag diag;
	*out = NULL;
	if (!rq->npaths || !rq->formats || !rq->against)
		return wz_say_usage(CMD, "compare needs --trace, --formats and --against");
	if (rq->nboot < 1) /* its ratios' intervals are bootstrap intervals */
		return wz_say_usage(CMD, "--boot: compare needs at least 1 resample, not %ld",
				    (long)rq->nboot);
	/* Both lists in one array: the formats first, then the references. */
	wzc_format fmts[MAX_FORMATS];
	int na = parse_formats("--formats", rq->formats, fmts, MAX_FORMATS / 2, &rc);
	if (na < 0)
		return rc;
	int nb = parse_formats("--against", rq->against, fmts + na, MAX_FORMATS / 2, &rc);
	if (nb < 0)
		return rc;
	int need_profile = 0;
	for (int i = 0; i < na + nb; i++)
		need_profile |= wzc_format_needs_profile(fmts[i].id);
	if (need_profile && !rq->profile_path)
		return wz_say_usage(CMD, "wz formats need --profile");
	wzc_profile *prof = NULL;
	if (rq->profile_path && wzc_profile_read(rq->profile_path, &prof, &diag))
		return wz_say_fail(CMD, &diag);
	struct wzc_kvtc *kvtc = NULL;
	int rc0 = wz_codec_fit_kvtc(rq->calibration_paths, rq->ncalibration, fmts, na + nb, prof,
				    &kvtc);
	if (rc0) {
		wzc_profile_free(prof);
		return rc0;
	}
	wzt_cache_trace **traces = calloc((size_t)rq->npaths, sizeof *traces);
	wzc_window *windows = calloc((size_t)rq->npaths, sizeof *windows);
	if (!traces || !windows) {
		free(traces);
		free(windows);
		wzc_profile_free(prof);
		wzc_kvtc_free(kvtc);
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_say_fail(CMD, &diag);
	}
	rc = wz_codec_load_traces(rq->paths, rq->npaths, traces);
	for (int i = 0; !rc && i < rq->npaths; i++)
		windows[i] = wz_codec_window(traces[i], rq->paths[i]);
	wzp_table *t = rc ? NULL : compare_table(wide);
	if (!rc && !t) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_say_fail(CMD, &diag);
	}
	wz_err e = WZ_OK;
	/* Every window in every format of both lists, on the threads, as
	 * `codec measure` runs them (the same errors for any thread count). */
	wzc_run *run = NULL;
	if (!rc) {
		wzc_run_spec spec = { windows, rq->npaths, fmts, na + nb, 0, prof, 0, 0,
				      rq->threads > 0 ? (int)rq->threads : wzc_cores(),
				      (int)rq->nboot, (uint64_t)rq->seed, wz_codec_progress, NULL, 1 };
		e = wzc_run_measure(&spec, &run, &diag);
	}
	for (int i = 0; !rc && !e && i < rq->npaths; i++) {
		const wzc_run_cell *cells = &run->cells[(size_t)i * (na + nb)];
		for (int a = 0; a < na; a++)
			for (int b = na; b < na + nb; b++) {
				wzc_pair_result r;
				wzc_compare_errors(cells[a].e, cells[b].e, (int)rq->nboot,
						   (uint64_t)rq->seed, &r);
				compare_row(t, wide, windows[i].name, &fmts[a], &fmts[b], &r);
			}
	}
	wzc_run_free(run);
	if (!rc && e)
		rc = wz_say_fail(CMD, &diag);
	if (!rc)
		*out = t;
	else
		wzp_table_free(t);
	for (int i = 0; i < rq->npaths; i++)
		wzt_cache_trace_free(traces[i]);
	free(traces);
	free(windows);
	wzc_profile_free(prof);
	wzc_kvtc_free(kvtc);
	return rc;
}
