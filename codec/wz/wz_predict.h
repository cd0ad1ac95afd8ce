/* Profile version 7's prediction around a codec's layer coders
 * (codec/wz/wz_predict.c), for codec.c. */
#ifndef WZC_WZ_PREDICT_H
#define WZC_WZ_PREDICT_H

#include <stdint.h>

#include <stddef.h>

#include "codec/formats/window.h" /* wzc_codec */
#include "codec/profile/profile.h"
#include "common/wz_error.h"

typedef wz_err (*wzc_layer_coder)(const wzc_codec *c, int layer, int n, const float *latent,
				  const float *rope, uint8_t *records, wz_diag *diag);
typedef wz_err (*wzc_layer_decoder)(const wzc_codec *c, int layer, int n,
				    const uint8_t *records, float *latent, float *rope);

/* The prediction step (wz_predict.h) of n tokens' decoded latents lat
 * [n][R] into pred [n][P]: vectorized clones, the step's floats. */
void wzc_pred_tokens(const float *map, const float *mean, const float *lat, int R, int P, int n,
		     float *pred /* OUT */);

/* c the codec of a layer that predicts, anchored its codec of the token at
 * position 0 (codec/codec.c makes both; their plans of the layer already
 * made), pr their profile, record_bytes their records' size.  n tokens of a predicting layer at their absolute positions (NULL: 0, 1,
 * ...): latent as given, rope rotated back (the coded domain), both
 * rounded to bf16; enc and dec the format's layer coders (the reference's
 * or the fast one: the same records). */
wz_err wzc_pred_encode_layer(const wzc_codec *c, const wzc_codec *anchored,
			     const wzc_profile *pr, size_t record_bytes, wzc_layer_coder enc, wzc_layer_decoder dec,
			     int layer, int n, const float *latent, const float *rope,
			     const int64_t *positions, uint8_t *records, wz_diag *diag);
/* The records decoded, the position part in the coded domain (rotated
 * back), the prediction added back (the token at position 0: decoded by
 * its own plan).  dec's error, or WZ_ERR_NOMEM when the prediction's
 * scratch cannot be had (a position part over 64 wide). */
wz_err wzc_pred_decode_layer(const wzc_codec *c, const wzc_codec *anchored, const wzc_profile *pr,
			     size_t record_bytes, wzc_layer_decoder dec, int layer, int n,
			     const uint8_t *records, const int64_t *positions, float *latent,
			     float *rope);

#endif
