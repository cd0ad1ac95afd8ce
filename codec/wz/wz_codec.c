/* The wz fixed-rate coder (GPU tier): the reference encoder and the
 * decoders that follow a layer's plan (codec/wz/wz_plan.c), each token's
 * record the same size and decodable alone: its scale codes, then each
 * group's digits as one mixed-radix field (docs/wz-format.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/profile/profile.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/wz/wzt_trellis.h"

/* Hot loops: GCC vectorizes these at -O3; the default -O2 does not.  The
 * transform also gets an AVX2 and FMA clone chosen at run time: the same
 * fused multiply-adds in the same order, so the bytes do not depend on the
 * machine (ISO C mode contracts nothing else into FMA). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__)
#define WZ_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
#ifndef WZ_CLONES
#define WZ_CLONES
#endif

typedef unsigned __int128 u128;

static uint64_t get_bits(const uint8_t *rec, size_t nrec, int off, int k)
{
	int first = off >> 3, last = (off + k - 1) >> 3;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* one unaligned load when 16 bytes are inside the record */
	if ((size_t)first + 16 <= nrec) {
		u128 w;
		memcpy(&w, rec + first, 16);
		w >>= (off & 7);
		return k >= 64 ? (uint64_t)w : (uint64_t)w & (((uint64_t)1 << k) - 1);
	}
#else
	(void)nrec;
#endif
	u128 acc = 0;
	for (int b = last; b >= first; b--)
		acc = acc << 8 | rec[b];
	acc >>= (off & 7);
	return k >= 64 ? (uint64_t)acc : (uint64_t)acc & (((uint64_t)1 << k) - 1);
}

/* Index of the nearest level: the number of thresholds (sorted midpoints)
 * below z.  Written with conditional moves, not branches: the branch of a
 * binary search is a coin flip, and mispredicting it dominated encoding. */
static inline uint32_t quantize(const float *thr, uint32_t N, float z)
{
	uint32_t lo = 0, n = N - 1;
	while (n > 0) {
		uint32_t half = n >> 1;
		int gt = z > thr[lo + half];
		lo = gt ? lo + half + 1 : lo;
		n = gt ? n - half - 1 : half;
	}
	return lo;
}

/* y[k] = the fused multiply-add chain over i in order of x[i] * bt[i][k]
 * (docs/wz-format.md, "Arithmetic"), for rows of n tokens at once. */
WZ_HOT WZ_CLONES static void transform_rows(int ntok, int m, const float *bt, const float *x, float *y)
{
	for (int t = 0; t < ntok; t++) {
		float *yt = y + (size_t)t * m;
		for (int k = 0; k < m; k++)
			yt[k] = 0;
	}
	for (int i = 0; i < m; i++) {
		const float *bi = bt + (size_t)i * m;
		for (int t = 0; t < ntok; t++) {
			float xi = x[(size_t)t * m + i];
			float *yt = y + (size_t)t * m;
			for (int k = 0; k < m; k++)
				yt[k] = fmaf(xi, bi[k], yt[k]);
		}
	}
}

/* The encoder's transform of one token part (docs/wz-format.md,
 * "Arithmetic"): y[k] = (float)(sum_i bq[k][i] xq[i]), the sum exact in
 * integers (wrapping modulo 2^32 only for a basis that profiles are refused
 * for); the coefficient is y[k] * 2^(e - 24), returned as that unit. */
static float itransform(int m, const int16_t *bq, const float *x, int16_t *xq /* scratch [m] */,
			float *y)
{
	int e = wzc_input_q(m, x, xq);
	for (int k = 0; k < m; k++) {
		const int16_t *row = bq + (size_t)k * m;
		uint32_t acc = 0;
		for (int i = 0; i < m; i++)
			acc += (uint32_t)((int32_t)row[i] * xq[i]);
		y[k] = (float)(int32_t)acc;
	}
	return ldexpf(1.0f, e - WZC_XQ_SHIFT - WZC_BQ_SHIFT);
}

#define DEC_BLOCK 64

static void encode_ref(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int search, int layer,
		       int n, const float *latent, const float *rope, uint8_t *records,
		       size_t record_bytes);

void wzc_wz_encode_layer_ref(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			     const float *rope, uint8_t *records, size_t record_bytes)
{
	encode_ref(plan, NULL, 0, layer, n, latent, rope, records, record_bytes);
}

