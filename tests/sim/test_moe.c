/* Expert parallelism: each MoE layer's dispatch and combine cost bytes /
 * bandwidth at DeepEP's published figures (and match its measured
 * latencies at its own batch), dual-batch overlap hides the shorter of
 * communication and compute, load imbalance slows the routed experts'
 * share of the work, a run's time per output token carries the
 * communication, and shapes that cannot be are refused. */
#include "tests/tap.h"

#include <math.h>
#include <string.h>

#include "common/wz_kv.h"
#include "sim/binding.h"
#include "sim/weights.h"
#include "tests/sim/sim_fixture.h"
#include "tests/sim/moe_fixture.h"

static void touched_saturation(const wzs_replica_model *m);

static void test_comm(void)
{
	wzs_params p;
	wzs_replica_model on, fast;
	if (model(1, 16, 0, 1, 0, &p, &on, NULL) || model(1, 16, 0, 1, 1e5, &p, &fast, NULL)) {
		ok(0, "models");
		return;
	}
	/* DeepEP's low-latency setting: 128 tokens per GPU, EP16. */
	double batch = 16 * 128, rank_tokens = 128 * 4000.0;
	double comm = wzs_moe_comm_time(&on.moe, 128, on.moe.decode_dests, on.moe.decode_dispatch_bps,
					on.moe.decode_combine_bps);
	double per_layer = comm / 58;
	ok(on.moe.decode_dispatch_bps == 63e9 && on.moe.decode_combine_bps == 74e9,
	   "EP16 decode uses DeepEP's 63 / 74 GB/s");
	ok(fabs(per_layer - 313e-6) < 0.03 * 313e-6,
	   "one layer's dispatch + combine of 128 tokens: %.1f us against DeepEP's 118 + 195 us",
	   per_layer * 1e6);
	double t_on = wzs_step_time(&on, batch, rank_tokens);
	double t_fast = wzs_step_time(&fast, batch, rank_tokens);
	/* at 1e5 GB/s the low-latency kernels' measured floors are left */
	double fast_comm = wzs_moe_decode_comm_time(&fast.moe, 128);
	ok(fabs(fast_comm - 58 * (22.57 + 25.9) * 1e-6) < 1e-12 &&
		   wzs_moe_decode_comm_time(&on.moe, 128) == comm,
	   "a decode step's all-to-all: bytes over DeepEP's bandwidth, at least its measured floor "
	   "a layer (22.57 + 25.9 us at EP16)");
	ok(fabs((t_on - t_fast) - (comm - fast_comm)) < 1e-12,
	   "a decode step carries the all-to-all: %.3f ms against %.3f ms (%.3f ms of it)", t_on * 1e3,
	   t_fast * 1e3, comm * 1e3);
	ok(comm > 0.015 && comm < 0.02, "58 layers of it: %.2f ms per step", comm * 1e3);
	/* a few tokens a GPU: the floor, paid by each micro-batch */
	double few = wzs_moe_decode_comm_time(&on.moe, 2);
	ok(fabs(few - 58 * (22.57 + 25.9) * 1e-6) < 1e-12,
	   "2 tokens a GPU take the floor, %.3f ms a step, not their bytes' %.3f ms", few * 1e3,
	   wzs_moe_comm_time(&on.moe, 2, on.moe.decode_dests, on.moe.decode_dispatch_bps,
			     on.moe.decode_combine_bps) * 1e3);

	wzs_replica_model dbo;
	model(1, 16, 1, 1, 0, &p, &dbo, NULL);
	ok(fabs(wzs_moe_decode_comm_time(&dbo.moe, 2) - 2 * few) < 1e-12 &&
		   fabs(wzs_moe_decode_comm_time(&dbo.moe, 128) - comm) < 1e-12 * comm,
	   "overlapped, two micro-batches each pay the floor; above it the bytes are the same");
	double roof = t_fast - on.overhead_s - fast_comm;
	double t_dbo = wzs_step_time(&dbo, batch, rank_tokens);
	/* DeepSeek's decode pipeline: per micro-batch (64 tokens a GPU) the
	 * dispatch hides behind the weights before it, the combine behind core
	 * attention and the output projection, the routed experts behind
	 * nothing; each micro-batch reads the weights again */
	wzs_tbo_batch tb;
	wzs_tbo_batch_terms(&dbo, batch, &tb);
	double d64, c64;
	wzs_moe_decode_comm_parts(&dbo.moe, 64, &d64, &c64);
	double cache = rank_tokens * dbo.token_bytes / 2 / dbo.hbm_bps;
	double attn = rank_tokens * dbo.attn_flops_pair / dbo.attn_flops / 2;
	double core = (attn > cache ? attn : cache) + tb.o_s;
	double tbo_hand = dbo.overhead_s + 2 * ((tb.pre_s > d64 ? tb.pre_s : d64) + tb.mlp_s +
					       (core > c64 ? core : c64));
	ok(tb.dispatch_s == d64 && tb.combine_s == c64 && fabs(2 * (d64 + c64) - comm) < 1e-12 * comm &&
		   fabs(t_dbo - tbo_hand) < 1e-12 && tb.pre_s > 0 && tb.mlp_s > 0 && tb.o_s > 0,
	   "dual-batch overlap: %.3f ms, two micro-batches of max(weights before %.3f, dispatch "
	   "%.3f) + routed experts %.3f + max(attention and output %.3f, combine %.3f) ms",
	   t_dbo * 1e3, tb.pre_s * 1e3, d64 * 1e3, tb.mlp_s * 1e3, core * 1e3, c64 * 1e3);
	/* the stages' matmuls as AIConfigurator's decode rows measured them:
	 * 35 us a layer beyond the attention projections' read plus FLOPs, 22
	 * us a MoE layer beyond the longer of the experts' read and FLOPs */
	double per_gpu = batch / 2 / 16, always = dbo.weight_bytes_gpu * dbo.moe.always_read;
	double pre_by_hand = 61 * 35e-6 + (always - dbo.o_proj_bytes) / dbo.hbm_bps +
			     per_gpu * dbo.rest_flops_token / dbo.weight_flops;
	double routed = (dbo.weight_bytes_gpu * wzs_weights_touched(&dbo, batch / 2) - always) /
			dbo.hbm_bps,
	       routed_fl = per_gpu * dbo.routed_flops_token / dbo.weight_flops;
	double mlp_by_hand = 58 * 22e-6 + (routed > routed_fl ? routed : routed_fl);
	ok(fabs(tb.pre_s - pre_by_hand) < 1e-12 && fabs(tb.mlp_s - mlp_by_hand) < 1e-12 &&
		   fabs(tb.o_s - (dbo.o_proj_bytes / dbo.hbm_bps +
				  per_gpu * dbo.o_proj_flops_token / dbo.weight_flops)) < 1e-12 &&
		   fabs(dbo.o_proj_flops_token - 2 * 61 * 128 * 128 * 7168.0) < 1,
	   "the stages: weights before %.3f ms (61 x 35 us of it), routed experts %.3f ms (58 x 22 us)",
	   tb.pre_s * 1e3, tb.mlp_s * 1e3);
	ok(t_dbo > on.overhead_s + (roof > comm ? roof : comm) && t_dbo < t_on + roof,
	   "it lies between perfect overlap (%.3f ms) and no overlap with the roofline twice "
	   "(%.3f ms)",
	   (on.overhead_s + (roof > comm ? roof : comm)) * 1e3, (t_on + roof) * 1e3);

	/* Prefill: the normal kernels, 43 GB/s at EP16; tokens spread over ranks. */
	double pass = 16 * 4096.0, pairs = 16 * wzs_prefill_pairs(0, 4096);
	double pre_on = wzs_prefill_time(&on, pass, pairs, pairs / 16);
	double pre_fast = wzs_prefill_time(&fast, pass, pairs, pairs / 16);
	double pre_comm = wzs_moe_comm_time(&on.moe, 4096, on.moe.prefill_dests, 43e9, 43e9) -
			  wzs_moe_comm_time(&fast.moe, 4096, fast.moe.prefill_dests, 1e14, 1e14);
	ok(on.moe.prefill_dispatch_bps == 43e9 && fabs((pre_on - pre_fast) - pre_comm) < 1e-12,
	   "a prefill pass carries its all-to-all at 43 GB/s (%.1f ms)", pre_comm * 1e3);
	/* The normal kernels' bytes go to each token's distinct nodes (EP16:
	 * two nodes of 8), the low-latency kernels' to each expert picked. */
	/* DeepSeek-V3's routing: 8 experts from 4 of its 8 groups */
	double two = wzs_moe_destinations(256, 8, 2, 8, 4);
	ok(on.moe.decode_dests == 8 && fabs(on.moe.prefill_dests - two) < 1e-15 && two > 1.9 &&
		   two < 2,
	   "EP16: a decode token's state goes to its 8 experts, a prefill token's to %.4f nodes",
	   on.moe.prefill_dests);
	double per_token_layer =
		wzs_moe_comm_time(&on.moe, 4096, on.moe.prefill_dests, 43e9, 43e9) / 58 / 4096;
	double want = two * (7168 * (1 + 4.0 / 128) / 43e9 + 7168 * 2 / 43e9);
	ok(fabs(per_token_layer - want) < 1e-9 * want,
	   "a prefill token's layer: %.3f us, its nodes x 7168 x (1 + 4/128) bytes at 43 GB/s and "
	   "x 2 bytes back at 43 GB/s",
	   per_token_layer * 1e6);

	/* distinct units among picks: the product form against counting every
	 * set of picks (12 experts, 3 picked, over 1 to 12 units) */
	static const int unit_counts[] = { 1, 2, 3, 4, 6, 12 };
	int agree = 1;
	for (size_t u = 0; u < sizeof unit_counts / sizeof unit_counts[0]; u++) {
		int U = unit_counts[u], per = 12 / U;
		double sum = 0, sets = 0;
		for (int a = 0; a < 12; a++)
			for (int b = a + 1; b < 12; b++)
				for (int c = b + 1; c < 12; c++) {
					int ua = a / per, ub = b / per, uc = c / per;
					sum += 1 + (ub != ua) + (uc != ua && uc != ub);
					sets++;
				}
		agree &= fabs(wzs_moe_destinations(12, 3, U, 1, 1) - sum / sets) < 1e-12;
	}
	ok(agree, "distinct units of 3 of 12 experts over 1 to 12 units: the product form = the count "
		  "over all 220 sets");
	/* group-limited: 12 experts in 4 groups of 3, a token's 3 from 2 of
	 * the groups, against counting every choice of groups and picks */
	int agree_g = 1;
	for (size_t u = 0; u < sizeof unit_counts / sizeof unit_counts[0]; u++) {
		int U = unit_counts[u], per = 12 / U;
		double sum = 0, sets = 0;
		for (int g1 = 0; g1 < 4; g1++)
			for (int g2 = g1 + 1; g2 < 4; g2++) {
				int ex[6] = { 3 * g1, 3 * g1 + 1, 3 * g1 + 2, 3 * g2, 3 * g2 + 1, 3 * g2 + 2 };
				for (int a = 0; a < 6; a++)
					for (int b = a + 1; b < 6; b++)
						for (int c = b + 1; c < 6; c++) {
							int ua = ex[a] / per, ub = ex[b] / per, uc = ex[c] / per;
							sum += 1 + (ub != ua) + (uc != ua && uc != ub);
							sets++;
						}
			}
		agree_g &= fabs(wzs_moe_destinations(12, 3, U, 4, 2) - sum / sets) < 1e-12;
	}
	ok(agree_g, "group-limited (2 of 4 groups): the form = the count over all 120 choices, over 1 "
		    "to 12 units, units across groups (3) included");
	/* EP32, 4 nodes of 2 groups each: a node has j of the token's 4
	 * groups, j hypergeometric (8 groups, 2 its own, 4 drawn): 1 with
	 * probability 40/70, 2 with 15/70; then none of the 8 picks among the
	 * 128 experts of the 4 groups falls in its 32 j */
	double m1 = 1, m2 = 1;
	for (int i = 0; i < 8; i++) {
		m1 *= (96.0 - i) / (128 - i);
		m2 *= (64.0 - i) / (128 - i);
	}
	double by_hand = 4 * (40.0 / 70 * (1 - m1) + 15.0 / 70 * (1 - m2));
	double ds4 = wzs_moe_destinations(256, 8, 4, 8, 4), ds8 = wzs_moe_destinations(256, 8, 8, 8, 4);
	ok(fabs(ds4 - by_hand) < 1e-12 && ds8 < wzs_moe_destinations(256, 8, 8, 1, 1) &&
		   ds4 < wzs_moe_destinations(256, 8, 4, 1, 1),
	   "DeepSeek-V3's routing (4 of 8 groups): %.4f nodes at EP32 (by hand %.4f), %.3f GPUs at "
	   "EP8, fewer than picks from all experts give (3.614, 5.28)",
	   ds4, by_hand, ds8);
	ok(wzs_moe_normal_units(8, 8) == 8 && wzs_moe_normal_units(32, 8) == 4 &&
		   fabs(wzs_moe_destinations(256, 8, 256, 1, 1) - 8) < 1e-12,
	   "GPUs within a node, nodes across (EP32: 4 nodes, %.3f of them a token); one expert a "
	   "unit: every pick its own",
	   wzs_moe_destinations(256, 8, 4, 1, 1));

	wzs_replica_model wide;
	ok(!model(1, 32, 0, 1, 0, &p, &wide, NULL) && wide.moe.prefill_dispatch_bps == 58e9 &&
		   wide.moe.prefill_combine_bps == 57e9 && wide.moe.decode_dispatch_bps == 48e9 &&
		   wide.moe.decode_combine_bps == 53e9,
	   "EP32: DeepEP's 58 / 57 GB/s for prefill, 48 / 53 GB/s low-latency for decode");
}

