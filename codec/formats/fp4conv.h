/* Per-element pieces of the 4-bit MLA baselines that serving stacks ship
 * (vLLM nvfp4_ds_mla, SGLang's block-16 MXFP4, TensorRT-LLM's NVFP4 cold
 * pages), as static inline functions for the C reference and later CUDA.
 * Each one follows the rounding of the code that defines the format, which
 * is not always the OCP round-to-nearest-even of codec/formats/fpconv.h. */
#ifndef WZC_FP4CONV_H
#define WZC_FP4CONV_H

#include <stdint.h>

#include "codec/formats/fpconv.h"

/* ---- vLLM nvfp4_ds_mla (csrc/libtorch_stable/nvfp4_ds_mla_cache_kernels.cu,
 * nvfp4_tile_scale and nvfp4_sf_byte) ---- */

/* The e4m3 scale of a 16-value tile: max(amax / 6, 2^-9) rounded to e4m3,
 * then bumped to the next e4m3 value when rounding went below, so that no
 * value of the tile saturates. */
static inline WZ_HD uint8_t wzc_vllm_fp4_scale(float amax)
{
	float sf = amax / 6.0f;
	if (!(sf >= 0.001953125f)) /* also NaN: the kernel's fmaxf drops it */
		sf = 0.001953125f;
	uint8_t code = wzc_e4m3_from_f32(sf);
	if (wzc_e4m3_to_f32(code) < sf && code < 0x7e)
		code++;
	return code;
}

/* Byte of tile s's scale inside the 32-byte scale field: an 8 x 4 -> 4 x 8
 * transpose, so one dequantizing thread's 8 scales are contiguous. */
static inline WZ_HD int wzc_vllm_fp4_scale_slot(int s)
{
	return 8 * (s & 3) + (s >> 2);
}

/* ---- SGLang fp4_mx_block16 (python/sglang/srt/layers/quantization/
 * kvfp4_tensor.py, batched_quantize) ---- */

/* The exponent e = ceil(log2(max(amax / 6, 1e-10))), stored as e + 127.
 * Computed from the bits rather than log2f, which is inexact at powers of
 * two; e lies in [-33, 128] for finite input. */
static inline WZ_HD uint8_t wzc_mx16_scale_code(float amax)
{
	float v = amax / 6.0f;
	if (!(v >= 1e-10f))
		v = 1e-10f;
	if (!(v <= 1.0e38f))
		return 254; /* infinite amax: the largest exponent a byte holds */
	uint32_t u = wzc_f32_bits(v);
	int e = (int)((u >> 23) & 0xffu) - 127;
	if (u & 0x7fffffu)
		e++; /* not a power of two: round the exponent up */
	return (uint8_t)(e + 127);
}

/* 2^(code - 127), the scale a code stands for (OCP E8M0; 255 is NaN). */
static inline WZ_HD float wzc_e8m0_to_f32(uint8_t code)
{
	if (code == 255)
		return wzc_f32_from_bits(0x7fc00000u);
	if (code == 0)
		return wzc_f32_from_bits(0x00400000u); /* 2^-127, subnormal */
	return wzc_f32_from_bits((uint32_t)code << 23);
}

/* e2m1 as SGLang rounds it: the magnitude code counts the midpoints at or
 * below |x| (ties go away from zero, not to even), saturating at 6; the
 * sign bit is x < 0, so -0 and NaN give code 0. */
static inline WZ_HD uint8_t wzc_e2m1_from_f32_tie_up(float x)
{
	float a = x < 0 ? -x : x;
	uint8_t m = (uint8_t)((a >= 0.25f) + (a >= 0.75f) + (a >= 1.25f) + (a >= 1.75f) +
			      (a >= 2.5f) + (a >= 3.5f) + (a >= 5.0f));
	return (uint8_t)((x < 0 ? 8 : 0) | m);
}

/* ---- TensorRT-LLM NVFP4 cold pages (cpp/tensorrt_llm/kernels/
 * nvfp4ColdPageKernels.cu) ---- */

/* The e4m3 scale of a 16-value group: e4m3(amax / 6) rounded to nearest,
 * times the buffer's global scale, which is 1 for MLA latent buffers
 * (ModelOpt's K/V scales do not apply to them). */
static inline WZ_HD uint8_t wzc_trt_fp4_scale(float amax)
{
	return wzc_e4m3_from_f32(amax * (1.0f / 6.0f));
}

#endif
