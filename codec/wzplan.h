/* libwzplan's public API: the cache-format registry, wz profiles (load,
 * prepare, save) and encode/decode of cache windows, for programs and the
 * Python binding (python/wzplan.py).  Everything is prefixed wz_; contexts
 * are opaque, created and freed in pairs, and every free accepts NULL.
 * Arrays are row-major float32 owned by the caller.  Functions that can
 * fail return a wz_err and fill an optional wz_diag with the message for the
 * human; the library never prints or exits. */
#ifndef WZPLAN_H
#define WZPLAN_H

#include <stddef.h>
#include <stdint.h>

#include "common/wz_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when a function's meaning changes; additions keep it. */
#define WZ_API_VERSION 1

/* "wzplan 0.1.0": the package version the library was built from. */
const char *wz_version(void);
int wz_api_version(void);

/* The registry.  Names of parametric formats (wz, wzx) are listed without
 * the "-<bits>" suffix; wz_format_parametric says which need one. */
int wz_format_count(void);
const char *wz_format_name(int i);        /* NULL when i is out of range */
int wz_format_parametric(int i);
const char *wz_format_description(int i);
/* Canonical name ("WZ-5.440" -> "wz-5.44") and the nominal record size per
 * token and layer for latent width R and position width P (0 when the
 * format cannot hold the shape, or keeps tokens: "-keep<F>-<L>").
 * WZ_ERR_NOT_FOUND for unknown names. */
wz_err wz_format_canonical(const char *name, char *out /* OUT */, size_t cap, wz_diag *diag);
size_t wz_format_record_bytes(const char *name, int R, int P);

/* A cache window: borrowed arrays, as in docs/cache-trace.md. */
typedef struct {
	int L, T, R, P;           /* layers, tokens, latent and position widths */
	int Q, H;                 /* queries and heads; 0 when there are none */
	const float *latent;      /* [L][T][R] */
	const float *rope;        /* [L][T][P] */
	const float *q_latent;    /* [L][Q][H][R] or NULL */
	const float *q_rope;      /* [L][Q][H][P] or NULL */
	const int64_t *q_index;   /* [Q] or NULL */
	const int64_t *positions; /* [T] or NULL for 0..T-1 */
	double softmax_scale;
	const char *model, *split, *name; /* each may be NULL */
} wz_window;

/* A wz profile (docs/wz-format.md). */
typedef struct wz_profile wz_profile;

/* Reads and checks a profile file.  The caller frees it with wz_profile_free. */
wz_err wz_profile_load(const char *path, wz_profile **out /* OUT */, wz_diag *diag);
/* Prepares a profile from calibration windows; a window whose split is
 * "test" is refused (WZ_ERR_REFUSED) before any of its values is read.
 * query_weight in [0, 1]: the share of the distortion weight that follows
 * the queries; negative for the default.  The caller frees the result. */
wz_err wz_profile_prepare(const wz_window *windows, int nwindows, double query_weight,
			  wz_profile **out /* OUT */, wz_diag *diag);
/* The same, coding the position part after undoing RoPE (a version 6
 * profile; docs/wz-format.md, "RoPE undone"): rope_freq holds the model's
 * inverse frequency of each pair (2i, 2i + 1), rope_pairs = P / 2 of
 * them (NULL: as wz_profile_prepare); rope_layers[L] the layers that
 * undo it (non-zero; NULL: every layer; `codec prepare` leaves out the
 * first, whose keys are a function of the token alone). */
wz_err wz_profile_prepare_rope(const wz_window *windows, int nwindows, double query_weight,
			       const double *rope_freq, int rope_pairs,
			       const unsigned char *rope_layers, wz_profile **out /* OUT */,
			       wz_diag *diag);
/* The inverse frequencies of RoPE on P values (P / 2 of them into freq):
 * base^(-2i/P) for pair i, blended as YaRN does when yarn is not NULL
 * (factor, original positions, beta_fast, beta_slow), as transformers'
 * YaRN computes them, rounded to float32 as models hold them. */
