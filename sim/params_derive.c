/* What the simulator derives from its parameters: the decode cost of a format,
 * the prefill pool's sizes and instances, the initial context, the routed
 * experts' prefill share, and the parameters' description for a run's
 * report (params.h). */
#include "sim/params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

long wzs_pool_instance_width(const wzs_params *p, long pool_gpus)
{
	if (!p->disaggregated || (p->prefill_instance_gpus < 1 && p->prefill_pp_stages <= 1))
		return 0;
	return p->prefill_instance_gpus > 0 ? p->prefill_instance_gpus : pool_gpus;
}

long wzs_pool_ep_gpus(const wzs_params *p)
{
	long width = wzs_pool_instance_width(p, p->prefill_gpus);
	if (width <= 0)
		return p->prefill_gpus;
	return p->prefill_pp_stages > 1 ? width / p->prefill_pp_stages : width;
}

wz_err wzs_decode_cost(const wzs_params *p, const char *format, double *out, wz_diag *diag)
{
	*out = 1.0;
	char **items;
	int n = wz_split_list(p->decode_cost, &items);
	if (n < 0)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	wz_err err = WZ_OK;
	for (int i = 0; i < n && !err; i++) {
		char *colon = strrchr(items[i], ':');
		double f;
		if (!colon || colon == items[i] || wz_parse_double(colon + 1, &f) || !(f > 0) || f > 100) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "'%s': use format:factor with a factor in (0, 100]", items[i]);
			break;
		}
		*colon = '\0';
		if (wz_name_eq(items[i], format))
			*out = f;
	}
	wz_strlist_free(items, n);
	return err;
}

int wzs_prefill_pool_sizes(const wzs_params *p, long *sizes, wz_diag *diag)
{
	if (!p->prefill_gpus_search[0]) {
		sizes[0] = p->prefill_gpus;
		return 1;
	}
	char **items;
	int n = wz_split_list(p->prefill_gpus_search, &items);
	if (n < 0) {
		wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		return -1;
	}
	int count = 0;
	for (int i = 0; i < n && count >= 0; i++) {
		long x;
		if (wz_parse_count(items[i], &x) || x < 1 || x > 4096) {
			wz_diag_set(diag, WZ_ERR_INPUT, "'%s' is not a pool size from 1 to 4096 GPUs",
				    items[i]);
			count = -1;
		} else if (count == WZS_MAX_POOL_SIZES) {
			wz_diag_set(diag, WZ_ERR_INPUT, "more than %d pool sizes", WZS_MAX_POOL_SIZES);
			count = -1;
		} else {
			sizes[count++] = x;
		}
	}
	wz_strlist_free(items, n);
	if (count == 0) {
		wz_diag_set(diag, WZ_ERR_INPUT, "no pool size listed");
		count = -1;
	}
	return count;
}

long wzs_initial_context(const wzs_params *p, long context)
{
	if (p->initial_context > 0)
		return p->initial_context;
	double age = p->length_dist == WZS_DIST_FIXED ? (p->turns - 1) / 2.0 : p->turns - 1;
	double start = (double)context - age * (p->prompt_tokens + p->output_tokens);
	/* Below one token the population could not hold `context` on average:
	 * the caller refuses rather than simulate other users than asked. */
	return start < 1 ? 0 : (long)llround(start);
}

double wzs_prefill_efficiency(const wzs_params *p)
{
	return p->prefill_compute_efficiency;
}

