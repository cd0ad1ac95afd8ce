/* A replica's model, built from its model, GPU and parameters: memory, the
 * offload tier, the roofline's rates and the weights a batch touches
 * (replica.h); replica_time.c turns it into step and prefill times. */
#include "sim/replica.h"

#include <math.h>
#include <string.h>

#include "sim/weights.h"

static double touched_formula(double active_share, double batch);
static double touched_ep(const wzs_moe *e, double batch);
static void touched_saturation(wzs_replica_model *m);

/* The bits of the tensor-core math a matmul runs in: the wider of its
 * weights' type and its activations' (4, 8 or 16).  Blackwell's
 * tcgen05.mma runs FP4 x FP4 (kind::mxf4, mxf4nvf4) at twice the FP8 rate
 * and a mixed FP8 x FP4 pair (kind::f8f6f4) at the FP8 rate (NVIDIA
 * CUTLASS, media/docs/cpp/blackwell_functionality.md, and the PTX ISA's
 * tcgen05.mma kinds); a weight type counts its block scales (MXFP4 4.25
 * bits, NVFP4 4.5), so under 5 bits is FP4 and under 9 is FP8.  A GPU
 * without an FP4 peak (Hopper) widens FP4 to FP8. */
static int matmul_bits(double weight_bits, int act_bits, const wzm_gpu *gpu)
{
	int w = weight_bits < 5 ? 4 : weight_bits < 9 ? 8 : 16;
	int bits = w > act_bits ? w : act_bits;
	if (bits == 4 && !(gpu->fp4_tflops > 0))
		bits = 8;
	return bits;
}

/* Prefill's weight matmuls per operation: the routed experts at their
 * grouped GEMMs' measured share for the split (the replica's GPUs, or the
 * prefill pool's), the rest at the dense GEMMs'. */
static void prefill_build(const wzm_model *model, const wzs_params *p, double expert_peak,
			  wzs_replica_model *out)
{
	out->routed_active_share = 0;
	if (out->moe.on)
		out->routed_active_share = out->moe.routed_share;
	else if (model->params_active_b < model->params_total_b) {
		wzs_moe_shape sh;
		double routed_all;
		if (!wzs_moe_shape_check(model, p, &sh, &routed_all, NULL))
			out->routed_active_share = (double)sh.layers * (double)sh.top_k * 3.0 *
						   model->hidden_size * (double)sh.intermediate /
						   (model->params_active_b * 1e9);
	}
	int pool = p->disaggregated && p->prefill_gpus > 0 ? (int)wzs_pool_ep_gpus(p) : out->gpus;
	out->prefill_moe_flops = expert_peak * wzs_prefill_moe_share(p, out->gpus);
	out->pool_moe_flops = expert_peak * wzs_prefill_moe_share(p, pool);
	double rs = out->routed_active_share, imbalance = out->moe.on ? p->ep_imbalance : 1;
	double dense_s = 2.0 * out->active_params * (1 - rs) / out->prefill_weight_flops;
	out->prefill_token_s = dense_s + 2.0 * out->active_params * rs * imbalance / out->prefill_moe_flops;
	out->pool_token_s = dense_s + 2.0 * out->active_params * rs * imbalance / out->pool_moe_flops;
	out->comm_sm_share = out->moe.on && out->moe.overlap ? p->ep_comm_sm_share : 0;
}

/* A two-batch-overlap decode step's weights by stage (sim/overlap.c): the
 * attention output projections (heads x v_head_dim x hidden a layer, none
 * where the catalog lacks the columns), the routed experts, the rest. */
