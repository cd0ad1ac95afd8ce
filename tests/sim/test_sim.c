/* Simulator tests: agreement with costmodel's memory accounting, queueing
 * theory (M/D/1 mean wait, Little's law), determinism per seed, session
 * draws, routing, the fleet search and its binding limits (the engine's
 * event order and arithmetic: tests/sim/test_engine.c). */
#include "tests/tap.h"
#include "tests/sim/sim_fixture.h"

#include <stdint.h>

#include "costmodel/capacity.h"
#include "sim/fleet.h"
#include "sim/population.h"
#include "sim/search.h"
#include "sim/sim.h"
#include "sim/speedup.h"
#include "traces/traffic_import.h"

/* Prefill time of one request alone (all its pairs on one rank). */
static double prefill_alone(const wzs_replica_model *m, double tokens, double pairs)
{
	return wzs_prefill_time(m, tokens, pairs, pairs);
}

static void memory_params(wzm_memory_params *mem, wzm_parallelism par)
{
	wzm_memory_params_default(mem);
	mem->gpus_per_replica = 16;
	mem->par = par;
}

/* Session lengths drawn from the ziggurat's exponential are geometric:
 * P(n = k) = (1 - q) q^(k - 1), q = 1 - 1 / mean, by chi-square over
 * n = 1..59 and the rest, and the mean within 4 standard errors. */
static void test_session_turns(void)
{
	enum { N = 400000, K = 60 };
	wzs_params p;
	wzs_params_default(&p);
	p.length_dist = WZS_DIST_EXP;
	p.turns = 12;
	wzs_rng g;
	wzs_rng_seed(&g, 31, 5);
	long count[K] = { 0 };
	double sum = 0;
	for (int i = 0; i < N; i++) {
		int32_t n = wzs_pop_session_turns(&p, &g);
		count[n < K ? n - 1 : K - 1] += n >= 1;
		sum += n;
	}
	double q = 1 - 1 / p.turns, chi2 = 0, below = 1, within = 0;
	for (int k = 0; k < K; k++) {
		double prob = k < K - 1 ? (1 - q) * pow(q, k) : below;
		below -= prob;
		within += count[k];
		chi2 += (count[k] - N * prob) * (count[k] - N * prob) / (N * prob);
	}
	/* The chi-square's 0.1% point for 59 degrees of freedom. */
	ok(within == N && chi2 < 98.3, "session turns are geometric: chi-square %.1f over %d "
	   "counts below 98.3", chi2, K);
	double sd = sqrt(q) / (1 - q);
	ok(fabs(sum / N - p.turns) < 4 * sd / sqrt(N), "session turns' mean %.4f within 4 standard "
	   "errors of %g", sum / N, p.turns);
}

/* A user's steady start (its draws in locals, population.c) against the
 * draws one turn at a time it stands for: the same context, turns left
 * and stream after, for exponential and fixed lengths. */
static void test_steady_start(void)
{
	int same = 1, users = 0, turns = 0;
	for (int c = 0; c < 6; c++) {
		wzs_params p;
		wzs_params_default(&p);
		p.length_dist = c % 3 == 2 ? WZS_DIST_FIXED : WZS_DIST_EXP;
		p.turns = c < 3 ? 12 : 1 + c % 2 * 0.5;
		p.prompt_tokens = c % 2 ? 3.5 : 850;
		p.output_tokens = c % 2 ? 0.4 : 320;
		for (int u = 0; u < 2000; u++, users++) {
			wzs_rng a, b;
			wzs_rng_seed(&a, 77 + (uint64_t)c, (uint64_t)u);
			b = a;
			int64_t ctx_a = 100, ctx_b = 100;
			int32_t left_a, left_b, taken;
			wzs_pop_steady_start(&p, wzs_pop_session_scale(&p), &a, &ctx_a, &left_a);
			if (p.length_dist == WZS_DIST_FIXED || p.turns <= 1) {
				int32_t total = wzs_pop_session_turns(&p, &b);
				taken = (int32_t)(wzs_rng_uniform(&b) * total);
				left_b = total - taken;
			} else {
				taken = wzs_pop_session_turns(&p, &b) - 1;
				left_b = wzs_pop_session_turns(&p, &b);
			}
			for (int32_t i = 0; i < taken; i++) {
				int64_t prompt, output;
				wzs_pop_turn(&p, &b, &prompt, &output);
				ctx_b += prompt + output;
			}
			turns += taken;
			same &= ctx_a == ctx_b && left_a == left_b && !memcmp(&a, &b, sizeof a);
		}
	}
	ok(same && turns > 10000, "steady start: %d users' %d turns drawn as one turn at a time "
	   "draws them", users, turns);
}

/* The largest closed population one replica holds with every cache
 * resident equals the memory mode's users per replica. */
