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
 * the new tokens' cache and sends it over its own link.
 *
 * With prefill instances (sim/pool.c) a request waits in its replica's
 * pool queue instead, and an instance whose first stage is free takes the
 * queue's prompts, first come first served, each onto the rank of its
 * first stage with the fewest tokens so far, up to pool_batch_tokens a
 * rank: a prompt that does not fit takes what room is left, and its rest
 * goes in later passes (chunked prefill), attending to what it has done.
 * The pass flows through the stages (wzs_pipeline_pass), taking as long
 * in each as its busiest rank; the instance takes its next pass when its
 * first stage frees, so a long prompt's chunks fill the pipeline.  When
 * a prompt's last chunk leaves the last stage, each stage's GPU of its
 * rank sends its layers' share of the cache over its own link.  A chunk
 * may land on another rank than the one before (its cache's place is not
 * tracked). */
#include "sim/fleet.h"

#include <stdlib.h>

struct wzs_pool_queue {
	int32_t head, tail;           /* requests waiting, linked by next */
	double *stage_free;           /* instance x stage: free from */
	uint8_t *armed;               /* instance: its EV_POOL_FREE is pending */
	double *rank_tokens, *rank_pairs; /* a pass's ranks (one stage's GPUs) */
};

wz_err wzs_pool_queue_alloc(wzs_fleet *f, wzs_rep *r)
{
	const wzs_replica_model *m = f->m;
	int instances = m->prefill_gpus / m->pool_instance_gpus;
	struct wzs_pool_queue *pq = calloc(1, sizeof *pq);
	if (!pq)
		return WZ_ERR_NOMEM;
	r->pool_queue = pq;
	pq->head = pq->tail = -1;
	pq->stage_free = calloc((size_t)instances * (size_t)m->pool_stages, sizeof *pq->stage_free);
	pq->armed = calloc((size_t)instances, 1);
	pq->rank_tokens = calloc((size_t)m->pool_stage_gpus, sizeof *pq->rank_tokens);
	pq->rank_pairs = calloc((size_t)m->pool_stage_gpus, sizeof *pq->rank_pairs);
	if (!pq->stage_free || !pq->armed || !pq->rank_tokens || !pq->rank_pairs)
		return WZ_ERR_NOMEM;
	return WZ_OK;
}

void wzs_pool_queue_free(wzs_rep *r)
{
	struct wzs_pool_queue *pq = r->pool_queue;
	if (!pq)
		return;
	free(pq->stage_free);
	free(pq->armed);
	free(pq->rank_tokens);
	free(pq->rank_pairs);
	free(pq);
	r->pool_queue = NULL;
}

/* A request's whole prefill on the pool: its new tokens and those it
 * recomputes. */
static int64_t pool_tokens(const wzs_req *q)
{
	return q->prefix - q->reuse + q->prompt;
}

/* The request is prefilled; its cache leaves over the links of its rank's
 * GPU in every stage, each with its stage's share of the layers. */
static void pool_send(wzs_fleet *f, wzs_rep *r, int32_t id, int instance, int rank, double done)
{
	const wzs_replica_model *m = f->m;
	wzs_req *q = &f->reqs[id];
	double share = (double)pool_tokens(q) / m->pool_stages, arrive = done;
	for (int s = 0; s < m->pool_stages; s++) {
		int g = instance * m->pool_instance_gpus + s * m->pool_stage_gpus + rank;
		double send = done > r->pool_link_free[g] ? done : r->pool_link_free[g];
		double at = send + share * m->token_bytes / m->kv_link_bps;
		r->pool_link_free[g] = at;
		arrive = at > arrive ? at : arrive;
	}
	q->pool_done = done;
	wzs_push(f, arrive, PRIO_RESTORE, EV_KV_ARRIVE, (uint32_t)id, q->serial);
}

/* Instance `inst` takes a pass from the queue now (its first stage is
 * free) and arms its EV_POOL_FREE for when the first stage frees again. */
