/* The rates a replica runs at under expert parallelism: prefill per
 * operation (the dense matmuls, the routed experts at their measured share
 * for the split and routing, attention), the SMs DeepEP's normal kernels
 * hold beside a prefill's computation, the all-to-all's bandwidth by
 * topology, and the matmuls' peak by weight and activation type. */
#include "tests/tap.h"

#include <math.h>
#include <string.h>

#include "common/wz_kv.h"
#include "sim/binding.h"
#include "sim/weights.h"
#include "tests/sim/sim_fixture.h"
#include "tests/sim/moe_fixture.h"

/* Prefill per operation: the dense weight matmuls at
 * prefill_compute_efficiency, the routed experts at their measured share
 * for the expert split (or prefill_moe_efficiency), attention at
 * prefill_attention_efficiency; each moves its own part of a pass (the
 * replica's, a pool's, a rank's attention) and decode steps not at all. */
static int prefill_models(const wzs_params *p, const wzs_params *h, wzs_replica_model *a,
			  wzs_replica_model *b)
{
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	double rec = fixture_record("fp8-mix");
	return !wzs_replica_model_build(dsv3, h100, &mem, 32000, rec, rec, 1, p, a, NULL) &&
	       !wzs_replica_model_build(dsv3, h100, &mem, 32000, rec, rec, 1, h, b, NULL);
}

static void test_prefill_efficiency(void)
{
	wzs_params p, h;
	wzs_params_default(&p);
	p.disaggregated = 1;
	p.prefill_gpus = 16;
	h = p;
	/* every share halved */
	h.prefill_compute_efficiency = p.prefill_compute_efficiency / 2;
	h.prefill_moe_efficiency = wzs_prefill_moe_share(&p, 16) / 2;
	h.prefill_attention_efficiency = p.prefill_attention_efficiency / 2;
	wzs_replica_model a, b;
	if (!ok(prefill_models(&p, &h, &a, &b), "prefill efficiency: models"))
		return;
	double fp8 = 1978.9e12;
	ok(wzs_prefill_efficiency(&p) == 0.47 && a.prefill_weight_flops == 0.47 * fp8 &&
		   a.prefill_moe_flops == fp8 * (944.0 / 1978.9) &&
		   a.prefill_attn_flops == 0.76 * 989.4e12,
	   "defaults: dense matmuls 0.47 of FP8, EP16's routed experts 944 TFLOP/s, attention "
	   "0.76 of BF16");
	double routed = 58.0 * 8 * 3 * 7168 * 2048 / 37e9;
	ok(fabs(a.routed_active_share - routed) < 1e-12,
	   "without expert parallelism the routed experts are %.3f of the active parameters too",
	   a.routed_active_share);
	ok(wzs_prefill_moe_share(&p, 8) == 1040.0 / 1978.9 &&
		   wzs_prefill_moe_share(&p, 24) == 809.0 / 1978.9 &&
		   wzs_prefill_moe_share(&p, 2) == 1083.0 / 1978.9 &&
		   wzs_prefill_moe_share(&p, 512) == 251.0 / 1978.9,
	   "the routed experts' share by split: a size between two rows takes the larger's, the "
	   "ends the nearest row's");
	double batch = 16 * 64, rank_tokens = 64 * 20000.0;
	ok(wzs_step_time(&a, batch, rank_tokens) == wzs_step_time(&b, batch, rank_tokens),
	   "decode steps are unchanged by them");
	/* a compute-bound pass: half the efficiency, twice the time past the
	 * step overhead */
	double pass = 16 * 8192.0, pairs = 16 * wzs_prefill_pairs(0, 8192);
	double ta = wzs_prefill_time(&a, pass, pairs, pairs / 16) - a.overhead_s;
	double tb = wzs_prefill_time(&b, pass, pairs, pairs / 16) - b.overhead_s;
	ok(fabs(tb - 2 * ta) < 1e-12 * tb, "a replica's prefill pass at half: %.4f s against %.4f s",
	   tb, ta);
	double pa = wzs_pool_prefill_time(&a, 8192, wzs_prefill_pairs(0, 8192)) - a.overhead_s;
	double pb = wzs_pool_prefill_time(&b, 8192, wzs_prefill_pairs(0, 8192)) - b.overhead_s;
	ok(fabs(pb - 2 * pa) < 1e-12 * pb, "a pool GPU's prefill at half: %.4f s against %.4f s", pb,
	   pa);
	double ra = wzs_prefill_rank_attn_s(&a, 1e8, 0, 0), rb = wzs_prefill_rank_attn_s(&b, 1e8, 0, 0);
	ok(fabs(rb - 2 * ra) < 1e-12 * rb, "a rank's own prefill attention at half: twice as long");
	/* one share at a time moves its own part only */
	double dense_s = 2.0 * 37e9 * (1 - routed) * pass / 16, routed_s = 2.0 * 37e9 * routed * pass / 16;
	double attn_s = pairs / 16 * a.prefill_flops_pair;
	const struct {
		const char *key;
		double *field;
		double part;
	} one[] = { { "prefill_compute_efficiency", &h.prefill_compute_efficiency,
		      dense_s / a.prefill_weight_flops },
		    { "prefill_moe_efficiency", &h.prefill_moe_efficiency,
		      routed_s / a.prefill_moe_flops },
		    { "prefill_attention_efficiency", &h.prefill_attention_efficiency,
		      attn_s / a.prefill_attn_flops } };
	for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) {
		h = p;
		h.prefill_moe_efficiency = wzs_prefill_moe_share(&p, 16);
		*one[i].field /= 2;
		if (!prefill_models(&p, &h, &a, &b))
			continue;
		double t1 = wzs_prefill_time(&b, pass, pairs, pairs / 16) - b.overhead_s;
		ok(fabs((t1 - ta) - one[i].part) < 1e-9 * t1,
		   "%s halved adds its part of the pass, %.4f s", one[i].key, one[i].part);
	}
	h = p;
	h.prefill_compute_efficiency = 1.5;
	wz_diag d;
	ok(wzs_params_validate(&h, "test", &d) == WZ_ERR_INPUT &&
		   strstr(d.msg, "prefill_compute_efficiency"),
	   "an efficiency above 1 is refused: %s", d.msg);
	ok(wzs_params_validate(&p, "test", &d) == WZ_OK, "the defaults pass validation");
}

