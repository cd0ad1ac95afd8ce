/* The wz rate plan's internal layout, shared by the coder (wz_codec.c) and
 * its flattening for the GPU (wz_flat.c). */
#ifndef WZC_WZ_PLAN_H
#define WZC_WZ_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "codec/profile.h"

/* What the decoder needs per component, in coding order, in one array. */
typedef struct {
	const float *lev;   /* level table */
	float sigma;
	uint32_t nlev;
	int comp;           /* component index: latent, position, then the flags */
	int part;           /* 0 latent, 1 position */
} wzc_dec_entry;

typedef struct {
	int n;              /* R + P components (latent first) and the anchor flags */
	uint32_t *nlev;     /* [n] */
	const float **lev;  /* [n] level table (standardized) */
	const float **thr;  /* [n] thresholds, nlev - 1 */
	float *sigma;       /* [n] */
	int ngroups;
	int *gstart;        /* [ngroups + 1] into order[] */
	int *order;         /* components with nlev > 1, in coding order */
	uint8_t *gbits;     /* [ngroups] */
	int nones, *ones;   /* components with a single level (not in any group) */
	wzc_dec_entry *dec; /* [order] */
	float *tables;      /* storage of the level tables and thresholds */
	size_t ntables;     /* floats in tables */
	float *basis_t[2];  /* transposed bases for encoding: [i][k] = basis[k][i] */
	float *delta[2];    /* basis (anchor - mean): the anchor in the transformed domain */
	double distortion;  /* model distortion, for choosing among candidates */
	int total_bits;
} layer_plan;

struct wzc_wz_plan {
	const wzc_profile *profile;
	int L, R, P;
	int scale_bytes;
	size_t record_bytes;
	float scale_mult[2][256]; /* per part: the decoded scale of each code, times scale_ref */
	layer_plan *layers;
};

#endif