/* DeepSeek-V3's routed experts (256 of 2,048 wide, top 8, FP8 blocks) in
 * SGLang's DeepEP MoE layer (DeepGEMM's contiguous grouped GEMMs, the
 * permutes and the activation), one layer: NVIDIA AIConfigurator's
 * h100_sxm/moe/sglang/0.5.10/wideep_context_moe_perf.parquet, the largest
 * token count measured at each EP size (65,536 at EP4, 131,072 at EP8,
 * 262,144 at EP16, 524,288 above): a GPU's 6 x 7168 x 2048 x 8 FLOPs a
 * token over its EP share, over the latency, in TFLOP/s, of the 1,978.9
 * TFLOP/s FP8 peak.  The collector (collector/sglang/collect_moe.py)
 * measures EP rank 0, the busiest, for each distribution of tokens over
 * experts:
 *   balanced: "uniform", EP4 10.659 ms (1,083 TFLOP/s), EP8 11.099
 *     (1,040), EP16 12.225 (944), EP32 14.265 (809), EP64 9.368 (616),
 *     EP128 7.009 (412), EP256 5.755 (251);
 *   eplb: what AIConfigurator reads for SGLang's large-EP prefill with
 *     EPLB on (aic-core sdk/models/helpers.py, build_large_ep_moe_ops:
 *     alpha 0.6 in prefill under EPLB; blocks/moe.py: the tokens times
 *     0.8), the "power_law_0.6" rows interpolated at 0.8 of the token
 *     count: EP4 10.952 ms (1,054), EP8 11.427 (1,010), EP16 14.254 (810),
 *     EP32 18.635 (620), EP64 12.781 (452), EP128 9.605 (300), EP256 7.204
 *     (200);
 *   power-law: its default for DeepSeek without EPLB (sdk/config.py
 *     workload_distribution "power_law", sdk/models/deepseek.py alpha
 *     1.01), the "power_law_1.01" rows: EP4 15.433 (748), EP8 16.829 (686),
 *     EP16 25.443 (454), EP32 36.457 (317), EP64 29.161 (198), EP128
 *     25.090 (115), EP256 23.211 (62).
 * (aiconfigurator at commit 095f58a5.)  A split between two sizes takes
 * the larger's (the slower), below 4 EP4's. */
static const int moe_prefill_gpus[] = { 4, 8, 16, 32, 64, 128, 256 };
static const double moe_prefill_tflops[][7] = {
	[WZS_ROUTING_BALANCED] = { 1083, 1040, 944, 809, 616, 412, 251 },
	[WZS_ROUTING_EPLB] = { 1054, 1010, 810, 620, 452, 300, 200 },
	[WZS_ROUTING_POWER_LAW] = { 748, 686, 454, 317, 198, 115, 62 },
};
#define MOE_PREFILL_PEAK_TFLOPS 1978.9

const char *wzs_routing_name(int routing)
{
	switch (routing) {
	case WZS_ROUTING_EPLB:
		return "eplb";
	case WZS_ROUTING_POWER_LAW:
		return "power-law";
	default:
		return "balanced";
	}
}

double wzs_prefill_moe_share(const wzs_params *p, int gpus)
{
	if (p->prefill_moe_efficiency > 0)
		return p->prefill_moe_efficiency;
	int r = p->prefill_expert_routing;
	if (r < WZS_ROUTING_BALANCED || r > WZS_ROUTING_POWER_LAW)
		r = WZS_ROUTING_BALANCED;
	int n = (int)(sizeof moe_prefill_gpus / sizeof moe_prefill_gpus[0]);
	for (int i = 0; i < n; i++)
		if (gpus <= moe_prefill_gpus[i])
			return moe_prefill_tflops[r][i] / MOE_PREFILL_PEAK_TFLOPS;
	return moe_prefill_tflops[r][n - 1] / MOE_PREFILL_PEAK_TFLOPS;
}