static void test_imbalance(void)
{
	wzs_params p;
	wzs_replica_model even, skew;
	model(1, 16, 0, 1, 1e5, &p, &even, NULL);
	model(1, 16, 0, 2, 1e5, &p, &skew, NULL);
	double routed = 58.0 * 8 * 3 * 7168 * 2048 / 37e9;
	ok(fabs(even.moe.routed_share - routed) < 1e-12 && fabs(skew.moe.compute_factor - (1 + routed)) < 1e-12,
	   "imbalance 2 doubles the routed experts' %.3f of the FLOPs", routed);
	/* A compute-bound prefill pass grows by the weights' part only. */
	double pass = 16 * 8192.0, pairs = 16 * wzs_prefill_pairs(0, 8192);
	double a = wzs_prefill_time(&even, pass, pairs, pairs / 16) - even.overhead_s;
	double b = wzs_prefill_time(&skew, pass, pairs, pairs / 16) - skew.overhead_s;
	double weights = 2.0 * 37e9 * pass / (16 * even.prefill_moe_flops);
	ok(fabs((b - a) - weights * routed) < 1e-9 * b,
	   "the busiest GPU's prefill pass: %.4f s against %.4f s", b, a);
	wzs_replica_model shape, split;
	model(1, 16, 0, 1, 0, &p, &shape, NULL);
	/* DeepSeek-V3's 58 x 256 routed experts of 3 x 7168 x 2048: 653.9B of
	 * its 671B; a GPU of 16 holds the other 17.1B whole and 1/16 of them. */
	double routed_all = 58.0 * 256 * 3 * 7168 * 2048, rest = 671e9 - routed_all;
	double gpu_share = rest / (rest + routed_all / 16);
	ok(fabs(shape.moe.always_read - gpu_share) < 1e-12 &&
		   fabs(wzs_weights_touched(&shape, 1) - (gpu_share + (1 - gpu_share) * 8.0 / 256)) <
			   1e-12,
	   "one token reads the GPU's replicated weights (%.4f of its weights) and 8 of 256 experts",
	   shape.moe.always_read);
	/* Memory: each GPU holds the replicated weights whole, not 1/16 of the
	 * model, so its cache pool is smaller than tensor parallelism's even
	 * split; attention data parallelism without expert parallelism holds
	 * them the same way (the routed experts are split by tensor slices
	 * instead of by expert). */
	wzs_replica_model dp_only;
	model(0, 16, 0, 1, 0, &p, &dp_only, NULL);
	wzm_memory_params tp_mem;
	wzm_memory_params_default(&tp_mem);
	tp_mem.gpus_per_replica = 16;
	tp_mem.par = WZM_PAR_TP;
	double rec = fixture_record("fp8-mix");
	wzs_params_default(&p);
	ok(!wzs_replica_model_build(dsv3, h100, &tp_mem, 32000, rec, rec, 1, &p, &split, NULL),
	   "tensor-parallel model");
	double bytes = dsv3->weight_bits / 8;
	ok(fabs(shape.mem.weights - (rest + routed_all / 16) * bytes) < 1 &&
		   fabs(split.mem.weights - 671e9 / 16 * bytes) < 1 &&
		   shape.mem.weights_replicated > 0 && split.mem.weights_replicated == 0,
	   "expert parallelism: %.1f GiB of weights per GPU (%.1f of them replicated) against %.1f "
	   "split evenly by tensor parallelism",
	   shape.mem.weights / WZM_GIB, shape.mem.weights_replicated / WZM_GIB,
	   split.mem.weights / WZM_GIB);
	ok(dp_only.mem.weights == shape.mem.weights &&
		   dp_only.mem.weights_replicated == shape.mem.weights_replicated &&
		   dp_only.blocks_per_rank == shape.blocks_per_rank,
	   "attention data parallelism without expert parallelism: the same %.1f GiB per GPU",
	   dp_only.mem.weights / WZM_GIB);
	ok(shape.blocks_per_rank < split.blocks_per_rank &&
		   shape.mem.users_per_gpu < split.mem.users_per_gpu,
	   "and fewer cache blocks per GPU (%ld against %ld)", shape.blocks_per_rank,
	   split.blocks_per_rank);
	touched_saturation(&shape);
	touched_saturation(&dp_only);
	touched_saturation(&split);
}

