/* Per-GPU memory accounting and users per GPU (capacity.h). */
#include "costmodel/capacity.h"

#include <math.h>
#include <string.h>

#include "common/wz_str.h"
#include "costmodel/layers.h"

wz_err wzm_parallelism_parse(const char *name, wzm_parallelism *out, wz_diag *diag)
{
	if (wz_name_eq(name, "attention-dp") || wz_name_eq(name, "dp")) {
		*out = WZM_PAR_ATTN_DP;
		return WZ_OK;
	}
	if (wz_name_eq(name, "tp") || wz_name_eq(name, "tensor-parallel")) {
		*out = WZM_PAR_TP;
		return WZ_OK;
	}
	return wz_diag_set(diag, WZ_ERR_INPUT,
			   "parallelism '%s': use attention-dp or tp", name);
}

const char *wzm_parallelism_name(wzm_parallelism par)
{
	return par == WZM_PAR_TP ? "tp" : "attention-dp";
}

void wzm_memory_params_default(wzm_memory_params *p)
{
	p->mem_util = 0.90;
	p->act_reserve_gib = 4.0;
	p->gpus_per_replica = 8;
	p->par = WZM_PAR_ATTN_DP;
	p->weight_bits = NAN;
	p->block_tokens = WZM_BLOCK_TOKENS;
	p->replicated_params_b = 0;
}

wz_err wzm_weight_bytes(const wzm_model *model, double weight_bits, double *out, wz_diag *diag)
{
	wz_err err = wzm_need(model->params_total_b, model->name, "params_total_b", model->origin,
			      model->line, diag);
	if (err)
		return err;
	if (isnan(weight_bits)) {
		err = wzm_need(model->weight_bits, model->name, "weight_bits", model->origin,
			       model->line, diag);
		if (err)
			return err;
		weight_bits = model->weight_bits;
	}
	*out = model->params_total_b * 1e9 * weight_bits / 8.0;
	double routed = wzm_routed_params(model);
	if (weight_bits == model->weight_bits && routed > 0)
		*out += routed * (model->expert_bits - weight_bits) / 8.0;
	return WZ_OK;
}

double wzm_routed_params(const wzm_model *model)
{
	double r = model->moe_layers * model->moe_routed_experts * 3.0 * model->hidden_size *
		   model->moe_intermediate_size;
	if (isnan(model->expert_bits) || !(r > 0) || r > model->params_total_b * 1e9)
		return 0;
	return r;
}

double wzm_side_cache_per_layer(const wzm_model *model)
{
	/* a hybrid model's indexer keys are in its layer kinds */
	if (!(model->index_head_dim > 0) || wzm_model_hybrid(model))
		return 0;
	return model->index_head_dim + floor(model->index_head_dim / 128) * 4;
}

wz_err wzm_memory_compute(const wzm_model *model, const wzm_gpu *gpu,
			  const wzm_memory_params *params, double record_per_layer, long context,
			  wzm_memory *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	wz_err err = wzm_need(model->layers, model->name, "layers", model->origin, model->line,
			      diag);
	if (!err)
		err = wzm_need(gpu->hbm_gib, gpu->name, "hbm_gib", gpu->origin, gpu->line, diag);
	if (err)
		return err;
	if (params->mem_util <= 0 || params->mem_util > 1)
		return wz_diag_set(diag, WZ_ERR_RANGE, "memory utilization %g is not in (0, 1]",
				   params->mem_util);
	if (params->act_reserve_gib < 0)
		return wz_diag_set(diag, WZ_ERR_RANGE, "activation reserve %g GiB is negative",
				   params->act_reserve_gib);
	if (params->gpus_per_replica < 1)
		return wz_diag_set(diag, WZ_ERR_RANGE, "GPUs per replica must be at least 1");
	if (context < 1)
		return wz_diag_set(diag, WZ_ERR_RANGE, "context must be at least 1 token");
	if (!(record_per_layer > 0))
		return wz_diag_set(diag, WZ_ERR_RANGE, "a cache record must have a positive size");
	int block = params->block_tokens > 0 ? params->block_tokens : WZM_BLOCK_TOKENS;

	double weights;
	err = wzm_weight_bytes(model, params->weight_bits, &weights, diag);
	if (err)
		return err;
	out->hbm = gpu->hbm_gib * WZM_GIB;
	out->usable = out->hbm * params->mem_util;
	double share = params->replicated_params_b > 0 && model->params_total_b > 0
			       ? params->replicated_params_b / model->params_total_b
			       : 0;
	out->weights_replicated = weights * (share < 1 ? share : 1);
	/* with experts apart, the replicated weights are the others, at
	 * weight_bits (wzm_weight_bytes) */
	double wbits = isnan(params->weight_bits) ? model->weight_bits : params->weight_bits;
	if (share > 0 && share < 1 && wbits == model->weight_bits && wzm_routed_params(model) > 0)
		out->weights_replicated = params->replicated_params_b * 1e9 * wbits / 8.0;
	out->weights = out->weights_replicated +
		       (weights - out->weights_replicated) / params->gpus_per_replica;
	out->reserve = params->act_reserve_gib * WZM_GIB;
	out->cache = out->usable - out->weights - out->reserve;
	out->record_per_layer = record_per_layer;
	out->side_per_layer = wzm_side_cache_per_layer(model);
	out->per_token = wzm_token_bytes(model, record_per_layer, context);
	out->per_block = out->per_token * block;
	out->blocks_per_user = (context + block - 1) / block;
	if (out->cache <= 0)
		return wz_diag_set(diag, WZ_ERR_RANGE,
				   "%s on %d x %s: weights (%.1f GiB per GPU) and reserve (%.1f GiB) "
				   "leave no room for the cache in %.1f GiB usable; use more GPUs "
				   "per replica",
				   model->name, params->gpus_per_replica, gpu->name,
				   out->weights / WZM_GIB, out->reserve / WZM_GIB,
				   out->usable / WZM_GIB);
	out->blocks_per_gpu = (long)floor(out->cache / out->per_block);
	out->users_per_gpu = out->blocks_per_gpu / out->blocks_per_user;
	out->users_per_replica = params->par == WZM_PAR_TP
					 ? out->users_per_gpu
					 : out->users_per_gpu * params->gpus_per_replica;
	return WZ_OK;
}
