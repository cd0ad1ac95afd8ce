/* Simulator parameters: the scenario keys' table, their names and the defaults
 * (params.h); params_parse.c reads and checks them, params_derive.c derives
 * from them. */
#include "sim/params.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Every scenario key the simulator reads, once: its name, its kind, the
 * field of wzs_params it sets, the range a file may give (in the file's
 * unit; the field holds value x scale) and its help line.  The parser,
 * the list of known keys (wzs_scenario_keys), the range checks and their
 * messages, and tests/sim/test_keys (every key in wzplan-scenario(5), every
 * default within its range) read it; the defaults, with their sources, are
 * in wzs_params_default.  Kinds: NUM a number in [min, max] ((min, max]
 * when open), COUNT a whole number in min..max, FLAG yes or no, TEXT a
 * string that fits the field, WORD a value parsed by name below. */
#define WZS_KEYS(X)                                                                                \
	X("ttft_p99_s", NUM, ttft_p99_s, 1, 0, 86400, 1, "target p99 time to first token, s")  \
	X("tpot_p99_s", NUM, tpot_p99_s, 1, 0, 3600, 1, "target p99 time per output token, s") \
	X("ttft_per_1k_tokens_s", NUM, ttft_per_1k_tokens_s, 1, 0, 3600, 0,                        \
	  "the TTFT target's part per 1,000 new tokens of a request, s")                           \
	X("hbm_efficiency", NUM, hbm_efficiency, 1, 0.01, 1, 0,                                    \
	  "share of the HBM bandwidth decode sustains")                                            \
	X("compute_efficiency", NUM, compute_efficiency, 1, 0.01, 1, 0,                            \
	  "share of the peak FLOP/s decode sustains")                                              \
	X("prefill_compute_efficiency", NUM, prefill_compute_efficiency, 1, 0.01, 1, 0,            \
	  "share of the peak prefill's dense matmuls sustain")                                     \
	X("prefill_moe_efficiency", NUM, prefill_moe_efficiency, 1, 0.01, 1, 0,                    \
	  "share of the peak prefill's routed experts sustain (unset: measured by EP size)")       \
	X("prefill_expert_routing", WORD, prefill_expert_routing, 1, 0, 0, 0,                      \
	  "balanced, eplb or power-law: the routed experts' load in prefill")                     \
	X("prefill_attention_efficiency", NUM, prefill_attention_efficiency, 1, 0.01, 1, 0,        \
	  "share of the peak prefill's attention sustains")                                        \
	X("ep_comm_sm_share", NUM, ep_comm_sm_share, 1, 0, 0.9, 0,                                 \
	  "share of the SMs the expert all-to-all holds during an overlapped prefill")             \
	X("step_overhead_ms", NUM, step_overhead_s, 1e-3, 0, 10000, 0,                             \
	  "time per decode step outside the GPU's kernels, ms")                                    \
	X("attention_heads", NUM, attention_heads, 1, 1, 4096, 0, "query heads, for attention FLOPs") \
	X("attention_math", WORD, attention_fp8, 1, 0, 0, 0, "bf16 or fp8: attention's peak")      \
	X("expert_activations", WORD, expert_act_bits, 1, 0, 0, 0,                                 \
	  "fp4, fp8 or bf16: activations into experts shipped at expert_bits")                     \
	X("prefill_pair_dims", NUM, prefill_pair_dims, 1, 1, 65536, 0,                             \
	  "FLOPs / 2 of one (query, key) pair per head in prefill")                                \
	X("prefill_chunk_tokens", COUNT, prefill_chunk_tokens, 1, 1, 100000000, 0,                 \
	  "prefill tokens per pass between decode steps")                                          \
	X("prefill_context_parallel", WORD, prefill_cp, 1, 0, 0, 0,                                \
	  "no, or ranks a long prefill's attention is spread over")                                \
	X("prefill_cp_min_tokens", COUNT, prefill_cp_min_tokens, 1, 1, 100000000, 0,               \
	  "prefill tokens from which context parallelism is used")                                 \
	X("prefill_cp_efficiency", NUM, prefill_cp_efficiency, 1, 0, 1, 1,                         \
	  "efficiency of each context-parallel rank")                                              \
	X("decode_cost", TEXT, decode_cost, 1, 0, 0, 0,                                            \
	  "format:factor, ...: a format's cache-read cost per byte against fp8-mix")               \
	X("mtp_acceptance", NUM, mtp_acceptance, 1, 0, 0.999, 0,                                   \
	  "multi-token prediction: the first draft's acceptance (0: no MTP)")                      \
	X("mtp_draft_tokens", COUNT, mtp_draft_tokens, 1, 1, 8, 0, "draft tokens per step")        \
	X("serving", WORD, disaggregated, 1, 0, 0, 0, "aggregated or disaggregated")               \
	X("prefill_gpus_per_replica", COUNT, prefill_gpus, 1, 1, 4096, 0,                          \
	  "disaggregated: the prefill pool's GPUs per replica")                                    \
	X("kv_transfer_gbps", NUM, kv_transfer_gbps, 1, 0, 1e5, 1,                                 \
	  "disaggregated: GB/s per prefill GPU to the decode GPUs")                                \
	X("prefill_gpus_search", WORD, prefill_gpus_search, 1, 0, 0, 0,                            \
	  "disaggregated: prefill pool sizes a fleet search tries")                                \
	X("prefill_instance_gpus", COUNT, prefill_instance_gpus, 1, 1, 4096, 0,                    \
	  "disaggregated: GPUs of one prefill instance, which batches its prompts")                \
	X("prefill_pipeline_stages", COUNT, prefill_pp_stages, 1, 1, WZS_MAX_PP_STAGES, 0,                        \
	  "disaggregated: pipeline stages of a prefill instance")                                  \
	X("prefill_batch_tokens", COUNT, prefill_batch_tokens, 1, 1, 100000000, 0,                 \
	  "prefill instances: new tokens a rank takes into one pass (a chunk)")                    \
	X("expert_parallel", FLAG, expert_parallel, 1, 0, 0, 0,                                    \
	  "experts spread over the replica's GPUs, with the all-to-all")                           \
	X("dual_batch_overlap", FLAG, dual_batch_overlap, 1, 0, 0, 0,                              \
	  "two micro-batches overlap communication with compute")                                  \
	X("ep_imbalance", NUM, ep_imbalance, 1, 1, 64, 0,                                          \
	  "the busiest GPU's routed-expert work over the mean")                                    \
	X("ep_dispatch_gbps", NUM, ep_dispatch_gbps, 1, 0, 1e5, 0,                                 \
	  "all-to-all dispatch GB/s (0: DeepEP's figure for the EP size)")                         \
	X("ep_combine_gbps", NUM, ep_combine_gbps, 1, 0, 1e5, 0,                                   \
	  "all-to-all combine GB/s (0: DeepEP's figure for the EP size)")                          \
	X("moe_layers", COUNT, moe_layers, 1, 1, 10000, 0, "MoE layers (else the catalog's)")      \
	X("moe_top_k", COUNT, moe_top_k, 1, 1, 1024, 0, "routed experts per token")                \
	X("moe_routed_experts", COUNT, moe_routed_experts, 1, 1, 100000, 0, "routed experts")      \
	X("moe_shared_experts", COUNT, moe_shared_experts, 1, 0, 1024, 0, "shared experts")        \
	X("moe_intermediate_size", COUNT, moe_intermediate, 1, 1, 1000000, 0,                      \
	  "an expert's intermediate size")                                                         \
	X("moe_n_group", COUNT, moe_n_group, 1, 1, 1024, 0, "group-limited routing: groups")       \
	X("moe_topk_group", COUNT, moe_topk_group, 1, 1, 1024, 0,                                  \
	  "group-limited routing: groups a token may use")                                         \
	X("max_batch", COUNT, max_batch, 1, 1, 1000000, 0, "running requests per attention rank")  \
	X("queue_timeout_s", NUM, queue_timeout_s, 1, 0, 86400, 1,                                 \
	  "a request waiting longer is refused, s")                                                \
	X("idle_policy", WORD, idle_policy, 1, 0, 0, 0,                                            \
	  "resident, offload or drop: idle sessions between turns")                                \
	X("park_after_s", NUM, park_after_s, 1, 0, 86400, 0,                                       \
	  "idle time before a session is parked or dropped, s")                                    \
	X("offload_format", TEXT, offload_format, 1, 0, 0, 0,                                      \
	  "format of parked sessions (same: the GPU format)")                                      \
	X("offload_cpu_gib", NUM, offload_cpu_gib, 1, 0, 1e6, 0, "offload tier: CPU GiB per node") \
	X("offload_ssd_gib", NUM, offload_ssd_gib, 1, 0, 1e8, 0, "offload tier: SSD GiB per node") \
	X("host_link_gbps", NUM, host_link_gbps, 1, 0, 1e5, 0,                                     \
	  "GB/s per GPU to host memory (0: half the catalog's PCIe)")                              \
	X("ssd_gbps", NUM, ssd_gbps, 1, 0, 1e5, 1, "SSD GB/s per node")                            \
	X("gpus_per_node", COUNT, gpus_per_node, 1, 1, 4096, 0, "GPUs sharing a node's host")      \
	X("restore_rates", TEXT, restore_rates, 1, 0, 0, 0,                                        \
	  "host decode rates of restores (bench/bench_restore's file)")                            \
	X("restore_cores_per_node", NUM, restore_cores_per_node, 1, 0, 1e5, 1,                     \
	  "host cores decoding restores, per node")                                                \
	X("prefix_cache_hbm_gib", NUM, prefix_hbm_gib, 1, 0, 1e4, 0,                               \
	  "prefix cache: HBM GiB per GPU")                                                         \
	X("prefix_cache_cpu_gib", NUM, prefix_cpu_gib, 1, 0, 1e6, 0,                               \
	  "prefix cache: CPU GiB per node (part of the offload tier)")                             \
	X("prefix_cache_ssd_gib", NUM, prefix_ssd_gib, 1, 0, 1e8, 0,                               \
	  "prefix cache: SSD GiB per node (part of the offload tier)")                             \
	X("prefix_routing", FLAG, prefix_routing, 1, 0, 0, 0,                                      \
	  "a request goes to the replica holding its prefix")                                      \
	X("prefix_cache_evict", WORD, prefix_evict_segments, 1, 0, 0, 0,                           \
	  "blocks (vLLM) or segments (SGLang)")                                                     \
	X("route_load_balance", FLAG, route_balance, 1, 0, 0, 0,                                   \
	  "new sessions go to the least loaded replica when out of balance")                       \
	X("route_balance_abs", COUNT, route_balance_abs, 1, 0, 100000000, 0,                       \
	  "out of balance: requests in flight differ by more than this")                           \
	X("route_balance_rel", NUM, route_balance_rel, 1, 1, 1e6, 0,                               \
	  "out of balance: the most loaded has over this times the least")                         \
	X("route_balance_moves", FLAG, route_balance_moves, 1, 0, 0, 0,                            \
	  "out of balance, later turns move too (their cache dropped)")                            \
	X("pop_prefixes", COUNT, prefixes, 1, 0, 10000000, 0, "population: shared prefixes")       \
	X("pop_prefix_tokens", COUNT, prefix_tokens, 1, 1, 100000000, 0,                           \
	  "population: a shared prefix's tokens")                                                  \
	X("pop_prefix_zipf", NUM, prefix_zipf, 1, 0, 10, 0,                                        \
	  "population: Zipf exponent of the prefixes' popularity")                                 \
	X("pop_think_s", NUM, think_s, 1, 0, 1e6, 0, "population: mean think time, s")             \
	X("pop_turns", NUM, turns, 1, 1, 1e9, 0, "population: mean turns per session")             \
	X("pop_prompt_tokens", NUM, prompt_tokens, 1, 1, 1e8, 0,                                   \
	  "population: mean new prompt tokens per turn")                                           \
	X("pop_output_tokens", NUM, output_tokens, 1, 1, 1e8, 0,                                   \
	  "population: mean output tokens per turn")                                               \
	X("pop_length_dist", WORD, length_dist, 1, 0, 0, 0,                                        \
	  "population: exponential or fixed lengths and think times")                              \
	X("pop_initial_context", COUNT, initial_context, 1, 1, 100000000, 0,                       \
	  "population: tokens a new session starts with")                                          \
	X("pop_steady_start", FLAG, steady_start, 1, 0, 0, 0,                                      \
	  "population: users start part-way through their sessions")                               \
	X("duration_s", NUM, duration_s, 1, 0, 3.2e7, 1, "seconds simulated")                      \
	X("warmup_s", NUM, warmup_s, 1, 0, 3.2e7, 0, "seconds before measuring")                   \
	X("occupancy_interval_s", NUM, occupancy_interval_s, 1, 0, 1e7, 1,                         \
	  "seconds between cache occupancy samples")                                               \
	X("seed", WORD, seed, 1, 0, 0, 0, "random seed, a whole number >= 0")                      \
	X("search_seeds", COUNT, search_seeds, 1, 1, WZS_MAX_SEARCH_SEEDS, 0,                      \
	  "seeds each fleet size is tried with")                                                    \
	X("search", FLAG, search, 1, 0, 0, 0,                                                       \
	  "size each format at the deployment search's cheapest configuration")                     \
	X("config", TEXT, config, 1, 0, 0, 0,                                                       \
	  "key=value, ...: configuration keys the deployment search pins")