static void test_capacity(wzm_parallelism par)
{
	const long context = 64000; /* 1000 blocks exactly */
	wzm_memory_params mem;
	memory_params(&mem, par);
	wzs_params p;
	wzs_params_default(&p);
	p.idle_policy = WZS_IDLE_RESIDENT;
	p.length_dist = WZS_DIST_FIXED;
	p.prompt_tokens = 4;
	p.output_tokens = 4;
	p.think_s = 20;
	p.turns = 1e6; /* sessions outlast the run */
	p.steady_start = 0;
	p.duration_s = 600;
	p.warmup_s = 0;
	p.queue_timeout_s = 30;
	/* Sessions start 1,000 tokens short of the context and grow by 8 tokens
	 * a turn, so over the run they stay within the context's blocks. */
	wzs_replica_model m;
	wz_diag diag;
	if (wzs_replica_model_build(dsv3, h100, &mem, context, fixture_record("fp8-mix"), fixture_record("fp8-mix"), 1,
				    &p, &m, &diag)) {
		ok(0, "replica model: %s", diag.msg);
		return;
	}
	long users = m.mem.users_per_replica;
	wzs_run_config cfg = { 0 };
	cfg.params = &p;
	cfg.model = &m;
	cfg.replicas = 1;
	cfg.initial_context = context - 1000;
	wzs_result at, over;
	cfg.users = users;
	wz_err e1 = wzs_run(&cfg, &at, &diag);
	cfg.users = users + 1;
	wz_err e2 = wzs_run(&cfg, &over, &diag);
	ok(!e1 && !e2, "capacity runs (%s)", wzm_parallelism_name(par));
	ok(at.refused == 0 && at.completed > (unsigned long long)users,
	   "%s: %ld users (memory mode's users per replica) all served: %llu completed, %llu refused",
	   wzm_parallelism_name(par), users, at.completed, at.refused);
	ok(at.evictions == 0 && at.recomputes == 0, "%s: ...with no eviction",
	   wzm_parallelism_name(par));
	/* One more does not fit: the least recently used idle session is
	 * evicted (the resident policy drops it) rather than a request refused. */
	ok(over.evictions > 0 && over.recomputes > 0 && over.refused == 0,
	   "%s: %ld users: one too many, %llu evictions, %llu recomputes, %llu refused",
	   wzm_parallelism_name(par), users + 1, over.evictions, over.recomputes, over.refused);
	wzs_result_free(&at);
	wzs_result_free(&over);
}

/* Poisson arrivals to one replica that serves one request at a time, each
 * the same length: an M/D/1 queue. */
static void test_md1(void)
{
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_TP);
	wzs_params p;
	wzs_params_default(&p);
	p.max_batch = 1;
	p.warmup_s = 0;
	p.queue_timeout_s = 1e6 - 1;
	wzs_replica_model m;
	wz_diag diag;
	if (wzs_replica_model_build(dsv3, h100, &mem, 4096, fixture_record("fp8-mix"), fixture_record("fp8-mix"), 1, &p,
				    &m, &diag)) {
		ok(0, "replica model: %s", diag.msg);
		return;
	}
	const size_t n = 200000;
	wzt_traffic t = { 0 };
	t.requests = calloc(n, sizeof *t.requests);
	t.n = 1;
	t.requests[0] = (wzt_request){ 0, 0, 0.0, 500, 50, 0, 0, 0 };
	wzs_run_config cfg = { 0 };
	cfg.params = &p;
	cfg.model = &m;
	cfg.replicas = 1;
	cfg.traffic = &t;
	wzs_result one;
	if (wzs_run(&cfg, &one, &diag)) {
		ok(0, "single request: %s", diag.msg);
		free(t.requests);
		return;
	}
	double service = one.e2e.mean;
	wzs_result_free(&one);
	double rho = 0.7, lambda = rho / service;
	wzs_rng rng;
	wzs_rng_seed(&rng, 42, 0);
	double time = 0;
	for (size_t i = 0; i < n; i++) {
		time += wzs_rng_exp(&rng, 1 / lambda);
		t.requests[i] = (wzt_request){ (int64_t)i, 0, time, 500, 50, 0, 0, 0 };
	}
	t.n = n;
	wzs_result r;
	wz_err err = wzs_run(&cfg, &r, &diag);
	ok(!err, "M/D/1 run");
	if (!err) {
		double want = rho * service / (2 * (1 - rho));
		double got = r.queue.mean;
		ok(fabs(got - want) <= 0.03 * want,
		   "M/D/1 mean wait %.6f s vs rho D / 2(1 - rho) = %.6f s (D = %.6f s)", got, want,
		   service);
		double little = (double)r.arrived / r.window_s * r.mean_wait_system;
		ok(fabs(r.mean_in_system - little) <= 0.01 * r.mean_in_system,
		   "Little's law: L = %.6f, lambda W = %.6f", r.mean_in_system, little);
		ok(r.completed == n && r.refused == 0, "every request completed");
	}
	wzs_result_free(&r);
	free(t.requests);
}

/* Decode epochs: one event for a whole run of steps must take the time of
 * the steps simulated one by one. */
static void test_epochs(void)
{
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_ATTN_DP);
	wzs_params p;
	wzs_params_default(&p);
	p.warmup_s = 0;
	wzs_replica_model m;
	if (wzs_replica_model_build(dsv3, h100, &mem, 200000, fixture_record("fp8-mix"), fixture_record("fp8-mix"), 1,
				    &p, &m, NULL)) {
		ok(0, "replica model");
		return;
	}
	const int64_t prompt = 4000, output = 3000;
	/* Two requests on two ranks, the second joining later, so the epochs
	 * are cut and the busiest rank changes. */
	wzt_request rows[2] = { { 0, 0, 0.0, prompt, output, 0, 0, 0 }, { 1, 0, 5.0, 100000, 10, 0, 0, 0 } };
	wzs_result r;
	if (fixture_run1(&p, &m, rows, 1, &r, NULL)) {
		ok(0, "epoch run");
		return;
	}
	double want = prefill_alone(&m, (double)prompt, wzs_prefill_pairs(0, (double)prompt));
	for (int64_t i = 0; i < output - 1; i++)
		want += wzs_step_time(&m, 1, (double)(prompt + 1 + i));
	ok(fabs(r.e2e.mean - want) <= 1e-9 * want + 1e-9,
	   "one request decoding alone: %.9f s in epochs, %.9f s step by step", r.e2e.mean, want);
	ok(r.events < 20, "...in %llu events for %lld tokens", r.events, (long long)output);
	wzs_result_free(&r);
	if (fixture_run1(&p, &m, rows, 2, &r, NULL)) {
		ok(0, "epoch run with a join");
		return;
	}
	ok(r.completed == 2 && r.e2e.max > want, "a prefill joining mid-epoch delays the first request");
	wzs_result_free(&r);
}

