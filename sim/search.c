/* Exponential-then-binary search for the smallest feasible fleet (search.h).
 *
 * With several threads the search runs ahead: the doubling phase runs its
 * next counts at once, and the bisection runs the next levels of its probe
 * tree at once.  It then reads the results in the order the one-thread
 * search would have made them and throws the rest away, so the answer, the
 * runs it counts and the progress it reports are the one-thread search's
 * whatever the number of threads. */
#include "sim/search.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64

typedef wzs_probe probe;

/* How far a run that met the targets came to missing one: its larger
 * p99 over its target. */
static double tightness(const wzs_params *p, const wzs_result *r)
{
	double t = wzs_ttft_over(p, r);
	double u = r->tpot.n > 0 ? r->tpot.p99 / p->tpot_p99_s : 0;
	return t > u ? t : u;
}

/* A fleet size's runs, one per seed from the scenario's: it meets the
 * targets when every run does.  Keeps the first run (in seed order) that
 * failed, else the tightest (the first of equals), and stops at a
 * failure, as a single seed's search would have learned no more.  One
 * seed's result is wzs_run's, as before search_seeds existed.  The runs'
 * events and simulated seconds are all counted. */
static void run_probe(probe *p)
{
	const wzs_params *base = p->base->params;
	long seeds = base->search_seeds > 1 ? base->search_seeds : 1;
	wzs_params ps = *base;
	wzs_run_config cfg = *p->base;
	cfg.replicas = p->replicas;
	cfg.stop_on_refusal = 1;
	cfg.progress = NULL; /* runs made ahead must not report */
	cfg.params = &ps;
	memset(&p->res, 0, sizeof p->res);
	wz_diag_clear(&p->diag);
	p->runs = 0;
	p->events = 0;
	p->seconds = 0;
	p->ok = 1;
	for (long k = 0; k < seeds && p->ok; k++) {
		wzs_result res;
		memset(&res, 0, sizeof res);
		ps.seed = base->seed + (uint64_t)k;
		p->err = wzs_run(&cfg, &res, &p->diag);
		if (p->err) {
			wzs_result_free(&res);
			wzs_result_free(&p->res);
			p->ok = 0;
			return;
		}
		p->runs++;
		p->events += res.events;
		p->seconds += res.sim_time_s;
		int ok = wzs_meets_targets(base, &res);
		if (k == 0 || !ok || tightness(base, &res) > tightness(base, &p->res)) {
			wzs_result_free(&p->res);
			p->res = res;
		} else {
			wzs_result_free(&res);
		}
		p->ok = ok;
	}
}

static void *probe_thread(void *arg)
{
	run_probe(arg);
	return NULL;
}

/* Runs n probes, n - 1 of them on threads of their own (inline if a thread
 * cannot be made). */
void wzs_probes_run(wzs_probe *p, int n)
{
	pthread_t tid[MAX_THREADS];
	int started[MAX_THREADS] = { 0 };
	for (int i = 1; i < n; i++)
		started[i] = pthread_create(&tid[i], NULL, probe_thread, &p[i]) == 0;
	run_probe(&p[0]);
	for (int i = 1; i < n; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		else
			run_probe(&p[i]);
	}
}

static void note_failure(wzs_search *out, const wzs_params *p, long replicas,
			 const wzs_result *res)
{
	out->binding = wzs_what_binds(p, res);
	out->below = replicas;
	out->below_ttft_p99 = res->ttft.p99;
	out->below_ttft_over = wzs_ttft_over(p, res);
	out->below_tpot_p99 = res->tpot.p99;
	out->below_refused_timeout = res->refused_timeout;
	out->below_refused_too_big = res->refused_too_big;
	out->below_completed = res->completed;
	out->below_marginal = wzs_within_noise(p, res);
	double recomputed = wzs_prefill_recomputed_share(res);
	out->below_recomputed_share = recomputed >= 0 ? recomputed : 0;
}

