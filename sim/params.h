/* The simulator's parameters: latency targets, roofline efficiencies,
 * scheduler and offload settings, the synthetic population and the run
 * length, read from a scenario's keys (wzplan-scenario(5)).  Every default
 * lives in wzs_params_default and is printed with the results. */
#ifndef WZS_PARAMS_H
#define WZS_PARAMS_H

#include <stdint.h>

#include "common/wz_error.h"
#include "common/wz_kv.h"
#include "common/wz_str.h"
#include "costmodel/catalog.h"

/* How tokens spread over the routed experts in NVIDIA AIConfigurator's
 * measured MoE rows (sim/params_derive.c, wzs_prefill_moe_share). */
typedef enum {
	WZS_ROUTING_BALANCED = 0, /* evenly: its "uniform" rows */
	WZS_ROUTING_EPLB = 1,     /* SGLang with EPLB: power-law 0.6 at 0.8 of the tokens */
	WZS_ROUTING_POWER_LAW = 2 /* its default without EPLB: power-law 1.01 */
} wzs_routing;

typedef enum {
	WZS_IDLE_RESIDENT = 0, /* idle sessions keep their cache blocks */
	WZS_IDLE_OFFLOAD = 1,  /* parked in CPU memory, then SSD; dropped when both are full */
	WZS_IDLE_DROP = 2,     /* freed; recomputed by prefill on the next turn */
} wzs_idle_policy;

typedef enum {
	WZS_DIST_EXP = 0,   /* exponential with the given mean */
	WZS_DIST_FIXED = 1, /* always the mean */
} wzs_dist;

wz_err wzs_idle_policy_parse(const char *name, wzs_idle_policy *out /* OUT */, wz_diag *diag);
const char *wzs_idle_policy_name(wzs_idle_policy p);