/* A session's second turn after its cache stayed resident, was parked
 * (restored at bytes / host-link bandwidth) or was dropped (recomputed). */
static void test_idle_policies(void)
{
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_ATTN_DP);
	wzt_request rows[2] = { { 0, 0, 0.0, 6000, 50, 0, 0, 0 }, { 0, 1, 100.0, 2000, 20, 6050, 0, 0 } };
	wzt_traffic t = { .requests = rows, .n = 2 };
	const char *names[] = { "resident", "offload", "drop", "offload to SSD" };
	for (int c = 0; c < 4; c++) {
		int policy = c == 3 ? WZS_IDLE_OFFLOAD : c;
		wzs_params p;
		wzs_params_default(&p);
		p.warmup_s = 0;
		p.idle_policy = (wzs_idle_policy)policy;
		if (c == 3) {
			p.offload_cpu_gib = 0;
			p.ssd_gbps = 1; /* slower than the host link: it binds */
		}
		wzs_replica_model m;
		if (wzs_replica_model_build(dsv3, h100, &mem, 4096, fixture_record("fp8-mix"),
					    fixture_record("fp8-mix") / 2, 1, &p, &m, NULL)) {
			ok(0, "replica model");
			return;
		}
		wzs_run_config cfg = { 0 };
		cfg.params = &p;
		cfg.model = &m;
		cfg.replicas = 1;
		cfg.traffic = &t;
		wzs_result r;
		if (wzs_run(&cfg, &r, NULL)) {
			ok(0, "%s run", names[c]);
			continue;
		}
		double first = prefill_alone(&m, 6000, wzs_prefill_pairs(0, 6000));
		double second = prefill_alone(&m, 2000, wzs_prefill_pairs(6050, 2000));
		if (c == 3)
			second += 6050 * m.offload_token_bytes / m.ssd_bps;
		else if (policy == WZS_IDLE_OFFLOAD)
			second += 6050 * m.offload_token_bytes / m.host_link_bps;
		else if (policy == WZS_IDLE_DROP)
			second = prefill_alone(&m, 8050, wzs_prefill_pairs(0, 8050));
		double want = (first + second) / 2;
		ok(fabs(r.ttft.mean - want) <= 1e-9 * want,
		   "%s: mean TTFT %.9f s, expected %.9f s (%llu parks, %llu restores, %llu recomputes)",
		   names[c], r.ttft.mean, want, r.parks_cpu + r.parks_ssd, r.restores, r.recomputes);
		ok((policy == WZS_IDLE_OFFLOAD) == (r.restores == 1) &&
			   (c == 1) == (r.parks_cpu == 1) && (c == 3) == (r.parks_ssd == 1) &&
			   (policy == WZS_IDLE_DROP) == (r.recomputes == 1),
		   "%s: counts its parks, restores and recomputes", names[c]);
		double recomputed = policy == WZS_IDLE_DROP ? 6050 : 0;
		ok(r.prefill_tokens == 8000 + recomputed && r.prefill_tokens_recomputed == recomputed,
		   "%s: %.0f tokens prefilled, %.0f of them recomputing its dropped context", names[c],
		   r.prefill_tokens, r.prefill_tokens_recomputed);
		wzs_result_free(&r);
	}
}

/* A turn sent before its session's previous turn finished waits for it,
 * but that wait is not queueing: its clock (queueing delay, TTFT, timeout)
 * starts when it can run, and no event is ever scheduled in the past. */
static void test_deferred_turns(void)
{
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_ATTN_DP);
	wzs_params p;
	wzs_params_default(&p);
	p.warmup_s = 0;
	p.queue_timeout_s = 5;
	wzs_replica_model m;
	if (wzs_replica_model_build(dsv3, h100, &mem, 32000, fixture_record("fp8-mix"), fixture_record("fp8-mix"), 1,
				    &p, &m, NULL)) {
		ok(0, "replica model");
		return;
	}
	wzt_request rows[3] = { { 0, 0, 0.0, 1000, 5000, 0, 0, 0 },
				{ 0, 1, 0.1, 200, 40, 6000, 0, 0 },
				{ 0, 2, 0.2, 200, 40, 6240, 0, 0 } };
	wzs_result r;
	if (fixture_run1(&p, &m, rows, 3, &r, NULL)) {
		ok(0, "deferred-turn run");
		return;
	}
	ok(r.e2e.max > p.queue_timeout_s, "the first turn outlasts the queue timeout (%.3f s)",
	   r.e2e.max);
	ok(r.completed == 3 && r.refused == 0,
	   "turns waiting for their previous turn are not timed out (%llu completed, %llu refused)",
	   r.completed, r.refused);
	ok(r.queue.max < 1e-9, "...and their wait is not queueing (queue max %.6f s)", r.queue.max);
	ok(r.deferred == 2 && r.deferred_wait_mean > 0,
	   "...it is reported apart: %llu turns waited %.3f s on average", r.deferred,
	   r.deferred_wait_mean);
	double little = (double)r.arrived / r.window_s * r.e2e.mean;
	ok(fabs(r.mean_in_system - little) <= 1e-6 * little,
	   "Little's law: L = %.6f, lambda W = %.6f", r.mean_in_system, little);
	wzs_result_free(&r);
}

