/* The view of a cache window the codec, the profile and the metrics read,
 * and the names of the codec's two opaque objects, so that a header may
 * speak of them without including the code that makes them. */
#ifndef WZC_WINDOW_H
#define WZC_WINDOW_H

#include <stdint.h>

/* A window of cache: borrowed arrays, row-major float32 (the traces module
 * fills one from a cache-trace file; the codec depends on nothing else). */
typedef struct {
	int L, T, R, P;         /* layers, tokens, latent and position widths */
	int Q, H;               /* queries and heads; 0 when there are none */
	const float *latent;    /* [L][T][R] */
	const float *rope;      /* [L][T][P] */
	const float *q_latent;  /* [L][Q][H][R] or NULL */
	const float *q_rope;    /* [L][Q][H][P] or NULL */
	const int64_t *q_index; /* [Q]: query q attends to tokens 0..q_index[q] */
	const int64_t *positions; /* [T] absolute positions, or NULL for 0..T-1 */
	double softmax_scale;
	const char *model;      /* may be NULL */
	const char *split;      /* "calibration" or "test"; may be NULL */
	const char *name;       /* window name; may be NULL */
} wzc_window;


typedef struct wzc_profile wzc_profile;
typedef struct wzc_codec wzc_codec;

#endif