const char *wzs_search_binds(const wzs_search *s, char buf[WZS_BINDS_TEXT])
{
	return wzs_binding_text(s->binding, s->below_recomputed_share, buf, WZS_BINDS_TEXT);
}

int wzs_within_noise(const wzs_params *p, const wzs_result *r)
{
	if (r->refused || r->completed == 0)
		return 0;
	if (p->ttft_per_1k_tokens_s > 0)
		return (r->ttft_ratio.p99_lo <= 1 && 1 <= r->ttft_ratio.p99_hi) ||
		       (r->tpot.n > 0 && r->tpot.p99_lo <= p->tpot_p99_s &&
			p->tpot_p99_s <= r->tpot.p99_hi);
	return (r->ttft.p99_lo <= p->ttft_p99_s && p->ttft_p99_s <= r->ttft.p99_hi) ||
	       (r->tpot.n > 0 && r->tpot.p99_lo <= p->tpot_p99_s && p->tpot_p99_s <= r->tpot.p99_hi);
}

/* Takes a probe's result as the one-thread search would have. */
static wz_err consume(probe *p, wzs_search *out,
		      void (*on_run)(void *, long, const wzs_result *, int), void *ud,
		      wz_diag *diag)
{
	if (p->err) {
		if (diag)
			*diag = p->diag;
		return p->err;
	}
	out->runs += p->runs;
	out->events += p->events;
	out->seconds += p->seconds;
	if (on_run)
		on_run(ud, p->replicas, &p->res, p->ok);
	if (!p->ok)
		note_failure(out, p->base->params, p->replicas, &p->res);
	return WZ_OK;
}

static void free_probes(probe *p, int n)
{
	for (int i = 0; i < n; i++)
		wzs_result_free(&p[i].res);
}

/* The bisection's probe tree below (bad, good), breadth first: node i's
 * children are 2i+1 (its count passed: search below it) and 2i+2 (it
 * failed: search above).  Nodes whose interval is already closed get no
 * count (0).  Returns the number of slots used. */
static int probe_tree(long bad, long good, int depth, long *lo, long *hi, long *mid)
{
	int slots = (1 << depth) - 1;
	lo[0] = bad;
	hi[0] = good;
	for (int i = 0; i < slots; i++) {
		mid[i] = hi[i] - lo[i] > 1 ? lo[i] + (hi[i] - lo[i]) / 2 : 0;
		if (2 * i + 2 < slots) {
			lo[2 * i + 1] = lo[i];
			hi[2 * i + 1] = mid[i] ? mid[i] : hi[i];
			lo[2 * i + 2] = mid[i] ? mid[i] : lo[i];
			hi[2 * i + 2] = hi[i];
		}
	}
	return slots;
}

/* The most replicas a search tries: past one replica per session, more
 * cannot help. */
static long size_limit(const wzs_run_config *base, long max_replicas)
{
	long sessions = base->users;
	if (base->traffic) {
		sessions = 1;
		for (size_t i = 0; i < base->traffic->n; i++)
			if (base->traffic->requests[i].session + 1 > sessions)
				sessions = (long)(base->traffic->requests[i].session + 1);
	}
	if (max_replicas > sessions)
		max_replicas = sessions > 0 ? sessions : 1;
	return max_replicas;
}

/* wzs_size and wzs_size_below: with top_first, max_replicas first (top's
 * run where it is given), the search ending there where it fails, else
 * the doubling below it. */
