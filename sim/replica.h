/* A serving replica as the simulator sees it: its cache pools in blocks
 * (from costmodel's memory accounting), its offload tier, and roofline times
 * for a decode step and a prefill (DESIGN.md, "Traffic and serving model"). */
#ifndef WZS_REPLICA_H
#define WZS_REPLICA_H

#include "common/wz_error.h"
#include "common/wz_str.h"
#include "costmodel/capacity.h"
#include "costmodel/catalog.h"
#include "sim/moe.h"
#include "sim/params.h"

#define WZS_TOUCHED_TABLE 1024

typedef struct {
	/* memory (from wzm_memory_compute) */
	wzm_memory mem;
	int gpus;                  /* GPUs per replica */
	int ranks;                 /* cache pools: one per GPU with attention DP, one with TP */
	int tensor_parallel;
	long blocks_per_rank;
	int block_tokens;
	double token_bytes;        /* GPU-tier bytes of one token, all layers */
	double offload_token_bytes;/* offload-tier bytes of one token, all layers */
	/* roofline */
	double weight_bytes_gpu;   /* this GPU's share of the weights */
	double active_share;       /* params_active / params_total: share a token reads */
	double active_params;      /* per token */
	/* wzs_weights_touched for whole batches below WZS_TOUCHED_TABLE, made once
	 * so that a decode step needs no pow() */
	double touched[WZS_TOUCHED_TABLE];
	/* From a batch of touched_sat on (any batch, whole or not), the
	 * formula's pow term is below 2^-54 and 1 - it rounds to 1: the
	 * value is touched_full, so a prefill pass of thousands of tokens
	 * needs no pow() either (INFINITY where no such batch was found) */
	double touched_sat, touched_full;
	double hbm_bps;            /* bytes/s per GPU, times efficiency */
	double weight_flops;       /* FLOP/s per GPU for weight matmuls, times efficiency */
	double expert_flops;       /* the same for the routed experts' (FP4 experts, FP8 rest) */
	double decode_weight_flops;/* a decode step's weight matmuls at one rate, both shares */
	double attn_flops;         /* FLOP/s per GPU for attention, times efficiency */
	/* Prefill per operation: the dense weight matmuls' FLOP/s
	 * (prefill_compute_efficiency), attention's
	 * (prefill_attention_efficiency) and the routed experts' over the
	 * replica and over the prefill pool (wzs_prefill_moe_share for each
	 * split); the routed experts' share of the active parameters (0 for a
	 * dense model or one without a catalogued MoE shape under TP); and the
	 * seconds of weight matmuls one token costs one GPU, the replica's and
	 * the pool's, with the busiest GPU's routed experts at ep_imbalance */
	double prefill_weight_flops, prefill_attn_flops;
	double prefill_moe_flops, pool_moe_flops;
	double routed_active_share;
	double prefill_token_s, pool_token_s;
	/* with dual-batch overlap, DeepEP's normal kernels hold this share of
	 * the SMs while a prefill's computation runs beside them */
	double comm_sm_share;
	double attn_flops_pair;    /* FLOPs of one query token against one cached token, all layers */
	double prefill_flops_pair; /* the same in prefill (un-absorbed attention) */
	/* DeepSeek Sparse Attention (dsa_topk > 0; 0: dense attention): per
	 * query the indexer scores every cached token, reading its keys
	 * (side_token_bytes of a token, all layers) at idx_flops_pair FLOPs a
	 * pair (all layers, at idx_flops FLOP/s), and the attention reads and
	 * scores only the dsa_topk tokens it selects (record_token_bytes of
	 * each); idx_prefill_ratio is an indexer pair's prefill time over an
	 * attention pair's (wzs_model_prefill_pairs) */
	double dsa_topk;
	double record_token_bytes, side_token_bytes;
	double idx_flops_pair, idx_flops, idx_prefill_ratio;
	/* context-parallel prefill (1 rank: off): a request with at least
	 * cp_min_tokens to prefill runs its attention on cp_ranks ranks, an
	 * aligned group of its replica's, each at cp_efficiency, while the
	 * cache it attends to passes round the group's ring at cp_link_bps
	 * (NVLink one way within a node, the NIC across nodes) */
	int cp_ranks;
	long cp_min_tokens;
	double cp_efficiency;
	double cp_link_bps;
	double overhead_s;
	double decode_cost;        /* cache bytes read are multiplied by this */
	double verify_tokens;      /* query tokens per request in a decode step (1 + MTP drafts) */
	double tokens_per_step;    /* expected tokens a request gains per step (1 without MTP) */
	/* Drafting: each draft is one forward of the MTP module, one more
	 * transformer block (DeepSeek-V3 report, arXiv:2412.19437, sec. 2.2),
	 * so a step carries 1 + drafts / layers of its per-layer work (its
	 * roofline and its all-to-all); 1 without MTP */
	double draft_factor;
	/* offload tier, per replica */
	double cpu_bytes, ssd_bytes;
	double host_link_bps;      /* per GPU */
	double ssd_bps;            /* per replica (nodes x per-node) */
	double layers;             /* a token's cache is this many token-layers */
	/* token-layers/s the host decodes for one GPU's restores (its share of
	 * the node's cores); 0: the offload bytes need no decode */
	double restore_decode_tlps;
	/* shared prefix cache, per replica: capacity in bytes of each tier
	 * (sim/prefix_cache.h; all 0: none) and a token's bytes there, the GPU
	 * format's in HBM and the offload format's in CPU memory and on SSD.
	 * The HBM tier is one rank's: with attention data parallelism every
	 * rank keeps its own copy of the prefixes its requests use. */
	double prefix_capacity[3];
	double prefix_token_bytes[3];
	/* prefill/decode disaggregation (0 prefill GPUs: aggregated) */
	int prefill_gpus;          /* the replica's prefill pool */
	double prefill_weight_bytes_gpu; /* a prefill GPU's share of the weights */
	double kv_link_bps;        /* bytes/s out of one prefill GPU */
	/* prefill instances (sim/pool.c; pool_instance_gpus 0: none): an
	 * instance's GPUs, its pipeline stages and a stage's GPUs (its expert
	 * parallelism and attention ranks), the new tokens a rank takes a pass,
	 * and a stage's hand-off of a token's activations to the next: bytes
	 * per token and bytes/s per GPU */
	int pool_instance_gpus, pool_stages, pool_stage_gpus;
	long pool_batch_tokens;
	double pool_hop_bytes_token, pool_hop_bps;
	wzs_moe moe;               /* expert parallelism's terms (off: no communication) */
	/* Decode under two-batch overlap (sim/overlap.c), with expert
	 * parallelism: the bytes of the attention output projections a GPU
	 * holds, and FLOPs a query token costs in them, in the routed experts
	 * (at the mean load) and in every other weight matmul */
	double o_proj_bytes;
	double o_proj_flops_token, routed_flops_token, rest_flops_token;
	const char *peak_weights_field, *peak_attn_field; /* catalog fields used */
	const char *peak_experts_field;
} wzs_replica_model;

