/* Simulator parameters: defaults, scenario keys and validation (params.h). */
#include "sim/params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const wzs_scenario_keys[] = {
	"ttft_p99_s", "tpot_p99_s", "hbm_efficiency", "compute_efficiency",
	"prefill_compute_efficiency", "prefill_moe_efficiency", "prefill_attention_efficiency",
	"ep_comm_sm_share", "step_overhead_ms",
	"attention_heads", "attention_math", "prefill_pair_dims", "prefill_chunk_tokens",
	"prefill_context_parallel", "prefill_cp_min_tokens", "prefill_cp_efficiency", "decode_cost",
	"mtp_acceptance", "mtp_draft_tokens", "serving", "prefill_gpus_per_replica",
	"kv_transfer_gbps", "prefill_gpus_search", "expert_parallel", "dual_batch_overlap", "ep_imbalance",
	"ep_dispatch_gbps", "ep_combine_gbps", "moe_layers", "moe_top_k", "moe_routed_experts",
	"moe_shared_experts", "moe_intermediate_size", "moe_n_group", "moe_topk_group",
	"max_batch", "queue_timeout_s",
	"idle_policy", "park_after_s", "offload_format", "offload_cpu_gib", "offload_ssd_gib",
	"host_link_gbps", "ssd_gbps", "gpus_per_node", "restore_rates", "restore_cores_per_node",
	"prefix_cache_hbm_gib", "prefix_cache_cpu_gib", "prefix_cache_ssd_gib", "prefix_routing",
	"prefix_cache_evict", "route_load_balance", "route_balance_abs", "route_balance_rel",
	"route_balance_moves",
	"pop_prefixes", "pop_prefix_tokens", "pop_prefix_zipf",
	"pop_think_s", "pop_turns",
	"pop_prompt_tokens", "pop_output_tokens", "pop_length_dist", "pop_initial_context",
	"pop_steady_start",
	"duration_s", "warmup_s", "occupancy_interval_s", "seed",
	"search_seeds", NULL
};

wz_err wzs_idle_policy_parse(const char *name, wzs_idle_policy *out, wz_diag *diag)
{
	if (!strcmp(name, "resident"))
		*out = WZS_IDLE_RESIDENT;
	else if (!strcmp(name, "offload"))
		*out = WZS_IDLE_OFFLOAD;
	else if (!strcmp(name, "drop"))
		*out = WZS_IDLE_DROP;
	else
		return wz_diag_set(diag, WZ_ERR_INPUT, "idle policy '%s': use resident, offload or drop",
				   name);
	return WZ_OK;
}

const char *wzs_idle_policy_name(wzs_idle_policy p)
{
	return p == WZS_IDLE_OFFLOAD ? "offload" : p == WZS_IDLE_DROP ? "drop" : "resident";
}

