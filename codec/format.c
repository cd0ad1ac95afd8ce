/* The cache-format registry: names, ids and record sizes (DESIGN.md,
 * "Cache formats"). */
#include "codec/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/wz_str.h"

static const wzc_format_info registry[] = {
	{ WZC_FMT_BF16, "bf16", WZC_TIER_GPU, 0,
	  "576 x bf16: the uncompressed cache", NULL },
	{ WZC_FMT_FP8_MIX, "fp8-mix", WZC_TIER_GPU, 0,
	  "latent e4m3 + fp16 scale (absmax/448), position int8 + fp16 scale (absmax/127)", NULL },
	{ WZC_FMT_FP8_BF16ROPE, "fp8-bf16rope", WZC_TIER_GPU, 0,
	  "latent e4m3 + fp16 scale, position part kept in bf16", NULL },
	{ WZC_FMT_FP8_DS_MLA, "fp8-ds-mla", WZC_TIER_GPU, 0,
	  "FlashMLA FP8 with scale: latent e4m3 + fp32 scale per 128, position bf16 (656 B)",
	  "deepseek-ai/FlashMLA csrc/api/sparse_decode.h (bytes_per_token) and "
	  "flash_mla/flash_mla_interface.py" },
	{ WZC_FMT_FP8_FLAT, "fp8-flat", WZC_TIER_GPU, 0,
	  "all values e4m3 with one per-tensor scale (vLLM/SGLang default)", NULL },
	{ WZC_FMT_INT4_G64, "int4-g64", WZC_TIER_GPU, 0,
	  "latent uint4 asymmetric in groups of 64 (fp16 scale+zero), position int8 + fp16 scale", NULL },
	{ WZC_FMT_NVFP4, "nvfp4", WZC_TIER_GPU, 0,
	  "latent e2m1 with an e4m3 scale per 16, position e4m3 + fp16 scale", NULL },
	{ WZC_FMT_NVFP4_DS_MLA, "nvfp4-ds-mla", WZC_TIER_GPU, 0,
	  "vLLM nvfp4_ds_mla: latent e2m1 + e4m3 scale per 16 (rounded up, permuted), "
	  "position e4m3 unscaled (352 B)",
	  "vllm-project/vllm csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu "
	  "(concat_and_cache_nvfp4_ds_mla_kernel, nvfp4_tile_scale, nvfp4_sf_byte)" },
	{ WZC_FMT_MXFP4_SGL_MLA, "mxfp4-sgl-mla", WZC_TIER_GPU, 0,
	  "SGLang fp4_mx_block16 MLA pool: all 576 values e2m1 with an E8M0 scale per 16 "
	  "(324 B)",
	  "sgl-project/sglang python/sglang/srt/mem_cache/memory_pool.py "
	  "(MLATokenToKVPoolFP4.set_mla_kv_buffer) and "
	  "python/sglang/srt/layers/quantization/kvfp4_tensor.py (batched_quantize)" },
	{ WZC_FMT_NVFP4_TRT_COLD, "nvfp4-trt-cold", WZC_TIER_OFFLOAD, 0,
	  "TensorRT-LLM NVFP4 cold page, MLA row: all 576 values e2m1 with an e4m3 scale "
	  "per 16 (324 B)",
	  "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/nvfp4ColdPageKernels.cu and "
	  "tensorrt_llm/_torch/kv_cache_compression/quantization_for_cold_page/"
	  "nvfp4_quantization.py (build_lifecycle_metadata)" },
	{ WZC_FMT_NVFP4_TRT_COLD_BF16ROPE, "nvfp4-trt-cold-bf16rope", WZC_TIER_OFFLOAD, 0,
	  "TensorRT-LLM NVFP4 cold page with the position part lossless: latent e2m1 + "
	  "e4m3 scale per 16, position bf16 (416 B)",
	  "NVIDIA/TensorRT-LLM tensorrt_llm/_torch/kv_cache_compression/"
	  "quantization_for_cold_page/row_schema.py (ColdPagePolicy.row_geometry, "
	  "rope_precision='lossless')" },
	{ WZC_FMT_WZ, "wz", WZC_TIER_GPU, 1,
	  "ours, GPU tier: fixed record per token at the requested bits/value", NULL },
	{ WZC_FMT_WZX, "wzx", WZC_TIER_OFFLOAD, 1,
	  "ours, offload tier: entropy-coded blocks of 64 tokens x one layer", NULL },
	{ WZC_FMT_WZT, "wzt", WZC_TIER_GPU, 1,
	  "ours, GPU tier: wz's record with a 256-state trellis-coded quantizer per token", NULL },
	{ WZC_FMT_WZT8, "wzt8", WZC_TIER_GPU, 1,
	  "ours, GPU tier: wzt on an 8-state trellis (the family's fastest encoder; docs/wz-format.md)",
	  NULL },
	{ WZC_FMT_WZT32, "wzt32", WZC_TIER_GPU, 1,
	  "ours, GPU tier: wzt on a 32-state trellis", NULL },
	{ WZC_FMT_WZS, "wzs", WZC_TIER_GPU, 1,
	  "ours, GPU tier: wz's record and decoder, each token's scale codes searched by "
	  "their error (a slower encoder; docs/wz-format.md, step 6)",
	  NULL },
};

