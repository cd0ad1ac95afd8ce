/* A replica's decode-step, prefill and restore times from its model
 * (replica.h): the roofline's terms, the experts' all-to-all and how they
 * overlap. */
#include "sim/replica.h"

/* Computation beside DeepEP's normal kernels runs on the SMs they leave. */
static double prefill_compute_beside(const wzs_replica_model *m, double compute_s, double comm_s)
{
	return comm_s > 0 && m->comm_sm_share > 0 ? compute_s / (1 - m->comm_sm_share) : compute_s;
}

double wzs_restore_time(const wzs_replica_model *m, double tokens, double link_bps,
			int *decode_bound)
{
	double transfer = tokens * m->offload_token_bytes / link_bps;
	double decode = m->restore_decode_tlps > 0 ? tokens * m->layers / m->restore_decode_tlps : 0;
	if (decode_bound)
		*decode_bound = decode > transfer;
	return decode > transfer ? decode : transfer;
}

/* A decode step's terms that depend on the batch alone: the weights'
 * bytes and seconds, and the experts' all-to-all. */
typedef struct {
	double weight_read, weight_s, comm_s;
	int tbo; /* expert parallelism with dual-batch overlap: sim/overlap.c's pipeline */
	wzs_tbo_batch tbo_terms;
} step_batch;

static void step_batch_terms(const wzs_replica_model *m, double batch, step_batch *out)
{
	/* Expert parallelism spreads the weights, and their FLOPs, over every
	 * GPU; attention work stays with the rank holding the request, except
	 * with TP, where heads are split but each rank reads the whole latent
	 * (MLA caches are not split across tensor-parallel ranks). */
	/* Verifying MTP drafts multiplies the query tokens, so the FLOPs and
	 * the experts touched, but the cache is read once per step. */
	double queries = batch * m->verify_tokens;
	out->weight_read = m->weight_bytes_gpu * wzs_weights_touched(m, queries);
	/* The busiest GPU's routed experts get ep_imbalance times the mean. */
	double weight_fl = 2.0 * m->active_params * queries / m->gpus * m->moe.compute_factor;
	out->weight_s = weight_fl / m->decode_weight_flops;
	/* Each GPU dispatches its own requests' query tokens. */
	out->comm_s = wzs_moe_decode_comm_time(&m->moe, batch * m->verify_tokens / m->gpus);
	out->tbo = m->moe.on && m->moe.overlap;
	if (out->tbo)
		wzs_tbo_batch_terms(m, batch, &out->tbo_terms);
}

/* A decode step's two roofline terms, given its batch's. */
static void step_rank_terms(const wzs_replica_model *m, const step_batch *b, double rank_tokens,
			    double *mem_s /* OUT */, double *compute_s /* OUT */)
{
	double cache_read = rank_tokens * m->token_bytes * m->decode_cost;
	*mem_s = (b->weight_read + cache_read) / m->hbm_bps;
	double attn_fl = rank_tokens * m->attn_flops_pair * m->verify_tokens;
	if (m->tensor_parallel)
		attn_fl /= m->gpus;
	*compute_s = b->weight_s + attn_fl / m->attn_flops;
}

/* A decode step's time from its roofline terms and its all-to-all, and
 * (where not NULL) whether compute and whether the all-to-all bound it. */
static double step_combine(const wzs_replica_model *m, double mem_s, double compute_s,
			   double comm_s, int *compute_bound, int *network_bound)
{
	double roofline_s = mem_s > compute_s ? mem_s : compute_s;
	if (compute_bound)
		*compute_bound = compute_s > mem_s;
	if (network_bound)
		*network_bound = m->moe.on && comm_s > roofline_s;
	return m->overhead_s +
	       wzs_moe_combine(&m->moe, roofline_s * m->draft_factor, comm_s * m->draft_factor);
}

/* A decode step's time given its batch's terms (step_combine's flags). */
static double step_time_of(const wzs_replica_model *m, const step_batch *b, double rank_tokens,
			   int *compute_bound, int *network_bound)
{
	if (b->tbo)
		return wzs_tbo_step(m, &b->tbo_terms, rank_tokens * m->token_bytes * m->decode_cost,
				    rank_tokens * m->attn_flops_pair * m->verify_tokens / m->attn_flops,
				    compute_bound, network_bound);
	double mem_s, compute_s;
	step_rank_terms(m, b, rank_tokens, &mem_s, &compute_s);
	return step_combine(m, mem_s, compute_s, b->comm_s, compute_bound, network_bound);
}

/* A sparse-attention decode step's two roofline terms, given its batch's:
 * the indexer reads and scores every cached token of the busiest rank,
 * the attention the selected ones (the format's decode cost is its
 * records', not the indexer's fp8 keys'). */
