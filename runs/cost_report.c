/* Tables of the cost comparison: scaling fleets, memory fleets, the per-GPU
 * memory breakdown, and one wide table for machines (cost_report.h). */
#include "runs/cost_report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "costmodel/capacity.h"
#include "costmodel/layers.h"
#include "runs/setup.h"

static void money(wzp_table *t, double usd)
{
	char text[64];
	double a = fabs(usd);
	if (a >= 1e6)
		snprintf(text, sizeof text, "%s$%.2fM", usd < 0 ? "-" : "", a / 1e6);
	else if (a >= 1e3)
		snprintf(text, sizeof text, "%s$%.1fk", usd < 0 ? "-" : "", a / 1e3);
	else
		snprintf(text, sizeof text, "%s$%.0f", usd < 0 ? "-" : "", a);
	wzp_table_num(t, usd, text);
}

static void saving(wzp_table *t, int is_baseline, double usd)
{
	if (is_baseline)
		wzp_table_str(t, "baseline");
	else
		money(t, usd);
}

static void ratio(wzp_table *t, double base_bits, double bits)
{
	char text[32];
	snprintf(text, sizeof text, "%.2fx", base_bits / bits);
	wzp_table_num(t, base_bits / bits, text);
}

/* What every format keeps beside its record, where the model has it. */
static void side_note(wzp_table *t, const wzm_compare *c)
{
	double side = wzm_side_cache_per_layer(c->model);
	if (wzm_model_hybrid(c->model))
		wzp_table_note(t, "Bytes per token: %s's cache per sequence at the context over the "
				  "context, by its layer kinds (its windows, compressed entries and "
				  "fp8 indexer keys; %s:%d; wzplan model show).",
			       c->model->name, c->model->kinds[0].origin, c->model->kinds[0].line);
	else if (side > 0)
		wzp_table_note(t, "Bytes per token include %s's sparse-attention indexer keys, %.0f "
				  "bytes a layer in every format (index_head_dim %.0f, %s:%d).",
			       c->model->name, side, c->model->index_head_dim, c->model->origin,
			       c->model->line);
}

static void rates_note(wzp_table *t, const wzm_scenario *s, const wzm_compare *c)
{
	wzp_table_note(t, "Prices: set '%s', %s: $%.2f/GPU-hour reserved, $%.2f on demand, "
			  "x 8,760 h/year (%s:%d; source: %s; %s).",
		       s->price_set, c->gpu->name, c->rates.reserved_usd_h, c->rates.ondemand_usd_h,
		       c->rates.origin, c->rates.line, c->rates.source ? c->rates.source : "",
		       c->rates.date ? c->rates.date : "undated");
}

static int any_rounding_differs(const wzm_compare *c)
{
	for (int i = 0; i < c->nrows; i++)
		if (c->rows[i].scaling.gpus_up != c->rows[i].scaling.gpus_nearest)
			return 1;
	return 0;
}