void wzc_wzs_encode_layer_ref(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			      const float *rope, uint8_t *records, size_t record_bytes)
{
	encode_ref(plan, NULL, 1, layer, n, latent, rope, records, record_bytes);
}

void wzc_wz_encode_layer_trellis(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int layer,
				 int n, const float *latent, const float *rope, uint8_t *records,
				 size_t record_bytes)
{
	encode_ref(plan, tp, 0, layer, n, latent, rope, records, record_bytes);
}

/* One token's steps 1-3 (docs/wz-format.md, "Arithmetic"): each part's
 * anchor flag and scale code, and its coded components standardized, in
 * list order (latent, position), into zl.  Scratch: xc [max(R, P)], y
 * [R + P], xq [max(R, P)]. */
static void token_coefficients(const wzc_wz_plan *plan, const layer_plan *lp, int layer,
			       const float *latent, const float *rope, float *xc, float *y,
			       int16_t *xq, float *zl, uint8_t code[2], uint8_t flag[2])
{
	const wzc_profile *pr = plan->profile;
	const wzc_part_profile *parts[2] = { &pr->latent[layer], &pr->rope[layer] };
	int R = plan->R, P = plan->P, width[2] = { R, P };
	const float *src[2] = { latent, rope };
	float unit[2] = { 0, 0 };
	code[0] = code[1] = flag[0] = flag[1] = 0;
	for (int p = 0; p < 2; p++) {
		int m = width[p];
		if (!m)
			continue;
		const float *x = src[p];
		/* Each part of a token is coded relative to the mean or to the
		 * anchor, whichever is nearer (the sink is then almost exact). */
		double dm = 0, da = 0;
		for (int i = 0; i < m; i++) {
			double a = x[i] - parts[p]->mean[i], b = x[i] - parts[p]->anchor[i];
			dm += a * a;
			da += b * b;
		}
		flag[p] = lp->nlev[R + P + p] == 2 && da < dm;
		double ss = 0;
		const float *base = flag[p] ? parts[p]->anchor : parts[p]->mean;
		for (int i = 0; i < m; i++) {
			float c = x[i] - base[i];
			xc[i] = c;
			ss += (double)c * c;
		}
		code[p] = wzc_scale_code(sqrt(ss / m), parts[p]->scale_ref);
		float s = plan->scale_mult[p][code[p]] * parts[p]->scale_ref;
		float inv = s > 0 ? 1.0f / s : 0;
		for (int i = 0; i < m; i++)
			xc[i] *= inv;
		unit[p] = itransform(m, lp->bq[p], xc, xq, y + (p ? R : 0));
	}
	/* the coded components, standardized (a multiply by 1 / sigma in
	 * units), in list order: latent, position */
	for (int j = 0; j < lp->ncod[0] + lp->ncod[1]; j++) {
		int k = lp->comp_c[j];
		zl[j] = y[k] * (wzc_rsigma(lp->sigma[k]) * unit[k >= R]);
	}
}

wz_err wzc_wz_coefficients(const wzc_wz_plan *plan, int layer, const float *latent,
			   const float *rope, float *z, uint8_t code[2], wz_diag *diag)
{
	const layer_plan *lp;
	wz_err e = wzc_wz_plan_layer_get(plan, layer, &lp, diag);
	if (e)
		return e;
	int R = plan->R, P = plan->P, m = R > P ? R : P;
	float *xc = malloc(sizeof(float) * (size_t)m), *y = malloc(sizeof(float) * (size_t)(R + P));
	int16_t *xq = malloc(sizeof(int16_t) * (size_t)m);
	uint8_t flag[2];
	if (xc && y && xq)
		token_coefficients(plan, lp, layer, latent, rope, xc, y, xq, z, code, flag);
	free(xc);
	free(y);
	free(xq);
	return xc && y && xq ? WZ_OK : wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
}

/* The reference encoder: wz's record; with a trellis (wzt), the scale
 * codes, flags and overload rule are wz's, and the trellis components'
 * digits come from the Viterbi search; with search (wzs), each part's
 * code is then searched (step 6). */
