/* RoPE on a position part: pair i (values 2i and 2i + 1, DeepSeek's
 * interleaved layout) rotated by the angle p * freq[i] for a token at
 * absolute position p (docs/wz-format.md, "RoPE undone").  The rotation
 * is part of the format: in double precision, p converted exactly, the
 * angle rounded once, libm's cos and sin, the results rounded to float.
 * Plain C, so that the CPU reference and a kernel can share it. */
#ifndef WZC_ROPE_H
#define WZC_ROPE_H

#include <math.h>
#include <stdint.h>

#include "codec/fpconv.h" /* WZ_HD */

/* v[0..P) rotated in place: forward (+p f, as the model caches it) when
 * dir > 0, back (-p f, undoing it) when dir < 0.  A pair with freq 0 is
 * left as it is, bit for bit. */
static inline WZ_HD void wzc_rope_turn(float *v, int P, int64_t position, const double *freq,
					int dir)
{
	for (int i = 0; i < P / 2; i++) {
		if (freq[i] == 0)
			continue;
		double a = (double)position * freq[i];
		double c = cos(a), s = dir < 0 ? -sin(a) : sin(a);
		double x = v[2 * i], y = v[2 * i + 1];
		v[2 * i] = (float)(x * c - y * s);
		v[2 * i + 1] = (float)(x * s + y * c);
	}
}

#endif