/* The share of weights a batch touches, by its formula (replica.c). */
static double touched_by_formula(const wzs_replica_model *m, double b)
{
	if (b <= 0)
		return 0;
	if (m->moe.on)
		return m->moe.always_read +
		       (1 - m->moe.always_read) * (1 - pow(1 - m->moe.expert_pick, b));
	return m->active_share >= 1 ? 1 : 1 - pow(1 - m->active_share, b);
}

/* wzs_weights_touched takes big batches (a prefill pass's tokens) as
 * constant from touched_sat on, without pow: the formula's own bits on both
 * sides of that batch, whole and not, and far past it. */
static void touched_saturation(const wzs_replica_model *m)
{
	double n = m->touched_sat;
	int same = isfinite(n) && n > 1, checked = 0;
	static const double off[] = { -3, -2, -1, -0.5, -1e-9, 0, 1e-9, 0.25, 1, 2, 3, 10, 1e3, 1e6 };
	for (size_t i = 0; same && i < sizeof off / sizeof *off; i++) {
		double b = n + off[i];
		same = wzs_weights_touched(m, b) == touched_by_formula(m, b);
		checked++;
	}
	for (int b = 0; same && b < 4 * WZS_TOUCHED_TABLE; b += 7, checked++)
		same = wzs_weights_touched(m, b) == touched_by_formula(m, b);
	/* DeepSeek-V3's shapes saturate within a prefill pass's tokens */
	ok(same && n < 20000,
	   "weights touched (%s): the formula's bits at %d batches around and past %.0f, from "
	   "where it is %.17g",
	   m->moe.on ? "expert parallelism" : "active share", checked, n, m->touched_full);
}