/* A replay's arrival rate is over its arrival span, whatever the fleet. */
static void test_arrival_rate(void)
{
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_ATTN_DP);
	wzs_params p;
	wzs_params_default(&p);
	p.warmup_s = 0;
	p.queue_timeout_s = 1e5;
	wzs_replica_model m;
	if (wzs_replica_model_build(dsv3, h100, &mem, 32000, fixture_record("fp8-mix"), fixture_record("fp8-mix"), 1,
				    &p, &m, NULL)) {
		ok(0, "replica model");
		return;
	}
	wzt_request rows[64];
	for (int i = 0; i < 64; i++)
		rows[i] = (wzt_request){ i, 0, 0.25 * i, 20000, 2000, 0, 0, 0 };
	wzt_traffic t = { .requests = rows, .n = 64 };
	wzs_run_config cfg = { 0 };
	cfg.params = &p;
	cfg.model = &m;
	cfg.traffic = &t;
	wzs_result a, b;
	cfg.replicas = 1;
	wz_err e1 = wzs_run(&cfg, &a, NULL);
	cfg.replicas = 16;
	wz_err e2 = wzs_run(&cfg, &b, NULL);
	double want = 64 / (0.25 * 63);
	ok(!e1 && !e2 && a.window_s > b.window_s + 1,
	   "1 and 16 replicas drain the trace in %.1f s and %.1f s", a.window_s, b.window_s);
	ok(fabs(a.arrival_rate - want) < 1e-9 && fabs(b.arrival_rate - want) < 1e-9,
	   "arrival rate %.6f and %.6f rps: the trace's %.6f over its arrival span", a.arrival_rate,
	   b.arrival_rate, want);
	wzs_result_free(&a);
	wzs_result_free(&b);
}

/* New sessions go to the replica with the most free memory, not the one
 * with the fewest sessions: a replica whose pool one long session fills
 * is passed over, so nobody is evicted while another replica is empty. */
static void test_routing(void)
{
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_TP);
	wzs_params p;
	wzs_params_default(&p);
	p.warmup_s = 0;
	p.queue_timeout_s = 1e5;
	p.idle_policy = WZS_IDLE_RESIDENT;
	wzs_replica_model m;
	if (wzs_replica_model_build(dsv3, h100, &mem, 4096, fixture_record("fp8-mix"), fixture_record("fp8-mix"), 1,
				    &p, &m, NULL)) {
		ok(0, "replica model");
		return;
	}
	int64_t pool = (int64_t)m.blocks_per_rank * m.block_tokens;
	wzt_request rows[4] = { { 0, 0, 0.0, pool * 9 / 10, 10, 0, 0, 0 },
				{ 1, 0, 1.0, 1000, 10, 0, 0, 0 },
				{ 2, 0, 1000.0, pool / 2, 10, 0, 0, 0 },
				{ 0, 1, 2000.0, 100, 10, pool * 9 / 10 + 10, 0, 0 } };
	wzt_traffic t = { .requests = rows, .n = 4 };
	wzs_run_config cfg = { 0 };
	cfg.params = &p;
	cfg.model = &m;
	cfg.replicas = 2;
	cfg.traffic = &t;
	wzs_result r;
	if (wzs_run(&cfg, &r, NULL)) {
		ok(0, "routing run");
		return;
	}
	ok(r.completed == 4 && r.evictions == 0 && r.recomputes == 0,
	   "a new session goes to the replica with free memory: %llu completed, %llu evictions, "
	   "%llu recomputes", r.completed, r.evictions, r.recomputes);
	wzs_result_free(&r);
}

/* --speedup brings sessions closer together, not a user's turns: at 30x
 * the trace's 60 s between turns stay 60 s, so no turn waits for its own
 * previous one; compressing think time too makes every turn wait. */