static void tbo_build(const wzm_model *model, wzs_replica_model *out)
{
	double o_params = 0;
	if (model->num_attention_heads > 0 && model->v_head_dim > 0 && model->hidden_size > 0)
		o_params = model->layers * model->num_attention_heads * model->v_head_dim *
			   model->hidden_size;
	double active = model->params_active_b * 1e9, dense = active * (1 - out->moe.routed_share);
	if (o_params > dense)
		o_params = 0;
	double replicated = out->moe.replicated_params;
	out->o_proj_bytes = replicated > 0 ? out->mem.weights_replicated * o_params / replicated : 0;
	out->o_proj_flops_token = 2 * o_params;
	out->routed_flops_token = 2 * active * out->moe.routed_share;
	out->rest_flops_token = 2 * (dense - o_params);
}

/* Context-parallel prefill's terms; refused where the model has no
 * meaning for it. */
static wz_err cp_build(const wzm_model *model, const wzm_gpu *gpu, const wzs_params *p,
		       wzs_replica_model *out, wz_diag *diag)
{
	out->cp_ranks = 1;
	if (p->prefill_cp <= 1)
		return WZ_OK;
	if (out->tensor_parallel)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "prefill_context_parallel: %ld needs parallelism = attention-dp "
				   "(with tp a prefill's attention already spreads over the replica's "
				   "GPUs)",
				   p->prefill_cp);
	if (p->disaggregated) {
		/* the groups are the prefill pool's GPUs, whatever the decode side */
		if (p->prefill_cp > p->prefill_gpus || p->prefill_gpus % p->prefill_cp)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "prefill_context_parallel: %ld ranks do not divide the "
					   "prefill pool of %ld GPUs into groups",
					   p->prefill_cp, p->prefill_gpus);
	} else if (p->prefill_cp > out->ranks || out->ranks % p->prefill_cp)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "prefill_context_parallel: %ld ranks do not divide %s on %d x %s "
				   "into groups (%d attention ranks per replica)",
				   p->prefill_cp, model->name, out->gpus, gpu->name, out->ranks);
	out->cp_ranks = (int)p->prefill_cp;
	out->cp_min_tokens = p->prefill_cp_min_tokens;
	out->cp_efficiency = p->prefill_cp_efficiency;
	/* Catalog NVLink figures count both directions; a ring link sends one
	 * way.  A group wider than a node has a link through the NIC, which
	 * every pass around the ring waits for. */
	out->cp_link_bps = p->prefill_cp <= p->gpus_per_node ? gpu->nvlink_gbps / 2 * 1e9
							       : p->kv_transfer_gbps * 1e9;
	return WZ_OK;
}

