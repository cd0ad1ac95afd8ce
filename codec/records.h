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

#endif