static void encode_ref(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int search, int layer,
		       int n, const float *latent, const float *rope, uint8_t *records,
		       size_t record_bytes)
{
	const layer_plan *lp = wzc_wz_plan_layer(plan, layer);
	if (!lp) {
		memset(records, 0, record_bytes * (size_t)n); /* out of memory, as below */
		return;
	}
	int R = plan->R, P = plan->P, m = R > P ? R : P;
	float *xc = malloc(sizeof(float) * (size_t)m);
	float *y = malloc(sizeof(float) * (size_t)(R + P));
	int16_t *xq = malloc(sizeof(int16_t) * (size_t)m);
	uint32_t *dig = malloc(sizeof(uint32_t) * (size_t)(R + P + 2));
	int nc = lp->ncod[0] + lp->ncod[1];
	float *zl = malloc(sizeof(float) * (size_t)(nc + 1));
	if (!xc || !y || !xq || !dig || !zl) {
		/* Out of memory inside a void encoder: write zero records, which
		 * decode to the mean; callers checked sizes before. */
		memset(records, 0, record_bytes * (size_t)n);
		free(xc);
		free(y);
		free(xq);
		free(dig);
		free(zl);
		return;
	}
	for (int t = 0; t < n; t++) {
		uint8_t codes[2], flag[2];
		token_coefficients(plan, lp, layer, latent + (size_t)t * R, rope + (size_t)t * P, xc, y,
				   xq, zl, codes, flag);
		uint8_t *rec = records + (size_t)t * record_bytes;
		memset(rec, 0, record_bytes);
		rec[0] = codes[0];
		if (P)
			rec[1] = codes[1];
		/* a part beyond its tables gets a larger scale code (step 5);
		 * wzs searches the code by its error (step 6) */
		for (int p = 0, j0 = 0; p < 2; j0 += lp->ncod[p], p++) {
			const float *mult = plan->scale_mult[p];
			int c0 = codes[p];
			int c = c0 + wzc_overload_raise(lp, p, j0, lp->ncod[p], zl + j0, mult, c0);
			if (search && c0 >= 1 && lp->ncod[p] > 0) {
				wzc_search_ref_ctx x = { lp, j0, lp->ncod[p], c0, zl + j0, mult };
				c = wzc_search_descent(c, &x, wzc_search_ref_cost);
			}
			if (c == c0)
				continue;
			float r = mult[c0] / mult[c];
			for (int j = j0; j < j0 + lp->ncod[p]; j++)
				zl[j] *= r;
			rec[p] = (uint8_t)c;
		}
		for (int k = 0; k < R + P; k++)
			dig[k] = 0;
		for (int j = 0; j < nc; j++) {
			int k = lp->comp_c[j];
			dig[k] = quantize(lp->thr[k], lp->nlev[k], zl[j]);
		}
		if (tp)
			wzc_wzt_digits(tp, lp, layer, zl, dig);
		dig[R + P] = flag[0];
		dig[R + P + 1] = flag[1];
		int off = 8 * plan->scale_bytes;
		for (int g = 0; g < lp->ngroups; g++) {
			uint64_t V = 0, M = 1;
			for (int i = lp->gstart[g]; i < lp->gstart[g + 1]; i++) {
				int c = lp->order[i];
				V = V * lp->nlev[c] + dig[c];
				M *= lp->nlev[c];
			}
			int kb = lp->gbits[g];
			/* the smallest kb-bit y with y / 2^kb >= V / M */
			u128 num = (u128)V << kb;
			uint64_t word = (uint64_t)((num + M - 1) / M);
			wzc_put_bits(rec, off, kb, word);
			off += kb;
		}
	}
	free(xc);
	free(y);
	free(xq);
	free(dig);
	free(zl);
}

/* The groups of a wzt record: a trellis component's digit names a level
 * of its union codebook by the state and moves the state (wzt_trellis.h).
 * A loop of its own, apart from wz's, so that the group's fraction and
 * the state stay in registers.  `in_reg` (a constant where it is inlined)
 * picks how the state moves: up to 8 states (wzt8) by the transition
 * table in one register (wzt_next_in); otherwise wzt_next as arithmetic.  The
 * table is the shorter chain: wzt8-5.44 decoded to the transformed domain
 * 14% faster with it (bench/bench_codec); the states are the same. */
