/* The deployment search (sim/deploy): its space and pinning, the screen
 * against the step-time model it is built on, per-request TTFT targets,
 * the errors a pinned or empty space gives, on a small grid that the
 * screen and confirmation find the cheapest fleet that simulating every
 * configuration finds, the confirmation's stopping rule, that a
 * larger space never answers dearer than a smaller one, and that the
 * simulator finds no fleet below a bound where it did before. */
#include "tests/tap.h"
#include "tests/sim/sim_fixture.h"
#include "tests/sim/deploy_fixture.h"

#include <stdlib.h>
#include <string.h>

#include "sim/deploy/deploy.h"
#include "sim/search.h"

/* The search fixture of test_sim (tests/sim/deploy_fixture.h). */
static void base_of(wzd_base *b)
{
	deploy_fixture_base(b, dsv3, h100, fixture_record("fp8-mix"));
}

static void test_space(void)
{
	wzs_params p;
	wzs_params_default(&p);
	wzd_space s;
	wzd_space_default(&p, &s);
	long n = wzd_space_enumerate(&s, NULL, 0);
	wzd_config *cs = malloc((size_t)n * sizeof *cs);
	wzd_space_enumerate(&s, cs, n);
	int bad = 0, disagg = 0, tp = 0, cp = 0;
	for (long i = 0; i < n; i++) {
		const wzd_config *c = &cs[i];
		bad += (c->dbo && !c->ep) || (c->tp && (c->ep || c->cp > 1));
		bad += c->cp > 1 && (c->prefill_gpus ? c->prefill_gpus : c->gpus) % c->cp != 0;
		bad += c->mtp != 0; /* no mtp_acceptance: MTP off */
		disagg += c->prefill_gpus > 0;
		tp += c->tp;
		cp += c->cp > 1;
	}
	ok(n > 100 && !bad && disagg && tp && cp,
	   "default space: %ld coherent configurations, disaggregated, tp and CP among them", n);
	p.mtp_acceptance = 0.85;
	wzd_space_default(&p, &s);
	ok(wzd_space_enumerate(&s, NULL, 0) == 4 * n, "MTP depths 0-3 where the scenario gives an acceptance");
	free(cs);

	wz_diag diag;
	wzd_space_default(&p, &s);
	wz_err e = wzd_space_pin(&s, "gpus_per_replica = 32, prefill_gpus_per_replica=16", "--config",
				 &diag);
	long m = wzd_space_enumerate(&s, NULL, 0);
	cs = malloc((size_t)(m > 0 ? m : 1) * sizeof *cs);
	wzd_space_enumerate(&s, cs, m);
	int off = 0;
	for (long i = 0; i < m; i++)
		off += cs[i].gpus != 32 || cs[i].prefill_gpus != 16;
	ok(!e && m > 0 && !off && s.pinned[WZD_KEY_SERVING],
	   "pins narrow the space: %ld configurations, each 32 + 16 GPUs, serving pinned", m);
	free(cs);
	e = wzd_space_pin(&s, "gpus=8", "--config", &diag);
	ok(e == WZ_ERR_INPUT && strstr(diag.msg, "'gpus'") && strstr(diag.msg, "gpus_per_replica"),
	   "unknown key named: %s", diag.msg);
	e = wzd_space_pin(&s, "parallelism=pp", "--config", &diag);
	ok(e == WZ_ERR_INPUT && strstr(diag.msg, "parallelism: 'pp'"), "bad value named: %s",
	   diag.msg);
	e = wzd_space_pin(&s, "max_batch", "--config", &diag);
	ok(e == WZ_ERR_INPUT && strstr(diag.msg, "KEY=VALUE"), "a pair without '=': %s", diag.msg);

	/* pipeline stages are searched for every disaggregated pool, and
	 * never beside context parallelism */
	wzs_params lay;
	wzs_params_default(&lay);
	lay.disaggregated = 1;
	lay.prefill_gpus = 32;
	lay.prefill_pp_stages = 2;
	wzd_space_default(&lay, &s);
	long npp = 0, nall = wzd_space_enumerate(&s, NULL, 0), badpp = 0;
	wzd_config *all = calloc((size_t)nall, sizeof *all);
	wzd_space_enumerate(&s, all, nall);
	for (long i = 0; all && i < nall; i++) {
		npp += all[i].pp > 1;
		badpp += all[i].pp > 1 && (all[i].cp > 1 || all[i].prefill_gpus % all[i].pp);
	}
	free(all);
	ok(s.n[WZD_KEY_PP] == 3 && npp > 0 && !badpp,
	   "a pool with a layout: 1, 2 and 4 stages searched (%ld of %ld configurations pipelined)",
	   npp, nall);
	lay.prefill_pp_stages = 1;
	lay.disaggregated = 0;
	wzd_space_default(&lay, &s);
	ok(s.n[WZD_KEY_PP] == 3 && s.v[WZD_KEY_PP][0] == 1 && s.v[WZD_KEY_PP][2] == 4,
	   "without one, 1, 2 and 4 stages too");
	lay.prefill_pp_stages = 3;
	wzd_space_default(&lay, &s);
	ok(s.n[WZD_KEY_PP] == 4 && s.v[WZD_KEY_PP][3] == 3, "and the scenario's own, 3");

	wzd_config c = { 64, 0, 1, 1, 32, 8, 1, 128, 1 }, back;
	wzs_params q;
	wzs_params_default(&q);
	q.mtp_acceptance = 0.85;
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	wzd_config_apply(&c, &q, &mem);
	wzd_config_of(&q, &mem, &back);
	ok(!memcmp(&c, &back, sizeof c), "a configuration applied reads back the same");
	char pairs[256];
	wzd_config_pairs(&c, pairs, sizeof pairs);
	wzd_space_default(&q, &s);
	e = wzd_space_pin(&s, pairs, "--config", &diag);
	ok(!e && wzd_space_enumerate(&s, NULL, 0) == 1, "its key=value pairs pin it alone (%s)",
	   pairs);
}

