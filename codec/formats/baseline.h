/* The baselines' coders (codec/formats/baseline.c, baseline_fp4.c): one
 * token of one layer, registered in the traits table (codec/registry.c). */
#ifndef WZC_BASELINE_H
#define WZC_BASELINE_H

#include <stdint.h>

#include "codec/formats/format.h"

void wzc_baseline_encode(const wzc_rec_ctx *c, const float *latent, const float *rope,
			 uint8_t *record);
void wzc_baseline_decode(const wzc_rec_ctx *c, const uint8_t *record, float *latent,
			 float *rope);
/* The shipped 4-bit MLA records (codec/formats/baseline_fp4.c); 0 when the
 * format is not one of them. */
int wzc_fp4_baseline_encode(const wzc_rec_ctx *c, const float *latent, const float *rope,
			    uint8_t *record);
int wzc_fp4_baseline_decode(const wzc_rec_ctx *c, const uint8_t *record, float *latent,
			    float *rope);
/* The squared error of the int8 position coder of fp8-mix and int4-g64
 * (int8, one fp16 scale absmax/127) on n values, with the caller's scratch
 * (code: n + 2 bytes, y: n floats): what prepare's position cap averages. */
double wzc_int8_sq_error(const float *x, int n, uint8_t *code, float *y);
/* The value of every e4m3 code [256] and e2m1 code [16] (the conversions
 * of codec/formats/fpconv.h, tabulated once); the decoders' lookup tables. */
const float *wzc_e4m3_values(void);
const float *wzc_e2m1_values(void);
/* fp8-flat's per-tensor scale for n tokens: absmax over both parts / 448. */
float wzc_flat_scale(int n, int R, int P, const float *latent, const float *rope);

#endif
