/* The cache-format registry: stable names and ids, record sizes, and the
 * parser for format names such as "fp8-mix" or "wz-5.44". */
#ifndef WZC_FORMAT_H
#define WZC_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "codec/formats/window.h"
#include "common/wz_error.h"

/* Numeric ids are stored in files and archives: never reuse or renumber. */
typedef enum {
	WZC_FMT_BF16 = 1,
	WZC_FMT_FP8_MIX = 2,
	WZC_FMT_FP8_BF16ROPE = 3,
	WZC_FMT_FP8_DS_MLA = 4,
	WZC_FMT_FP8_FLAT = 5,
	WZC_FMT_INT4_G64 = 6,
	WZC_FMT_NVFP4 = 7,
	WZC_FMT_NVFP4_DS_MLA = 8,            /* vLLM nvfp4_ds_mla */
	WZC_FMT_MXFP4_SGL_MLA = 9,           /* SGLang fp4_mx_block16, MLA pool */
	WZC_FMT_NVFP4_TRT_COLD = 10,         /* TensorRT-LLM NVFP4 cold page, MLA */
	WZC_FMT_NVFP4_TRT_COLD_BF16ROPE = 11, /* the same, position part lossless */
	WZC_FMT_FP8_DS_MLA_UE8M0 = 12,       /* FlashMLA's FP8 with power-of-two scales */
	WZC_FMT_FP8_DS_MLA_V4 = 13,          /* FlashMLA's DeepSeek-V4 FP8 entry (448 + 64) */
	WZC_FMT_WZ = 16,  /* fixed rate, GPU tier: "wz-<bits>" */
	WZC_FMT_WZX = 17, /* entropy coded, offload tier: "wzx-<bits>" */
	WZC_FMT_WZT = 18, /* fixed rate, trellis-coded, GPU tier: "wzt-<bits>" (256 states) */
	WZC_FMT_WZT8 = 19,  /* the same on 8 states: "wzt8-<bits>" */
	WZC_FMT_WZT32 = 20, /* the same on 32 states: "wzt32-<bits>" */
	WZC_FMT_WZS = 21,   /* wz's record, each token part's scale code searched: "wzs-<bits>" */
	WZC_FMT_KVTC = 22,  /* KV-cache transform coding (arXiv 2511.01815): "kvtc-<bits>" */
	WZC_FMT_WZE = 23,   /* fixed record, entropy-coded coefficients, GPU tier: "wze-<bits>" */
} wzc_format_id;

/* Where a format lives. */
typedef enum {
	WZC_TIER_GPU = 1,     /* fixed record per token: random access */
	WZC_TIER_OFFLOAD = 2, /* variable rate, blocks of tokens */
} wzc_tier;

/* A parsed format: the registry id plus, for wz/wzx, the requested rate. */
typedef struct {
	wzc_format_id id;
	double rate_bits;  /* requested bits/value for wz and wzx; 0 for baselines */
	/* TensorRT-LLM's selective compression on its cold-page records
	 * ("-keep<F>-<L>", docs/baselines-fp4.md): tokens at positions below
	 * keep_first and a window's last keep_last tokens stay in bf16.  Such a
	 * format has no one record size: wzc_record_bytes gives 0 and
	 * wzc_codec_new refuses it; wzc_measure_kept measures it. */
	int keeps;         /* 1 when the name had "-keep<F>-<L>" */
	long keep_first, keep_last;
	char name[48];     /* canonical name, e.g. "wz-5.44" */
} wzc_format;

/* Largest F and L of "-keep<F>-<L>". */
#define WZC_KEEP_MAX 1000000L

/* 1 when the format may take "-keep<F>-<L>": TensorRT-LLM's cold pages. */
int wzc_format_can_keep(wzc_format_id id);

/* The format without its kept tokens, name and all: the record every
 * other token gets. */
wzc_format wzc_format_unkept(const wzc_format *f);

/* What a baseline's coder sees of its codec: the format, the shape and,
 * for fp8-flat, the layer's per-tensor scale. */
typedef struct {
	wzc_format_id id;
	int R, P;
	float tensor_scale;
} wzc_rec_ctx;

/* The traits table (as ggml's type_traits[]): every format registers one
 * entry (codec/registry.c) with its static facts and its coders, and the
 * codec context (codec/codec.c), the measurement (codec/measure/) and the
 * table-driven test (tests/codec/test_traits.c) reach a format only
 * through it.  A baseline registers encode and decode, one token, which
 * are its scalar reference; the profiled formats (wz, wzt, wzs, wzx) code
 * a layer through a codec made on a profile, with a fast path (SIMD, one
 * inverse transform a block) and the scalar reference it must reproduce
 * byte for byte and bit for bit. */
