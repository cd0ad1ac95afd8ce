/* Prefill instances of a disaggregated pool: an instance's GPUs split into
 * pipeline stages, each stage's GPUs holding its layers with the routed
 * experts spread over them, its passes of batched prompts (a long prompt
 * in chunks) flowing stage to stage (replica.h, wzs_pool_stage_time).
 *
 * Sources: the pipeline, its chunks and the growth of a chunk's time with
 * the prefix it attends to are SGLang's chunked pipeline parallelism
 * (LMSYS blog "Pipeline Parallelism in SGLang: Scaling to Million-Token
 * Contexts and Beyond", 2026-01-15, and docs.sglang.io,
 * advanced_features/pipeline_parallelism: a request's chunks, each no
 * longer than the chunked prefill size, run on different stages at once;
 * a chunk's time grows with its prefix; stages send asynchronously).  A
 * stage hands the next its tokens' hidden states and residual in BF16
 * (python/sglang/srt/models/deepseek_v2.py: a stage that is not the last
 * returns PPProxyTensors of hidden_states and residual).  Every cost of a
 * stage is the pool's existing one (AIConfigurator's routed-expert shares
 * by EP width, DeepEP's bandwidths by topology), over its share of the
 * layers. */
#include "sim/replica.h"

#include <math.h>
#include <stdlib.h>

#include "sim/moe.h"

wz_err wzs_pool_build(const wzm_model *model, const wzm_gpu *gpu, const wzs_params *p,
		      wzs_replica_model *out, wz_diag *diag)
{
	out->pool_instance_gpus = 0;
	out->pool_stages = 1;
	out->pool_stage_gpus = (int)p->prefill_gpus;
	out->pool_batch_tokens = 0;
	long width = wzs_pool_instance_width(p, p->prefill_gpus);
	if (width <= 0)
		return WZ_OK;
	long stages = p->prefill_pp_stages > 1 ? p->prefill_pp_stages : 1;
	if (p->prefill_gpus % width || width % stages)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "prefill instances of %ld GPUs in %ld stages do not divide the "
				   "prefill pool of %ld GPUs",
				   width, stages, p->prefill_gpus);
	out->pool_instance_gpus = (int)width;
	out->pool_stages = (int)stages;
	out->pool_stage_gpus = (int)(width / stages);
	out->pool_batch_tokens = p->prefill_batch_tokens;
	if (stages > 1) {
		wz_err err = wzm_need(model->hidden_size, model->name, "hidden_size", model->origin,
				      model->line, diag);
		if (err)
			return err;
		/* hidden states and residual, BF16 */
		out->pool_hop_bytes_token = 2.0 * 2.0 * model->hidden_size;
		/* Catalog NVLink figures count both directions; a hand-off goes
		 * one way.  An instance wider than its NVLink domain has hops
		 * through the NIC, which every pass waits for. */
		double nic = isfinite(gpu->nic_gbps) && gpu->nic_gbps > 0 ? gpu->nic_gbps
									  : p->kv_transfer_gbps;
		out->pool_hop_bps = (double)width <= wzs_moe_fabric(gpu, p->gpus_per_node) &&
						    isfinite(gpu->nvlink_gbps) && gpu->nvlink_gbps > 0
					    ? gpu->nvlink_gbps / 2 * 1e9
					    : nic * 1e9;
	}
	return WZ_OK;
}

double wzs_pool_stage_time(const wzs_replica_model *m, double tokens, double pairs)
{
	if (tokens <= 0)
		return 0;
	double stages = m->pool_stages > 1 ? m->pool_stages : 1;
	/* a stage GPU reads its own weights (its layers' share) once a pass;
	 * its FLOPs and all-to-all are its layers' share of the whole model's */
	double mem_s = m->prefill_weight_bytes_gpu * wzs_weights_touched(m, tokens) / m->hbm_bps;
	double comm_s = wzs_moe_comm_time(&m->moe, tokens, m->moe.pool_dests, m->moe.pool_dispatch_bps,
					  m->moe.pool_combine_bps) /
			stages;
	double compute_s =
		(tokens * m->pool_token_s + pairs * m->prefill_flops_pair / m->prefill_attn_flops) / stages;
	if (comm_s > 0 && m->comm_sm_share > 0)
		compute_s /= 1 - m->comm_sm_share;
	return m->overhead_s + wzs_moe_combine(&m->moe, mem_s > compute_s ? mem_s : compute_s, comm_s);
}

