/* The replica scheduler's admission: replicas set up, new sessions routed
 * by free memory, and requests admitted by free cache blocks in arrival
 * order (evicting idle sessions when memory is short), then queued for
 * prefill; batch.c runs the passes, eviction.c and offload.c keep the
 * idle sessions' caches (fleet.h). */
#include <stdlib.h>
#include <string.h>

#include "sim/bigmem.h"
#include "sim/fleet.h"

#define REP(f, i) (&(f)->reps[i])

int64_t wzs_blocks_for(const wzs_fleet *f, int64_t tokens)
{
	int64_t bt = f->m->block_tokens;
	return (tokens + bt - 1) / bt;
}

/* One line-aligned block per replica for its per-rank arrays, the ones a
 * decode step and an admission walk first: at 10^3 replicas of 16 ranks
 * they are megabytes, and a replica's arrays in one place are a few
 * adjacent lines for the prefetchers instead of a dozen scattered
 * allocations. */
static size_t rank_block_bytes(int ranks, int cp)
{
	size_t narrays = 10 + (cp ? 2 : 0);
	size_t bytes = narrays * (size_t)ranks * 8;
	return (bytes + 63) / 64 * 64;
}

wz_err wzs_fleet_alloc_replicas(wzs_fleet *f)
{
	long n = f->cfg->replicas;
	int ranks = f->m->ranks;
	int cp = f->m->cp_ranks > 1;
	_Static_assert(sizeof(int64_t) == 8 && sizeof(double) == 8, "8-byte rank fields");
	size_t stride = rank_block_bytes(ranks, cp);
	f->rank_stride = stride;
	f->rank_hot_bytes = (size_t)ranks * 16 < 256 ? (size_t)ranks * 16 : 256;
	f->reps = wzs_big_calloc((size_t)n * sizeof *f->reps);
	f->route = calloc((size_t)n, sizeof *f->route);
	f->dheap_of = calloc((size_t)n, sizeof *f->dheap_of);
	f->rank_mem = wzs_big_calloc((size_t)n * stride);
	f->pf_walk = wzs_big_calloc((size_t)n * (WZS_WALK_IDS + 1) * sizeof *f->pf_walk);
	if (!f->reps || !f->route || !f->dheap_of || !f->rank_mem || !f->pf_walk)
		return WZ_ERR_NOMEM;
	for (long i = 0; i < n; i++) {
		wzs_rep *r = REP(f, i);
		char *at = f->rank_mem + (size_t)i * stride;
#define CARVE(field) (r->field = (void *)at, at += (size_t)ranks * 8)
		CARVE(tok_a);
		CARVE(tok_n);
		CARVE(admitted);
		CARVE(free_blocks);
		CARVE(idle_blocks);
		CARVE(pf_pairs);
		CARVE(pf_budget);
		CARVE(link_free);
		if (cp) {
			CARVE(pf_cp_pairs);
			CARVE(pf_ring);
		}
		/* lru_head and lru_tail: int32 each, one 8-byte slot per rank */
		r->lru_head = (int32_t *)(void *)at;
		r->lru_tail = r->lru_head + ranks;
		at += (size_t)ranks * 8;
#undef CARVE
		int pool = f->m->prefill_gpus > 0 ? f->m->prefill_gpus : 1;
		r->pool_free = calloc((size_t)pool, sizeof *r->pool_free);
		r->pool_link_free = calloc((size_t)pool, sizeof *r->pool_link_free);
		if (!r->pool_free || !r->pool_link_free)
			return WZ_ERR_NOMEM;
		if (f->m->pool_instance_gpus > 0 && wzs_pool_queue_alloc(f, r))
			return WZ_ERR_NOMEM;
		for (int k = 0; k < ranks; k++) {
			r->free_blocks[k] = f->m->blocks_per_rank;
			f->route[i].free_total += f->m->blocks_per_rank;
			r->lru_head[k] = r->lru_tail[k] = -1;
		}
		r->q_head = r->q_tail = r->pf_head = r->pf_tail = r->join_head = r->join_tail = -1;
		const double *cap = f->m->prefix_capacity;
		if (cap[0] + cap[1] + cap[2] > 0) {
			if (!(r->prefix = malloc(sizeof *r->prefix)))
				return WZ_ERR_NOMEM;
			wzs_prefix_cache_init(r->prefix, cap, f->m->prefix_token_bytes);
			r->prefix->block_tokens = f->p->prefix_evict_segments ? 0 : f->m->block_tokens;
		}
	}
	return WZ_OK;
}