static void test_screen(void)
{
	wzd_base b;
	base_of(&b);
	/* A new session's 32K-token first prompt on a 32-GPU pool: in 4
	 * pipeline stages its chunks overlap, so it is prefilled sooner than
	 * on one pool GPU, and the configuration says so. */
	wzd_config one = { 32, 0, 1, 1, 32, 1, 0, 256, 1 }, four = one;
	four.pp = 4;
	wzd_estimate e1, e4;
	wzd_screen(&b, &one, &e1);
	wzd_screen(&b, &four, &e4);
	char text[256];
	wzd_config_text(&four, text, sizeof text);
	ok(!e1.dropped && !e4.dropped && e4.first_prefill_s < 0.75 * e1.first_prefill_s &&
		   strstr(text, "PP4 prefill"),
	   "a 4-stage pool prefills the first prompt in %.3f s against %.3f s (%s)",
	   e4.first_prefill_s, e1.first_prefill_s, text);
	/* The screen's decode time is the simulator's step time at its batch
	 * and the users' mean context. */
	wzd_config c = { 32, 0, 0, 0, 16, 1, 0, 256, 1 };
	wzd_estimate e;
	wzd_screen(&b, &c, &e);
	wzs_params p = b.params;
	wzm_memory_params mem = b.mem;
	wzd_config_apply(&c, &p, &mem);
	wzs_replica_model m;
	wz_err err = wzs_replica_model_build(dsv3, h100, &mem, 32000, b.record_per_layer,
					     b.offload_per_layer, 1, &p, &m, NULL);
	/* a user holds the session's start and, on average, turns - 1 turns */
	double held = 32000 + (p.turns - 1) * (p.prompt_tokens + p.output_tokens);
	double step = wzs_step_time(&m, e.batch * m.ranks, e.batch * held) / m.tokens_per_step;
	ok(!err && e.feasible && e.batch >= 1 && fabs(e.tpot_s - step) < 1e-12 * step,
	   "disaggregated: TPOT %.4f s at %.0f a rank is the step time (%.4f s)", e.tpot_s, e.batch,
	   step);
	ok(e.tpot_s <= 0.2 && e.gpus == e.replicas * 48 &&
		   e.replicas == (long)ceil(1500 / e.users_per_replica),
	   "its fleet: %ld replicas of 48 GPUs for %.1f users each", e.replicas,
	   e.users_per_replica);
	/* the next batch up misses a target, or memory or the cap binds */
	ok(e.bind != WZD_BIND_NONE, "what binds it: %s", wzd_bind_name(e.bind));
	double u[8], g[8];
	int k = wzd_frontier(&b, &c, u, g, 8);
	int down = 1;
	for (int i = 1; i < k; i++)
		down &= u[i] <= u[i - 1] && g[i] >= g[i - 1];
	ok(k >= 3 && down, "frontier: %d points, tokens/s per user falling as per GPU rises", k);
	/* over several configurations: no point beats another on both axes */
	wzd_config more[3] = { c, { 16, 0, 0, 0, 0, 4, 0, 256, 1 }, { 64, 0, 0, 0, 16, 1, 0, 256, 1 } };
	wzd_estimate es[3];
	for (int i = 0; i < 3; i++)
		wzd_screen(&b, &more[i], &es[i]);
	double px[WZD_PARETO_POINTS], py[WZD_PARETO_POINTS];
	int np = wzd_pareto(&b, es, 3, px, py), dominated = 0;
	for (int i = 0; i < np; i++)
		for (int j = 0; j < np; j++)
			dominated += i != j && px[j] >= px[i] && py[j] >= py[i];
	int at_least = 0;
	for (int i = 0; i < 3; i++) {
		double u1[12], g1[12];
		int k1 = wzd_frontier(&b, &more[i], u1, g1, 12);
		for (int j = 0; j < k1; j++) {
			int beaten = 0;
			for (int q = 0; q < np; q++)
				beaten |= px[q] >= u1[j] && py[q] >= g1[j];
			at_least += !beaten;
		}
	}
	ok(np >= 3 && !dominated && !at_least,
	   "Pareto frontier over three configurations: %d points, none dominated, every "
	   "configuration's point at or under it", np);

	/* a target the first prompt alone cannot meet */
	b.params.ttft_p99_s = 0.5;
	wzd_screen(&b, &c, &e);
	ok(!e.feasible && !e.dropped && strstr(e.why, "first prompt") && e.bind == WZD_BIND_TTFT,
	   "a TTFT target below the first prompt's prefill: %s", e.why);
	b.params.ttft_per_1k_tokens_s = 1;
	wzd_screen(&b, &c, &e);
	ok(e.feasible && fabs(e.first_target_s - (0.5 + 32.5)) < 1e-9,
	   "with 1 s per 1k new tokens its target is %.2f s and it is feasible", e.first_target_s);

	/* too few GPUs for the weights: dropped with the model's reason */
	wzd_config small = { 1, 0, 0, 0, 0, 1, 0, 256, 1 };
	wzd_screen(&b, &small, &e);
	ok(e.dropped && !e.feasible && e.why[0], "one H100 cannot hold DeepSeek-V3: %s", e.why);
}

