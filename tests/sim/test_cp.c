/* Context-parallel prefill: a long prompt's attention spread over a group
 * of ranks, each at the measured efficiency, with the ring's transfers in
 * the GPU format's bytes; the group's ranks are busy for its passes. */
#include "tests/tap.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tests/sim/sim_fixture.h"

static wzm_memory_params mem;

static wz_err model(const char *format, long cp, wzs_params *p /* OUT */,
		    wzs_replica_model *m /* OUT */, wz_diag *diag)
{
	double rec = fixture_record(format);
	wzs_params_default(p);
	p->warmup_s = 0;
	p->prefill_cp = cp;
	return wzs_replica_model_build(dsv3, h100, &mem, 200000, rec, rec, 1, p, m, diag);
}

/* Pairs of `take` new tokens after `cached`. */
static double pairs_of(double cached, double take)
{
	return take * cached + take * (take + 1) / 2;
}

/* Seconds of a context-parallel request's attention on each rank of its
 * group: its share of the pairs at the efficiency, or the ring if longer. */
static double cp_attn(const wzs_replica_model *m, double own_pairs, double cached, double take)
{
	double n = m->cp_ranks;
	double attn = own_pairs * m->prefill_flops_pair / m->prefill_attn_flops +
		      pairs_of(cached, take) / n * m->prefill_flops_pair /
			      (m->prefill_attn_flops * m->cp_efficiency);
	double ring = (cached + take * (n - 1) / n) * m->token_bytes / m->cp_link_bps;
	return ring > attn ? ring : attn;
}

/* A prefill pass over `tokens` new tokens whose busiest rank's attention
 * takes attn_s, worked out here from the model's figures: the weight
 * matmuls over every GPU (the routed experts' at their share, the rest at
 * the dense matmuls') plus that attention, or the weights' reads if
 * longer, plus the step overhead. */
static double pass_s(const wzs_replica_model *m, double tokens, double attn_s)
{
	double rs = m->routed_active_share;
	double compute = 2.0 * m->active_params * tokens *
				 ((1 - rs) / m->prefill_weight_flops + rs / m->prefill_moe_flops) /
				 m->gpus +
			 attn_s;
	double memory = m->weight_bytes_gpu * wzs_weights_touched(m, tokens) / m->hbm_bps;
	return m->overhead_s + (memory > compute ? memory : compute);
}

/* One request's pass alone: on its rank, or spread over its group. */
static double pass_by_hand(const wzs_replica_model *m, double cached, double take)
{
	double attn = m->cp_ranks > 1 ? cp_attn(m, 0, cached, take)
				      : pairs_of(cached, take) * m->prefill_flops_pair / m->prefill_attn_flops;
	return pass_s(m, take, attn);
}

/* The TTFT of one prompt alone on a replica: its chunks back to back. */
static double ttft_by_hand(const wzs_replica_model *m, long chunk, int64_t prompt)
{
	double t = 0;
	int64_t per_pass = chunk * m->cp_ranks;
	for (int64_t done = 0; done < prompt; done += per_pass) {
		int64_t take = prompt - done < per_pass ? prompt - done : per_pass;
		t += pass_by_hand(m, (double)done, (double)take);
	}
	return t;
}

static int run(wzs_params *p, wzs_replica_model *m, wzt_request *rows, size_t n,
	       wzs_result *r /* OUT */)
{
	wz_diag diag;
	if (fixture_run1(p, m, rows, n, r, &diag)) {
		ok(0, "run: %s", diag.msg);
		return -1;
	}
	return 0;
}

