/* The wz rate plan's internal layout, shared by the coder (wz_codec.c) and
 * its flattening for the GPU (wz_flat.c). */
#ifndef WZC_WZ_PLAN_H
#define WZC_WZ_PLAN_H

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "codec/profile/profile.h"
#include "codec/wz/wz_gemm.h"

/* What the decoder needs per component, in coding order, in one array. */
typedef struct wzc_wz_plan wzc_wz_plan;

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
	int16_t *bq[2];     /* the bases in integers for encoding: [k][i] = wzc_basis_q(basis[k][i]) */
	float *delta[2];    /* basis (anchor - mean): the anchor in the transformed domain */
	/* For the fast encoder: per part, the components with more than one
	 * level (ncod, cod[] within the part), the integer basis of just those
	 * in 16-bit pairs over the inner index (bp_c[q][j] = the pair of
	 * bq[cod[j]][2q] and bq[cod[j]][2q + 1], 0 past the part's width; row
	 * length ldc), and per coded component the grid of its level table
	 * (qlut[] indexes qluts). */
	int ncod[2], *cod[2];
	size_t ldc[2];
	uint32_t *bp_c[2];
	/* the same basis in the dot form (wz_gemm.h, wzc_igemm_dot):
	 * bt_c[j][q], rows of ldt = wzc_igemm_dot_pad(pairs) pairs, zero past
	 * the part's width */
	uint32_t *bt_c[2];
	size_t ldt[2];
	int nqluts;
	wzc_qlut *qluts;
	int *qlut_of;       /* [n] index into qluts for components with nlev > 1, else -1 */
	/* The coded components of both parts in one list (latent, then
	 * position): comp_c[j] the component, qb their grids side by side;
	 * order_c[i] is order[i]'s place in that list (the anchor flags come
	 * after it: ncod[0] + ncod[1] and one more). */
	int *comp_c, *order_c;
	float *rsig_c;      /* wzc_rsigma of each one's sigma */
	wzc_qbatch qb;
	void *qb_block;     /* memory of qb's arrays */
	/* Overload (docs/wz-format.md, "Arithmetic" step 5), per coded
	 * component in list order: the outer bounds, the level table, its
	 * thresholds and count, and weight * sigma^2. */
	float *olo_c, *ohi_c;
	float *lmin_c, *lmax_c; /* the outermost levels */
	const float **lev_c, **thr_c;
	uint32_t *nlev_c;
	double *ew_c;
	double dexp[2];     /* per part: sum of ew_c * the table's distortion on the histogram */
	double distortion;  /* model distortion, for choosing among candidates */
	int total_bits;
} layer_plan;

struct wzc_wz_plan {
	const wzc_profile *profile;
	int L, R, P;
	int scale_bytes;
	size_t record_bytes;
	float scale_mult[2][256]; /* per part: the decoded scale of each code, times scale_ref */
	/* Planned a layer at a time on first use (wzc_wz_plan_layer): opening
	 * a 61-layer profile to restore one block of one layer used to plan
	 * all 61 (about 6 ms each, perf on the restore's set-up). */
	layer_plan *layers;
	int *ready;               /* [L] 1 once layers[l] is planned (atomic) */
	pthread_mutex_t *lock;    /* [L] guards planning layer l */
	/* Profile version 7 (docs/wz-format.md, "Predicted position part"):
	 * the plan of the tokens at position 0 (the anchor's, not predicted)
	 * in a layer that predicts, over a profile whose position part is
	 * rope_plain (anchored_profile, a shallow copy owned here); NULL when
	 * no layer predicts. */
	struct wzc_wz_plan *anchored;
	wzc_profile *anchored_profile;
};

/* wz (codec/wz/wz_codec.c). */
wz_err wzc_wz_plan_new(const wzc_profile *profile, double rate_bits, size_t record_bytes,
		       wzc_wz_plan **out, wz_diag *diag);
void wzc_wz_plan_free(wzc_wz_plan *plan);
void wzc_wz_encode_layer(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			 const float *rope, uint8_t *records, size_t record_bytes);
/* WZ_ERR_NOMEM when the layer's plan, made on first use, or the decode's
 * scratch (R + P over 1023) cannot be had, WZ_ERR_USAGE for a layer of a
 * profile read in part that was not read: the values are then zeros. */