void wzs_params_default(wzs_params *p)
{
	memset(p, 0, sizeof *p);
	p->ttft_p99_s = 5.0;
	p->tpot_p99_s = 0.10;
	/* Sustained shares of the data-sheet peaks that serving kernels reach
	 * (FlashMLA reports ~3 of 3.35 TB/s and ~660 of 989 TFLOPS on H800). */
	p->hbm_efficiency = 0.80;
	p->compute_efficiency = 0.60;
	/* Time per step outside the GPU's kernels.  No primary measurement for
	 * a DeepSeek-V3 deployment was found: vLLM's v0.6.0 performance post
	 * (blog.vllm.ai/2024/09/05/perf-update.html) gives shares, not times
	 * (29% scheduling for Llama 3 8B on an H100 before its fixes), and
	 * overlap schedulers (SGLang v0.4, TensorRT-LLM) hide most of it.  5 ms
	 * is a documented parameter (docs/validation.md), not a measurement. */
	p->step_overhead_s = 0.005;
	p->attention_heads = 128; /* DeepSeek-V3's num_attention_heads */
	p->attention_fp8 = 0;     /* FlashMLA computes attention in BF16 */
	/* Prefill runs MLA un-absorbed, as multi-head attention with query/key
	 * heads of 128 + 64 and value heads of 128 (DeepSeek-V3's
	 * qk_nope_head_dim, qk_rope_head_dim, v_head_dim). */
	p->prefill_pair_dims = 320;
	/* Prefill per operation, each from NVIDIA AIConfigurator's tables
	 * measured with SGLang 0.5.10 on H100 SXM, DeepSeek-V3 in FP8
	 * (github.com/ai-dynamo/aiconfigurator, aic-core/.../systems/data/
	 * h100_sxm/mla/sglang/0.5.10/wideep_context_mla_perf.parquet, the MLA
	 * module of one layer, 128 heads, fa3): 1 prompt of 16,384 tokens in
	 * 20.739 ms and 16 prompts of 1,024 in 6.990 ms, the same 16,384
	 * tokens through the same projections, so the 1.031e13 more attention
	 * FLOPs (128 heads x 2 x 320 a pair) took 13.749 ms: 750 TFLOP/s, 0.76
	 * of the BF16 peak; the projections (q_b, kv_b, o: 3.439e8 FLOPs a
	 * token) the other 6.073 ms of the short prompts' row: 928 TFLOP/s,
	 * 0.47 of the FP8 peak, norms, RoPE and quantization included.  The
	 * routed experts' share is wzs_prefill_moe_share's table. */
	p->prefill_compute_efficiency = 0.47;
	p->prefill_moe_efficiency = 0;
	p->prefill_attention_efficiency = 0.76;
	/* DeepEP's normal kernels run on SMs: DeepSeek-V3's report (arXiv
	 * 2412.19437, sec. 3.2.2) "only 20 SMs are sufficient to fully utilize
	 * the bandwidths of IB and NVLink", of an H800's 132, and DeepEP's
	 * Buffer defaults to 20 (its low-latency kernels hold none: decode is
	 * not slowed). */
	p->ep_comm_sm_share = 20.0 / 132.0;
	/* Chunked prefill, as vLLM and SGLang schedule it (SGLang's default
	 * chunked_prefill_size), so a long prompt does not stall decode. */
	p->prefill_chunk_tokens = 8192;
	/* Context-parallel prefill off, so that results without it stay as they
	 * were; docs/validation.md shows the product page's fleet both ways.
	 * DeepSeek's own prefill spreads one request's attention over 4 GPUs
	 * (TP4 with sequence parallelism, DeepSeek-V3 report arXiv:2412.19437,
	 * sec. 3.4.1).  When on, a prompt longer than one chunk (the chunk's
	 * 8192 tokens: shorter ones finish in one pass on their own rank) is
	 * spread, at the 93% parallelization efficiency Meta measured for
	 * pass-KV ring attention on H100 (Yang et al., "Context Parallelism for
	 * Scalable Million-Token Inference", arXiv:2411.01783: 1M-token prefill
	 * of Llama 3 405B on 16 nodes). */
	p->prefill_cp = 1;
	p->prefill_cp_min_tokens = 8192;
	p->prefill_cp_efficiency = 0.93;
	p->decode_cost[0] = '\0';
	/* Off unless the scenario says the engine runs MTP.  DeepSeek-V3's
	 * technical report (arXiv:2412.19437, sec. 5.4.3) measures an acceptance
	 * of 85-90% for the second token, one draft, and 1.8x the TPS. */
	p->mtp_acceptance = 0;
	p->mtp_draft_tokens = 1;
	/* Aggregated serving unless the scenario splits prefill from decode.
	 * The cache moves over each GPU's RDMA NIC: a DGX H100 has one 400 Gb/s
	 * ConnectX-7 per GPU (NVIDIA DGX H100 user guide), 50 GB/s, and DeepEP
	 * measures 43-58 GB/s per H800 GPU over RDMA (github.com/deepseek-ai/DeepEP). */
	p->disaggregated = 0;
	p->prefill_gpus = 0;
	p->kv_transfer_gbps = 50;
	/* Expert parallelism off unless the scenario asks (docs/validation.md
	 * says what it changes).  The MoE shape comes from the model's
	 * catalog row (models.csv's moe_* columns, from the model's config)
	 * unless a key sets it (-1: not set).  No published figure of the load
	 * imbalance between GPUs was found: 1 is perfect balance, a
	 * parameter. */
	p->expert_parallel = 0;
	p->dual_batch_overlap = 0;
	p->ep_imbalance = 1;
	p->ep_dispatch_gbps = p->ep_combine_gbps = 0;
	p->moe_layers = p->moe_top_k = p->moe_routed_experts = -1;
	p->moe_shared_experts = p->moe_intermediate = -1;
	p->moe_n_group = p->moe_topk_group = -1;
	p->max_batch = 256;
	p->queue_timeout_s = 60;
	p->idle_policy = WZS_IDLE_RESIDENT;
	p->park_after_s = 0;
	snprintf(p->offload_format, sizeof p->offload_format, "same");
	p->offload_cpu_gib = 1536;  /* of a 2 TiB 8-GPU node */
	p->offload_ssd_gib = 28000; /* 8 x 3.84 TB NVMe, as in a DGX H100 */
	p->host_link_gbps = 0;
	p->ssd_gbps = 25;
	p->gpus_per_node = 8;
	/* DGX H100: dual Xeon Platinum 8480C, 112 cores in all (NVIDIA DGX H100
	 * user guide, https://docs.nvidia.com/dgx/dgxh100-user-guide/introduction-to-dgxh100.html).
	 * Every core decoding restores is an upper bound on the host's rate:
	 * the serving engine's own threads need some of them. */
	p->restore_rates[0] = '\0';
	p->restore_cores_per_node = 112;
	/* No prefix cache and no shared prefixes unless the scenario asks, so
	 * results without them stay as they were. */
	p->prefix_hbm_gib = p->prefix_cpu_gib = p->prefix_ssd_gib = 0;
	p->prefixes = 0;
	p->prefix_routing = 0;
	/* SGLang's router (sgl-project/sglang, sgl-router/src/policies/mod.rs
	 * at d112e89, CacheAwareConfig::default: balance_abs_threshold 32,
	 * balance_rel_threshold 1.1; cache_aware.rs at 026f853, select_worker:
	 * imbalanced when max - min > abs and max > rel x min, then the
	 * shortest queue).  Its load is the requests it sent a worker that
	 * have not finished. */
	p->route_balance = 1;
	p->route_balance_abs = 32;
	p->route_balance_rel = 1.1;
	/* Later turns stay with their cache unless asked: sticky sessions, as
	 * a router keyed by conversation keeps them (SGLang's moves them while
	 * load is out of balance: route_balance_moves = yes). */
	p->route_balance_moves = 0;
	p->prefix_evict_segments = 0;
	p->prefix_tokens = 0;
	/* Zipf's exponent 1: a common fit of request popularity (Breslau et
	 * al., "Web caching and Zipf-like distributions", INFOCOM 1999, fit
	 * 0.64-0.83 for web requests); a parameter, not a measurement of
	 * system prompts. */
	p->prefix_zipf = 1.0;
	/* Long sessions of modest turns: a session's first prefill (its whole
	 * initial context) is then a small share of the work, as it is for users
	 * who stay at long context. */
	p->think_s = 30;
	p->turns = 50;
	p->prompt_tokens = 500;
	p->output_tokens = 300;
	p->length_dist = WZS_DIST_EXP;
	p->initial_context = 0;
	p->steady_start = 1;
	p->duration_s = 3600;
	p->warmup_s = 300;
	p->occupancy_interval_s = 60;
	p->seed = 1;
	p->search_seeds = 1;
}