void wzs_params_describe(const wzs_params *p, wz_buf *out)
{
	wz_buf_printf(out, "ttft_p99_s = %g\ntpot_p99_s = %g\n", p->ttft_p99_s, p->tpot_p99_s);
	if (p->ttft_per_1k_tokens_s > 0)
		wz_buf_printf(out, "ttft_per_1k_tokens_s = %g\n", p->ttft_per_1k_tokens_s);
	wz_buf_printf(out, "hbm_efficiency = %g\ncompute_efficiency = %g\n"
		      "prefill_compute_efficiency = %g\nstep_overhead_ms = %g\n",
		      p->hbm_efficiency, p->compute_efficiency, wzs_prefill_efficiency(p),
		      p->step_overhead_s * 1e3);
	if (p->prefill_moe_efficiency > 0)
		wz_buf_printf(out, "prefill_moe_efficiency = %g\n", p->prefill_moe_efficiency);
	else
		wz_buf_printf(out, "prefill_moe_efficiency = (measured for the expert split)\n");
	if (p->expert_parallel || p->prefill_expert_routing != WZS_ROUTING_BALANCED)
		wz_buf_printf(out, "prefill_expert_routing = %s\n",
			      wzs_routing_name(p->prefill_expert_routing));
	wz_buf_printf(out, "prefill_attention_efficiency = %g\nep_comm_sm_share = %.4f\n",
		      p->prefill_attention_efficiency, p->ep_comm_sm_share);
	wz_buf_printf(out, "attention_heads = %g\nattention_math = %s\nexpert_activations = %s\n"
		      "prefill_pair_dims = %g\nprefill_chunk_tokens = %ld\ndecode_cost = %s\n",
		      p->attention_heads, p->attention_fp8 ? "fp8" : "bf16",
		      p->expert_act_bits == 4 ? "fp4" : p->expert_act_bits == 8 ? "fp8" : "bf16",
		      p->prefill_pair_dims,
		      p->prefill_chunk_tokens,
		      p->decode_cost[0] ? p->decode_cost : "(1 for every format)");
	if (p->prefill_cp > 1)
		wz_buf_printf(out, "prefill_context_parallel = %ld\nprefill_cp_min_tokens = %ld\n"
			      "prefill_cp_efficiency = %g\n",
			      p->prefill_cp, p->prefill_cp_min_tokens, p->prefill_cp_efficiency);
	wz_buf_printf(out, "mtp_acceptance = %g\nmtp_draft_tokens = %ld\n", p->mtp_acceptance,
		      p->mtp_draft_tokens);
	wz_buf_printf(out, "serving = %s\n", p->disaggregated ? "disaggregated" : "aggregated");
	if (p->disaggregated)
		wz_buf_printf(out, "prefill_gpus_per_replica = %ld\nkv_transfer_gbps = %g\n",
			      p->prefill_gpus, p->kv_transfer_gbps);
	if (p->disaggregated && p->prefill_gpus_search[0])
		wz_buf_printf(out, "prefill_gpus_search = %s\n", p->prefill_gpus_search);
	if (wzs_pool_instance_width(p, p->prefill_gpus) > 0)
		wz_buf_printf(out, "prefill_instance_gpus = %ld\nprefill_pipeline_stages = %ld\n"
			      "prefill_batch_tokens = %ld\n",
			      wzs_pool_instance_width(p, p->prefill_gpus), p->prefill_pp_stages,
			      p->prefill_batch_tokens);
	wz_buf_printf(out, "expert_parallel = %s\n", p->expert_parallel ? "yes" : "no");
	if (p->expert_parallel) {
		wz_buf_printf(out, "dual_batch_overlap = %s\nep_imbalance = %g\n",
			      p->dual_batch_overlap ? "yes" : "no", p->ep_imbalance);
		if (p->ep_dispatch_gbps > 0)
			wz_buf_printf(out, "ep_dispatch_gbps = %g\n", p->ep_dispatch_gbps);
		else
			wz_buf_printf(out, "ep_dispatch_gbps = (DeepEP's figure for the EP size)\n");
		if (p->ep_combine_gbps > 0)
			wz_buf_printf(out, "ep_combine_gbps = %g\n", p->ep_combine_gbps);
		else
			wz_buf_printf(out, "ep_combine_gbps = (DeepEP's figure for the EP size)\n");
		const struct {
			const char *key;
			long v;
		} shape[] = { { "moe_layers", p->moe_layers },
			      { "moe_top_k", p->moe_top_k },
			      { "moe_routed_experts", p->moe_routed_experts },
			      { "moe_shared_experts", p->moe_shared_experts },
			      { "moe_intermediate_size", p->moe_intermediate },
			      { "moe_n_group", p->moe_n_group },
			      { "moe_topk_group", p->moe_topk_group } };
		for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++)
			if (shape[i].v >= 0)
				wz_buf_printf(out, "%s = %ld\n", shape[i].key, shape[i].v);
			else
				wz_buf_printf(out, "%s = (the model's catalog row)\n", shape[i].key);
	}
	wz_buf_printf(out, "max_batch = %ld\nqueue_timeout_s = %g\nidle_policy = %s\npark_after_s = %g\n",
		      p->max_batch, p->queue_timeout_s, wzs_idle_policy_name(p->idle_policy),
		      p->park_after_s);
	wz_buf_printf(out, "offload_format = %s\noffload_cpu_gib = %g\noffload_ssd_gib = %g\n",
		      p->offload_format, p->offload_cpu_gib, p->offload_ssd_gib);
	if (p->host_link_gbps > 0)
		wz_buf_printf(out, "host_link_gbps = %g\n", p->host_link_gbps);
	else
		wz_buf_printf(out, "host_link_gbps = (half the GPU's pcie_gbps)\n");
	wz_buf_printf(out, "ssd_gbps = %g\ngpus_per_node = %ld\n", p->ssd_gbps, p->gpus_per_node);
	wz_buf_printf(out, "restore_rates = %s\nrestore_cores_per_node = %g\n",
		      p->restore_rates[0] ? p->restore_rates : "(none)", p->restore_cores_per_node);
	wz_buf_printf(out, "prefix_cache_hbm_gib = %g\nprefix_cache_cpu_gib = %g\n"
		      "prefix_cache_ssd_gib = %g\n",
		      p->prefix_hbm_gib, p->prefix_cpu_gib, p->prefix_ssd_gib);
	if (p->prefix_routing)
		wz_buf_printf(out, "prefix_routing = yes\n");
	if (p->route_balance)
		wz_buf_printf(out, "route_load_balance = yes\nroute_balance_abs = %ld\n"
			      "route_balance_rel = %g\nroute_balance_moves = %s\n",
			      p->route_balance_abs, p->route_balance_rel,
			      p->route_balance_moves ? "yes" : "no");
	else
		wz_buf_printf(out, "route_load_balance = no\n");
	if (p->prefix_hbm_gib + p->prefix_cpu_gib + p->prefix_ssd_gib > 0)
		wz_buf_printf(out, "prefix_cache_evict = %s\n",
			      p->prefix_evict_segments ? "segments" : "blocks");
	wz_buf_printf(out, "pop_think_s = %g\npop_turns = %g\npop_prompt_tokens = %g\n"
		      "pop_output_tokens = %g\npop_length_dist = %s\n",
		      p->think_s, p->turns, p->prompt_tokens, p->output_tokens,
		      p->length_dist == WZS_DIST_FIXED ? "fixed" : "exponential");
	if (p->initial_context > 0)
		wz_buf_printf(out, "pop_initial_context = %ld\n", p->initial_context);
	else
		wz_buf_printf(out, "pop_initial_context = (context - mean turns taken x "
				   "(pop_prompt_tokens + pop_output_tokens))\n");
	wz_buf_printf(out, "pop_steady_start = %s\n", p->steady_start ? "yes" : "no");
	wz_buf_printf(out, "pop_prefixes = %ld\n", p->prefixes);
	if (p->prefixes > 0)
		wz_buf_printf(out, "pop_prefix_tokens = %ld\npop_prefix_zipf = %g\n", p->prefix_tokens,
			      p->prefix_zipf);
	wz_buf_printf(out, "duration_s = %g\nwarmup_s = %g\noccupancy_interval_s = %g\nseed = %llu\n",
		      p->duration_s, p->warmup_s, p->occupancy_interval_s,
		      (unsigned long long)p->seed);
	wz_buf_printf(out, "search_seeds = %ld\n", p->search_seeds);
}