/* With dual-batch overlap DeepEP's normal kernels hold ep_comm_sm_share
 * of the SMs, so a prefill's computation beside its all-to-all runs on
 * the rest; without overlap, or with nothing to send, on all of them. */
static void test_comm_sms(void)
{
	wzs_params p;
	wzs_replica_model plain, dbo, none;
	if (!ok(!model(1, 16, 0, 1, 1e5, &p, &plain, NULL) && !model(1, 16, 1, 1, 1e5, &p, &dbo, NULL),
		"comm SMs: models"))
		return;
	double pass = 16 * 8192.0, pairs = 16 * wzs_prefill_pairs(0, 8192);
	double comm = wzs_moe_comm_time(&dbo.moe, 8192, dbo.moe.prefill_dests, 1e14, 1e14);
	double t_plain = wzs_prefill_time(&plain, pass, pairs, pairs / 16) - plain.overhead_s - comm;
	double t_dbo = wzs_prefill_time(&dbo, pass, pairs, pairs / 16) - dbo.overhead_s;
	ok(fabs(p.ep_comm_sm_share - 20.0 / 132) < 1e-15 &&
		   fabs(t_dbo - t_plain / (1 - 20.0 / 132)) < 1e-9 * t_dbo,
	   "overlapped, a pass's computation runs on 112 of 132 SMs: %.4f s against %.4f s", t_dbo,
	   t_plain);
	model(1, 16, 1, 1, 1e5, &p, &none, NULL);
	p.ep_comm_sm_share = 0;
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	double rec = fixture_record("fp8-mix");
	wzs_replica_model_build(dsv3, h100, &mem, 32000, rec, rec, 1, &p, &none, NULL);
	ok(fabs(wzs_prefill_time(&none, pass, pairs, pairs / 16) - none.overhead_s - t_plain) <
		   1e-9 * t_plain,
	   "with ep_comm_sm_share 0 it runs on all of them");
	double batch = 16 * 64, rank_tokens = 64 * 20000.0;
	ok(wzs_step_time(&none, batch, rank_tokens) == wzs_step_time(&dbo, batch, rank_tokens),
	   "decode (DeepEP's low-latency kernels hold no SMs) is unchanged");
}

/* The all-to-all by topology: inside an NVLink domain at DeepEP's
 * intranode figure scaled by the GPU's NVLink, across domains at its
 * internode rows scaled by the GPU's NIC; DeepEP's own H800 rows where
 * the GPU is the H800's. */