wz_err wzs_replica_model_build(const wzm_model *model, const wzm_gpu *gpu,
			       const wzm_memory_params *mem, long context, double record_per_layer,
			       double offload_per_layer, double decode_cost, const wzs_params *p,
			       wzs_replica_model *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	/* Blocks come from costmodel's accounting so that the simulator and the
	 * memory mode can never disagree on how many users fit; under
	 * attention data parallelism every GPU holds all but the routed experts
	 * whole (the memory mode sets the same, wzs_scenario_weights). */
	wzm_memory_params gpu_mem = *mem;
	wz_err err = wzs_memory_params_weights(model, p, &gpu_mem, diag);
	if (!err)
		err = wzm_memory_compute(model, gpu, &gpu_mem, record_per_layer, context, &out->mem,
					 diag);
	if (err)
		return err;
#define NEED(v, obj, field)                                                                  \
	if ((err = wzm_need(v, (obj)->name, field, (obj)->origin, (obj)->line, diag)))        \
		return err;
	NEED(model->params_active_b, model, "params_active_b")
	NEED(gpu->hbm_tbps, gpu, "hbm_tbps")
	NEED(gpu->bf16_tflops, gpu, "bf16_tflops")
	double wbits = isnan(mem->weight_bits) ? model->weight_bits : mem->weight_bits;
	int weights_fp8 = wbits <= 8;
	if (weights_fp8 || p->attention_fp8)
		NEED(gpu->fp8_tflops, gpu, "fp8_tflops")
	double pair_dims;
	if (!isnan(model->kv_lora_rank) && !isnan(model->rope_dim))
		/* Absorbed MLA: scores over R + P values, output over R. */
		pair_dims = 2 * model->kv_lora_rank + model->rope_dim;
	else {
		NEED(model->head_dim, model, "head_dim")
		pair_dims = 2 * model->head_dim;
	}
	if (p->idle_policy == WZS_IDLE_OFFLOAD && !(p->host_link_gbps > 0))
		NEED(gpu->pcie_gbps, gpu, "pcie_gbps")
	if (p->prefill_cp > 1 && p->prefill_cp <= p->gpus_per_node)
		NEED(gpu->nvlink_gbps, gpu, "nvlink_gbps")
	/* sparse attention's indexer runs in FP8 (DeepSeek-V3.2-Exp's
	 * inference/model.py: fp8 keys and queries into fp8_index) */
	int dsa = model->index_topk > 0 && model->index_n_heads > 0 && model->index_head_dim > 0;
	if (dsa)
		NEED(gpu->fp8_tflops, gpu, "fp8_tflops")
#undef NEED
	out->gpus = mem->gpus_per_replica;
	out->tensor_parallel = mem->par == WZM_PAR_TP;
	out->ranks = out->tensor_parallel ? 1 : out->gpus;
	out->blocks_per_rank = out->mem.blocks_per_gpu;
	out->block_tokens = mem->block_tokens > 0 ? mem->block_tokens : WZM_BLOCK_TOKENS;
	out->token_bytes = out->mem.per_token;
	out->record_token_bytes = record_per_layer * model->layers;
	out->side_token_bytes = out->mem.side_per_layer * model->layers;
	/* a DSA indexer's keys park and come back with the cache, as they are */
	out->offload_token_bytes = (offload_per_layer + out->mem.side_per_layer) * model->layers;
	out->weight_bytes_gpu = out->mem.weights;
	out->active_share = model->params_active_b / model->params_total_b;
	if (out->active_share > 1)
		out->active_share = 1;
	if ((err = wzs_moe_build(model, gpu, p, out->gpus, out->tensor_parallel,
				 p->disaggregated ? (int)wzs_pool_ep_gpus(p) : 0, &out->moe, diag)))
		return err;
	if (out->moe.on)
		tbo_build(model, out);
	for (int b = 0; b < WZS_TOUCHED_TABLE; b++)
		out->touched[b] = out->moe.on ? touched_ep(&out->moe, b)
					      : touched_formula(out->active_share, b);
	touched_saturation(out);
	out->active_params = model->params_active_b * 1e9;
	out->hbm_bps = gpu->hbm_tbps * 1e12 * p->hbm_efficiency;
	/* Weights of 4 bits or fewer run their matmuls at the FP4 peak where
	 * the GPU has one (Blackwell's NVFP4: gpus.csv's fp4_tflops), their
	 * activations quantized alike (an NVFP4 checkpoint's W4A4); on a GPU
	 * without (Hopper) they are widened to FP8 for the math. */
	int weights_fp4 = wbits <= 4 && gpu->fp4_tflops > 0;
	out->peak_weights_field = weights_fp4   ? "fp4_tflops"
				  : weights_fp8 ? "fp8_tflops"
						: "bf16_tflops";
	out->peak_attn_field = p->attention_fp8 ? "fp8_tflops" : "bf16_tflops";
	double weight_peak = (weights_fp4   ? gpu->fp4_tflops
			      : weights_fp8 ? gpu->fp8_tflops
					    : gpu->bf16_tflops) *
			     1e12;
	/* Routed experts shipped apart (models.csv expert_bits, kept where the
	 * scenario leaves weight_bits as the catalog's, as the memory does)
	 * run at their own peak: FP4 experts beside FP8 attention and dense
	 * layers. */
	double expert_peak = weight_peak;
	out->peak_experts_field = out->peak_weights_field;
	if (!isnan(model->expert_bits) && wbits == model->weight_bits) {
		int bits = matmul_bits(model->expert_bits, p->expert_act_bits, gpu);
		const char *field = bits == 4 ? "fp4_tflops" : bits == 8 ? "fp8_tflops" : "bf16_tflops";
		if ((err = wzm_need(bits == 8 ? gpu->fp8_tflops : bits == 16 ? gpu->bf16_tflops : 1,
				    gpu->name, field, gpu->origin, gpu->line, diag)))
			return err;
		out->peak_experts_field = field;
		expert_peak = (bits == 4 ? gpu->fp4_tflops : bits == 8 ? gpu->fp8_tflops
								 : gpu->bf16_tflops) *
			      1e12;
	}
	double attn_peak = (p->attention_fp8 ? gpu->fp8_tflops : gpu->bf16_tflops) * 1e12;
	out->weight_flops = weight_peak * p->compute_efficiency;
	out->expert_flops = expert_peak * p->compute_efficiency;
	out->attn_flops = attn_peak * p->compute_efficiency;
	out->prefill_weight_flops = weight_peak * wzs_prefill_efficiency(p);
	out->prefill_attn_flops = attn_peak * p->prefill_attention_efficiency;
	prefill_build(model, p, expert_peak, out);
	/* A decode step's weight matmuls at one rate: the routed experts' share
	 * (the busiest GPU's, compute_factor) at theirs, the rest at the dense
	 * peak; the same as weight_flops where the two peaks agree. */
	out->decode_weight_flops = out->weight_flops;
	if (expert_peak != weight_peak) {
		double rs = out->routed_active_share, imb = out->moe.on ? out->moe.imbalance : 1;
		out->decode_weight_flops = (1 + rs * (imb - 1)) /
					   ((1 - rs) / out->weight_flops + rs * imb / out->expert_flops);
	}
	out->attn_flops_pair = model->layers * p->attention_heads * 2.0 * pair_dims;
	out->prefill_flops_pair = model->layers * p->attention_heads * 2.0 * p->prefill_pair_dims;
	if (dsa) {
		out->dsa_topk = model->index_topk;
		/* each of the indexer's heads scores a key: index_head_dim
		 * multiply-adds (its ReLU and weighted sum over heads are
		 * index_n_heads more, left out) */
		out->idx_flops_pair = model->layers * model->index_n_heads * 2.0 * model->index_head_dim;
		out->idx_flops = gpu->fp8_tflops * 1e12 * p->compute_efficiency;
		out->idx_prefill_ratio = (out->idx_flops_pair / out->idx_flops) /
					 (out->prefill_flops_pair / out->attn_flops);
	}
	wzs_replica_hybrid(model, record_per_layer, offload_per_layer, context, out);
	out->overhead_s = p->step_overhead_s;
	out->decode_cost = decode_cost;
	if ((err = cp_build(model, gpu, p, out, diag)))
		return err;
	/* With MTP a step verifies the drafts: a request gains the accepted
	 * prefix, 1 + a + a^2 + ... + a^k tokens on average (acceptance taken
	 * as its expectation, not drawn per step). */
	out->verify_tokens = 1;
	out->tokens_per_step = 1;
	out->draft_factor = 1;
	if (p->mtp_acceptance > 0) {
		double keep = 1;
		for (long i = 0; i < p->mtp_draft_tokens; i++) {
			keep *= p->mtp_acceptance;
			out->tokens_per_step += keep;
		}
		out->verify_tokens = 1 + (double)p->mtp_draft_tokens;
		out->draft_factor = 1 + (double)p->mtp_draft_tokens / model->layers;
	}
	double nodes = ceil((double)out->gpus / (double)p->gpus_per_node);
	out->cpu_bytes = nodes * p->offload_cpu_gib * WZM_GIB;
	out->ssd_bytes = nodes * p->offload_ssd_gib * WZM_GIB;
	/* PCIe figures in the catalog count both directions; a restore uses one. */
	out->host_link_bps = (p->host_link_gbps > 0 ? p->host_link_gbps
				: (isnan(gpu->pcie_gbps) ? 0 : gpu->pcie_gbps / 2)) * 1e9;
	out->ssd_bps = nodes * p->ssd_gbps * 1e9;
	out->layers = model->layers;
	out->restore_decode_tlps = 0;
	/* The prefix cache is carved out of the session pool and the offload
	 * tier, so that the memory it uses is not counted twice. */
	double block_bytes = out->token_bytes * out->block_tokens;
	long prefix_blocks = (long)ceil(p->prefix_hbm_gib * WZM_GIB / block_bytes);
	out->blocks_per_rank -= prefix_blocks;
	out->prefix_capacity[0] = (double)prefix_blocks * block_bytes;
	out->prefix_capacity[1] = nodes * p->prefix_cpu_gib * WZM_GIB;
	out->prefix_capacity[2] = nodes * p->prefix_ssd_gib * WZM_GIB;
	out->cpu_bytes -= out->prefix_capacity[1];
	out->ssd_bytes -= out->prefix_capacity[2];
	out->prefix_token_bytes[0] = out->token_bytes;
	out->prefix_token_bytes[1] = out->prefix_token_bytes[2] = out->offload_token_bytes;
	if (p->disaggregated) {
		out->prefill_gpus = (int)p->prefill_gpus;
		if ((err = wzs_pool_build(model, gpu, p, out, diag)))
			return err;
		/* a stage GPU holds its stage's share of the layers, the routed
		 * experts spread over the stage's GPUs */
		double replicated = out->mem.weights_replicated;
		out->prefill_weight_bytes_gpu =
			(replicated + (out->mem.weights - replicated) * out->gpus / out->pool_stage_gpus) /
			out->pool_stages;
		out->kv_link_bps = p->kv_transfer_gbps * 1e9;
		double room = out->mem.usable - out->mem.reserve;
		if (out->prefill_weight_bytes_gpu > room)
			return wz_diag_set(diag, WZ_ERR_RANGE,
					   "%s on a prefill pool of %ld x %s: weights (%.1f GiB per GPU) "
					   "and reserve leave no room; use more prefill GPUs per replica",
					   model->name, p->prefill_gpus, gpu->name,
					   out->prefill_weight_bytes_gpu / WZM_GIB);
	}
	if (out->blocks_per_rank < 1)
		return wz_diag_set(diag, WZ_ERR_RANGE,
				   "%s on %d x %s: the cache pool holds less than one block%s",
				   model->name, out->gpus, gpu->name,
				   prefix_blocks > 0 ? " beside prefix_cache_hbm_gib" : "");
	return WZ_OK;
}