void wzs_fleet_free_replicas(wzs_fleet *f)
{
	if (!f->reps)
		return;
	for (long i = 0; i < f->cfg->replicas; i++) {
		wzs_rep *r = REP(f, i);
		free(r->pool_free);
		free(r->pool_link_free);
		wzs_pool_queue_free(r);
		free(r->dheap);
		wzs_prefix_cache_free(r->prefix);
		free(r->prefix);
	}
	free(f->reps);
	free(f->rank_mem);
	free(f->route);
	free(f->dheap_of);
	free(f->pf_walk);
	f->pf_walk = NULL;
	f->reps = NULL;
	f->route = NULL;
	f->dheap_of = NULL;
	f->rank_mem = NULL;
}

/* The least loaded replica (then the most free blocks, the fewest
 * sessions, the lowest index) when load is out of balance, else -1. */
static long route_unbalanced(const wzs_fleet *f)
{
	const wzs_params *p = f->p;
	if (!p->route_balance)
		return -1;
	long lo = 0, hi_load = f->route[0].load;
	for (long i = 1; i < f->cfg->replicas; i++) {
		const wzs_route *r = &f->route[i], *b = &f->route[lo];
		if (r->load > hi_load)
			hi_load = r->load;
		if (r->load < b->load ||
		    (r->load == b->load &&
		     (r->free_total > b->free_total ||
		      (r->free_total == b->free_total && r->sessions < b->sessions))))
			lo = i;
	}
	long lo_load = f->route[lo].load;
	if (hi_load - lo_load > p->route_balance_abs &&
	    (double)hi_load > p->route_balance_rel * (double)lo_load)
		return lo;
	return -1;
}

static long route_free_memory(const wzs_fleet *f)
{
	long best = 0;
	for (long i = 1; i < f->cfg->replicas; i++) {
		const wzs_route *r = &f->route[i], *b = &f->route[best];
		if (r->free_total > b->free_total ||
		    (r->free_total == b->free_total && r->sessions < b->sessions))
			best = i;
	}
	return best;
}

int32_t wzs_route_session(const wzs_fleet *f)
{
	long lo = route_unbalanced(f);
	return (int32_t)(lo >= 0 ? lo : route_free_memory(f));
}

int32_t wzs_route_session_prefix(const wzs_fleet *f, int32_t shared_id, int64_t shared_tokens,
				 int64_t need_blocks)
{
	long lo = route_unbalanced(f);
	if (lo >= 0)
		return (int32_t)lo;
	if (!f->p->prefix_routing || shared_tokens <= 0)
		return (int32_t)route_free_memory(f);
	long best = -1;
	wzs_prefix_tier best_tier = WZS_PREFIX_MISS;
	int64_t best_held = 0;
	wzs_prefix_link path[WZS_PREFIX_MAX_DEPTH];
	int n = wzs_prefix_path(f, shared_id, shared_tokens, path);
	for (long i = 0; i < f->cfg->replicas; i++) {
		const wzs_rep *r = REP(f, i);
		const wzs_route *rt = &f->route[i];
		if (!r->prefix || rt->free_total < need_blocks)
			continue;
		/* The longest cached prefix first, as SGLang's router matches. */
		wzs_prefix_tier t;
		int64_t held = wzs_prefix_cache_held(r->prefix, path, n, shared_tokens, &t);
		if (held <= 0)
			continue;
		const wzs_route *b = best >= 0 ? &f->route[best] : NULL;
		if (!b || held > best_held ||
		    (held == best_held &&
		     (t < best_tier ||
		      (t == best_tier && (rt->free_total > b->free_total ||
					  (rt->free_total == b->free_total && rt->sessions < b->sessions)))))) {
			best = i;
			best_tier = t;
			best_held = held;
		}
	}
	return (int32_t)(best >= 0 ? best : route_free_memory(f));
}

