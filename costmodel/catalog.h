/* Model, GPU and price catalogs: CSV files with a source on every row, read
 * from the embedded defaults or from a user's folder (--catalog DIR). */
#ifndef WZM_CATALOG_H
#define WZM_CATALOG_H

#include "common/wz_error.h"

/* Layer kinds of an attention cache (docs/catalog.md, "Layer kinds"). */
typedef enum {
	WZM_KIND_FULL = 0,       /* every token's entry kept (MLA, GQA, or DSA with an indexer) */
	WZM_KIND_WINDOW = 1,     /* only the last `window` tokens' entries */
	WZM_KIND_COMPRESSED = 2, /* one entry per `ratio` tokens, beside the window */
} wzm_kind_id;

#define WZM_MAX_KINDS 8

/* One group of a model's layers that keep their cache alike (a row of
 * model-layers.csv, or the whole model derived from models.csv).  NaN:
 * empty cell. */
typedef struct {
	wzm_kind_id kind;
	double layers;
	double window;          /* uncompressed tokens kept (NaN: none) */
	double ratio;           /* tokens an entry summarizes (compressed; 1 otherwise) */
	double topk;            /* entries an indexer selects per query (NaN: all read) */
	double entry_nope;      /* values of an entry without position (the latent) */
	double entry_rope;      /* values of an entry with position (RoPE) */
	double index_head_dim;  /* values of the indexer's key per entry (NaN: no indexer) */
	const char *origin;     /* the row it came from */
	int line;
} wzm_layer_kind;

/* Numeric fields hold NaN when the catalog cell is empty ("not verified"). */
typedef struct {
	char *name;
	char *attention;        /* "MLA", "MLA+DSA", "GQA" */
	double layers;
	double kv_lora_rank;    /* R: latent values per token per layer */
	double rope_dim;        /* P: position values per token per layer */
	double kv_heads;
	double head_dim;
	double hidden_size;
	double params_total_b;  /* billions */
	double params_active_b; /* billions, per token (mixture of experts) */
	double weight_bits;     /* bits per weight as served */
	double max_context;     /* tokens */
	/* The mixture of experts' shape, as the model's config names it
	 * (NaN when not catalogued or dense): MoE layers (all but the
	 * first_k_dense_replace dense ones), routed experts per token
	 * (num_experts_per_tok), routed and shared experts per MoE layer, and
	 * each expert's intermediate width.  Optional columns: a catalog
	 * without them reads as not catalogued. */
	double moe_layers, moe_top_k, moe_routed_experts, moe_shared_experts;
	double moe_intermediate_size;
	/* Group-limited routing, as DeepSeek's configs name it (n_group or
	 * n_expert_groups, topk_group or n_limited_groups): the routed
	 * experts fall in moe_n_group equal groups and a token's experts come
	 * from moe_topk_group of them (NaN: not catalogued, no limit).
	 * Optional columns. */
	double moe_n_group, moe_topk_group;
	/* DeepSeek Sparse Attention's indexer, as the config names it: the
	 * width of the key each layer caches per token beside the attention
	 * cache, its query heads, and the tokens it selects for the attention
	 * of each query (NaN: no indexer).  Optional columns. */
	double index_head_dim, index_n_heads, index_topk;
	/* The attention's query heads and its per-head key (without the
	 * position part) and value widths, as the config names them, for
	 * attention FLOPs (NaN: not catalogued; the simulator's scenario
	 * keys attention_heads and prefill_pair_dims then stand).  Optional
	 * columns. */
	double num_attention_heads, qk_nope_head_dim, v_head_dim;
	/* Bits per weight of the routed experts where they ship apart from
	 * the rest (FP4 experts beside FP8 attention; weight_bits is then the
	 * rest's).  NaN: every weight at weight_bits.  Optional column. */
	double expert_bits;
	/* The cache's layer kinds from model-layers.csv (0: none there; every
	 * layer then keeps a full entry, wzm_model_kinds derives it). */
	int nkinds;
	wzm_layer_kind kinds[WZM_MAX_KINDS];
	char *source;
	const char *origin;     /* file the row came from */
	int line;
} wzm_model;

typedef struct {
	char *name;
	double hbm_gib;
	double hbm_tbps;
	double bf16_tflops;
	double fp8_tflops;
	double fp4_tflops;      /* dense FP4 (NVFP4) tensor peak; NaN: none or not catalogued */
	double nvlink_gbps;     /* scale-up link per GPU, both directions */
	double nvlink_domain;   /* GPUs on one NVLink fabric: 8 for an HGX board, 72 for NVL72 */
	double nic_gbps;        /* scale-out network per GPU, GB/s each way (line rate / 8) */
	double pcie_gbps;       /* host link per GPU, both directions */
	double price_reserved_usd_h;
	double price_ondemand_usd_h;
	char *price_source;
	char *price_date;
	const char *origin;
	int line;
} wzm_gpu;

typedef struct {
	char *set;
	char *gpu;
	double reserved_usd_h;
	double ondemand_usd_h;
	char *source;
	char *date;
	const char *origin;
	int line;
} wzm_price;

typedef struct {
	wzm_model *models;
	int nmodels;
	wzm_gpu *gpus;
	int ngpus;
	wzm_price *prices;
	int nprices;
	char *origin_layers; /* model-layers.csv: its rows go into the models' kinds */
	char *origin_models; /* "embedded:models.csv" or a path */
	char *origin_gpus;
	char *origin_prices;
} wzm_catalog;

/* Loads models.csv, gpus.csv, prices.csv and model-layers.csv.  With dir
 * NULL all come from the embedded defaults; with a dir, each file present
 * there replaces the embedded one.  Malformed rows fail with file:line and
 * field, and so does a model whose layer kinds do not add up to its layers.
 * The embedded model-layers.csv names models a catalog of one's own may
 * lack: its rows for those are left out; a model-layers.csv of one's own
 * must name only models its models.csv has.  The caller frees the result
 * with wzm_catalog_free. */
wz_err wzm_catalog_load(const char *dir, wzm_catalog **out /* OUT */, wz_diag *diag);
void wzm_catalog_free(wzm_catalog *cat);

/* Parses one catalog file's text (exposed for tests). kind is "models",
 * "gpus" or "prices"; "layers" (model-layers.csv) goes after "models" and
 * fills the models' kinds (strict: every model it names must be there). */
wz_err wzm_catalog_parse(wzm_catalog *cat, const char *kind, const char *text,
			 const char *origin, wz_diag *diag);

/* Look-ups by name: exact (ignoring case, blanks, '-', '_', '.') or, for
 * GPUs, a unique prefix ("H100 SXM").  Unknown names give WZ_ERR_NOT_FOUND
 * with the known names in the message. */
const wzm_model *wzm_find_model(const wzm_catalog *cat, const char *name, wz_diag *diag);
const wzm_gpu *wzm_find_gpu(const wzm_catalog *cat, const char *name, wz_diag *diag);

/* Rates for a GPU under a price set.  The set "catalog" takes the prices in
 * gpus.csv; any other set name is looked up in prices.csv. */
typedef struct {
	double reserved_usd_h;
	double ondemand_usd_h;
	const char *source;
	const char *date;
	const char *origin;
	int line;
} wzm_rates;
wz_err wzm_find_rates(const wzm_catalog *cat, const char *set, const wzm_gpu *gpu,
		      wzm_rates *out /* OUT */, wz_diag *diag);

/* WZ_ERR_MISSING naming the catalog row and the field when value is NaN, so
 * "the program says which value it needs". */
wz_err wzm_need(double value, const char *what, const char *field, const char *origin,
		int line, wz_diag *diag);

#endif
