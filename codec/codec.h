/* Encoding and decoding a cache in any registry format: a codec context per
 * (format, shape, profile), records of a fixed size per token and layer,
 * each format's coders reached through the traits table
 * (codec/formats/format.h, codec/registry.c). */
#ifndef WZC_CODEC_H
#define WZC_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "codec/formats/format.h"
#include "codec/formats/window.h"
#include "common/wz_error.h"


/* A codec for format fmt and shape L x (R + P).  wz formats need a profile of
 * the same shape (borrowed: it must outlive the codec); other formats ignore
 * it.  WZ_ERR_RANGE when the format cannot hold the shape, WZ_ERR_MISSING
 * when wz has no profile, WZ_ERR_INPUT for a profile of another shape.
 * The caller frees the codec with wzc_codec_free. */
wz_err wzc_codec_new(const wzc_format *fmt, int L, int R, int P, const wzc_profile *profile,
		     wzc_codec **out /* OUT */, wz_diag *diag);
void wzc_codec_free(wzc_codec *codec);

const wzc_format *wzc_codec_format(const wzc_codec *codec);
/* Bytes of one token's record for one layer (wzc_record_bytes of the format). */
size_t wzc_codec_record_bytes(const wzc_codec *codec);

/* Encodes n tokens of one layer (latent [n][R], rope [n][P], as cached:
 * after RoPE) at absolute positions positions[0..n) (NULL: 0..n-1) into n
 * records of wzc_codec_record_bytes each.  Positions matter only where
 * the profile undoes RoPE (wzc_profile_undoes_rope; docs/wz-format.md,
 * "RoPE undone"): a token's record then decodes right only at its own
 * position.  fp8-flat first sets the layer's per-tensor scale from these
 * tokens (kept in the codec for decoding). */
wz_err wzc_encode_layer_at(wzc_codec *codec, int layer, int n, const float *latent,
			   const float *rope, const int64_t *positions, uint8_t *records /* OUT */,
			   wz_diag *diag);
/* The same with the tokens at positions 0..n-1. */
wz_err wzc_encode_layer(wzc_codec *codec, int layer, int n, const float *latent,
			const float *rope, uint8_t *records /* OUT */, wz_diag *diag);

/* Decodes one record of a token at `position` (any bytes: a record is
 * untrusted and never makes the decoder read or write out of bounds, and
 * none is refused).  A codec plans a layer when it first codes it, so a
 * decode-only caller may be the one that plans it: WZ_ERR_NOMEM when that
 * plan cannot be made, or the decode's scratch (a predicted position part
 * over 64 wide, or a shape over about 1,024 values a token), WZ_ERR_USAGE
 * for a layer of a profile read in part that was not read; the values are
 * then undefined.  WZ_OK otherwise (a layer out of range decodes
 * nothing). */
wz_err wzc_decode_token_at(const wzc_codec *codec, int layer, const uint8_t *record,
			   int64_t position, float *latent /* OUT [R] */,
			   float *rope /* OUT [P] */);
/* The same at position 0. */
wz_err wzc_decode_token(const wzc_codec *codec, int layer, const uint8_t *record,
			float *latent /* OUT [R] */, float *rope /* OUT [P] */);
/* n records of tokens at positions[0..n) (NULL: 0..n-1), failing as
 * wzc_decode_token_at does. */
wz_err wzc_decode_layer_at(const wzc_codec *codec, int layer, int n, const uint8_t *records,
			   const int64_t *positions, float *latent /* OUT [n][R] */,
			   float *rope /* OUT [n][P] */);
/* The same at positions 0..n-1. */
wz_err wzc_decode_layer(const wzc_codec *codec, int layer, int n, const uint8_t *records,
			float *latent /* OUT [n][R] */, float *rope /* OUT [n][P] */);
/* The layer's RoPE inverse frequencies (P / 2) when the codec's profile
 * undoes RoPE in it, else NULL. */
const double *wzc_codec_rope_freq(const wzc_codec *codec, int layer);

/* wz only: decodes into the transformed (orthogonal, per-layer) domain that
 * attention can read directly: x = mean + basis^T y for each part, the
 * position part's x rotated back where the profile undoes RoPE (so x
 * there is R(-p f) of the cached values).  Returns 0, or -1 for a codec
 * that is not wz or where the decode fails (wzc_decode_token_at's
 * errors). */
int wzc_wz_decode_token_transformed(const wzc_codec *codec, int layer, const uint8_t *record,
				    float *y_latent /* OUT [R] */, float *y_rope /* OUT [P] */);

/* wz and the trellis-coded wzt formats: the layer's plan as flat arrays for
 * the GPU (codec/wz/wz_flat.h; a trellis plan's nu is its memory, 0 for wz).
 * The caller frees it with wzc_wz_flat_free. */
typedef struct wzc_wz_flat wzc_wz_flat;
wz_err wzc_wz_flatten(const wzc_codec *codec, int layer, wzc_wz_flat **flat /* OUT */,
		      wz_diag *diag);
void wzc_wz_flat_free(wzc_wz_flat *flat);

/* The per-tensor scale fp8-flat set for a layer (0 before encoding). */
float wzc_codec_tensor_scale(const wzc_codec *codec, int layer);

#endif