typedef struct {
	/* latency targets (fleet search) */
	double ttft_p99_s, tpot_p99_s;
	/* A TTFT target that grows with the prompt, as targets for long
	 * contexts are stated: a request's target is ttft_p99_s plus this per
	 * 1,000 tokens it brings to prefill (its new tokens: a new session's
	 * whole first prompt, a later turn's prompt; not a recompute of its
	 * own dropped cache), and the p99 of each request's TTFT over its own
	 * target must be at most 1; 0: one target for every request. */
	double ttft_per_1k_tokens_s;
	/* roofline step time */
	double hbm_efficiency, compute_efficiency, step_overhead_s;
	/* Prefill per operation (sim/replica.c): the share of peak FLOP/s
	 * its dense weight matmuls sustain (attention projections, shared
	 * experts, dense layers), its routed experts' grouped GEMMs (0: the
	 * measured share for the replica's expert split, wzs_prefill_moe_share)
	 * and its attention; and the share of the SMs DeepEP's normal kernels
	 * hold while a prefill's all-to-all overlaps its computation. */
	double prefill_compute_efficiency;
	double prefill_moe_efficiency;
	/* the routing whose load the prefill routed experts' measured share
	 * is read at (wzs_prefill_moe_share): WZS_ROUTING_* */
	int prefill_expert_routing;
	double prefill_attention_efficiency;
	double ep_comm_sm_share;
	double attention_heads;   /* query heads, for attention FLOPs */
	double prefill_pair_dims; /* per head: FLOPs / 2 of one (query, key) pair in prefill */
	long prefill_chunk_tokens;/* prefill tokens per pass between decode steps */
	/* context-parallel prefill (attention data parallelism only): a request
	 * with at least prefill_cp_min_tokens to prefill spreads its attention
	 * over prefill_cp ranks of its replica (ring attention, pass-KV), each
	 * at prefill_cp_efficiency, while its cache circulates over the ring;
	 * 1: off, every prefill on its own rank */
	long prefill_cp;
	long prefill_cp_min_tokens;
	double prefill_cp_efficiency;
	int attention_fp8;        /* attention math at the FP8 peak (else BF16) */
	/* the activations' width in the routed experts' matmuls where the
	 * model ships its experts apart (models.csv expert_bits): 4, 8 or 16
	 * bits; the matmul runs at the peak of the wider of its two operands
	 * (sim/replica.c, matmul_bits) */
	int expert_act_bits;
	char decode_cost[256];    /* "format:factor, ..." cache-read cost per byte */
	/* multi-token prediction (speculative decode with the model's MTP
	 * head): each step verifies 1 + mtp_draft_tokens tokens per request and
	 * the i-th draft is kept with probability mtp_acceptance^i */
	double mtp_acceptance;    /* 0: no MTP */
	long mtp_draft_tokens;
	/* prefill/decode disaggregation: each replica's prefills run on a
	 * separate pool of prefill_gpus GPUs, and the cache they compute moves
	 * to the decode GPUs in the GPU format's bytes at kv_transfer_gbps */
	int disaggregated;
	long prefill_gpus;        /* per replica; needed when disaggregated */
	double kv_transfer_gbps;  /* GB/s per prefill GPU */
	/* prefill pool sizes per replica that `size` tries, keeping the fleet
	 * of fewest GPUs; "" sizes only prefill_gpus */
	char prefill_gpus_search[128];
	/* the pool as instances (sim/pool.c): prefill_instance_gpus GPUs each
	 * (0: none, each pool GPU prefills one prompt at a time), split into
	 * prefill_pipeline_stages stages of their layers, the routed experts
	 * spread over a stage's GPUs; a pass takes up to prefill_batch_tokens
	 * new tokens a rank from the queue, a longer prompt in chunks */
	long prefill_instance_gpus;
	long prefill_pp_stages;
	long prefill_batch_tokens;
	/* expert parallelism (sim/moe.h): dispatch and combine all-to-alls per
	 * MoE layer at DeepEP's measured bandwidths (or ep_*_gbps), the busiest
	 * GPU's routed-expert work ep_imbalance times the mean, and optionally
	 * dual-batch overlap of communication with compute */
	int expert_parallel;
	int dual_batch_overlap;
	double ep_imbalance;
	double ep_dispatch_gbps, ep_combine_gbps; /* 0: DeepEP's figure for the EP size */
	long moe_layers, moe_top_k, moe_routed_experts, moe_shared_experts, moe_intermediate;
	long moe_n_group, moe_topk_group; /* group-limited routing (-1: the catalog's, else none) */
	/* scheduler */
	long max_batch;           /* running requests per attention rank */
	double queue_timeout_s;   /* a request waiting longer is refused */
	wzs_idle_policy idle_policy;
	double park_after_s;      /* idle time before a session is parked or dropped */
	/* offload tier, per node */
	char offload_format[48];  /* "same" or a codec format name */
	double offload_cpu_gib, offload_ssd_gib;
	double host_link_gbps;    /* GB/s per GPU; 0: half the catalog's pcie_gbps */
	double ssd_gbps;          /* GB/s per node */
	long gpus_per_node;
	/* A wzx restore is decoded on the host: no faster than these cores
	 * decode it at the measured per-core rate (sim/restore_rates.h). */
	char restore_rates[512];  /* rates file (bench/bench_restore); "" none */
	double restore_cores_per_node; /* host cores decoding restores, per node */
	/* shared prefix cache (sim/prefix_cache.h): capacity set aside for
	 * prefixes many sessions share, per GPU in HBM and per node in CPU
	 * memory and on SSD, out of the session cache pool and the offload
	 * tier; all 0: no prefix cache */
	double prefix_hbm_gib, prefix_cpu_gib, prefix_ssd_gib;
	/* prefix-aware routing: a new session whose shared prefix a replica's
	 * prefix cache holds (some of) goes to that replica (the most of it
	 * held, then the highest tier, then the most free blocks) while it has the blocks the request needs, as
	 * SGLang's cache-aware router and Dynamo's KV-aware router send a
	 * request to the worker holding its prefix; 0: by free memory only */
	int prefix_routing;
	/* load balance before affinity (SGLang's router, cache_aware policy):
	 * while the most and least loaded replicas' requests in flight differ
	 * by more than route_balance_abs and the most is over route_balance_rel
	 * times the least, a new session goes to the least loaded replica
	 * instead; 0 (route_load_balance = no): never */
	int route_balance;
	long route_balance_abs;
	double route_balance_rel;
	/* the same rule for a session's later turns, as the router sends every
	 * request: out of balance, a turn goes to the least loaded replica and
	 * its cache where it was is dropped (the turn recomputes its context);
	 * 0 (route_balance_moves = no, the default): later turns stay with
	 * their cache */
	int route_balance_moves;
	/* out of the prefix cache's last tier: 0 a leaf's blocks from its end
	 * (vLLM's block LRU), 1 whole leaf segments (SGLang's radix cache) */
	int prefix_evict_segments;
	/* synthetic closed population */
	double think_s;           /* mean think time between turns */
	double turns;             /* mean turns per session (geometric) */
	double prompt_tokens, output_tokens; /* means per turn */
	wzs_dist length_dist;     /* for think time, prompt and output lengths */
	long initial_context;     /* tokens a new session starts with; 0: wzs_initial_context */
	int steady_start;         /* users start part-way through sessions (else all new) */
	/* shared prefixes: each new session begins with one of pop_prefixes
	 * system prompts of pop_prefix_tokens, chosen with Zipf popularity
	 * (the i-th most popular with weight 1 / i^pop_prefix_zipf); 0: none */
	long prefixes;
	long prefix_tokens;
	double prefix_zipf;
	/* run */
	double duration_s, warmup_s, occupancy_interval_s;
	uint64_t seed;
	/* the fleet search: each fleet size it tries runs seeds seed ..
	 * seed + search_seeds - 1 and meets the targets only if every run
	 * does (search.c) */
	long search_seeds;
	/* the deployment search (sim/deploy, runs/deploy_run.c): size each
	 * format at its cheapest configuration, with these keys pinned
	 * ("key=value, ..."; wzd_space_pin) */
	int search;
	char config[256];
} wzs_params;