/* Occupancy samples of one run: each is kept in memory and archived. */
#define WZS_MAX_SAMPLES 1e6

typedef struct {
	const char *key;
	double *dest;
	double scale;    /* file unit -> internal unit */
	double min, max; /* in file units */
	int min_open;    /* 1: min itself is not allowed */
} range;

static wz_err check_range(const range *r, double v, const char *where, int line, wz_diag *diag)
{
	if (isnan(v) || v > r->max || v < r->min || (r->min_open && v == r->min)) {
		if (line > 0)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: %g is not in %s%g, %g]", where,
					   line, r->key, v, r->min_open ? "(" : "[", r->min, r->max);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %s: %g is not in %s%g, %g]", where, r->key,
				   v, r->min_open ? "(" : "[", r->min, r->max);
	}
	return WZ_OK;
}

/* The numeric keys with what the model allows; anything outside is a typo
 * or a unit mistake, refused rather than simulated. */
#define RANGES(p)                                                                            \
	range ranges[] = {                                                                   \
		{ "ttft_p99_s", &(p)->ttft_p99_s, 1, 0, 86400, 1 },                          \
		{ "tpot_p99_s", &(p)->tpot_p99_s, 1, 0, 3600, 1 },                           \
		{ "hbm_efficiency", &(p)->hbm_efficiency, 1, 0.01, 1, 0 },                   \
		{ "compute_efficiency", &(p)->compute_efficiency, 1, 0.01, 1, 0 },           \
		{ "prefill_compute_efficiency", &(p)->prefill_compute_efficiency, 1, 0.01, 1, 0 }, \
		{ "prefill_moe_efficiency", &(p)->prefill_moe_efficiency, 1, 0.01, 1, 0 }, \
		{ "prefill_attention_efficiency", &(p)->prefill_attention_efficiency, 1, 0.01, 1, 0 }, \
		{ "ep_comm_sm_share", &(p)->ep_comm_sm_share, 1, 0, 0.9, 0 },                \
		{ "step_overhead_ms", &(p)->step_overhead_s, 1e-3, 0, 10000, 0 },            \
		{ "attention_heads", &(p)->attention_heads, 1, 1, 4096, 0 },                 \
		{ "mtp_acceptance", &(p)->mtp_acceptance, 1, 0, 0.999, 0 },                  \
		{ "prefill_cp_efficiency", &(p)->prefill_cp_efficiency, 1, 0, 1, 1 },        \
		{ "kv_transfer_gbps", &(p)->kv_transfer_gbps, 1, 0, 1e5, 1 },                \
		{ "ep_imbalance", &(p)->ep_imbalance, 1, 1, 64, 0 },                          \
		{ "route_balance_rel", &(p)->route_balance_rel, 1, 1, 1e6, 0 },               \
		{ "ep_dispatch_gbps", &(p)->ep_dispatch_gbps, 1, 0, 1e5, 0 },                 \
		{ "ep_combine_gbps", &(p)->ep_combine_gbps, 1, 0, 1e5, 0 },                   \
		{ "prefill_pair_dims", &(p)->prefill_pair_dims, 1, 1, 65536, 0 },            \
		{ "queue_timeout_s", &(p)->queue_timeout_s, 1, 0, 86400, 1 },                \
		{ "park_after_s", &(p)->park_after_s, 1, 0, 86400, 0 },                      \
		{ "offload_cpu_gib", &(p)->offload_cpu_gib, 1, 0, 1e6, 0 },                  \
		{ "offload_ssd_gib", &(p)->offload_ssd_gib, 1, 0, 1e8, 0 },                  \
		{ "host_link_gbps", &(p)->host_link_gbps, 1, 0, 1e5, 0 },                    \
		{ "ssd_gbps", &(p)->ssd_gbps, 1, 0, 1e5, 1 },                                \
		{ "restore_cores_per_node", &(p)->restore_cores_per_node, 1, 0, 1e5, 1 },    \
		{ "prefix_cache_hbm_gib", &(p)->prefix_hbm_gib, 1, 0, 1e4, 0 },               \
		{ "prefix_cache_cpu_gib", &(p)->prefix_cpu_gib, 1, 0, 1e6, 0 },               \
		{ "prefix_cache_ssd_gib", &(p)->prefix_ssd_gib, 1, 0, 1e8, 0 },               \
		{ "pop_prefix_zipf", &(p)->prefix_zipf, 1, 0, 10, 0 },                        \
		{ "pop_think_s", &(p)->think_s, 1, 0, 1e6, 0 },                              \
		{ "pop_turns", &(p)->turns, 1, 1, 1e9, 0 },                                  \
		{ "pop_prompt_tokens", &(p)->prompt_tokens, 1, 1, 1e8, 0 },                  \
		{ "pop_output_tokens", &(p)->output_tokens, 1, 1, 1e8, 0 },                  \
		{ "duration_s", &(p)->duration_s, 1, 0, 3.2e7, 1 },                          \
		{ "warmup_s", &(p)->warmup_s, 1, 0, 3.2e7, 0 },                              \
		{ "occupancy_interval_s", &(p)->occupancy_interval_s, 1, 0, 1e7, 1 },        \
	}

