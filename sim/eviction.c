/* Idle sessions' caches on the GPU: kept in least-recently-used order per
 * rank, and evicted, parked or dropped by the idle policy when they go
 * idle or when an admission needs their blocks (fleet.h). */

#include "sim/fleet.h"

#define REP(f, i) (&(f)->reps[i])

/* Idle resident sessions per rank, least recently used first. */
static void lru_push(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	wzs_rep *r = REP(f, s->replica);
	wzs_lru_link *l = &f->lru[sid];
	l->prev = r->lru_tail[s->rank];
	l->next = -1;
	if (l->prev >= 0)
		f->lru[l->prev].next = sid;
	else
		r->lru_head[s->rank] = sid;
	r->lru_tail[s->rank] = sid;
	s->in_lru = 1;
	r->idle_blocks[s->rank] += s->blocks;
	r->resident_idle++;
}

void wzs_lru_remove(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	if (!s->in_lru)
		return;
	wzs_rep *r = REP(f, s->replica);
	const wzs_lru_link *l = &f->lru[sid];
	if (l->prev >= 0)
		f->lru[l->prev].next = l->next;
	else
		r->lru_head[s->rank] = l->next;
	if (l->next >= 0)
		f->lru[l->next].prev = l->prev;
	else
		r->lru_tail[s->rank] = l->prev;
	s->in_lru = 0;
	r->idle_blocks[s->rank] -= s->blocks;
	r->resident_idle--;
}

static void release_blocks(wzs_fleet *f, wzs_sess *s)
{
	if (s->cache == CACHE_RESIDENT && s->rank >= 0) {
		REP(f, s->replica)->free_blocks[s->rank] += s->blocks;
		f->route[s->replica].free_total += s->blocks;
	}
	s->blocks = 0;
	s->rank = -1;
}

/* An idle resident session leaves the GPU: parked (offload) or dropped. */
static void evict_one(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	wzs_lru_remove(f, sid);
	release_blocks(f, s);
	s->cache = CACHE_NONE;
	int where = f->p->idle_policy == WZS_IDLE_OFFLOAD ? wzs_tier_store(f, s) : 0;
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
	wzs_lru_remove(f, sid);
	if (s->cache == CACHE_RESIDENT)
		release_blocks(f, s);
	else
		wzs_tier_release(f, s);
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
			f->route[r - f->reps].free_total -= need;
			lru_push(f, sid);
		}
	} else if (f->p->idle_policy == WZS_IDLE_OFFLOAD) {
		wzs_tier_store(f, s);
	}
}

/* Frees idle sessions on a rank, oldest first, until `need` blocks are free. */
void wzs_evict_for(wzs_fleet *f, wzs_rep *r, int rank, int64_t need)
{
	while (r->free_blocks[rank] < need && r->lru_head[rank] >= 0) {
		f->res->evictions++;
		evict_one(f, r->lru_head[rank]);
	}
}

void wzs_session_idle(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	if (s->cache != CACHE_RESIDENT)
		return;
	lru_push(f, sid);
	if (f->p->idle_policy == WZS_IDLE_RESIDENT)
		return;
	s->gen++;
	if (f->p->park_after_s > 0) {
		wzs_push(f, f->now + f->p->park_after_s, PRIO_PARK, EV_PARK, (uint32_t)sid, s->gen);
		return;
	}
	evict_one(f, sid);
	wzs_try_admit(f, s->replica);
}

void wzs_on_park(wzs_fleet *f, int32_t sid, uint32_t gen)
{
	wzs_sess *s = &f->sess[sid];
	if (s->gen != gen || s->busy || !s->in_lru)
		return;
	int32_t ri = s->replica;
	evict_one(f, sid);
	wzs_try_admit(f, ri);
}
