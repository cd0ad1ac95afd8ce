/* Mixture of experts under expert parallelism: a replica's GPUs run
 * attention data-parallel and hold the routed experts split among them,
 * so every MoE layer sends each token's hidden state to its experts'
 * GPUs (dispatch) and brings their outputs back (combine).  The shape of
 * the MoE layers, the all-to-all bandwidths (DeepEP's published figures
 * by default), the load imbalance between GPUs and dual-batch overlap are
 * scenario parameters (wzplan-scenario(5)). */
#ifndef WZS_MOE_H
#define WZS_MOE_H

#include "common/wz_error.h"
#include "costmodel/catalog.h"
#include "sim/params.h"

typedef struct {
	int on;                     /* expert parallelism modelled (else no communication) */
	double layers;              /* MoE layers */
	double routed_share;        /* routed experts' share of the active parameters */
	double shared_share;        /* the shared experts' share (run where the token is) */
	double replicated_params;   /* parameters every GPU holds whole: all but the routed experts */
	double always_read;         /* share of a GPU's weights every step reads: the replicated
				       ones, over them and its share of the routed experts */
	double expert_pick;         /* top_k / routed experts: one token's share of them */
	double compute_factor;      /* busiest GPU's FLOPs over the mean: 1 + routed_share (imbalance - 1) */
	double imbalance;           /* busiest GPU's routed-expert FLOPs over the mean (ep_imbalance) */
	double dispatch_bytes;      /* per token per MoE layer and destination: hidden x (1 + 4/128),
				       FP8 and scales */
	double combine_bytes;       /* the same, back: hidden x 2, BF16 */
	/* bytes/s per GPU, as DeepEP counts them (the logical traffic of a
	 * rank, its own experts' share included) */
	double decode_dispatch_bps, decode_combine_bps;   /* low-latency kernels */
	double prefill_dispatch_bps, prefill_combine_bps; /* normal kernels */
	double pool_dispatch_bps, pool_combine_bps;       /* normal kernels over the prefill pool */
	/* Destinations of a token's hidden state per MoE layer, as DeepEP
	 * counts the bytes behind those bandwidths: its low-latency kernels
	 * send a copy per expert picked (top_k); its normal kernels one per
	 * GPU holding a picked expert (within a node) or one per node (across
	 * nodes, forwarded over NVLink there): the expected count of distinct
	 * GPUs or nodes among top_k experts picked evenly (wzs_moe_destinations) */
	double decode_dests, prefill_dests, pool_dests;
	int overlap;                /* dual-batch overlap: communication hidden behind compute */
	/* the low-latency kernels' time at the fewest tokens measured, per
	 * layer: no dispatch or combine is faster (wzs_moe_decode_comm_time) */
	double decode_dispatch_floor_s, decode_combine_floor_s;
} wzs_moe;

/* Fills *out for a replica of `gpus` GPUs (and a prefill pool of
 * `pool_gpus`, 0 when aggregated) from the scenario; off (all zero but
 * compute_factor 1) unless p->expert_parallel.  Fails naming the key when
 * the MoE shape does not fit the model's active parameters, or when the
 * replica is tensor-parallel. */
wz_err wzs_moe_build(const wzm_model *model, const wzm_gpu *gpu, const wzs_params *p, int gpus,
		     int tensor_parallel, int pool_gpus, wzs_moe *out /* OUT */, wz_diag *diag);

/* GPUs on one NVLink fabric: the catalog's nvlink_domain, else
 * gpus_per_node.  An EP group inside it runs its all-to-all over NVLink
 * (DeepEP's intranode figure scaled by the GPU's NVLink bandwidth over the
 * H800's), one wider at DeepEP's internode figures scaled by the GPU's
 * NIC over the CX7's 50 GB/s. */
double wzs_moe_fabric(const wzm_gpu *gpu, long gpus_per_node);

/* Seconds of dispatch and combine for `tokens` tokens of one GPU through
 * every MoE layer, each sent to `dests` destinations, at the given
 * bandwidths. */
double wzs_moe_comm_time(const wzs_moe *e, double tokens, double dests, double dispatch_bps,
			 double combine_bps);

/* Seconds of a decode step's dispatch and combine for `tokens` tokens of
 * one GPU: each layer's at least its measured floor, the rest bytes over
 * the low-latency bandwidths; with dual-batch overlap the tokens go as two
 * micro-batches of half each, every one paying the floor. */
double wzs_moe_decode_comm_time(const wzs_moe *e, double tokens);

/* The same for one micro-batch of `tokens` tokens a GPU, its dispatch and
 * its combine apart (each at least its floor a layer), summed over the MoE
 * layers: what a two-batch-overlap step hides behind computation
 * (wzs_tbo_batch_terms). */
void wzs_moe_decode_comm_parts(const wzs_moe *e, double tokens, double *dispatch_s /* OUT */,
			       double *combine_s /* OUT */);

/* Expected count of distinct units (GPUs or nodes, `units` of them, each
 * holding an equal run of the `experts` experts in order) among a token's
 * `top_k` distinct experts.  With group-limited routing the experts fall
 * in n_group equal runs and a token picks topk_group of the groups, then
 * its experts among theirs; picks are even in both (no skew), so the
 * count is, over every set S of topk_group groups alike, the sum over
 * units of 1 - C(A - x, top_k) / C(A, top_k), A the experts of S and x
 * the unit's share of them.  n_group 1 is no limit; above
 * WZS_MOE_MAX_GROUPS groups the limit is left out.  Expert parallelism
 * over `gpus` GPUs of `gpus_per_node` a node counts GPUs within a node,
 * nodes across them. */
#define WZS_MOE_MAX_GROUPS 16
double wzs_moe_destinations(double experts, double top_k, double units, long n_group,
			    long topk_group);
double wzs_moe_normal_units(int gpus, long gpus_per_node);

/* A step's time from its roofline and its communication: their sum, or
 * with dual-batch overlap the longer of the two. */
double wzs_moe_combine(const wzs_moe *e, double roofline_s, double comm_s);

#endif
