/* The baseline formats byte-exact (DESIGN.md, "Cache formats"): bf16, the
 * FP8 variants, int4 in groups of 64 and NVFP4, one token of one layer at a
 * time, for any latent width the format's grouping allows. */
#include <float.h>
#include <math.h>
#include <pthread.h>

#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/formats/fpconv.h"

/* Every e4m3 and e2m1 code's value, filled once: a table lookup gives the
 * conversion's very floats (tests/codec/test_formats checks all codes) at
 * a fraction of its cost, so CPU comparisons do not understate fp8. */
static float e4m3_value[256], e2m1_value[16];
static pthread_once_t values_once = PTHREAD_ONCE_INIT;

static void fill_values(void)
{
	for (int c = 0; c < 256; c++)
		e4m3_value[c] = wzc_e4m3_to_f32((uint8_t)c);
	for (int c = 0; c < 16; c++)
		e2m1_value[c] = wzc_e2m1_to_f32((uint8_t)c);
}

const float *wzc_e4m3_values(void)
{
	pthread_once(&values_once, fill_values);
	return e4m3_value;
}

const float *wzc_e2m1_values(void)
{
	pthread_once(&values_once, fill_values);
	return e2m1_value;
}

static float absmax(const float *x, int n)
{
	float m = 0;
	for (int i = 0; i < n; i++) {
		float a = fabsf(x[i]);
		if (a > m)
			m = a;
	}
	return m;
}

/* A scale stored as fp16: the value actually used for encoding is the
 * rounded one, so decoding reproduces the encoder's arithmetic exactly.  A
 * nonzero scale never rounds to zero (the smallest subnormal instead). */
static uint16_t f16_scale(float s)
{
	uint16_t h = wzc_f16_from_f32(s);
	if (s > 0 && (h & 0x7fff) == 0)
		h = 1;
	if ((h & 0x7fff) >= 0x7c00)
		h = 0x7bff; /* the largest finite fp16 */
	return h;
}

static void e4m3_encode(const float *x, int n, float scale, uint8_t *out)
{
	float inv = scale > 0 ? 1.0f / scale : 0;
	for (int i = 0; i < n; i++)
		out[i] = wzc_e4m3_from_f32(x[i] * inv);
}

/* Each value divided by the scale, as vLLM's scaled_vec_conversion and
 * FlashMLA's quantize_k_cache do (a product with the reciprocal differs
 * from the quotient by one e4m3 step on some values). */
static void e4m3_encode_div(const float *x, int n, float scale, uint8_t *out)
{
	for (int i = 0; i < n; i++)
		out[i] = wzc_e4m3_from_f32(x[i] / scale);
}

/* FlashMLA's power-of-two scale of a 128-value tile
 * (_cast_scale_inv_to_ue8m0: 2^ceil(log2(max(absmax / 448, 1e-4))) in
 * float32): the least power of two at or above max(absmax / 448, 1e-4),
 * found from the float's bits, so that no rounding of a logarithm can
 * move it (torch's log2 of an exact power of two is exact). */
static float ue8m0_scale(float amax)
{
	float s = fmaxf(amax / WZC_E4M3_MAX, 1e-4f);
	int e;
	float m = frexpf(s, &e); /* s = m 2^e, m in [0.5, 1) */
	return ldexpf(1.0f, m == 0.5f ? e - 1 : e);
}

static void e4m3_decode(const uint8_t *in, int n, float scale, float *x)
{
	const float *v = wzc_e4m3_values();
	for (int i = 0; i < n; i++)
		x[i] = v[in[i]] * scale;
}

/* int8 with an fp16 scale absmax/127; writes n bytes then the scale. */
static void int8_encode(const float *x, int n, uint8_t *out)
{
	uint16_t h = f16_scale(absmax(x, n) / 127.0f);
	float s = wzc_f16_to_f32(h);
	float inv = s > 0 ? 1.0f / s : 0;
	for (int i = 0; i < n; i++) {
		float q = wzc_rint(x[i] * inv);
		q = q > 127 ? 127 : q < -127 ? -127 : q == q ? q : 0; /* NaN: code 0 */
		out[i] = (uint8_t)(int8_t)q;
	}
	wzc_put16(out + n, h);
}

static void int8_decode(const uint8_t *in, int n, float *x)
{
	float s = wzc_f16_to_f32(wzc_get16(in + n));
	for (int i = 0; i < n; i++)
		x[i] = (float)(int8_t)in[i] * s;
}

double wzc_int8_sq_error(const float *x, int n, uint8_t *code, float *y)
{
	double e = 0;
	int8_encode(x, n, code);
	int8_decode(code, n, y);
	for (int i = 0; i < n; i++)
		e += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
	return e;
}

static void bf16_encode(const float *x, int n, uint8_t *out)
{
	for (int i = 0; i < n; i++)
		wzc_put16(out + 2 * i, wzc_bf16_from_f32(x[i]));
}

