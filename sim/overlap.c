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
 * again. */
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
	out->mlp_flop_s = per_gpu * m->routed_flops_token * e->imbalance / m->weight_flops;
	double pre_mem = pre_read / m->hbm_bps, o_mem = m->o_proj_bytes / m->hbm_bps;
	double mlp_mem = (routed_read > 0 ? routed_read : 0) / m->hbm_bps;
	out->pre_s = out->pre_flop_s > pre_mem ? out->pre_flop_s : pre_mem;
	out->o_s = out->o_flop_s > o_mem ? out->o_flop_s : o_mem;
	out->mlp_s = out->mlp_flop_s > mlp_mem ? out->mlp_flop_s : mlp_mem;
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
