/* Fitting profile version 7's prediction of the position part from the
 * latent (codec/profile/predict_fit.c), for prepare. */
#ifndef WZC_PREDICT_FIT_H
#define WZC_PREDICT_FIT_H

#include "codec/profile/profile.h"

/* Layer l's ridge map (R x P, into map) from the latent less mean (ws,
 * bf16 values) to the rotated-back position part (rws), on every
 * calibration token but the sinks, its strength by two-fold validation
 * (the windows' halves; the strength's factor over the latent's mean
 * power per component in *alpha).  res[w] holds window w's rotated-back
 * position parts (rws's values) and gets layer l's cross-fitted
 * residuals: each half less the prediction of the map fitted on the
 * other.  0, or -1 when out of memory. */
int wzc_pred_fit(const wzc_window *const *ws, const wzc_window *const *rws, int nw, int l,
		 const float *mean, float *map /* OUT [R][P] */, float *const *res /* IN/OUT */,
		 double *alpha /* OUT */);

/* The gain of coding var_res in place of var_plain, in dB (geometric
 * means). */
double wzc_pred_gain_of(const float *var_plain, const float *var_res, int n);

#endif