static void step_terms_dsa(const wzs_replica_model *m, const step_batch *b, double rank_tokens,
			   double selected, double *mem_s /* OUT */, double *compute_s /* OUT */)
{
	double cache_read = selected * m->record_token_bytes * m->decode_cost +
			    rank_tokens * m->side_token_bytes;
	*mem_s = (b->weight_read + cache_read) / m->hbm_bps;
	double attn_s = (selected * m->attn_flops_pair / m->attn_flops +
			 rank_tokens * m->idx_flops_pair / m->idx_flops) *
			m->verify_tokens;
	if (m->tensor_parallel)
		attn_s /= m->gpus;
	*compute_s = b->weight_s + attn_s;
}

double wzs_step_time_dsa(const wzs_replica_model *m, double batch, double rank_tokens,
			 double selected, int *compute_bound, int *network_bound)
{
	if (compute_bound)
		*compute_bound = 0;
	if (network_bound)
		*network_bound = 0;
	if (batch <= 0)
		return 0;
	step_batch b;
	step_batch_terms(m, batch, &b);
	if (b.tbo)
		return wzs_tbo_step(m, &b.tbo_terms,
				    selected * m->record_token_bytes * m->decode_cost +
					    rank_tokens * m->side_token_bytes,
				    (selected * m->attn_flops_pair / m->attn_flops +
				     rank_tokens * m->idx_flops_pair / m->idx_flops) *
					    m->verify_tokens,
				    compute_bound, network_bound);
	double mem_s, compute_s;
	step_terms_dsa(m, &b, rank_tokens, selected, &mem_s, &compute_s);
	return step_combine(m, mem_s, compute_s, b.comm_s, compute_bound, network_bound);
}

void wzs_epoch_ends_dsa(const wzs_replica_model *m, const double *tok_a, const int64_t *tok_n,
			int ranks, int64_t step0, int64_t step1, double per_step, double batch,
			double *t0, double *t1, int *compute_bound, int *network_bound)
{
	*t0 = *t1 = 0;
	*compute_bound = *network_bound = 0;
	for (int k = 0; k < ranks; k++) {
		double n = (double)tok_n[k];
		int64_t steps[2] = { step0, step1 };
		for (int e = 0; e < 2; e++) {
			/* wzs_rank_tokens_max2's sums, whole tokens */
			double tokens = (double)(int64_t)(tok_a[k] + n * (double)steps[e] * per_step);
			double cap = n * m->dsa_topk, selected = tokens < cap ? tokens : cap;
			int cb, nb;
			double t = wzs_step_time_dsa(m, batch, tokens, selected, &cb, &nb);
			if (e == 0 && t > *t0) {
				*t0 = t;
				*compute_bound = cb;
				*network_bound = nb;
			}
			if (e == 1 && t > *t1)
				*t1 = t;
		}
	}
}

double wzs_step_time(const wzs_replica_model *m, double batch, double rank_tokens)
{
	if (batch <= 0)
		return 0;
	step_batch b;
	step_batch_terms(m, batch, &b);
	return step_time_of(m, &b, rank_tokens, NULL, NULL);
}

int wzs_step_network_bound(const wzs_replica_model *m, double batch, double rank_tokens)
{
	if (batch <= 0 || !m->moe.on)
		return 0;
	step_batch b;
	step_batch_terms(m, batch, &b);
	int network_bound;
	step_time_of(m, &b, rank_tokens, NULL, &network_bound);
	return network_bound;
}

int wzs_step_compute_bound(const wzs_replica_model *m, double batch, double rank_tokens)
{
	if (batch <= 0)
		return 0;
	step_batch b;
	step_batch_terms(m, batch, &b);
	int compute_bound;
	step_time_of(m, &b, rank_tokens, &compute_bound, NULL);
	return compute_bound;
}

double wzs_step_time_bound(const wzs_replica_model *m, double batch, double rank_tokens,
			   int *compute_bound, int *network_bound)
{
	*compute_bound = *network_bound = 0;
	if (batch <= 0)
		return 0;
	step_batch b;
	step_batch_terms(m, batch, &b);
	return step_time_of(m, &b, rank_tokens, compute_bound, network_bound);
}

double wzs_step_times_bound(const wzs_replica_model *m, double batch, double rank_tokens0,
			    double rank_tokens1, double *t1, int *compute_bound,
			    int *network_bound)
{
	*compute_bound = *network_bound = 0;
	if (batch <= 0) {
		*t1 = 0;
		return 0;
	}
	step_batch b;
	step_batch_terms(m, batch, &b);
	*t1 = step_time_of(m, &b, rank_tokens1, NULL, NULL);
	return step_time_of(m, &b, rank_tokens0, compute_bound, network_bound);
}

/* A pool GPU's part of a prefill: its `new_tokens` through the weights,
 * attention taking attn_s. */
static double pool_gpu_time(const wzs_replica_model *m, double new_tokens, double attn_s)
{
	double mem_s = m->prefill_weight_bytes_gpu * wzs_weights_touched(m, new_tokens) / m->hbm_bps;
	double comm_s = wzs_moe_comm_time(&m->moe, new_tokens, m->moe.pool_dests,
					  m->moe.pool_dispatch_bps, m->moe.pool_combine_bps);
	double compute_s = prefill_compute_beside(m, new_tokens * m->pool_token_s + attn_s, comm_s);
	return m->overhead_s + wzs_moe_combine(&m->moe, mem_s > compute_s ? mem_s : compute_s, comm_s);
}

