/* The 4-bit MLA records that serving stacks ship, byte-exact: vLLM's
 * nvfp4_ds_mla, SGLang's block-16 MXFP4 MLA pool and TensorRT-LLM's NVFP4
 * cold pages (codec/formats/records.h has the layouts, codec/formats/fp4conv.h the
 * per-element rules, docs/baselines-fp4.md the sources).  One token of one
 * layer at a time. */
#include <math.h>

#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/formats/fp4conv.h"
#include "codec/formats/fpconv.h"

static float absmax16(const float *x)
{
	float m = 0;
	for (int i = 0; i < 16; i++)
		m = fmaxf(m, fabsf(x[i]));
	return m;
}

/* Two codes into one byte, the even element in the low nibble (all three
 * stacks pack this way). */
static void put_pair(uint8_t *out, int i, uint8_t c0, uint8_t c1)
{
	out[i / 2] = (uint8_t)(c0 | c1 << 4);
}

static void decode16(const uint8_t *packed, float scale, float *x)
{
	const float *e2 = wzc_e2m1_values();
	for (int i = 0; i < 16; i += 2) {
		uint8_t b = packed[i / 2];
		x[i] = e2[b & 15] * scale;
		x[i + 1] = e2[b >> 4] * scale;
	}
}

/* ---- vLLM nvfp4_ds_mla ---- */

static void ds_mla_encode(const float *latent, const float *rope, int R, int P, uint8_t *rec)
{
	uint8_t *scales = rec + R / 2 + P;
	for (int s = 0; s < R / 16; s++) {
		const float *v = latent + 16 * s;
		uint8_t code = wzc_vllm_fp4_scale(absmax16(v));
		/* The kernel multiplies by the reciprocal, not divides. */
		float inv = 1.0f / wzc_e4m3_to_f32(code);
		for (int i = 0; i < 16; i += 2)
			put_pair(rec + 8 * s, i, wzc_e2m1_from_f32(v[i] * inv),
				 wzc_e2m1_from_f32(v[i + 1] * inv));
		scales[wzc_vllm_fp4_scale_slot(s)] = code;
	}
	for (int i = 0; i < P; i++)
		rec[R / 2 + i] = wzc_e4m3_from_f32(rope[i]);
}

static void ds_mla_decode(const uint8_t *rec, int R, int P, float *latent, float *rope)
{
	const float *e4 = wzc_e4m3_values();
	const uint8_t *scales = rec + R / 2 + P;
	/* The product of an e2m1 and an e4m3 value has at most 6 significant
	 * bits, so vLLM's f16 multiply and bf16 store are exact: float is the
	 * same number. */
	for (int s = 0; s < R / 16; s++)
		decode16(rec + 8 * s, e4[scales[wzc_vllm_fp4_scale_slot(s)]], latent + 16 * s);
	for (int i = 0; i < P; i++)
		rope[i] = e4[rec[R / 2 + i]];
}

/* ---- SGLang fp4_mx_block16 ---- */

/* n values (a multiple of 16) into n/2 data bytes and n/16 scale bytes. */
static void mx16_encode(const float *x, int n, uint8_t *data, uint8_t *scales)
{
	for (int g = 0; g < n / 16; g++) {
		const float *v = x + 16 * g;
		uint8_t code = wzc_mx16_scale_code(absmax16(v));
		float s = wzc_e8m0_to_f32(code); /* a power of two: dividing is exact */
		for (int i = 0; i < 16; i += 2)
			put_pair(data + 8 * g, i, wzc_e2m1_from_f32_tie_up(v[i] / s),
				 wzc_e2m1_from_f32_tie_up(v[i + 1] / s));
		scales[g] = code;
	}
}

static void mx16_decode(const uint8_t *data, const uint8_t *scales, int n, float *x)
{
	for (int g = 0; g < n / 16; g++)
		decode16(data + 8 * g, wzc_e8m0_to_f32(scales[g]), x + 16 * g);
}

/* ---- TensorRT-LLM NVFP4 cold page ---- */