void wzs_replica_model_set_restore_decode(wzs_replica_model *m, const wzs_params *p,
					  double per_core_tlps)
{
	m->restore_decode_tlps = per_core_tlps > 0 ? per_core_tlps * p->restore_cores_per_node /
							     (double)p->gpus_per_node
						   : 0;
}

static double touched_formula(double active_share, double batch)
{
	if (batch <= 0)
		return 0;
	if (active_share >= 1)
		return 1;
	return 1 - pow(1 - active_share, batch);
}

/* With the MoE shape known: every weight but the routed experts' is read
 * whatever the batch (attention, dense layers, the shared expert), and
 * each routed expert is touched unless no token picks it. */
static double touched_ep(const wzs_moe *e, double batch)
{
	if (batch <= 0)
		return 0;
	return e->always_read + (1 - e->always_read) * (1 - pow(1 - e->expert_pick, batch));
}

/* The batch from which the touched formula is constant, and its value
 * there.  pow(base, n) of a base in (0, 1) falls with n; once a whole n
 * gives at most 2^-60, every larger batch's pow is mathematically smaller
 * still and, within pow's one ulp, below 2^-54, where 1 - pow rounds to
 * exactly 1 (1 - 2^-54 is the tie between 1 and 1 - 2^-53, and ties go to
 * the even 1).  So from that n on the formula gives the value it gives at
 * n, bit for bit.  n is first estimated from logarithms, then moved until
 * pow itself says so (test_moe checks the value against the formula on
 * both sides of it). */
