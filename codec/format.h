/* The cache-format registry: stable names and ids, record sizes, and the
 * parser for format names such as "fp8-mix" or "wz-5.44". */
#ifndef WZC_FORMAT_H
#define WZC_FORMAT_H

#include <stddef.h>

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
	WZC_FMT_WZ = 16,  /* fixed rate, GPU tier: "wz-<bits>" */
	WZC_FMT_WZX = 17, /* entropy coded, offload tier: "wzx-<bits>" */
	WZC_FMT_WZT = 18, /* fixed rate, trellis-coded, GPU tier: "wzt-<bits>" (256 states) */
	WZC_FMT_WZT8 = 19,  /* the same on 8 states: "wzt8-<bits>" */
	WZC_FMT_WZT32 = 20, /* the same on 32 states: "wzt32-<bits>" */
	WZC_FMT_WZS = 21,   /* wz's record, each token part's scale code searched: "wzs-<bits>" */
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
static inline int wzc_format_can_keep(wzc_format_id id)
{
	return id == WZC_FMT_NVFP4_TRT_COLD || id == WZC_FMT_NVFP4_TRT_COLD_BF16ROPE;
}

/* The format without its kept tokens, name and all: the record every
 * other token gets. */
wzc_format wzc_format_unkept(const wzc_format *f);

/* Static facts about a registry entry. */
typedef struct {
	wzc_format_id id;
	const char *name;        /* "fp8-mix"; "wz" and "wzx" take a "-<bits>" suffix */
	wzc_tier tier;
	int parametric;          /* 1 when the name needs "-<bits>" */
	const char *description; /* one line for `wzplan codec formats` */
	const char *source;      /* the code that defines the layout, or NULL for ours */
} wzc_format_info;

int wzc_format_count(void);
const wzc_format_info *wzc_format_info_at(int i);
const wzc_format_info *wzc_format_info_of(wzc_format_id id);

/* The trellis memory nu (2^nu states) of a trellis-coded format (wzt,
 * wzt8, wzt32; docs/wz-format.md, "Trellis-coded records"), 0 for any
 * other. */
static inline int wzc_format_trellis_nu(wzc_format_id id)
{
	return id == WZC_FMT_WZT ? 8 : id == WZC_FMT_WZT8 ? 3 : id == WZC_FMT_WZT32 ? 5 : 0;
}

/* 1 for the formats that need a profile: wz, wzx, wzs and the wzt family. */
static inline int wzc_format_needs_profile(wzc_format_id id)
{
	return id == WZC_FMT_WZ || id == WZC_FMT_WZX || id == WZC_FMT_WZS ||
	       wzc_format_trellis_nu(id) > 0;
}

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