static void bf16_decode(const uint8_t *in, int n, float *x)
{
	for (int i = 0; i < n; i++)
		x[i] = wzc_bf16_to_f32(wzc_get16(in + 2 * i));
}

/* e4m3 with an fp16 absmax/448 scale: n codes then the scale. */
static void fp8_scaled_encode(const float *x, int n, uint8_t *out)
{
	uint16_t h = f16_scale(absmax(x, n) / WZC_E4M3_MAX);
	e4m3_encode(x, n, wzc_f16_to_f32(h), out);
	wzc_put16(out + n, h);
}

static void fp8_scaled_decode(const uint8_t *in, int n, float *x)
{
	e4m3_decode(in, n, wzc_f16_to_f32(wzc_get16(in + n)), x);
}

static void int4_encode(const float *x, int R, uint8_t *rec)
{
	uint8_t *groups = rec + R / 2;
	for (int g = 0; g < R / 64; g++) {
		const float *v = x + 64 * g;
		float lo = v[0], hi = v[0];
		for (int i = 1; i < 64; i++) {
			lo = v[i] < lo ? v[i] : lo;
			hi = v[i] > hi ? v[i] : hi;
		}
		uint16_t hs = f16_scale((hi - lo) / 15.0f), hz = wzc_f16_from_f32(lo);
		float s = wzc_f16_to_f32(hs), z = wzc_f16_to_f32(hz);
		float inv = s > 0 ? 1.0f / s : 0;
		for (int i = 0; i < 64; i += 2) {
			float q0 = wzc_rint((v[i] - z) * inv), q1 = wzc_rint((v[i + 1] - z) * inv);
			/* NaN (an infinite value against an infinite zero point) is
			 * code 0: converting NaN to int is undefined */
			q0 = q0 > 0 ? (q0 < 15 ? q0 : 15) : 0;
			q1 = q1 > 0 ? (q1 < 15 ? q1 : 15) : 0;
			rec[32 * g + i / 2] = (uint8_t)((int)q0 | (int)q1 << 4);
		}
		wzc_put16(groups + 4 * g, hs);
		wzc_put16(groups + 4 * g + 2, hz);
	}
}

static void int4_decode(const uint8_t *rec, int R, float *x)
{
	const uint8_t *groups = rec + R / 2;
	for (int g = 0; g < R / 64; g++) {
		float s = wzc_f16_to_f32(wzc_get16(groups + 4 * g));
		float z = wzc_f16_to_f32(wzc_get16(groups + 4 * g + 2));
		for (int i = 0; i < 64; i += 2) {
			uint8_t b = rec[32 * g + i / 2];
			x[64 * g + i] = (float)(b & 15) * s + z;
			x[64 * g + i + 1] = (float)(b >> 4) * s + z;
		}
	}
}

static void nvfp4_encode(const float *x, int R, uint8_t *rec)
{
	uint8_t *scales = rec + R / 2;
	for (int g = 0; g < R / 16; g++) {
		const float *v = x + 16 * g;
		uint8_t sc = wzc_e4m3_from_f32(absmax(v, 16) / 6.0f);
		float s = wzc_e4m3_to_f32(sc);
		float inv = s > 0 ? 1.0f / s : 0;
		for (int i = 0; i < 16; i += 2) {
			uint8_t c0 = wzc_e2m1_from_f32(v[i] * inv), c1 = wzc_e2m1_from_f32(v[i + 1] * inv);
			rec[8 * g + i / 2] = (uint8_t)(c0 | c1 << 4);
		}
		scales[g] = sc;
	}
}

static void nvfp4_decode(const uint8_t *rec, int R, float *x)
{
	const uint8_t *scales = rec + R / 2;
	const float *e4 = wzc_e4m3_values(), *e2 = wzc_e2m1_values();
	for (int g = 0; g < R / 16; g++) {
		float s = e4[scales[g]];
		for (int i = 0; i < 16; i += 2) {
			uint8_t b = rec[8 * g + i / 2];
			x[16 * g + i] = e2[b & 15] * s;
			x[16 * g + i + 1] = e2[b >> 4] * s;
		}
	}
}

float wzc_flat_scale(int n, int R, int P, const float *latent, const float *rope)
{
	float m = fmaxf(absmax(latent, n * R), P ? absmax(rope, n * P) : 0);
	return m / WZC_E4M3_MAX;
}