static void test_ttft_target(void)
{
	/* A 60,800-token prompt alone on one replica: about 16 s to its first
	 * token (test_cp), over a flat 5 s target, within 5 s + 0.2 s per 1k. */
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	wzs_params p;
	wzs_params_default(&p);
	p.warmup_s = 0;
	wzs_replica_model m;
	wz_err err = wzs_replica_model_build(dsv3, h100, &mem, 100000, fixture_record("fp8-mix"),
					     fixture_record("fp8-mix"), 1, &p, &m, NULL);
	wzt_request rows[1] = { { 0, 0, 1.0, 60800, 10, 0, 0, 0 } };
	wzs_result r;
	err = err ? err : fixture_run1(&p, &m, rows, 1, &r, NULL);
	ok(!err && r.ttft.p99 > 5 && !wzs_meets_targets(&p, &r) && r.ttft_ratio.n == 0,
	   "flat 5 s target: TTFT %.2f s misses it", r.ttft.p99);
	wzs_result_free(&r);
	p.ttft_per_1k_tokens_s = 0.2;
	err = fixture_run1(&p, &m, rows, 1, &r, NULL);
	double target = 5 + 0.2 * 60.8;
	ok(!err && r.ttft.p99 < target && wzs_meets_targets(&p, &r) && r.ttft_ratio.n == 1 &&
		   fabs(r.ttft_ratio.max - r.ttft.max / target) < 1e-9 &&
		   fabs(wzs_ttft_over(&p, &r) - r.ttft_ratio.p99) == 0 && wzs_ttft_over(&p, &r) < 1,
	   "5 s + 0.2 s per 1k: its own target %.2f s, met (TTFT over target %.3f)", target,
	   r.ttft_ratio.max);
	ok(fabs(wzs_request_ttft_target(&p, 60800) - target) < 1e-12 && r.met_slo == 1,
	   "the request counts as meeting its target");
	wzs_result_free(&r);
}

