/* wz's per-token scale code, shared by prepare and the wz coder. */
#ifndef WZC_SCALE_CODE_H
#define WZC_SCALE_CODE_H

#include <math.h>
#include <stdint.h>

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

#endif
