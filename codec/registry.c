/* The traits table (as ggml's type_traits[]): every cache format's one
 * entry, its static facts (DESIGN.md, "Cache formats") and its coders.
 * Numeric ids are stored in files and archives: never reuse or renumber
 * (codec/formats/format.h).  The table is the one place that reaches
 * every format's code; the codec context (codec/codec.c) and the
 * measurement (codec/measure/) reach a format through it, and nothing
 * includes this file, so no format's code can reach back. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/format.h"
#include "codec/formats/fpconv.h"
#include "codec/kvtc/kvtc.h"
#include "codec/profile/profile.h"
#include "codec/wz/wz_gemm.h"
#include "codec/wz/wz_plan.h"
#include "codec/wze/wze.h"
#include "codec/wzx/wzx.h"

/* ---- record sizes, one token of one layer ---- */

static size_t bytes_bf16(const wzc_format *f, int R, int P)
{
	(void)f;
	return 2 * ((size_t)R + (size_t)P);
}

static size_t bytes_fp8_mix(const wzc_format *f, int R, int P)
{
	(void)f;
	return (size_t)R + 2 + (P ? (size_t)P + 2 : 0);
}

static size_t bytes_fp8_bf16rope(const wzc_format *f, int R, int P)
{
	(void)f;
	return (size_t)R + 2 + 2 * (size_t)P;
}

static size_t bytes_fp8_ds_mla(const wzc_format *f, int R, int P)
{
	(void)f;
	return R % 128 ? 0 : (size_t)R + 4 * (size_t)(R / 128) + 2 * (size_t)P;
}

/* FlashMLA's MODEL1 FP8 entry, DeepSeek-V4's only shape. */
static size_t bytes_fp8_ds_mla_v4(const wzc_format *f, int R, int P)
{
	(void)f;
	return R == 448 && P == 64 ? 448 + 2 * 64 + 448 / 64 + 1 : 0;
}

/* The one per-tensor scale is not per token. */
static size_t bytes_fp8_flat(const wzc_format *f, int R, int P)
{
	(void)f;
	return (size_t)R + (size_t)P;
}

static size_t bytes_int4_g64(const wzc_format *f, int R, int P)
{
	(void)f;
	return R % 64 ? 0 : (size_t)(R / 2 + 4 * (R / 64)) + (P ? (size_t)P + 2 : 0);
}

static size_t bytes_nvfp4(const wzc_format *f, int R, int P)
{
	(void)f;
	return R % 16 ? 0 : (size_t)(R / 2 + R / 16) + (P ? (size_t)P + 2 : 0);
}

/* vLLM accepts only DeepSeek's geometry (kv_lora_rank 512,
 * qk_rope_head_dim 64); the scale permutation is for 32 tiles. */
static size_t bytes_nvfp4_ds_mla(const wzc_format *f, int R, int P)
{
	(void)f;
	return R != 512 || P != 64 ? 0 : (size_t)(R / 2 + P + R / 16);
}

/* Latent and position part are quantized separately in blocks of 16. */
static size_t bytes_mxfp4_sgl_mla(const wzc_format *f, int R, int P)
{
	(void)f;
	return R % 16 || P % 16 ? 0 : (size_t)((R + P) / 2 + (R + P) / 16);
}

/* One quantized run per row, in whole 16-value scale groups. */
static size_t bytes_trt_cold(const wzc_format *f, int R, int P)
{
	(void)f;
	return (R + P) % 16 ? 0 : (size_t)((R + P) / 2 + (R + P) / 16);
}

static size_t bytes_trt_cold_bf16rope(const wzc_format *f, int R, int P)
{
	(void)f;
	return R % 16 ? 0 : (size_t)(R / 2 + R / 16) + 2 * (size_t)P;
}

/* The codec must fit a record in this budget, so wz-R never exceeds R
 * bits/value. */
static size_t bytes_wz(const wzc_format *f, int R, int P)
{
	return (size_t)floor(f->rate_bits * ((double)R + P) / 8.0 + 1e-9);
}

/* ---- the profiled formats' coders, through the codec's plans ---- */

static wz_err wz_encode(const wzc_codec *c, int layer, int n, const float *latent,
			const float *rope, uint8_t *records, wz_diag *diag)
{
	(void)diag;
	wzc_wz_encode_layer(c->wz, layer, n, latent, rope, records, c->record_bytes);
	return WZ_OK;
}

