/* Prefill instances (sim/pool.c): one stage is the pool GPU's unpipelined
 * prefill, C chunks through S stages take (C + S - 1) stage times plus the
 * hops, an instance batches the prompts that queue behind its running
 * pass, the screen packs a pass as the instance does, the benchmark and
 * the pool's weights follow the layout, and the
 * scenario keys are read and their bad values refused naming the key. */
#include "tests/tap.h"
#include "tests/sim/sim_fixture.h"

#include <math.h>
#include <string.h>

#include "common/wz_kv.h"
#include "sim/benchmark.h"
#include "sim/sim.h"

/* DeepSeek-V3 on H100, a 16-GPU decode replica fed by a pool of `pool`
 * GPUs in instances of `width` (0: none) in `stages` stages. */
static int pool_model(long pool, long width, long stages, double gbps, wzs_params *p,
		      wzs_replica_model *m, wz_diag *diag)
{
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	wzs_params_default(p);
	p->warmup_s = 0;
	p->expert_parallel = 1;
	p->dual_batch_overlap = 1;
	p->disaggregated = 1;
	p->prefill_gpus = pool;
	p->prefill_instance_gpus = width;
	p->prefill_pp_stages = stages;
	p->kv_transfer_gbps = gbps;
	double rec = fixture_record("fp8-mix");
	return wzs_replica_model_build(dsv3, h100, &mem, 100000, rec, rec, 1, p, m, diag) ? -1 : 0;
}

static void test_pipeline(void)
{
	/* C passes of t seconds through S idle stages, h seconds a hop, each
	 * entering when the first stage frees: (C + S - 1) t + (S - 1) h */
	const int cs[] = { 1, 3, 8 }, ss[] = { 1, 2, 4, 7 };
	double t = 0.25, h = 0.01;
	int bad = 0;
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 4; j++) {
			double free[8] = { 0 }, end = 0;
			for (int c = 0; c < cs[i]; c++)
				end = wzs_pipeline_pass(free, ss[j], free[0], t, h);
			double want = (cs[i] + ss[j] - 1) * t + (ss[j] - 1) * h;
			bad += fabs(end - want) > 1e-12;
		}
	ok(!bad, "C chunks through S stages end at (C + S - 1) t + (S - 1) hops (12 cases)");
	/* a stage still busy holds a pass back */
	double free[2] = { 0, 5 };
	ok(wzs_pipeline_pass(free, 2, 0, 1, 0) == 6 && free[0] == 1,
	   "a pass waits for a busy later stage");
}