/* A two-batch-overlap decode step's terms that depend on its batch alone,
 * for one micro-batch (half the batch): the weight matmuls before the
 * dispatch (attention's input projections, the shared and dense layers)
 * and the output projections after attention, their weights' read plus
 * their FLOPs, the routed experts the longer of the two, each with the
 * time a decode matmul takes beyond them (sim/overlap.c); and the
 * micro-batch's dispatch and combine (wzs_moe_decode_comm_parts). */
typedef struct {
	double pre_s, pre_flop_s, mlp_s, mlp_flop_s, o_s, o_flop_s;
	double mem_s; /* the three's weight reads */
	double dispatch_s, combine_s;
} wzs_tbo_batch;

/* Fills *out for a decode step of `batch` requests on m (expert
 * parallelism with dual-batch overlap). */
void wzs_tbo_batch_terms(const wzs_replica_model *m, double batch, wzs_tbo_batch *out /* OUT */);

/* The step's time, overhead and drafts included, from its batch's terms
 * and its core attention over the whole batch (the busiest rank's cache
 * bytes to read and attention seconds of computation), as DeepSeek's and
 * SGLang's decode pipeline schedules two micro-batches (sim/overlap.c);
 * where not NULL, whether computation outweighs memory traffic and
 * whether the all-to-all outlasts the computation it overlaps. */
