/* Synthetic MLA cache traces from a written statistical model (families
 * iid, mla-a, mla-b, mla-p, v4-c4, v4-c128; docs/synthetic-cache.md), deterministic for a seed, so
 * the codec can be tested without a GPU.  Results are always labelled
 * synthetic in the trace's source metadata. */
#ifndef WZT_SYNTH_CACHE_H
#define WZT_SYNTH_CACHE_H

#include <stdint.h>

#include "common/wz_error.h"
#include "traces/cache_trace.h"

typedef enum {
	WZT_FAMILY_IID = 0,
	WZT_FAMILY_MLA_A = 1,
	WZT_FAMILY_MLA_B = 2,
	/* DeepSeek-V4's compressed entries (docs/synthetic-cache.md, "Entries
	 * that summarize tokens"): each entry a weighted sum of mla-b tokens,
	 * 8 of them every 4 tokens (c4a) or 128 every 128 (c128a), then
	 * normalized; 448 + 64 values by default */
	WZT_FAMILY_V4_C4 = 3,
	WZT_FAMILY_V4_C128 = 4,
	/* mla-a with a position part that is mostly a linear function of the
	 * latent's coefficients (docs/synthetic-cache.md, "mla-p"): a broad
	 * position spectrum that the latent predicts, as a real model's k_rope
	 * and c_kv are two projections of one hidden state */
	WZT_FAMILY_MLA_P = 5,
} wzt_family;

wz_err wzt_family_parse(const char *name, wzt_family *out /* OUT */, wz_diag *diag);
const char *wzt_family_name(wzt_family family);
/* The entry shape a family stands for: 448 + 64 for the v4 families (V4's
 * shared K=V entry), 512 + 64 (DeepSeek-V3's latent) for the others. */
void wzt_family_shape(wzt_family family, int *R /* OUT */, int *P /* OUT */);

typedef struct {
	wzt_family family;
	uint64_t seed;          /* the model (bases, gains, per-layer scales) */
	int L, T, R, P;         /* shape; R, P default 512, 64 */
	int Q, H;               /* queries per window and heads (0: none) */
	int64_t start_position; /* absolute position of the window's first token */
	uint64_t window_seed;   /* the tokens of this window (different per window) */
	const char *split;      /* "calibration" or "test" */
	const char *window;     /* window name */
	const char *model;      /* model name for the metadata */
} wzt_synth_params;

/* Fills defaults: mla-a, seed 1, L 4, T 1024, R 512, P 64, Q 32, H 16,
 * start position 0, window seed 0, split calibration; window and model NULL
 * (then "synthetic" and "synthetic-<family>-seed<seed>"). */
void wzt_synth_params_default(wzt_synth_params *p /* OUT */);

/* Generates one window.  Windows with the same seed and family share the
 * model (bases, gains, per-layer scales) and differ in their tokens by
 * window_seed.  The caller frees the result with wzt_cache_trace_free. */
wz_err wzt_synth_cache(const wzt_synth_params *p, wzt_cache_trace **out /* OUT */, wz_diag *diag);

/* Rotates consecutive pairs (v[2i], v[2i+1]) by position x base^(-2i/P),
 * the RoPE of DeepSeek's reference code (inverse: by minus that angle). */
void wzt_rope_rotate(float *v, int P, int64_t position, double base, int inverse);

/* DeepSeek-V3's softmax scale with YaRN (rope factor 40):
 * (0.1 ln 40 + 1)^2 / sqrt(192) = 1.874 / sqrt(192). */
double wzt_deepseek_softmax_scale(void);

#endif