#define KEY_ENTRY(name, kind, field, scale, min, max, open, help)                              \
	{ name, WZS_KEY_##kind, offsetof(wzs_params, field), sizeof(((wzs_params *)0)->field),  \
	  scale, min, max, open, help },
const wzs_scenario_key wzs_keys[] = { WZS_KEYS(KEY_ENTRY) };
const int wzs_nkeys = (int)(sizeof wzs_keys / sizeof wzs_keys[0]);

#define KEY_NAME(name, ...) name,
const char *const wzs_scenario_keys[] = { WZS_KEYS(KEY_NAME) NULL };

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
	/* DeepSeek-V4's reference inference quantizes the activations to FP8
	 * (per 128, UE8M0 scales) before its FP4 expert GEMM: kernel.py
	 * fp4_gemm, "C[M,N] = A_fp8[M,K] @ B_fp4[N,K]^T" (huggingface.co/
	 * deepseek-ai/DeepSeek-V4-Pro, inference/, read through verbatim
	 * copies); so FP4 experts run at the FP8 rate unless a scenario says
	 * its kernel quantizes them to FP4 too. */
	p->expert_act_bits = 8;
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
	/* Balanced routing unless the scenario says otherwise, as DeepSeek's
	 * published profile runs it ("an absolutely balanced MoE routing
	 * strategy", github.com/deepseek-ai/profile-data). */
	p->prefill_expert_routing = WZS_ROUTING_BALANCED;
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
	/* No instances unless the scenario asks, so that results without them
	 * stay as they were (sim/pool.c).  An instance's pass takes SGLang's
	 * default max_prefill_tokens a rank (python/sglang/srt/server_args.py,
	 * max_prefill_tokens = 16384), the 16K tokens a GPU DeepSeek's prefill
	 * profile runs (github.com/deepseek-ai/profile-data, README). */
	p->prefill_instance_gpus = 0;
	p->prefill_pp_stages = 1;
	p->prefill_batch_tokens = 16384;
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