double wzs_tbo_step(const wzs_replica_model *m, const wzs_tbo_batch *b, double cache_bytes,
		    double attn_compute_s, int *compute_bound, int *network_bound);

/* Builds the model for one format whose GPU record is record_per_layer bytes
 * per token per layer and whose offload record is offload_per_layer.
 * `context` is the scenario's (for the memory breakdown's users per GPU).
 * Fails naming the catalog field when a value is missing. */
wz_err wzs_replica_model_build(const wzm_model *model, const wzm_gpu *gpu,
			       const wzm_memory_params *mem, long context, double record_per_layer,
			       double offload_per_layer, double decode_cost, const wzs_params *p,
			       wzs_replica_model *out /* OUT */, wz_diag *diag);

/* For a model of hybrid layer kinds (costmodel/layers.h), replaces the
 * dense or DSA terms of m with the kinds': windows and top-k selections in
 * the sparse-attention terms that stop growing at m->dsa_topk tokens,
 * indexer keys and compressed entries read whole per cached token, and
 * the offload bytes at the context; no change for any other model.
 * Called by wzs_replica_model_build. */
void wzs_replica_hybrid(const wzm_model *model, double record_per_layer, double offload_per_layer,
			long context, wzs_replica_model *m);

/* Sets the host decode rate of restores from a measured per-core rate
 * (sim/restore_rates.h; 0: no decode): each GPU's restores get its share,
 * restore_cores_per_node / gpus_per_node, of the node's cores. */
void wzs_replica_model_set_restore_decode(wzs_replica_model *m, const wzs_params *p,
					  double per_core_tlps);

/* Seconds to bring `tokens` cached tokens back over a path of `link_bps`
 * bytes/s: the transfer of their offload bytes or the host's decode of
 * them, whichever is slower (the two run as a pipeline).  *decode_bound
 * (may be NULL) says whether the decode was the slower. */
double wzs_restore_time(const wzs_replica_model *m, double tokens, double link_bps,
			int *decode_bound /* OUT */);

/* Share of the weights a decode step over `batch` tokens reads.  Each token
 * reads a share a = active/total of the weights (its experts); if tokens
 * choose experts independently and uniformly, the expected number of
 * distinct experts out of E with k per token is E(1 - (1 - k/E)^b), so the
 * share touched is 1 - (1 - a)^b: exactly a for one token, all of it for
 * large batches.  Dense models (a = 1) always read everything.  Shared
 * experts and attention weights make the real share somewhat larger at
 * small batches; this errs on the fast side there. */
double wzs_weights_touched(const wzs_replica_model *m, double batch);

/* Time of one decode step of the replica: `batch` requests in all, the
 * busiest attention rank holding `rank_tokens` cached tokens of its running
 * requests (with TP, every running request's). */
double wzs_step_time(const wzs_replica_model *m, double batch, double rank_tokens);

/* Whether such a step's roofline is its FLOPs rather than the bytes it
 * reads (what binds a decode-heavy fleet: compute or HBM bandwidth). */
int wzs_step_compute_bound(const wzs_replica_model *m, double batch, double rank_tokens);

/* Whether such a step's expert all-to-all is longer than its roofline
 * (expert parallelism; 0 without). */
int wzs_step_network_bound(const wzs_replica_model *m, double batch, double rank_tokens);

/* The three above from one evaluation of the step's terms (a decode
 * epoch's start needs all three): the same values, bit for bit. */
double wzs_step_time_bound(const wzs_replica_model *m, double batch, double rank_tokens,
			   int *compute_bound /* OUT */, int *network_bound /* OUT */);

/* wzs_step_time_bound at rank_tokens0 and, into *t1, wzs_step_time at
 * rank_tokens1 (a decode epoch's first and last steps), with what depends
 * on the batch alone evaluated once: the same values, bit for bit. */
