/* The per-thread step of the GPU's predicted position part (profile
 * version 7; docs/wz-format.md, "Predicted position part"): one thread
 * per position value of a token, adding the prediction from the token's
 * decoded latent to its decoded residual, in the coded (rotated-back)
 * domain, by the step the CPU coder runs (codec/profile/predict.h).  The
 * CUDA kernel (wz_kernels.cu, wzc_cuda_pred_add) and the CPU emulation
 * (tests/codec/test_predict.c) call it for every index. */
#ifndef WZK_PRED_STEP_H
#define WZK_PRED_STEP_H

#include <stdint.h>

#include "codec/profile/predict.h"

typedef struct {
	const float *map;        /* [R][P], the layer's map */
	const float *mean;       /* [R], the layer's latent mean */
	const float *latent;     /* [n][R] decoded latents, the cache's domain */
	float *rope;             /* [n][P] decoded residuals in, position parts out */
	const int64_t *positions; /* [n], or NULL: 0, 1, ... */
	int R, P, n;
} wzk_pred_args;

/* Thread idx of n * P: token idx / P, value idx % P.  The token at
 * position 0 is not predicted (it is decoded by its own plan). */
static inline WZ_HD void wzk_pred_add_value(const wzk_pred_args *a, long idx)
{
	int t = (int)(idx / a->P), i = (int)(idx % a->P);
	if (t >= a->n || (a->positions ? a->positions[t] : t) == 0)
		return;
	a->rope[(size_t)t * a->P + i] += wzc_pred_value(a->map, a->mean,
							a->latent + (size_t)t * a->R, a->R, a->P, i);
}

#endif