static void test_speedup(void)
{
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_ATTN_DP);
	wzs_params p;
	wzs_params_default(&p);
	p.warmup_s = 0;
	wzs_replica_model m;
	if (wzs_replica_model_build(dsv3, h100, &mem, 32000, fixture_record("fp8-mix"), fixture_record("fp8-mix"), 1,
				    &p, &m, NULL)) {
		ok(0, "replica model");
		return;
	}
	enum { SESS = 20, TURNS = 3 };
	wzs_result r[2];
	double first_turn1 = 0;
	for (int mode = 0; mode < 2; mode++) {
		wzt_traffic *t = wzt_traffic_new("speedup", "test");
		for (int turn = 0; turn < TURNS; turn++)
			for (int i = 0; i < SESS; i++) {
				wzt_request q = { i, turn, 10.0 * i + 60.0 * turn, 500, 300,
						  turn ? 800 * turn : 0, 0, 0 };
				wzt_traffic_push(t, &q, NULL);
			}
		wzt_traffic_finish(t, NULL, NULL);
		wz_err e = wzs_traffic_speedup(t, 30, mode ? WZS_SPEEDUP_ALL : WZS_SPEEDUP_SESSIONS, NULL);
		int sorted = 1;
		for (size_t i = 1; i < t->n; i++)
			sorted &= t->requests[i].arrival_s >= t->requests[i - 1].arrival_s;
		if (mode == 0) {
			for (size_t i = 0; i < t->n; i++)
				if (t->requests[i].session == 5 && t->requests[i].turn == 1)
					first_turn1 = t->requests[i].arrival_s;
			ok(!e && sorted && fabs(first_turn1 - (50.0 / 30 + 60)) < 1e-9,
			   "session 5 starts at 50 s / 30, its next turn 60 s later (%.4f s)", first_turn1);
		}
		wzs_run_config cfg = { 0 };
		cfg.params = &p;
		cfg.model = &m;
		cfg.replicas = 1;
		cfg.traffic = t;
		if (wzs_run(&cfg, &r[mode], NULL))
			memset(&r[mode], 0, sizeof r[mode]);
		wzt_traffic_free(t);
	}
	ok(r[0].completed == SESS * TURNS && r[0].deferred == 0,
	   "sessions 30x faster, think time kept: %llu of %d turns wait for their previous turn",
	   r[0].deferred, SESS * TURNS);
	ok(r[1].deferred > 0, "think time compressed too: %llu turns wait", r[1].deferred);
	wzs_result_free(&r[0]);
	wzs_result_free(&r[1]);
}

/* Under attention data parallelism a long prompt's attention runs on its
 * own rank, not spread over the replica's GPUs (with TP it is). */
static void test_prefill_attention_dp(void)
{
	const double prompt = 100000;
	double attn_one_gpu = 0, ttft[2] = { 0, 0 };
	for (int tp = 0; tp < 2; tp++) {
		wzm_memory_params mem;
		memory_params(&mem, tp ? WZM_PAR_TP : WZM_PAR_ATTN_DP);
		wzs_params p;
		wzs_params_default(&p);
		p.warmup_s = 0;
		p.prefill_chunk_tokens = 1000000;
		wzs_replica_model m;
		if (wzs_replica_model_build(dsv3, h100, &mem, 200000, fixture_record("fp8-mix"),
					    fixture_record("fp8-mix"), 1, &p, &m, NULL)) {
			ok(0, "replica model");
			return;
		}
		wzt_request rows[1] = { { 0, 0, 0.0, (int64_t)prompt, 2, 0, 0, 0 } };
		wzs_result r;
		if (fixture_run1(&p, &m, rows, 1, &r, NULL)) {
			ok(0, "long prefill run");
			return;
		}
		ttft[tp] = r.ttft.mean;
		if (!tp)
			attn_one_gpu = wzs_prefill_pairs(0, prompt) * m.prefill_flops_pair / m.prefill_attn_flops;
		wzs_result_free(&r);
	}
	ok(ttft[0] >= attn_one_gpu, "attention-dp: 100k-token prompt TTFT %.3f s >= its attention "
	   "on one GPU %.3f s", ttft[0], attn_one_gpu);
	/* Each rank prefills its own requests in the same pass: two long
	 * prompts on two ranks take little longer than one (the second joins
	 * from the second pass on), not twice as long. */
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_ATTN_DP);
	wzs_params p;
	wzs_params_default(&p);
	p.warmup_s = 0;
	wzs_replica_model m;
	if (!wzs_replica_model_build(dsv3, h100, &mem, 200000, fixture_record("fp8-mix"), fixture_record("fp8-mix"), 1,
				     &p, &m, NULL)) {
		wzt_request rows[2] = { { 0, 0, 0.0, 50000, 2, 0, 0, 0 }, { 1, 0, 0.0, 50000, 2, 0, 0, 0 } };
		wzt_traffic t = { .requests = rows, .n = 1 };
		wzs_run_config cfg = { 0 };
		cfg.params = &p;
		cfg.model = &m;
		cfg.replicas = 1;
		cfg.traffic = &t;
		wzs_result one, two;
		wz_err e1 = wzs_run(&cfg, &one, NULL);
		t.n = 2;
		wz_err e2 = wzs_run(&cfg, &two, NULL);
		ok(!e1 && !e2 && two.ttft.max < 1.5 * one.ttft.max,
		   "attention-dp: two 50k-token prompts on two ranks: TTFT %.3f s, one alone %.3f s",
		   two.ttft.max, one.ttft.max);
		wzs_result_free(&one);
		wzs_result_free(&two);
	}
	ok(ttft[1] < attn_one_gpu / 4, "tp: attention split over 16 GPUs' heads, TTFT %.3f s",
	   ttft[1]);
}

static void describe(const wzs_run_config *cfg, wz_buf *out)
{
	wzs_result r;
	if (wzs_run(cfg, &r, NULL)) {
		wz_buf_puts(out, "failed");
		return;
	}
	wzs_result_describe(&r, out);
	wzs_result_occupancy_csv(&r, out);
	wzs_result_free(&r);
}

