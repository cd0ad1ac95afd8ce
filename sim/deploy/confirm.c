/* The deployment search's two stages: the screen over every configuration
 * of the space, then the simulator's fleet search for candidates in the
 * order of the screen's optimistic fleets until none left has a lower
 * bound below the best (deploy.h). */
#include "sim/deploy/deploy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A configuration's parameters and replica model, into out->params and
 * out->model. */
static wz_err prepare(const wzd_base *b, const wzd_config *c, wzd_confirmed *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	out->params = b->params;
	wzm_memory_params mem = b->mem;
	wzd_config_apply(c, &out->params, &mem);
	wz_err err = wzs_params_validate(&out->params, "config", diag);
	if (!err)
		err = wzs_replica_model_build(b->model, b->gpu, &mem, b->context, b->record_per_layer,
					      b->offload_per_layer, b->decode_cost, &out->params,
					      &out->model, diag);
	if (err)
		return err;
	if (out->params.idle_policy == WZS_IDLE_OFFLOAD)
		wzs_replica_model_set_restore_decode(&out->model, &out->params,
						     b->restore_per_core_tlps);
	return WZ_OK;
}

/* The run configuration of a prepared one. */
static wzs_run_config run_config(const wzd_base *b, wzd_confirmed *c)
{
	wzs_run_config cfg = b->run;
	cfg.params = &c->params;
	cfg.model = &c->model;
	cfg.replicas = 1;
	return cfg;
}

/* wzd_confirm; below: only a fleet of at most max_replicas can win, so
 * that count is run first (wzs_size_below). */
static wz_err confirm(const wzd_base *b, const wzd_config *c, long max_replicas, int threads, int below,
		      void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
		      wzd_confirmed *out, wz_diag *diag)
{
	wz_err err = prepare(b, c, out, diag);
	if (err)
		return err;
	wzs_run_config cfg = run_config(b, out);
	if ((err = (below ? wzs_size_below : wzs_size)(&cfg, max_replicas, threads, on_run, ud, &out->search, diag)))
		return err;
	out->gpus = out->search.replicas * (c->gpus + c->prefill_gpus);
	out->usd_year = (double)out->gpus * b->usd_per_gpu_year;
	return WZ_OK;
}

wz_err wzd_confirm(const wzd_base *b, const wzd_config *c, long max_replicas, int threads,
		   void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
		   wzd_confirmed *out, wz_diag *diag)
{
	return confirm(b, c, max_replicas, threads, 0, on_run, ud, out, diag);
}

void wzd_confirmed_free(wzd_confirmed *c)
{
	if (c)
		wzs_result_free(&c->search.result);
}

void wzd_result_free(wzd_result *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->nconfirmed; i++)
		wzd_confirmed_free(&r->confirmed[i]);
	free(r->confirmed);
	free(r->screened);
	memset(r, 0, sizeof *r);
}

/* Feasible first, then the cheaper, then the more users per replica, then
 * the enumeration's order (the sort is stable on it). */
static int by_cost(const void *pa, const void *pb)
{
	const wzd_estimate *a = pa, *b = pb;
	if (a->feasible != b->feasible)
		return b->feasible - a->feasible;
	if (a->feasible && a->usd_year != b->usd_year)
		return a->usd_year < b->usd_year ? -1 : 1;
	return 0;
}

typedef struct {
	wzd_estimate e;
	long order;
} ranked;

