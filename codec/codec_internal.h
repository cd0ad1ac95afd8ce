/* Internals shared by the codec's source files: the codec context, the
 * baseline per-token coders and the wz rate plan. */
#ifndef WZC_CODEC_INTERNAL_H
#define WZC_CODEC_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "codec/codec.h"

/* Little-endian field access that works at any alignment. */
static inline void wzc_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline uint16_t wzc_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (p[1] << 8));
}
static inline void wzc_put32f(uint8_t *p, float f)
{
	uint32_t v;
	memcpy(&v, &f, 4);
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline float wzc_get32f(const uint8_t *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		     (uint32_t)p[3] << 24;
	float f;
	memcpy(&f, &v, 4);
	return f;
}

/* wz's per-token scale as an 8-bit code: 1/16-octave steps around the
 * profile's reference scale (2^-8..2^8 of it), 0 for an all-zero token.
 * Shared by prepare and the coder so both see the same quantized scale. */
#define WZC_SCALE_STEPS 16.0
static inline uint8_t wzc_scale_code(double s, double ref)
{
	if (!(s > 0) || !(s < 1e300) || !(ref > 0))
		return 0;
	double c = floor(WZC_SCALE_STEPS * log2(s / ref) + 0.5) + 128;
	return (uint8_t)(c < 1 ? 1 : c > 255 ? 255 : c);
}
static inline float wzc_scale_mult(uint8_t code)
{
	return code ? (float)exp2((code - 128) / WZC_SCALE_STEPS) : 0.0f;
}

typedef struct wzc_wz_plan wzc_wz_plan;

struct wzc_codec {
	wzc_format fmt;
	int L, R, P;
	size_t record_bytes;
	float *tensor_scale;  /* [L], fp8-flat */
	wzc_wz_plan *wz;      /* wz formats */
	struct wzc_wzt_plan *wzt; /* wzt: the trellis over wz's plan (owned) */
	int wz_shared;        /* wz is the profile cache's, referenced, not owned */
	const wzc_profile *profile; /* wz: the profile (borrowed) */
};

/* Baselines (codec/baseline.c): one token of one layer. */
void wzc_baseline_encode(const wzc_codec *c, int layer, const float *latent, const float *rope,
			 uint8_t *record);
void wzc_baseline_decode(const wzc_codec *c, int layer, const uint8_t *record, float *latent,
			 float *rope);
/* The shipped 4-bit MLA records (codec/baseline_fp4.c); 0 when the format
 * is not one of them. */
int wzc_fp4_baseline_encode(const wzc_codec *c, const float *latent, const float *rope,
			    uint8_t *record);
int wzc_fp4_baseline_decode(const wzc_codec *c, const uint8_t *record, float *latent,
			    float *rope);
/* The value of every e4m3 code [256] and e2m1 code [16] (the conversions
 * of codec/fpconv.h, tabulated once); the decoders' lookup tables. */
/* The squared error of the int8 position coder of fp8-mix and int4-g64
 * (int8, one fp16 scale absmax/127) on n values, with the caller's scratch
 * (code: n + 2 bytes, y: n floats): what prepare's position cap averages. */
double wzc_int8_sq_error(const float *x, int n, uint8_t *code, float *y);
const float *wzc_e4m3_values(void);
const float *wzc_e2m1_values(void);
/* fp8-flat's per-tensor scale for n tokens: absmax over both parts / 448. */
float wzc_flat_scale(int n, int R, int P, const float *latent, const float *rope);

/* wz (codec/wz_codec.c). */
wz_err wzc_wz_plan_new(const wzc_profile *profile, double rate_bits, size_t record_bytes,
		       wzc_wz_plan **out, wz_diag *diag);
void wzc_wz_plan_free(wzc_wz_plan *plan);
void wzc_wz_encode_layer(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			 const float *rope, uint8_t *records, size_t record_bytes);
void wzc_wz_decode(const wzc_wz_plan *plan, int layer, const uint8_t *record, float *latent,
		   float *rope, int transformed);
/* n records to the cache's own domain, blocks of tokens through one inverse
 * transform; the same values as wzc_wz_decode one by one. */
void wzc_wz_decode_layer(const wzc_wz_plan *plan, int layer, int n, const uint8_t *records,
			 float *latent, float *rope);

#endif
