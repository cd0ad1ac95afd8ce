/* Prefill/decode disaggregation: a replica's prefills run on its own pool
 * of prefill GPUs, first come first served on the GPU that frees first,
 * each request's whole prompt at once (nothing to interleave with), and
 * the cache they compute moves to the decode GPU over the prefill GPU's
 * link in the GPU format's bytes, so a smaller format arrives sooner.  The
 * session's earlier context is taken to be on the prefill side already (a
 * shared cache store, as Mooncake has): only the new tokens' cache moves. */
#include "sim/fleet.h"

void wzs_pool_prefill(wzs_fleet *f, int32_t ri, int32_t id)
{
	wzs_rep *r = &f->reps[ri];
	wzs_req *q = &f->reqs[id];
	int j = 0;
	for (int k = 1; k < f->m->prefill_gpus; k++)
		if (r->pool_free[k] < r->pool_free[j])
			j = k;
	double tokens = (double)(q->prefix - q->reuse + q->prompt);
	double start = f->now > r->pool_free[j] ? f->now : r->pool_free[j];
	double done = start + wzs_pool_prefill_time(f->m, tokens,
						    wzs_model_prefill_pairs(f->m, (double)q->reuse, tokens));
	r->pool_free[j] = done;
	double send = done > r->pool_link_free[j] ? done : r->pool_link_free[j];
	double arrive = send + tokens * f->m->token_bytes / f->m->kv_link_bps;
	r->pool_link_free[j] = arrive;
	f->res->busy_pool_prefill_s += done - start;
	q->pool_done = done;
	q->state = RQ_POOL;
	wzs_push(f, arrive, PRIO_RESTORE, EV_KV_ARRIVE, (uint32_t)id, q->serial);
}
