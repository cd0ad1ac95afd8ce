/* The simulation run: event loop, the two traffic sources (replay and
 * closed population), request bookkeeping and the measurements (sim.h). */
#include "sim/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/bigmem.h"
#include "sim/fleet.h"
#include "sim/population.h"

#define PROGRESS_EVERY (1u << 20)

void wzs_push(wzs_fleet *f, double time, uint32_t prio, uint32_t kind, uint32_t a, uint32_t b)
{
	wzs_push_hinted(f, time, prio, kind, a, b, 0);
}

void wzs_push_hinted(wzs_fleet *f, double time, uint32_t prio, uint32_t kind, uint32_t a,
		     uint32_t b, uint32_t hint)
{
	if (f->err)
		return;
	/* A replica's operation is its one owned event: a decode epoch cut
	 * short replaces its end in place, where the stale end used to wait
	 * to be popped and ignored (wzs_queue_push_owned counts it all the
	 * same).  The sampler's one event waits in the small heap. */
	wz_err err;
	if (kind == EV_OP_END)
		err = wzs_queue_push_owned(&f->q, a, time, prio, kind, b, hint, f->diag);
	else
		err = wzs_queue_push_hinted(&f->q, kind == EV_SAMPLE ? WZS_LANE_FEW : WZS_LANE_MAIN,
					    time, prio, kind, a, b, hint, f->diag);
	if (err) {
		f->err = err;
		f->stop = 1;
	}
}

/* Room for `cap` requests, the ones handed out kept.  The rest is not
 * zeroed (alloc_req clears each request it hands out), so room never used
 * costs no memory. */
static int reserve_reqs(wzs_fleet *f, long cap)
{
	if (cap > INT32_MAX) {
		f->err = wz_diag_set(f->diag, WZ_ERR_RANGE, "more than 2^31 requests in flight");
		f->stop = 1;
		return -1;
	}
	wzs_req *r = wzs_big_grow(f->reqs, (size_t)f->nreqs * sizeof *r, (size_t)cap * sizeof *r);
	if (!r) {
		f->err = wz_diag_set(f->diag, WZ_ERR_NOMEM, "out of memory (requests)");
		f->stop = 1;
		return -1;
	}
	f->reqs = r;
	f->capreqs = cap;
	return 0;
}

static int32_t alloc_req(wzs_fleet *f)
{
	int32_t id;
	if (f->free_req >= 0) {
		id = f->free_req;
		f->free_req = f->reqs[id].next;
	} else {
		if (f->nreqs == f->capreqs && reserve_reqs(f, f->capreqs ? f->capreqs * 2 : 1024))
			return -1;
		id = (int32_t)f->nreqs++;
	}
	wzs_req *q = &f->reqs[id];
	memset(q, 0, sizeof *q);
	q->serial = f->next_serial++;
	q->next = q->prev = q->rank = -1;
	return id;
}

/* The time-average of requests in the system, over the measured window. */
static void in_system_advance(wzs_fleet *f)
{
	double from = f->in_sys_last > f->p->warmup_s ? f->in_sys_last : f->p->warmup_s;
	if (f->now > from)
		f->in_sys_area += (double)f->in_sys * (f->now - from);
	f->in_sys_last = f->now;
}

/* A request is sent: it counts towards the arrival rate from now. */
static void count_arrival(wzs_fleet *f, int32_t id)
{
	wzs_req *q = &f->reqs[id];
	q->requested = f->now;
	q->counted = f->now >= f->p->warmup_s;
	f->live++;
	if (q->counted) {
		if (!f->res->arrived)
			f->first_arrival = f->now;
		f->last_arrival = f->now;
		f->res->arrived++;
		f->context_sum += (double)(q->prefix + q->prompt);
		f->tokens_offered += (double)q->output;
	}
}

/* A request can run (its session's previous turn is done): it enters the
 * system, and its queueing delay, TTFT and timeout count from now. */