static void test_times(void)
{
	wzs_params p;
	wzs_replica_model legacy, one, pp;
	wz_diag d;
	if (pool_model(32, 0, 1, 50, &p, &legacy, &d) || pool_model(32, 32, 1, 50, &p, &one, &d) ||
	    pool_model(32, 32, 4, 50, &p, &pp, &d)) {
		ok(0, "models: %s", d.msg);
		return;
	}
	double n = 12000, pairs = wzs_prefill_pairs(0, n);
	double t_legacy = wzs_pool_prefill_time(&legacy, n, pairs);
	double t_one = wzs_pool_stage_time(&one, n, pairs);
	ok(fabs(t_one - t_legacy) <= 1e-12 * t_legacy,
	   "one stage of an instance as wide as the pool: the pool GPU's prefill (%.6f s, %.6f s)",
	   t_one, t_legacy);
	double first;
	double alone = wzs_pool_chunked_time(&one, 0, n, &first);
	ok(fabs(alone - t_legacy) <= 1e-12 * t_legacy && first == alone,
	   "a prompt within one pass's budget alone: the same");
	ok(pp.pool_stage_gpus == 8 && pp.pool_stages == 4 && pp.pool_instance_gpus == 32,
	   "32 GPUs in 4 stages: EP8 a stage");
	/* weights: a stage GPU holds a quarter of the replicated weights and
	 * an eighth of the routed experts; one stage of 32, a 32nd of them */
	double rep = one.mem.weights_replicated, routed = one.prefill_weight_bytes_gpu - rep;
	double want = (rep + routed * 32 / 8) / 4;
	ok(fabs(pp.prefill_weight_bytes_gpu - want) <= 1e-9 * want,
	   "a stage GPU's weights: %.2f GiB (%.2f GiB in one stage)",
	   pp.prefill_weight_bytes_gpu / WZM_GIB, one.prefill_weight_bytes_gpu / WZM_GIB);
	ok(pp.pool_hop_bps > 0 && pp.pool_hop_bytes_token == 4 * dsv3->hidden_size,
	   "a hop carries 4 x hidden bytes a token at %.0f GB/s", pp.pool_hop_bps / 1e9);

	/* A 64K prompt in 16K chunks through 4 stages: its chunks' times grow
	 * (later ones attend to more), and it ends at the sum of the chunk
	 * times plus 3 times the last one and 3 hops. */
	double big = 65536, k = (double)pp.pool_batch_tokens, sum = 0, last = 0, prev = 0;
	int grows = 1;
	for (double done = 0; done < big; done += k) {
		last = wzs_pool_stage_time(&pp, k, wzs_model_prefill_pairs(&pp, done, k));
		grows &= last > prev;
		prev = last;
		sum += last;
	}
	double end = wzs_pool_chunked_time(&pp, 0, big, &first);
	double formula = sum + 3 * (last + wzs_pool_hop_time(&pp, k));
	ok(k == 16384 && grows && fabs(end - formula) <= 1e-12 * formula && fabs(first - sum) < 1e-12,
	   "4 chunks through 4 stages: %.4f s = sum %.4f + 3 (last %.4f + hop %.6f)", end, sum, last,
	   wzs_pool_hop_time(&pp, k));
	double unpiped = wzs_pool_chunked_time(&one, 0, big, NULL);
	ok(end < unpiped, "pipelined, the long prompt's first token comes sooner (%.3f s, %.3f s)",
	   end, unpiped);

	/* the benchmark: one stage is the pool's figure; four stages show the
	 * same chunked pipeline */
	wzs_bench b = { 0 };
	b.mode = WZS_BENCH_PREFILL;
	b.per_gpu = 4;
	b.input_tokens = 4096;
	wzs_bench_result r0, r1, r4;
	wzs_benchmark_run(&legacy, &b, &r0, &d);
	wzs_benchmark_run(&one, &b, &r1, &d);
	ok(fabs(r1.tokens_s_gpu - r0.tokens_s_gpu) <= 1e-9 * r0.tokens_s_gpu && r1.batch == 128,
	   "benchmark, one stage: %.1f tokens/s a GPU, as the pool's %.1f", r1.tokens_s_gpu,
	   r0.tokens_s_gpu);
	b.per_gpu = 1;
	b.input_tokens = big;
	wzs_benchmark_run(&pp, &b, &r4, &d);
	ok(fabs(r4.step_s - end) <= 1e-12 * end && fabs(r4.tokens_s_gpu - big / (4 * sum)) < 1e-6,
	   "benchmark, 4 stages: the 64K prompt's %.3f s, %.1f tokens/s a GPU", r4.step_s,
	   r4.tokens_s_gpu);
}

/* One stage GPU (a 16-GPU instance in 16 stages) and four prompts at
 * once: the first starts a pass alone, the three queued behind it go
 * together in the next, when the first stage frees. */