double wzs_step_times_bound(const wzs_replica_model *m, double batch, double rank_tokens0,
			    double rank_tokens1, double *t1 /* OUT */,
			    int *compute_bound /* OUT */, int *network_bound /* OUT */);

/* The same for a model with sparse attention (m->dsa_topk > 0): the
 * busiest rank's indexer scores `rank_tokens` cached tokens and its
 * attention reads `selected` of them (per request at most dsa_topk). */
double wzs_step_time_dsa(const wzs_replica_model *m, double batch, double rank_tokens,
			 double selected, int *compute_bound /* OUT, or NULL */,
			 int *network_bound /* OUT, or NULL */);

/* The busiest rank's step times at a decode epoch's first and last steps
 * (step0, step1), sparse attention: rank k's requests hold tok_a[k] +
 * tok_n[k] * step * per_step cached tokens (wzs_rank_tokens_max2's sums),
 * of which its attention reads at most min(that, tok_n[k] * dsa_topk)
 * (an upper bound on the sum over its requests of min(context, topk),
 * exact when every request is past topk or none is), whole tokens; the
 * flags are the first step's busiest rank's. */
void wzs_epoch_ends_dsa(const wzs_replica_model *m, const double *tok_a, const int64_t *tok_n,
			int ranks, int64_t step0, int64_t step1, double per_step, double batch,
			double *t0 /* OUT */, double *t1 /* OUT */, int *compute_bound /* OUT */,
			int *network_bound /* OUT */);

/* Time of one prefill pass over `new_tokens` tokens that attend to `pairs`
 * (query, key) pairs in all, of which the busiest attention rank holds
 * `rank_pairs`.  The weight matmuls spread over every GPU of the replica;
 * attention does with TP (heads split), but with attention data
 * parallelism each rank runs attention for its own requests alone. */
double wzs_prefill_time(const wzs_replica_model *m, double new_tokens, double pairs,
			double rank_pairs);
/* Whether that pass's expert all-to-all is longer than its roofline. */
int wzs_prefill_network_bound(const wzs_replica_model *m, double new_tokens, double pairs,
			      double rank_pairs);

/* The same two with the busiest rank's attention given in seconds (from
 * wzs_prefill_rank_attn_s) instead of pairs, for passes with
 * context-parallel requests. */
double wzs_prefill_time_attn(const wzs_replica_model *m, double new_tokens, double pairs,
			     double rank_attn_s);
int wzs_prefill_network_bound_attn(const wzs_replica_model *m, double new_tokens, double pairs,
				   double rank_attn_s);

/* Seconds of one rank's attention in a prefill pass: `own_pairs` of its
 * own requests, `cp_pairs` its share of context-parallel requests' pairs
 * (run at cp_efficiency), and `ring_s` the ring's transfers of their
 * cache, which overlap the computation (pass-KV ring attention): the
 * longer of the two. */
double wzs_prefill_rank_attn_s(const wzs_replica_model *m, double own_pairs, double cp_pairs,
			       double ring_s);

/* Seconds the ring of a context-parallel group takes to pass round the
 * cache of one chunk of `new_tokens` after `cached` tokens: the cached
 * tokens start on the request's own rank and cross every link of the ring
 * but one, so each link carries all of them, and each rank's share of the
 * new tokens goes to the cp_ranks - 1 others; in the GPU format's bytes. */
double wzs_cp_ring_time(const wzs_replica_model *m, double cached, double new_tokens);

/* Time of one request's prefill on one GPU of a disaggregated prefill pool:
 * `new_tokens` attending to `pairs` pairs, with the weights spread over
 * the pool (expert parallelism: each GPU's own tokens' FLOPs, balanced),
 * and no decode to share the GPU with, so no chunking. */
double wzs_pool_prefill_time(const wzs_replica_model *m, double new_tokens, double pairs);

/* The same with context parallelism: a prompt of at least cp_min_tokens
 * runs on an aligned group of cp_ranks pool GPUs, each taking an even
 * share of the new tokens and of the causal pairs (at cp_efficiency)
 * while the cache circulates over the ring (wzs_cp_ring_time). */