wz_err wzc_wz_decode(const wzc_wz_plan *plan, int layer, const uint8_t *record, float *latent,
		     float *rope, int transformed);
/* n records to the cache's own domain, blocks of tokens through one inverse
 * transform; the same values as wzc_wz_decode one by one, and its errors
 * (the values then undefined). */
wz_err wzc_wz_decode_layer(const wzc_wz_plan *plan, int layer, int n, const uint8_t *records,
			   float *latent, float *rope);


/* Layer l of the plan, planned on first use by whichever thread gets
 * there first (the others wait): the same plan whatever the order layers
 * are asked for.  NULL when out of memory; wzc_wz_plan_layer_get says so
 * in diag. */
const layer_plan *wzc_wz_plan_layer(const wzc_wz_plan *plan, int l);
wz_err wzc_wz_plan_layer_get(const wzc_wz_plan *plan, int l, const layer_plan **out /* OUT */,
			     wz_diag *diag);

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

/* A group's divisor M, prepared for division by multiplication (Möller
 * and Granlund, "Improved division by invariant integers", 2011): d = M
 * shifted up until its top bit is set, and v = floor((2^128 - 1) / d) -
 * 2^64.  A hardware 128-by-64-bit division costs more than the rest of a
 * group's packing. */
typedef struct {
	uint64_t M, d, v;
	int shift;
} wzc_divisor;

static inline wzc_divisor wzc_divisor_of(uint64_t M)
{
	wzc_divisor q = { .M = M, .shift = __builtin_clzll(M) };
	q.d = M << q.shift;
	q.v = (uint64_t)((((unsigned __int128)~q.d) << 64 | UINT64_MAX) / q.d);
	return q;
}

/* ceil(V * 2^kb / M) for V < M <= 2^kb, kb in 1..64: the numerator
 * V 2^kb + M - 1 is below M 2^kb, shifted with M it is below d 2^64, so its
 * high word is below d and the quotient fits in 64 bits.  Algorithm 4 of
 * the paper: exact, one estimate and at most two corrections. */
static inline uint64_t wzc_field_word(uint64_t V, int kb, const wzc_divisor *q)
{
	unsigned __int128 num = (((unsigned __int128)V << kb) + (q->M - 1)) << q->shift;
	uint64_t nh = (uint64_t)(num >> 64), nl = (uint64_t)num;
	unsigned __int128 est = (unsigned __int128)q->v * nh + ((unsigned __int128)(nh + 1) << 64 | nl);
	uint64_t qh = (uint64_t)(est >> 64), ql = (uint64_t)est;
	uint64_t r = nl - qh * q->d;
	if (r > ql) {
		qh--;
		r += q->d;
	}
	if (r >= q->d)
		qh++;
	return qh;
}

/* Step 5's terms (docs/wz-format.md, "Arithmetic"), in double precision
 * as the rule defines them: a coded component's clipping cost ew x^2, x
 * how far z lies past its outermost levels lo, hi; and its weighted
 * error ew (zr - level)^2 at a candidate scale.  The reference sums them
 * in list order; the fast encoder (codec/wz/wz_encode_overload.c,
 * wzc_wz_overload_raise_fast) computes the same terms and sums. */
static inline double wzc_overload_clip_term(float z, float lo, float hi, double ew)
{
	double x = z > hi ? (double)z - hi : z < lo ? (double)lo - z : 0;
	return ew * x * x;
}

static inline double wzc_overload_error_term(float zr, float level, double ew)
{
	double e = (double)zr - (double)level;
	return ew * e * e;
}

/* The squared error of a token part's coded components j0..j0+nc-1 at
 * scale code c0 + d (step 5): E(d) in double precision, in list order. */
static inline double wzc_overload_error(const layer_plan *lp, int j0, int nc, const float *z,
					const float *mult, int c0, int d)
{
	float r = mult[c0] / mult[c0 + d];
	double sum = 0, s = mult[c0 + d];
	for (int j = j0; j < j0 + nc; j++) {
		float zr = z[j - j0] * r;
		uint32_t q = wzc_quantize(lp->qb.q[j], zr); /* = the binary search's digit */
		sum += wzc_overload_error_term(zr, lp->lev_c[j][q], lp->ew_c[j]);
	}
	return s * s * sum;
}