static wz_err size_search(const wzs_run_config *base, long max_replicas, int threads, int top_first, wzs_probe *top,
			  void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
			  wzs_search *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	if (threads < 1)
		threads = 1;
	if (threads > MAX_THREADS)
		threads = MAX_THREADS;
	max_replicas = size_limit(base, max_replicas);
	out->largest = max_replicas;
	probe p[MAX_THREADS];
	long bad = 0, good = 0, next = 1;
	wz_err err = WZ_OK;
	if (top_first) {
		if (top) {
			p[0] = *top;
			memset(&top->res, 0, sizeof top->res);
		} else {
			p[0] = (probe){ .base = base, .replicas = max_replicas };
			run_probe(&p[0]);
		}
		if ((err = consume(&p[0], out, on_run, ud, diag)) || !p[0].ok) {
			free_probes(p, 1);
			return err;
		}
		good = p[0].replicas;
		out->result = p[0].res;
	}
	/* Doubling: 1, 2, 4, ... up to max_replicas (below it where it
	 * passed first), `threads` at a time. */
	long lim = good ? good - 1 : max_replicas;
	int more = lim >= 1, found = 0;
	while (more && !found) {
		int n = 0;
		for (; n < threads && more; n++) {
			p[n] = (probe){ .base = base, .replicas = next };
			more = next < lim;
			next = next * 2 < lim ? next * 2 : lim;
		}
		wzs_probes_run(p, n);
		for (int i = 0; i < n && !found; i++) {
			if ((err = consume(&p[i], out, on_run, ud, diag)))
				break;
			if (p[i].ok) {
				found = 1;
				good = p[i].replicas;
				wzs_result_free(&out->result);
				out->result = p[i].res;
				memset(&p[i].res, 0, sizeof p[i].res);
			} else {
				bad = p[i].replicas;
			}
		}
		free_probes(p, n);
		if (err)
			return err;
	}
	if (!good)
		return WZ_OK;
	/* Bisection: the tree's levels that `threads` probes cover at once. */
	int depth = 1;
	while ((1 << (depth + 1)) - 1 <= threads)
		depth++;
	while (good - bad > 1) {
		long lo[MAX_THREADS], hi[MAX_THREADS], mid[MAX_THREADS];
		int slots = probe_tree(bad, good, depth, lo, hi, mid);
		int slot_of[MAX_THREADS], n = 0;
		for (int i = 0; i < slots; i++) {
			slot_of[i] = -1;
			if (mid[i]) {
				p[n] = (probe){ .base = base, .replicas = mid[i] };
				slot_of[i] = n++;
			}
		}
		wzs_probes_run(p, n);
		for (int i = 0; i < slots && slot_of[i] >= 0;) {
			probe *q = &p[slot_of[i]];
			if ((err = consume(q, out, on_run, ud, diag)))
				break;
			if (q->ok) {
				good = q->replicas;
				wzs_result_free(&out->result);
				out->result = q->res;
				memset(&q->res, 0, sizeof q->res);
			} else {
				bad = q->replicas;
			}
			i = q->ok ? 2 * i + 1 : 2 * i + 2;
			if (i >= slots)
				break;
		}
		free_probes(p, n);
		if (err)
			return err;
	}
	out->replicas = good;
	out->marginal = wzs_within_noise(base->params, &out->result);
	return WZ_OK;
}

wz_err wzs_size(const wzs_run_config *base, long max_replicas, int threads,
		void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
		wzs_search *out, wz_diag *diag)
{
	return size_search(base, max_replicas, threads, 0, NULL, on_run, ud, out, diag);
}

wz_err wzs_size_below(const wzs_run_config *base, long max_replicas, int threads,
		      void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
		      wzs_search *out, wz_diag *diag)
{
	return size_search(base, max_replicas, threads, 1, NULL, on_run, ud, out, diag);
}

void wzs_probe_init(wzs_probe *p, const wzs_run_config *base, long max_replicas)
{
	memset(p, 0, sizeof *p);
	p->base = base;
	p->replicas = size_limit(base, max_replicas);
}

wz_err wzs_size_below_after(wzs_probe *top, int threads,
			    void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
			    wzs_search *out, wz_diag *diag)
{
	return size_search(top->base, top->replicas, threads, 1, top, on_run, ud, out, diag);
}

void wzs_probe_free(wzs_probe *p)
{
	wzs_result_free(&p->res);
}
