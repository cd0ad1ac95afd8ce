/* The replica scheduler: admission by free cache blocks in arrival order,
 * prefill passes, decode epochs between batch changes, and idle sessions
 * kept, parked in the offload tier or dropped by policy (fleet.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fleet.h"

#define REP(f, i) (&(f)->reps[i])

int64_t wzs_blocks_for(const wzs_fleet *f, int64_t tokens)
{
	int64_t bt = f->m->block_tokens;
	return (tokens + bt - 1) / bt;
}

wz_err wzs_fleet_alloc_replicas(wzs_fleet *f)
{
	long n = f->cfg->replicas;
	int ranks = f->m->ranks;
	f->reps = calloc((size_t)n, sizeof *f->reps);
	if (!f->reps)
		return WZ_ERR_NOMEM;
	for (long i = 0; i < n; i++) {
		wzs_rep *r = REP(f, i);
		r->free_blocks = calloc((size_t)ranks, sizeof *r->free_blocks);
		r->admitted = calloc((size_t)ranks, sizeof *r->admitted);
		r->tok_n = calloc((size_t)ranks, sizeof *r->tok_n);
		r->idle_blocks = calloc((size_t)ranks, sizeof *r->idle_blocks);
		r->tok_a = calloc((size_t)ranks, sizeof *r->tok_a);
		r->link_free = calloc((size_t)ranks, sizeof *r->link_free);
		r->pf_pairs = calloc((size_t)ranks, sizeof *r->pf_pairs);
		r->pf_budget = calloc((size_t)ranks, sizeof *r->pf_budget);
		int pool = f->m->prefill_gpus > 0 ? f->m->prefill_gpus : 1;
		r->pool_free = calloc((size_t)pool, sizeof *r->pool_free);
		r->pool_link_free = calloc((size_t)pool, sizeof *r->pool_link_free);
		r->lru_head = malloc((size_t)ranks * sizeof *r->lru_head);
		r->lru_tail = malloc((size_t)ranks * sizeof *r->lru_tail);
		if (!r->free_blocks || !r->admitted || !r->tok_n || !r->idle_blocks || !r->tok_a ||
		    !r->link_free || !r->pf_pairs || !r->pf_budget || !r->lru_head || !r->lru_tail ||
		    !r->pool_free || !r->pool_link_free)
			return WZ_ERR_NOMEM;
		for (int k = 0; k < ranks; k++) {
			r->free_blocks[k] = f->m->blocks_per_rank;
			r->free_total += f->m->blocks_per_rank;
			r->lru_head[k] = r->lru_tail[k] = -1;
		}
		r->q_head = r->q_tail = r->pf_head = r->pf_tail = r->join_head = r->join_tail = -1;
		const double *cap = f->m->prefix_capacity;
		if (cap[0] + cap[1] + cap[2] > 0) {
			if (!(r->prefix = malloc(sizeof *r->prefix)))
				return WZ_ERR_NOMEM;
			wzs_prefix_cache_init(r->prefix, cap, f->m->prefix_token_bytes);
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
		free(r->free_blocks);
		free(r->admitted);
		free(r->tok_n);
		free(r->idle_blocks);
		free(r->tok_a);
		free(r->link_free);
		free(r->pf_pairs);
		free(r->pf_budget);
		free(r->pool_free);
		free(r->pool_link_free);
		free(r->lru_head);
		free(r->lru_tail);
		free(r->dheap);
		wzs_prefix_cache_free(r->prefix);
		free(r->prefix);
	}
	free(f->reps);
	f->reps = NULL;
}

int32_t wzs_route_session(const wzs_fleet *f)
{
	long best = 0;
	for (long i = 1; i < f->cfg->replicas; i++) {
		const wzs_rep *r = REP(f, i), *b = REP(f, best);
		if (r->free_total > b->free_total ||
		    (r->free_total == b->free_total && r->sessions < b->sessions))
			best = i;
	}
	return (int32_t)best;
}

/* Idle resident sessions per rank, least recently used first. */
static void lru_push(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	wzs_rep *r = REP(f, s->replica);
	s->lru_prev = r->lru_tail[s->rank];
	s->lru_next = -1;
	if (s->lru_prev >= 0)
		f->sess[s->lru_prev].lru_next = sid;
	else
		r->lru_head[s->rank] = sid;
	r->lru_tail[s->rank] = sid;
	s->in_lru = 1;
	r->idle_blocks[s->rank] += s->blocks;
	r->resident_idle++;
}