static wz_err wz_encode_ref(const wzc_codec *c, int layer, int n, const float *latent,
			const float *rope, uint8_t *records, wz_diag *diag)
{
	(void)diag;
	wzc_wz_encode_layer_ref(c->wz, layer, n, latent, rope, records, c->record_bytes);
	return WZ_OK;
}

static wz_err wzs_encode(const wzc_codec *c, int layer, int n, const float *latent,
			const float *rope, uint8_t *records, wz_diag *diag)
{
	(void)diag;
	wzc_wzs_encode_layer(c->wz, layer, n, latent, rope, records, c->record_bytes);
	return WZ_OK;
}

static wz_err wzs_encode_ref(const wzc_codec *c, int layer, int n, const float *latent,
			const float *rope, uint8_t *records, wz_diag *diag)
{
	(void)diag;
	wzc_wzs_encode_layer_ref(c->wz, layer, n, latent, rope, records, c->record_bytes);
	return WZ_OK;
}

static wz_err wzt_encode(const wzc_codec *c, int layer, int n, const float *latent,
			const float *rope, uint8_t *records, wz_diag *diag)
{
	(void)diag;
	wzc_wzt_encode_layer(c->wz, c->wzt, layer, n, latent, rope, records, c->record_bytes);
	return WZ_OK;
}

static wz_err wzt_encode_ref(const wzc_codec *c, int layer, int n, const float *latent,
			const float *rope, uint8_t *records, wz_diag *diag)
{
	(void)diag;
	wzc_wz_encode_layer_trellis(c->wz, c->wzt, layer, n, latent, rope, records, c->record_bytes);
	return WZ_OK;
}

/* wz, wzs and wzt share the decoder (wzt's digits read off its trellis). */
static wz_err wz_decode_layer(const wzc_codec *c, int layer, int n, const uint8_t *records,
			      float *latent, float *rope)
{
	return wzc_wz_decode_layer_trellis(c->wz, c->wzt, layer, n, records, latent, rope);
}

static wz_err wz_decode_token(const wzc_codec *c, int layer, const uint8_t *record,
			      float *latent, float *rope, int transformed)
{
	return wzc_wz_decode_trellis(c->wz, c->wzt, layer, record, latent, rope, transformed);
}

/* wze (codec/wze/): the fast paths, and the reference coder they reproduce. */
static wz_err wze_encode(const wzc_codec *c, int layer, int n, const float *latent,
			const float *rope, uint8_t *records, wz_diag *diag)
{
	(void)diag;
	wzc_wze_encode_layer_fast(c->wze, layer, n, latent, rope, records);
	return WZ_OK;
}

static wz_err wze_encode_ref(const wzc_codec *c, int layer, int n, const float *latent,
			const float *rope, uint8_t *records, wz_diag *diag)
{
	(void)diag;
	wzc_wze_encode_layer(c->wze, layer, n, latent, rope, records);
	return WZ_OK;
}

static wz_err wze_decode_layer(const wzc_codec *c, int layer, int n, const uint8_t *records,
			       float *latent, float *rope)
{
	return wzc_wze_decode_layer_fast(c->wze, layer, n, records, latent, rope);
}

static wz_err wze_decode_token(const wzc_codec *c, int layer, const uint8_t *record,
			       float *latent, float *rope, int transformed)
{
	return wzc_wze_decode_token(c->wze, layer, record, latent, rope, transformed);
}

/* The integer kernels of wz's fast encoder (codec/wz/wz_gemm.c and
 * wz_gemm_x86.c), narrowest first; NULL chooses the widest this processor
 * runs again. */
static const char *const wz_kernels[] = { "portable", "avx2", "avx512bw", "avx512vnni", NULL };

static int wz_force(const char *kernel)
{
	if (kernel)
		return wzc_gemm_force(kernel);
	for (int i = (int)(sizeof wz_kernels / sizeof *wz_kernels) - 2; i >= 0; i--)
		if (!wzc_gemm_force(wz_kernels[i]))
			return 0;
	return -1;
}