static void test_errors(void)
{
	wzd_base b;
	base_of(&b);
	wzd_space s;
	wzd_space_default(&b.params, &s);
	wz_diag diag;
	wzd_result res;
	wzd_space_pin(&s, "gpus_per_replica=2", "--config", &diag);
	wz_err e = wzd_search(&b, &s, NULL, 0, 2, 100, 1, NULL, NULL, &res, &diag);
	ok(e == WZ_ERR_INPUT && strstr(diag.msg, "gpus_per_replica"),
	   "a pinned replica that cannot hold the weights: %s", diag.msg);
	wzd_result_free(&res);
	wzd_space_default(&b.params, &s);
	wzd_space_pin(&s, "parallelism=tp, expert_parallel=yes", "--config", &diag);
	e = wzd_search(&b, &s, NULL, 0, 2, 100, 1, NULL, NULL, &res, &diag);
	ok(e == WZ_ERR_INPUT && strstr(diag.msg, "empty") && strstr(diag.msg, "parallelism") &&
		   strstr(diag.msg, "expert_parallel"),
	   "an empty space names the pinned keys: %s", diag.msg);
	wzd_result_free(&res);
}

/* The fixture's space narrowed as the tests search it: replicas of 16, 32
 * or 64 GPUs, prefill pools of 16 or 32. */
static void narrow(wzd_space *s)
{
	s->n[WZD_KEY_GPUS] = 3;
	s->v[WZD_KEY_GPUS][0] = 16;
	s->v[WZD_KEY_GPUS][1] = 32;
	s->v[WZD_KEY_GPUS][2] = 64;
	s->n[WZD_KEY_PREFILL_GPUS] = 2;
	s->v[WZD_KEY_PREFILL_GPUS][0] = 16;
	s->v[WZD_KEY_PREFILL_GPUS][1] = 32;
}

/* Threads change nothing: the search of space s (first: confirmed
 * first, NULL none) with limit on 2 and 3 threads confirms what it does
 * on one, in the same order, with the same runs (the first runs made
 * ahead are taken in their turn, and dropped where a new best changes
 * their fleets: a dear `first` makes the best change). */
static void same_on_threads(const wzd_base *b, const wzd_space *s, const wzd_config *first, int limit,
			    const char *what)
{
	wzd_result one;
	wz_diag diag;
	if (wzd_search(b, s, first, first != NULL, limit, 1000, 1, NULL, NULL, &one, &diag)) {
		ok(0, "%s: %s", what, diag.msg);
		return;
	}
	for (int threads = 2; threads <= 3; threads++) {
		wzd_result t;
		wz_err te = wzd_search(b, s, first, first != NULL, limit, 1000, threads, NULL, NULL, &t, &diag);
		int same = !te && t.best == one.best && t.nconfirmed == one.nconfirmed && t.runs == one.runs;
		for (int j = 0; same && j < t.nconfirmed; j++)
			same = t.confirmed[j].gpus == one.confirmed[j].gpus &&
			       t.confirmed[j].search.runs == one.confirmed[j].search.runs &&
			       t.confirmed[j].search.events == one.confirmed[j].search.events &&
			       !memcmp(&t.confirmed[j].est.c, &one.confirmed[j].est.c, sizeof t.confirmed[j].est.c);
		ok(same, "%s, %d threads: the same %d confirmed, fleets, runs (%llu) and answer (%ld GPUs) as on one",
		   what, threads, one.nconfirmed, one.runs, one.best >= 0 ? one.confirmed[one.best].gpus : 0);
		if (!te)
			wzd_result_free(&t);
	}
	wzd_result_free(&one);
}

