/* Prefill/decode disaggregation: a request's TTFT is its prefill on the
 * pool plus its new tokens' cache moving in the GPU format's bytes (so a
 * smaller format's first token comes sooner), decode is never held up by
 * another request's prefill, and a pool too small for the weights is
 * refused. */
#include "tests/tap.h"
#include "tests/sim/sim_fixture.h"

#include <math.h>
#include <string.h>

#include "sim/binding.h"
#include "sim/sim.h"

static int model(const char *format, int disagg, double gbps, wzs_params *p,
		 wzs_replica_model *m, wz_diag *diag)
{
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	wzs_params_default(p);
	p->warmup_s = 0;
	p->disaggregated = disagg;
	p->prefill_gpus = disagg ? 16 : 0;
	p->kv_transfer_gbps = gbps;
	double rec = fixture_record(format);
	return wzs_replica_model_build(dsv3, h100, &mem, 100000, rec, rec, 1, p, m, diag) ? -1 : 0;
}

int main(void)
{
	wz_diag diag;
	if (fixture_open())
		return tap_done();
	/* One 20k-token prompt over a slow 1 GB/s link, for two formats. */
	const char *formats[2] = { "fp8-mix", "wz-5.44" };
	double ttft[2];
	for (int i = 0; i < 2; i++) {
		wzs_params p;
		wzs_replica_model m;
		wzs_result r;
		wzt_request rows[1] = { { 0, 0, 0.0, 20000, 50, 0, 0, 0 } };
		if (model(formats[i], 1, 1, &p, &m, NULL) || fixture_run1(&p, &m, rows, 1, &r, NULL)) {
			ok(0, "%s run", formats[i]);
			return tap_done();
		}
		double pre = wzs_pool_prefill_time(&m, 20000, wzs_prefill_pairs(0, 20000));
		double move = 20000 * m.token_bytes / 1e9;
		ttft[i] = r.ttft.mean;
		ok(r.completed == 1 && fabs(r.ttft.mean - pre - move) <= 1e-9 * r.ttft.mean,
		   "%s: TTFT %.6f s = prefill on the pool %.6f s + its cache moved %.6f s", formats[i],
		   r.ttft.mean, pre, move);
		ok(r.busy_prefill_s == 0, "%s: the decode GPUs never prefill", formats[i]);
		wzs_result_free(&r);
	}
	ok(ttft[1] < ttft[0] - 0.1, "the smaller format's cache arrives sooner (%.3f s against %.3f s)",
	   ttft[1], ttft[0]);

	/* A request decoding while another's 60k-token prompt is prefilled:
	 * aggregated, its steps wait for the prefill chunks; disaggregated,
	 * they do not. */
	wzt_request rows[2] = { { 0, 0, 0.0, 1000, 2000, 0, 0, 0 }, { 1, 0, 5.0, 60000, 10, 0, 0, 0 } };
	double tpot[2];
	for (int d = 0; d < 2; d++) {
		wzs_params p;
		wzs_replica_model m;
		wzs_result r;
		if (model("fp8-mix", d, 50, &p, &m, NULL) || fixture_run1(&p, &m, rows, 2, &r, NULL)) {
			ok(0, "run %d", d);
			return tap_done();
		}
		tpot[d] = r.tpot.max;
		ok(r.completed == 2, "%s: both complete", d ? "disaggregated" : "aggregated");
		/* Only the first request can be decoding during the second's
		 * prefill passes, so it waits through at most all of them, and
		 * (decoding 2,000 tokens from t = 0, the passes from t = 5) most */
		double share = wzs_decode_wait_prefill_share(&r);
		if (d)
			ok(r.decode_wait_prefill_s == 0 && share == 0 && r.decode_run_s > 0,
			   "disaggregated: no decode time behind prefill passes (share %.3f)", share);
		else
			ok(r.decode_wait_prefill_s <= r.busy_prefill_s * (1 + 1e-12) &&
				   r.decode_wait_prefill_s >= 0.5 * r.busy_prefill_s && share > 0 &&
				   share < 1,
			   "aggregated: the decoding request waits through the prefill passes "
			   "(%.3f of %.3f s; share %.3f)",
			   r.decode_wait_prefill_s, r.busy_prefill_s, share);
		wzs_result_free(&r);
	}
	ok(tpot[0] > 1.5 * tpot[1],
	   "decode waits for another's prefill only when aggregated (max TPOT %.4f s against %.4f s)",
	   tpot[0], tpot[1]);

	/* The binding resource of a slow link: the network. */
	{
		wzs_params p;
		wzs_replica_model m;
		wzs_result r;
		wzt_request one[1] = { { 0, 0, 0.0, 20000, 50, 0, 0, 0 } };
		if (model("fp8-mix", 1, 0.05, &p, &m, NULL) || fixture_run1(&p, &m, one, 1, &r, NULL)) {
			ok(0, "slow link run");
			return tap_done();
		}
		ok(wzs_what_binds(&p, &r) == WZS_BIND_NETWORK, "a slow link binds: %s",
		   wzs_binding_name(wzs_what_binds(&p, &r)));
		wzs_result_free(&r);
	}

	/* Context-parallel prefill on the pool: a 60k-token prompt over a
	 * group of 8 of the 16 pool GPUs, each sending its eighth of the
	 * cache; a short prompt stays on one GPU; two long prompts at once
	 * take the two groups side by side and a third waits for the first
	 * group to free. */
	{
		wzs_params p;
		wzs_replica_model m1, m8;
		wzs_result r1, r8, r3;
		wzt_request one[1] = { { 0, 0, 0.0, 60000, 5, 0, 0, 0 } };
		int e = model("fp8-mix", 1, 50, &p, &m1, NULL) || fixture_run1(&p, &m1, one, 1, &r1, NULL);
		p.prefill_cp = 8;
		if (!e) {
			wzm_memory_params mem;
			wzm_memory_params_default(&mem);
			mem.gpus_per_replica = 16;
			mem.par = WZM_PAR_ATTN_DP;
			double rec = fixture_record("fp8-mix");
			e = wzs_replica_model_build(dsv3, h100, &mem, 100000, rec, rec, 1, &p, &m8, &diag) ||
			    fixture_run1(&p, &m8, one, 1, &r8, NULL);
		}
		if (e) {
			ok(0, "context-parallel pool runs");
			return tap_done();
		}
		double pairs = wzs_prefill_pairs(0, 60000);
		double want = wzs_pool_cp_prefill_time(&m8, 0, 60000, pairs) +
			      60000 / 8.0 * m8.token_bytes / m8.kv_link_bps;
		ok(fabs(r8.ttft.mean - want) <= 1e-9 * want,
		   "60k tokens over a group of 8: TTFT %.4f s = its prefill + an eighth of the cache "
		   "moved",
		   r8.ttft.mean);
		double attn1 = pairs * m8.prefill_flops_pair / m8.prefill_attn_flops;
		double part = wzs_pool_cp_prefill_time(&m8, 0, 60000, pairs) -
			      wzs_pool_prefill_time(&m8, 60000 / 8.0, 0);
		ok(fabs(part - attn1 / (8 * m8.cp_efficiency)) <= 1e-9 * attn1,
		   "each GPU of the group: an eighth of the tokens and of the pairs at %.2f "
		   "(attention %.3f s of one GPU's %.3f s)",
		   m8.cp_efficiency, part, attn1);
		ok(r8.ttft.mean < r1.ttft.mean / 4,
		   "and its first token comes sooner than on one GPU (%.3f s against %.3f s)",
		   r8.ttft.mean, r1.ttft.mean);
		ok(fabs(r8.busy_pool_prefill_s - 8 * wzs_pool_cp_prefill_time(&m8, 0, 60000, pairs)) <=
			   1e-9 * r8.busy_pool_prefill_s,
		   "the pool counts 8 GPUs busy for it (%.3f GPU-s)", r8.busy_pool_prefill_s);
		wzs_result_free(&r1);
		wzs_result_free(&r8);

		wzt_request small[1] = { { 0, 0, 0.0, 4000, 5, 0, 0, 0 } };
		if (fixture_run1(&p, &m8, small, 1, &r3, NULL)) {
			ok(0, "short prompt run");
			return tap_done();
		}
		double pre = wzs_pool_prefill_time(&m8, 4000, wzs_prefill_pairs(0, 4000));
		double mv = 4000 * m8.token_bytes / m8.kv_link_bps;
		ok(fabs(r3.ttft.mean - pre - mv) <= 1e-9 * r3.ttft.mean,
		   "a prompt under prefill_cp_min_tokens stays on one GPU (TTFT %.4f s)", r3.ttft.mean);
		wzs_result_free(&r3);

		wzt_request three[3] = { { 0, 0, 0.0, 60000, 5, 0, 0, 0 },
					 { 1, 0, 0.0, 60000, 5, 0, 0, 0 },
					 { 2, 0, 0.0, 60000, 5, 0, 0, 0 } };
		/* a target that only the third prompt misses: past the first
		 * two's TTFT (want), before its own (a group's prefill more) */
		p.ttft_p99_s = want + wzs_pool_cp_prefill_time(&m8, 0, 60000, pairs) / 2;
		if (fixture_run1(&p, &m8, three, 3, &r3, NULL)) {
			ok(0, "three long prompts run");
			return tap_done();
		}
		double t = wzs_pool_cp_prefill_time(&m8, 0, 60000, pairs);
		ok(r3.completed == 3 && fabs(r3.ttft.max - (t + want)) <= 1e-9 * want &&
			   fabs(r3.ttft.mean - (2 * want + t + want) / 3) <= 1e-9 * want,
		   "two groups side by side, the third prompt waits for one (TTFT %.3f s, %.3f s "
		   "at most)",
		   r3.ttft.mean, r3.ttft.max);
		/* only the third is past the target: it waited t for its
		 * group, then prefilled for t */
		ok(fabs(r3.slow_ttft_prefill_wait_s - t) <= 1e-9 * t &&
			   fabs(r3.slow_ttft_prefill_s - 2 * t) <= 1e-9 * t &&
			   fabs(r3.slow_ttft_excess_s - (r3.ttft.max - p.ttft_p99_s)) <= 1e-9 * t,
		   "the slow first token's time: %.3f s waiting for pool GPUs, %.3f s prefilling, "
		   "%.3f s past the target",
		   r3.slow_ttft_prefill_wait_s, r3.slow_ttft_prefill_s - r3.slow_ttft_prefill_wait_s,
		   r3.slow_ttft_excess_s);
		ok(r3.prefill_tokens == 180000 && r3.prefill_tokens_recomputed == 0,
		   "three prompts prefilled, none recomputed");
		wzs_result_free(&r3);
	}

	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	wzs_params p;
	wzs_params_default(&p);
	p.disaggregated = 1;
	p.prefill_gpus = 4;
	wzs_replica_model m;
	double rec = fixture_record("fp8-mix");
	ok(wzs_replica_model_build(dsv3, h100, &mem, 100000, rec, rec, 1, &p, &m, &diag) ==
			   WZ_ERR_RANGE && strstr(diag.msg, "prefill pool"),
	   "a prefill pool that cannot hold the weights is refused: %s", diag.msg);
	p.prefill_gpus = 0;
	ok(wzs_params_validate(&p, "test", &diag) == WZ_ERR_INPUT,
	   "disaggregated without a pool is refused: %s", diag.msg);
	fixture_close();
	return tap_done();
}