/* Prefill instances (sim/pool.c).  Seconds one pipeline stage of an
 * instance takes for one rank's part of a pass: `tokens` new tokens
 * through the stage's layers, their attention `pairs` (query, key) pairs
 * (wzs_model_prefill_pairs); with one stage the whole pass, as
 * wzs_pool_prefill_time for a pool GPU. */
double wzs_pool_stage_time(const wzs_replica_model *m, double tokens, double pairs);

/* Fills the pool_* instance terms from the scenario (none without
 * instances); fails naming the field the model lacks. */
wz_err wzs_pool_build(const wzm_model *model, const wzm_gpu *gpu, const wzs_params *p,
		      wzs_replica_model *out /* OUT */, wz_diag *diag);

/* Seconds a rank's `tokens` take to hand off to the next stage. */
double wzs_pool_hop_time(const wzs_replica_model *m, double tokens);

/* One pass through a pipeline of `stages` stages whose stage s is free at
 * stage_free[s] (updated): it enters the first stage at `start`, spends
 * `stage_s` in each and `hop_s` between two; returns when it leaves the
 * last stage.  Passes in a row make the chunked pipeline: C passes of
 * equal time t through S stages from idle end at (C + S - 1) t plus the
 * hops of the last one. */
double wzs_pipeline_pass(double *stage_free, int stages, double start, double stage_s,
			 double hop_s);

/* The rank of an instance's stage with the fewest tokens in the pass
 * being packed (the lowest on a tie): where the next prompt goes. */
int wzs_pool_least_rank(const double *rank_tokens, int ranks);

/* Stage seconds of a pass whose `ranks` ranks hold rank_tokens new tokens
 * attending to rank_pairs pairs: its busiest rank's wzs_pool_stage_time
 * (a pass waits for it); *most_tokens (may be NULL) gets the most tokens
 * a rank holds, for the hand-off. */
double wzs_pool_pass_time(const wzs_replica_model *m, const double *rank_tokens,
			  const double *rank_pairs, int ranks, double *most_tokens /* OUT */);

/* One pass packed as sim/disagg.c packs it, for the deployment screen:
 * `chunk` tokens of a long prompt after `chunk_cached` (0: none) on a rank
 * of their own, then n prompts of `tokens` new tokens after `cached`
 * each, first come first served onto the rank with the fewest tokens up
 * to pool_batch_tokens a rank (one that does not fit takes the room left;
 * once no rank has room the rest wait).  Returns the pass's stage seconds
 * (its busiest rank's); *hop_s (may be NULL) its hand-off between stages. */
double wzs_pool_pack_pass(const wzs_replica_model *m, double chunk, double chunk_cached,
			  double n, double tokens, double cached, double *hop_s /* OUT */);

/* One prompt of `new_tokens` after `cached` ones alone on an idle
 * instance rank, in passes of pool_batch_tokens through the stages:
 * returns when its last chunk leaves the last stage, and sets *first_s to
 * the time the first stage was busy with it (what bounds throughput). */
double wzs_pool_chunked_time(const wzs_replica_model *m, double cached, double new_tokens,
			     double *first_s /* OUT */);

double wzs_pool_cp_prefill_time(const wzs_replica_model *m, double cached, double new_tokens,
				double pairs);

/* (query, key) pairs of prefilling n new tokens after `prefix` cached ones. */
double wzs_prefill_pairs(double prefix, double n);
/* The pairs a prefill pass costs the model: wzs_prefill_pairs for dense
 * attention; with sparse attention each new token's attention takes at
 * most dsa_topk keys, and its indexer's pairs (every key) count at
 * idx_prefill_ratio, so the result times prefill_flops_pair / attn_flops
 * is both's time. */
double wzs_model_prefill_pairs(const wzs_replica_model *m, double prefix, double n);

/* Appends the model's derived figures as "key = value" lines. */
void wzs_replica_model_describe(const wzs_replica_model *m, wz_buf *out);

#endif