static void touched_saturation(wzs_replica_model *m)
{
	double base = m->moe.on ? 1 - m->moe.expert_pick : 1 - m->active_share;
	m->touched_sat = INFINITY;
	m->touched_full = 0;
	if (!(base > 0 && base < 1))
		return;
	const double small = 0x1p-60;
	double n = ceil(log(small) / log(base));
	if (!(n >= 1 && n < 0x1p40))
		return;
	int moves = 0;
	while (n > 1 && pow(base, n - 1) <= small && moves++ < 64)
		n--;
	while (pow(base, n) > small && moves++ < 64)
		n++;
	if (moves >= 64) /* the logarithms far off: keep pow */
		return;
	m->touched_sat = n;
	m->touched_full = m->moe.on ? touched_ep(&m->moe, n) : touched_formula(m->active_share, n);
}

double wzs_weights_touched(const wzs_replica_model *m, double batch)
{
	if (batch >= 0 && batch < WZS_TOUCHED_TABLE && batch == (double)(int)batch)
		return m->touched[(int)batch];
	if (batch >= m->touched_sat)
		return m->touched_full;
	return m->moe.on ? touched_ep(&m->moe, batch) : touched_formula(m->active_share, batch);
}

void wzs_replica_model_describe(const wzs_replica_model *m, wz_buf *out)
{
	wz_buf_printf(out, "gpus_per_replica = %d\nattention = %s\ncache_pools_per_replica = %d\n",
		      m->gpus, m->tensor_parallel ? "tp" : "attention-dp", m->ranks);
	wz_buf_printf(out, "cache_gib_per_gpu = %.3f\nblocks_per_pool = %ld\nblock_tokens = %d\n",
		      m->mem.cache / WZM_GIB, m->blocks_per_rank, m->block_tokens);
	wz_buf_printf(out, "bytes_per_token = %.1f\noffload_bytes_per_token = %.1f\n",
		      m->token_bytes, m->offload_token_bytes);
	wz_buf_printf(out, "memory_mode_users_per_replica = %ld\n", m->mem.users_per_replica);
	wz_buf_printf(out, "weights_gib_per_gpu = %.3f\nactive_share = %.4f\n",
		      m->weight_bytes_gpu / WZM_GIB, m->active_share);
	wz_buf_printf(out, "hbm_effective_gbps = %.1f\nweight_tflops_effective = %.1f (%s)\n"
		      "attention_tflops_effective = %.1f (%s)\n",
		      m->hbm_bps / 1e9, m->weight_flops / 1e12, m->peak_weights_field,
		      m->attn_flops / 1e12, m->peak_attn_field);
	if (m->expert_flops != m->weight_flops)
		wz_buf_printf(out, "expert_tflops_effective = %.1f (%s)\n"
			      "decode_weight_tflops_effective = %.1f\n",
			      m->expert_flops / 1e12, m->peak_experts_field,
			      m->decode_weight_flops / 1e12);
	wz_buf_printf(out, "prefill_weight_tflops_effective = %.1f\n"
		      "prefill_moe_tflops_effective = %.1f\n"
		      "prefill_attention_tflops_effective = %.1f\n"
		      "prefill_routed_share_of_active = %.4f\n",
		      m->prefill_weight_flops / 1e12, m->prefill_moe_flops / 1e12,
		      m->prefill_attn_flops / 1e12, m->routed_active_share);
	if (m->prefill_gpus > 0)
		wz_buf_printf(out, "prefill_pool_moe_tflops_effective = %.1f\n",
			      m->pool_moe_flops / 1e12);
	wz_buf_printf(out, "attention_flops_per_pair = %.0f\nprefill_flops_per_pair = %.0f\n"
		      "decode_cost_factor = %g\n",
		      m->attn_flops_pair, m->prefill_flops_pair, m->decode_cost);
	wz_buf_printf(out, "decode_query_tokens_per_request = %g\ndecode_tokens_per_step = %.4f\n"
		      "decode_draft_layers_factor = %.4f\n",
		      m->verify_tokens, m->tokens_per_step, m->draft_factor);
	wz_buf_printf(out, "offload_cpu_gib_per_replica = %.0f\noffload_ssd_gib_per_replica = %.0f\n"
		      "host_link_gbps = %g\nssd_gbps_per_replica = %g\n",
		      m->cpu_bytes / WZM_GIB, m->ssd_bytes / WZM_GIB, m->host_link_bps / 1e9,
		      m->ssd_bps / 1e9);
	if (m->prefix_capacity[0] + m->prefix_capacity[1] + m->prefix_capacity[2] > 0)
		wz_buf_printf(out, "prefix_cache_hbm_gib_per_rank = %.3f\nprefix_cache_cpu_gib_per_replica = %.0f\n"
			      "prefix_cache_ssd_gib_per_replica = %.0f\n",
			      m->prefix_capacity[0] / WZM_GIB, m->prefix_capacity[1] / WZM_GIB,
			      m->prefix_capacity[2] / WZM_GIB);
	if (m->moe.on)
		wz_buf_printf(out, "expert_parallel = %d GPUs\nmoe_routed_share_of_active = %.4f\n"
			      "moe_shared_share_of_active = %.4f\nweights_read_every_step = %.4f\n"
			      "moe_compute_factor = %.4f\n"
			      "ep_decode_dispatch_combine_gbps = %g / %g\n"
			      "ep_prefill_dispatch_combine_gbps = %g / %g\n"
			      "ep_dispatch_combine_bytes_per_token_layer_destination = %.0f / %.0f\n"
			      "ep_destinations_decode_prefill_pool = %g / %.3f / %.3f\n"
			      "dual_batch_overlap = %s\n",
			      m->gpus, m->moe.routed_share, m->moe.shared_share, m->moe.always_read,
			      m->moe.compute_factor, m->moe.decode_dispatch_bps / 1e9,
			      m->moe.decode_combine_bps / 1e9, m->moe.prefill_dispatch_bps / 1e9,
			      m->moe.prefill_combine_bps / 1e9, m->moe.dispatch_bytes,
			      m->moe.combine_bytes, m->moe.decode_dests, m->moe.prefill_dests,
			      m->moe.pool_dests, m->moe.overlap ? "yes" : "no");
	if (m->cp_ranks > 1)
		wz_buf_printf(out, "prefill_context_parallel_ranks = %d\nprefill_cp_ring_gbps = %g\n",
			      m->cp_ranks, m->cp_link_bps / 1e9);
	if (m->prefill_gpus > 0)
		wz_buf_printf(out, "prefill_pool_gpus = %d\nprefill_weights_gib_per_gpu = %.3f\n",
			      m->prefill_gpus, m->prefill_weight_bytes_gpu / WZM_GIB);
	if (m->pool_instance_gpus > 0)
		wz_buf_printf(out, "prefill_instances = %d\nprefill_instance_stage_gpus = %d\n"
			      "prefill_stage_hop_gbps = %g\n",
			      m->prefill_gpus / m->pool_instance_gpus, m->pool_stage_gpus,
			      m->pool_hop_bps / 1e9);
	if (m->restore_decode_tlps > 0)
		wz_buf_printf(out, "restore_decode_token_layers_per_gpu_s = %.0f\n"
			      "restore_decode_gbps_per_gpu = %.3f\n",
			      m->restore_decode_tlps, m->restore_decode_tlps / m->layers *
						      m->offload_token_bytes / 1e9);
	else
		wz_buf_printf(out, "restore_decode = none (the offload bytes are copied as they are)\n");
}