static int by_rank(const void *pa, const void *pb)
{
	const ranked *a = pa, *b = pb;
	int d = by_cost(&a->e, &b->e);
	if (d)
		return d;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Two screened configurations the screen cannot tell apart: the same
 * replica shape (GPUs, pool, attention parallelism) at the same load and
 * batch, bound by the same limit, so that they differ only in what the
 * screen found no effect of (a batch cap neither reached, a context-
 * parallel degree or expert parallelism that moved nothing); confirming
 * both would spend a simulation where another shape could win. */
static int indistinct(const wzd_estimate *a, const wzd_estimate *b)
{
	return a->c.gpus == b->c.gpus && a->c.prefill_gpus == b->c.prefill_gpus && a->c.pp == b->c.pp &&
	       a->c.tp == b->c.tp && a->bind == b->bind && a->batch == b->batch &&
	       a->replicas == b->replicas && a->feasible == b->feasible &&
	       a->gpus_bound == b->gpus_bound && a->gpus_order == b->gpus_order &&
	       fabs(a->users_per_replica - b->users_per_replica) <= 1e-3 * a->users_per_replica;
}

typedef struct {
	void (*on_run)(void *ud, const wzd_config *c, long replicas, const wzs_result *r, int ok);
	void *ud;
	const wzd_config *c;
} run_relay;

static void relay(void *ud, long replicas, const wzs_result *r, int ok)
{
	run_relay *x = ud;
	if (x->on_run)
		x->on_run(x->ud, x->c, replicas, r, ok);
}

/* The pinned keys, for a message: "gpus_per_replica, serving", or "" */
static void pinned_keys(const wzd_space *s, char *buf, size_t n)
{
	buf[0] = '\0';
	for (int k = 0; k < WZD_NKEYS; k++)
		if (s->pinned[k]) {
			size_t at = strlen(buf);
			snprintf(buf + at, n - at, "%s%s", at ? ", " : "", wzd_key_names[k]);
		}
}

/* How far a confirmed configuration that met no target came: the larger
 * of its largest fleet's p99s over their targets (refusals: infinite). */
static double shortfall(const wzd_confirmed *c)
{
	const wzs_search *s = &c->search;
	if (s->below_refused_timeout || s->below_refused_too_big || !s->below_completed)
		return HUGE_VAL;
	double t = s->below_ttft_over, u = s->below_tpot_p99 / c->params.tpot_p99_s;
	return t > u ? t : u;
}

/* Whether a is confirmed after b: its optimistic fleet larger, or none
 * where b has one, or neither and its bound larger. */
static int order_after(const wzd_estimate *a, const wzd_estimate *b)
{
	if ((a->gpus_order > 0) != (b->gpus_order > 0))
		return b->gpus_order > 0;
	if (a->gpus_order != b->gpus_order)
		return a->gpus_order > b->gpus_order;
	return a->gpus_bound > b->gpus_bound;
}

/* First runs made ahead.  While the best fleet found stays the same, the
 * next candidates that only a fleet below it can win each begin with
 * wzs_size_below's run at that fleet, and up to `threads` of those runs
 * are made at once, each on a thread of its own (most fail there, and
 * their search ends with it).  Each is taken in its candidate's turn, as
 * its own search would have made it; all are dropped when the best changes
 * (and their fleets with it).  So the answer, the runs and their order are
 * the one-thread search's. */
typedef struct {
	int n, max;
	long *j, *cap;         /* the candidate, its fleet (replicas); j -1: taken */
	wzd_confirmed *c;      /* its parameters and model */
	wzs_run_config *cfg;   /* its runs' configuration (into c) */
	wzs_probe *top;        /* the run */
} ahead;

static int ahead_init(ahead *a, int threads)
{
	memset(a, 0, sizeof *a);
	a->max = threads < 1 ? 1 : threads > 64 ? 64 : threads;
	a->j = malloc((size_t)a->max * sizeof *a->j);
	a->cap = malloc((size_t)a->max * sizeof *a->cap);
	a->c = malloc((size_t)a->max * sizeof *a->c);
	a->cfg = malloc((size_t)a->max * sizeof *a->cfg);
	a->top = calloc((size_t)a->max, sizeof *a->top);
	return a->j && a->cap && a->c && a->cfg && a->top ? 0 : -1;
}

static void ahead_drop(ahead *a)
{
	for (int i = 0; i < a->n; i++)
		wzs_probe_free(&a->top[i]);
	a->n = 0;
}

static void ahead_free(ahead *a)
{
	if (a->top)
		ahead_drop(a);
	free(a->j);
	free(a->cap);
	free(a->c);
	free(a->cfg);
	free(a->top);
}

/* The slot of candidate j's first run at cap replicas, made ahead, or -1. */
static int ahead_find(const ahead *a, long j, long cap)
{
	for (int i = 0; i < a->n; i++)
		if (a->j[i] == j && a->cap[i] == cap)
			return i;
	return -1;
}

/* Adds candidate j's first run at cap replicas to the batch; -1 where its
 * model cannot be made (its own turn then says why). */
static int ahead_add(ahead *a, const wzd_base *b, const wzd_config *c, long j, long cap)
{
	wz_diag d;
	int i = a->n;
	if (prepare(b, c, &a->c[i], &d))
		return -1;
	a->cfg[i] = run_config(b, &a->c[i]);
	wzs_probe_init(&a->top[i], &a->cfg[i], cap);
	a->j[i] = j;
	a->cap[i] = cap;
	a->n++;
	return 0;
}

/* Candidate j's search (at most cap replicas, e its screen) from its first
 * run made ahead in slot i, into c. */
static wz_err ahead_take(ahead *a, int i, const wzd_base *b, const wzd_estimate *e, int threads,
			 void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
			 wzd_confirmed *c, wz_diag *diag)
{
	*c = a->c[i];
	a->j[i] = -1;
	wz_err err = wzs_size_below_after(&a->top[i], threads, on_run, ud, &c->search, diag);
	if (err)
		return err;
	c->gpus = c->search.replicas * (e->c.gpus + e->c.prefill_gpus);
	c->usd_year = (double)c->gpus * b->usd_per_gpu_year;
	return WZ_OK;
}

/* The fleet candidate e's search is capped at in the first pass, and
 * whether only the best found bounds it (*below: then it runs that fleet
 * first). */
static long first_cap(const wzd_estimate *e, long best_gpus, long max_replicas, int pass, int *below)
{
	long per_replica = e->c.gpus + e->c.prefill_gpus, cap = max_replicas;
	*below = 0;
	if (best_gpus > 0) {
		long beat = (best_gpus - 1) / per_replica;
		if (beat < cap) {
			cap = beat;
			*below = 1;
		}
	}
	long expect = e->feasible ? e->replicas
				  : (e->gpus_order > 0 ? e->gpus_order : e->gpus_bound) / per_replica;
	long guess = expect > 0 ? 2 * expect + 2 : cap;
	if (pass == 0 && guess < cap) {
		cap = guess;
		*below = 0;
	}
	return cap;
}

long wzd_next_candidate(const wzd_estimate *cand, long n, const unsigned char *done,
			long best_gpus)
{
	for (long j = 0; j < n; j++)
		if (!done[j] && (best_gpus <= 0 || cand[j].gpus_bound < best_gpus))
			return j;
	return -1;
}

wz_err wzd_search(const wzd_base *b, const wzd_space *s, const wzd_config *first, int nfirst,
		  int limit, long max_replicas, int threads,
		  void (*on_run)(void *ud, const wzd_config *c, long replicas,
				 const wzs_result *r, int ok),
		  void *ud, wzd_result *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	out->best = out->closest = -1;
	char pins[256];
	pinned_keys(s, pins, sizeof pins);
	long n = wzd_space_enumerate(s, NULL, 0);
	if (n < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "the configuration space is empty: the pinned keys (%s) leave no "
				   "combination the model can run (expert parallelism and context-"
				   "parallel prefill need attention-dp; a context-parallel group must "
				   "divide the replica's or the pool's GPUs)",
				   *pins ? pins : "none");
	double t0 = now_s();
	wzd_config *cs = malloc((size_t)n * sizeof *cs);
	ranked *rk = malloc((size_t)n * sizeof *rk);
	if (!cs || !rk) {
		free(cs);
		free(rk);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (%ld configurations)", n);
	}
	wzd_space_enumerate(s, cs, n);
	out->nconfigs = n;
	const char *first_drop = NULL;
	for (long i = 0; i < n; i++) {
		wzd_screen(b, &cs[i], &rk[i].e);
		rk[i].order = i;
		if (rk[i].e.dropped) {
			out->ndropped++;
			if (!first_drop)
				first_drop = rk[i].e.why;
		}
		if (rk[i].e.feasible)
			out->nfeasible++;
	}
	free(cs);
	if (out->ndropped == n) {
		wz_err err = wz_diag_set(diag, WZ_ERR_INPUT,
					 "no configuration can run%s%s%s: %s", *pins ? " with " : "",
					 pins, *pins ? " pinned" : "", first_drop ? first_drop : "");
		free(rk);
		return err;
	}
	qsort(rk, (size_t)n, sizeof *rk, by_rank);
	out->screened = malloc((size_t)n * sizeof *out->screened);
	if (!out->screened) {
		free(rk);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (long i = 0; i < n; i++)
		out->screened[i] = rk[i].e;
	free(rk);
	out->screen_s = now_s() - t0;
	/* The candidates: those with a bound, feasible by the screen's
	 * estimate or not (where none has, every one the model runs, so that
	 * the answer can say how close the first few came), each once among
	 * those the screen cannot tell apart, none that `first` holds, in
	 * order of their optimistic fleets, then the screen's. */
	if (nfirst < 0 || nfirst > 16)
		nfirst = 0;
	if (limit < 1)
		limit = 1;
	long nbound = 0;
	for (long i = 0; i < n; i++)
		nbound += !out->screened[i].dropped && out->screened[i].gpus_bound > 0;
	if (nbound == 0 && limit > WZD_INFEASIBLE_CONFIRMS)
		limit = WZD_INFEASIBLE_CONFIRMS;
	out->limit = limit;
	long *pick = malloc((size_t)n * sizeof *pick);
	out->confirmed = calloc((size_t)(limit + nfirst), sizeof *out->confirmed);
	if (!pick || !out->confirmed) {
		free(pick);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	long npick = 0;
	for (long i = 0; i < n; i++) {
		const wzd_estimate *e = &out->screened[i];
		if (e->dropped || (nbound > 0 && e->gpus_bound <= 0))
			continue;
		int dup = 0;
		for (int j = 0; j < nfirst && !dup; j++)
			dup = !memcmp(&first[j], &e->c, sizeof e->c);
		for (long j = 0; j < npick && !dup; j++)
			dup = indistinct(&out->screened[pick[j]], e);
		if (!dup)
			pick[npick++] = i;
	}
	/* by the screen's optimistic fleet (gpus_order), those without one
	 * after by bound, stable on the screen's order: the order only decides
	 * how soon the best is found, the bounds when the confirmation stops */
	for (long a = 1; a < npick; a++)
		for (long j = a; j > 0 && order_after(&out->screened[pick[j - 1]],
						      &out->screened[pick[j]]); j--) {
			long t = pick[j];
			pick[j] = pick[j - 1];
			pick[j - 1] = t;
		}
	wzd_estimate *cand = malloc((size_t)(npick + nfirst) * sizeof *cand);
	unsigned char *done = calloc((size_t)(npick + nfirst) + 1, 1);
	int *slot = malloc((size_t)(npick + nfirst + 1) * sizeof *slot);
	if (!cand || !done || !slot) {
		free(pick);
		free(cand);
		free(done);
		free(slot);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	/* `first` ahead of every bound (0): confirmed whatever their screen */
	for (int j = 0; j < nfirst; j++) {
		wzd_screen(b, &first[j], &cand[j]);
		cand[j].gpus_bound = 0;
	}
	for (long j = 0; j < npick; j++)
		cand[nfirst + j] = out->screened[pick[j]];
	free(pick);
	long ncand = npick + nfirst;
	t0 = now_s();
	/* First each candidate up to twice the replicas the screen expects
	 * (the screen misjudges some: a candidate that needs more than that
	 * costs one search, not one to the end), then those that stopped
	 * there, up to the cheapest fleet found.  Each searches only below
	 * the cheapest fleet found so far: it cannot win above it. */
	wz_err err = WZ_OK;
	int stopped = 0;
	ahead ah;
	if (ahead_init(&ah, threads)) {
		ahead_free(&ah);
		free(cand);
		free(done);
		free(slot);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int pass = 0; pass < 2 && !err; pass++) {
		for (;;) {
			long best_gpus = out->best >= 0 ? out->confirmed[out->best].gpus : 0;
			long j;
			wzd_confirmed *c;
			if (pass == 0) {
				j = wzd_next_candidate(cand, ncand, done, best_gpus);
				if (j < 0)
					break;
				if (cand[j].dropped) {
					done[j] = 3;
					continue;
				}
				if (out->nconfirmed >= limit) {
					stopped = 1;
					break;
				}
				c = &out->confirmed[out->nconfirmed];
				slot[j] = out->nconfirmed++;
				done[j] = 1;
			} else {
				/* resume, in the same order, those stopped at twice the
				 * estimate whose bound still beats the best */
				j = -1;
				for (long k = 0; k < ncand && j < 0; k++)
					if (done[k] == 1 && (best_gpus == 0 || cand[k].gpus_bound < best_gpus))
						j = k;
				if (j < 0)
					break;
				done[j] = 2;
				c = &out->confirmed[slot[j]];
				long per_replica = cand[j].c.gpus + cand[j].c.prefill_gpus;
				long beat = best_gpus > 0 ? (best_gpus - 1) / per_replica : max_replicas;
				if (c->search.replicas > 0 || c->search.largest >= beat ||
				    c->search.largest >= max_replicas || !c->capped)
					continue;
				wzd_confirmed_free(c);
			}
			const wzd_estimate *e = &cand[j];
			int below;
			long cap = first_cap(e, best_gpus, max_replicas, pass, &below);
			if (cap < 1) {
				memset(c, 0, sizeof *c);
				c->est = *e;
				c->capped = 1;
				continue;
			}
			run_relay r = { on_run, ud, &e->c };
			int at = below && ah.max > 1 ? ahead_find(&ah, j, cap) : -1;
			if (below && ah.max > 1 && at < 0) {
				/* j's first run and those of the candidates the first
				 * pass takes after it while the best stays, at once */
				ahead_drop(&ah);
				if (!ahead_add(&ah, b, &e->c, j, cap)) {
					at = 0;
					for (long k = j; pass == 0 && ah.n < ah.max &&
							 out->nconfirmed + ah.n - 1 < limit;) {
						done[k] = done[k] ? done[k] : 4;
						k = wzd_next_candidate(cand, ncand, done, best_gpus);
						int kb;
						long kc = k >= 0 && !cand[k].dropped
								  ? first_cap(&cand[k], best_gpus, max_replicas, 0, &kb)
								  : 0;
						if (kc < 1 || !kb || ahead_add(&ah, b, &cand[k].c, k, kc))
							break;
					}
					for (long k = 0; k < ncand; k++)
						done[k] = done[k] == 4 ? 0 : done[k];
					wzs_probes_run(ah.top, ah.n);
				}
			}
			if (at >= 0)
				err = ahead_take(&ah, at, b, e, threads, relay, &r, c, diag);
			else
				err = confirm(b, &e->c, cap, threads, below, relay, &r, c, diag);
			if (err) {
				wzd_confirmed_free(c);
				c->search.replicas = 0;
				break;
			}
			c->est = *e;
			c->capped = cap < max_replicas;
			out->runs += (unsigned long long)c->search.runs;
			if (c->search.replicas > 0 &&
			    (out->best < 0 || c->usd_year < out->confirmed[out->best].usd_year)) {
				out->best = (int)(c - out->confirmed);
				ahead_drop(&ah);
			}
		}
	}
	ahead_free(&ah);
	/* what the limit left: candidates whose bound beats the best found */
	if (!err && stopped && nbound > 0) {
		long best_gpus = out->best >= 0 ? out->confirmed[out->best].gpus : 0;
		for (long j = 0; j < ncand; j++)
			if (!done[j] && (best_gpus == 0 || cand[j].gpus_bound < best_gpus)) {
				if (!out->unconfirmed || cand[j].gpus_bound < out->unconfirmed_bound)
					out->unconfirmed_bound = cand[j].gpus_bound;
				out->unconfirmed++;
			}
	}
	free(cand);
	free(done);
	free(slot);
	if (err)
		return err;
	out->confirm_s = now_s() - t0;
	if (out->best < 0)
		for (int j = 0; j < out->nconfirmed; j++)
			if (out->closest < 0 ||
			    shortfall(&out->confirmed[j]) < shortfall(&out->confirmed[out->closest]))
				out->closest = j;
	return WZ_OK;
}