void wz_rope_freqs(int P, double base, const double *yarn /* [4] or NULL */,
		   double *freq /* OUT [P/2] */);
/* Writes atomically (a temporary file renamed into place). */
wz_err wz_profile_save(const wz_profile *p, const char *path, wz_diag *diag);
void wz_profile_free(wz_profile *p);
/* Shape and model name; the pointers may be NULL. */
void wz_profile_shape(const wz_profile *p, int *L /* OUT */, int *R /* OUT */, int *P /* OUT */);
const char *wz_profile_model(const wz_profile *p);

/* A codec for one format and cache shape L x (R + P).  wz and wzx need a
 * profile of the same shape; the codec holds on to it, so wz_profile_free
 * may come before wz_codec_free (the profile goes with its last holder).
 * A format that keeps tokens in bf16 ("nvfp4-trt-cold-keep4-64") has no
 * record per token and is refused (WZ_ERR_INPUT); `wzplan codec measure`
 * measures it.  The caller frees the codec with wz_codec_free. */
typedef struct wz_codec wz_codec;
wz_err wz_codec_new(const char *format, int L, int R, int P, const wz_profile *profile,
		    wz_codec **out /* OUT */, wz_diag *diag);
void wz_codec_free(wz_codec *c);
const char *wz_codec_format(const wz_codec *c);
/* Bytes of one token's record for one layer.  For wzx it is the record of
 * the wz grid it entropy-codes; the stored size comes from wz_window_bytes. */
size_t wz_codec_record_bytes(const wz_codec *c);

/* Records of n tokens of one layer: latent [n][R], rope [n][P] in, n records
 * of wz_codec_record_bytes out.  For wzx the records are the GPU-tier
 * records its container restores exactly. */
wz_err wz_encode_layer(wz_codec *c, int layer, int n, const float *latent, const float *rope,
		       uint8_t *records /* OUT */, wz_diag *diag);
/* Any bytes are safe to decode (records are untrusted).  A codec plans a
 * layer when it first codes it: WZ_ERR_NOMEM where a decode is the first
 * and the plan cannot be made. */
wz_err wz_decode_layer(const wz_codec *c, int layer, int n, const uint8_t *records,
		       float *latent /* OUT [n][R] */, float *rope /* OUT [n][P] */, wz_diag *diag);
/* Encode then decode: what attention reads from a cache in this format. */
wz_err wz_roundtrip_layer(wz_codec *c, int layer, int n, const float *latent, const float *rope,
			  float *latent_out /* OUT [n][R] */, float *rope_out /* OUT [n][P] */,
			  wz_diag *diag);
/* The same three for tokens at absolute positions positions[0..n) (the
 * three above: 0..n-1).  Positions matter where the profile undoes RoPE
 * (a version 6 profile; docs/wz-format.md, "RoPE undone"): a record then
 * decodes right only at its own token's position. */
wz_err wz_encode_layer_at(wz_codec *c, int layer, int n, const float *latent, const float *rope,
			  const int64_t *positions, uint8_t *records /* OUT */, wz_diag *diag);
wz_err wz_decode_layer_at(const wz_codec *c, int layer, int n, const uint8_t *records,
			  const int64_t *positions, float *latent /* OUT [n][R] */,
			  float *rope /* OUT [n][P] */, wz_diag *diag);
wz_err wz_roundtrip_layer_at(wz_codec *c, int layer, int n, const float *latent,
			     const float *rope, const int64_t *positions,
			     float *latent_out /* OUT [n][R] */, float *rope_out /* OUT [n][P] */,
			     wz_diag *diag);
/* The bytes a whole window takes in this format: L x T records for the GPU
 * tier; the written container (header, index, blocks, checksums) for wzx. */
wz_err wz_window_bytes(wz_codec *c, const wz_window *w, uint64_t *bytes /* OUT */, wz_diag *diag);

#ifdef __cplusplus
}
#endif
#endif