static void test_determinism(void)
{
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_ATTN_DP);
	wzs_params p;
	wzs_params_default(&p);
	p.idle_policy = WZS_IDLE_OFFLOAD;
	p.duration_s = 900;
	p.warmup_s = 60;
	wzs_replica_model m;
	if (wzs_replica_model_build(dsv3, h100, &mem, 32000, fixture_record("fp8-mix"), fixture_record("fp8-mix") / 2,
				    1, &p, &m, NULL)) {
		ok(0, "replica model");
		return;
	}
	wzs_run_config cfg = { 0 };
	cfg.params = &p;
	cfg.model = &m;
	cfg.replicas = 2;
	cfg.users = 600;
	cfg.initial_context = 32000;
	wz_buf a = { 0 }, b = { 0 }, c = { 0 };
	describe(&cfg, &a);
	describe(&cfg, &b);
	p.seed = 2;
	describe(&cfg, &c);
	ok(a.len > 0 && a.len == b.len && !memcmp(a.data, b.data, a.len),
	   "the same seed gives byte-identical results");
	ok(strcmp(wz_buf_str(&a), wz_buf_str(&c)) != 0, "another seed gives other results");
	has_str(wz_buf_str(&a), "parks_cpu", "results count parks");
	wz_buf_free(&a);
	wz_buf_free(&b);
	wz_buf_free(&c);
}


/* wzs_size_below against wzs_size's answer s on the same runs: capped at
 * or above s's fleet it finds the same fleet; below it, none, in one run
 * (at the cap); its first run made ahead (wzs_probes_run, several at once)
 * and finished by wzs_size_below_after, the same answers, runs and
 * events; threads change nothing. */
static void test_size_below(const wzs_run_config *cfg, const wzs_search *s)
{
	long caps[3] = { s->replicas + 3, s->replicas, s->replicas - 1 };
	wzs_search a[3];
	wzs_probe top[3];
	wz_err err = WZ_OK;
	for (int i = 0; i < 3; i++) {
		err |= wzs_size_below(cfg, caps[i], 1, NULL, NULL, &a[i], NULL);
		wzs_probe_init(&top[i], cfg, caps[i]);
	}
	ok(!err && a[0].replicas == s->replicas && a[1].replicas == s->replicas && a[2].replicas == 0 &&
		   a[2].runs == 1 && a[2].below == caps[2],
	   "below %ld, %ld and %ld replicas: %ld, %ld and none (%ld run, failing at %ld)", caps[0], caps[1],
	   caps[2], a[0].replicas, a[1].replicas, a[2].runs, a[2].below);
	wzs_probes_run(top, 3);
	for (int i = 0; i < 3 && !err; i++) {
		wzs_search b, t;
		wz_err e1 = wzs_size_below_after(&top[i], 1, NULL, NULL, &b, NULL);
		wz_err e2 = wzs_size_below(cfg, caps[i], 2, NULL, NULL, &t, NULL);
		ok(!e1 && !e2 && b.replicas == a[i].replicas && b.runs == a[i].runs && b.events == a[i].events &&
			   b.below == a[i].below && t.replicas == a[i].replicas && t.runs == a[i].runs &&
			   t.events == a[i].events && b.result.events == a[i].result.events,
		   "below %ld: its first run made ahead, or on 2 threads, the same search (%ld runs, %llu events)",
		   caps[i], a[i].runs, (unsigned long long)a[i].events);
		wzs_result_free(&b.result);
		wzs_result_free(&t.result);
	}
	for (int i = 0; i < 3; i++) {
		wzs_probe_free(&top[i]);
		wzs_result_free(&a[i].result);
	}
}

/* The counts a search tried, in order, and whether each met the targets
 * (wzs_size's on_run). */
typedef struct {
	long replicas[64];
	int ok[64];
	int n;
} tried_counts;

static void note_tried(void *ud, long replicas, const wzs_result *r, int met)
{
	(void)r;
	tried_counts *t = ud;
	if (t->n < 64) {
		t->replicas[t->n] = replicas;
		t->ok[t->n++] = met;
	}
}