double wzs_pool_prefill_time(const wzs_replica_model *m, double new_tokens, double pairs)
{
	if (new_tokens <= 0)
		return 0;
	return pool_gpu_time(m, new_tokens, pairs * m->prefill_flops_pair / m->prefill_attn_flops);
}

double wzs_pool_cp_prefill_time(const wzs_replica_model *m, double cached, double new_tokens,
				double pairs)
{
	if (new_tokens <= 0)
		return 0;
	double n = m->cp_ranks;
	return pool_gpu_time(m, new_tokens / n,
			     wzs_prefill_rank_attn_s(m, 0, pairs / n,
						     wzs_cp_ring_time(m, cached, new_tokens)));
}

double wzs_prefill_pairs(double prefix, double n)
{
	/* Each new token attends to the prefix and to the new tokens before it. */
	return n * prefix + n * (n + 1) / 2;
}

double wzs_model_prefill_pairs(const wzs_replica_model *m, double prefix, double n)
{
	double dense = wzs_prefill_pairs(prefix, n);
	if (!(m->dsa_topk > 0))
		return dense;
	/* new token j (1..n) meets prefix + j keys: all of them while that is
	 * at most topk, then topk */
	double k = m->dsa_topk, whole = k - prefix;
	whole = whole < 0 ? 0 : whole > n ? n : whole;
	double sparse = whole * prefix + whole * (whole + 1) / 2 + (n - whole) * k;
	return sparse + dense * m->idx_prefill_ratio;
}

/* A prefill pass's roofline and all-to-all; with attention data
 * parallelism the busiest rank's attention takes rank_attn_s. */
static void prefill_parts(const wzs_replica_model *m, double new_tokens, double pairs,
			  double rank_attn_s, double *roofline_s /* OUT */, double *comm_s /* OUT */)
{
	double attn_s = m->tensor_parallel
				? pairs * m->prefill_flops_pair / (m->gpus * m->prefill_attn_flops)
				: rank_attn_s;
	/* The pass's tokens are spread over the ranks; each dispatches its own. */
	*comm_s = wzs_moe_comm_time(&m->moe, new_tokens / m->gpus, m->moe.prefill_dests,
				    m->moe.prefill_dispatch_bps, m->moe.prefill_combine_bps);
	double compute_s =
		prefill_compute_beside(m, new_tokens * m->prefill_token_s / m->gpus + attn_s, *comm_s);
	double mem_s = m->weight_bytes_gpu * wzs_weights_touched(m, new_tokens) / m->hbm_bps;
	*roofline_s = mem_s > compute_s ? mem_s : compute_s;
}

double wzs_prefill_time_attn(const wzs_replica_model *m, double new_tokens, double pairs,
			     double rank_attn_s)
{
	if (new_tokens <= 0)
		return 0;
	double roofline_s, comm_s;
	prefill_parts(m, new_tokens, pairs, rank_attn_s, &roofline_s, &comm_s);
	return m->overhead_s + wzs_moe_combine(&m->moe, roofline_s, comm_s);
}

int wzs_prefill_network_bound_attn(const wzs_replica_model *m, double new_tokens, double pairs,
				   double rank_attn_s)
{
	if (new_tokens <= 0 || !m->moe.on)
		return 0;
	double roofline_s, comm_s;
	prefill_parts(m, new_tokens, pairs, rank_attn_s, &roofline_s, &comm_s);
	return comm_s > roofline_s;
}

double wzs_prefill_time(const wzs_replica_model *m, double new_tokens, double pairs,
			double rank_pairs)
{
	return wzs_prefill_time_attn(m, new_tokens, pairs,
				     rank_pairs * m->prefill_flops_pair / m->prefill_attn_flops);
}

int wzs_prefill_network_bound(const wzs_replica_model *m, double new_tokens, double pairs,
			      double rank_pairs)
{
	return wzs_prefill_network_bound_attn(m, new_tokens, pairs,
					      rank_pairs * m->prefill_flops_pair / m->prefill_attn_flops);
}

double wzs_prefill_rank_attn_s(const wzs_replica_model *m, double own_pairs, double cp_pairs,
			       double ring_s)
{
	double compute_s = own_pairs * m->prefill_flops_pair / m->prefill_attn_flops;
	if (cp_pairs > 0)
		compute_s += cp_pairs * m->prefill_flops_pair / (m->prefill_attn_flops * m->cp_efficiency);
	return ring_s > compute_s ? ring_s : compute_s;
}

double wzs_cp_ring_time(const wzs_replica_model *m, double cached, double new_tokens)
{
	if (m->cp_ranks <= 1)
		return 0;
	double n = m->cp_ranks;
	return (cached + new_tokens * (n - 1) / n) * m->token_bytes / m->cp_link_bps;
}
