/* float32 <-> binary16 and bfloat16 conversions by bit manipulation, so the
 * results do not depend on the compiler's _Float16 support or the FPU's
 * rounding mode (float16.h). */
#include "traces/float16.h"

#include <math.h>
#include <string.h>

static uint32_t f32_bits(float value)
{
	uint32_t u;
	memcpy(&u, &value, sizeof u);
	return u;
}

static float bits_f32(uint32_t u)
{
	float value;
	memcpy(&value, &u, sizeof value);
	return value;
}

float wzt_bf16_to_f32(uint16_t bits)
{
	return bits_f32((uint32_t)bits << 16);
}

uint16_t wzt_f32_to_bf16(float value)
{
	uint32_t u = f32_bits(value);
	if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep the sign, force quiet */
		return (uint16_t)((u >> 16) | 0x0040u);
	/* Adding 0x7fff plus the lowest kept bit rounds to nearest even; a carry
	 * into the exponent is correct (it rounds up to the next binade or to
	 * infinity). */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

float wzt_f16_to_f32(uint16_t bits)
{
	uint32_t sign = (uint32_t)(bits & 0x8000u) << 16;
	uint32_t exp = (bits >> 10) & 0x1fu;
	uint32_t man = bits & 0x3ffu;
	if (exp == 0x1f) /* infinity or NaN */
		return bits_f32(sign | 0x7f800000u | (man << 13));
	if (exp == 0) { /* zero or subnormal: man x 2^-24, exact in float32 */
		float mag = ldexpf((float)man, -24);
		return sign ? -mag : mag;
	}
	return bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t wzt_f32_to_f16(float value)
{
	uint32_t u = f32_bits(value);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t abs = u & 0x7fffffffu;
	if (abs > 0x7f800000u)
		return (uint16_t)(sign | 0x7e00u);
	if (abs >= 0x477ff000u) /* 65520 and up round to infinity */
		return (uint16_t)(sign | 0x7c00u);
	if (abs < 0x38800000u) { /* below 2^-14: subnormal or zero in f16 */
		if (abs < 0x33000000u) /* below half the smallest subnormal (2^-25) */
			return sign;
		/* The mantissa with its implicit bit, shifted so that the f16
		 * subnormal unit (2^-24) is the lowest kept bit; then round to
		 * nearest even on the dropped bits. */
		uint32_t exp = abs >> 23;
		uint32_t man = (abs & 0x7fffffu) | 0x800000u;
		uint32_t shift = 126u - exp; /* 14..24 here */
		uint32_t kept = man >> shift;
		uint32_t rest = man & ((1u << shift) - 1u);
		uint32_t half = 1u << (shift - 1u);
		if (rest > half || (rest == half && (kept & 1u)))
			kept++;
		return (uint16_t)(sign | kept);
	}
	/* Normal: rebias the exponent (127 -> 15) and round the 13 dropped
	 * mantissa bits to nearest even; a carry moves to the next exponent. */
	uint32_t h = ((abs - 0x38000000u) >> 13);
	uint32_t rest = abs & 0x1fffu;
	if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
		h++;
	return (uint16_t)(sign | h);
}

int wzt_f16_fits(float value)
{
	return isfinite(value) && fabsf(value) < 65520.0f;
}
