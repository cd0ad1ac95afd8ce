/* The deployment search's lower bound (deploy.h, gpus_bound): the most
 * users a replica could serve by a relaxation of what the simulator does,
 * on the screen's workload and step model (screen.c, workload.h).  Only
 * the mean time per token within the TPOT target and the prefill server
 * busy less than all the time bind; the load a rank is any number, not
 * whole requests; HBM holds the running requests at the least context a
 * session's cache holds and does not cap the users, since the simulator
 * evicts idle sessions for room, whose next turns then recompute (at
 * least a first prompt's prefill, as many as the room left for idle
 * caches forces); and by Little's law the users are the rate times a
 * turn's cycle with its first token and decode at most their targets and
 * the replica's slowest step (docs/validation.md, "The deployment
 * search"). */
#include "sim/deploy/workload.h"

#include <math.h>
#include <stdlib.h>

/* Whether a point is within what no queue can undo: the mean time per
 * token within the TPOT target and the prefill server busy less than all
 * the time. */
static int within_relaxed(const wzd_workload *wl, const wzd_point *pt)
{
	return pt->tpot <= wl->p.tpot_p99_s && pt->busy < 1;
}

/* The share h of later turns whose cache can still be on the GPU when
 * they arrive, at `rate` requests a second with room for `idle` idle
 * sessions' caches.  A session's cache idles from its last token until its
 * next turn, at least its think time (wzs_session_idle, wzs_pop_think),
 * and a turn finds it only where it stayed resident all that while
 * (wzs_evict_for frees the least recently used first); a cache holds at
 * least the least context.  Were those turns the ones with the shortest
 * think times, they would hold the fewest sessions' caches for the least
 * time: rate x think x g(h) <= idle, with g(h) = h + (1 - h) ln(1 - h),
 * the mean of the shortest h of exponential think times over their mean
 * (g(h) = h for fixed ones). */
static double hit_share(const wzd_workload *wl, double rate, double idle)
{
	double need = rate * (1 - wl->first_share) * wl->think;
	if (!(idle < HUGE_VAL) || need <= idle)
		return 1;
	if (idle <= 0)
		return 0;
	double x = idle / need;
	if (wl->p.length_dist == WZS_DIST_FIXED)
		return x;
	double lo = 0, hi = 1;
	for (int it = 0; it < 60; it++) {
		double h = (lo + hi) / 2;
		double g = h + (1 - h) * log1p(-h);
		if (g <= x)
			lo = h;
		else
			hi = h;
	}
	return lo;
}

/* A point of the bound at `per_rank` running requests a rank: the later
 * turns that cannot find their cache recompute it, at least a new
 * session's first prompt (the simulator prefills a dropped session's
 * whole context as new tokens: disagg.c's pool_tokens), so they count as
 * first prompts; the share is found by fixed point with the rate.  The
 * users it serves by Little's law: the rate times a turn's cycle, whose
 * think time is the users', whose first token is at most its target (a
 * mean within its p99), whose decode is at most the target and at most
 * the slowest step the replica can take, and which holds at most the
 * running requests the ranks take. */
static void bound_at(const wzd_workload *wl, double per_rank, double kmax, wzd_point *out)
{
	wzd_workload *w = malloc(sizeof *w);
	if (!w) {
		out->busy = 1;
		return;
	}
	*w = *wl;
	double idle = wl->users_least - per_rank * wl->ranks, miss = 0;
	for (int it = 0; it < 12; it++) {
		w->first_share = wl->first_share + (1 - wl->first_share) * miss;
		w->s_prefill = w->first_share * wl->g_first + (1 - w->first_share) * wl->g_follow;
		wzd_at_batch(w, per_rank, out);
		double next = out->rate > 0 ? 1 - hit_share(wl, out->rate, idle) : 0;
		if (fabs(next - miss) < 1e-9)
			break;
		miss = (miss + next) / 2;
	}
	const wzs_params *p = &wl->p;
	const wzs_replica_model *m = &wl->m;
	double ttft = w->first_share * wzd_ttft_target(p, wl->first_new) +
		      (1 - w->first_share) * wzd_ttft_target(p, wl->prompt);
	/* a decode step is at most the busiest rank's with every rank at its
	 * most running requests and its blocks full (wzs_step_time), stretched
	 * by the prefill passes where they stop decode */
	double full = (double)m->blocks_per_rank * m->block_tokens;
	double tpot = wzs_step_time(m, kmax * wl->ranks, full) / m->tokens_per_step;
	if (wl->pool <= 0)
		tpot = out->busy < 1 ? tpot / (1 - out->busy) : HUGE_VAL;
	if (tpot > p->tpot_p99_s)
		tpot = p->tpot_p99_s;
	double running = out->rate * wl->output * tpot;
	if (running > kmax * wl->ranks)
		running = kmax * wl->ranks;
	out->users = out->rate * (wl->think + ttft) + running;
	free(w);
}

/* The bound's load limit: the most users a replica could serve where only
 * what no queue can undo binds (within_relaxed), at any load a rank, not
 * only whole requests: a simulated rank's batch changes step by step, so
 * its mean is any number, below one request as well (the simulation runs
 * fewer users than ranks where one running request a rank misses the
 * TPOT target).  HBM holds the running requests at the least context a
 * session's cache holds (running_least); it does not cap the users, since
 * the simulator makes room by evicting idle sessions (wzs_evict_for),
 * whose next turns recompute (bound_at). */
double wzd_load_bound(const wzd_workload *wl)
{
	double kmax = wl->cap < wl->running_least ? wl->cap : wl->running_least;
	double lo = 0, hi = 0, best = 0;
	wzd_point pt;
	for (double k = 1; kmax > 0; k++) {
		double x = k < kmax ? k : kmax;
		bound_at(wl, x, kmax, &pt);
		if (!within_relaxed(wl, &pt)) {
			hi = x;
			break;
		}
		lo = x;
		best = pt.users > best ? pt.users : best;
		if (x >= kmax)
			break;
	}
	/* the limit between the last load within it and the first beyond
	 * (users grow with the load: the rate does) */
	for (int it = 0; hi > 0 && it < 30; it++) {
		double mid = (lo + hi) / 2;
		bound_at(wl, mid, kmax, &pt);
		if (within_relaxed(wl, &pt)) {
			lo = mid;
			best = pt.users > best ? pt.users : best;
		} else {
			hi = mid;
		}
	}
	return best;
}