/* The clipping cost of a token part (docs/wz-format.md, "Arithmetic" step
 * 5): sum of ew_j x_j^2 in component order, x_j how far z_j lies past
 * its table's outermost level. */
static inline double wzc_overload_clip(const layer_plan *lp, int j0, int nc, const float *z)
{
	double clip = 0;
	for (int j = j0; j < j0 + nc; j++)
		clip += wzc_overload_clip_term(z[j - j0], lp->lmin_c[j], lp->lmax_c[j], lp->ew_c[j]);
	return clip;
}

/* D of step 5: the largest of the components' smallest sufficient steps
 * (the bounds straddle 0, clamped so in the plan, so a larger code only
 * moves a product inwards), found in one pass; 0 when none is needed. */
static inline int wzc_overload_span(const layer_plan *lp, int j0, int nc, const float *z,
				    const float *mult, int c0)
{
	int D = 0;
	for (int j = 0; j < nc; j++)
		while (c0 + D < 255) {
			float zr = z[j] * (mult[c0] / mult[c0 + D]);
			if (!(zr < lp->olo_c[j0 + j] || zr > lp->ohi_c[j0 + j]))
				break;
			D++;
		}
	return D;
}

/* The candidates of step 5 for D >= 1, in the order they are weighed: 0,
 * then floor((i D + 3) / 4) for i = 1..4, each once; returns how many. */
static inline int wzc_overload_candidates(int D, int d[5])
{
	int n = 0;
	d[n++] = 0;
	for (int i = 1; i <= 4; i++) {
		int di = (i * D + 3) / 4;
		if (di != d[n - 1])
			d[n++] = di;
	}
	return n;
}

/* How far a token part's scale code c0 is raised when its coefficients z
 * (the part's coded components, list order from j0) lie beyond the outer
 * bounds of their level tables (docs/wz-format.md, "Arithmetic" step 5):
 * 0 for a part whose clipping costs less than its expected error, the
 * common case, at the cost of one comparison pair per component.  The caller multiplies z by
 * mult[c0] / mult[c0 + d] and takes the digits of the products.  The
 * reference's rule; the fast encoder computes the same sums faster
 * (codec/wz/wz_encode_overload.c, wzc_wz_overload_raise_fast) from the same
 * parts. */
static inline int wzc_overload_raise(const layer_plan *lp, int part, int j0, int nc,
				     const float *z, const float *mult, int c0)
{
	if (c0 <= 0 || nc <= 0)
		return 0;
	/* Only when a value lies past its table's outer bound, and clipping
	 * alone costs more than all the error the plan expects of the part:
	 * values past the outermost level of a small (Lloyd) table are common
	 * and cost little. */
	int outside = 0;
	for (int j = 0; j < nc; j++)
		outside |= (z[j] > lp->ohi_c[j0 + j]) | (z[j] < lp->olo_c[j0 + j]);
	if (!outside)
		return 0;
	if (!(wzc_overload_clip(lp, j0, nc, z) > lp->dexp[part]))
		return 0;
	int D = wzc_overload_span(lp, j0, nc, z, mult, c0);
	if (D == 0)
		return 0;
	int d[5], n = wzc_overload_candidates(D, d), best = 0;
	double emin = wzc_overload_error(lp, j0, nc, z, mult, c0, 0);
	for (int i = 1; i < n; i++) {
		double e = wzc_overload_error(lp, j0, nc, z, mult, c0, d[i]);
		if (e < emin) {
			emin = e;
			best = d[i];
		}
	}
	return best;
}

/* Step 6 (docs/wz-format.md, "Arithmetic"; wzs formats only): a token
 * part's scale code searched by its weighted error.  E(c) is the error
 * of step 5's terms at code c, their sum taken as eight partial sums
 * (term j into sum j mod 8, each in component order) combined pairwise,
 * so that a vector of eight doubles sums it on any machine. */
static inline double wzc_search_sum8(const double s[8])
{
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* E(c) of the part's coded components j0..j0+nc-1 (z standardized at
 * code c0), the reference's: one component at a time. */
