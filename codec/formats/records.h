/* Record layouts of the baseline formats for DeepSeek's shape (latent 512,
 * position 64), shared by the C reference and the CUDA kernels; sizes are
 * checked at compile time against DESIGN.md's table.  All multi-byte fields
 * are little-endian, so the structs are the bytes on x86 and on the GPU. */
#ifndef WZC_RECORDS_H
#define WZC_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#define WZC_R 512
#define WZC_P 64

/* bf16: 576 x bf16. */
typedef struct {
	uint16_t latent[WZC_R];
	uint16_t rope[WZC_P];
} wzc_rec_bf16;

/* fp8-mix: latent e4m3 + fp16 scale (absmax/448), position int8 + fp16 scale
 * (absmax/127). */
typedef struct {
	uint8_t latent[WZC_R];
	uint16_t latent_scale;
	int8_t rope[WZC_P];
	uint16_t rope_scale;
} wzc_rec_fp8_mix;

/* fp8-bf16rope: latent e4m3 + fp16 scale, position part bf16. */
typedef struct {
	uint8_t latent[WZC_R];
	uint16_t latent_scale;
	uint16_t rope[WZC_P];
} wzc_rec_fp8_bf16rope;

/* fp8-ds-mla: FlashMLA "FP8 with scale": latent e4m3, an fp32 scale per 128
 * values, position part bf16. */
typedef struct {
	uint8_t latent[WZC_R];
	float scale[WZC_R / 128];
	uint16_t rope[WZC_P];
} wzc_rec_fp8_ds_mla;

/* fp8-flat: every value e4m3; the per-tensor scale lives outside the record. */
typedef struct {
	uint8_t latent[WZC_R];
	uint8_t rope[WZC_P];
} wzc_rec_fp8_flat;

/* int4-g64: latent uint4 asymmetric in groups of 64 (element 2i in the low
 * nibble of byte i), per group fp16 scale and fp16 zero (x = q*scale + zero),
 * position int8 + fp16 scale. */
typedef struct {
	uint16_t scale;
	uint16_t zero;
} wzc_int4_group;

typedef struct {
	uint8_t latent[WZC_R / 2];
	wzc_int4_group group[WZC_R / 64];
	int8_t rope[WZC_P];
	uint16_t rope_scale;
} wzc_rec_int4_g64;

/* nvfp4: latent e2m1 (element 2i in the low nibble), an e4m3 scale per 16
 * values (absmax/6), position e4m3 + fp16 scale (absmax/448). */
typedef struct {
	uint8_t latent[WZC_R / 2];
	uint8_t scale[WZC_R / 16];
	uint8_t rope[WZC_P];
	uint16_t rope_scale;
} wzc_rec_nvfp4;

/* The byte counts of DESIGN.md's table; a change here is a format change. */
_Static_assert(sizeof(wzc_rec_bf16) == 1152, "bf16 record is 1152 bytes");
_Static_assert(sizeof(wzc_rec_fp8_mix) == 580, "fp8-mix record is 580 bytes (8.06 b/v)");
_Static_assert(sizeof(wzc_rec_fp8_bf16rope) == 642, "fp8-bf16rope record is 642 bytes");
_Static_assert(sizeof(wzc_rec_fp8_ds_mla) == 656, "fp8-ds-mla record is 656 bytes");
_Static_assert(sizeof(wzc_rec_fp8_flat) == 576, "fp8-flat record is 576 bytes");
_Static_assert(sizeof(wzc_rec_int4_g64) == 354, "int4-g64 record is 354 bytes (4.92 b/v)");
_Static_assert(sizeof(wzc_rec_nvfp4) == 354, "nvfp4 record is 354 bytes (4.92 b/v)");
_Static_assert(offsetof(wzc_rec_fp8_mix, rope_scale) == 578, "fp8-mix: no padding");
_Static_assert(offsetof(wzc_rec_fp8_ds_mla, rope) == 528, "fp8-ds-mla: no padding");
_Static_assert(offsetof(wzc_rec_int4_g64, rope) == 288, "int4-g64: no padding");
_Static_assert(offsetof(wzc_rec_nvfp4, rope_scale) == 352, "nvfp4: no padding");

/* nvfp4-ds-mla: vLLM's nvfp4_ds_mla record (352 B): latent e2m1 (element 2i
 * in the low nibble), position part e4m3 without a scale, then an e4m3
 * scale per 16 latent values, tile s's scale at byte
 * wzc_vllm_fp4_scale_slot(s) of the field. */
typedef struct {
	uint8_t latent[WZC_R / 2];
	uint8_t rope[WZC_P];
	uint8_t scale[WZC_R / 16];
} wzc_rec_nvfp4_ds_mla;

/* mxfp4-sgl-mla: SGLang's MLA FP4 pool (MLATokenToKVPoolFP4) with its
 * block-16 MXFP4 quantizer: the data row (latent e2m1 then position e2m1)
 * and the scale row (one E8M0 exponent per 16 values, latent then
 * position), one token's slice of each. */
typedef struct {
	uint8_t latent[WZC_R / 2];
	uint8_t rope[WZC_P / 2];
	uint8_t latent_scale[WZC_R / 16];
	uint8_t rope_scale[WZC_P / 16];
} wzc_rec_mxfp4_sgl_mla;

/* nvfp4-trt-cold: one token's share of a TensorRT-LLM NVFP4 cold page of an
 * MLA layer: all 576 values e2m1 as one run, then an e4m3 scale per 16. */
typedef struct {
	uint8_t value[(WZC_R + WZC_P) / 2];
	uint8_t scale[(WZC_R + WZC_P) / 16];
} wzc_rec_nvfp4_trt_cold;

/* nvfp4-trt-cold-bf16rope: the same with the position part kept lossless
 * (rope_precision 'lossless' / skip_rope_quantization): latent e2m1, its
 * scales, then the position part in bf16. */
typedef struct {
	uint8_t latent[WZC_R / 2];
	uint8_t scale[WZC_R / 16];
	uint16_t rope[WZC_P];
} wzc_rec_nvfp4_trt_cold_bf16rope;

_Static_assert(sizeof(wzc_rec_nvfp4_ds_mla) == 352, "nvfp4-ds-mla record is 352 bytes (4.89 b/v)");
_Static_assert(sizeof(wzc_rec_mxfp4_sgl_mla) == 324, "mxfp4-sgl-mla record is 324 bytes (4.50 b/v)");
_Static_assert(sizeof(wzc_rec_nvfp4_trt_cold) == 324, "nvfp4-trt-cold record is 324 bytes (4.50 b/v)");
_Static_assert(sizeof(wzc_rec_nvfp4_trt_cold_bf16rope) == 416,
	       "nvfp4-trt-cold-bf16rope record is 416 bytes (5.78 b/v)");
_Static_assert(offsetof(wzc_rec_nvfp4_ds_mla, scale) == 320, "nvfp4-ds-mla: scales at byte 320");
_Static_assert(offsetof(wzc_rec_mxfp4_sgl_mla, latent_scale) == 288, "mxfp4-sgl-mla: no padding");
_Static_assert(offsetof(wzc_rec_nvfp4_trt_cold_bf16rope, rope) == 288,
	       "nvfp4-trt-cold-bf16rope: no padding");

#endif
