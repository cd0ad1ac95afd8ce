/* KV-cache transform coding (KVTC; NVIDIA, arXiv 2511.01815), written from
 * the paper's description as a baseline for wz and wzx (docs/kvtc.md):
 * per layer a PCA of the token's whole vector (latent and position part
 * together) fitted on calibration windows, a dynamic-programming
 * allocation of bits across the components, uniform quantization, and
 * the indices entropy-coded with zstd in blocks of 64 tokens of a layer.
 * `kvtc-<bits>` spends about <bits> bits/value counted from the bytes the
 * coder writes; it restores to the bf16 cache. */
#ifndef WZC_KVTC_H
#define WZC_KVTC_H

#include <stddef.h>
#include <stdint.h>

#include "codec/formats/window.h"
#include "common/wz_error.h"

typedef struct wzc_kvtc wzc_kvtc;

/* Tokens a block codes (one layer). */
#define WZC_KVTC_BLOCK 64
/* Tokens at positions below this are the attention sinks, which KVTC keeps
 * uncompressed (the paper's rule; here bf16, 2 bytes a value, counted in
 * the bytes), and leaves out of the calibration. */
#define WZC_KVTC_SINKS 4
/* The most bits a component gets. */
#define WZC_KVTC_MAX_BITS 8

/* Fits the per-layer transforms on calibration windows (all of one shape,
 * none marked "test": WZ_ERR_INPUT).  With rope_freq ([L][P/2], the
 * inverse frequency of each pair (2i, 2i+1) of a layer; NULL: none), the
 * position part is transformed with RoPE undone, as the paper transforms
 * keys before RoPE: each token's pairs turned back by its position
 * before the transform and forward after decoding.  The caller frees the
 * result with wzc_kvtc_free. */
wz_err wzc_kvtc_fit(const wzc_window *const *windows, int nwindows, const double *rope_freq,
		    wzc_kvtc **out /* OUT */, wz_diag *diag);
void wzc_kvtc_free(wzc_kvtc *k);
int wzc_kvtc_layers(const wzc_kvtc *k);
int wzc_kvtc_R(const wzc_kvtc *k);
int wzc_kvtc_P(const wzc_kvtc *k);

/* The bits of each component of layer l at `bits` bits/value ([R + P],
 * components in decreasing variance): chosen on first use (the largest
 * budget whose coded calibration tokens fit `bits`) and kept; NULL when
 * out of memory. */
const uint8_t *wzc_kvtc_alloc(const wzc_kvtc *k, double bits, int l);

/* Codes n tokens of layer l (latent [n][R], rope [n][P]) at absolute
 * positions positions[0..n) (NULL: 0..n-1) at `bits` bits/value and
 * decodes them again into out_latent, out_rope (the same shapes; may be
 * the inputs); *bytes receives the bytes written (each block's compressed
 * indices and its 4-byte length, and 2 bytes a value of each sink kept). */
wz_err wzc_kvtc_roundtrip(const wzc_kvtc *k, double bits, int l, int n, const float *latent,
			  const float *rope, const int64_t *positions, float *out_latent,
			  float *out_rope, size_t *bytes /* OUT */, wz_diag *diag);

/* The expected squared error of a unit-variance Gaussian under the
 * uniform quantizer of 2^b levels with the least-error step, and that
 * step (b = 1 .. WZC_KVTC_MAX_BITS; b = 0: error 1, step 0). */
double wzc_kvtc_gauss_error(int b);
double wzc_kvtc_gauss_step(int b);

#endif