static void lru_remove(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	if (!s->in_lru)
		return;
	wzs_rep *r = REP(f, s->replica);
	if (s->lru_prev >= 0)
		f->sess[s->lru_prev].lru_next = s->lru_next;
	else
		r->lru_head[s->rank] = s->lru_next;
	if (s->lru_next >= 0)
		f->sess[s->lru_next].lru_prev = s->lru_prev;
	else
		r->lru_tail[s->rank] = s->lru_prev;
	s->in_lru = 0;
	r->idle_blocks[s->rank] -= s->blocks;
	r->resident_idle--;
}

static void release_blocks(wzs_fleet *f, wzs_sess *s)
{
	if (s->cache == CACHE_RESIDENT && s->rank >= 0) {
		REP(f, s->replica)->free_blocks[s->rank] += s->blocks;
		REP(f, s->replica)->free_total += s->blocks;
	}
	s->blocks = 0;
	s->rank = -1;
}

/* Bytes a session takes in the offload tier, in the offload format. */
static double tier_bytes(const wzs_fleet *f, const wzs_sess *s)
{
	return (double)s->ctx * f->m->offload_token_bytes;
}

/* Puts a session's cache in CPU memory, else on SSD; 0 when neither has room. */
static int tier_store(wzs_fleet *f, wzs_sess *s)
{
	wzs_rep *r = REP(f, s->replica);
	double bytes = tier_bytes(f, s);
	if (r->cpu_used + bytes <= f->m->cpu_bytes && f->m->host_link_bps > 0) {
		r->cpu_used += bytes;
		r->parked_cpu++;
		s->cache = CACHE_CPU;
		return 1;
	}
	if (r->ssd_used + bytes <= f->m->ssd_bytes && f->m->host_link_bps > 0) {
		r->ssd_used += bytes;
		r->parked_ssd++;
		s->cache = CACHE_SSD;
		return 2;
	}
	return 0;
}

static void tier_release(wzs_fleet *f, wzs_sess *s)
{
	wzs_rep *r = REP(f, s->replica);
	if (s->cache == CACHE_CPU) {
		r->cpu_used -= tier_bytes(f, s);
		r->parked_cpu--;
	} else if (s->cache == CACHE_SSD) {
		r->ssd_used -= tier_bytes(f, s);
		r->parked_ssd--;
	}
}

/* An idle resident session leaves the GPU: parked (offload) or dropped. */
static void evict_one(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	lru_remove(f, sid);
	release_blocks(f, s);
	s->cache = CACHE_NONE;
	int where = f->p->idle_policy == WZS_IDLE_OFFLOAD ? tier_store(f, s) : 0;
	if (where == 1)
		f->res->parks_cpu++;
	else if (where == 2)
		f->res->parks_ssd++;
	else
		f->res->drops++;
}

void wzs_session_release(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	lru_remove(f, sid);
	if (s->cache == CACHE_RESIDENT)
		release_blocks(f, s);
	else
		tier_release(f, s);
	s->cache = CACHE_NONE;
	s->blocks = 0;
	s->rank = -1;
	s->gen++;
}

void wzs_place_initial(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	wzs_rep *r = REP(f, s->replica);
	s->cache = CACHE_NONE;
	s->rank = -1;
	s->blocks = 0;
	if (f->p->idle_policy == WZS_IDLE_RESIDENT) {
		int64_t need = wzs_blocks_for(f, s->ctx);
		int best = -1;
		for (int k = 0; k < f->m->ranks; k++)
			if (r->free_blocks[k] >= need && (best < 0 || r->free_blocks[k] > r->free_blocks[best]))
				best = k;
		if (best >= 0) {
			s->cache = CACHE_RESIDENT;
			s->rank = best;
			s->blocks = need;
			r->free_blocks[best] -= need;
			r->free_total -= need;
			lru_push(f, sid);
		}
	} else if (f->p->idle_policy == WZS_IDLE_OFFLOAD) {
		tier_store(f, s);
	}
}

