/* The wz rate plan's internal layout, shared by the coder (wz_codec.c) and
 * its flattening for the GPU (wz_flat.c). */
#ifndef WZC_WZ_PLAN_H
#define WZC_WZ_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "codec/profile.h"
#include "codec/wz_gemm.h"

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
	/* For the fast encoder: per part, the components with more than one
	 * level (ncod, cod[] within the part), the basis columns of just those
	 * (basis_c[i][j] = basis[cod[j]][i], row length ldc; NULL when every
 * component is coded: then they are basis_t), and per coded
	 * component the grid of its level table (qlut[] indexes qluts). */
	int ncod[2], *cod[2];
	size_t ldc[2];
	float *basis_c[2];
	int nqluts;
	wzc_qlut *qluts;
	int *qlut_of;       /* [n] index into qluts for components with nlev > 1, else -1 */
	/* The coded components of both parts in one list (latent, then
	 * position): comp_c[j] the component, qb their grids side by side;
	 * order_c[i] is order[i]'s place in that list (the anchor flags come
	 * after it: ncod[0] + ncod[1] and one more). */
	int *comp_c, *order_c;
	float *sigma_c;
	wzc_qbatch qb;
	void *qb_block;     /* memory of qb's arrays */
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

/* k <= 64 bits of val at bit offset off of rec, LSB first. */
static inline void wzc_put_bits(uint8_t *rec, int off, int k, uint64_t val)
{
	for (int i = 0; i < k;) {
		int byte = (off + i) >> 3, sh = (off + i) & 7;
		int take = 8 - sh < k - i ? 8 - sh : k - i;
		uint8_t mask = (uint8_t)(((1u << take) - 1) << sh);
		rec[byte] = (uint8_t)((rec[byte] & ~mask) | ((uint8_t)((val >> i) << sh) & mask));
		i += take;
	}
}

/* The scalar reference encoder (codec/wz_codec.c): the record bytes the
 * fast encoder, wzc_wz_encode_layer, must reproduce exactly. */
void wzc_wz_encode_layer_ref(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			     const float *rope, uint8_t *records, size_t record_bytes);

#endif
