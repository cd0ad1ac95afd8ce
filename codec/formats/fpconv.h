/* Per-element number conversions shared by the C reference and the CUDA
 * kernels: bf16, fp16, OCP e4m3 and e2m1 (round to nearest even, saturating,
 * no infinities), all as static inline functions marked WZ_HD. */
#ifndef WZC_FPCONV_H
#define WZC_FPCONV_H

#include <stdint.h>

/* Under nvcc the same functions compile for host and device; elsewhere the
 * macro is empty so this header is plain C11. */
#ifdef __CUDACC__
#define WZ_HD __host__ __device__
#else
#define WZ_HD
#endif

/* Type punning through a union is defined in C and accepted by nvcc, so the
 * same code serves both compilers (memcpy is not a device function in every
 * CUDA version). */
typedef union {
	float f;
	uint32_t u;
} wzc_f32bits;

static inline WZ_HD uint32_t wzc_f32_bits(float f)
{
	wzc_f32bits b;
	b.f = f;
	return b.u;
}

static inline WZ_HD float wzc_f32_from_bits(uint32_t u)
{
	wzc_f32bits b;
	b.u = u;
	return b.f;
}

static inline WZ_HD int wzc_isnan(float f)
{
	return (wzc_f32_bits(f) & 0x7fffffffu) > 0x7f800000u;
}

/* ---- bf16: the upper half of a binary32, rounded to nearest even. ---- */

static inline WZ_HD uint16_t wzc_bf16_from_f32(float f)
{
	uint32_t u = wzc_f32_bits(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40); /* keep NaN a quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static inline WZ_HD float wzc_bf16_to_f32(uint16_t h)
{
	return wzc_f32_from_bits((uint32_t)h << 16);
}

/* ---- fp16 (IEEE binary16), round to nearest even, overflow to inf. ---- */

static inline WZ_HD uint16_t wzc_f16_from_f32(float f)
{
	uint32_t u = wzc_f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return (uint16_t)(sign | 0x7e00u);
	if (a >= 0x477ff000u) /* >= 65520 rounds past the largest finite value */
		return (uint16_t)(sign | 0x7c00u);
	if (a < 0x38800000u) { /* below 2^-14: subnormal or zero */
		if (a <= 0x33000000u) /* up to half the smallest subnormal */
			return sign;
		uint32_t mant = (a & 0x7fffffu) | 0x800000u;
		int shift = 126 - (int)(a >> 23); /* 14..24 */
		uint32_t q = mant >> shift;
		uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (q & 1u)))
			q++;
		return (uint16_t)(sign | q);
	}
	uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
	return (uint16_t)(sign | ((r - 0x38000000u) >> 13));
}

static inline WZ_HD float wzc_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0) {
		/* subnormal: m * 2^-24, exact in binary32 */
		float v = (float)m * 5.9604644775390625e-8f;
		return sign ? -v : v;
	}
	if (e == 31)
		return wzc_f32_from_bits(sign | 0x7f800000u | (m << 13));
	return wzc_f32_from_bits(sign | ((e + 112u) << 23) | (m << 13));
}

/* ---- OCP e4m3 (E4M3FN): bias 7, max 448, S.1111.111 is NaN, no inf. ---- */

#define WZC_E4M3_MAX 448.0f

static inline WZ_HD float wzc_e4m3_to_f32(uint8_t c)
{
	uint32_t e = (c >> 3) & 0xfu, m = c & 7u;
	float v;
	if (e == 15 && m == 7)
		return wzc_f32_from_bits(((uint32_t)(c & 0x80) << 24) | 0x7fc00000u);
	if (e == 0)
		v = (float)m * 0.001953125f; /* m/8 * 2^-6 */
	else
		v = wzc_f32_from_bits(((e + 120u) << 23) | (m << 20));
	return (c & 0x80) ? -v : v;
}

static inline WZ_HD uint8_t wzc_e4m3_from_f32(float f)
{
	uint32_t u = wzc_f32_bits(f);
	uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return (uint8_t)(sign | 0x7f);
	if (a >= 0x43e00000u) /* >= 448, including inf: saturate */
		return (uint8_t)(sign | 0x7e);
	if (a < 0x3c800000u) { /* below 2^-6: subnormal steps of 2^-9 */
		if (a <= 0x3a800000u) /* up to half the smallest step (2^-10): zero */
			return sign;
		uint32_t mant = (a & 0x7fffffu) | 0x800000u;
		int shift = 141 - (int)(a >> 23); /* value in units of 2^-9: 21..24 */
		uint32_t q = mant >> shift;
		uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (q & 1u)))
			q++;
		return (uint8_t)(sign | q); /* q == 8 is the smallest normal, 0x08 */
	}
	uint32_t r = (a >> 20) & 7u, rem = a & 0xfffffu;
	uint32_t code = (((a >> 23) - 120u) << 3) | r;
	if (rem > 0x80000u || (rem == 0x80000u && (r & 1u)))
		code++;
	if (code > 0x7e)
		code = 0x7e;
	return (uint8_t)(sign | code);
}

/* ---- OCP e2m1 (FP4): values 0, .5, 1, 1.5, 2, 3, 4, 6; code bit 3 is the
 * sign. ---- */

static inline WZ_HD float wzc_e2m1_to_f32(uint8_t c)
{
	/* magnitudes of codes 0..7 */
	const float mag = (float)((c & 7) < 4 ? (c & 7) * 0.5f
				 : (c & 7) == 4 ? 2.0f : (c & 7) == 5 ? 3.0f
				 : (c & 7) == 6 ? 4.0f : 6.0f);
	return (c & 8) ? -mag : mag;
}

static inline WZ_HD uint8_t wzc_e2m1_from_f32(float f)
{
	uint32_t u = wzc_f32_bits(f);
	uint8_t sign = (uint8_t)((u >> 28) & 8u);
	float a = wzc_f32_from_bits(u & 0x7fffffffu);
	uint8_t c;
	if (wzc_isnan(f))
		return (uint8_t)(sign | 7); /* no NaN code: saturate */
	/* Ties go to the even code (mantissa bit 0). */
	if (a <= 0.25f)
		c = 0;
	else if (a < 0.75f)
		c = 1;
	else if (a <= 1.25f)
		c = 2;
	else if (a < 1.75f)
		c = 3;
	else if (a <= 2.5f)
		c = 4;
	else if (a < 3.5f)
		c = 5;
	else if (a <= 5.0f)
		c = 6;
	else
		c = 7;
	return (uint8_t)(sign | c);
}

/* Round to nearest, ties to even, without depending on the rounding mode. */
static inline WZ_HD float wzc_rint(float x)
{
	/* 2^23 added and removed rounds to an integer in the default mode;
	 * values that large are integers already. */
	float a = x < 0 ? -x : x;
	if (a >= 8388608.0f)
		return x;
	float r = (a + 8388608.0f) - 8388608.0f;
	return x < 0 ? -r : r;
}

#endif