/* Every configuration of a small grid simulated (its smallest fleet), and
 * the search over the same grid: its fleet is at most 2% dearer than the
 * cheapest, however few it confirms. */
static void test_grid(void)
{
	wzd_base b;
	base_of(&b);
	wzd_space s;
	wzd_space_default(&b.params, &s);
	wz_diag diag;
	wz_err e = wzd_space_pin(&s, "expert_parallel=no, parallelism=attention-dp, max_batch=256, "
				 "prefill_pipeline_stages=1", "test", &diag);
	narrow(&s);
	s.n[WZD_KEY_CP] = 2;        /* 1, 4 */
	s.v[WZD_KEY_CP][0] = 1;
	s.v[WZD_KEY_CP][1] = 4;
	long n = wzd_space_enumerate(&s, NULL, 0);
	wzd_config cs[32];
	wzd_space_enumerate(&s, cs, 32);
	long cheapest = 0, fleet[32];
	int which = -1, second = -1;
	for (long i = 0; i < n && !e; i++) {
		wzd_confirmed c;
		e = wzd_confirm(&b, &cs[i], 1000, 2, NULL, NULL, &c, &diag);
		if (!e && c.search.replicas > 0 && (!cheapest || c.gpus < cheapest)) {
			cheapest = c.gpus;
			which = (int)i;
		}
		fleet[i] = !e ? c.gpus : 0;
		wzd_confirmed_free(&c);
	}
	ok(!e && n == 18 && cheapest > 0, "exhaustive: %ld configurations, the cheapest %ld GPUs", n,
	   cheapest);
	char text[256] = "";
	if (which >= 0)
		wzd_config_text(&cs[which], text, sizeof text);
	wzd_result res;
	e = e ? e : wzd_search(&b, &s, NULL, 0, WZD_CONFIRM_LIMIT, 1000, 2, NULL, NULL, &res, &diag);
	long got = !e && res.best >= 0 ? res.confirmed[res.best].gpus : 0;
	ok(!e && got == cheapest && res.unconfirmed == 0,
	   "screen + %d confirmed (the limit not reached): %ld GPUs against the exhaustive %ld (%s)",
	   e ? 0 : res.nconfirmed, got, cheapest, text);
	/* the stopping rule held: every feasible configuration left
	 * unconfirmed has a bound at or above the answer, or one the screen
	 * cannot tell from it was confirmed */
	long missed = 0;
	for (long i = 0; !e && got > 0 && i < res.nconfigs; i++) {
		const wzd_estimate *x = &res.screened[i];
		if (!x->feasible || x->gpus_bound >= got)
			continue;
		int seen = 0;
		for (int j = 0; j < res.nconfirmed && !seen; j++) {
			const wzd_estimate *y = &res.confirmed[j].est;
			seen = y->c.gpus == x->c.gpus && y->c.prefill_gpus == x->c.prefill_gpus &&
			       y->c.pp == x->c.pp && y->c.tp == x->c.tp && y->gpus_bound == x->gpus_bound;
		}
		missed += !seen;
	}
	ok(!e && got > 0 && missed == 0,
	   "no unconfirmed configuration's bound is below the answer (%ld are)", missed);
	if (!e)
		wzd_result_free(&res);
	if (!e) {
		same_on_threads(&b, &s, NULL, WZD_CONFIRM_LIMIT, "the grid");
		/* the runner-up first: the cheapest then wins from below it,
		 * and the best changes while first runs are made ahead */
		for (long i = 0; i < n; i++)
			if (fleet[i] > cheapest && (second < 0 || fleet[i] < fleet[second]))
				second = (int)i;
		if (second >= 0)
			same_on_threads(&b, &s, &cs[second], WZD_CONFIRM_LIMIT, "the grid, its runner-up first");
	}
	/* a limit of one: where it stopped the search short of the cheapest,
	 * it says so (with bounds below the answer left, it may say so where
	 * the one confirmed is the cheapest) */
	e = e ? e : wzd_search(&b, &s, NULL, 0, 1, 1000, 2, NULL, NULL, &res, &diag);
	ok(!e && res.nconfirmed == 1 && res.limit == 1 &&
		   (res.unconfirmed > 0 || (res.best >= 0 && res.confirmed[res.best].gpus == cheapest)),
	   "a limit of 1: %d confirmed, %ld left whose bound beats its %ld GPUs", e ? 0 : res.nconfirmed,
	   e ? 0 : res.unconfirmed, !e && res.best >= 0 ? res.confirmed[res.best].gpus : 0);
	if (!e)
		wzd_result_free(&res);
}

