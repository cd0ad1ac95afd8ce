/* The offload tier: a session's cache parked in CPU memory or on SSD in
 * the offload format, and restores over the GPU's host link, no faster
 * than the host decodes the format (fleet.h). */

#include "sim/fleet.h"

#define REP(f, i) (&(f)->reps[i])

/* Bytes a session takes in the offload tier, in the offload format. */
static double tier_bytes(const wzs_fleet *f, const wzs_sess *s)
{
	return (double)s->ctx * f->m->offload_token_bytes;
}

/* Puts a session's cache in CPU memory, else on SSD; 0 when neither has room. */
int wzs_tier_store(wzs_fleet *f, wzs_sess *s)
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

void wzs_tier_release(wzs_fleet *f, wzs_sess *s)
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

/* Brings `tokens` of a request's cache back from CPU memory (or SSD) over
 * its GPU's host link, queued behind earlier restores on that link (and
 * on the node's SSDs), no faster than the host decodes the offload
 * format; the request waits for EV_RESTORE. */
void wzs_start_restore(wzs_fleet *f, wzs_rep *r, int k, int32_t id, double tokens, int from_ssd)
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

void wzs_on_restore(wzs_fleet *f, int32_t id, uint32_t serial)
{
	wzs_req *q = &f->reqs[id];
	if (q->serial != serial || q->state != RQ_RESTORING)
		return;
	int32_t ri = f->sess[q->session].replica;
	q->restored = f->now;
	wzs_pending_append(f, ri, id);
	wzs_start_op(f, ri);
}