void wzs_pending_append(wzs_fleet *f, int32_t ri, int32_t id)
{
	if (f->m->prefill_gpus > 0) {
		wzs_pool_prefill(f, ri, id);
		return;
	}
	wzs_rep *r = REP(f, ri);
	wzs_req *q = &f->reqs[id];
	q->state = RQ_PENDING;
	q->next = -1;
	if (r->pf_tail >= 0)
		f->reqs[r->pf_tail].next = id;
	else
		r->pf_head = id;
	r->pf_tail = id;
	wzs_cut_epoch(f, ri);
}

static void queue_unlink(wzs_fleet *f, wzs_rep *r, int32_t id)
{
	wzs_req *q = &f->reqs[id];
	if (q->prev >= 0)
		f->reqs[q->prev].next = q->next;
	else
		r->q_head = q->next;
	if (q->next >= 0)
		f->reqs[q->next].prev = q->prev;
	else
		r->q_tail = q->prev;
	q->next = q->prev = -1;
	r->q_len--;
}

/* Chooses the rank for the queue's head, evicting idle sessions (least
 * recently used first) when memory is short: every policy does, as real
 * engines do; -1 when it must wait for running requests.  A new session
 * goes to the rank with the most free blocks when one holds it without
 * evicting, else to the one with the most free and idle blocks. */
static int place(wzs_fleet *f, wzs_rep *r, wzs_req *q, wzs_sess *s, int64_t *extra /* OUT */)
{
	if (s->cache == CACHE_RESIDENT) {
		int k = s->rank;
		*extra = q->need_blocks > s->blocks ? q->need_blocks - s->blocks : 0;
		q->batch_capped = r->admitted[k] >= f->p->max_batch;
		if (q->batch_capped)
			return -1;
		if (r->free_blocks[k] + r->idle_blocks[k] < *extra)
			return -1;
		wzs_evict_for(f, r, k, *extra);
		return k;
	}
	int best_free = -1, best = -1;
	int64_t best_avail = -1;
	q->batch_capped = 1;
	for (int k = 0; k < f->m->ranks; k++) {
		if (r->admitted[k] >= f->p->max_batch)
			continue;
		q->batch_capped = 0;
		if (r->free_blocks[k] >= q->need_blocks &&
		    (best_free < 0 || r->free_blocks[k] > r->free_blocks[best_free]))
			best_free = k;
		int64_t avail = r->free_blocks[k] + r->idle_blocks[k];
		if (avail > best_avail) {
			best = k;
			best_avail = avail;
		}
	}
	*extra = q->need_blocks;
	if (best_free >= 0)
		return best_free;
	if (best < 0 || best_avail < q->need_blocks)
		return -1;
	wzs_evict_for(f, r, best, q->need_blocks);
	return best;
}