static inline double wzc_search_error(const layer_plan *lp, int j0, int nc, const float *z,
				      const float *mult, int c0, int c)
{
	float r = mult[c0] / mult[c];
	double s8[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	for (int j = 0; j < nc; j++) {
		float zr = z[j] * r;
		uint32_t q = wzc_quantize(lp->qb.q[j0 + j], zr);
		s8[j & 7] += wzc_overload_error_term(zr, lp->lev_c[j0 + j][q], lp->ew_c[j0 + j]);
	}
	double s = mult[c];
	return s * s * wzc_search_sum8(s8);
}

/* Step 6's descent from code c (what step 5 left), E(code) given by
 * cost(ctx, code): one step to the neighbour of least error (the lower
 * code on a tie) when it is below E(c), then on in that direction while
 * the error falls strictly, within codes 1..255 and fewer than
 * WZC_SEARCH_SPAN codes from c.  The reference (wzc_search_error) and the
 * fast encoder (codec/wz/wz_encode.c) give it their own cost, the same
 * doubles. */
#define WZC_SEARCH_SPAN 16
typedef double (*wzc_search_cost)(void *ctx, int code);
static inline int wzc_search_descent(int c, void *ctx, wzc_search_cost cost)
{
	double e = cost(ctx, c);
	double em = c >= 2 ? cost(ctx, c - 1) : (double)INFINITY;
	double ep = c <= 254 ? cost(ctx, c + 1) : (double)INFINITY;
	if (!(em < e) && !(ep < e))
		return c;
	int dir = em < e && !(ep < em) ? -1 : 1;
	int cur = c + dir;
	e = dir < 0 ? em : ep;
	for (;;) {
		int next = cur + dir;
		if (next < 1 || next > 255 || (next > c ? next - c : c - next) >= WZC_SEARCH_SPAN)
			return cur;
		double en = cost(ctx, next);
		if (!(en < e))
			return cur;
		cur = next;
		e = en;
	}
}

/* The reference's cost for wzc_search_descent. */
typedef struct {
	const layer_plan *lp;
	int j0, nc, c0;
	const float *z, *mult;
} wzc_search_ref_ctx;

static inline double wzc_search_ref_cost(void *ctx, int code)
{
	const wzc_search_ref_ctx *x = (const wzc_search_ref_ctx *)ctx;
	return wzc_search_error(x->lp, x->j0, x->nc, x->z, x->mult, x->c0, code);
}

/* The wzt formats' trellis over a wz plan (docs/wz-format.md,
 * "Trellis-coded records"), per layer: for each entry of the plan's
 * coding order, the union codebook (2N standardized levels, increasing)
 * of a trellis component, NULL for a scalar one. */
/* One step of the fast search: a trellis component's union codebook
 * padded with 4 levels of -inf below and 16 of +inf above (pad[0] is
 * level 0), and a grid over it (NULL: a binary search) from which the
 * number of levels <= z follows by one comparison of 8 levels. */
typedef struct {
	const float *cb;       /* the codebook (tl->cb's pointer) */
	const float *pad;
	const uint32_t *start; /* [cell]: levels in the cells below */
	float lo, inv;         /* wzc_qlut_cell's t0 and inv_w */
	float gmax;            /* (float)(G - 1) */
	int G;
	uint32_t n2;           /* levels, 2N */
	int jl;                /* the component's place in the list order */
	double w;              /* its ew_c */
} wzc_wzt_step;

typedef struct {
	const float **cb;   /* [gstart[ngroups]] */
	float *tables;
	int nsteps;         /* trellis components */
	wzc_wzt_step *steps; /* [nsteps], in coding order */
	float *padded;      /* the padded codebooks */
	uint32_t *grids;    /* their grids */
} wzc_wzt_layer;

struct wzc_wzt_plan {
	int nu, L;
	uint16_t next[1 << 8][2]; /* wzt_next of every state and branch */
	wzc_wzt_layer *layers;
};
typedef struct wzc_wzt_plan wzc_wzt_plan;

/* The trellis for a wz plan of the same profile and record size; the
 * caller frees it with wzc_wzt_plan_free (NULL is fine). */
wz_err wzc_wzt_plan_new(const wzc_wz_plan *plan, int nu, wzc_wzt_plan **out /* OUT */,
			wz_diag *diag);
void wzc_wzt_plan_free(wzc_wzt_plan *tp);

/* The Viterbi search of one token part pair: replaces dig[c] of every
 * trellis component c of the layer by the digit of the least weighted
 * squared error path, given the standardized coefficients zl in list
 * order (after the overload rule). */
void wzc_wzt_digits(const wzc_wzt_plan *tp, const layer_plan *lp, int layer, const float *zl,
		    uint32_t *dig /* IN/OUT [n] */);

/* The fast search (codec/wz/wzt_fast.c; the same digits as wzc_wzt_digits,
 * same ties): its working memory for one layer, made once for the
 * layer's tokens (NULL when out of memory; the caller frees it with
 * wzc_wzt_work_free, NULL is fine; simd 0 keeps it to the portable
 * loops, 1 to AVX2 at most, 2 takes AVX-512 where the CPU has it: tests
 * compare each; wzc_wzt_work_simd says which runs), and the search of
 * up to WZT_LANES tokens at once, one per vector lane: z[l] token l's
 * standardized coefficients in list order, dig[l] its digits in list
 * order, dig[l][order_c[i]], as the fast encoder packs them. */
#define WZT_LANES 8
typedef struct wzc_wzt_work wzc_wzt_work;
wzc_wzt_work *wzc_wzt_work_new(const wzc_wzt_plan *tp, int layer, int simd);
void wzc_wzt_work_free(wzc_wzt_work *w);
int wzc_wzt_work_simd(const wzc_wzt_work *w);
void wzc_wzt_digits_lanes(const wzc_wzt_plan *tp, wzc_wzt_work *w, const layer_plan *lp,
			  int layer, int nl, const float *const *z,
			  uint32_t *const *dig /* IN/OUT [nl], list order */);
/* Caps the kernel of every work made after it (0 portable, 1 AVX2, 2
 * the widest, the default), so that tests and benchmarks run each
 * through the encoder; not for use while other threads encode. */
void wzc_wzt_force_simd(int simd);
/* One token: wzc_wzt_digits_lanes with nl = 1. */
void wzc_wzt_digits_fast(const wzc_wzt_plan *tp, wzc_wzt_work *w, const layer_plan *lp,
			 int layer, const float *zl, uint32_t *dig /* IN/OUT, list order */);

/* The fast wzt encoder: wz's fast front end (codec/wz/wz_encode.c) and the
 * fast search; the bytes of wzc_wz_encode_layer_trellis. */
void wzc_wzt_encode_layer(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int layer, int n,
			  const float *latent, const float *rope, uint8_t *records,
			  size_t record_bytes);

/* The reference encoder and the decoder with an optional trellis: NULL
 * codes the wz record (codec/wz/wz_codec.c); the decoders fail as
 * wzc_wz_decode and wzc_wz_decode_layer do. */
void wzc_wz_encode_layer_trellis(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int layer,
				 int n, const float *latent, const float *rope, uint8_t *records,
				 size_t record_bytes);
wz_err wzc_wz_decode_trellis(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int layer,
			     const uint8_t *rec, float *latent, float *rope, int transformed);
wz_err wzc_wz_decode_layer_trellis(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int layer,
				   int n, const uint8_t *records, float *latent, float *rope);

/* The scalar reference encoder (codec/wz/wz_codec.c): the record bytes the
 * fast encoder, wzc_wz_encode_layer, must reproduce exactly. */
void wzc_wz_encode_layer_ref(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			     const float *rope, uint8_t *records, size_t record_bytes);
/* The same for wzs (step 6): the bytes wzc_wzs_encode_layer must give. */
void wzc_wzs_encode_layer_ref(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			      const float *rope, uint8_t *records, size_t record_bytes);
/* One token's coded components standardized at the scale codes of steps
 * 1-3 (docs/wz-format.md, "Arithmetic"), before steps 5 and 6: z [the
 * layer's coded components, list order], code[2] the RMS codes.  What
 * the reference encoder computes, for tests and measurements. */
wz_err wzc_wz_coefficients(const wzc_wz_plan *plan, int layer, const float *latent,
			   const float *rope, float *z /* OUT */, uint8_t code[2] /* OUT */,
			   wz_diag *diag);
/* The fast wzs encoder (codec/wz/wz_encode.c). */
void wzc_wzs_encode_layer(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			  const float *rope, uint8_t *records, size_t record_bytes);

#endif
