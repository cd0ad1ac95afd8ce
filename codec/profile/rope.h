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

#include "codec/formats/fpconv.h" /* WZ_HD */

/* x * c - y * s and x * s + y * c each rounded as written: CUDA contracts
 * a multiply and an add into one fused operation unless told not to, and
 * the rotation is part of the format. */
#ifdef __CUDA_ARCH__
#define WZC_RMUL(a, b) __dmul_rn(a, b)
#define WZC_RADD(a, b) __dadd_rn(a, b)
#else
#define WZC_RMUL(a, b) ((a) * (b))
#define WZC_RADD(a, b) ((a) + (b))
#endif

/* One pair (v[0], v[1]) turned by the angle position * freq, forward
 * (dir > 0) or back (dir < 0); freq 0 leaves it as it is, bit for bit.
 * On a GPU, cos and sin are CUDA's (within 2 units in the last place of
 * a double, where libm's are within 1), so a turned value rounded to
 * float can differ from the CPU's by one unit in its last place, in the
 * rare case that the double lies that close to a rounding boundary. */
static inline WZ_HD void wzc_rope_turn_pair(float *v, int64_t position, double freq, int dir)
{
	if (freq == 0)
		return;
	double a = (double)position * freq;
	double c = cos(a), s = dir < 0 ? -sin(a) : sin(a);
	double x = v[0], y = v[1];
	v[0] = (float)WZC_RADD(WZC_RMUL(x, c), -WZC_RMUL(y, s));
	v[1] = (float)WZC_RADD(WZC_RMUL(x, s), WZC_RMUL(y, c));
}

/* v[0..P) rotated in place: forward (+p f, as the model caches it) when
 * dir > 0, back (-p f, undoing it) when dir < 0.  A pair with freq 0 is
 * left as it is, bit for bit. */
static inline WZ_HD void wzc_rope_turn(float *v, int P, int64_t position, const double *freq,
					int dir)
{
	for (int i = 0; i < P / 2; i++)
		wzc_rope_turn_pair(v + 2 * i, position, freq[i], dir);
}

#endif