#define WZS_MAX_SEARCH_SEEDS 64

#define WZS_MAX_POOL_SIZES 16

/* The prefill pool sizes a fleet search tries: prefill_gpus_search's
 * list, else prefill_gpus alone.  Returns how many (at most
 * WZS_MAX_POOL_SIZES), or -1 with a message when the list is malformed. */
int wzs_prefill_pool_sizes(const wzs_params *p, long *sizes /* OUT */, wz_diag *diag);

/* GPUs of one prefill instance in a pool of pool_gpus: prefill_instance_gpus,
 * the whole pool when only prefill_pipeline_stages is set, 0 without
 * instances (each pool GPU prefills one prompt at a time). */
long wzs_pool_instance_width(const wzs_params *p, long pool_gpus);

/* The pool's expert-parallel width: a stage of an instance, else the pool. */
long wzs_pool_ep_gpus(const wzs_params *p);
#define WZS_MAX_PP_STAGES 64

/* Keys this module reads from a scenario (NULL-ended), the names of
 * wzs_keys in its order. */
extern const char *const wzs_scenario_keys[];

/* The scenario keys in one table (params.c): what a key holds, the field
 * of wzs_params it sets, the range a file may give and a help line. */
typedef enum {
	WZS_KEY_NUM,   /* a number in [min, max] ((min, max] when min_open) */
	WZS_KEY_COUNT, /* a whole number in min..max */
	WZS_KEY_FLAG,  /* yes or no */
	WZS_KEY_TEXT,  /* a string shorter than the field */
	WZS_KEY_WORD,  /* parsed by name (idle_policy, serving, seed, ...) */
} wzs_scenario_key_kind;

typedef struct {
	const char *name;
	wzs_scenario_key_kind kind;
	size_t offset, size; /* the field in wzs_params */
	double scale;        /* the field holds the file's value times this */
	double min, max;
	int min_open;
	const char *help;
} wzs_scenario_key;

extern const wzs_scenario_key wzs_keys[];
extern const int wzs_nkeys;

void wzs_params_default(wzs_params *p /* OUT */);

/* Reads the keys present in kv over the defaults.  Malformed or absurd
 * values fail with WZ_ERR_INPUT naming origin:line and the key. */
wz_err wzs_params_from_kv(wz_kv *kv, wzs_params *p /* OUT */, wz_diag *diag);

/* Checks values set from the command line too; `where` prefixes messages. */
wz_err wzs_params_validate(const wzs_params *p, const char *where, wz_diag *diag);

/* The attention shape from the model's catalog row where the scenario kv
 * does not give it: attention_heads from num_attention_heads, and
 * prefill_pair_dims from qk_nope_head_dim + rope_dim + v_head_dim (MLA's
 * un-absorbed prefill); each left as it is when kv has the key or the
 * catalog does not give all it needs.  kv may be NULL (no scenario). */
void wzs_params_model_defaults(wzs_params *p, wz_kv *kv, const wzm_model *model);

/* The decode cost factor for a format from p->decode_cost (1 when absent). */
wz_err wzs_decode_cost(const wzs_params *p, const char *format, double *out /* OUT */,
		       wz_diag *diag);

/* Tokens a new session starts with so that users hold `context` tokens on
 * average: pop_initial_context, or context less the mean turns already
 * taken at a random moment times the tokens per turn ((turns - 1) / 2
 * turns for fixed-length sessions, turns - 1 for geometric ones, since a
 * random moment falls in a long session more often).  0 when that leaves
 * less than one token (the turns outgrow the context). */
long wzs_initial_context(const wzs_params *p, long context);

/* The share of peak FLOP/s prefill's dense weight matmuls sustain:
 * prefill_compute_efficiency. */
double wzs_prefill_efficiency(const wzs_params *p);

/* The share of peak FLOP/s prefill's routed-expert grouped GEMMs sustain
 * with the routed experts split over `gpus` GPUs: prefill_moe_efficiency
 * where set, else the measured share for that split and
 * prefill_expert_routing (sim/params_derive.c). */
double wzs_prefill_moe_share(const wzs_params *p, int gpus);

/* prefill_expert_routing's name: balanced, eplb or power-law. */
const char *wzs_routing_name(int routing);

/* Appends "key = value" lines for every parameter (the report's inputs). */
void wzs_params_describe(const wzs_params *p, wz_buf *out);

#endif
