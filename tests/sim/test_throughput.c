/* Served and offered throughput: a request's output tokens counted where
 * they fall in the measured window, whenever it arrived, so that a replay
 * that queues past its warm-up reads the rate the fleet served (not only
 * the tokens of requests that arrived after the warm-up), and the rate
 * the window's arrivals asked for beside it. */
#include "tests/tap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/benchmark.h"
#include "sim/metrics.h"
#include "tests/sim/sim_fixture.h"

static void test_window(void)
{
	/* 11 tokens: the first at 10 s, the other 10 evenly up to 20 s */
	ok(wzs_tokens_in_window(11, 10, 20, 0, INFINITY) == 11, "all of them in a window around them");
	ok(fabs(wzs_tokens_in_window(11, 10, 20, 15, INFINITY) - 5) < 1e-12,
	   "from 15 s: half the 10 after the first");
	ok(fabs(wzs_tokens_in_window(11, 10, 20, 0, 15) - 6) < 1e-12,
	   "up to 15 s: the first and half the others");
	ok(wzs_tokens_in_window(11, 10, 20, 21, INFINITY) == 0 &&
		   wzs_tokens_in_window(11, 10, 20, 0, 9) == 0,
	   "none outside it");
	ok(wzs_tokens_in_window(1, 10, 10, 5, INFINITY) == 1 &&
		   wzs_tokens_in_window(1, 10, 10, 11, INFINITY) == 0,
	   "a one-token answer counts where its token is");
	double sum = 0;
	for (int k = 0; k < 20; k++)
		sum += wzs_tokens_in_window(11, 10, 20, k, k + 1);
	ok(fabs(sum - 11) < 1e-9, "windows that tile the time count every token once (%.6f)", sum);
}

static wz_err run_rows(wzt_request *rows, size_t n, double warmup, wzs_result *r)
{
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	wzs_params p;
	wzs_params_default(&p);
	p.warmup_s = warmup;
	double rec = fixture_record("fp8-mix");
	wzs_replica_model m;
	wz_err e = wzs_replica_model_build(dsv3, h100, &mem, 32000, rec, rec, 1, &p, &m, NULL);
	return e ? e : fixture_run1(&p, &m, rows, n, r, NULL);
}

/* One long answer that began before the warm-up ends and finishes after
 * it: its tokens inside the window count, though the request arrived
 * before it (counting only requests that arrived inside the window, as
 * the figure did, read almost nothing). */
static void test_across_warmup(void)
{
	wzt_request one[1] = { { 0, 0, 0.0, 4000, 1001, 0, 0, 0 } };
	wzs_result r0, rw;
	if (run_rows(one, 1, 0, &r0)) {
		ok(0, "a one-request replay runs");
		return;
	}
	double t1 = r0.ttft.mean, t2 = r0.e2e.mean;
	ok(fabs(r0.throughput_tok_s - 1001 / t2) < 1e-9 * r0.throughput_tok_s,
	   "from 0 s: all 1,001 tokens over the run (%.1f tokens/s)", r0.throughput_tok_s);
	/* a second request, one token, arrives after the warm-up so that the
	 * replay has one; it shares one step with the first */
	double w = (t1 + t2) / 2;
	wzt_request two[2] = { { 0, 0, 0.0, 4000, 1001, 0, 0, 0 }, { 1, 0, w + 1, 1, 1, 0, 0, 0 } };
	if (run_rows(two, 2, w, &rw)) {
		ok(0, "the replay with a warm-up runs");
		wzs_result_free(&r0);
		return;
	}
	double want = (1000 * (t2 - w) / (t2 - t1) + 1) / (t2 - w);
	ok(fabs(rw.throughput_tok_s - want) < 0.02 * want,
	   "warm-up %.1f s: served %.1f tokens/s, the long answer's second half and the short one's "
	   "token (by hand %.1f); the late arrival's token alone would read %.3f",
	   w, rw.throughput_tok_s, want, 1 / rw.window_s);
	/* one arrival has no span: its token over the window, as arrival_rate */
	ok(fabs(rw.offered_tok_s - 1 / rw.window_s) < 1e-12 && rw.arrived == 1,
	   "offered: the window's one arrival's token over the window (%.3f tokens/s)",
	   rw.offered_tok_s);
	wzs_result_free(&r0);
	wzs_result_free(&rw);
}

/* A replay that queues: 30,000-token prompts every 0.1 s, more than one
 * replica serves, so requests wait and time out; offered is what the
 * window's arrivals ask, above what is served. */