/* Frees idle sessions on a rank, oldest first, until `need` blocks are free. */
static void evict_for(wzs_fleet *f, wzs_rep *r, int rank, int64_t need)
{
	while (r->free_blocks[rank] < need && r->lru_head[rank] >= 0) {
		f->res->evictions++;
		evict_one(f, r->lru_head[rank]);
	}
}

/* Cached tokens of the busiest rank at `step`: each running request holds
 * its context at joining plus tokens_per_step per step since. */
static int64_t rank_tokens_max(const wzs_rep *r, int ranks, int64_t step, double per_step)
{
	double best = 0;
	for (int k = 0; k < ranks; k++) {
		double t = r->tok_a[k] + (double)r->tok_n[k] * (double)step * per_step;
		if (t > best)
			best = t;
	}
	return (int64_t)best;
}

/* Time of the first k steps of the current epoch: step i takes t0 + i dt. */
static double epoch_time(const wzs_rep *r, int64_t k)
{
	return (double)k * r->t0 + r->dt * (double)k * (double)(k - 1) / 2.0;
}

static void start_op(wzs_fleet *f, int32_t ri)
{
	wzs_rep *r = REP(f, ri);
	if (r->op != OP_IDLE)
		return;
	/* Chunked prefill: a pass of at most prefill_chunk_tokens per attention
	 * rank (each rank schedules its own requests, as engines with attention
	 * data parallelism do; with TP the replica is one rank), then (with
	 * requests decoding) one decode step, and so on. */
	if (r->pf_head >= 0 && (r->dn == 0 || r->last_op == OP_DECODE)) {
		double tokens = 0, pairs = 0, rank_pairs = 0;
		long count = 0;
		int open = f->m->ranks; /* ranks with budget left */
		for (int k = 0; k < f->m->ranks; k++) {
			r->pf_pairs[k] = 0;
			r->pf_budget[k] = f->p->prefill_chunk_tokens;
		}
		for (int32_t i = r->pf_head; i >= 0 && open > 0; i = f->reqs[i].next) {
			wzs_req *q = &f->reqs[i];
			int64_t *budget = &r->pf_budget[q->rank];
			if (*budget <= 0)
				continue;
			int64_t left = q->prefix - q->reuse + q->prompt - q->prefilled;
			int64_t take = left < *budget ? left : *budget;
			q->op_take = take;
			tokens += (double)take;
			double qp = wzs_prefill_pairs((double)(q->reuse + q->prefilled), (double)take);
			pairs += qp;
			r->pf_pairs[q->rank] += qp;
			if (r->pf_pairs[q->rank] > rank_pairs)
				rank_pairs = r->pf_pairs[q->rank];
			*budget -= take;
			if (*budget <= 0)
				open--;
			q->state = RQ_PREFILL;
			count++;
		}
		r->op_count = count;
		r->op = OP_PREFILL;
		r->op_start = f->now;
		r->gen++;
		wzs_push(f, f->now + wzs_prefill_time(f->m, tokens, pairs, rank_pairs), PRIO_OP_END, EV_OP_END,
			 (uint32_t)ri, r->gen);
		return;
	}
	if (r->dn == 0)
		return;
	/* Nothing joins or leaves the batch until the first request finishes,
	 * unless a prefill cuts in: one event for the whole epoch.  Step time is
	 * linear in the tokens read, which grow by one per request per step (or
	 * MTP's tokens_per_step), so
	 * the epoch's length is an arithmetic series between its first and last
	 * steps (the busiest rank's roofline, taken at both ends). */
	int64_t k = r->pf_head >= 0 ? 1 : r->dheap[0].step - r->steps;
	if (k < 1)
		k = 1;
	double batch = (double)r->dn, per_step = f->m->tokens_per_step;
	double first = (double)rank_tokens_max(r, f->m->ranks, r->steps, per_step);
	double last = (double)rank_tokens_max(r, f->m->ranks, r->steps + k - 1, per_step);
	double t0 = wzs_step_time(f->m, batch, first);
	double tl = wzs_step_time(f->m, batch, last);
	r->t0 = t0;
	r->dt = k > 1 ? (tl - t0) / (double)(k - 1) : 0;
	r->op_compute_bound = wzs_step_compute_bound(f->m, batch, first);
	r->op_k = k;
	r->op = OP_DECODE;
	r->op_start = f->now;
	r->gen++;
	wzs_push(f, f->now + epoch_time(r, k), PRIO_OP_END, EV_OP_END, (uint32_t)ri, r->gen);
}