static void enter_system(wzs_fleet *f, int32_t id)
{
	wzs_req *q = &f->reqs[id];
	q->arrival = f->now;
	if (q->counted) {
		in_system_advance(f);
		f->in_sys++;
		if (q->arrival > q->requested) {
			f->res->deferred++;
			f->deferred_wait += q->arrival - q->requested;
		}
	}
}

static void arrive(wzs_fleet *f, int32_t id)
{
	count_arrival(f, id);
	enter_system(f, id);
}

static void new_session(wzs_fleet *f, int32_t sid);

/* A user's new session (holding no cache yet) goes where memory is free. */
static void reroute(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	f->route[s->replica].sessions--;
	s->replica = f->prefix_cdf ? wzs_route_session_prefix(f, f->sess_more[sid].prefix_id,
							      f->p->prefix_tokens,
							      wzs_blocks_for(f, s->ctx))
				   : wzs_route_session(f);
	f->route[s->replica].sessions++;
}

static void population_turn(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	if (s->busy)
		return;
	int32_t id = alloc_req(f);
	if (id < 0)
		return;
	wzs_req *q = &f->reqs[id];
	q->session = sid;
	wzs_pop_turn(f->p, &s->rng, &q->prompt, &q->output);
	long limit = f->cfg->max_context;
	if (limit > 0 && s->ctx + q->prompt + q->output > limit &&
	    f->cfg->initial_context + q->prompt + q->output <= limit) {
		/* The context window is full: the user starts a new session. */
		wzs_session_release(f, sid);
		f->res->sessions_ended++;
		new_session(f, sid);
		reroute(f, sid);
	}
	q->prefix = s->ctx;
	if (f->prefix_cdf) {
		q->shared_id = f->sess_more[sid].prefix_id;
		q->shared_tokens = f->p->prefix_tokens;
	}
	arrive(f, id);
	wzs_submit(f, id);
}

static void new_session(wzs_fleet *f, int32_t sid)
{
	wzs_sess *s = &f->sess[sid];
	s->ctx = f->cfg->initial_context;
	s->turns_left = wzs_pop_session_turns_at(f->p, &s->rng, f->session_scale);
	if (f->prefix_cdf)
		f->sess_more[sid].prefix_id = wzs_prefix_draw(f, &s->rng);
	s->cache = CACHE_NONE;
	s->fresh = 1;
	f->res->sessions_started++;
}

static void replay_row(wzs_fleet *f, uint32_t index)
{
	const wzt_traffic *t = f->cfg->traffic;
	if (index + 1 < t->n) {
		double next = t->requests[index + 1].arrival_s;
		wzs_push(f, next > f->now ? next : f->now, PRIO_ARRIVAL, EV_REPLAY, index + 1, 0);
	} else {
		f->replay_done = 1;
	}
	const wzt_request *row = &t->requests[index];
	int32_t sid = (int32_t)row->session;
	wzs_sess *s = &f->sess[sid];
	if (s->replica < 0) {
		int64_t context = (row->prefix_tokens > 0 ? row->prefix_tokens : 0) +
				  (row->prompt_tokens > 0 ? row->prompt_tokens : 1) +
				  (row->output_tokens > 0 ? row->output_tokens : 1);
		s->replica = wzs_route_session_prefix(f, row->shared_prefix, row->shared_prefix_tokens,
						      wzs_blocks_for(f, context));
		f->route[s->replica].sessions++;
		f->res->sessions_started++;
		/* Its first prefix is computed, not recomputed (a prefix shared
		 * with other sessions may come from the prefix cache). */
		s->fresh = 1;
	}
	int32_t id = alloc_req(f);
	if (id < 0)
		return;
	wzs_req *q = &f->reqs[id];
	q->session = sid;
	q->turn = row->turn;
	q->prefix = row->prefix_tokens > 0 ? row->prefix_tokens : 0;
	q->prompt = row->prompt_tokens > 0 ? row->prompt_tokens : 1;
	q->output = row->output_tokens > 0 ? row->output_tokens : 1;
	q->shared_id = row->shared_prefix;
	q->shared_tokens = row->shared_prefix_tokens;
	count_arrival(f, id);
	if (s->busy) {
		/* A turn that arrives before the previous one finished waits for it:
		 * it needs that turn's cache.  That wait is the trace's timing
		 * against a slower fleet, not queueing: the turn enters the system
		 * when it can run. */
		wzs_sess_more *m = &f->sess_more[sid];
		q->state = RQ_DEFERRED;
		q->next = -1;
		if (m->deferred_tail >= 0)
			f->reqs[m->deferred_tail].next = id;
		else
			m->deferred_head = id;
		m->deferred_tail = id;
		return;
	}
	enter_system(f, id);
	wzs_submit(f, id);
}