static inline __attribute__((always_inline)) void
walk_groups(const wzc_wz_plan *plan, const layer_plan *lp, const float *const *cb, int in_reg,
	    uint64_t next, uint32_t H0, uint32_t H1, const uint8_t *rec, int off, const float s[2],
	    float *y, uint32_t flag[2])
{
	const wzc_dec_entry *de = lp->dec;
	int nv = plan->R + plan->P;
	uint32_t state = 0;
	for (int g = 0; g < lp->ngroups; g++) {
		int kb = lp->gbits[g];
		uint64_t x = get_bits(rec, plan->record_bytes, off, kb) << (64 - kb);
		off += kb;
		for (int i = lp->gstart[g]; i < lp->gstart[g + 1]; i++) {
			const wzc_dec_entry *e = &de[i];
			u128 prod = (u128)x * e->nlev;
			uint32_t digit = (uint32_t)(prod >> 64);
			x = (uint64_t)prod;
			const float *c = cb[i];
			if (e->comp >= nv) {
				flag[e->comp - nv] = digit;
			} else if (c) {
				y[e->comp] = c[wzt_level_index(state, digit)] * e->sigma * s[e->part];
				if (in_reg)
					state = wzt_next_in(next, state, digit & 1);
				else
					state = wzt_next_h(state, digit & 1, H0, H1);
			} else {
				y[e->comp] = e->lev[digit] * e->sigma * s[e->part];
			}
		}
	}
}

static WZ_HOT void walk_trellis(const wzc_wz_plan *plan, const wzc_wzt_plan *tp,
				const layer_plan *lp, int layer, const uint8_t *rec, int off,
				const float s[2], float *y, uint32_t flag[2])
{
	const float *const *cb = tp->layers[layer].cb;
	if (tp->nu <= WZT_NU_IN_WORD) {
		walk_groups(plan, lp, cb, 1, wzt_next_table(tp->nu), 0, 0, rec, off, s, y, flag);
	} else {
		walk_groups(plan, lp, cb, 0, 0, wzt_h0[tp->nu] >> 1, wzt_h1[tp->nu] >> 1, rec, off, s,
			    y, flag);
	}
}

WZ_HOT wz_err wzc_wz_decode(const wzc_wz_plan *plan, int layer, const uint8_t *rec,
			    float *latent, float *rope, int transformed)
{
	return wzc_wz_decode_trellis(plan, NULL, layer, rec, latent, rope, transformed);
}

/* With a trellis (wzt), a trellis component's digit names a level of its
 * union codebook by the state, and moves the state (wzt_trellis.h). */