static void test_topology(void)
{
	const struct {
		const char *gpu;
		int ep;
		double decode_d, decode_c, prefill_d, prefill_c;
		const char *why;
	} cases[] = {
		{ "H800", 8, 98, 127, 153, 158, "H800 EP8: DeepEP's rows as measured" },
		{ "H100 SXM", 8, 98, 127, 153 * 900.0 / 400, 158 * 900.0 / 400,
		  "H100 EP8: normal kernels over its 900 GB/s NVLink, low-latency over its 50 GB/s NIC" },
		{ "H100 SXM", 32, 48, 53, 58, 57, "H100 EP32: across boards, the CX7 rows" },
		{ "GB200", 72, 153 * 1800.0 / 400, 158 * 1800.0 / 400, 153 * 1800.0 / 400,
		  158 * 1800.0 / 400, "GB200 EP72: all inside the NVL72 domain, over NVLink" },
		{ "GB200", 144, 39, 40, 51, 50, "GB200 EP144: across two domains, its 50 GB/s NIC" },
		{ "GB300", 144, 78, 80, 102, 100, "GB300 EP144: across domains, its 100 GB/s NIC" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const wzm_gpu *g = wzm_find_gpu(fixture_cat, cases[i].gpu, NULL);
		wzs_params p;
		wzs_params_default(&p);
		p.expert_parallel = 1;
		wzs_moe e;
		if (!g || wzs_moe_build(dsv3, g, &p, cases[i].ep, 0, 0, &e, NULL)) {
			ok(0, "%s: a model", cases[i].why);
			continue;
		}
		ok(fabs(e.decode_dispatch_bps - cases[i].decode_d * 1e9) < 1e3 &&
			   fabs(e.decode_combine_bps - cases[i].decode_c * 1e9) < 1e3 &&
			   fabs(e.prefill_dispatch_bps - cases[i].prefill_d * 1e9) < 1e3 &&
			   fabs(e.prefill_combine_bps - cases[i].prefill_c * 1e9) < 1e3,
		   "%s: %g / %g GB/s decode, %g / %g prefill", cases[i].why,
		   e.decode_dispatch_bps / 1e9, e.decode_combine_bps / 1e9,
		   e.prefill_dispatch_bps / 1e9, e.prefill_combine_bps / 1e9);
	}
	/* across NVL72 domains a prefill token goes once to each domain */
	const wzm_gpu *gb = wzm_find_gpu(fixture_cat, "GB200", NULL);
	wzs_params p;
	wzs_params_default(&p);
	p.expert_parallel = 1;
	wzs_moe e;
	if (gb && !wzs_moe_build(dsv3, gb, &p, 144, 0, 0, &e, NULL))
		ok(e.prefill_dests == wzs_moe_destinations(256, 8, 2, 8, 4) &&
			   wzs_moe_fabric(gb, p.gpus_per_node) == 72,
		   "GB200 EP144: a prefill token's destinations are its domains (%.3f of 2)",
		   e.prefill_dests);
	else
		ok(0, "GB200 EP144 model");
	p.ep_dispatch_gbps = 7;
	ok(gb && !wzs_moe_build(dsv3, gb, &p, 72, 0, 0, &e, NULL) && e.decode_dispatch_bps == 7e9 &&
		   e.prefill_dispatch_bps == 7e9,
	   "ep_dispatch_gbps overrides the topology's figure");
}

/* Weights of 4 bits run at the FP4 peak where the catalog gives one
 * (Blackwell), at FP8 where it does not (Hopper). */
static void test_fp4_peak(void)
{
	const struct {
		const char *gpu;
		double bits;
		const char *field;
	} cases[] = { { "GB200", 4, "fp4_tflops" }, { "GB200", 8, "fp8_tflops" },
		      { "H100 SXM", 4, "fp8_tflops" }, { "B300", 4, "fp4_tflops" } };
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const wzm_gpu *g = wzm_find_gpu(fixture_cat, cases[i].gpu, NULL);
		wzm_memory_params mem;
		wzm_memory_params_default(&mem);
		mem.gpus_per_replica = 16;
		mem.par = WZM_PAR_ATTN_DP;
		mem.weight_bits = cases[i].bits;
		wzs_params p;
		wzs_params_default(&p);
		double rec = fixture_record("fp8-mix");
		wzs_replica_model m;
		if (!g || wzs_replica_model_build(dsv3, g, &mem, 32000, rec, rec, 1, &p, &m, NULL)) {
			ok(0, "%s at %g bits: a model", cases[i].gpu, cases[i].bits);
			continue;
		}
		double peak = !strcmp(cases[i].field, "fp4_tflops") ? g->fp4_tflops : g->fp8_tflops;
		ok(!strcmp(m.peak_weights_field, cases[i].field) &&
			   m.weight_flops == peak * 1e12 * p.compute_efficiency &&
			   m.prefill_weight_flops == peak * 1e12 * p.prefill_compute_efficiency,
		   "%s, %g-bit weights: matmuls at %s (%g TFLOP/s)", cases[i].gpu, cases[i].bits,
		   m.peak_weights_field, peak);
	}
}