void wzs_request_done(wzs_fleet *f, int32_t id, double finish, int refused, int too_big)
{
	wzs_req *q = &f->reqs[id];
	wzs_sess *s = &f->sess[q->session];
	int32_t sid = q->session;
	int32_t turn = q->turn;
	s->busy = 0;
	f->route[s->replica].load--;
	/* what the fleet produced in the window, whenever the request came */
	if (!refused && finish >= f->p->warmup_s)
		f->tokens_served += wzs_tokens_in_window((double)q->output, q->first_token, finish,
							 f->p->warmup_s, INFINITY);
	if (q->counted) {
		if (refused) {
			f->res->refused++;
			if (too_big)
				f->res->refused_too_big++;
			else
				f->res->refused_timeout++;
			if (!too_big && q->batch_capped)
				f->res->refused_batch_capped++;
			if (f->cfg->stop_on_refusal)
				f->stop = 1;
		} else {
			double ttft = q->first_token - q->arrival;
			double tpot = q->output > 1 ? (finish - q->first_token) / (double)(q->output - 1) : 0;
			f->res->completed++;
			wzs_hist_add(f->h_ttft, ttft);
			double target = f->p->ttft_p99_s;
			if (f->p->ttft_per_1k_tokens_s > 0) {
				target = wzs_request_ttft_target(f->p, q->prefix - q->reuse + q->prompt -
									     q->recompute);
				wzs_hist_add(f->h_ttft_ratio, ttft / target);
			}
			if (ttft > target) {
				f->res->slow_ttft_excess_s += ttft - target;
				if (q->prefill_start > q->restored)
					f->res->slow_ttft_prefill_wait_s += q->prefill_start - q->restored;
				f->res->slow_ttft_queue_s += q->admitted - q->arrival;
				if (q->restore_decode_bound)
					f->res->slow_ttft_restore_decode_s += q->restored - q->admitted;
				else
					f->res->slow_ttft_restore_s += q->restored - q->admitted;
				if (q->pool_done > 0) {
					f->res->slow_ttft_prefill_s += q->pool_done - q->restored;
					f->res->slow_ttft_transfer_s += q->first_token - q->pool_done;
				} else {
					f->res->slow_ttft_prefill_s += q->first_token - q->restored;
				}
			}
			if (q->output > 1)
				wzs_hist_add(f->h_tpot, tpot);
			wzs_hist_add(f->h_e2e, finish - q->arrival);
			if (ttft <= target && tpot <= f->p->tpot_p99_s) {
				f->res->met_slo++;
				f->good_tokens += (double)q->output;
			}
		}
		in_system_advance(f);
		f->in_sys--;
	}
	q->state = RQ_FREE;
	q->next = f->free_req;
	f->free_req = id;
	f->live--;

	if (!f->cfg->traffic) {
		if (--s->turns_left <= 0) {
			wzs_session_release(f, sid);
			f->res->sessions_ended++;
			new_session(f, sid);
			reroute(f, sid);
		} else {
			wzs_session_idle(f, sid);
		}
		wzs_push(f, finish + wzs_pop_think(f->p, &s->rng), PRIO_ARRIVAL, EV_USER_TURN,
			 (uint32_t)sid, 0);
		return;
	}
	wzs_sess_more *m = &f->sess_more[sid];
	if (m->deferred_head >= 0) {
		int32_t next = m->deferred_head;
		m->deferred_head = f->reqs[next].next;
		if (m->deferred_head < 0)
			m->deferred_tail = -1;
		enter_system(f, next);
		wzs_submit(f, next);
	} else if (turn >= m->last_turn) {
		wzs_session_release(f, sid);
		f->res->sessions_ended++;
	} else {
		wzs_session_idle(f, sid);
	}
	/* A replay ends when its last request leaves, not at the timeouts
	 * still queued far in the future. */
	if (f->replay_done && f->live == 0 && !f->stop)
		f->stop = 2;
}

