/* Per-GPU weights of a replica: what every GPU holds whole (weights.h). */
#include "sim/weights.h"

#include <math.h>

/* A shape field: the scenario key's value when set, else the catalog's. */
static wz_err shape_field(long key, double cat, const char *name, const wzm_model *model,
			  long *out, wz_diag *diag)
{
	if (key >= 0) {
		*out = key;
		return WZ_OK;
	}
	if (!isnan(cat)) {
		*out = (long)cat;
		return WZ_OK;
	}
	return wz_diag_set(diag, WZ_ERR_MISSING,
			   "%s:%d: field %s is empty for %s, and its mixture of experts needs it: "
			   "fill it in a catalog of your own (--catalog DIR) or set the scenario "
			   "key %s",
			   model->origin, model->line, name, model->name, name);
}

wz_err wzs_moe_shape_check(const wzm_model *model, const wzs_params *p, wzs_moe_shape *sh,
			   double *routed_all, wz_diag *diag)
{
	wz_err err;
	if ((err = wzm_need(model->hidden_size, model->name, "hidden_size", model->origin,
			    model->line, diag)) ||
	    (err = wzm_need(model->params_active_b, model->name, "params_active_b", model->origin,
			    model->line, diag)) ||
	    (err = wzm_need(model->params_total_b, model->name, "params_total_b", model->origin,
			    model->line, diag)) ||
	    (err = shape_field(p->moe_layers, model->moe_layers, "moe_layers", model, &sh->layers,
			       diag)) ||
	    (err = shape_field(p->moe_top_k, model->moe_top_k, "moe_top_k", model, &sh->top_k,
			       diag)) ||
	    (err = shape_field(p->moe_routed_experts, model->moe_routed_experts,
			       "moe_routed_experts", model, &sh->routed_experts, diag)) ||
	    (err = shape_field(p->moe_shared_experts, model->moe_shared_experts,
			       "moe_shared_experts", model, &sh->shared_experts, diag)) ||
	    (err = shape_field(p->moe_intermediate, model->moe_intermediate_size,
			       "moe_intermediate_size", model, &sh->intermediate, diag)))
		return err;
	double expert = 3.0 * model->hidden_size * (double)sh->intermediate; /* gate, up, down */
	double routed = (double)sh->layers * (double)sh->top_k * expert;
	double shared = (double)sh->layers * (double)sh->shared_experts * expert;
	double active = model->params_active_b * 1e9, total = model->params_total_b * 1e9;
	*routed_all = (double)sh->layers * (double)sh->routed_experts * expert;
	if (routed + shared > active || *routed_all > total || sh->top_k > sh->routed_experts)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "moe_layers, moe_top_k, moe_routed_experts, moe_shared_experts, "
				   "moe_intermediate_size: %ld layers of %ld of %ld experts (+%ld shared) "
				   "of %ld wide make %.1fB active of %.1fB total parameters, more than "
				   "%s's %.1fB of %.1fB; set them for this model (its catalog row: %s:%d)",
				   sh->layers, sh->top_k, sh->routed_experts, sh->shared_experts,
				   sh->intermediate, (routed + shared) / 1e9, *routed_all / 1e9,
				   model->name, active / 1e9, total / 1e9, model->origin, model->line);
	/* Group-limited routing: optional, none when neither says */
	sh->n_group = p->moe_n_group >= 0 ? p->moe_n_group
		      : !isnan(model->moe_n_group) ? (long)model->moe_n_group : 1;
	sh->topk_group = p->moe_topk_group >= 0 ? p->moe_topk_group
			 : !isnan(model->moe_topk_group) ? (long)model->moe_topk_group
							  : sh->n_group;
	if (sh->topk_group > sh->n_group || sh->routed_experts % sh->n_group ||
	    sh->top_k > sh->topk_group * (sh->routed_experts / sh->n_group))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "moe_n_group, moe_topk_group, moe_routed_experts: %ld of %ld groups of "
				   "%s's %ld routed "
				   "experts cannot hold its %ld experts a token (the groups must divide "
				   "the experts, and a token's groups hold its experts); set them for "
				   "this model (its catalog row: %s:%d)",
				   sh->topk_group, sh->n_group, model->name, sh->routed_experts,
				   sh->top_k, model->origin, model->line);
	return WZ_OK;
}

wz_err wzs_replicated_params_b(const wzm_model *model, const wzs_params *p, wzm_parallelism par,
			       double *out, wz_diag *diag)
{
	*out = 0;
	if (par == WZM_PAR_TP)
		return WZ_OK;
	wz_err err;
	if ((err = wzm_need(model->params_total_b, model->name, "params_total_b", model->origin,
			    model->line, diag)) ||
	    (err = wzm_need(model->params_active_b, model->name, "params_active_b", model->origin,
			    model->line, diag)))
		return err;
	/* Without routed experts attention data parallelism is plain data
	 * parallelism: each GPU holds the whole model. */
	if (model->params_active_b >= model->params_total_b) {
		*out = model->params_total_b;
		return WZ_OK;
	}
	double routed_all;
	wzs_moe_shape sh;
	if ((err = wzs_moe_shape_check(model, p, &sh, &routed_all, diag)))
		return err;
	*out = model->params_total_b - routed_all / 1e9;
	return WZ_OK;
}

wz_err wzs_memory_params_weights(const wzm_model *model, const wzs_params *p,
				 wzm_memory_params *mem, wz_diag *diag)
{
	return wzs_replicated_params_b(model, p, mem->par, &mem->replicated_params_b, diag);
}

wz_err wzs_scenario_weights(wzm_scenario *s, const wzm_catalog *cat, wz_diag *diag)
{
	wzs_params p;
	wzs_params_default(&p);
	wz_err err = wzs_params_from_kv(s->kv, &p, diag);
	if (err)
		return err;
	const wzm_model *model = wzm_find_model(cat, s->model, diag);
	if (!model)
		return WZ_ERR_NOT_FOUND;
	return wzs_memory_params_weights(model, &p, &s->mem, diag);
}