wzp_table *wz_report_scaling(const wzm_scenario *s, const wzm_compare *c)
{
	char title[256];
	const wzm_compare_row *base = &c->rows[c->baseline];
	snprintf(title, sizeof title,
		 "Scaling: %ld users at %ld tokens, %s, from %ld %s with %s", s->users, s->context,
		 c->model->name, s->baseline_gpus, c->gpu->name, base->fmt.name);
	wzp_table *t = wzp_table_new(title);
	if (!t)
		return NULL;
	int both = any_rounding_differs(c);
	char gpus_label[64];
	snprintf(gpus_label, sizeof gpus_label, "GPUs (%s)", wzm_rounding_name(s->rounding));
	wzp_table_column(t, "format", "Cache format", 0);
	wzp_table_column(t, "bits_per_value", "Bits/value", 1);
	wzp_table_column(t, "fewer_bits", "Fewer bits", 1);
	wzp_table_column(t, "gpus_exact", "GPUs (exact)", 1);
	wzp_table_column(t, "gpus", gpus_label, 1);
	if (both)
		wzp_table_column(t, s->rounding == WZM_ROUND_UP ? "gpus_nearest" : "gpus_up",
				 s->rounding == WZM_ROUND_UP ? "GPUs (nearest)" : "GPUs (up)", 1);
	wzp_table_column(t, "reserved_usd_year", "Per year, reserved", 1);
	wzp_table_column(t, "saving_reserved", "Saving, reserved", 1);
	wzp_table_column(t, "ondemand_usd_year", "Per year, on demand", 1);
	wzp_table_column(t, "saving_ondemand", "Saving, on demand", 1);
	for (int i = 0; i < c->nrows; i++) {
		const wzm_compare_row *r = &c->rows[i];
		wzp_table_row(t);
		wzp_table_str(t, r->fmt.label);
		wzp_table_numf(t, r->fmt.bits_per_value, 2);
		ratio(t, base->fmt.bits_per_value, r->fmt.bits_per_value);
		wzp_table_numf(t, r->scaling.gpus_exact, 1);
		wzp_table_numf(t, (double)r->scaling.gpus, 0);
		if (both)
			wzp_table_numf(t, (double)(s->rounding == WZM_ROUND_UP ? r->scaling.gpus_nearest
									  : r->scaling.gpus_up),
				       0);
		money(t, r->scaling.reserved_usd_year);
		saving(t, i == c->baseline, r->scaling.saving_reserved);
		money(t, r->scaling.ondemand_usd_year);
		saving(t, i == c->baseline, r->scaling.saving_ondemand);
	}
	wzp_table_note(t, "Method: users per GPU in proportion to cache capacity (bytes per token), "
			  "assuming decode runs at %s speed; GPUs = %ld x bytes / %s bytes, rounded %s "
			  "whole GPU%s.",
		       base->fmt.name, s->baseline_gpus, base->fmt.name,
		       s->rounding == WZM_ROUND_UP ? "up to a" : "to the nearest",
		       both ? "; the other rule is shown where it differs" : "");
	side_note(t, c);
	rates_note(t, s, c);
	return t;
}

wzp_table *wz_report_memory(const wzm_scenario *s, const wzm_compare *c)
{
	char title[256];
	snprintf(title, sizeof title,
		 "Memory: %ld users at %ld tokens, %s on %d x %s replicas (%s)", s->users, s->context,
		 c->model->name, s->mem.gpus_per_replica, c->gpu->name,
		 wzm_parallelism_name(s->mem.par));
	wzp_table *t = wzp_table_new(title);
	if (!t)
		return NULL;
	wzp_table_column(t, "format", "Cache format", 0);
	wzp_table_column(t, "bits_per_value", "Bits/value", 1);
	wzp_table_column(t, "user_gib", "Cache/user (GiB)", 1);
	wzp_table_column(t, "users_per_gpu", "Users/GPU", 1);
	wzp_table_column(t, "users_per_replica", "Users/replica", 1);
	wzp_table_column(t, "replicas", "Replicas", 1);
	wzp_table_column(t, "gpus", "GPUs", 1);
	wzp_table_column(t, "reserved_usd_year", "Per year, reserved", 1);
	wzp_table_column(t, "saving_reserved", "Saving, reserved", 1);
	wzp_table_column(t, "saving_ondemand", "Saving, on demand", 1);
	for (int i = 0; i < c->nrows; i++) {
		const wzm_compare_row *r = &c->rows[i];
		wzp_table_row(t);
		wzp_table_str(t, r->fmt.label);
		wzp_table_numf(t, r->fmt.bits_per_value, 2);
		wzp_table_numf(t, r->memory.per_block * r->memory.blocks_per_user / WZM_GIB, 2);
		wzp_table_numf(t, (double)r->memory.users_per_gpu, 0);
		wzp_table_numf(t, (double)r->memory.users_per_replica, 0);
		wzp_table_numf(t, (double)r->by_memory.replicas, 0);
		wzp_table_numf(t, (double)r->by_memory.gpus, 0);
		money(t, r->by_memory.reserved_usd_year);
		saving(t, i == c->baseline, r->by_memory.saving_reserved);
		saving(t, i == c->baseline, r->by_memory.saving_ondemand);
	}
	if (s->mem.replicated_params_b > 0)
		wzp_table_note(t, "Method: cache per GPU = HBM x %.2f - weights held whole - the rest "
				  "/ %d GPUs - %.1f GiB reserve, in %d-token blocks; every user holds "
				  "%ld tokens; whole replicas.",
			       s->mem.mem_util, s->mem.gpus_per_replica, s->mem.act_reserve_gib,
			       WZM_BLOCK_TOKENS, s->context);
	else
		wzp_table_note(t, "Method: cache per GPU = HBM x %.2f - weights / %d GPUs - %.1f GiB "
				  "reserve, in %d-token blocks; every user holds %ld tokens; whole "
				  "replicas.",
			       s->mem.mem_util, s->mem.gpus_per_replica, s->mem.act_reserve_gib,
			       WZM_BLOCK_TOKENS, s->context);
	if (s->mem.par == WZM_PAR_TP)
		wzp_table_note(t, "Tensor parallel: MLA caches are not split across ranks, so each "
				  "replica holds one GPU's worth of users.");
	rates_note(t, s, c);
	return t;
}

