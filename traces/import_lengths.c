/* Imports a length-only CSV (Vidur's processed traces: prompt and output
 * token counts, no times) and gives it a synthetic arrival process. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_csv.h"
#include "common/wz_str.h"
#include "traces/traffic_import.h"

wz_err wzt_import_lengths(const char *path, const wzt_lengths_opts *opts, wzt_traffic **out,
			  wz_diag *diag)
{
	*out = NULL;
	const char *pcol = opts->prompt_column ? opts->prompt_column : "num_prefill_tokens";
	const char *ocol = opts->output_column ? opts->output_column : "num_decode_tokens";
	if (!(opts->rate > 0) || !isfinite(opts->rate))
		return wz_diag_set(diag, WZ_ERR_USAGE, "arrival rate must be a positive number");
	if (!(opts->cv > 0) || !isfinite(opts->cv))
		return wz_diag_set(diag, WZ_ERR_USAGE,
				   "inter-arrival CV must be a positive number (1 = Poisson)");
	wz_csv *csv;
	wz_err err = wzt_csv_load(path, &csv, diag);
	if (err)
		return err;
	int cp = csv->nrows ? wz_csv_column(csv, pcol) : -1;
	int co = csv->nrows ? wz_csv_column(csv, ocol) : -1;
	if (cp < 0 || co < 0) {
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s:1: header: no column '%s' (choose the columns with "
				  "--prompt-column and --output-column)",
				  path, cp < 0 ? pcol : ocol);
		wz_csv_free(csv);
		return err;
	}
	wz_buf src = { 0 };
	wz_buf_printf(&src, "lengths:%s rate=%.17g cv=%.17g seed=%llu", path, opts->rate, opts->cv,
		      (unsigned long long)opts->seed);
	wzt_traffic *t = wzt_traffic_new(path, wz_buf_str(&src));
	wz_buf_free(&src);
	if (!t) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	/* Gaps with mean 1/rate: exponential for CV 1 (a Poisson process),
	 * otherwise Gamma with shape 1/CV^2, which has exactly that CV. */
	wzt_rng rng;
	wzt_rng_seed(&rng, opts->seed);
	double shape = 1.0 / (opts->cv * opts->cv), scale = 1.0 / (opts->rate * shape);
	double now = 0;
	for (int i = 1; i < csv->nrows && !err; i++) {
		if (opts->limit > 0 && t->n >= (size_t)opts->limit)
			break;
		const wz_csv_row *row = &csv->rows[i];
		wzt_request r = { .session = i - 1, .arrival_s = now };
		err = wzt_parse_tokens(wz_csv_field(row, cp), path, row->line, pcol, &r.prompt_tokens,
				       diag);
		if (!err)
			err = wzt_parse_tokens(wz_csv_field(row, co), path, row->line, ocol,
					       &r.output_tokens, diag);
		if (!err)
			err = wzt_traffic_push(t, &r, diag);
		now += opts->cv == 1.0 ? -log(wzt_rng_uniform(&rng)) / opts->rate
				       : wzt_rng_gamma(&rng, shape, scale);
	}
	wz_csv_free(csv);
	if (!err)
		err = wzt_traffic_finish(t, NULL, diag);
	if (err) {
		wzt_traffic_free(t);
		return err;
	}
	*out = t;
	return WZ_OK;
}
