/* Conversions between float32 and the 16-bit floats cache traces are stored
 * in (IEEE binary16 "F16" and bfloat16 "BF16"), round to nearest, ties to
 * even, so a written trace is the same on every platform. */
#ifndef WZT_FLOAT16_H
#define WZT_FLOAT16_H

#include <stdint.h>

/* Exact: every bf16 and f16 value is a float32. */
float wzt_bf16_to_f32(uint16_t bits);
float wzt_f16_to_f32(uint16_t bits);

/* Round to nearest even.  NaN stays NaN (quiet); values past the largest
 * finite value become infinity (bf16: beyond 3.39e38; f16: from 65520 up),
 * so callers that must not write infinities check wzt_f16_fits first. */
uint16_t wzt_f32_to_bf16(float value);
uint16_t wzt_f32_to_f16(float value);

/* Nonzero when a finite float32 rounds to a finite f16 (|value| < 65520). */
int wzt_f16_fits(float value);

#endif