/* One request decoding alone: its time per output token is the step time,
 * all-to-all included. */
static void test_run(void)
{
	double tpot[2];
	for (int ep = 0; ep < 2; ep++) {
		wzs_params p;
		wzs_replica_model m;
		if (model(ep, 16, 0, 1, 0, &p, &m, NULL)) {
			ok(0, "model");
			return;
		}
		wzt_request rows[1] = { { 0, 0, 0.0, 1000, 201, 0, 0, 0 } };
		wzs_result r;
		if (fixture_run1(&p, &m, rows, 1, &r, NULL)) {
			ok(0, "run");
			return;
		}
		tpot[ep] = r.tpot.mean;
		if (ep) {
			double comm = wzs_moe_comm_time(&m.moe, 1, m.moe.decode_dests,
							m.moe.decode_dispatch_bps,
							m.moe.decode_combine_bps);
			double first = wzs_step_time(&m, 1, 1001), last = wzs_step_time(&m, 1, 1200);
			ok(r.tpot.mean >= first - 1e-12 && r.tpot.mean <= last + 1e-12 && comm > 0 &&
				   first - comm > 0,
			   "with expert parallelism TPOT %.3f ms is the step time, %.4f ms of it the "
			   "all-to-all",
			   r.tpot.mean * 1e3, comm * 1e3);
		}
		wzs_result_free(&r);
	}
	ok(tpot[1] != tpot[0], "expert parallelism changes the decode (%.3f ms against %.3f ms)",
	   tpot[1] * 1e3, tpot[0] * 1e3);
}