/* A prefill is waiting: end the decode epoch at the step in progress. */
static void cut_epoch(wzs_fleet *f, int32_t ri)
{
	wzs_rep *r = REP(f, ri);
	if (r->op != OP_DECODE)
		return;
	double elapsed = f->now - r->op_start;
	int64_t lo = 0, hi = r->op_k;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;
		if (epoch_time(r, mid) <= elapsed)
			lo = mid;
		else
			hi = mid - 1;
	}
	int64_t k = (lo > 0 && epoch_time(r, lo) == elapsed) ? lo : lo + 1;
	if (k >= r->op_k)
		return;
	r->op_k = k;
	r->gen++;
	/* op_start + (now - op_start) can round below now. */
	double end = r->op_start + epoch_time(r, k);
	wzs_push(f, end > f->now ? end : f->now, PRIO_OP_END, EV_OP_END, (uint32_t)ri, r->gen);
}

static void pending_append(wzs_fleet *f, int32_t ri, int32_t id)
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
	cut_epoch(f, ri);
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
		evict_for(f, r, k, *extra);
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
	evict_for(f, r, best, q->need_blocks);
	return best;
}

/* Brings `tokens` of a request's cache back from CPU memory (or SSD) over
 * its GPU's host link, queued behind earlier restores on that link (and
 * on the node's SSDs), no faster than the host decodes the offload
 * format; the request waits for EV_RESTORE. */
static void start_restore(wzs_fleet *f, wzs_rep *r, int k, int32_t id, double tokens, int from_ssd)
{
	wzs_req *q = &f->reqs[id];
	double bw = f->m->host_link_bps;
	double start = f->now > r->link_free[k] ? f->now : r->link_free[k];
	if (from_ssd) {
		if (f->m->ssd_bps < bw)
			bw = f->m->ssd_bps;
		if (r->ssd_free > start)
			start = r->ssd_free;
	}
	int decode_bound;
	double done = start + wzs_restore_time(f->m, tokens, bw, &decode_bound);
	q->restore_decode_bound = (uint8_t)decode_bound;
	r->link_free[k] = done;
	if (from_ssd)
		r->ssd_free = done;
	q->state = RQ_RESTORING;
	wzs_push(f, done, PRIO_RESTORE, EV_RESTORE, (uint32_t)id, q->serial);
}

static void try_admit(wzs_fleet *f, int32_t ri)
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
		r->free_total -= extra;
		r->admitted[k]++;
		q->rank = k;
		q->admitted = f->now;
		q->restored = f->now;
		if (q->counted)
			wzs_hist_add(f->h_queue, f->now - q->arrival);
		if (s->cache == CACHE_CPU || s->cache == CACHE_SSD) {
			start_restore(f, r, k, id, (double)s->ctx, s->cache == CACHE_SSD);
			tier_release(f, s);
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
			int64_t hit;
			wzs_prefix_tier tier = wzs_prefix_admit(f, r, q, &hit);
			q->reuse = hit;
			if (q->prefix > 0 && !s->fresh)
				f->res->recomputes++;
			s->fresh = 0;
			s->cache = CACHE_RESIDENT;
			s->rank = k;
			s->blocks = extra;
			if (tier == WZS_PREFIX_CPU || tier == WZS_PREFIX_SSD) {
				start_restore(f, r, k, id, (double)hit, tier == WZS_PREFIX_SSD);
				continue;
			}
		}
		pending_append(f, ri, id);
	}
	start_op(f, ri);
}