/* One 16-value group; the global scale of an MLA buffer is 1. */
static void trt_encode16(const float *v, uint8_t *packed, uint8_t *scale)
{
	float amax = absmax16(v);
	uint8_t code = wzc_trt_fp4_scale(amax);
	float sf = wzc_e4m3_to_f32(code);
	/* cvt_warp_fp16_to_fp4: outputScale = vecMax != 0 ? rcp(SF) : 0.  A
	 * group whose scale rounds to e4m3 zero (absmax under 6 * 2^-10) but
	 * is not all zeros gets rcp(0) = +inf: its values times +inf, which
	 * cvt.rn.satfinite.e2m1x2.f32 saturates to +-6 (codes 7 and 15), and
	 * a zero in it 0 * inf = NaN, which satfinite turns into +6 (PTX ISA,
	 * cvt: NaN to the positive largest finite value of a type without a
	 * NaN).  Such a group decodes to zeros whatever its codes. */
	for (int i = 0; i < 16; i += 2) {
		uint8_t c[2];
		for (int k = 0; k < 2; k++) {
			float x = v[i + k];
			c[k] = amax == 0  ? 0
			       : sf > 0   ? wzc_e2m1_from_f32(x * (1.0f / sf))
			       : x == 0 || x != x ? 7
			       : (uint8_t)(x < 0 ? 15 : 7);
		}
		put_pair(packed, i, c[0], c[1]);
	}
	*scale = code;
}

/* The row latent then position part, as one run of R + P values. */
static void trt_cold_encode(const float *latent, const float *rope, int R, int P, uint8_t *rec)
{
	int n = R + P;
	uint8_t *scales = rec + n / 2;
	float v[16];
	for (int g = 0; g < n / 16; g++) {
		for (int i = 0; i < 16; i++) {
			int k = 16 * g + i;
			v[i] = k < R ? latent[k] : rope[k - R];
		}
		trt_encode16(v, rec + 8 * g, scales + g);
	}
}

static void trt_cold_decode(const uint8_t *rec, int R, int P, float *latent, float *rope)
{
	const float *e4 = wzc_e4m3_values();
	int n = R + P;
	float v[16];
	for (int g = 0; g < n / 16; g++) {
		decode16(rec + 8 * g, e4[rec[n / 2 + g]], v);
		for (int i = 0; i < 16; i++) {
			int k = 16 * g + i;
			if (k < R)
				latent[k] = v[i];
			else
				rope[k - R] = v[i];
		}
	}
}

static void trt_bf16rope_encode(const float *latent, const float *rope, int R, int P, uint8_t *rec)
{
	for (int g = 0; g < R / 16; g++)
		trt_encode16(latent + 16 * g, rec + 8 * g, rec + R / 2 + g);
	uint8_t *r = rec + R / 2 + R / 16;
	for (int i = 0; i < P; i++)
		wzc_put16(r + 2 * i, wzc_bf16_from_f32(rope[i]));
}

static void trt_bf16rope_decode(const uint8_t *rec, int R, int P, float *latent, float *rope)
{
	const float *e4 = wzc_e4m3_values();
	for (int g = 0; g < R / 16; g++)
		decode16(rec + 8 * g, e4[rec[R / 2 + g]], latent + 16 * g);
	const uint8_t *r = rec + R / 2 + R / 16;
	for (int i = 0; i < P; i++)
		rope[i] = wzc_bf16_to_f32(wzc_get16(r + 2 * i));
}

int wzc_fp4_baseline_encode(const wzc_rec_ctx *c, const float *latent, const float *rope,
			    uint8_t *rec)
{
	int R = c->R, P = c->P;
	switch (c->id) {
	case WZC_FMT_NVFP4_DS_MLA:
		ds_mla_encode(latent, rope, R, P, rec);
		return 1;
	case WZC_FMT_MXFP4_SGL_MLA:
		mx16_encode(latent, R, rec, rec + (R + P) / 2);
		mx16_encode(rope, P, rec + R / 2, rec + (R + P) / 2 + R / 16);
		return 1;
	case WZC_FMT_NVFP4_TRT_COLD:
		trt_cold_encode(latent, rope, R, P, rec);
		return 1;
	case WZC_FMT_NVFP4_TRT_COLD_BF16ROPE:
		trt_bf16rope_encode(latent, rope, R, P, rec);
		return 1;
	default:
		return 0;
	}
}

int wzc_fp4_baseline_decode(const wzc_rec_ctx *c, const uint8_t *rec, float *latent, float *rope)
{
	int R = c->R, P = c->P;
	switch (c->id) {
	case WZC_FMT_NVFP4_DS_MLA:
		ds_mla_decode(rec, R, P, latent, rope);
		return 1;
	case WZC_FMT_MXFP4_SGL_MLA:
		mx16_decode(rec, rec + (R + P) / 2, R, latent);
		mx16_decode(rec + R / 2, rec + (R + P) / 2 + R / 16, P, rope);
		return 1;
	case WZC_FMT_NVFP4_TRT_COLD:
		trt_cold_decode(rec, R, P, latent, rope);
		return 1;
	case WZC_FMT_NVFP4_TRT_COLD_BF16ROPE:
		trt_bf16rope_decode(rec, R, P, latent, rope);
		return 1;
	default:
		return 0;
	}
}