/* A slow all-to-all (50 MB/s: one request per replica sends little)
 * outlasts the decode roofline: the run counts its steps as the
 * network's, and a fleet missing its TPOT target on them is bound by the
 * expert all-to-all; at DeepEP's bandwidths it is not. */
static void test_network_binds(void)
{
	const char *names[2] = { "DeepEP's bandwidths", "50 MB/s" };
	for (int slow = 0; slow < 2; slow++) {
		wzs_params p;
		wzs_replica_model m;
		if (model(1, 16, 0, 1, slow ? 0.05 : 0, &p, &m, NULL)) {
			ok(0, "model");
			return;
		}
		wzt_request rows[1] = { { 0, 0, 0.0, 1000, 201, 0, 0, 0 } };
		wzs_result r;
		if (fixture_run1(&p, &m, rows, 1, &r, NULL)) {
			ok(0, "run");
			return;
		}
		p.tpot_p99_s = r.tpot.p99 / 2; /* missed */
		wzs_binding b = wzs_what_binds(&p, &r);
		int network = wzs_step_network_bound(&m, 1, 1001);
		if (slow)
			ok(network && r.busy_decode_network_s > 0 && r.busy_decode_memory_s == 0 &&
				   b == WZS_BIND_ALL_TO_ALL,
			   "%s: the steps are the all-to-all's (%.3f s), and it binds: %s", names[slow],
			   r.busy_decode_network_s, wzs_binding_name(b));
		else
			ok(!network && r.busy_decode_network_s == 0 && b == WZS_BIND_DECODE_BANDWIDTH,
			   "%s: the roofline is longer, %s binds", names[slow], wzs_binding_name(b));
		wzs_result_free(&r);
	}
}