static void test_search(void)
{
	/* A fleet search on a small population finds a count whose run meets
	 * the targets and one fewer that does not. */
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_ATTN_DP);
	wzs_params p;
	wzs_params_default(&p);
	p.duration_s = 600;
	p.warmup_s = 60;
	p.ttft_p99_s = 30;
	p.tpot_p99_s = 0.2;
	wzs_replica_model m;
	if (wzs_replica_model_build(dsv3, h100, &mem, 32000, fixture_record("fp8-mix"), fixture_record("fp8-mix"), 1,
				    &p, &m, NULL)) {
		ok(0, "replica model");
		return;
	}
	wzs_run_config cfg = { 0 };
	cfg.params = &p;
	cfg.model = &m;
	cfg.users = 1500;
	cfg.initial_context = 32000;
	wzs_search s;
	wz_err err = wzs_size(&cfg, 1000, 1, NULL, NULL, &s, NULL);
	ok(!err && s.replicas > 0, "search finds a fleet (%ld replicas, %ld runs)", s.replicas, s.runs);
	/* Running counts ahead on threads changes nothing the search reports. */
	for (int threads = 2; threads <= 7 && !err; threads += 2 + (threads == 2)) {
		wzs_search t;
		wz_err terr = wzs_size(&cfg, 1000, threads, NULL, NULL, &t, NULL);
		ok(!terr && t.replicas == s.replicas && t.runs == s.runs && t.events == s.events &&
			   t.below == s.below && t.result.ttft.p99 == s.result.ttft.p99 &&
			   t.result.events == s.result.events,
		   "%d threads: the same fleet, runs, events and results as one", threads);
		wzs_result_free(&t.result);
	}
	if (!err && s.replicas > 1) {
		wzs_result r;
		cfg.replicas = s.replicas - 1;
		wzs_run(&cfg, &r, NULL);
		ok(!wzs_meets_targets(&p, &r), "one replica fewer misses the targets");
		wzs_result_free(&r);
		cfg.replicas = 0;
		test_size_below(&cfg, &s);
	}
	wzs_result_free(&s.result);

	/* Over three seeds: the fleet found meets the targets on each seed's
	 * run, one replica fewer misses them on at least one, every run is
	 * counted, and threads change nothing. */
	p.search_seeds = 3;
	cfg.replicas = 0;
	wzs_search s3;
	tried_counts tried = { 0 };
	err = wzs_size(&cfg, 1000, 1, note_tried, &tried, &s3, NULL);
	ok(!err && s3.replicas > 0 && tried.n > 0,
	   "three seeds: a fleet (%ld replicas, %ld runs)", s3.replicas, s3.runs);
	if (!err) {
		/* Each count tried, again seed by seed as a probe runs them
		 * (stopping at a refusal, and at the first seed that misses):
		 * the runs and events the search counted are these. */
		wzs_params one = p;
		one.search_seeds = 1;
		wzs_run_config c1 = cfg;
		c1.params = &one;
		c1.stop_on_refusal = 1;
		long runs = 0;
		unsigned long long events = 0;
		int verdicts = 1;
		for (int i = 0; i < tried.n; i++) {
			int all = 1;
			c1.replicas = tried.replicas[i];
			for (uint64_t k = 0; k < 3 && all; k++) {
				wzs_result r;
				one.seed = p.seed + k;
				wzs_run(&c1, &r, NULL);
				runs++;
				events += r.events;
				all = wzs_meets_targets(&one, &r);
				wzs_result_free(&r);
			}
			verdicts &= all == tried.ok[i];
		}
		ok(verdicts && s3.runs == runs && s3.events == events && runs > tried.n,
		   "three seeds: %d counts tried, each met the targets only where all its seeds' "
		   "runs did; %ld runs and %llu events counted, every seed's", tried.n, runs, events);
	}
	if (!err && s3.replicas > 1) {
		wzs_params one = p;
		one.search_seeds = 1;
		wzs_run_config c1 = cfg;
		c1.params = &one;
		int all = 1, any_fewer_fails = 0;
		double tightest = -1, tight_ttft = 0;
		unsigned long long tight_events = 0;
		for (uint64_t k = 0; k < 3; k++) {
			wzs_result r;
			one.seed = p.seed + k;
			c1.replicas = s3.replicas;
			wzs_run(&c1, &r, NULL);
			all &= wzs_meets_targets(&one, &r);
			double tt = r.ttft.p99 / p.ttft_p99_s, tu = r.tpot.p99 / p.tpot_p99_s;
			if ((tt > tu ? tt : tu) > tightest) {
				tightest = tt > tu ? tt : tu;
				tight_ttft = r.ttft.p99;
				tight_events = r.events;
			}
			wzs_result_free(&r);
			c1.replicas = s3.replicas - 1;
			wzs_run(&c1, &r, NULL);
			any_fewer_fails |= !wzs_meets_targets(&one, &r);
			wzs_result_free(&r);
		}
		ok(all && any_fewer_fails && s3.below == s3.replicas - 1,
		   "three seeds: each seed's run meets the targets at %ld, one fewer misses on one",
		   s3.replicas);
		ok(s3.result.ttft.p99 == tight_ttft && s3.result.events == tight_events,
		   "three seeds: the result kept is the seeds' tightest run (p99 TTFT %g s)", tight_ttft);
		wzs_search t3;
		wz_err terr = wzs_size(&cfg, 1000, 3, NULL, NULL, &t3, NULL);
		ok(!terr && t3.replicas == s3.replicas && t3.runs == s3.runs &&
			   t3.events == s3.events && t3.result.ttft.p99 == s3.result.ttft.p99,
		   "three seeds, 3 threads: the same fleet, runs, events and result as one");
		wzs_result_free(&t3.result);
	}
	wzs_result_free(&s3.result);
	p.search_seeds = 1;
}

