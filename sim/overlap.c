/* A decode step under two-batch overlap, as DeepSeek's and SGLang's
 * decode pipelines schedule its two micro-batches (replica.h). */
#include "sim/replica.h"

/* DeepSeek's decode profile (github.com/deepseek-ai/profile-data, README,
 * "Decoding", and its figure assets/decode.jpg) runs two micro-batches on
 * one computation stream; DeepEP's low-latency all-to-all holds no SMs
 * while in flight, so each transfer of one micro-batch hides behind the
 * computation the stream runs for the other until it is needed:
 *
 *   computation:  SHARED(0) ATTN-0(1) | MLP(0) | ATTN-1(1)
 *   all-to-all:   DISPATCH(0) ------- |        | COMBINE(0)
 *
 * and the same with the micro-batches swapped, every layer.  ATTN-0 is
 * attention's input projections, ATTN-1 the core attention and the output
 * projection; MLP, the routed experts, waits for its own dispatch and
 * hides nothing.  SGLang's two-batch overlap, on in its 96 x H100 decode
 * run (LMSYS blog, 2025-05-05: "following DeepSeek's system design", 25.5%
 * faster than without at 256 requests a GPU), cuts a layer into the same
 * stages (sglang, python/sglang/srt/batch_overlap/operations_strategy.py,
 * _compute_moe_deepseek_blog_decode: dispatch_a, shared experts |
 * dispatch_b, experts, combine_a | combine_b, the other micro-batch two
 * stages behind).  So a micro-batch's
 * layer takes
 *
 *   max(shared + ATTN-0, dispatch) + MLP + max(ATTN-1, combine)
 *
 * and the step twice that: the longer of computation and all-to-all only
 * where each transfer fits its window.  Each micro-batch reads the weights
 * again.
 *
 * The stages' matmuls are costed as NVIDIA AIConfigurator measured them in
 * decode on H100 with SGLang 0.5.10 (aiconfigurator 095f58a5,
 * systems/data/h100_sxm/.../sglang/0.5.10/), where a small batch's matmul
 * takes a time the roofline has not:
 *  - the MLA module (wideep_generation_mla_perf.parquet, fa3, 128 heads,
 *    FP8 blocks, a 1-token cache: the projections alone) takes 0.105 ms a
 *    layer for 1 request, 0.118 for 64, 0.138 for 128, 0.194 for 256:
 *    within 6% of 35 us + its 188 MB of weights read at the model's
 *    bandwidth (0.070 ms) + its FLOPs at compute_efficiency, added, not
 *    the longer of the two.  So the attention projections, and with them
 *    the other matmuls outside the routed experts, take their read plus
 *    their FLOPs, and each layer 35 us more before the dispatch;
 *  - the routed experts' layer (wideep_generation_moe_perf.parquet,
 *    uniform) takes 0.054 ms at EP128 for a token a GPU, whose 86 MB of
 *    experts touched read in 0.032 ms: 22 us more, the rows at EP64 to
 *    EP256 from 1 to 128 tokens a GPU within 11% of 22 us + the longer of
 *    read and FLOPs. */
#define TBO_MLA_FIXED_S 35e-6
#define TBO_MOE_FIXED_S 22e-6
void wzs_tbo_batch_terms(const wzs_replica_model *m, double batch, wzs_tbo_batch *out)
{
	const wzs_moe *e = &m->moe;
	double queries = batch * m->verify_tokens / 2; /* a micro-batch's, the replica's */
	double per_gpu = queries / m->gpus;
	double always = m->weight_bytes_gpu * e->always_read;
	double routed_read = m->weight_bytes_gpu * wzs_weights_touched(m, queries) - always;
	double pre_read = always - m->o_proj_bytes;
	out->pre_flop_s = per_gpu * m->rest_flops_token / m->weight_flops;
	out->o_flop_s = per_gpu * m->o_proj_flops_token / m->weight_flops;
	out->mlp_flop_s = per_gpu * m->routed_flops_token * e->imbalance / m->expert_flops;
	double pre_mem = pre_read / m->hbm_bps, o_mem = m->o_proj_bytes / m->hbm_bps;
	double mlp_mem = (routed_read > 0 ? routed_read : 0) / m->hbm_bps;
	out->pre_s = m->layers * TBO_MLA_FIXED_S + pre_mem + out->pre_flop_s;
	out->o_s = o_mem + out->o_flop_s;
	out->mlp_s = e->layers * TBO_MOE_FIXED_S +
		     (out->mlp_flop_s > mlp_mem ? out->mlp_flop_s : mlp_mem);
	out->mem_s = pre_mem + o_mem + mlp_mem;
	wzs_moe_decode_comm_parts(e, per_gpu, &out->dispatch_s, &out->combine_s);
}

double wzs_tbo_step(const wzs_replica_model *m, const wzs_tbo_batch *b, double cache_bytes,
		    double attn_compute_s, int *compute_bound, int *network_bound)
{
	double attn_mem = cache_bytes / 2 / m->hbm_bps, attn_fl = attn_compute_s / 2;
	double core = attn_fl > attn_mem ? attn_fl : attn_mem;
	double before = b->pre_s, after = core + b->o_s;
	double layer = (before > b->dispatch_s ? before : b->dispatch_s) + b->mlp_s +
		       (after > b->combine_s ? after : b->combine_s);
	if (compute_bound)
		*compute_bound = b->pre_flop_s + b->mlp_flop_s + b->o_flop_s + attn_fl >
				 b->mem_s + attn_mem;
	if (network_bound)
		*network_bound = b->dispatch_s + b->combine_s > before + b->mlp_s + after;
	return m->overhead_s + 2 * layer * m->draft_factor;
}