wz_err wzs_params_from_kv(wz_kv *kv, wzs_params *p, wz_diag *diag)
{
	const char *origin = wz_kv_origin(kv);
	wz_err err;
	RANGES(p);
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		range *r = &ranges[i];
		if (!wz_kv_get(kv, r->key))
			continue;
		double v;
		if ((err = wz_kv_get_double(kv, r->key, 0, 0, &v, diag)))
			return err;
		if ((err = check_range(r, v, origin, wz_kv_line(kv, r->key), diag)))
			return err;
		*r->dest = v * r->scale;
	}
	struct { const char *key; long *dest; long min, max; } longs[] = {
		{ "max_batch", &p->max_batch, 1, 1000000 },
		{ "prefill_chunk_tokens", &p->prefill_chunk_tokens, 1, 100000000 },
		{ "prefill_cp_min_tokens", &p->prefill_cp_min_tokens, 1, 100000000 },
		{ "mtp_draft_tokens", &p->mtp_draft_tokens, 1, 8 },
		{ "prefill_gpus_per_replica", &p->prefill_gpus, 1, 4096 },
		{ "gpus_per_node", &p->gpus_per_node, 1, 4096 },
		{ "pop_initial_context", &p->initial_context, 1, 100000000 },
		{ "pop_prefixes", &p->prefixes, 0, 10000000 },
		{ "moe_layers", &p->moe_layers, 1, 10000 },
		{ "moe_top_k", &p->moe_top_k, 1, 1024 },
		{ "moe_routed_experts", &p->moe_routed_experts, 1, 100000 },
		{ "moe_shared_experts", &p->moe_shared_experts, 0, 1024 },
		{ "moe_intermediate_size", &p->moe_intermediate, 1, 1000000 },
		{ "moe_n_group", &p->moe_n_group, 1, 1024 },
		{ "moe_topk_group", &p->moe_topk_group, 1, 1024 },
		{ "pop_prefix_tokens", &p->prefix_tokens, 1, 100000000 },
		{ "route_balance_abs", &p->route_balance_abs, 0, 100000000 },
		{ "search_seeds", &p->search_seeds, 1, WZS_MAX_SEARCH_SEEDS },
	};
	for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++) {
		const char *v = wz_kv_get(kv, longs[i].key);
		if (!v)
			continue;
		long x;
		if (wz_parse_count(v, &x))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: '%s' is not a whole number",
					   origin, wz_kv_line(kv, longs[i].key), longs[i].key, v);
		if (x < longs[i].min || x > longs[i].max)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: %ld is not in %ld..%ld", origin,
					   wz_kv_line(kv, longs[i].key), longs[i].key, x, longs[i].min,
					   longs[i].max);
		*longs[i].dest = x;
	}
	const char *v;
	if ((v = wz_kv_get(kv, "seed"))) {
		long x;
		if (wz_parse_long(v, &x) || x < 0)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: seed: '%s' is not a whole number >= 0",
					   origin, wz_kv_line(kv, "seed"), v);
		p->seed = (uint64_t)x;
	}
	if ((v = wz_kv_get(kv, "idle_policy"))) {
		wz_diag inner;
		if (wzs_idle_policy_parse(v, &p->idle_policy, &inner))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: idle_policy: %s", origin,
					   wz_kv_line(kv, "idle_policy"), inner.msg);
	}
	if ((v = wz_kv_get(kv, "serving"))) {
		if (strcmp(v, "aggregated") && strcmp(v, "disaggregated"))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: serving: '%s': use aggregated or disaggregated", origin,
					   wz_kv_line(kv, "serving"), v);
		p->disaggregated = !strcmp(v, "disaggregated");
	}
	if ((v = wz_kv_get(kv, "prefill_gpus_search"))) {
		long sizes[WZS_MAX_POOL_SIZES];
		wz_diag inner;
		if (strlen(v) >= sizeof p->prefill_gpus_search)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: prefill_gpus_search: value too long",
					   origin, wz_kv_line(kv, "prefill_gpus_search"));
		snprintf(p->prefill_gpus_search, sizeof p->prefill_gpus_search, "%s", v);
		int n = wzs_prefill_pool_sizes(p, sizes, &inner);
		if (n < 0)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: prefill_gpus_search: %s", origin,
					   wz_kv_line(kv, "prefill_gpus_search"), inner.msg);
		if (p->prefill_gpus < 1)
			p->prefill_gpus = sizes[0];
	}
	if (p->disaggregated && p->prefill_gpus < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: serving: disaggregated needs prefill_gpus_per_replica (the "
				   "prefill pool's GPUs per replica)",
				   origin, wz_kv_line(kv, "serving"));
	if ((v = wz_kv_get(kv, "prefill_context_parallel"))) {
		long x;
		if (!strcmp(v, "no"))
			p->prefill_cp = 1;
		else if (wz_parse_count(v, &x) || x < 1 || x > 4096)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: prefill_context_parallel: '%s': use no or a number of "
					   "ranks from 1 to 4096",
					   origin, wz_kv_line(kv, "prefill_context_parallel"), v);
		else
			p->prefill_cp = x;
	}
	if ((v = wz_kv_get(kv, "attention_math"))) {
		if (strcmp(v, "bf16") && strcmp(v, "fp8"))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: attention_math: '%s': use bf16 or fp8",
					   origin, wz_kv_line(kv, "attention_math"), v);
		p->attention_fp8 = !strcmp(v, "fp8");
	}
	struct { const char *key; int *dest; } flags[] = {
		{ "expert_parallel", &p->expert_parallel },
		{ "dual_batch_overlap", &p->dual_batch_overlap },
		{ "prefix_routing", &p->prefix_routing },
		{ "route_load_balance", &p->route_balance },
		{ "route_balance_moves", &p->route_balance_moves },
	};
	for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
		if (!(v = wz_kv_get(kv, flags[i].key)))
			continue;
		if (strcmp(v, "yes") && strcmp(v, "no"))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: '%s': use yes or no", origin,
					   wz_kv_line(kv, flags[i].key), flags[i].key, v);
		*flags[i].dest = !strcmp(v, "yes");
	}
	if ((v = wz_kv_get(kv, "prefix_cache_evict"))) {
		if (strcmp(v, "blocks") && strcmp(v, "segments"))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: prefix_cache_evict: '%s': use blocks or segments", origin,
					   wz_kv_line(kv, "prefix_cache_evict"), v);
		p->prefix_evict_segments = !strcmp(v, "segments");
	}
	if ((v = wz_kv_get(kv, "pop_steady_start"))) {
		if (strcmp(v, "yes") && strcmp(v, "no"))
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: pop_steady_start: '%s': use yes or no",
					   origin, wz_kv_line(kv, "pop_steady_start"), v);
		p->steady_start = !strcmp(v, "yes");
	}
	if ((v = wz_kv_get(kv, "pop_length_dist"))) {
		if (strcmp(v, "exponential") && strcmp(v, "fixed"))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: pop_length_dist: '%s': use exponential or fixed", origin,
					   wz_kv_line(kv, "pop_length_dist"), v);
		p->length_dist = !strcmp(v, "fixed") ? WZS_DIST_FIXED : WZS_DIST_EXP;
	}
	struct { const char *key; char *dest; size_t size; } strings[] = {
		{ "offload_format", p->offload_format, sizeof p->offload_format },
		{ "decode_cost", p->decode_cost, sizeof p->decode_cost },
		{ "restore_rates", p->restore_rates, sizeof p->restore_rates },
	};
	for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
		if (!(v = wz_kv_get(kv, strings[i].key)))
			continue;
		if (strlen(v) >= strings[i].size)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %s: value too long", origin,
					   wz_kv_line(kv, strings[i].key), strings[i].key);
		snprintf(strings[i].dest, strings[i].size, "%s", v);
	}
	double factor;
	wz_diag inner;
	if (wzs_decode_cost(p, "", &factor, &inner))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: decode_cost: %s", origin,
				   wz_kv_line(kv, "decode_cost"), inner.msg);
	if (p->duration_s / p->occupancy_interval_s > WZS_MAX_SAMPLES)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: occupancy_interval_s: %g s samples the %g s run %.3g times "
				   "(at most %g)",
				   origin, wz_kv_line(kv, "occupancy_interval_s") ? wz_kv_line(kv, "occupancy_interval_s")
										: wz_kv_line(kv, "duration_s"),
				   p->occupancy_interval_s, p->duration_s,
				   p->duration_s / p->occupancy_interval_s, WZS_MAX_SAMPLES);
	if (p->prefixes > 0 && p->prefix_tokens < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: pop_prefixes: shared prefixes need pop_prefix_tokens (their "
				   "length in tokens)",
				   origin, wz_kv_line(kv, "pop_prefixes"));
	if (p->prefix_cpu_gib > p->offload_cpu_gib || p->prefix_ssd_gib > p->offload_ssd_gib) {
		const char *key = p->prefix_cpu_gib > p->offload_cpu_gib ? "prefix_cache_cpu_gib"
									 : "prefix_cache_ssd_gib";
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: %s: more than the offload tier's %s (the prefix cache is "
				   "part of it)",
				   origin, wz_kv_line(kv, key) ? wz_kv_line(kv, key) : 1, key,
				   p->prefix_cpu_gib > p->offload_cpu_gib ? "offload_cpu_gib"
									  : "offload_ssd_gib");
	}
	if (p->warmup_s >= p->duration_s)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: warmup_s: %g s leaves nothing of duration_s %g s",
				   origin, wz_kv_line(kv, "warmup_s") ? wz_kv_line(kv, "warmup_s")
								: wz_kv_line(kv, "duration_s"),
				   p->warmup_s, p->duration_s);
	return WZ_OK;
}