double wzs_pool_hop_time(const wzs_replica_model *m, double tokens)
{
	return m->pool_stages > 1 && m->pool_hop_bps > 0
		       ? tokens * m->pool_hop_bytes_token / m->pool_hop_bps
		       : 0;
}

double wzs_pipeline_pass(double *stage_free, int stages, double start, double stage_s,
			 double hop_s)
{
	double ready = start;
	for (int s = 0; s < stages; s++) {
		if (s)
			ready += hop_s;
		double at = stage_free[s] > ready ? stage_free[s] : ready;
		stage_free[s] = ready = at + stage_s;
	}
	return ready;
}

int wzs_pool_least_rank(const double *rank_tokens, int ranks)
{
	int rank = 0;
	for (int k = 1; k < ranks; k++)
		if (rank_tokens[k] < rank_tokens[rank])
			rank = k;
	return rank;
}

double wzs_pool_pass_time(const wzs_replica_model *m, const double *rank_tokens,
			  const double *rank_pairs, int ranks, double *most_tokens)
{
	double stage_s = 0, most = 0;
	for (int k = 0; k < ranks; k++) {
		if (rank_tokens[k] <= 0)
			continue;
		double t = wzs_pool_stage_time(m, rank_tokens[k], rank_pairs[k]);
		stage_s = t > stage_s ? t : stage_s;
		most = rank_tokens[k] > most ? rank_tokens[k] : most;
	}
	if (most_tokens)
		*most_tokens = most;
	return stage_s;
}

double wzs_pool_pack_pass(const wzs_replica_model *m, double chunk, double chunk_cached,
			  double n, double tokens, double cached, double *hop_s)
{
	enum { LOCAL = 64 };
	double local[2 * LOCAL];
	int ranks = m->pool_stage_gpus > 0 ? m->pool_stage_gpus : 1;
	double *rank_tokens = ranks <= LOCAL ? local : malloc(2 * (size_t)ranks * sizeof *local);
	if (!rank_tokens)
		return HUGE_VAL;
	double *rank_pairs = rank_tokens + ranks;
	for (int k = 0; k < ranks; k++)
		rank_tokens[k] = rank_pairs[k] = 0;
	double budget = m->pool_batch_tokens > 0 ? (double)m->pool_batch_tokens : HUGE_VAL;
	if (chunk > 0) {
		rank_tokens[0] = chunk < budget ? chunk : budget;
		rank_pairs[0] = wzs_model_prefill_pairs(m, chunk_cached, rank_tokens[0]);
	}
	/* the prompts in arrival order, each onto the rank with the fewest
	 * tokens (disagg.c's pool_pass); what does not fit waits */
	for (double i = 0; i < n && tokens > 0; i++) {
		int rank = wzs_pool_least_rank(rank_tokens, ranks);
		double room = budget - rank_tokens[rank];
		if (room < 1)
			break;
		double take = tokens < room ? tokens : room;
		rank_tokens[rank] += take;
		rank_pairs[rank] += wzs_model_prefill_pairs(m, cached, take);
	}
	double most;
	double t = wzs_pool_pass_time(m, rank_tokens, rank_pairs, ranks, &most);
	if (hop_s)
		*hop_s = wzs_pool_hop_time(m, most);
	if (rank_tokens != local)
		free(rank_tokens);
	return t;
}

double wzs_pool_chunked_time(const wzs_replica_model *m, double cached, double new_tokens,
			     double *first_s)
{
	double stage_free[WZS_MAX_PP_STAGES] = { 0 };
	int stages = m->pool_stages > 1 ? m->pool_stages : 1;
	double chunk = m->pool_batch_tokens > 0 ? (double)m->pool_batch_tokens : new_tokens;
	double end = 0, busy = 0;
	for (double done = 0; done < new_tokens;) {
		double k = new_tokens - done < chunk ? new_tokens - done : chunk;
		double t = wzs_pool_stage_time(m, k, wzs_model_prefill_pairs(m, cached + done, k));
		end = wzs_pipeline_pass(stage_free, stages, stage_free[0], t, wzs_pool_hop_time(m, k));
		busy += t;
		done += k;
	}
	if (first_s)
		*first_s = busy;
	return end;
}