wzp_table *wz_report_breakdown(const wzm_scenario *s, const wzm_compare *c)
{
	char title[256];
	snprintf(title, sizeof title, "Per-GPU memory on %s (GiB), %s, %ld tokens per user",
		 c->gpu->name, c->model->name, s->context);
	wzp_table *t = wzp_table_new(title);
	if (!t)
		return NULL;
	wzp_table_column(t, "format", "Cache format", 0);
	wzp_table_column(t, "hbm_gib", "HBM", 1);
	wzp_table_column(t, "usable_gib", "Usable", 1);
	wzp_table_column(t, "weights_gib", "Weights", 1);
	wzp_table_column(t, "reserve_gib", "Reserve", 1);
	wzp_table_column(t, "cache_gib", "Cache pool", 1);
	wzp_table_column(t, "used_gib", "Cache used", 1);
	wzp_table_column(t, "users_per_gpu", "Users/GPU", 1);
	for (int i = 0; i < c->nrows; i++) {
		const wzm_memory *m = &c->rows[i].memory;
		wzp_table_row(t);
		wzp_table_str(t, c->rows[i].fmt.label);
		wzp_table_numf(t, m->hbm / WZM_GIB, 2);
		wzp_table_numf(t, m->usable / WZM_GIB, 2);
		wzp_table_numf(t, m->weights / WZM_GIB, 2);
		wzp_table_numf(t, m->reserve / WZM_GIB, 2);
		wzp_table_numf(t, m->cache / WZM_GIB, 2);
		wzp_table_numf(t, (double)m->users_per_gpu * m->blocks_per_user * m->per_block / WZM_GIB,
			       2);
		wzp_table_numf(t, (double)m->users_per_gpu, 0);
	}
	double wbits = isnan(s->mem.weight_bits) ? c->model->weight_bits : s->mem.weight_bits;
	double whole = s->mem.replicated_params_b < c->model->params_total_b
			       ? s->mem.replicated_params_b
			       : c->model->params_total_b;
	if (whole >= c->model->params_total_b)
		wzp_table_note(t, "Weights: %s, %.0fB parameters at %.0f bits (%s:%d), all of them on "
				  "every GPU (no routed experts to split under attention data "
				  "parallelism).",
			       c->model->name, c->model->params_total_b, wbits, c->model->origin,
			       c->model->line);
	else if (whole > 0)
		wzp_table_note(t, "Weights: %s, %.0fB parameters at %.0f bits (%s:%d); with attention "
				  "data parallelism every GPU holds %.1fB whole (all but the routed "
				  "experts, by its MoE shape) and 1/%d of the other %.1fB.",
			       c->model->name, c->model->params_total_b, wbits, c->model->origin,
			       c->model->line, whole, s->mem.gpus_per_replica,
			       c->model->params_total_b - whole);
	else
		wzp_table_note(t, "Weights: %s, %.0fB parameters at %.0f bits (%s:%d), split over %d "
				  "GPUs.",
			       c->model->name, c->model->params_total_b, wbits, c->model->origin,
			       c->model->line, s->mem.gpus_per_replica);
	double routed = wzm_routed_params(c->model);
	if (wbits == c->model->weight_bits && routed > 0)
		wzp_table_note(t, "Of them, the %.1fB in routed experts at %g bits (expert_bits).",
			       routed / 1e9, c->model->expert_bits);
	side_note(t, c);
	wzp_table_note(t, "HBM: %.0f GiB (%s:%d).", c->gpu->hbm_gib, c->gpu->origin, c->gpu->line);
	return t;
}