/* Asks for the lines the next event's handler reads first, so that their
 * misses overlap with this event's work: a user's session and its LRU
 * link, or a replica's first two lines, its per-rank token sums, its
 * decode batch's head (found in a small array, not in the replica), the
 * request its operation's end reads first (the push's hint) and that
 * request's session and LRU link (the event's b), so that nothing here
 * waits on a load.  Only speed depends on it. */
static void prefetch_next(const wzs_fleet *f)
{
	const wzs_node *top = wzs_queue_top(&f->q);
	if (!top)
		return;
	if (top->kind == EV_USER_TURN) {
		__builtin_prefetch(&f->sess[top->a]); /* one line */
		__builtin_prefetch(&f->lru[top->a]);
	} else if (top->kind == EV_OP_END) {
		const char *r = (const char *)&f->reps[top->a];
		__builtin_prefetch(r);
		__builtin_prefetch(r + 64);
		const char *ranks = f->rank_mem + (size_t)top->a * f->rank_stride;
		for (size_t at = 0; at < f->rank_hot_bytes; at += 64)
			__builtin_prefetch(ranks + at);
		if (f->dheap_of[top->a])
			__builtin_prefetch(f->dheap_of[top->a]);
		if (top->hint > 0) { /* all three lines: a finishing request's end reads them */
			const char *q = (const char *)&f->reqs[top->hint - 1];
			__builtin_prefetch(q);
			__builtin_prefetch(q + 64);
			__builtin_prefetch(q + 128);
		}
		if (top->b > 0) { /* the session of the request that finishes */
			__builtin_prefetch(&f->sess[top->b - 1]);
			__builtin_prefetch(&f->lru[top->b - 1]);
		} else {
			/* No session: a prefill pass's end (or an epoch with
			 * no one decoding), which walks the requests the
			 * pass's start met; they were met long ago. */
			const int32_t *walk = f->pf_walk + (size_t)top->a * (WZS_WALK_IDS + 1);
			for (int32_t i = 1; i <= walk[0]; i++)
				__builtin_prefetch(&f->reqs[walk[i]]);
		}
	}
}

/* A population's users each start about one turn per think time, so
 * buckets of think * 512 / users hold some 512 next turns each (a heap of
 * 16 KB, in cache), and a ring of 16 think times holds all but e^-16 of
 * the exponential think times' pushes.  Only speed depends on these. */
static wz_err population_calendar(wzs_fleet *f)
{
	const double per_bucket = 512, span_thinks = 16;
	double users = (double)f->cfg->users;
	double width = f->p->think_s * (users > per_bucket ? per_bucket / users : 1);
	size_t nbuckets = 16;
	while (nbuckets < ((size_t)1 << 20) && (double)nbuckets * width < span_thinks * f->p->think_s)
		nbuckets *= 2;
	return wzs_queue_calendar(&f->q, width, nbuckets, f->diag);
}

static wz_err sample(wzs_fleet *f)
{
	wzs_result *res = f->res;
	if (res->nsamples % 256 == 0) {
		wzs_sample *s = realloc(res->samples, (res->nsamples + 256) * sizeof *s);
		if (!s)
			return wz_diag_set(f->diag, WZ_ERR_NOMEM, "out of memory (occupancy series)");
		res->samples = s;
	}
	wzs_sample *s = &res->samples[res->nsamples++];
	memset(s, 0, sizeof *s);
	s->time = f->now;
	for (long i = 0; i < f->cfg->replicas; i++) {
		const wzs_rep *r = &f->reps[i];
		for (int k = 0; k < f->m->ranks; k++) {
			s->blocks_used += (double)(f->m->blocks_per_rank - r->free_blocks[k]);
			s->blocks_total += (double)f->m->blocks_per_rank;
			s->running += (long)r->admitted[k];
		}
		s->queued += r->q_len;
		s->resident_idle += r->resident_idle;
		s->parked_cpu += r->parked_cpu;
		s->parked_ssd += r->parked_ssd;
		s->cpu_bytes += r->cpu_used;
		s->ssd_bytes += r->ssd_used;
	}
	double occ = s->blocks_total > 0 ? s->blocks_used / s->blocks_total : 0;
	if (occ > res->occupancy_peak)
		res->occupancy_peak = occ;
	res->occupancy_mean += occ; /* divided by the count at the end */
	return WZ_OK;
}