WZ_HOT wz_err wzc_wz_decode_trellis(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int layer,
				    const uint8_t *rec, float *latent, float *rope, int transformed)
{
	const layer_plan *lp;
	wz_err planned = wzc_wz_plan_layer_get(plan, layer, &lp, NULL);
	const wzc_profile *pr = plan->profile;
	const wzc_part_profile *parts[2] = { &pr->latent[layer], &pr->rope[layer] };
	int R = plan->R, P = plan->P;
	float s[2];
	if (planned) { /* out of memory, or a layer not read: nothing to decode with */
		memset(latent, 0, sizeof(float) * (size_t)R);
		memset(rope, 0, sizeof(float) * (size_t)P);
		return planned;
	}
	s[0] = plan->scale_mult[0][rec[0]] * parts[0]->scale_ref;
	s[1] = P ? plan->scale_mult[1][rec[1]] * parts[1]->scale_ref : 0;
	float ybuf[1024];
	float *y = R + P < 1024 ? ybuf : malloc(sizeof(float) * (size_t)(R + P));
	int nv = R + P;
	uint32_t flag[2] = { 0, 0 };
	if (!y) { /* out of memory, as above */
		memset(latent, 0, sizeof(float) * (size_t)R);
		memset(rope, 0, sizeof(float) * (size_t)P);
		return WZ_ERR_NOMEM;
	}
	/* Components with one level decode to that level. */
	for (int i = 0; i < lp->nones; i++) {
		int k = lp->ones[i];
		y[k] = lp->lev[k][0] * lp->sigma[k] * s[k >= R];
	}
	int off = 8 * plan->scale_bytes;
	const wzc_dec_entry *de = lp->dec;
	if (tp)
		walk_trellis(plan, tp, lp, layer, rec, off, s, y, flag);
	else
		for (int g = 0; g < lp->ngroups; g++) {
			int kb = lp->gbits[g];
			uint64_t x = get_bits(rec, plan->record_bytes, off, kb) << (64 - kb);
			off += kb;
			for (int i = lp->gstart[g]; i < lp->gstart[g + 1]; i++) {
				const wzc_dec_entry *e = &de[i];
				u128 prod = (u128)x * e->nlev;
				uint32_t digit = (uint32_t)(prod >> 64);
				x = (uint64_t)prod;
				if (e->comp >= nv)
					flag[e->comp - nv] = digit;
				else
					y[e->comp] = e->lev[digit] * e->sigma * s[e->part];
			}
		}
	if (transformed) {
		/* relative to the mean for every token, so attention needs one
		 * correction term per layer (q . mean), not one per token */
		for (int k = 0; k < R; k++)
			latent[k] = flag[0] ? y[k] + lp->delta[0][k] : y[k];
		for (int k = 0; k < P; k++)
			rope[k] = flag[1] ? y[R + k] + lp->delta[1][k] : y[R + k];
	} else {
		/* Through the transformed domain and the blocked inverse
		 * transform, exactly as wzc_wz_decode_layer does for many tokens,
		 * so a token decoded alone gives the same values. */
		float *out[2] = { latent, rope };
		for (int p = 0; p < 2; p++) {
			int m = parts[p]->n;
			float *t = y + (p ? R : 0);
			if (flag[p])
				for (int k = 0; k < m; k++)
					t[k] += lp->delta[p][k];
			transform_rows(1, m, parts[p]->basis, t, out[p]);
			for (int i = 0; i < m; i++)
				out[p][i] += parts[p]->mean[i];
		}
	}
	if (y != ybuf)
		free(y);
	return WZ_OK;
}


wz_err wzc_wz_decode_layer(const wzc_wz_plan *plan, int layer, int n, const uint8_t *records,
			   float *latent, float *rope)
{
	return wzc_wz_decode_layer_trellis(plan, NULL, layer, n, records, latent, rope);
}

wz_err wzc_wz_decode_layer_trellis(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int layer,
				   int n, const uint8_t *records, float *latent, float *rope)
{
	const wzc_profile *pr = plan->profile;
	const wzc_part_profile *parts[2] = { &pr->latent[layer], &pr->rope[layer] };
	int R = plan->R, P = plan->P, width[2] = { R, P };
	float *yb[2] = { malloc(sizeof(float) * (size_t)DEC_BLOCK * R),
			 malloc(sizeof(float) * ((size_t)DEC_BLOCK * P + 1)) };
	float *out[2] = { latent, rope };
	wz_err e = WZ_OK;
	if (!yb[0] || !yb[1]) {
		/* no memory for blocks: one token at a time (same values) */
		for (int t = 0; !e && t < n; t++)
			e = wzc_wz_decode_trellis(plan, tp, layer,
						  records + (size_t)t * plan->record_bytes,
						  latent + (size_t)t * R, rope + (size_t)t * P, 0);
		free(yb[0]);
		free(yb[1]);
		return e;
	}
	for (int t0 = 0; !e && t0 < n; t0 += DEC_BLOCK) {
		int nb = n - t0 < DEC_BLOCK ? n - t0 : DEC_BLOCK;
		for (int t = 0; !e && t < nb; t++)
			e = wzc_wz_decode_trellis(plan, tp, layer,
						  records + (size_t)(t0 + t) * plan->record_bytes,
						  yb[0] + (size_t)t * R, yb[1] + (size_t)t * P, 1);
		if (e)
			break;
		for (int p = 0; p < 2; p++) {
			int m = width[p];
			float *o = out[p] + (size_t)t0 * m;
			/* the same sums as transform_rows, in blocks */
			wzc_gemm(nb, m, m, parts[p]->basis, (size_t)m, yb[p], (size_t)m, 1, o, (size_t)m);
			for (int t = 0; t < nb; t++)
				for (int i = 0; i < m; i++)
					o[(size_t)t * m + i] += parts[p]->mean[i];
		}
	}
	free(yb[0]);
	free(yb[1]);
	return e;
}