/* FP4 experts beside FP8 attention (DeepSeek-V4-Pro: expert_bits 4.25,
 * weight_bits 8): the routed experts' matmuls run at the wider of their
 * weights' and activations' type, the rest at the FP8 peak.  FP8
 * activations (the default, DeepSeek's reference fp4_gemm) keep every
 * matmul at FP8; FP4 activations put the experts at the FP4 peak on
 * Blackwell, at FP8 on Hopper; BF16 ones at BF16; a model without
 * expert_bits is not moved. */
static void test_mixed_peak(void)
{
	const wzm_model *pro = wzm_find_model(fixture_cat, "DeepSeek-V4-Pro", NULL);
	const wzm_gpu *gb = wzm_find_gpu(fixture_cat, "GB300", NULL);
	if (!pro || !gb) {
		ok(0, "catalog has DeepSeek-V4-Pro and GB300");
		return;
	}
	const struct {
		const wzm_model *model;
		const wzm_gpu *gpu;
		int act;
		const char *experts;
	} cases[] = { { pro, gb, 8, "fp8_tflops" }, { pro, gb, 4, "fp4_tflops" },
		      { pro, gb, 16, "bf16_tflops" }, { pro, h100, 4, "fp8_tflops" },
		      { dsv3, gb, 4, "fp8_tflops" } };
	wzs_replica_model m[5];
	wzs_params p[5];
	double rec = fixture_record("fp8-mix");
	for (int i = 0; i < 5; i++) {
		wzm_memory_params mem;
		wzm_memory_params_default(&mem);
		mem.gpus_per_replica = 72;
		mem.par = WZM_PAR_ATTN_DP;
		wzs_params_default(&p[i]);
		p[i].expert_parallel = 1;
		p[i].ep_imbalance = 1.5;
		p[i].expert_act_bits = cases[i].act;
		wz_diag d;
		if (wzs_replica_model_build(cases[i].model, cases[i].gpu, &mem, 32000, rec, rec, 1, &p[i],
					    &m[i], &d)) {
			ok(0, "%s on %s: %s", cases[i].model->name, cases[i].gpu->name, d.msg);
			return;
		}
		const wzm_gpu *g = cases[i].gpu;
		double peak = !strcmp(cases[i].experts, "fp4_tflops")   ? g->fp4_tflops
			      : !strcmp(cases[i].experts, "fp8_tflops") ? g->fp8_tflops
									: g->bf16_tflops;
		double share = wzs_prefill_moe_share(&p[i], 72);
		ok(!strcmp(m[i].peak_experts_field, cases[i].experts) &&
			   !strcmp(m[i].peak_weights_field, "fp8_tflops") &&
			   m[i].expert_flops == peak * 1e12 * p[i].compute_efficiency &&
			   m[i].weight_flops == g->fp8_tflops * 1e12 * p[i].compute_efficiency &&
			   m[i].prefill_moe_flops == peak * 1e12 * share,
		   "%s on %s, %d-bit activations: experts at %s, the rest at fp8_tflops",
		   cases[i].model->name, g->name, cases[i].act, m[i].peak_experts_field);
	}
	ok(m[0].decode_weight_flops == m[0].weight_flops &&
		   m[3].decode_weight_flops == m[3].weight_flops &&
		   m[4].decode_weight_flops == m[4].weight_flops,
	   "where both peaks agree a decode step's matmuls run at the dense rate");
	/* by hand: the busiest GPU's FLOPs (1 + rs (imb - 1)) over the time
	 * of its two shares at their rates */
	double rs = m[1].routed_active_share, imb = m[1].moe.imbalance;
	double want = (1 + rs * (imb - 1)) /
		      ((1 - rs) / m[1].weight_flops + rs * imb / m[1].expert_flops);
	ok(rs > 0.3 && rs < 1 && fabs(m[1].decode_weight_flops - want) < 1e-9 * want &&
		   m[1].decode_weight_flops > m[1].weight_flops &&
		   m[1].decode_weight_flops < m[1].expert_flops,
	   "FP4 experts: a decode step's matmuls at %.0f TFLOP/s, between %.0f and %.0f "
	   "(routed share %.3f)",
	   m[1].decode_weight_flops / 1e12, m[1].weight_flops / 1e12, m[1].expert_flops / 1e12, rs);
	ok(m[1].prefill_token_s < m[0].prefill_token_s && m[2].prefill_token_s > m[0].prefill_token_s,
	   "a prefill token: %.2f us with FP4 activations, %.2f with FP8, %.2f with BF16",
	   m[1].prefill_token_s * 1e6, m[0].prefill_token_s * 1e6, m[2].prefill_token_s * 1e6);
	wz_kv *kv = NULL;
	wz_diag d;
	wzs_params q;
	wzs_params_default(&q);
	int refused = !wz_kv_parse("expert_activations = fp6\n", "t.scenario", &kv, &d) &&
		      wzs_params_from_kv(kv, &q, &d) == WZ_ERR_INPUT &&
		      strstr(d.msg, "t.scenario:1: expert_activations") && strstr(d.msg, "fp6");
	wz_kv_free(kv);
	ok(refused, "an unknown activation type is refused naming the key: %s", refused ? d.msg : "");
	wzs_params_default(&q);
	int taken = !wz_kv_parse("expert_activations = fp4\n", "t.scenario", &kv, &d) &&
		    !wzs_params_from_kv(kv, &q, &d) && q.expert_act_bits == 4;
	wz_kv_free(kv);
	ok(taken && p[0].expert_act_bits == 8, "expert_activations = fp4 is read; fp8 by default");
}

