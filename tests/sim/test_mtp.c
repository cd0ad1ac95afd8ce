/* Multi-token prediction: a decode step verifies 1 + k tokens per request
 * (FLOPs and experts touched grow, the cache is read once), drafts them
 * with one more layer each, and a request gains 1 + a + ... + a^k tokens
 * per step on average. */
#include "tests/tap.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tests/sim/sim_fixture.h"

static wzm_memory_params mem;

static int model(double acceptance, long drafts, wzs_params *p /* OUT */,
		 wzs_replica_model *m /* OUT */)
{
	double rec = fixture_record("fp8-mix");
	wzs_params_default(p);
	p->warmup_s = 0;
	p->mtp_acceptance = acceptance;
	p->mtp_draft_tokens = drafts;
	return wzs_replica_model_build(dsv3, h100, &mem, 200000, rec, rec, 1, p, m, NULL) ? -1 : 0;
}

/* One request decoding alone, against its steps summed one by one. */
static double decode_alone(double acceptance, long drafts, double *tpot /* OUT */)
{
	wzs_params p;
	wzs_replica_model m;
	if (model(acceptance, drafts, &p, &m))
		return -1;
	const int64_t prompt = 4000, output = 3000;
	wzt_request rows[1] = { { 0, 0, 0.0, prompt, output, 0, 0, 0 } };
	wzs_result r;
	if (fixture_run1(&p, &m, rows, 1, &r, NULL))
		return -1;
	double want = wzs_prefill_time(&m, (double)prompt, wzs_prefill_pairs(0, (double)prompt),
				       wzs_prefill_pairs(0, (double)prompt));
	int64_t steps = (int64_t)ceil((double)(output - 1) / m.tokens_per_step - 1e-9);
	for (int64_t i = 0; i < steps; i++)
		want += wzs_step_time(&m, 1, (double)prompt + 1 + (double)i * m.tokens_per_step);
	ok(r.completed == 1 && fabs(r.e2e.mean - want) <= 1e-6 * want,
	   "acceptance %g, %ld draft(s): %.1f tokens per step, %lld steps: %.6f s, step by step %.6f s",
	   acceptance, drafts, m.tokens_per_step, (long long)steps, r.e2e.mean, want);
	*tpot = r.tpot.mean;
	wzs_result_free(&r);
	return want;
}

int main(void)
{
	wz_diag diag;
	if (fixture_open())
		return tap_done();
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;

	wzs_params p;
	wzs_replica_model off, one, two;
	ok(!model(0, 1, &p, &off) && off.tokens_per_step == 1 && off.verify_tokens == 1,
	   "no MTP: one token per step");
	/* DeepSeek-V3 report, sec. 5.4.3: 85-90% acceptance of the second token */
	ok(!model(0.875, 1, &p, &one) && fabs(one.tokens_per_step - 1.875) < 1e-12 &&
		   one.verify_tokens == 2,
	   "one draft at 87.5%%: 1.875 tokens per step, 2 verified");
	ok(!model(0.5, 3, &p, &two) && fabs(two.tokens_per_step - 1.875) < 1e-12 &&
		   two.verify_tokens == 4,
	   "three drafts at 50%%: 1 + 1/2 + 1/4 + 1/8 tokens per step, 4 verified");

	/* A decode step reads the cache once but verifies every draft. */
	double b = 4096, ctx = 4096 * 2000.0;
	ok(wzs_step_compute_bound(&off, b, ctx) && wzs_step_compute_bound(&one, b, ctx),
	   "a large batch at long context is compute-bound");
	double t_off = wzs_step_time(&off, b, ctx) - off.overhead_s;
	double t_one = wzs_step_time(&one, b, ctx) - one.overhead_s;
	ok(one.draft_factor == 1 + 1 / 61.0 && off.draft_factor == 1 &&
		   fabs(t_one / t_off - 2 * (1 + 1 / 61.0)) < 1e-9,
	   "verifying one draft doubles a compute-bound step, and drafting it is one more of "
	   "DeepSeek-V3's 61 layers (%.4f x)",
	   t_one / t_off);
	/* Memory-bound, the step grows only by the experts the draft touches
	 * besides the first token's; the cache is read once. */
	double small = 2000;
	double extra = off.weight_bytes_gpu *
		       (wzs_weights_touched(&off, 2) - wzs_weights_touched(&off, 1)) / off.hbm_bps;
	double mem_off = wzs_step_time(&off, 1, small) - off.overhead_s;
	ok(!wzs_step_compute_bound(&one, 1, small) &&
		   fabs(wzs_step_time(&one, 1, small) - one.overhead_s -
			(mem_off + extra) * one.draft_factor) < 1e-12,
	   "a memory-bound step grows by the draft's extra experts and its drafting layer only "
	   "(%.6f s against %.6f s)",
	   wzs_step_time(&one, 1, small), wzs_step_time(&off, 1, small));
	double tpot_off, tpot_one;
	double e_off = decode_alone(0, 1, &tpot_off), e_one = decode_alone(0.875, 1, &tpot_one);
	ok(e_off > 0 && e_one > 0 && tpot_off / tpot_one > 1.5 && tpot_off / tpot_one < 1.875,
	   "alone, MTP at 87.5%% cuts time per output token %.3fx (less than 1.875x: the draft "
	   "touches more experts)",
	   tpot_off / tpot_one);
	double tpot_two;
	ok(decode_alone(0.5, 3, &tpot_two) > 0, "three drafts decode too");

	wzs_params_default(&p);
	p.mtp_acceptance = 1;
	ok(wzs_params_validate(&p, "test", &diag) == WZ_ERR_INPUT && strstr(diag.msg, "mtp_acceptance"),
	   "an acceptance of 1 is refused: %s", diag.msg);
	fixture_close();
	return tap_done();
}