void wzs_submit(wzs_fleet *f, int32_t id)
{
	wzs_req *q = &f->reqs[id];
	wzs_sess *s = &f->sess[q->session];
	wzs_rep *r = REP(f, s->replica);
	lru_remove(f, q->session);
	s->busy = 1;
	s->gen++;
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
	try_admit(f, s->replica);
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
	try_admit(f, ri);
}

void wzs_on_restore(wzs_fleet *f, int32_t id, uint32_t serial)
{
	wzs_req *q = &f->reqs[id];
	if (q->serial != serial || q->state != RQ_RESTORING)
		return;
	int32_t ri = f->sess[q->session].replica;
	q->restored = f->now;
	pending_append(f, ri, id);
	start_op(f, ri);
}

void wzs_session_idle(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	if (s->cache != CACHE_RESIDENT)
		return;
	s->idle_since = f->now;
	lru_push(f, sid);
	if (f->p->idle_policy == WZS_IDLE_RESIDENT)
		return;
	s->gen++;
	if (f->p->park_after_s > 0) {
		wzs_push(f, f->now + f->p->park_after_s, PRIO_PARK, EV_PARK, (uint32_t)sid, s->gen);
		return;
	}
	evict_one(f, sid);
	try_admit(f, s->replica);
}

void wzs_on_park(wzs_fleet *f, int32_t sid, uint32_t gen)
{
	wzs_sess *s = &f->sess[sid];
	if (s->gen != gen || s->busy || !s->in_lru)
		return;
	int32_t ri = s->replica;
	evict_one(f, sid);
	try_admit(f, ri);
}

static void dheap_push(wzs_rep *r, int64_t step, int32_t id, wzs_fleet *f)
{
	if (r->dn == r->dcap) {
		long cap = r->dcap ? r->dcap * 2 : 64;
		wzs_dslot *h = realloc(r->dheap, (size_t)cap * sizeof *h);
		if (!h) {
			f->err = wz_diag_set(f->diag, WZ_ERR_NOMEM, "out of memory (decode batch)");
			f->stop = 1;
			return;
		}
		r->dheap = h;
		r->dcap = cap;
	}
	long i = r->dn++;
	while (i > 0) {
		long parent = (i - 1) / 2;
		/* ties by request slot, so equal runs pop in equal order */
		if (r->dheap[parent].step < step ||
		    (r->dheap[parent].step == step && r->dheap[parent].req < id))
			break;
		r->dheap[i] = r->dheap[parent];
		i = parent;
	}
	r->dheap[i].step = step;
	r->dheap[i].req = id;
}

static int32_t dheap_pop(wzs_rep *r)
{
	int32_t top = r->dheap[0].req;
	wzs_dslot last = r->dheap[--r->dn];
	long i = 0, n = r->dn;
	for (;;) {
		long c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && (r->dheap[c + 1].step < r->dheap[c].step ||
				  (r->dheap[c + 1].step == r->dheap[c].step &&
				   r->dheap[c + 1].req < r->dheap[c].req)))
			c++;
		if (r->dheap[c].step > last.step ||
		    (r->dheap[c].step == last.step && r->dheap[c].req > last.req))
			break;
		r->dheap[i] = r->dheap[c];
		i = c;
	}
	if (n > 0)
		r->dheap[i] = last;
	return top;
}

static void finish(wzs_fleet *f, wzs_rep *r, int32_t id)
{
	wzs_req *q = &f->reqs[id];
	wzs_sess *s = &f->sess[q->session];
	r->admitted[q->rank]--;
	s->ctx = q->prefix + q->prompt + q->output;
	s->busy = 0;
	wzs_request_done(f, id, f->now, 0, 0);
}