void wzc_baseline_encode(const wzc_rec_ctx *c, const float *latent, const float *rope,
			 uint8_t *rec)
{
	int R = c->R, P = c->P;
	switch (c->id) {
	case WZC_FMT_BF16:
		bf16_encode(latent, R, rec);
		bf16_encode(rope, P, rec + 2 * R);
		break;
	case WZC_FMT_FP8_MIX:
		fp8_scaled_encode(latent, R, rec);
		if (P)
			int8_encode(rope, P, rec + R + 2);
		break;
	case WZC_FMT_FP8_BF16ROPE:
		fp8_scaled_encode(latent, R, rec);
		bf16_encode(rope, P, rec + R + 2);
		break;
	case WZC_FMT_FP8_DS_MLA:
	case WZC_FMT_FP8_DS_MLA_UE8M0:
		for (int b = 0; b < R / 128; b++) {
			/* vLLM keeps this scale in fp32, unrounded, and writes FLT_MIN
			 * for an all-zero tile; FlashMLA's power-of-two variant floors
			 * it at 2^-13 */
			float a = absmax(latent + 128 * b, 128);
			float s = c->id == WZC_FMT_FP8_DS_MLA ? fmaxf(a / WZC_E4M3_MAX, FLT_MIN)
							       : ue8m0_scale(a);
			e4m3_encode_div(latent + 128 * b, 128, s, rec + 128 * b);
			wzc_put32f(rec + R + 4 * b, s);
		}
		bf16_encode(rope, P, rec + R + 4 * (R / 128));
		break;
	case WZC_FMT_FP8_DS_MLA_V4:
		/* [448 e4m3][64 bf16][7 UE8M0 exponents][pad]: FlashMLA keeps a
		 * page's scales after its entries; one token's bytes are these */
		for (int b = 0; b < R / 64; b++) {
			/* the V32 variant's power-of-two scale, 1e-4 floor included
			 * (tests/quant.py, MODEL1_FP8Sparse): a quiet tile's scale
			 * is 2^-13, not its own smaller power of two */
			float s = ue8m0_scale(absmax(latent + 64 * b, 64));
			int e;
			frexpf(s, &e); /* s = 0.5 * 2^e */
			e4m3_encode_div(latent + 64 * b, 64, s, rec + 64 * b);
			rec[R + 2 * P + b] = (uint8_t)(e - 1 + 127);
		}
		bf16_encode(rope, P, rec + R);
		rec[R + 2 * P + R / 64] = 0;
		break;
	case WZC_FMT_FP8_FLAT: {
		float s = c->tensor_scale;
		e4m3_encode(latent, R, s, rec);
		e4m3_encode(rope, P, s, rec + R);
		break;
	}
	case WZC_FMT_INT4_G64:
		int4_encode(latent, R, rec);
		if (P)
			int8_encode(rope, P, rec + R / 2 + 4 * (R / 64));
		break;
	case WZC_FMT_NVFP4:
		nvfp4_encode(latent, R, rec);
		if (P)
			fp8_scaled_encode(rope, P, rec + R / 2 + R / 16);
		break;
	default:
		wzc_fp4_baseline_encode(c, latent, rope, rec);
		break;
	}
}

void wzc_baseline_decode(const wzc_rec_ctx *c, const uint8_t *rec, float *latent,
			 float *rope)
{
	int R = c->R, P = c->P;
	switch (c->id) {
	case WZC_FMT_BF16:
		bf16_decode(rec, R, latent);
		bf16_decode(rec + 2 * R, P, rope);
		break;
	case WZC_FMT_FP8_MIX:
		fp8_scaled_decode(rec, R, latent);
		if (P)
			int8_decode(rec + R + 2, P, rope);
		break;
	case WZC_FMT_FP8_BF16ROPE:
		fp8_scaled_decode(rec, R, latent);
		bf16_decode(rec + R + 2, P, rope);
		break;
	case WZC_FMT_FP8_DS_MLA:
	case WZC_FMT_FP8_DS_MLA_UE8M0:
		for (int b = 0; b < R / 128; b++)
			e4m3_decode(rec + 128 * b, 128, wzc_get32f(rec + R + 4 * b), latent + 128 * b);
		bf16_decode(rec + R + 4 * (R / 128), P, rope);
		break;
	case WZC_FMT_FP8_DS_MLA_V4:
		for (int b = 0; b < R / 64; b++)
			e4m3_decode(rec + 64 * b, 64, ldexpf(1.0f, (int)rec[R + 2 * P + b] - 127),
				    latent + 64 * b);
		bf16_decode(rec + R, P, rope);
		break;
	case WZC_FMT_FP8_FLAT: {
		float s = c->tensor_scale;
		e4m3_decode(rec, R, s, latent);
		e4m3_decode(rec + R, P, s, rope);
		break;
	}
	case WZC_FMT_INT4_G64:
		int4_decode(rec, R, latent);
		if (P)
			int8_decode(rec + R / 2 + 4 * (R / 64), P, rope);
		break;
	case WZC_FMT_NVFP4:
		nvfp4_decode(rec, R, latent);
		if (P)
			fp8_scaled_decode(rec + R / 2 + R / 16, P, rope);
		break;
	default:
		wzc_fp4_baseline_decode(c, rec, latent, rope);
		break;
	}
}