/* The stopping rule alone: the first candidate not yet confirmed whose
 * bound is below the best fleet, none once no bound is. */
static void test_stopping_rule(void)
{
	wzd_estimate c[4];
	memset(c, 0, sizeof c);
	long bounds[4] = { 100, 200, 200, 300 };
	for (int i = 0; i < 4; i++)
		c[i].gpus_bound = bounds[i];
	unsigned char done[4] = { 0 };
	ok(wzd_next_candidate(c, 4, done, 0) == 0, "no fleet yet: the lowest bound first");
	done[0] = 1;
	ok(wzd_next_candidate(c, 4, done, 0) == 1, "then the next, in order");
	ok(wzd_next_candidate(c, 4, done, 250) == 1, "a best of 250: bounds of 200 can beat it");
	ok(wzd_next_candidate(c, 4, done, 200) == -1,
	   "a best of 200: a bound of 200 cannot beat it, so the confirmation stops");
	done[1] = 1;
	ok(wzd_next_candidate(c, 4, done, 201) == 2, "a best of 201: the other 200 still can");
	done[2] = 1;
	ok(wzd_next_candidate(c, 4, done, 300) == -1 && wzd_next_candidate(c, 4, done, 301) == 3,
	   "300 cannot beat 300, and can beat 301");
	done[3] = 1;
	ok(wzd_next_candidate(c, 4, done, 0) == -1, "all confirmed: none left");
	memset(done, 0, sizeof done);
	ok(wzd_next_candidate(c, 4, done, 100) == -1, "a best at the lowest bound: none can beat it");
}

/* A space and a larger one (S' = S + pipeline stages 2 and 4, S' = S + a
 * prefill pool of 64) at 1,500 users starting at 60,000 tokens, TTFT
 * 5 s + 0.1 s per 1,000 new tokens: the larger never answers dearer, the
 * search's own guarantee where its bounds hold and the limit does not
 * bind.  Confirming the screen's best of each family and the next, four
 * in all, answered 544 GPUs for S and 768 for S + stages, where both
 * have a fleet of 192. */
static void test_monotone(void)
{
	wzd_base b;
	base_of(&b);
	deploy_fixture_long(&b);
	wz_diag diag;
	wzd_space s, big;
	wzd_space_default(&b.params, &s);
	wz_err e = wzd_space_pin(&s, "max_batch=256, prefill_pipeline_stages=1", "test", &diag);
	narrow(&s);
	struct {
		const char *what;
		int key, n, v[4];
	} grow[] = {
		{ "+ pipeline stages 2, 4", WZD_KEY_PP, 3, { 1, 2, 4 } },
		{ "+ a prefill pool of 64", WZD_KEY_PREFILL_GPUS, 3, { 16, 32, 64 } },
	};
	wzd_result res;
	long small = 0;
	e = e ? e : wzd_search(&b, &s, NULL, 0, 64, 1000, 2, NULL, NULL, &res, &diag);
	if (!e) {
		small = res.best >= 0 ? res.confirmed[res.best].gpus : 0;
		ok(small > 0 && res.unconfirmed == 0, "S: %ld GPUs (%ld configurations, %d confirmed)",
		   small, res.nconfigs, res.nconfirmed);
		wzd_result_free(&res);
	} else {
		ok(0, "S: %s", diag.msg);
	}
	for (size_t g = 0; g < sizeof grow / sizeof grow[0] && !e; g++) {
		big = s;
		big.n[grow[g].key] = grow[g].n;
		for (int k = 0; k < grow[g].n; k++)
			big.v[grow[g].key][k] = grow[g].v[k];
		big.pinned[grow[g].key] = 0;
		e = wzd_search(&b, &big, NULL, 0, 64, 1000, 2, NULL, NULL, &res, &diag);
		long large = !e && res.best >= 0 ? res.confirmed[res.best].gpus : 0;
		char text[256] = "";
		if (!e && res.best >= 0)
			wzd_config_text(&res.confirmed[res.best].est.c, text, sizeof text);
		ok(!e && large > 0 && large <= small && res.unconfirmed == 0,
		   "S' = S %s: %ld GPUs, at most S's %ld (%ld configurations, %d confirmed; %s)",
		   grow[g].what, large, small, e ? 0 : res.nconfigs, e ? 0 : res.nconfirmed, text);
		if (!e)
			wzd_result_free(&res);
	}
}