static void test_batching(void)
{
	wzs_params p;
	wzs_replica_model m;
	wz_diag d;
	if (pool_model(16, 16, 16, 1e5, &p, &m, &d)) {
		ok(0, "model: %s", d.msg);
		return;
	}
	wzt_request rows[4] = { { 0, 0, 0.0, 2000, 1, 0, 0, 0 }, { 1, 0, 0.0, 2000, 1, 0, 0, 0 },
				{ 2, 0, 0.0, 2000, 1, 0, 0, 0 }, { 3, 0, 0.0, 2000, 1, 0, 0, 0 } };
	wzs_result r;
	if (fixture_run1(&p, &m, rows, 4, &r, &d)) {
		ok(0, "run: %s", d.msg);
		return;
	}
	double pairs = wzs_prefill_pairs(0, 2000);
	double t1 = wzs_pool_stage_time(&m, 2000, pairs), t3 = wzs_pool_stage_time(&m, 6000, 3 * pairs);
	double free[16] = { 0 };
	double d1 = wzs_pipeline_pass(free, 16, 0, t1, wzs_pool_hop_time(&m, 2000));
	double d2 = wzs_pipeline_pass(free, 16, t1, t3, wzs_pool_hop_time(&m, 6000));
	double mean = (d1 + 3 * d2) / 4;
	ok(r.completed == 4 && fabs(r.ttft.mean - mean) <= 1e-6 * mean &&
		   fabs(r.ttft.max - d2) <= 1e-6 * d2,
	   "TTFT mean %.4f s, max %.4f s: one pass alone, then three together (%.4f, %.4f)",
	   r.ttft.mean, r.ttft.max, mean, d2);
	ok(fabs(r.busy_pool_prefill_s - 16 * (t1 + t3)) <= 1e-9 * r.busy_pool_prefill_s,
	   "the pool's busy GPU seconds: two passes of every stage");
	wzs_result_free(&r);
}

/* The screen's packing (wzs_pool_pack_pass) against the instance's: a
 * 2,000-token prompt alone, then a 16K prompt and three of 500 tokens
 * queued behind it share one pass of 32 GPUs in 4 stages, the short ones
 * on ranks of their own and the pass as long as the 16K rank. */
static void test_pack(void)
{
	wzs_params p;
	wzs_replica_model m;
	wz_diag d;
	if (pool_model(32, 32, 4, 1e5, &p, &m, &d)) {
		ok(0, "model: %s", d.msg);
		return;
	}
	wzt_request rows[5] = { { 0, 0, 0.0, 2000, 1, 0, 0, 0 }, { 1, 0, 0.0, 16384, 1, 0, 0, 0 },
				{ 2, 0, 0.0, 500, 1, 0, 0, 0 }, { 3, 0, 0.0, 500, 1, 0, 0, 0 },
				{ 4, 0, 0.0, 500, 1, 0, 0, 0 } };
	double h1, h2;
	double t1 = wzs_pool_pack_pass(&m, 0, 0, 1, 2000, 0, &h1);
	double t2 = wzs_pool_pack_pass(&m, 16384, 0, 3, 500, 0, &h2);
	double alone = wzs_pool_stage_time(&m, 16384, wzs_prefill_pairs(0, 16384));
	double short1 = wzs_pool_stage_time(&m, 2000, wzs_prefill_pairs(0, 2000));
	ok(m.pool_stage_gpus == 8 && fabs(t1 - short1) <= 1e-12 * t1 &&
		   fabs(t2 - alone) <= 1e-12 * alone &&
		   fabs(h2 - wzs_pool_hop_time(&m, 16384)) <= 1e-12 * h2,
	   "packed: the 16K chunk's rank sets the pass (%.4f s), the 500-token prompts ride "
	   "beside it", t2);
	wzs_result r;
	if (fixture_run1(&p, &m, rows, 5, &r, &d)) {
		ok(0, "run: %s", d.msg);
		return;
	}
	double free[4] = { 0 };
	double d1 = wzs_pipeline_pass(free, 4, 0, t1, h1);
	double d2 = wzs_pipeline_pass(free, 4, t1, t2, h2);
	ok(r.completed == 5 && fabs(r.ttft.max - d2) <= 1e-3 * d2 &&
		   fabs(r.ttft.mean - (d1 + 4 * d2) / 5) <= 1e-3 * d2,
	   "the instance packs them so: TTFT max %.4f s against %.4f, mean %.4f against %.4f",
	   r.ttft.max, d2, r.ttft.mean, (d1 + 4 * d2) / 5);
	wzs_result_free(&r);
	/* a rank's budget: 40 prompts of 500 tokens on 8 ranks fill 2,500
	 * tokens each, well within 16,384 */
	double t40 = wzs_pool_pack_pass(&m, 0, 0, 40, 500, 0, NULL);
	double even = wzs_pool_stage_time(&m, 2500, 5 * wzs_prefill_pairs(0, 500));
	ok(fabs(t40 - even) <= 1e-12 * even, "40 short prompts spread evenly: %.4f s", t40);
}