int main(void)
{
	if (fixture_open())
		return tap_done();
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;

	wzs_params p;
	wzs_replica_model off, cp4, cp16;
	wz_diag diag;
	wz_err e = model("fp8-mix", 1, &p, &off, NULL);
	ok(!e && off.cp_ranks == 1, "off by default: 1 rank");
	e = model("fp8-mix", 4, &p, &cp4, NULL);
	ok(!e && cp4.cp_ranks == 4 && cp4.cp_link_bps == h100->nvlink_gbps / 2 * 1e9 &&
		   cp4.cp_efficiency == 0.93,
	   "4 ranks in a node: the ring at half the catalog's NVLink figure (%.0f GB/s), 93%%",
	   cp4.cp_link_bps / 1e9);
	e = model("fp8-mix", 16, &p, &cp16, NULL);
	ok(!e && cp16.cp_link_bps == p.kv_transfer_gbps * 1e9,
	   "16 ranks over two nodes: the ring waits for the NIC (%.0f GB/s)",
	   cp16.cp_link_bps / 1e9);

	/* Refused: groups that do not divide the ranks, TP, a prefill pool. */
	e = model("fp8-mix", 3, &p, &cp4, &diag);
	ok(e == WZ_ERR_INPUT && strstr(diag.msg, "prefill_context_parallel: 3"),
	   "3 ranks of 16 refused: %s", diag.msg);
	e = model("fp8-mix", 32, &p, &cp4, &diag);
	ok(e == WZ_ERR_INPUT, "32 ranks of 16 refused: %s", diag.msg);
	mem.par = WZM_PAR_TP;
	e = model("fp8-mix", 4, &p, &cp4, &diag);
	ok(e == WZ_ERR_INPUT && strstr(diag.msg, "attention-dp"), "with tp refused: %s", diag.msg);
	mem.par = WZM_PAR_ATTN_DP;
	{
		double rec = fixture_record("fp8-mix");
		wzs_params_default(&p);
		p.prefill_cp = 4;
		p.disaggregated = 1;
		p.prefill_gpus = 16;
		p.prefill_gpus = 6;
		e = wzs_replica_model_build(dsv3, h100, &mem, 200000, rec, rec, 1, &p, &cp4, &diag);
		ok(e == WZ_ERR_INPUT && strstr(diag.msg, "prefill pool of 6"),
		   "4 ranks of a prefill pool of 6 refused: %s", diag.msg);
		ok(wzs_params_validate(&p, "test", &diag) == WZ_ERR_INPUT &&
			   strstr(diag.msg, "pool of 6"),
		   "and by the scenario's check: %s", diag.msg);
		p.prefill_gpus = 16;
		strcpy(p.prefill_gpus_search, "16, 24, 30");
		ok(wzs_params_validate(&p, "test", &diag) == WZ_ERR_INPUT &&
			   strstr(diag.msg, "pool of 30"),
		   "a searched pool size the groups do not divide refused: %s", diag.msg);
		p.prefill_gpus_search[0] = '\0';
		e = wzs_replica_model_build(dsv3, h100, &mem, 200000, rec, rec, 1, &p, &cp4, &diag);
		ok(!e && cp4.cp_ranks == 4, "4 ranks of a prefill pool of 16 build");
	}

	/* The ring carries the cached tokens over every link and each rank's
	 * share of the new ones; a smaller format moves faster. */
	wzs_replica_model wz4;
	model("fp8-mix", 4, &p, &cp4, NULL);
	model("wz-5.44", 4, &p, &wz4, NULL);
	double ring = wzs_cp_ring_time(&cp4, 20000, 8000);
	double want = (20000 + 8000 * 3 / 4.0) * cp4.token_bytes / 450e9;
	ok(fabs(ring - want) <= 1e-12 * want, "ring of 20k cached + 8k new over 4 ranks: %.3f ms",
	   ring * 1e3);
	ok(wzs_cp_ring_time(&wz4, 20000, 8000) < ring &&
		   fabs(wzs_cp_ring_time(&wz4, 20000, 8000) / ring - wz4.token_bytes / cp4.token_bytes) <
			   1e-12,
	   "wz-5.44's ring is shorter by its bytes per token (%.3f)",
	   wz4.token_bytes / cp4.token_bytes);
	ok(wzs_cp_ring_time(&off, 20000, 8000) == 0, "no ring without context parallelism");

	/* One 60,800-token prompt (the product page's first turn) alone. */
	const int64_t prompt = 60800;
	wzt_request one[1] = { { 0, 0, 0.0, prompt, 1, 0, 0, 0 } };
	wzs_result r_off, r_cp;
	model("fp8-mix", 1, &p, &off, NULL);
	if (run(&p, &off, one, 1, &r_off))
		return tap_done();
	double want_off = ttft_by_hand(&off, p.prefill_chunk_tokens, prompt);
	ok(fabs(r_off.ttft.mean - want_off) <= 1e-9 * want_off,
	   "off: 8 passes of 8,192 tokens on one rank, TTFT %.3f s (by hand %.3f s)",
	   r_off.ttft.mean, want_off);
	model("fp8-mix", 4, &p, &cp4, NULL);
	if (run(&p, &cp4, one, 1, &r_cp))
		return tap_done();
	double want_cp = ttft_by_hand(&cp4, p.prefill_chunk_tokens, prompt);
	ok(fabs(r_cp.ttft.mean - want_cp) <= 1e-9 * want_cp,
	   "4 ranks: 2 passes of up to 32,768 tokens, TTFT %.3f s (by hand %.3f s)", r_cp.ttft.mean,
	   want_cp);
	double factor = r_off.ttft.mean / r_cp.ttft.mean;
	/* Attention is most of the pass: the factor approaches 4 x 0.93. */
	ok(factor > 3.0 && factor < 4 * 0.93 + 0.05,
	   "4 ranks at 93%%: TTFT %.2f x shorter (attention alone: %.2f x)", factor, 4 * 0.93);
	wzs_result_free(&r_off);
	wzs_result_free(&r_cp);

	/* Over a slow link the ring, not the attention, sets the pass: 16
	 * ranks across two nodes with a 1 GB/s NIC. */
	{
		double rec = fixture_record("fp8-mix");
		wzs_params_default(&p);
		p.warmup_s = 0;
		p.prefill_cp = 16;
		p.kv_transfer_gbps = 1;
		wzs_replica_model slow;
		e = wzs_replica_model_build(dsv3, h100, &mem, 200000, rec, rec, 1, &p, &slow, NULL);
		double ring_s = wzs_cp_ring_time(&slow, 0, (double)prompt);
		double attn_s = wzs_prefill_pairs(0, (double)prompt) / 16 * slow.prefill_flops_pair /
				(slow.prefill_attn_flops * slow.cp_efficiency);
		if (e || run(&p, &slow, one, 1, &r_cp))
			return tap_done();
		double want_slow = ttft_by_hand(&slow, p.prefill_chunk_tokens, prompt);
		ok(ring_s > attn_s && fabs(r_cp.ttft.mean - want_slow) <= 1e-9 * want_slow,
		   "16 ranks, 1 GB/s NIC: the ring (%.3f s) outlasts the attention (%.3f s), TTFT "
		   "%.3f s (by hand %.3f s)",
		   ring_s, attn_s, r_cp.ttft.mean, want_slow);
		wzs_result_free(&r_cp);
		model("fp8-mix", 4, &p, &cp4, NULL);
	}

	/* Below prefill_cp_min_tokens a prompt stays on its rank. */
	wzt_request small[1] = { { 0, 0, 0.0, 6000, 1, 0, 0, 0 } };
	if (run(&p, &cp4, small, 1, &r_cp) || run(&p, &off, small, 1, &r_off))
		return tap_done();
	ok(r_cp.ttft.mean == r_off.ttft.mean, "a 6,000-token prompt is not spread: %.4f s",
	   r_cp.ttft.mean);
	wzs_result_free(&r_off);
	wzs_result_free(&r_cp);

	/* Occupancy: a short prompt on a rank of the long one's group waits
	 * while the long one takes that rank's budget.  The long prompt
	 * arrives first, gets rank 0 and starts its first pass alone; the
	 * short one gets rank 1 (the most free blocks). */
	wzt_request two[2] = { { 0, 0, 0.0, 70000, 1, 0, 0, 0 }, { 1, 0, 0.0, 1000, 1, 0, 0, 0 } };
	if (run(&p, &cp4, two, 2, &r_cp) || run(&p, &off, two, 2, &r_off))
		return tap_done();
	double short_cp = 2 * r_cp.ttft.mean - r_cp.ttft.max;
	double short_off = 2 * r_off.ttft.mean - r_off.ttft.max;
	/* off: the short prompt's 1,000 tokens ride the long one's second
	 * pass, on their own rank. */
	double want_short_off =
		pass_by_hand(&off, 0, 8192) +
		pass_s(&off, 9192, pairs_of(8192, 8192) * off.prefill_flops_pair / off.prefill_attn_flops);
	ok(fabs(short_off - want_short_off) <= 1e-9 * want_short_off,
	   "off: the short prompt's TTFT is two passes, %.3f s (by hand %.3f s)", short_off,
	   want_short_off);
	/* 4 ranks: the long one takes ranks 0-3 whole for two passes; the short
	 * one prefills in the third, on rank 1 beside its share of the long
	 * one's last 4,464 tokens. */
	double want_short_cp = pass_by_hand(&cp4, 0, 32768) + pass_by_hand(&cp4, 32768, 32768) +
			       pass_s(&cp4, 4464 + 1000,
				      cp_attn(&cp4, pairs_of(0, 1000), 65536, 4464));
	ok(fabs(short_cp - want_short_cp) <= 1e-9 * want_short_cp &&
		   fabs(r_cp.ttft.max - want_short_cp) <= 1e-9 * want_short_cp,
	   "4 ranks: the short prompt waits out the long one's two full passes and finishes "
	   "with its last: both %.3f s (by hand %.3f s)",
	   short_cp, want_short_cp);
	wzs_result_free(&r_off);
	wzs_result_free(&r_cp);

	fixture_close();
	return tap_done();
}
