/* The predicted position part of profile version 7 (docs/wz-format.md,
 * "Predicted position part"): the one prediction step that the CPU
 * reference, the fast decoder and the CUDA kernels all run, so that the
 * encoder and every decoder predict the same floats. */
#ifndef WZC_PROFILE_PREDICT_H
#define WZC_PROFILE_PREDICT_H

#include <stddef.h>

#include "codec/formats/fpconv.h" /* WZ_HD */

#ifdef __CUDA_ARCH__
#define WZC_PFMA(a, b, c) __fmaf_rn(a, b, c)
#define WZC_PSUB(a, b) __fsub_rn(a, b)
#else
#include <math.h>
#define WZC_PFMA(a, b, c) fmaf(a, b, c)
#define WZC_PSUB(a, b) ((a) - (b))
#endif

/* The prediction of one token's position part (P values, in the coded
 * domain: RoPE undone) from its decoded latent lat[R]: with d_k = lat_k -
 * mean_k in single precision, pred_i = the chain of fused multiply-adds
 * acc = fma(map[k][i], d_k, acc) over k = 0 .. R - 1 in order, from acc
 * = 0.  map is R x P, row k contiguous.  Each output's chain runs over k
 * in the same order whatever the loop nest, so a kernel may take the
 * outputs in any order or in parallel (one per thread, or eight to a
 * vector) and still agree bit for bit. */
static inline WZ_HD void wzc_pred_token(const float *map, const float *mean, const float *lat,
					int R, int P, float *pred /* OUT [P] */)
{
	for (int i = 0; i < P; i++)
		pred[i] = 0.0f;
	for (int k = 0; k < R; k++) {
		float d = WZC_PSUB(lat[k], mean[k]);
		const float *row = map + (size_t)k * (size_t)P;
		for (int i = 0; i < P; i++)
			pred[i] = WZC_PFMA(row[i], d, pred[i]);
	}
}

/* One output of the same chain, for a kernel that gives each thread one
 * position value. */
static inline WZ_HD float wzc_pred_value(const float *map, const float *mean, const float *lat,
					 int R, int P, int i)
{
	float acc = 0.0f;
	for (int k = 0; k < R; k++)
		acc = WZC_PFMA(map[(size_t)k * (size_t)P + i], WZC_PSUB(lat[k], mean[k]), acc);
	return acc;
}

#endif