/* wzs_step_time_bound (a decode epoch's start) gives what the three
 * separate calls give, bit for bit, with and without expert parallelism,
 * with overlap, at a slow network (so both flags take both values). */
static void test_step_time_bound(void)
{
	static const struct { int ep, overlap; double gbps; } cases[] = {
		{ 0, 0, 0 }, { 1, 0, 0 }, { 1, 1, 0 }, { 1, 0, 0.05 }, { 1, 1, 0.05 }
	};
	long checked = 0, bad = 0, compute = 0, network = 0;
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		wzs_params p;
		wzs_replica_model m;
		if (model(cases[c].ep, 16, cases[c].overlap, 1, cases[c].gbps, &p, &m, NULL)) {
			ok(0, "model");
			return;
		}
		for (double batch = -1; batch <= 4096; batch = batch < 8 ? batch + 1 : batch * 1.7)
			for (double tokens = 0; tokens < 1e8; tokens = tokens * 3.1 + 17) {
				int cb = -1, nb = -1;
				double t = wzs_step_time_bound(&m, batch, tokens, &cb, &nb);
				double t_ref = wzs_step_time(&m, batch, tokens);
				bad += memcmp(&t, &t_ref, sizeof t) != 0 ||
				       cb != wzs_step_compute_bound(&m, batch, tokens) ||
				       nb != wzs_step_network_bound(&m, batch, tokens);
				/* Both ends of an epoch at once: the last step's
				 * tokens more, fewer (a contribution can be
				 * negative) or the same. */
				double later = tokens * (batch > 100 ? 0.7 : 1.9) + (double)(checked % 3);
				int cb2 = -1, nb2 = -1;
				double t1 = -1, t0 = wzs_step_times_bound(&m, batch, tokens, later, &t1,
									 &cb2, &nb2);
				double t1_ref = wzs_step_time(&m, batch, later);
				bad += memcmp(&t0, &t_ref, sizeof t0) != 0 ||
				       memcmp(&t1, &t1_ref, sizeof t1) != 0 || cb2 != cb || nb2 != nb;
				compute += cb;
				network += nb;
				checked++;
			}
	}
	ok(bad == 0 && compute > 0 && compute < checked && network > 0 && network < checked,
	   "one evaluation of a step's terms: time and both flags as the separate calls, and "
	   "both ends of an epoch at once, %ld of %ld (%ld compute-bound, %ld network-bound)",
	   checked - bad, checked, compute, network);
}