static void test_queueing(void)
{
	enum { N = 1200 };
	wzt_request *rows = calloc(N, sizeof *rows);
	if (!rows)
		return;
	for (int i = 0; i < N; i++) {
		rows[i].session = i;
		rows[i].arrival_s = 0.1 * i;
		rows[i].prompt_tokens = 30000;
		rows[i].output_tokens = 1000;
	}
	wzs_result all, late;
	if (run_rows(rows, N, 0, &all) || run_rows(rows, N, 60, &late)) {
		ok(0, "queueing replays run");
		free(rows);
		return;
	}
	free(rows);
	ok(all.refused_timeout > 0 && all.queue.mean > 1,
	   "the replay queues: %llu refused after waiting, %.1f s in the queue on average",
	   all.refused_timeout, all.queue.mean);
	ok(fabs(all.throughput_tok_s - (double)all.completed * 1000 / all.window_s) <
		   1e-9 * all.throughput_tok_s,
	   "warm-up 0: served %.1f tokens/s, every completed token over the run", all.throughput_tok_s);
	/* past 60 s the queue is full: the fleet serves at least its whole
	 * run's average (which holds the first minute's ramp) */
	ok(late.throughput_tok_s >= all.throughput_tok_s,
	   "warm-up 60 s: served %.1f tokens/s, at least the run's %.1f (the late arrivals' own "
	   "tokens alone: %.1f)",
	   late.throughput_tok_s, all.throughput_tok_s, (double)late.completed * 1000 / late.window_s);
	ok(fabs(all.offered_tok_s - 1200 * 1000 / 119.9) < 1e-6 * all.offered_tok_s &&
		   fabs(late.offered_tok_s - 600 * 1000 / 59.9) < 1e-6 * late.offered_tok_s &&
		   late.offered_tok_s > late.throughput_tok_s,
	   "offered: the window's arrivals' 1,000 tokens each over their span (%.1f and %.1f "
	   "tokens/s), above what was served",
	   all.offered_tok_s, late.offered_tok_s);
	wzs_result_free(&all);
	wzs_result_free(&late);
}

/* The fixed-batch benchmark: a decode step of the batch at its mean
 * context, a prefill pass of whole prompts, by hand from the replica
 * model; batches that do not fit and empty figures refused. */
static void test_benchmark(void)
{
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	wzs_params p;
	wzs_params_default(&p);
	double rec = fixture_record("fp8-mix");
	wzs_replica_model m;
	if (!ok(!wzs_replica_model_build(dsv3, h100, &mem, 32000, rec, rec, 1, &p, &m, NULL),
		"benchmark: a model"))
		return;
	wzs_bench b = { WZS_BENCH_DECODE, 32, 3000, 1001 };
	wzs_bench_result r;
	wz_diag d;
	wz_err e = wzs_benchmark_run(&m, &b, &r, &d);
	ok(!e && r.context_tokens == 3500 && r.batch == 32 * 16 &&
		   r.step_s == wzs_step_time(&m, 32 * 16, 32 * 3500.0) &&
		   fabs(r.tokens_s_gpu - 32 / r.step_s) < 1e-9 * r.tokens_s_gpu &&
		   r.tokens_s_user == 1 / r.step_s,
	   "decode-only: 32 requests a GPU at 3,500 cached tokens, a step of %.2f ms, %.0f tokens/s "
	   "a GPU, %.1f a user",
	   r.step_s * 1e3, r.tokens_s_gpu, r.tokens_s_user);
	b.per_gpu = 10000;
	ok(wzs_benchmark_run(&m, &b, &r, &d) == WZ_ERR_RANGE && strstr(d.msg, "cache blocks"),
	   "a batch the pool cannot hold is refused: %s", d.msg);
	b.per_gpu = 32;
	b.output_tokens = 0;
	ok(wzs_benchmark_run(&m, &b, &r, &d) == WZ_ERR_RANGE && strstr(d.msg, "output tokens"),
	   "no answer to decode is refused: %s", d.msg);
	wzs_bench pre = { WZS_BENCH_PREFILL, 2, 4096, 0 };
	double pairs = 2 * wzs_prefill_pairs(0, 4096);
	e = wzs_benchmark_run(&m, &pre, &r, &d);
	ok(!e && r.step_s == wzs_prefill_time(&m, 16 * 8192.0, 16 * pairs, pairs) &&
		   fabs(r.tokens_s_gpu - 8192 / r.step_s) < 1e-9 * r.tokens_s_gpu,
	   "prefill-only: 2 prompts of 4,096 a GPU in a pass of %.3f s, %.0f tokens/s a GPU",
	   r.step_s, r.tokens_s_gpu);
	p.mtp_acceptance = 0.85;
	wzs_replica_model mtp;
	b.output_tokens = 1001;
	wzs_bench_result rm;
	if (!wzs_replica_model_build(dsv3, h100, &mem, 32000, rec, rec, 1, &p, &mtp, NULL) &&
	    !wzs_benchmark_run(&m, &b, &r, &d) && !wzs_benchmark_run(&mtp, &b, &rm, &d))
		ok(fabs(rm.tokens_s_user - 1.85 / rm.step_s) < 1e-9 * rm.tokens_s_user,
		   "with MTP a request gains 1.85 tokens a step: %.1f tokens/s a user against %.1f",
		   rm.tokens_s_user, r.tokens_s_user);
	else
		ok(0, "MTP benchmark");
}

int main(void)
{
	if (fixture_open())
		return tap_done();
	test_window();
	test_across_warmup();
	test_queueing();
	test_benchmark();
	fixture_close();
	return tap_done();
}