#define REGISTRY_N ((int)(sizeof registry / sizeof registry[0]))

int wzc_format_count(void)
{
	return REGISTRY_N;
}

const wzc_format_info *wzc_format_info_at(int i)
{
	return i >= 0 && i < REGISTRY_N ? &registry[i] : NULL;
}

const wzc_format_info *wzc_format_info_of(wzc_format_id id)
{
	for (int i = 0; i < REGISTRY_N; i++)
		if (registry[i].id == id)
			return &registry[i];
	return NULL;
}

static wz_err unknown(const char *name, wz_diag *diag)
{
	char known[512] = "";
	for (int i = 0; i < REGISTRY_N; i++) {
		strncat(known, i ? ", " : "", sizeof known - strlen(known) - 1);
		strncat(known, registry[i].name, sizeof known - strlen(known) - 1);
		if (registry[i].parametric)
			strncat(known, "-<bits>", sizeof known - strlen(known) - 1);
	}
	return wz_diag_set(diag, WZ_ERR_NOT_FOUND, "unknown cache format '%s' (known: %s)", name,
			   known);
}

/* The next "-keep" in s, in any case, or NULL. */
static const char *strcasestr_keep(const char *s)
{
	for (; *s; s++)
		if (strncasecmp(s, "-keep", 5) == 0)
			return s;
	return NULL;
}

/* A whole number 0..WZC_KEEP_MAX of decimal digits only, from s to end. */
static int keep_count(const char *s, const char *end, long *out)
{
	if (s == end || end - s > 7)
		return -1;
	long v = 0;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		v = v * 10 + (*s - '0');
	}
	if (v > WZC_KEEP_MAX)
		return -1;
	*out = v;
	return 0;
}

/* "<base>-keep<F>-<L>": TensorRT-LLM's kept tokens on a cold-page record. */
static wz_err parse_keep(const char *name, const char *at, wzc_format *out, wz_diag *diag)
{
	const char *f = at + 5, *dash = strchr(f, '-');
	long first, last;
	if (!dash || keep_count(f, dash, &first) || keep_count(dash + 1, dash + strlen(dash), &last))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "format '%s': expected <format>-keep<F>-<L> with F and L whole "
				   "numbers from 0 to %ld",
				   name, WZC_KEEP_MAX);
	char base[64];
	size_t n = (size_t)(at - name);
	if (n >= sizeof base)
		return unknown(name, diag);
	memcpy(base, name, n);
	base[n] = 0;
	wz_err rc = wzc_format_parse(base, out, diag);
	if (rc)
		return rc;
	if (out->keeps)
		return wz_diag_set(diag, WZ_ERR_INPUT, "format '%s': -keep<F>-<L> may be given once",
				   name);
	if (!wzc_format_can_keep(out->id))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "format '%s': keeping tokens in bf16 is TensorRT-LLM's option on its "
				   "cold pages (nvfp4-trt-cold, nvfp4-trt-cold-bf16rope), not %s's",
				   name, out->name);
	out->keeps = 1;
	out->keep_first = first;
	out->keep_last = last;
	snprintf(out->name + strlen(out->name), sizeof out->name - strlen(out->name),
		 "-keep%ld-%ld", first, last);
	return WZ_OK;
}

wzc_format wzc_format_unkept(const wzc_format *f)
{
	wzc_format u = *f;
	if (u.keeps) {
		char *k = strstr(u.name, "-keep");
		if (k)
			*k = 0;
	}
	u.keeps = 0;
	u.keep_first = u.keep_last = 0;
	return u;
}