/* wzt's trellis search (codec/wz/wzt_fast.c): its widest loops. */
static const char *const wzt_kernels[] = { "portable", "avx2", "avx512", NULL };

static int wzt_force(const char *kernel)
{
	int k = 2;
	if (kernel) {
		for (k = 0; wzt_kernels[k] && strcmp(kernel, wzt_kernels[k]); k++)
			;
		if (!wzt_kernels[k])
			return -1;
	}
	/* wz's front end held to the same width */
	if (k == 2 ? (kernel ? wzc_gemm_force("avx512bw") : wz_force(NULL))
		   : wzc_gemm_force(wz_kernels[k]))
		return -1;
	wzc_wzt_force_simd(k);
	return 0;
}

static wz_err wzx_bytes(const wzc_profile *p, const wzc_format *f, size_t *record_bytes,
			wz_diag *diag)
{
	return wzc_wzx_grid_bytes(p, f->rate_bits, record_bytes, diag);
}

static wz_err wzx_window(wzc_codec *c, const wzc_window *w, uint8_t **records, size_t *bytes,
			 size_t *payload, wz_diag *diag)
{
	wzc_wzx_stats st;
	wz_err e = wzc_wzx_roundtrip(c, w, records, &st, diag);
	if (!e) {
		*bytes = st.total;
		*payload = st.payload;
	}
	return e;
}

/* kvtc: its records are the restored bf16 cache (what a restore gives a
 * serving stack); the bytes it spends are the coded blocks'. */
static void bf16_record(int R, int P, const float *latent, const float *rope, uint8_t *rec)
{
	for (int i = 0; i < R + P; i++) {
		uint16_t h = wzc_bf16_from_f32(i < R ? latent[i] : rope[i - R]);
		rec[2 * i] = (uint8_t)h;
		rec[2 * i + 1] = (uint8_t)(h >> 8);
	}
}

static wz_err kvtc_encode(const wzc_codec *c, int layer, int n, const float *latent,
			  const float *rope, uint8_t *records, wz_diag *diag)
{
	size_t nl = (size_t)n * c->R, np = (size_t)n * c->P, bytes;
	float *y = malloc(sizeof *y * (nl + np + 1));
	wz_err e = y ? wzc_kvtc_roundtrip(c->profile->kvtc, c->fmt.rate_bits, layer, n, latent,
					  rope, NULL, y, y + nl, &bytes, diag)
		     : wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (%d tokens)", n);
	for (int t = 0; !e && t < n; t++)
		bf16_record(c->R, c->P, y + (size_t)t * c->R, y + nl + (size_t)t * c->P,
			    records + (size_t)t * c->record_bytes);
	free(y);
	return e;
}

static wz_err bf16_decode_token(const wzc_codec *c, int layer, const uint8_t *record,
				float *latent, float *rope, int transformed)
{
	(void)layer;
	(void)transformed;
	for (int i = 0; i < c->R + c->P; i++) {
		float v = wzc_bf16_to_f32((uint16_t)(record[2 * i] | record[2 * i + 1] << 8));
		if (i < c->R)
			latent[i] = v;
		else
			rope[i - c->R] = v;
	}
	return WZ_OK;
}

static wz_err bf16_decode_layer(const wzc_codec *c, int layer, int n, const uint8_t *records,
				float *latent, float *rope)
{
	for (int t = 0; t < n; t++)
		bf16_decode_token(c, layer, records + (size_t)t * c->record_bytes,
				  latent + (size_t)t * c->R, rope + (size_t)t * c->P, 0);
	return WZ_OK;
}

static wz_err kvtc_bytes(const wzc_profile *p, const wzc_format *f, size_t *record_bytes,
			 wz_diag *diag)
{
	if (!p->kvtc)
		return wz_diag_set(diag, WZ_ERR_MISSING,
				   "format %s needs KVTC's transforms, fitted on calibration windows "
				   "(codec measure --calibration)",
				   f->name);
	if (wzc_kvtc_layers(p->kvtc) != p->L || wzc_kvtc_R(p->kvtc) != p->R ||
	    wzc_kvtc_P(p->kvtc) != p->P)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "KVTC's calibration windows are not of the profile's shape");
	*record_bytes = 2 * ((size_t)p->R + (size_t)p->P);
	return WZ_OK;
}