static wz_err setup_sessions(wzs_fleet *f)
{
	const wzs_run_config *c = f->cfg;
	if (c->traffic) {
		int64_t max = -1;
		for (size_t i = 0; i < c->traffic->n; i++) {
			const wzt_request *r = &c->traffic->requests[i];
			if (r->session < 0 || r->session >= INT32_MAX)
				return wz_diag_set(f->diag, WZ_ERR_INPUT,
						   "traffic row %zu: session id %lld is out of range", i + 1,
						   (long long)r->session);
			if (r->session > max)
				max = r->session;
		}
		f->nsess = (long)(max + 1);
	} else {
		f->nsess = c->users;
	}
	size_t n = (size_t)(f->nsess > 0 ? f->nsess : 1);
	f->sess = wzs_big_calloc(n * sizeof *f->sess);
	f->lru = wzs_big_calloc(n * sizeof *f->lru);
	f->sess_more = malloc(n * sizeof *f->sess_more);
	if (!f->sess || !f->lru || !f->sess_more) {
		/* One field asked for it: name that field, as bad input (exit 2). */
		double gib = (double)n * (double)(sizeof *f->sess + sizeof *f->lru +
						  sizeof *f->sess_more) / (1 << 30);
		return wz_diag_set(f->diag, WZ_ERR_RANGE,
				   c->traffic ? "traffic: field session: ids up to %ld need %.1f GiB "
						"of session state, more than this machine gives"
					      : "users: %ld users need %.1f GiB of session state, more "
						"than this machine gives",
				   c->traffic ? f->nsess - 1 : f->nsess, gib);
	}
	for (long i = 0; i < f->nsess; i++) {
		wzs_sess *s = &f->sess[i];
		s->replica = s->rank = -1;
		f->lru[i].prev = f->lru[i].next = -1;
		f->sess_more[i].deferred_head = f->sess_more[i].deferred_tail = -1;
		f->sess_more[i].last_turn = -1;
		f->sess_more[i].prefix_id = 0;
		wzs_rng_seed(&s->rng, f->p->seed, (uint64_t)i);
	}
	if (c->traffic) {
		for (size_t i = 0; i < c->traffic->n; i++) {
			const wzt_request *r = &c->traffic->requests[i];
			if (r->turn > f->sess_more[r->session].last_turn)
				f->sess_more[r->session].last_turn = r->turn;
		}
		if (c->traffic->n > 0)
			wzs_push(f, c->traffic->requests[0].arrival_s, PRIO_ARRIVAL, EV_REPLAY, 0, 0);
		return f->err;
	}
	for (long i = 0; i < f->nsess; i++) {
		wzs_sess *s = &f->sess[i];
		s->replica = (int32_t)(i % c->replicas);
		f->route[s->replica].sessions++;
		new_session(f, (int32_t)i);
		/* At the start each user is between turns of a session already
		 * under way, so its cache sits where the idle policy keeps it. */
		s->fresh = 0;
		if (f->p->steady_start) {
			wzs_pop_steady_start(f->p, f->session_scale, &s->rng, &s->ctx, &s->turns_left);
			if (c->max_context > 0 && s->ctx > c->max_context)
				s->ctx = c->initial_context; /* that session already ended */
		}
		wzs_place_initial(f, (int32_t)i);
		wzs_push(f, wzs_pop_first_delay(f->p, &s->rng), PRIO_ARRIVAL, EV_USER_TURN,
			 (uint32_t)i, 0);
	}
	return f->err;
}