/* A request with its first token joins the decode batch at this step. */
static void join_decode(wzs_fleet *f, wzs_rep *r, int32_t id)
{
	wzs_req *q = &f->reqs[id];
	q->state = RQ_DECODE;
	/* The first token came with the prefill; MTP's steps each bring
	 * tokens_per_step of the rest on average. */
	q->finish_step = r->steps + (int64_t)ceil((double)(q->output - 1) / f->m->tokens_per_step -
						  1e-9);
	q->tok_contrib = (double)(q->prefix + q->prompt + 1) - (double)r->steps * f->m->tokens_per_step;
	r->tok_a[q->rank] += q->tok_contrib;
	r->tok_n[q->rank]++;
	dheap_push(r, q->finish_step, id, f);
}

/* Disaggregated: the requests whose cache arrived during a decode step
 * join at its end. */
static void join_arrived(wzs_fleet *f, wzs_rep *r)
{
	while (r->join_head >= 0) {
		int32_t id = r->join_head;
		r->join_head = f->reqs[id].next;
		f->reqs[id].next = -1;
		join_decode(f, r, id);
	}
	r->join_tail = -1;
}

void wzs_on_kv_arrive(wzs_fleet *f, int32_t id, uint32_t serial)
{
	wzs_req *q = &f->reqs[id];
	if (q->serial != serial || q->state != RQ_POOL)
		return;
	int32_t ri = f->sess[q->session].replica;
	wzs_rep *r = REP(f, ri);
	q->prefilled = q->prefix - q->reuse + q->prompt;
	q->first_token = f->now;
	wzs_prefix_computed(f, r, q);
	if (q->output <= 1) {
		finish(f, r, id);
		try_admit(f, ri);
		return;
	}
	q->state = RQ_JOINING;
	q->next = -1;
	if (r->join_tail >= 0)
		f->reqs[r->join_tail].next = id;
	else
		r->join_head = id;
	r->join_tail = id;
	if (r->op == OP_IDLE) {
		join_arrived(f, r);
		start_op(f, ri);
	} else {
		cut_epoch(f, ri); /* the batch changes at the next step */
	}
}

void wzs_on_op_end(wzs_fleet *f, int32_t ri, uint32_t gen)
{
	wzs_rep *r = REP(f, ri);
	if (gen != r->gen || r->op == OP_IDLE)
		return;
	double busy = f->now - r->op_start;
	if (r->op == OP_PREFILL)
		f->res->busy_prefill_s += busy;
	else if (r->op_compute_bound)
		f->res->busy_decode_compute_s += busy;
	else
		f->res->busy_decode_memory_s += busy;
	if (r->op == OP_PREFILL) {
		/* The pass's requests, in queue order among those still pending. */
		long seen = 0;
		int32_t prev = -1;
		for (int32_t id = r->pf_head; id >= 0 && seen < r->op_count;) {
			wzs_req *q = &f->reqs[id];
			int32_t next = q->next;
			if (q->state != RQ_PREFILL) {
				prev = id;
				id = next;
				continue;
			}
			seen++;
			q->prefilled += q->op_take;
			if (q->prefilled < q->prefix - q->reuse + q->prompt) {
				q->state = RQ_PENDING; /* the rest in the next pass */
				prev = id;
				id = next;
				continue;
			}
			if (prev >= 0)
				f->reqs[prev].next = next;
			else
				r->pf_head = next;
			if (next < 0)
				r->pf_tail = prev;
			q->next = -1;
			q->first_token = f->now;
			wzs_prefix_computed(f, r, q);
			if (q->output <= 1) {
				/* finish may append a deferred turn at the tail: after `next`. */
				finish(f, r, id);
				id = next;
				continue;
			}
			join_decode(f, r, id);
			id = next;
		}
	} else {
		r->steps += r->op_k;
		while (r->dn > 0 && r->dheap[0].step <= r->steps) {
			int32_t id = dheap_pop(r);
			wzs_req *q = &f->reqs[id];
			r->tok_a[q->rank] -= q->tok_contrib;
			r->tok_n[q->rank]--;
			finish(f, r, id);
		}
	}
	r->last_op = r->op;
	r->op = OP_IDLE;
	join_arrived(f, r);
	try_admit(f, ri);
	start_op(f, ri);
}
