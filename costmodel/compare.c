/* Cost comparison across formats for one scenario (compare.h). */
#include "costmodel/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/layers.h"

void wzm_compare_free(wzm_compare *c)
{
	if (!c)
		return;
	free(c->rows);
	c->rows = NULL;
	c->nrows = 0;
}

wz_err wzm_compare_run(const wzm_scenario *s, const wzm_catalog *cat,
		       const wzm_format_size *formats, int nformats, wzm_compare *out,
		       wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	wz_err err = wzm_scenario_validate(s, diag);
	if (err)
		return err;
	out->model = wzm_find_model(cat, s->model, diag);
	if (!out->model)
		return WZ_ERR_NOT_FOUND;
	out->gpu = wzm_find_gpu(cat, s->gpu, diag);
	if (!out->gpu)
		return WZ_ERR_NOT_FOUND;
	err = wzm_find_rates(cat, s->price_set, out->gpu, &out->rates, diag);
	if (err == WZ_ERR_NOT_FOUND && diag && strcmp(s->price_set, "catalog") &&
	    isfinite(out->gpu->price_reserved_usd_h) && isfinite(out->gpu->price_ondemand_usd_h)) {
		/* The price set names fewer GPUs than the catalog holds; the
		 * GPU's own row has prices, which one word selects. */
		char said[sizeof diag->msg];
		snprintf(said, sizeof said, "%s", diag->msg);
		return wz_diag_set(diag, err,
				   "%s; --price-set catalog (price_set = catalog in a scenario) uses "
				   "the prices of the GPU's own row in gpus.csv",
				   said);
	}
	if (err)
		return err;
	out->context_over_limit = !isnan(out->model->max_context) &&
				  (double)s->context > out->model->max_context;
	out->baseline = -1;
	for (int i = 0; i < nformats; i++)
		if (!strcmp(formats[i].name, s->baseline_format))
			out->baseline = i;
	if (out->baseline < 0)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "the baseline format '%s' must be one of the formats compared",
				   s->baseline_format);
	out->rows = calloc((size_t)nformats, sizeof *out->rows);
	if (!out->rows)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	out->nrows = nformats;
	const wzm_format_size *base = &formats[out->baseline];
	for (int i = 0; i < nformats; i++) {
		wzm_compare_row *row = &out->rows[i];
		row->fmt = formats[i];
		if (s->mode & WZM_MODE_SCALING) {
			/* bytes per token, what every format keeps beside its
			 * record (a DSA indexer's keys) included; a hybrid
			 * cache's at the scenario's context */
			wzm_fleet_scaling(s->baseline_gpus,
					  wzm_token_bytes(out->model, base->record_per_layer, s->context),
					  wzm_token_bytes(out->model, formats[i].record_per_layer,
							  s->context),
					  1, s->rounding, &row->scaling);
			wzm_fleet_price(&row->scaling, &out->rates);
		}
		if (s->mode & WZM_MODE_MEMORY) {
			err = wzm_memory_compute(out->model, out->gpu, &s->mem,
						 formats[i].record_per_layer, s->context, &row->memory,
						 diag);
			if (!err)
				err = wzm_fleet_memory(s->users, row->memory.users_per_replica,
						       s->mem.gpus_per_replica, &row->by_memory, diag);
			if (err) {
				if (err == WZ_ERR_RANGE && row->memory.cache > 0) {
					char inner[sizeof diag->msg];
					memcpy(inner, diag->msg, sizeof inner);
					wz_diag_set(diag, err, "%s at %ld tokens: %s", formats[i].name,
						    s->context, inner);
				}
				wzm_compare_free(out);
				return err;
			}
			wzm_fleet_price(&row->by_memory, &out->rates);
		}
	}
	for (int i = 0; i < nformats; i++) {
		wzm_fleet_saving(&out->rows[i].scaling, &out->rows[out->baseline].scaling);
		wzm_fleet_saving(&out->rows[i].by_memory, &out->rows[out->baseline].by_memory);
	}
	return WZ_OK;
}