wz_err wzs_params_validate(const wzs_params *p, const char *where, wz_diag *diag)
{
	wzs_params copy = *p;
	if (!(copy.prefill_moe_efficiency > 0))
		copy.prefill_moe_efficiency = wzs_prefill_moe_share(p, 8); /* unset: the table's */
	RANGES(&copy);
	for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++) {
		wz_err err = check_range(&ranges[i], *ranges[i].dest / ranges[i].scale, where, 0, diag);
		if (err)
			return err;
	}
	if (p->duration_s / p->occupancy_interval_s > WZS_MAX_SAMPLES)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: an occupancy sample every %g s is %.3g samples of the %g s run "
				   "(at most %g)",
				   where, p->occupancy_interval_s, p->duration_s / p->occupancy_interval_s,
				   p->duration_s, WZS_MAX_SAMPLES);
	if (p->disaggregated && p->prefill_gpus < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: disaggregated serving needs prefill_gpus_per_replica in the "
				   "scenario (the prefill pool's GPUs per replica)",
				   where);
	if (p->disaggregated && p->prefill_cp > 1) {
		long sizes[WZS_MAX_POOL_SIZES];
		int n = wzs_prefill_pool_sizes(p, sizes, diag);
		if (n < 0)
			return WZ_ERR_INPUT;
		for (int i = 0; i < n; i++)
			if (sizes[i] % p->prefill_cp)
				return wz_diag_set(diag, WZ_ERR_INPUT,
						   "%s: prefill_context_parallel = %ld does not divide a "
						   "prefill pool of %ld GPUs into groups",
						   where, p->prefill_cp, sizes[i]);
	}
	if (p->prefixes > 0 && p->prefix_tokens < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: %ld shared prefixes need pop_prefix_tokens >= 1", where,
				   p->prefixes);
	if (p->prefix_cpu_gib > p->offload_cpu_gib || p->prefix_ssd_gib > p->offload_ssd_gib)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: the prefix cache (%g GiB CPU, %g GiB SSD per node) is larger "
				   "than the offload tier it is part of (%g, %g)",
				   where, p->prefix_cpu_gib, p->prefix_ssd_gib, p->offload_cpu_gib,
				   p->offload_ssd_gib);
	if (p->warmup_s >= p->duration_s)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: warmup %g s leaves nothing of the %g s run",
				   where, p->warmup_s, p->duration_s);
	return WZ_OK;
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
 * permutes and the activation), one layer, tokens routed evenly: NVIDIA
 * AIConfigurator's h100_sxm/moe/sglang/0.5.10/wideep_context_moe_perf.parquet,
 * distribution "uniform", the largest token count measured at each EP
 * size (65,536 at EP4, 131,072 at EP8, 262,144 at EP16, 524,288 above):
 * a GPU's 6 x 7168 x 2048 x 8 FLOPs a token over its EP share, over the
 * latency, of the 1,978.9 TFLOP/s FP8 peak.  EP4 10.659 ms (1,083
 * TFLOP/s), EP8 11.099 (1,040), EP16 12.225 (944), EP32 14.265 (809),
 * EP64 9.368 (616), EP128 7.009 (412), EP256 5.755 (251).  A split
 * between two sizes takes the larger's (the slower), below 4 EP4's. */
