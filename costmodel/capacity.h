/* Memory accounting per GPU: how much HBM is left for the cache after the
 * weights and the activation reserve, and how many users of a given context
 * fit in it (DESIGN.md, "Replica"). */
#ifndef WZM_CAPACITY_H
#define WZM_CAPACITY_H

#include "common/wz_error.h"
#include "costmodel/catalog.h"

#define WZM_GIB 1073741824.0
#define WZM_BLOCK_TOKENS 64

/* How attention is spread over a replica's GPUs.  MLA caches are not split
 * across tensor-parallel ranks: with tensor parallelism every rank holds the
 * full latent of every request, so the replica holds only one GPU's worth of
 * users; with attention data parallelism each GPU holds its own users. */
typedef enum {
	WZM_PAR_ATTN_DP = 0,
	WZM_PAR_TP = 1,
} wzm_parallelism;

wz_err wzm_parallelism_parse(const char *name, wzm_parallelism *out /* OUT */, wz_diag *diag);
const char *wzm_parallelism_name(wzm_parallelism par);

typedef struct {
	double mem_util;         /* share of HBM the engine may use (0..1] */
	double act_reserve_gib;  /* per GPU, for activations and graphs */
	int gpus_per_replica;    /* GPUs holding one copy of the weights */
	wzm_parallelism par;
	double weight_bits;      /* NaN: the model's catalog value */
	int block_tokens;        /* cache block size in tokens */
	/* billions of parameters every GPU holds whole, the rest split over
	 * the replica's GPUs: with attention data parallelism and expert
	 * parallelism, all but the routed experts (attention, dense layers,
	 * shared experts, embeddings); 0: every weight split evenly */
	double replicated_params_b;
} wzm_memory_params;

/* Defaults: mem_util 0.90 (vLLM's default gpu_memory_utilization),
 * act_reserve 4 GiB, 8 GPUs per replica, attention data parallel, model's
 * weight bits, 64-token blocks. */
void wzm_memory_params_default(wzm_memory_params *p /* OUT */);

/* One format's capacity on one GPU, all in bytes unless named otherwise. */
typedef struct {
	double hbm;               /* hbm_gib * 2^30 */
	double usable;            /* hbm * mem_util */
	double weights;           /* this GPU's weights: the replicated ones and its share of the rest */
	double weights_replicated;/* of which every GPU holds a whole copy */
	double reserve;           /* activation reserve */
	double cache;             /* usable - weights - reserve */
	double record_per_layer;  /* bytes of one token for one layer */
	double side_per_layer;    /* wzm_side_cache_per_layer: beside the record, in every format */
	double per_token;         /* (record_per_layer + side_per_layer) * layers; a hybrid
				   * model's cache per sequence at the context over the
				   * context (wzm_token_bytes) */
	double per_block;         /* per_token * block_tokens */
	long blocks_per_gpu;      /* floor(cache / per_block) */
	long blocks_per_user;     /* ceil(context / block_tokens) */
	long users_per_gpu;       /* floor(blocks_per_gpu / blocks_per_user) */
	long users_per_replica;   /* x gpus_per_replica with attention DP */
} wzm_memory;

/* Bytes a token keeps per layer beside the attention cache's record,
 * the same whatever the record's format: DeepSeek Sparse Attention's
 * indexer keys, index_head_dim fp8 values and one fp32 scale per 128 of
 * them (DeepSeek-V3.2-Exp's inference/model.py: k_cache and k_scale_cache,
 * block_size 128; vLLM and SGLang allocate the same 132 bytes for a
 * 128-wide key); 0 for a model without an indexer. */
double wzm_side_cache_per_layer(const wzm_model *model);

/* Computes the memory breakdown for a format whose record is
 * record_per_layer bytes per token per layer, at `context` tokens per user.
 * Fails with WZ_ERR_MISSING naming the catalog field when a needed value is
 * empty, and WZ_ERR_RANGE when the weights and reserve do not fit. */
wz_err wzm_memory_compute(const wzm_model *model, const wzm_gpu *gpu,
			  const wzm_memory_params *params, double record_per_layer, long context,
			  wzm_memory *out /* OUT */, wz_diag *diag);

/* Weight bytes of a model at the given bits per weight (NaN: catalog's:
 * weight_bits, and expert_bits for the routed experts where the row gives
 * it and its MoE shape).  A bits value other than the catalog's sets every
 * weight's. */
wz_err wzm_weight_bytes(const wzm_model *model, double weight_bits, double *out /* OUT */,
			wz_diag *diag);

/* Parameters in the routed experts (moe_layers x moe_routed_experts x 3
 * matrices of hidden_size x moe_intermediate_size), where the row gives
 * expert_bits and the shape; 0 otherwise. */
double wzm_routed_params(const wzm_model *model);

#endif