void wzs_try_admit(wzs_fleet *f, int32_t ri)
{
	wzs_rep *r = REP(f, ri);
	while (r->q_head >= 0) {
		int32_t id = r->q_head;
		wzs_req *q = &f->reqs[id];
		wzs_sess *s = &f->sess[q->session];
		int64_t extra;
		int k = place(f, r, q, s, &extra);
		if (k < 0)
			break; /* first come, first served: the head blocks the rest */
		queue_unlink(f, r, id);
		r->free_blocks[k] -= extra;
		f->route[ri].free_total -= extra;
		r->admitted[k]++;
		q->rank = k;
		q->admitted = f->now;
		q->restored = f->now;
		if (q->counted)
			wzs_hist_add(f->h_queue, f->now - q->arrival);
		if (s->cache == CACHE_CPU || s->cache == CACHE_SSD) {
			wzs_start_restore(f, r, k, id, (double)s->ctx, s->cache == CACHE_SSD);
			wzs_tier_release(f, s);
			f->res->restores++;
			q->reuse = q->prefix < s->ctx ? q->prefix : s->ctx;
			s->cache = CACHE_RESIDENT;
			s->rank = k;
			s->blocks = extra;
			continue;
		}
		if (s->cache == CACHE_RESIDENT) {
			q->reuse = q->prefix < s->ctx ? q->prefix : s->ctx;
			s->blocks += extra;
		} else {
			/* The session holds none of its context: a shared prefix
			 * it begins with may be cached. */
			int64_t hit, in_gpu;
			wzs_prefix_tier tier = wzs_prefix_admit(f, r, q, &hit, &in_gpu);
			q->reuse = hit;
			if (q->prefix > 0 && !s->fresh) {
				f->res->recomputes++;
				q->recompute = q->prefix - q->reuse;
			}
			s->fresh = 0;
			s->cache = CACHE_RESIDENT;
			s->rank = k;
			s->blocks = extra;
			if (tier == WZS_PREFIX_CPU || tier == WZS_PREFIX_SSD) {
				wzs_start_restore(f, r, k, id, (double)(hit - in_gpu),
						  tier == WZS_PREFIX_SSD);
				continue;
			}
		}
		wzs_pending_append(f, ri, id);
	}
	wzs_start_op(f, ri);
}

/* A session's next turn, as the router sends every request: while load is
 * out of balance, to the least loaded replica, where the session's cache
 * is not: what it held where it was is dropped, and the turn recomputes
 * its context there. */
static void route_turn(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	if (!f->p->route_balance_moves || s->replica < 0)
		return;
	long lo = route_unbalanced(f);
	if (lo < 0 || lo == s->replica)
		return;
	int32_t from = s->replica;
	int held = s->cache != CACHE_NONE;
	wzs_session_release(f, sid);
	f->route[from].sessions--;
	s->replica = (int32_t)lo;
	f->route[lo].sessions++;
	f->res->sessions_moved++;
	if (held)
		wzs_try_admit(f, from); /* its blocks may let a queued request in */
}

void wzs_submit(wzs_fleet *f, int32_t id)
{
	wzs_req *q = &f->reqs[id];
	wzs_sess *s = &f->sess[q->session];
	route_turn(f, q->session);
	wzs_rep *r = REP(f, s->replica);
	wzs_lru_remove(f, q->session);
	s->busy = 1;
	s->gen++;
	f->route[s->replica].load++;
	q->need_blocks = wzs_blocks_for(f, q->prefix + q->prompt + q->output);
	if (q->need_blocks > f->m->blocks_per_rank) {
		wzs_request_done(f, id, f->now, 1, 1);
		return;
	}
	q->state = RQ_QUEUED;
	q->next = -1;
	q->prev = r->q_tail;
	if (r->q_tail >= 0)
		f->reqs[r->q_tail].next = id;
	else
		r->q_head = id;
	r->q_tail = id;
	r->q_len++;
	wzs_try_admit(f, s->replica);
	if (q->state == RQ_QUEUED)
		wzs_push(f, q->arrival + f->p->queue_timeout_s, PRIO_TIMEOUT, EV_TIMEOUT, (uint32_t)id,
			 q->serial);
}

void wzs_on_timeout(wzs_fleet *f, int32_t id, uint32_t serial)
{
	wzs_req *q = &f->reqs[id];
	if (q->serial != serial || q->state != RQ_QUEUED)
		return;
	int32_t ri = f->sess[q->session].replica;
	queue_unlink(f, REP(f, ri), id);
	wzs_request_done(f, id, f->now, 1, 0);
	wzs_try_admit(f, ri);
}