static const struct {
	int gpus;
	double share;
} moe_prefill_rows[] = {
	{ 4, 1083.0 / 1978.9 },	 { 8, 1040.0 / 1978.9 },  { 16, 944.0 / 1978.9 },
	{ 32, 809.0 / 1978.9 },	 { 64, 616.0 / 1978.9 }, { 128, 412.0 / 1978.9 },
	{ 256, 251.0 / 1978.9 },
};

double wzs_prefill_moe_share(const wzs_params *p, int gpus)
{
	if (p->prefill_moe_efficiency > 0)
		return p->prefill_moe_efficiency;
	int n = (int)(sizeof moe_prefill_rows / sizeof moe_prefill_rows[0]);
	for (int i = 0; i < n; i++)
		if (gpus <= moe_prefill_rows[i].gpus)
			return moe_prefill_rows[i].share;
	return moe_prefill_rows[n - 1].share;
}

void wzs_params_describe(const wzs_params *p, wz_buf *out)
{
	wz_buf_printf(out, "ttft_p99_s = %g\ntpot_p99_s = %g\n", p->ttft_p99_s, p->tpot_p99_s);
	wz_buf_printf(out, "hbm_efficiency = %g\ncompute_efficiency = %g\n"
		      "prefill_compute_efficiency = %g\nstep_overhead_ms = %g\n",
		      p->hbm_efficiency, p->compute_efficiency, wzs_prefill_efficiency(p),
		      p->step_overhead_s * 1e3);
	if (p->prefill_moe_efficiency > 0)
		wz_buf_printf(out, "prefill_moe_efficiency = %g\n", p->prefill_moe_efficiency);
	else
		wz_buf_printf(out, "prefill_moe_efficiency = (measured for the expert split)\n");
	wz_buf_printf(out, "prefill_attention_efficiency = %g\nep_comm_sm_share = %.4f\n",
		      p->prefill_attention_efficiency, p->ep_comm_sm_share);
	wz_buf_printf(out, "attention_heads = %g\nattention_math = %s\nprefill_pair_dims = %g\n"
		      "prefill_chunk_tokens = %ld\ndecode_cost = %s\n",
		      p->attention_heads, p->attention_fp8 ? "fp8" : "bf16", p->prefill_pair_dims,
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

void wzs_params_model_defaults(wzs_params *p, wz_kv *kv, const wzm_model *model)
{
	if (!model)
		return;
	if ((!kv || !wz_kv_get(kv, "attention_heads")) && model->num_attention_heads > 0)
		p->attention_heads = model->num_attention_heads;
	double dims = model->qk_nope_head_dim + model->rope_dim + model->v_head_dim;
	if ((!kv || !wz_kv_get(kv, "prefill_pair_dims")) && dims > 0 && dims <= 65536)
		p->prefill_pair_dims = dims;
}