/* The window through KVTC, layer by layer: the bf16 records it restores
 * and the bytes of its coded blocks (the inputs rounded to bf16 first, as
 * wzc_encode_layer_at rounds every format's). */
static wz_err kvtc_window(wzc_codec *c, const wzc_window *w, uint8_t **records, size_t *bytes,
			  size_t *payload, wz_diag *diag)
{
	size_t T = (size_t)w->T, nl = T * w->R, np = T * w->P, rb = c->record_bytes;
	float *in = malloc(sizeof *in * (nl + np + 1));
	uint8_t *rec = malloc(rb * T * (size_t)w->L + 1);
	wz_err e = in && rec ? WZ_OK : wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	*bytes = *payload = 0;
	for (int l = 0; !e && l < w->L; l++) {
		memcpy(in, w->latent + (size_t)l * nl, sizeof *in * nl);
		memcpy(in + nl, w->rope + (size_t)l * np, sizeof *in * np);
		for (size_t i = 0; i < nl + np; i++)
			in[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(in[i]));
		size_t b = 0;
		e = wzc_kvtc_roundtrip(c->profile->kvtc, c->fmt.rate_bits, l, w->T, in, in + nl,
				       w->positions, in, in + nl, &b, diag);
		*bytes += b;
		for (size_t t = 0; !e && t < T; t++)
			bf16_record(w->R, w->P, in + t * w->R, in + nl + t * w->P,
				    rec + ((size_t)l * T + t) * rb);
	}
	/* the payload: the coded blocks and kept sinks without each block's
	 * length (an upper bound of the blocks: one more where a sink is
	 * in the window) */
	size_t lengths = 4 * (size_t)w->L * ((T + WZC_KVTC_BLOCK - 1) / WZC_KVTC_BLOCK);
	*payload = *bytes > lengths ? *bytes - lengths : 0;
	free(in);
	if (e)
		free(rec);
	else
		*records = rec;
	return e;
}

#define BASELINE(rb) .record_bytes = rb, .encode = wzc_baseline_encode, .decode = wzc_baseline_decode
#define PROFILED(enc, ref)                                                                       \
	.record_bytes = bytes_wz, .needs_profile = 1, .wz_plan = 1, .encode_layer = enc,            \
	.encode_layer_ref = ref, .decode_layer = wz_decode_layer, .decode_token = wz_decode_token
#define WZ_CODER PROFILED(wz_encode, wz_encode_ref), .kernels = wz_kernels, .force = wz_force
#define WZS_CODER PROFILED(wzs_encode, wzs_encode_ref), .kernels = wz_kernels, .force = wz_force
#define WZX_CODER                                                                  \
	PROFILED(wz_encode, wz_encode_ref), .kernels = wz_kernels, .force = wz_force, \
		.profile_record_bytes = wzx_bytes, .window_records = wzx_window
/* kvtc has no fast path of its own: its reference is its coder */
#define KVTC_CODER                                                                             \
	.record_bytes = bytes_wz, .needs_profile = 1, .encode_layer = kvtc_encode,                \
	.encode_layer_ref = kvtc_encode, .decode_layer = bf16_decode_layer,                         \
	.decode_token = bf16_decode_token, .profile_record_bytes = kvtc_bytes,                      \
	.window_records = kvtc_window
#define WZE_CODER                                                                         \
	.record_bytes = bytes_wz, .needs_profile = 1, .encode_layer = wze_encode,           \
	.encode_layer_ref = wze_encode_ref, .decode_layer = wze_decode_layer,                     \
	.decode_token = wze_decode_token
#define WZT_CODER(nu)                                                                         \
	PROFILED(wzt_encode, wzt_encode_ref), .trellis_nu = nu, .kernels = wzt_kernels, \
		.force = wzt_force

