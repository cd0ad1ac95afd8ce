/* Prefill/decode disaggregation: a replica's prefills run on its own pool
 * of prefill GPUs, first come first served on the GPU that frees first,
 * each request's whole prompt at once (nothing to interleave with), and
 * the cache they compute moves to the decode GPU over the prefill GPU's
 * link in the GPU format's bytes, so a smaller format arrives sooner.  The
 * session's earlier context is taken to be on the prefill side already (a
 * shared cache store, as Mooncake has): only the new tokens' cache moves.
 *
 * With context parallelism a prompt of at least cp_min_tokens new tokens
 * runs on the aligned group of cp_ranks pool GPUs whose last GPU frees
 * first, starting when all of them are free; each holds an even share of
 * the new tokens' cache and sends it over its own link. */
#include "sim/fleet.h"

void wzs_pool_prefill(wzs_fleet *f, int32_t ri, int32_t id)
{
	wzs_rep *r = &f->reps[ri];
	wzs_req *q = &f->reqs[id];
	int64_t whole = q->prefix - q->reuse + q->prompt;
	double tokens = (double)whole;
	/* the group (a GPU without context parallelism) whose last GPU frees
	 * first, the lowest on a tie; cp divides the pool (cp_build) */
	int cp = f->m->cp_ranks, width = cp > 1 && whole >= f->m->cp_min_tokens ? cp : 1, j = 0;
	double first = 0;
	for (int g = 0; g < f->m->prefill_gpus; g += width) {
		double last = r->pool_free[g];
		for (int k = g + 1; k < g + width; k++)
			last = r->pool_free[k] > last ? r->pool_free[k] : last;
		if (g == 0 || last < first) {
			first = last;
			j = g;
		}
	}
	double start = first > f->now ? first : f->now;
	double pairs = wzs_model_prefill_pairs(f->m, (double)q->reuse, tokens);
	double done = start + (width > 1 ? wzs_pool_cp_prefill_time(f->m, (double)q->reuse, tokens,
								     pairs)
					 : wzs_pool_prefill_time(f->m, tokens, pairs));
	double share = tokens / width, arrive = done;
	for (int k = j; k < j + width; k++) {
		r->pool_free[k] = done;
		double send = done > r->pool_link_free[k] ? done : r->pool_link_free[k];
		double at = send + share * f->m->token_bytes / f->m->kv_link_bps;
		r->pool_link_free[k] = at;
		arrive = at > arrive ? at : arrive;
	}
	f->res->busy_pool_prefill_s += (done - start) * width;
	f->res->prefill_tokens += tokens;
	f->res->prefill_tokens_recomputed += (double)q->recompute;
	q->prefill_start = start;
	q->pool_done = done;
	q->state = RQ_POOL;
	wzs_push(f, arrive, PRIO_RESTORE, EV_KV_ARRIVE, (uint32_t)id, q->serial);
}