wz_err wzc_format_parse(const char *name, wzc_format *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	const char *keep = NULL;
	for (const char *k = name; (k = strcasestr_keep(k)); k++)
		keep = k;
	if (keep)
		return parse_keep(name, keep, out, diag);
	for (int i = 0; i < REGISTRY_N; i++) {
		const wzc_format_info *info = &registry[i];
		size_t n = strlen(info->name);
		if (!info->parametric) {
			if (strcasecmp(name, info->name) == 0) {
				out->id = info->id;
				snprintf(out->name, sizeof out->name, "%s", info->name);
				return WZ_OK;
			}
			continue;
		}
		if (strncasecmp(name, info->name, n) != 0 || name[n] != '-')
			continue;
		double bits;
		if (wz_parse_double(name + n + 1, &bits))
			continue;
		if (bits < WZC_WZ_MIN_BITS || bits > WZC_WZ_MAX_BITS)
			return wz_diag_set(diag, WZ_ERR_RANGE,
					   "format '%s': rate must be between %.0f and %.0f bits/value",
					   name, WZC_WZ_MIN_BITS, WZC_WZ_MAX_BITS);
		out->id = info->id;
		out->rate_bits = bits;
		snprintf(out->name, sizeof out->name, "%s-%s", info->name, name + n + 1);
		return WZ_OK;
	}
	return unknown(name, diag);
}

size_t wzc_record_bytes(const wzc_format *fmt, int R, int P)
{
	/* Kept tokens make the size a window's, not a token's. */
	if (R <= 0 || P < 0 || fmt->keeps)
		return 0;
	size_t r = (size_t)R, p = (size_t)P;
	switch (fmt->id) {
	case WZC_FMT_BF16:
		return 2 * (r + p);
	case WZC_FMT_FP8_MIX:
		return r + 2 + (p ? p + 2 : 0);
	case WZC_FMT_FP8_BF16ROPE:
		return r + 2 + 2 * p;
	case WZC_FMT_FP8_DS_MLA:
		if (r % 128)
			return 0;
		return r + 4 * (r / 128) + 2 * p;
	case WZC_FMT_FP8_FLAT:
		/* The one per-tensor scale is not per token. */
		return r + p;
	case WZC_FMT_INT4_G64:
		if (r % 64)
			return 0;
		return r / 2 + 4 * (r / 64) + (p ? p + 2 : 0);
	case WZC_FMT_NVFP4:
		if (r % 16)
			return 0;
		return r / 2 + r / 16 + (p ? p + 2 : 0);
	case WZC_FMT_NVFP4_DS_MLA:
		/* vLLM accepts only DeepSeek's geometry (kv_lora_rank 512,
		 * qk_rope_head_dim 64); the scale permutation is for 32 tiles. */
		if (r != 512 || p != 64)
			return 0;
		return r / 2 + p + r / 16;
	case WZC_FMT_MXFP4_SGL_MLA:
		/* Latent and position part are quantized separately in blocks of 16. */
		if (r % 16 || p % 16)
			return 0;
		return (r + p) / 2 + (r + p) / 16;
	case WZC_FMT_NVFP4_TRT_COLD:
		/* One quantized run per row, in whole 16-value scale groups. */
		if ((r + p) % 16)
			return 0;
		return (r + p) / 2 + (r + p) / 16;
	case WZC_FMT_NVFP4_TRT_COLD_BF16ROPE:
		if (r % 16)
			return 0;
		return r / 2 + r / 16 + 2 * p;
	case WZC_FMT_WZ:
	case WZC_FMT_WZX:
	case WZC_FMT_WZT:
	case WZC_FMT_WZT8:
	case WZC_FMT_WZT32:
	case WZC_FMT_WZS:
		/* The codec must fit a record in this budget, so wz-R never
		 * exceeds R bits/value. */
		return (size_t)floor(fmt->rate_bits * (double)(r + p) / 8.0 + 1e-9);
	}
	return 0;
}

void wzc_format_wz_grid(size_t record_bytes, int R, int P, wzc_format *out)
{
	memset(out, 0, sizeof *out);
	out->id = WZC_FMT_WZ;
	out->rate_bits = 8.0 * (double)record_bytes / (double)(R + P);
	snprintf(out->name, sizeof out->name, "wz-%.6g", out->rate_bits);
}

double wzc_bits_per_value(const wzc_format *fmt, int R, int P)
{
	size_t bytes = wzc_record_bytes(fmt, R, P);
	return (double)bytes * 8.0 / (double)(R + P);
}