static void pool_pass(wzs_fleet *f, int32_t ri, int inst)
{
	const wzs_replica_model *m = f->m;
	wzs_rep *r = &f->reps[ri];
	struct wzs_pool_queue *pq = r->pool_queue;
	int ranks = m->pool_stage_gpus;
	double budget = (double)m->pool_batch_tokens;
	for (int k = 0; k < ranks; k++)
		pq->rank_tokens[k] = pq->rank_pairs[k] = 0;
	/* members: (request, rank, done) in the order taken; a pass holds at
	 * most one chunk per request and at least one token per member */
	int32_t prev = -1, id = pq->head;
	int full = 0, nfinished = 0;
	enum { MAX_DONE = 256 };
	int32_t finished[MAX_DONE];
	int finished_rank[MAX_DONE];
	while (id >= 0 && !full && nfinished < MAX_DONE) {
		wzs_req *q = &f->reqs[id];
		int rank = wzs_pool_least_rank(pq->rank_tokens, ranks);
		double room = budget - pq->rank_tokens[rank];
		if (room < 1) {
			full = 1;
			break;
		}
		int64_t whole = pool_tokens(q), left = whole - q->prefilled;
		int64_t take = (double)left < room ? left : (int64_t)room;
		if (q->prefilled == 0) {
			q->prefill_start = f->now;
			f->res->prefill_tokens_recomputed += (double)q->recompute;
		}
		pq->rank_tokens[rank] += (double)take;
		pq->rank_pairs[rank] += wzs_model_prefill_pairs(m, (double)(q->reuse + q->prefilled),
								(double)take);
		f->res->prefill_tokens += (double)take;
		q->prefilled += take;
		int32_t next = q->next;
		if (q->prefilled >= whole) {
			/* off the queue */
			if (prev >= 0)
				f->reqs[prev].next = next;
			else
				pq->head = next;
			if (pq->tail == id)
				pq->tail = prev;
			q->next = -1;
			finished[nfinished] = id;
			finished_rank[nfinished++] = rank;
		} else {
			prev = id;
		}
		id = next;
	}
	double most;
	double stage_s = wzs_pool_pass_time(m, pq->rank_tokens, pq->rank_pairs, ranks, &most);
	double *stage_free = pq->stage_free + (size_t)inst * (size_t)m->pool_stages;
	double done = wzs_pipeline_pass(stage_free, m->pool_stages, f->now, stage_s,
					wzs_pool_hop_time(m, most));
	f->res->busy_pool_prefill_s += stage_s * m->pool_instance_gpus;
	for (int i = 0; i < nfinished; i++)
		pool_send(f, r, finished[i], inst, finished_rank[i], done);
	pq->armed[inst] = 1;
	wzs_push(f, stage_free[0], PRIO_OP_END, EV_POOL_FREE, (uint32_t)ri, (uint32_t)inst);
}

void wzs_on_pool_free(wzs_fleet *f, int32_t ri, uint32_t inst)
{
	struct wzs_pool_queue *pq = f->reps[ri].pool_queue;
	pq->armed[inst] = 0;
	if (pq->head >= 0)
		pool_pass(f, ri, (int)inst);
}

/* Queues the request for the replica's instances; an idle one takes it. */
static void pool_enqueue(wzs_fleet *f, int32_t ri, int32_t id)
{
	wzs_rep *r = &f->reps[ri];
	struct wzs_pool_queue *pq = r->pool_queue;
	wzs_req *q = &f->reqs[id];
	q->state = RQ_POOL;
	q->prefilled = 0;
	q->pool_done = 0;
	q->next = -1;
	if (pq->tail >= 0)
		f->reqs[pq->tail].next = id;
	else
		pq->head = id;
	pq->tail = id;
	int instances = f->m->prefill_gpus / f->m->pool_instance_gpus;
	for (int i = 0; i < instances && pq->head >= 0; i++)
		if (!pq->armed[i])
			pool_pass(f, ri, i);
}

void wzs_pool_prefill(wzs_fleet *f, int32_t ri, int32_t id)
{
	if (f->reps[ri].pool_queue) {
		pool_enqueue(f, ri, id);
		return;
	}
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