typedef struct wzc_format_info {
	wzc_format_id id;
	const char *name;        /* "fp8-mix"; "wz" and "wzx" take a "-<bits>" suffix */
	wzc_tier tier;
	int parametric;          /* 1 when the name needs "-<bits>" */
	const char *description; /* one line for `wzplan codec formats` */
	const char *source;      /* the code that defines the layout, or NULL for ours */
	/* Bytes of one token's record at latent width R and position width P
	 * (wzc_record_bytes). */
	size_t (*record_bytes)(const wzc_format *f, int R, int P);
	int needs_profile;       /* wz, wzx, wzs, the wzt family and kvtc */
	int wz_plan;             /* codes through the profile's wz rate plan (not kvtc) */
	int trellis_nu;          /* the trellis memory (2^nu states), 0 for none */
	int can_keep;            /* takes "-keep<F>-<L>" (TensorRT-LLM's cold pages) */
	/* Baselines: one token of one layer (NULL for the profiled formats). */
	void (*encode)(const wzc_rec_ctx *c, const float *latent, const float *rope,
		       uint8_t *record);
	void (*decode)(const wzc_rec_ctx *c, const uint8_t *record, float *latent, float *rope);
	/* The profiled formats: n tokens of a layer through the codec, the fast
	 * path and its scalar reference (the same bytes); one token's decode,
	 * the reference of decode_layer (the same floats), into the cache's
	 * domain or (transformed 1) the domain attention reads.  The decoders
	 * give WZ_ERR_NOMEM where the layer's plan (made on first use) or
	 * their scratch cannot be had, WZ_ERR_USAGE for a layer of a profile
	 * read in part that was not read. */
	wz_err (*encode_layer)(const wzc_codec *c, int layer, int n, const float *latent,
			       const float *rope, uint8_t *records, wz_diag *diag);
	wz_err (*encode_layer_ref)(const wzc_codec *c, int layer, int n, const float *latent,
				   const float *rope, uint8_t *records, wz_diag *diag);
	wz_err (*decode_layer)(const wzc_codec *c, int layer, int n, const uint8_t *records,
			       float *latent, float *rope);
	wz_err (*decode_token)(const wzc_codec *c, int layer, const uint8_t *record, float *latent,
			       float *rope, int transformed);
	/* The SIMD kernels the fast path may be held to (NULL-terminated, the
	 * first the portable one; NULL: no choice), and how: force(name) gives
	 * 0, or -1 where this processor lacks it; force(NULL) lets it choose
	 * again. */
	const char *const *kernels;
	int (*force)(const char *kernel);
	/* The profiled formats: the record size of f on profile p (wzx: its
	 * grid's, docs/wzx-format.md); NULL: wzc_record_bytes. */
	wz_err (*profile_record_bytes)(const wzc_profile *p, const wzc_format *f,
				       size_t *record_bytes /* OUT */, wz_diag *diag);
	/* Variable-rate formats: a window's records as they come back out of
	 * the format's real container, [L][T][record bytes], with the bytes the
	 * container took (*bytes) and its entropy-coded payload (*payload);
	 * NULL where the records are the stored bytes. */
	wz_err (*window_records)(wzc_codec *c, const wzc_window *w, uint8_t **records /* OUT */,
				 size_t *bytes /* OUT */, size_t *payload /* OUT */, wz_diag *diag);
} wzc_format_info;

/* The table (codec/registry.c). */
int wzc_format_count(void);
const wzc_format_info *wzc_format_info_at(int i);
const wzc_format_info *wzc_format_info_of(wzc_format_id id);

/* The trellis memory nu (2^nu states) of a trellis-coded format (wzt,
 * wzt8, wzt32; docs/wz-format.md, "Trellis-coded records"), 0 for any
 * other. */
int wzc_format_trellis_nu(wzc_format_id id);

/* 1 for the formats that need a profile: wz, wzx, wzs and the wzt family. */
int wzc_format_needs_profile(wzc_format_id id);

/* Parses "fp8-mix", "wz-5.44", "wzx-5.43", "nvfp4-trt-cold-keep4-64"
 * (case-insensitive).  Unknown names
 * give WZ_ERR_NOT_FOUND with the known names listed in the message. */
wz_err wzc_format_parse(const char *name, wzc_format *out /* OUT */, wz_diag *diag);

/* The wz format whose records are record_bytes for latent width R and
 * position width P: wz-<8 record_bytes / (R + P)>, the GPU tier of that
 * grid (what `codec pack` packs a grid it chose as). */
void wzc_format_wz_grid(size_t record_bytes, int R, int P, wzc_format *out /* OUT */);

/* Lowest and highest rates accepted for wz-<bits>. */
#define WZC_WZ_MIN_BITS 1.0
#define WZC_WZ_MAX_BITS 16.0

/* Bytes of one token's record for one layer, for latent width R and position
 * width P (e.g. 512 and 64).  For wzx it is the nominal (average) size.
 * Returns 0 when the format cannot hold that shape (e.g. R not a multiple of
 * the group size). */
size_t wzc_record_bytes(const wzc_format *fmt, int R, int P);

/* Bits per value implied by wzc_record_bytes: bytes * 8 / (R + P). */
double wzc_bits_per_value(const wzc_format *fmt, int R, int P);

#endif