/* prefill_expert_routing picks which of AIConfigurator's measured rows
 * the routed experts' share is read from: at EP32 the busiest GPU's layer
 * at 809 TFLOP/s balanced, 620 under SGLang's EPLB, 317 without it; only
 * the routed experts' part of a pass moves, decode not at all; a word
 * that is not a routing is refused naming the key. */
static void test_routing(void)
{
	wzs_params p[3];
	wzs_replica_model m[3];
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	double rec = fixture_record("fp8-mix");
	static const double want[3] = { 809, 620, 317 };
	int shares = 1;
	for (int r = 0; r < 3; r++) {
		wzs_params_default(&p[r]);
		p[r].disaggregated = 1;
		p[r].prefill_gpus = 32;
		p[r].prefill_expert_routing = r;
		shares &= wzs_prefill_moe_share(&p[r], 32) == want[r] / 1978.9;
		if (wzs_replica_model_build(dsv3, h100, &mem, 32000, rec, rec, 1, &p[r], &m[r], NULL)) {
			ok(0, "routing: models");
			return;
		}
	}
	ok(shares && !strcmp(wzs_routing_name(WZS_ROUTING_EPLB), "eplb"),
	   "EP32's routed experts at 809 / 620 / 317 TFLOP/s: balanced, eplb, power-law");
	/* a pool GPU's seconds a token: only the routed experts' part moves */
	double rs = m[0].routed_active_share, active = m[0].active_params;
	int moves = 1;
	for (int r = 1; r < 3; r++)
		moves &= fabs((m[r].pool_token_s - m[0].pool_token_s) -
			      2 * active * rs * (1 / m[r].pool_moe_flops - 1 / m[0].pool_moe_flops)) <
			 1e-9 * m[r].pool_token_s;
	ok(moves && m[2].pool_token_s > m[1].pool_token_s && m[1].pool_token_s > m[0].pool_token_s &&
		   wzs_step_time(&m[2], 256, 256 * 4000.0) == wzs_step_time(&m[0], 256, 256 * 4000.0),
	   "a prefill token costs a pool GPU %.1f / %.1f / %.1f us; a decode step the same",
	   m[0].pool_token_s * 1e6, m[1].pool_token_s * 1e6, m[2].pool_token_s * 1e6);
	wz_kv *kv = NULL;
	wz_diag d;
	wzs_params q;
	wzs_params_default(&q);
	int refused = !wz_kv_parse("prefill_expert_routing = skewed\n", "t.scenario", &kv, &d) &&
		      wzs_params_from_kv(kv, &q, &d) == WZ_ERR_INPUT &&
		      strstr(d.msg, "t.scenario:1: prefill_expert_routing") && strstr(d.msg, "skewed");
	wz_kv_free(kv);
	wzs_params_default(&q);
	int taken = !wz_kv_parse("prefill_expert_routing = eplb\n", "t.scenario", &kv, &d) &&
		    !wzs_params_from_kv(kv, &q, &d) && q.prefill_expert_routing == WZS_ROUTING_EPLB;
	wz_kv_free(kv);
	ok(taken, "prefill_expert_routing = eplb is read");
	ok(refused, "an unknown routing is refused naming the key: %s", refused ? d.msg : "");
}

int main(void)
{
	if (fixture_open())
		return tap_done();
	test_prefill_efficiency();
	test_comm_sms();
	test_topology();
	test_fp4_peak();
	test_mixed_peak();
	test_routing();
	fixture_close();
	return tap_done();
}