static const wzc_format_info table[] = {
	{ WZC_FMT_BF16, "bf16", WZC_TIER_GPU, 0,
	  "576 x bf16: the uncompressed cache", NULL,
	  BASELINE(bytes_bf16) },
	{ WZC_FMT_FP8_MIX, "fp8-mix", WZC_TIER_GPU, 0,
	  "latent e4m3 + fp16 scale (absmax/448), position int8 + fp16 scale (absmax/127)", NULL,
	  BASELINE(bytes_fp8_mix) },
	{ WZC_FMT_FP8_BF16ROPE, "fp8-bf16rope", WZC_TIER_GPU, 0,
	  "latent e4m3 + fp16 scale, position part kept in bf16", NULL,
	  BASELINE(bytes_fp8_bf16rope) },
	{ WZC_FMT_FP8_DS_MLA, "fp8-ds-mla", WZC_TIER_GPU, 0,
	  "FlashMLA FP8 with scale as vLLM writes it: latent e4m3 (x / scale) + fp32 scale "
	  "max(absmax/448, FLT_MIN) per 128, position bf16 (656 B)",
	  "vllm-project/vllm csrc/libtorch_stable/cache_kernels.cu "
	  "(concat_and_cache_ds_mla_kernel; read at 37cb21c1695d) and "
	  "csrc/quantization/w8a8/fp8/nvidia/quant_utils.cuh (scaled_vec_conversion: "
	  "bf16 to float, divided by the scale); layout: deepseek-ai/FlashMLA "
	  "csrc/api/sparse_decode.h (bytes_per_token)",
	  BASELINE(bytes_fp8_ds_mla) },
	{ WZC_FMT_FP8_DS_MLA_UE8M0, "fp8-ds-mla-ue8m0", WZC_TIER_GPU, 0,
	  "FlashMLA FP8 with power-of-two (UE8M0) scales: latent e4m3 (x / scale) + fp32 "
	  "scale 2^ceil(log2 max(absmax/448, 1e-4)) per 128, position bf16 (656 B)",
	  "deepseek-ai/FlashMLA tests/quant.py (quantize_k_cache, V32_FP8Sparse, "
	  "_cast_scale_inv_to_ue8m0; read at 520fec6a7fd9)",
	  BASELINE(bytes_fp8_ds_mla) },
	{ WZC_FMT_FP8_DS_MLA_V4, "fp8-ds-mla-v4", WZC_TIER_GPU, 0,
	  "FlashMLA's DeepSeek-V4 FP8 entry (448 + 64 only): 448 e4m3, 64 bf16, a UE8M0 "
	  "power-of-two scale per 64 and a pad byte (584 B)",
	  "deepseek-ai/FlashMLA csrc/api/sparse_decode.h (MODEL1 bytes_per_token "
	  "448 + 64*2 + (448/64)*1 + 1) and tests/quant.py (MODEL1_FP8Sparse: scale "
	  "2^ceil(log2(max(amax / 448, 1e-4))), value / scale)",
	  BASELINE(bytes_fp8_ds_mla_v4) },
	{ WZC_FMT_FP8_FLAT, "fp8-flat", WZC_TIER_GPU, 0,
	  "all values e4m3 with one per-tensor scale (vLLM/SGLang default)", NULL,
	  BASELINE(bytes_fp8_flat) },
	{ WZC_FMT_INT4_G64, "int4-g64", WZC_TIER_GPU, 0,
	  "latent uint4 asymmetric in groups of 64 (fp16 scale+zero), position int8 + fp16 scale", NULL,
	  BASELINE(bytes_int4_g64) },
	{ WZC_FMT_NVFP4, "nvfp4", WZC_TIER_GPU, 0,
	  "latent e2m1 with an e4m3 scale per 16, position e4m3 + fp16 scale", NULL,
	  BASELINE(bytes_nvfp4) },
	{ WZC_FMT_NVFP4_DS_MLA, "nvfp4-ds-mla", WZC_TIER_GPU, 0,
	  "vLLM nvfp4_ds_mla: latent e2m1 + e4m3 scale per 16 (rounded up, permuted), "
	  "position e4m3 unscaled (352 B)",
	  "vllm-project/vllm csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu "
	  "(concat_and_cache_nvfp4_ds_mla_kernel, nvfp4_tile_scale, nvfp4_sf_byte)",
	  BASELINE(bytes_nvfp4_ds_mla) },
	{ WZC_FMT_MXFP4_SGL_MLA, "mxfp4-sgl-mla", WZC_TIER_GPU, 0,
	  "SGLang fp4_mx_block16 MLA pool: all 576 values e2m1 with an E8M0 scale per 16 "
	  "(324 B)",
	  "sgl-project/sglang python/sglang/srt/mem_cache/memory_pool.py "
	  "(MLATokenToKVPoolFP4.set_mla_kv_buffer) and "
	  "python/sglang/srt/layers/quantization/kvfp4_tensor.py (batched_quantize)",
	  BASELINE(bytes_mxfp4_sgl_mla) },
	{ WZC_FMT_NVFP4_TRT_COLD, "nvfp4-trt-cold", WZC_TIER_OFFLOAD, 0,
	  "TensorRT-LLM NVFP4 cold page, MLA row: all 576 values e2m1 with an e4m3 scale "
	  "per 16 (324 B)",
	  "NVIDIA/TensorRT-LLM cpp/tensorrt_llm/kernels/nvfp4ColdPageKernels.cu and "
	  "tensorrt_llm/_torch/kv_cache_compression/quantization_for_cold_page/"
	  "nvfp4_quantization.py (build_lifecycle_metadata)",
	  BASELINE(bytes_trt_cold), .can_keep = 1 },
	{ WZC_FMT_NVFP4_TRT_COLD_BF16ROPE, "nvfp4-trt-cold-bf16rope", WZC_TIER_OFFLOAD, 0,
	  "TensorRT-LLM NVFP4 cold page with the position part lossless: latent e2m1 + "
	  "e4m3 scale per 16, position bf16 (416 B)",
	  "NVIDIA/TensorRT-LLM tensorrt_llm/_torch/kv_cache_compression/"
	  "quantization_for_cold_page/row_schema.py (ColdPagePolicy.row_geometry, "
	  "rope_precision='lossless')",
	  BASELINE(bytes_trt_cold_bf16rope), .can_keep = 1 },
	{ WZC_FMT_WZ, "wz", WZC_TIER_GPU, 1,
	  "ours, GPU tier: fixed record per token at the requested bits/value", NULL,
	  WZ_CODER },
	{ WZC_FMT_WZX, "wzx", WZC_TIER_OFFLOAD, 1,
	  "ours, offload tier: entropy-coded blocks of 64 tokens x one layer", NULL,
	  WZX_CODER },
	{ WZC_FMT_WZT, "wzt", WZC_TIER_GPU, 1,
	  "ours, GPU tier: wz's record with a 256-state trellis-coded quantizer per token", NULL,
	  WZT_CODER(8) },
	{ WZC_FMT_WZT8, "wzt8", WZC_TIER_GPU, 1,
	  "ours, GPU tier: wzt on an 8-state trellis (the family's fastest encoder; docs/wz-format.md)",
	  NULL,
	  WZT_CODER(3) },
	{ WZC_FMT_WZT32, "wzt32", WZC_TIER_GPU, 1,
	  "ours, GPU tier: wzt on a 32-state trellis", NULL,
	  WZT_CODER(5) },
	{ WZC_FMT_WZS, "wzs", WZC_TIER_GPU, 1,
	  "ours, GPU tier: wz's record and decoder, each token's scale codes searched by "
	  "their error (a slower encoder; docs/wz-format.md, step 6)",
	  NULL,
	  WZS_CODER },
	{ WZC_FMT_KVTC, "kvtc", WZC_TIER_OFFLOAD, 1,
	  "KV-cache transform coding: a PCA of each layer's whole token from calibration "
	  "windows, bits across components by dynamic programming, zstd (docs/kvtc.md)",
	  "arXiv 2511.01815 (NVIDIA, KVTC), written from the paper's description",
	  KVTC_CODER },
	{ WZC_FMT_WZE, "wze", WZC_TIER_GPU, 1,
	  "ours, GPU tier: a fixed record per token whose coefficients are quantized "
	  "uniformly and rANS-coded at the finest step that fits (docs/wze-format.md)",
	  NULL,
	  WZE_CODER },
};

#define TABLE_N ((int)(sizeof table / sizeof table[0]))

int wzc_format_count(void)
{
	return TABLE_N;
}

const wzc_format_info *wzc_format_info_at(int i)
{
	return i >= 0 && i < TABLE_N ? &table[i] : NULL;
}

const wzc_format_info *wzc_format_info_of(wzc_format_id id)
{
	for (int i = 0; i < TABLE_N; i++)
		if (table[i].id == id)
			return &table[i];
	return NULL;
}