static int parse(const char *text, wzs_params *p, wz_diag *d)
{
	wz_kv *kv = NULL;
	wzs_params_default(p);
	wz_err e = wz_kv_parse(text, "t.scenario", &kv, d);
	if (!e)
		e = wzs_params_from_kv(kv, p, d);
	wz_kv_free(kv);
	return e;
}

static void test_keys(void)
{
	wzs_params p;
	wz_diag d;
	ok(!parse("serving = disaggregated\nprefill_gpus_per_replica = 32\n"
		  "prefill_instance_gpus = 16\nprefill_pipeline_stages = 4\n"
		  "prefill_batch_tokens = 8192\n",
		  &p, &d) &&
		   p.prefill_instance_gpus == 16 && p.prefill_pp_stages == 4 &&
		   p.prefill_batch_tokens == 8192 && wzs_pool_ep_gpus(&p) == 4,
	   "the three keys are read: instances of 16 GPUs in 4 stages, EP4 a stage");
	ok(!parse("serving = disaggregated\nprefill_gpus_per_replica = 32\n"
		  "prefill_pipeline_stages = 2\n",
		  &p, &d) &&
		   wzs_pool_instance_width(&p, 32) == 32,
	   "stages alone: the whole pool is one instance");
	struct {
		const char *text, *want;
	} bad[] = {
		{ "serving = disaggregated\nprefill_gpus_per_replica = 32\nprefill_instance_gpus = 12\n",
		  "t.scenario:3: prefill_instance_gpus: 12 GPUs do not divide" },
		{ "serving = disaggregated\nprefill_gpus_per_replica = 32\nprefill_pipeline_stages = 3\n",
		  "t.scenario:3: prefill_pipeline_stages: 3 stages do not divide" },
		{ "prefill_pipeline_stages = 0\n", "t.scenario:1: prefill_pipeline_stages: 0 is not in" },
		{ "prefill_pipeline_stages = 65\n", "t.scenario:1: prefill_pipeline_stages: 65 is not in" },
		{ "prefill_batch_tokens = lots\n", "t.scenario:1: prefill_batch_tokens: 'lots'" },
		{ "prefill_instance_gpus = -8\n", "t.scenario:1: prefill_instance_gpus" },
		{ "serving = disaggregated\nprefill_gpus_per_replica = 32\nprefill_context_parallel = 4\n"
		  "prefill_pipeline_stages = 2\n",
		  "t.scenario:3: prefill_context_parallel" },
		{ "serving = disaggregated\nprefill_gpus_search = 16, 24\nprefill_instance_gpus = 16\n",
		  "prefill_instance_gpus: 16 GPUs do not divide the prefill pool of 24" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		wz_err e = parse(bad[i].text, &p, &d);
		ok(e == WZ_ERR_INPUT && strstr(d.msg, bad[i].want), "refused: %s",
		   e ? d.msg : "(taken)");
	}
	/* a layout set after the file (the deployment search, the command
	 * line) is checked again */
	parse("serving = disaggregated\nprefill_gpus_per_replica = 32\n", &p, &d);
	p.prefill_pp_stages = 5;
	ok(wzs_params_validate(&p, "config", &d) == WZ_ERR_INPUT &&
		   strstr(d.msg, "prefill_pipeline_stages"),
	   "validation refuses 5 stages of 32 GPUs: %s", d.msg);
}

int main(void)
{
	if (fixture_open())
		return tap_done();
	test_pipeline();
	test_times();
	test_batching();
	test_pack();
	test_keys();
	fixture_close();
	return tap_done();
}
