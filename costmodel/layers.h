/* A model's cache per layer kind (docs/cache-anatomy.md): which entries each
 * kind keeps at a context, their bytes in a format, the indexer's keys
 * beside them, and what a decode step reads of them. */
#ifndef WZM_LAYERS_H
#define WZM_LAYERS_H

#include "common/wz_error.h"
#include "costmodel/catalog.h"

/* The model's layer kinds: its model-layers.csv rows, or for a model
 * without any one kind, every layer full, its entry kv_lora_rank +
 * rope_dim values (MLA) or 2 x kv_heads x head_dim (GQA keys and values),
 * with the DSA indexer of the index_* columns where they are filled.
 * Fails with WZ_ERR_MISSING naming the empty catalog field. */
wz_err wzm_model_kinds(const wzm_model *model, wzm_layer_kind *kinds /* OUT [WZM_MAX_KINDS] */,
		       int *n /* OUT */, wz_diag *diag);

/* 1 when the model's cache is not one entry per token in every layer
 * (it has model-layers.csv rows other than full ones). */
int wzm_model_hybrid(const wzm_model *model);

const char *wzm_kind_name(wzm_kind_id kind);

/* Entries a layer of the kind keeps at `tokens` tokens: the window's
 * (min(tokens, window); 0 without a window) and the compressed or full
 * ones (floor(tokens / ratio); 0 for a window layer). */
void wzm_kind_entries(const wzm_layer_kind *k, double tokens, double *window /* OUT */,
		      double *entries /* OUT */);

/* Entry layouts the serving stacks publish for shapes the codec's formats
 * do not describe, byte for byte:
 *   fp8-model1  FlashMLA's DeepSeek-V4 FP8 sparse entry (448 + 64 values):
 *               448 e4m3, 64 bf16, 7 UE8M0 scales (one per 64), 1 pad = 584
 *   nvfp4-v4    FlashInfer's DeepSeek-V4 NVFP4 entry (448 + 64): 224 bytes
 *               of E2M1 pairs, 64 bf16, 28 E4M3 scales (one per 16) + 4 pad
 *               = 384
 * Returns the bytes, 0 when the name is one of them but the shape is not
 * theirs, -1 when the name is none of them. */
long wzm_published_entry_bytes(const char *format, int nope, int rope,
			       const char **source /* OUT, may be NULL */);

/* Bytes of one indexer key of `dim` values in an indexer format: "bf16"
 * (2 a value), "fp8" (e4m3 and one fp32 scale per 128: DeepSeek-V3.2-Exp's
 * k_cache and k_scale_cache, vLLM's 132 bytes for V4), "mxfp4" (E2M1 pairs
 * and one UE8M0 scale per 32: vLLM's use_fp4_indexer_cache, 68 bytes).
 * WZ_ERR_NOT_FOUND for another name, WZ_ERR_UNSUPPORTED for a dim the
 * format's blocks do not divide. */
wz_err wzm_index_entry_bytes(const char *format, double dim, double *bytes /* OUT */,
			     wz_diag *diag);

/* One kind's cache at a context in a format. */
typedef struct {
	double window_entries, entries; /* per layer (wzm_kind_entries) */
	double entry_bytes;             /* the format's bytes of one entry */
	double index_bytes;             /* the indexer format's bytes of one key (0: no indexer) */
	double layer_bytes;             /* (window_entries + entries) x entry_bytes + entries x index_bytes */
	double bytes;                   /* layer_bytes x layers */
	/* what one decode query reads per layer: the window, the entries
	 * its indexer selects (min(entries, topk)) or all of them, and every
	 * indexer key */
	double read_entries, read_index_keys;
} wzm_kind_cache;

/* A model's cache per sequence at `tokens` in one format: entry_bytes[k]
 * for kind k (the format's bytes for that kind's entry shape) and
 * index_bytes[k] for its indexer keys (ignored where the kind has none). */
typedef struct {
	int nkinds;
	wzm_kind_cache kind[WZM_MAX_KINDS];
	double bytes;       /* all layers */
	double read_bytes;  /* what one decode query reads, all layers */
} wzm_cache_anatomy;

void wzm_cache_anatomy_compute(const wzm_layer_kind *kinds, int nkinds, const double *entry_bytes,
			       const double *index_bytes, double tokens,
			       wzm_cache_anatomy *out /* OUT */);

/* A decode query's cache terms for the simulator, all layers, split as its
 * sparse-attention model takes them: what grows with the context (per
 * cached token: compressed entries read in full, and indexer keys) and
 * what stops growing (the windows and the top-k selections, at their
 * caps), reached at `cap_tokens` tokens (the largest window or top-k
 * times ratio). */
typedef struct {
	double per_token_bytes, fixed_bytes;
	double per_token_pairs, fixed_pairs;  /* entries the attention scores */
	double per_token_index_keys;          /* keys the indexers score */
	double cap_tokens;
} wzm_decode_terms;

void wzm_decode_terms_compute(const wzm_layer_kind *kinds, int nkinds, const double *entry_bytes,
			      const double *index_bytes, wzm_decode_terms *out /* OUT */);

/* Cache bytes per token, all layers, for a format whose entry is
 * `entry_bytes` for the model's entry shape, at `context` tokens per
 * sequence: (record + indexer key) x layers for a model of full layers,
 * its cache per sequence over the context for a hybrid one (whose indexer
 * keys are fp8, as wzm_side_cache_per_layer's).  Every kind of a hybrid
 * model must share one entry shape. */
double wzm_token_bytes(const wzm_model *model, double entry_bytes, long context);

#endif