static void finish_results(wzs_fleet *f, double end)
{
	wzs_result *res = f->res;
	f->now = end;
	in_system_advance(f);
	res->sim_time_s = end;
	res->window_s = end > f->p->warmup_s ? end - f->p->warmup_s : 0;
	res->unfinished = (unsigned long long)f->in_sys;
	wzs_hist_summary(f->h_ttft, &res->ttft);
	wzs_hist_summary(f->h_tpot, &res->tpot);
	wzs_hist_summary(f->h_e2e, &res->e2e);
	wzs_hist_summary(f->h_queue, &res->queue);
	if (f->p->ttft_per_1k_tokens_s > 0)
		wzs_hist_summary(f->h_ttft_ratio, &res->ttft_ratio);
	wzs_hist_quantiles(f->h_ttft, wzs_cdf_p, WZS_CDF_POINTS, res->ttft_cdf);
	wzs_hist_quantiles(f->h_tpot, wzs_cdf_p, WZS_CDF_POINTS, res->tpot_cdf);
	double w = res->window_s > 0 ? res->window_s : 1;
	/* A replay's rate is over its arrival span, so that it does not depend
	 * on how long the fleet takes to drain the last requests. */
	double span = f->last_arrival - (f->first_arrival > f->p->warmup_s ? f->first_arrival
									     : f->p->warmup_s);
	res->arrival_rate = (double)res->arrived / (f->cfg->traffic && span > 0 ? span : w);
	res->deferred_wait_mean = res->deferred ? f->deferred_wait / (double)res->deferred : 0;
	res->mean_context = res->arrived ? f->context_sum / (double)res->arrived : 0;
	res->mean_in_system = f->in_sys_area / w;
	res->mean_wait_system = res->e2e.mean;
	res->throughput_tok_s = f->tokens_served / w;
	res->offered_tok_s = f->tokens_offered / (f->cfg->traffic && span > 0 ? span : w);
	res->goodput_rps = (double)res->met_slo / w;
	res->goodput_tok_s = f->good_tokens / w;
	if (res->nsamples)
		res->occupancy_mean /= (double)res->nsamples;
	res->replicas = f->cfg->replicas;
}