/* What binds, from a failing run's figures. */
static void test_binding(void)
{
	wzs_params p;
	wzs_params_default(&p);
	wzs_result r;
	ok(wzs_what_binds(&p, NULL) == WZS_BIND_NONE, "nothing failed: nothing binds");
	memset(&r, 0, sizeof r);
	r.refused = r.refused_timeout = 3;
	ok(wzs_what_binds(&p, &r) == WZS_BIND_HBM_CAPACITY, "refusals after waiting for blocks: HBM");
	r.refused_batch_capped = 3;
	ok(wzs_what_binds(&p, &r) == WZS_BIND_BATCH_LIMIT, "refusals waiting for a batch slot");
	memset(&r, 0, sizeof r);
	r.completed = 100;
	r.ttft.p99 = 2 * p.ttft_p99_s;
	r.tpot.p99 = 0.5 * p.tpot_p99_s;
	r.slow_ttft_queue_s = 1;
	r.slow_ttft_restore_s = 5;
	r.slow_ttft_prefill_s = 3;
	ok(wzs_what_binds(&p, &r) == WZS_BIND_RESTORE_BANDWIDTH, "slow first tokens restoring");
	r.slow_ttft_prefill_s = 9;
	ok(wzs_what_binds(&p, &r) == WZS_BIND_PREFILL_COMPUTE, "slow first tokens prefilling");
	r.slow_ttft_queue_s = 20;
	ok(wzs_what_binds(&p, &r) == WZS_BIND_HBM_CAPACITY, "slow first tokens queueing for blocks");
	r.ttft.p99 = 0.5 * p.ttft_p99_s;
	r.tpot.p99 = 3 * p.tpot_p99_s;
	r.busy_decode_memory_s = 10;
	r.busy_decode_compute_s = 2;
	r.busy_prefill_s = 1;
	ok(wzs_what_binds(&p, &r) == WZS_BIND_DECODE_BANDWIDTH, "slow steps reading bytes");
	r.busy_decode_compute_s = 20;
	ok(wzs_what_binds(&p, &r) == WZS_BIND_DECODE_COMPUTE, "slow steps doing FLOPs");
	r.busy_prefill_s = 40;
	ok(wzs_what_binds(&p, &r) == WZS_BIND_PREFILL_COMPUTE, "steps held up by prefill passes");
	r.busy_prefill_network_s = 30;
	ok(wzs_what_binds(&p, &r) == WZS_BIND_ALL_TO_ALL,
	   "steps held up by prefill passes waiting on their all-to-all");
	r.busy_prefill_s = 1;
	r.busy_prefill_network_s = 0;
	r.busy_decode_network_s = 30;
	ok(wzs_what_binds(&p, &r) == WZS_BIND_ALL_TO_ALL, "slow steps waiting on their all-to-all");
	r.busy_decode_network_s = 0;
	ok(!strcmp(wzs_binding_name(WZS_BIND_HBM_CAPACITY), "HBM capacity"), "binding names");
	char bt[128];
	ok(!strcmp(wzs_binding_text(WZS_BIND_PREFILL_COMPUTE, 0.31, bt, sizeof bt),
		   "prefill compute, 31% of it recomputing dropped or evicted caches") &&
		   !strcmp(wzs_binding_text(WZS_BIND_PREFILL_COMPUTE, 0.004, bt, sizeof bt),
			   "prefill compute") &&
		   !strcmp(wzs_binding_text(WZS_BIND_HBM_CAPACITY, 0.5, bt, sizeof bt), "HBM capacity"),
	   "prefill's binding names the share of it that recomputed dropped or evicted caches");

	/* A run: a pool too small for the population refuses, and the search
	 * says memory binds. */
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_ATTN_DP);
	p.duration_s = 300;
	p.warmup_s = 30;
	p.ttft_p99_s = 600;
	p.tpot_p99_s = 10;
	wzs_replica_model m;
	if (wzs_replica_model_build(dsv3, h100, &mem, 100000, fixture_record("fp8-mix"), fixture_record("fp8-mix"), 1,
				    &p, &m, NULL)) {
		ok(0, "replica model");
		return;
	}
	wzs_run_config cfg = { 0 };
	cfg.params = &p;
	cfg.model = &m;
	cfg.users = 3 * m.mem.users_per_replica;
	cfg.initial_context = 100000;
	wzs_search srch;
	wz_err err = wzs_size(&cfg, 1000, 1, NULL, NULL, &srch, NULL);
	ok(!err && srch.below > 0 && srch.binding == WZS_BIND_HBM_CAPACITY,
	   "long contexts and loose latency targets: HBM capacity binds (%s, %ld replicas)",
	   wzs_binding_name(srch.binding), srch.replicas);
	wzs_result_free(&srch.result);
}

/* A session's blocks are an int32: a model whose ranks hold more blocks
 * is refused with a message, not run with wrapped counts. */
static void test_block_range(void)
{
	wzm_memory_params mem;
	memory_params(&mem, WZM_PAR_ATTN_DP);
	wzs_params p;
	wzs_params_default(&p);
	wzs_replica_model m;
	wz_diag diag;
	if (wzs_replica_model_build(dsv3, h100, &mem, 4096, fixture_record("fp8-mix"),
				    fixture_record("fp8-mix"), 1, &p, &m, &diag)) {
		ok(0, "replica model: %s", diag.msg);
		return;
	}
	m.blocks_per_rank = (long)INT32_MAX + 1;
	wzs_run_config cfg = { 0 };
	cfg.params = &p;
	cfg.model = &m;
	cfg.replicas = 1;
	cfg.users = 1;
	cfg.initial_context = 1000;
	wzs_result r;
	wz_diag_clear(&diag);
	wz_err err = wzs_run(&cfg, &r, &diag);
	ok(err == WZ_ERR_RANGE && strstr(diag.msg, "2147483648 cache blocks per rank"),
	   "2^31 blocks per rank are refused: %s", diag.msg);
	wzs_result_free(&r);
}

int main(void)
{
	ok(!fixture_open(), "catalog has DeepSeek-V3 and H100 SXM");
	test_session_turns();
	test_steady_start();
	test_capacity(WZM_PAR_ATTN_DP);
	test_capacity(WZM_PAR_TP);
	test_md1();
	test_epochs();
	test_idle_policies();
	test_deferred_turns();
	test_arrival_rate();
	test_routing();
	test_speedup();
	test_prefill_attention_dp();
	test_determinism();
	test_search();
	test_binding();
	test_block_range();
	fixture_close();
	return tap_done();
}