wzp_table *wz_report_wide(const wzm_scenario *s, const wzm_compare *c)
{
	wzp_table *t = wzp_table_new("cost comparison");
	if (!t)
		return NULL;
	static const char *const cols[] = {
		"bits_per_value", "record_bytes_per_layer", "bytes_per_token",
		"scaling_gpus_exact", "scaling_gpus", "scaling_gpus_up", "scaling_gpus_nearest",
		"scaling_reserved_usd_year", "scaling_ondemand_usd_year",
		"scaling_saving_reserved", "scaling_saving_ondemand",
		"memory_cache_gib_per_gpu", "memory_users_per_gpu", "memory_users_per_replica",
		"memory_replicas", "memory_gpus", "memory_reserved_usd_year",
		"memory_ondemand_usd_year", "memory_saving_reserved", "memory_saving_ondemand",
	};
	wzp_table_column(t, "format", "format", 0);
	wzp_table_column(t, "label", "label", 0);
	for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
		wzp_table_column(t, cols[k], cols[k], 1);
	int scaling = (s->mode & WZM_MODE_SCALING) != 0, memory = (s->mode & WZM_MODE_MEMORY) != 0;
	for (int i = 0; i < c->nrows; i++) {
		const wzm_compare_row *r = &c->rows[i];
		double v[] = {
			r->fmt.bits_per_value, r->fmt.record_per_layer,
			wzm_token_bytes(c->model, r->fmt.record_per_layer, s->context),
			r->scaling.gpus_exact, (double)r->scaling.gpus, (double)r->scaling.gpus_up,
			(double)r->scaling.gpus_nearest, r->scaling.reserved_usd_year,
			r->scaling.ondemand_usd_year, r->scaling.saving_reserved,
			r->scaling.saving_ondemand,
			r->memory.cache / WZM_GIB, (double)r->memory.users_per_gpu,
			(double)r->memory.users_per_replica, (double)r->by_memory.replicas,
			(double)r->by_memory.gpus, r->by_memory.reserved_usd_year,
			r->by_memory.ondemand_usd_year, r->by_memory.saving_reserved,
			r->by_memory.saving_ondemand,
		};
		wzp_table_row(t);
		wzp_table_str(t, r->fmt.name);
		wzp_table_str(t, r->fmt.label);
		for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) {
			int is_scaling = k >= 3 && k <= 10, is_memory = k >= 11;
			if ((is_scaling && !scaling) || (is_memory && !memory))
				wzp_table_empty(t);
			else
				wzp_table_num(t, v[k], "");
		}
	}
	return t;
}

wz_err wz_report_render(const wzm_scenario *s, const wzm_compare *c, wzp_output how,
			wz_buf *out)
{
	if (how == WZP_CSV || how == WZP_JSON) {
		wzp_table *t = wz_report_wide(s, c);
		if (!t)
			return WZ_ERR_NOMEM;
		wz_err err = wzp_table_render(t, how, out);
		wzp_table_free(t);
		return err;
	}
	wzp_table *tables[3] = { NULL, NULL, NULL };
	int n = 0;
	if (s->mode & WZM_MODE_SCALING)
		tables[n++] = wz_report_scaling(s, c);
	if (s->mode & WZM_MODE_MEMORY) {
		tables[n++] = wz_report_memory(s, c);
		tables[n++] = wz_report_breakdown(s, c);
	}
	wz_err err = WZ_OK;
	for (int i = 0; i < n; i++) {
		if (!tables[i]) {
			err = WZ_ERR_NOMEM;
			continue;
		}
		if (i)
			wz_buf_puts(out, "\n");
		if (!err)
			err = wzp_table_render(tables[i], how, out);
		wzp_table_free(tables[i]);
	}
	return err;
}