wz_err wzs_run(const wzs_run_config *cfg, wzs_result *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	const wzs_params *p = cfg->params;
	if (cfg->replicas < 1 || cfg->replicas > 1000000)
		return wz_diag_set(diag, WZ_ERR_RANGE, "replicas: %ld is not in 1..1000000",
				   cfg->replicas);
	if (!cfg->traffic && (cfg->users < 1 || cfg->users > 100000000))
		return wz_diag_set(diag, WZ_ERR_RANGE, "users: %ld is not in 1..100000000", cfg->users);
	if (cfg->model->blocks_per_rank > INT32_MAX)
		return wz_diag_set(diag, WZ_ERR_RANGE,
				   "%ld cache blocks per rank: the simulator holds at most 2^31 - 1",
				   cfg->model->blocks_per_rank);
	if (!cfg->traffic && cfg->initial_context < 1)
		return wz_diag_set(diag, WZ_ERR_RANGE, "a session must start with at least one token");
	wzs_fleet f;
	memset(&f, 0, sizeof f);
	f.cfg = cfg;
	f.p = p;
	f.m = cfg->model;
	f.res = out;
	f.diag = diag;
	f.free_req = -1;
	f.session_scale = wzs_pop_session_scale(p);
	wzs_queue_init(&f.q);
	wz_err err = WZ_OK;
	wzs_hist *h = calloc(5, sizeof *h);
	if (!h || wzs_fleet_alloc_replicas(&f)) {
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (replicas)");
		goto done;
	}
	f.h_ttft = &h[0];
	f.h_tpot = &h[1];
	f.h_e2e = &h[2];
	f.h_queue = &h[3];
	f.h_ttft_ratio = &h[4];
	if ((err = wzs_queue_owners(&f.q, (size_t)cfg->replicas, diag)))
		goto done;
	if (!cfg->traffic && p->think_s > 0 && (err = population_calendar(&f)))
		goto done;
	/* A population's users have a request each in flight at most: room
	 * for them all (up to 2^20) from the start, where doubling as they
	 * came copied and cleared some 50 MB at 100,000 users. */
	if (!cfg->traffic &&
	    reserve_reqs(&f, cfg->users < 1024 ? 1024 : cfg->users < (1L << 20) ? cfg->users : 1L << 20)) {
		err = f.err;
		goto done;
	}
	if ((err = wzs_prefix_popularity(&f)) || (err = setup_sessions(&f)))
		goto done;
	wzs_push(&f, 0, PRIO_SAMPLE, EV_SAMPLE, 0, 0);
	double end = cfg->traffic ? INFINITY : p->duration_s;
	wzs_queue_end(&f.q, end);
	wzs_event ev;
	while (!f.stop && wzs_queue_pop(&f.q, &ev)) {
		f.now = ev.time;
		prefetch_next(&f);
		switch (ev.kind) {
		case EV_OP_END: wzs_on_op_end(&f, (int32_t)ev.a); break;
		case EV_RESTORE: wzs_on_restore(&f, (int32_t)ev.a, ev.b); break;
		case EV_PARK: wzs_on_park(&f, (int32_t)ev.a, ev.b); break;
		case EV_USER_TURN: population_turn(&f, (int32_t)ev.a); break;
		case EV_REPLAY: replay_row(&f, ev.a); break;
		case EV_TIMEOUT: wzs_on_timeout(&f, (int32_t)ev.a, ev.b); break;
		case EV_KV_ARRIVE: wzs_on_kv_arrive(&f, (int32_t)ev.a, ev.b); break;
		case EV_POOL_FREE: wzs_on_pool_free(&f, (int32_t)ev.a, ev.b); break;
		case EV_SAMPLE:
			if ((err = sample(&f)))
				goto done;
			/* A replay samples while work remains; a population to the end. */
			if (cfg->traffic ? wzs_queue_waiting(&f.q) > 0
					 : f.now + p->occupancy_interval_s <= end)
				wzs_push(&f, f.now + p->occupancy_interval_s, PRIO_SAMPLE, EV_SAMPLE, 0, 0);
			break;
		}
		if (cfg->progress && f.q.popped % PROGRESS_EVERY == 0)
			cfg->progress(cfg->progress_ud, f.now, cfg->traffic ? NAN : end, f.q.popped);
	}
	if (f.err) {
		err = f.err;
		goto done;
	}
	out->stopped_early = f.stop == 1;
	finish_results(&f, cfg->traffic || f.stop == 1 ? f.now : end);
	out->events = wzs_queue_events(&f.q);
	out->events_popped = f.q.popped;
	if (cfg->progress)
		cfg->progress(cfg->progress_ud, f.now, cfg->traffic ? NAN : end, out->events);
done:
	wzs_fleet_free_replicas(&f);
	wzs_queue_free(&f.q);
	free(f.sess);
	free(f.lru);
	free(f.sess_more);
	free(f.reqs);
	free(f.prefix_cdf);
	free(h);
	return err;
}

int wzs_meets_targets(const wzs_params *p, const wzs_result *r)
{
	if (p->ttft_per_1k_tokens_s > 0)
		return r->refused == 0 && r->completed > 0 && r->ttft_ratio.p99 <= 1 &&
		       r->tpot.p99 <= p->tpot_p99_s;
	return r->refused == 0 && r->completed > 0 && r->ttft.p99 <= p->ttft_p99_s &&
	       r->tpot.p99 <= p->tpot_p99_s;
}

double wzs_request_ttft_target(const wzs_params *p, int64_t new_tokens)
{
	return p->ttft_p99_s + p->ttft_per_1k_tokens_s * (double)new_tokens / 1000;
}

double wzs_ttft_over(const wzs_params *p, const wzs_result *r)
{
	if (p->ttft_per_1k_tokens_s > 0)
		return r->ttft_ratio.p99;
	return r->ttft.p99 / p->ttft_p99_s;
}
