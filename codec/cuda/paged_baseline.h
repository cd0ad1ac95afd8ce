/* The per-thread steps of the GPU encode and decode of the baseline formats
 * (bf16, fp8-mix, fp8-ds-mla, int4-g64, nvfp4) into and out of paged
 * records, as WZ_HD inline functions: the CUDA kernels (paged_kernels.cu)
 * run them with one thread each between barriers, and the CPU emulation
 * (tests/gpu/emulate.h) runs the same functions in a loop over block and
 * thread indices, so the arithmetic the GPU does is tested on any machine
 * against the C reference (codec/formats/baseline.c) byte for byte.
 *
 * Paging: a page holds WZK_PAGE_TOKENS consecutive records of one layer
 * (docs/gpu-kernels.md); token i of a batch goes to slot slots[i] (page *
 * WZK_PAGE_TOKENS + offset), its record at pool + slot * record_bytes. */
#ifndef WZK_PAGED_BASELINE_H
#define WZK_PAGED_BASELINE_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/formats/fpconv.h"

#define WZK_PAGE_TOKENS 64
/* Tokens per block of the encoder and its threads. */
#define WZK_ENC_TOKENS 8
#define WZK_ENC_THREADS 256
/* Largest latent + position width the kernels take (DeepSeek: 576). */
#define WZK_MAX_NV 1024
/* Scale groups of one token: nvfp4's R / 16 plus the position part. */
#define WZK_MAX_GROUPS (WZK_MAX_NV / 16 + 1)

/* Format ids as in codec/formats/format.h (kept numerically equal, checked by the
 * emulation test). */
#define WZK_BF16 1
#define WZK_FP8_MIX 2
#define WZK_FP8_DS_MLA 4
#define WZK_INT4_G64 6
#define WZK_NVFP4 7

/* Where the parts of a record are, per format and shape. */
typedef struct {
	int fmt, R, P, rb;
	int ngroups;      /* scale groups per token, latent groups first */
	int glen;         /* values in one latent group (the position part is one group) */
	int rope_at;      /* byte offset of the position part */
} wzk_layout;

/* The layout of fmt for R + P, or rb = 0 when the kernels do not take it:
 * a format or shape the C reference refuses, or widths that are not
 * multiples of 16 (the encoder's partial maxima cover 16 values). */
static inline WZ_HD wzk_layout wzk_layout_of(int fmt, int R, int P)
{
	wzk_layout l = { fmt, R, P, 0, 0, 0, 0 };
	if (R <= 0 || P < 0 || R + P > WZK_MAX_NV || R % 16 || P % 16)
		return l;
	switch (fmt) {
	case WZK_BF16:
		l.rope_at = 2 * R;
		l.rb = 2 * (R + P);
		break;
	case WZK_FP8_MIX:
		l.ngroups = 1 + (P > 0);
		l.glen = R;
		l.rope_at = R + 2;
		l.rb = R + 2 + (P ? P + 2 : 0);
		break;
	case WZK_FP8_DS_MLA:
		if (R % 128)
			return l;
		l.ngroups = R / 128;
		l.glen = 128;
		l.rope_at = R + 4 * (R / 128);
		l.rb = l.rope_at + 2 * P;
		break;
	case WZK_INT4_G64:
		if (R % 64)
			return l;
		l.ngroups = R / 64 + (P > 0);
		l.glen = 64;
		l.rope_at = R / 2 + 4 * (R / 64);
		l.rb = l.rope_at + (P ? P + 2 : 0);
		break;
	case WZK_NVFP4:
		l.ngroups = R / 16 + (P > 0);
		l.glen = 16;
		l.rope_at = R / 2 + R / 16;
		l.rb = l.rope_at + (P ? P + 2 : 0);
		break;
	default:
		break;
	}
	return l;
}