/* The lower bound against the simulator (bench/bench_deploy_bound checks
 * the whole space): one configuration of each kind whose simulated fleet
 * was below its bound before the bound let the load go below a request a
 * rank, let HBM cap only the running requests (evicted sessions
 * recompute) and took a turn's cycle up to its targets.  Each is sized
 * only below its bound (or, without one, up to 60 replicas): the
 * simulation must find no fleet there. */
static void test_bound(void)
{
	static const struct {
		long start;
		const char *pairs, *what;
	} cases[] = {
		{ 32000, "gpus_per_replica=32, parallelism=attention-dp, expert_parallel=no, "
			 "serving=aggregated, prefill_context_parallel=1",
		  "aggregated, one request a rank misses the mean TPOT" },
		{ 32000, "gpus_per_replica=64, parallelism=tp, serving=aggregated",
		  "tensor-parallel, HBM full" },
		{ 32000, "gpus_per_replica=16, parallelism=attention-dp, expert_parallel=no, "
			 "serving=disaggregated, prefill_gpus_per_replica=16, "
			 "prefill_context_parallel=1, prefill_pipeline_stages=1",
		  "disaggregated, HBM full" },
		{ 60000, "gpus_per_replica=64, parallelism=attention-dp, expert_parallel=no, "
			 "serving=disaggregated, prefill_gpus_per_replica=16, "
			 "prefill_context_parallel=2, prefill_pipeline_stages=1",
		  "context-parallel pool" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		wzd_base b;
		base_of(&b);
		if (cases[i].start == 60000)
			deploy_fixture_long(&b);
		wzd_space s;
		wzd_space_default(&b.params, &s);
		wz_diag diag;
		wz_err e = wzd_space_pin(&s, cases[i].pairs, "test", &diag);
		e = e ? e : wzd_space_pin(&s, "max_batch=256, mtp_draft_tokens=0", "test", &diag);
		wzd_config c;
		long n = e ? 0 : wzd_space_enumerate(&s, &c, 1);
		wzd_estimate est;
		wzd_confirmed got;
		long per = 0, cap = 0, sim = 0;
		if (n == 1) {
			wzd_screen(&b, &c, &est);
			per = c.gpus + c.prefill_gpus;
			cap = est.gpus_bound > 0 ? (est.gpus_bound - 1) / per : 60;
			if (cap > 60)
				cap = 60;
			if (cap >= 1) {
				e = wzd_confirm(&b, &c, cap, 2, NULL, NULL, &got, &diag);
				if (!e) {
					sim = got.gpus;
					wzd_confirmed_free(&got);
				}
			}
		}
		ok(n == 1 && !e && sim == 0,
		   "%s at %ld: bound %ld GPUs, no simulated fleet below it (%ld GPUs)", cases[i].what,
		   cases[i].start, n == 1 ? est.gpus_bound : 0, sim);
	}
}

int main(void)
{
	if (fixture_open())
		return tap_done();
	test_space();
	test_screen();
	test_ttft_target();
	test_errors();
	test_grid();
	test_stopping_rule();
	test_monotone();
	test_bound();
	fixture_close();
	return tap_done();
}