int main(void)
{
	if (fixture_open())
		return tap_done();
	wz_diag diag;
	test_comm();
	test_imbalance();
	test_run();
	test_network_binds();
	test_step_time_bound();

	wzs_params p;
	wzs_replica_model m;
	wzs_params_default(&p);
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_TP;
	p.expert_parallel = 1;
	ok(wzs_replica_model_build(dsv3, h100, &mem, 32000, 584, 584, 1, &p, &m, &diag) == WZ_ERR_INPUT &&
		   strstr(diag.msg, "attention-dp"),
	   "expert parallelism under TP is refused: %s", diag.msg);
	mem.par = WZM_PAR_ATTN_DP;
	p.moe_top_k = 32;
	ok(wzs_replica_model_build(dsv3, h100, &mem, 32000, 584, 584, 1, &p, &m, &diag) == WZ_ERR_INPUT &&
		   strstr(diag.msg, "moe_top_k"),
	   "a MoE shape larger than the model is refused: %s", diag.msg);
	p.moe_top_k = -1;
	p.moe_n_group = 3;
	ok(wzs_replica_model_build(dsv3, h100, &mem, 32000, 584, 584, 1, &p, &m, &diag) == WZ_ERR_INPUT &&
		   strstr(diag.msg, "moe_n_group, moe_topk_group"),
	   "groups that do not divide the experts are refused: %s", diag.msg);
	p.moe_n_group = 8;
	p.moe_topk_group = 1;
	/* built before ok(), whose arguments C evaluates in no set order */
	wz_err built = wzs_replica_model_build(dsv3, h100, &mem, 32000, 584, 584, 1, &p, &m, &diag);
	double one_group = built ? NAN : m.moe.prefill_dests;
	ok(!built && fabs(one_group - wzs_moe_destinations(256, 8, 2, 8, 1)) < 1e-15 &&
		   one_group < 1.6,
	   "moe_topk_group 1 (a token's experts from one group, 32 of them): %.3f nodes at EP16",
	   one_group);
	p.moe_topk_group = -1;

	/* A dense model has no routed experts: attention data parallelism
	 * holds all of it on every GPU, tensor parallelism splits it. */
	wzm_model dense = *dsv3;
	dense.params_total_b = dense.params_active_b = 70;
	double whole = -1;
	wzs_params_default(&p);
	wz_err got = wzs_replicated_params_b(&dense, &p, WZM_PAR_ATTN_DP, &whole, &diag);
	ok(!got && whole == 70, "a dense model under attention-dp: %.0fB held whole", whole);
	whole = -1;
	got = wzs_replicated_params_b(&dense, &p, WZM_PAR_TP, &whole, &diag);
	ok(!got && whole == 0, "and none under tp (%.0fB held whole)", whole);
	dense.params_active_b = NAN;
	ok(wzs_replicated_params_b(&dense, &p, WZM_PAR_ATTN_DP, &whole, &diag) == WZ_ERR_MISSING &&
		   strstr(diag.msg, "params_active_b"),
	   "without active parameters it says which value it needs: %s", diag.msg);

	/* The shape comes from the model's catalog row: DeepSeek-V2's routed
	 * experts are 59 layers x 160 x 3 x 5120 x 1536 = 222.7B of 236B,
	 * Kimi-K2's 60 x 384 x 3 x 7168 x 2048 = 1014.7B of 1040B. */
	struct {
		const char *name;
		double whole;
	} rows[] = { { "DeepSeek-V2", 236 - 59 * 160 * 3.0 * 5120 * 1536 / 1e9 },
		     { "Kimi-K2-Instruct", 1040 - 60 * 384 * 3.0 * 7168 * 2048 / 1e9 },
		     { "DeepSeek-V3", 671 - 58 * 256 * 3.0 * 7168 * 2048 / 1e9 } };
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const wzm_model *md = wzm_find_model(fixture_cat, rows[i].name, NULL);
		whole = -1;
		wz_err e = md ? wzs_replicated_params_b(md, &p, WZM_PAR_ATTN_DP, &whole, &diag)
			      : WZ_ERR_NOT_FOUND;
		ok(!e && fabs(whole - rows[i].whole) < 1e-9,
		   "%s under attention-dp: %.2fB held whole, by its catalogued MoE shape",
		   rows[i].name, whole);
	}
	/* a key overrides its column; a model without a catalogued shape
	 * names the row, the column and the key */
	wzs_moe_shape sh;
	double routed_all;
	p.moe_routed_experts = 128;
	ok(!wzs_moe_shape_check(dsv3, &p, &sh, &routed_all, &diag) && sh.routed_experts == 128 &&
		   sh.top_k == 8 && sh.layers == 58,
	   "moe_routed_experts = 128 replaces the catalog's 256; the other fields stay its");
	wzs_params_default(&p);
	/* GLM-5's row with its MoE columns emptied */
	const wzm_model *glm5 = wzm_find_model(fixture_cat, "GLM-5 (FP8)", NULL);
	wzm_model bare;
	if (glm5) {
		bare = *glm5;
		bare.moe_layers = bare.moe_top_k = bare.moe_routed_experts = NAN;
		bare.moe_shared_experts = bare.moe_intermediate_size = NAN;
	}
	const wzm_model *glm = glm5 ? &bare : NULL;
	wz_err ge = glm ? wzs_replicated_params_b(glm, &p, WZM_PAR_ATTN_DP, &whole, &diag)
			: WZ_ERR_NOT_FOUND;
	ok(ge == WZ_ERR_MISSING &&
		   strstr(diag.msg, "models.csv:") && strstr(diag.msg, "field moe_layers") &&
		   strstr(diag.msg, "scenario key moe_layers"),
	   "a MoE model without a catalogued shape: %s", diag.msg);
	p.moe_layers = 75;
	p.moe_top_k = 8;
	p.moe_routed_experts = 256;
	p.moe_shared_experts = 1;
	p.moe_intermediate = 2048;
	whole = -1;
	ge = glm ? wzs_replicated_params_b(glm, &p, WZM_PAR_ATTN_DP, &whole, &diag) : WZ_ERR_NOT_FOUND;
	ok(!ge && whole > 0,
	   "the scenario keys give it one: %.1fB held whole", whole);
	/* the catalog's own row now carries that shape (xLLM's GLM-5 model
	 * arguments, from its config): the same weights held whole */
	wzs_params_default(&p);
	double cat_whole = -1;
	ge = glm5 ? wzs_replicated_params_b(glm5, &p, WZM_PAR_ATTN_DP, &cat_whole, &diag)
		  : WZ_ERR_NOT_FOUND;
	ok(!ge && cat_whole == whole, "GLM-5's catalogued shape: %.1fB held whole, as the keys gave",
	   cat_whole);
	fixture_close();
	return tap_done();
}