static inline WZ_HD uint16_t wzk_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline WZ_HD void wzk_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline WZ_HD float wzk_get32f(const uint8_t *p)
{
	return wzc_f32_from_bits((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				 (uint32_t)p[3] << 24);
}

static inline WZ_HD void wzk_put32f(uint8_t *p, float f)
{
	uint32_t u = wzc_f32_bits(f);
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(u >> (8 * i));
}

/* As the C reference's f16_scale: a nonzero scale never rounds to zero,
 * and an infinite one becomes the largest finite fp16. */
static inline WZ_HD uint16_t wzk_f16_scale(float s)
{
	uint16_t h = wzc_f16_from_f32(s);
	if (s > 0 && (h & 0x7fff) == 0)
		h = 1;
	if ((h & 0x7fff) >= 0x7c00)
		h = 0x7bff;
	return h;
}

/* Larger of a running maximum and |x| as the reference's loop keeps it
 * (a NaN never replaces it): the maximum of nonnegative values does not
 * depend on their order, so partial maxima combine to the reference's. */
static inline WZ_HD float wzk_absmax_step(float m, float x)
{
	float a = wzc_f32_from_bits(wzc_f32_bits(x) & 0x7fffffffu); /* fabsf */
	return a > m ? a : m;
}

/* ---- encoder: shared memory of one block ---- */

typedef struct {
	float x[WZK_ENC_TOKENS][WZK_MAX_NV];        /* the tokens' values, latent then position */
	float part[WZK_ENC_TOKENS][WZK_MAX_NV / 16]; /* absmax of each 16 values */
	float scale[WZK_ENC_TOKENS][WZK_MAX_GROUPS]; /* the scale each group encodes with */
	float inv[WZK_ENC_TOKENS][WZK_MAX_GROUPS];   /* 1 / scale, or 0 */
	float zero[WZK_ENC_TOKENS][WZK_MAX_GROUPS];  /* int4's zero point */
	uint8_t rec[WZK_ENC_TOKENS][2 * WZK_MAX_NV]; /* the records being written */
} wzk_enc_smem;

typedef struct {
	wzk_layout l;
	int n;                   /* tokens in the batch */
	const float *latent;     /* [n][R] */
	const float *rope;       /* [n][P] */
	const int64_t *slots;    /* [n], or NULL for slots 0..n-1 */
	uint8_t *pool;           /* records at slot * rb */
} wzk_enc_args;

/* Step 1: the block's tokens into shared memory, one value per thread turn. */
static inline WZ_HD void wzk_enc_load(const wzk_enc_args *a, int blk, int tid, int nthr,
				      wzk_enc_smem *sm)
{
	int R = a->l.R, P = a->l.P, nv = R + P;
	for (int i = tid; i < WZK_ENC_TOKENS * nv; i += nthr) {
		int t = i / nv, k = i % nv;
		long tok = (long)blk * WZK_ENC_TOKENS + t;
		if (tok >= a->n)
			continue;
		/* the cache's bf16 values, as the CPU reference codes them
		 * (wzc_encode_layer_at) */
		float v = k < R ? a->latent[tok * R + k] : a->rope[tok * P + (k - R)];
		sm->x[t][k] = wzc_bf16_to_f32(wzc_bf16_from_f32(v));
	}
}

/* Step 2: the absmax of every 16 values. */
static inline WZ_HD void wzk_enc_partial(const wzk_enc_args *a, int blk, int tid, int nthr,
					 wzk_enc_smem *sm)
{
	int nc = (a->l.R + a->l.P) / 16;
	for (int i = tid; i < WZK_ENC_TOKENS * nc; i += nthr) {
		int t = i / nc, c = i % nc;
		if ((long)blk * WZK_ENC_TOKENS + t >= a->n)
			continue;
		float m = 0;
		for (int j = 0; j < 16; j++)
			m = wzk_absmax_step(m, sm->x[t][16 * c + j]);
		sm->part[t][c] = m;
	}
}

/* Absmax of values [k0, k0 + len) of token t from the partial maxima. */
static inline WZ_HD float wzk_group_absmax(const wzk_enc_smem *sm, int t, int k0, int len)
{
	float m = 0;
	for (int c = k0 / 16; c < (k0 + len) / 16; c++)
		m = sm->part[t][c] > m ? sm->part[t][c] : m;
	return m;
}

/* An fp16 scale of absmax / div into the record at at; the scale used. */
static inline WZ_HD float wzk_f16_group(wzk_enc_smem *sm, int t, int g, float amax, float div,
					int at)
{
	uint16_t h = wzk_f16_scale(amax / div);
	float s = wzc_f16_to_f32(h);
	wzk_put16(&sm->rec[t][at], h);
	sm->scale[t][g] = s;
	sm->inv[t][g] = s > 0 ? 1.0f / s : 0;
	return s;
}

/* Step 3: one scale group per thread turn: its scale (and int4's zero),
 * written into the record as the reference writes it. */
static inline WZ_HD void wzk_enc_scales(const wzk_enc_args *a, int blk, int tid, int nthr,
					wzk_enc_smem *sm)
{
	const wzk_layout *l = &a->l;
	int R = l->R, P = l->P, ng = l->ngroups, nlat = P ? ng - 1 : ng;
	if (l->fmt == WZK_FP8_DS_MLA)
		nlat = ng;
	for (int i = tid; i < WZK_ENC_TOKENS * ng; i += nthr) {
		int t = i / ng, g = i % ng;
		if ((long)blk * WZK_ENC_TOKENS + t >= a->n)
			continue;
		if (g >= nlat) { /* the position part */
			float amax = wzk_group_absmax(sm, t, R, P);
			if (l->fmt == WZK_NVFP4)
				wzk_f16_group(sm, t, g, amax, WZC_E4M3_MAX, l->rope_at + P);
			else /* fp8-mix and int4-g64: int8 */
				wzk_f16_group(sm, t, g, amax, 127.0f, l->rope_at + P);
			continue;
		}
		int k0 = g * l->glen;
		switch (l->fmt) {
		case WZK_FP8_MIX:
			wzk_f16_group(sm, t, g, wzk_group_absmax(sm, t, 0, R), WZC_E4M3_MAX, R);
			break;
		case WZK_FP8_DS_MLA: {
			/* vLLM keeps this scale in fp32, unrounded, at least FLT_MIN,
			 * and divides by it (codec/formats/baseline.c) */
			float s = fmaxf(wzk_group_absmax(sm, t, k0, 128) / WZC_E4M3_MAX, FLT_MIN);
			wzk_put32f(&sm->rec[t][R + 4 * g], s);
			sm->scale[t][g] = s;
			sm->inv[t][g] = 1.0f / s;
			break;
		}
		case WZK_INT4_G64: {
			/* the reference's serial minimum and maximum, whose result
			 * depends on the order for NaN and signed zeros */
			const float *v = &sm->x[t][k0];
			float lo = v[0], hi = v[0];
			for (int j = 1; j < 64; j++) {
				lo = v[j] < lo ? v[j] : lo;
				hi = v[j] > hi ? v[j] : hi;
			}
			uint16_t hs = wzk_f16_scale((hi - lo) / 15.0f), hz = wzc_f16_from_f32(lo);
			float s = wzc_f16_to_f32(hs);
			wzk_put16(&sm->rec[t][R / 2 + 4 * g], hs);
			wzk_put16(&sm->rec[t][R / 2 + 4 * g + 2], hz);
			sm->scale[t][g] = s;
			sm->inv[t][g] = s > 0 ? 1.0f / s : 0;
			sm->zero[t][g] = wzc_f16_to_f32(hz);
			break;
		}
		case WZK_NVFP4: {
			uint8_t sc = wzc_e4m3_from_f32(wzk_group_absmax(sm, t, k0, 16) / 6.0f);
			float s = wzc_e4m3_to_f32(sc);
			sm->rec[t][R / 2 + g] = sc;
			sm->scale[t][g] = s;
			sm->inv[t][g] = s > 0 ? 1.0f / s : 0;
			break;
		}
		default:
			break;
		}
	}
}

static inline WZ_HD uint8_t wzk_int8_code(float x, float inv)
{
	float q = wzc_rint(x * inv);
	q = q > 127 ? 127 : q < -127 ? -127 : q == q ? q : 0; /* NaN: code 0, as the reference */
	return (uint8_t)(int8_t)q;
}

static inline WZ_HD uint8_t wzk_uint4_code(float x, float z, float inv)
{
	float q = wzc_rint((x - z) * inv);
	q = q > 0 ? (q < 15 ? q : 15) : 0; /* NaN: code 0, as the reference */
	return (uint8_t)(int)q;
}

/* Step 4: one pair of values per thread turn into their codes. */
static inline WZ_HD void wzk_enc_codes(const wzk_enc_args *a, int blk, int tid, int nthr,
				       wzk_enc_smem *sm)
{
	const wzk_layout *l = &a->l;
	int R = l->R, P = l->P, np = (R + P) / 2, rg = l->ngroups - 1;
	for (int i = tid; i < WZK_ENC_TOKENS * np; i += nthr) {
		int t = i / np, k = 2 * (i % np);
		if ((long)blk * WZK_ENC_TOKENS + t >= a->n)
			continue;
		const float *x = &sm->x[t][k];
		uint8_t *rec = sm->rec[t];
		int latent = k < R, g = latent && l->glen ? k / l->glen : rg, j = k - R;
		float inv = g >= 0 ? sm->inv[t][g] : 0.0f; /* bf16 has no groups */
		switch (l->fmt) {
		case WZK_BF16:
			for (int e = 0; e < 2; e++)
				wzk_put16(rec + 2 * (k + e), wzc_bf16_from_f32(x[e]));
			break;
		case WZK_FP8_MIX:
			for (int e = 0; e < 2; e++)
				if (latent)
					rec[k + e] = wzc_e4m3_from_f32(x[e] * inv);
				else
					rec[l->rope_at + j + e] = wzk_int8_code(x[e], inv);
			break;
		case WZK_FP8_DS_MLA:
			for (int e = 0; e < 2; e++)
				if (latent)
					rec[k + e] = wzc_e4m3_from_f32(x[e] / sm->scale[t][g]);
				else
					wzk_put16(rec + l->rope_at + 2 * (j + e), wzc_bf16_from_f32(x[e]));
			break;
		case WZK_INT4_G64:
			if (latent)
				rec[k / 2] = (uint8_t)(wzk_uint4_code(x[0], sm->zero[t][g], inv) |
						       wzk_uint4_code(x[1], sm->zero[t][g], inv) << 4);
			else
				for (int e = 0; e < 2; e++)
					rec[l->rope_at + j + e] = wzk_int8_code(x[e], inv);
			break;
		case WZK_NVFP4:
			if (latent)
				rec[k / 2] = (uint8_t)(wzc_e2m1_from_f32(x[0] * inv) |
						       wzc_e2m1_from_f32(x[1] * inv) << 4);
			else
				for (int e = 0; e < 2; e++)
					rec[l->rope_at + j + e] = wzc_e4m3_from_f32(x[e] * inv);
			break;
		default:
			break;
		}
	}
}

/* Step 5: the records out to their slots, one byte per thread turn. */
static inline WZ_HD void wzk_enc_store(const wzk_enc_args *a, int blk, int tid, int nthr,
				       const wzk_enc_smem *sm)
{
	int rb = a->l.rb;
	for (int i = tid; i < WZK_ENC_TOKENS * rb; i += nthr) {
		int t = i / rb, b = i % rb;
		long tok = (long)blk * WZK_ENC_TOKENS + t;
		if (tok >= a->n)
			continue;
		size_t slot = a->slots ? (size_t)a->slots[tok] : (size_t)tok;
		a->pool[slot * (size_t)rb + (size_t)b] = sm->rec[t][b];
	}
}

/* ---- decoder: no shared state, one value per thread turn ---- */

typedef struct {
	wzk_layout l;
	int n;
	const int64_t *slots;  /* [n] the tokens to decode, or NULL for 0..n-1 */
	const uint8_t *pool;
	float *latent;         /* [n][R] */
	float *rope;           /* [n][P] */
} wzk_dec_args;

/* Value k (latent then position) of the record at rec. */
static inline WZ_HD float wzk_decode_value(const wzk_layout *l, const uint8_t *rec, int k)
{
	int R = l->R, j = k - R;
	switch (l->fmt) {
	case WZK_BF16:
		return wzc_bf16_to_f32(wzk_get16(rec + 2 * k));
	case WZK_FP8_MIX:
		if (k < R)
			return wzc_e4m3_to_f32(rec[k]) * wzc_f16_to_f32(wzk_get16(rec + R));
		return (float)(int8_t)rec[l->rope_at + j] *
		       wzc_f16_to_f32(wzk_get16(rec + l->rope_at + l->P));
	case WZK_FP8_DS_MLA:
		if (k < R)
			return wzc_e4m3_to_f32(rec[k]) * wzk_get32f(rec + R + 4 * (k / 128));
		return wzc_bf16_to_f32(wzk_get16(rec + l->rope_at + 2 * j));
	case WZK_INT4_G64:
		if (k < R) {
			const uint8_t *gp = rec + R / 2 + 4 * (k / 64);
			uint8_t b = rec[k / 2];
			return (float)((k & 1) ? b >> 4 : b & 15) * wzc_f16_to_f32(wzk_get16(gp)) +
			       wzc_f16_to_f32(wzk_get16(gp + 2));
		}
		return (float)(int8_t)rec[l->rope_at + j] *
		       wzc_f16_to_f32(wzk_get16(rec + l->rope_at + l->P));
	case WZK_NVFP4:
		if (k < R) {
			uint8_t b = rec[k / 2];
			return wzc_e2m1_to_f32((uint8_t)((k & 1) ? b >> 4 : b & 15)) *
			       wzc_e4m3_to_f32(rec[R / 2 + k / 16]);
		}
		return wzc_e4m3_to_f32(rec[l->rope_at + j]) *
		       wzc_f16_to_f32(wzk_get16(rec + l->rope_at + l->P));
	default:
		return 0.0f;
	}
}

/* The whole decode: thread turn i writes value i % (R + P) of token i /
 * (R + P), so consecutive threads write consecutive floats. */
static inline WZ_HD void wzk_dec_values(const wzk_dec_args *a, long i)
{
	int R = a->l.R, P = a->l.P, nv = R + P;
	long t = i / nv;
	int k = (int)(i % nv);
	if (t >= a->n)
		return;
	size_t slot = a->slots ? (size_t)a->slots[t] : (size_t)t;
	const uint8_t *rec = a->pool + slot * (size_t)a->l.rb;
	float v = wzk_decode_value(&a->l, rec, k);
	if (k < R)
		a->latent[t * R + k] = v;
	else
		a->rope[t * P + (k - R)] = v;
}

#endif
