/* The fast wz encoder: the reference's arithmetic (codec/wz/wz_codec.c,
 * wzc_wz_encode_layer_ref) reorganized for speed, same bytes.  A block of
 * tokens is transposed so that the per-token sums (each still over the
 * values in order) run in vector lanes, one token per lane
 * (wz_encode_block.c); the transform is one integer matrix product
 * restricted to the components with more than one level; levels come from
 * a grid, not a search (steps 5 and 6 in wz_encode_overload.c); the
 * groups' fields go out through a bit buffer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/wz/wz_gemm.h"
#include "codec/wz/wz_encode_internal.h"

typedef unsigned __int128 u128;

/* z = (float)acc * (rsigma * unit) over a token part's coded components,
 * as the reference computes them; returns 1 when any z lies past its
 * table's outer bounds lo, hi (the test wzc_overload_raise starts with,
 * in the same pass, so that the common part inside every table skips the
 * call without reading its coefficients again). */
WZ_HOT WZ_CLONES static int standardize(int nc, const int32_t *acc, float unit, const float *rsig,
					const float *lo, const float *hi, float *z)
{
	int outside = 0;
	for (int j = 0; j < nc; j++) {
		float v = (float)acc[j] * (rsig[j] * unit);
		z[j] = v;
		outside |= (v > hi[j]) | (v < lo[j]);
	}
	return outside;
}

static inline void prefetch(const void *p)
{
#if defined(__GNUC__)
	__builtin_prefetch(p, 0, 3);
#else
	(void)p;
#endif
}

static inline void store64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, 8);
#else
	for (int b = 0; b < 8; b++)
		p[b] = (uint8_t)(v >> (8 * b));
#endif
}

/* Each group's mixed-radix number V = sum of digit x place value over
 * its components in coding order, from a token's digits dt (list order)
 * and place[i] (coding order).  V < M <= 2^64, so no partial sum wraps
 * and any order of the additions gives the same integer. */
static void group_values_portable(const layer_plan *lp, const uint32_t *dt, const uint64_t *place,
				  uint64_t *V /* OUT [ngroups] */)
{
	for (int g = 0; g < lp->ngroups; g++) {
		uint64_t v = 0;
		for (int i = lp->gstart[g]; i < lp->gstart[g + 1]; i++)
			v += dt[lp->order_c[i]] * place[i];
		V[g] = v;
	}
}

#ifdef WZ_ENCODE_512
/* The same with AVX-512 where the coding order is the list's: eight
 * digits of a group at a time, each product from two 32 x 32-bit ones
 * (the place value's low and high words; the digit is below 2^32), the
 * lanes summed at the group's end.  The scalar loop took 8% of wz's
 * encode (perf, bench/bench_codec wz-5.44 on an AVX-512 core). */
__attribute__((target("avx512f"))) static void group_values_512(const layer_plan *lp,
								const uint32_t *dt,
								const uint64_t *place,
								uint64_t *V /* OUT [ngroups] */)
{
	for (int g = 0; g < lp->ngroups; g++) {
		__m512i acc = _mm512_setzero_si512();
		for (int i = lp->gstart[g], e = lp->gstart[g + 1]; i < e; i += 8) {
			__mmask8 m = (__mmask8)(e - i >= 8 ? 0xFF : (1u << (e - i)) - 1);
			__m512i d = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(
				_mm512_maskz_loadu_epi32((__mmask16)m, dt + i)));
			__m512i pv = _mm512_maskz_loadu_epi64(m, place + i);
			__m512i lo = _mm512_mul_epu32(d, pv);
			__m512i hi = _mm512_mul_epu32(d, _mm512_srli_epi64(pv, 32));
			acc = _mm512_add_epi64(acc, _mm512_add_epi64(lo, _mm512_slli_epi64(hi, 32)));
		}
		/* the lanes summed by vector adds (which wrap) and one add of
		 * unsigned words: _mm512_reduce_add_epi64 adds signed long long
		 * in C (GCC's header), which may overflow */
		__m256i s4 = _mm256_add_epi64(_mm512_castsi512_si256(acc),
					      _mm512_extracti64x4_epi64(acc, 1));
		__m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s4),
					   _mm256_extracti128_si256(s4, 1));
		V[g] = (uint64_t)_mm_cvtsi128_si64(s2) + (uint64_t)_mm_extract_epi64(s2, 1);
	}
}
#endif

/* pack512: wzc_wz_encode_avx512 and the coding order is the list's. */
static void group_values(const layer_plan *lp, int pack512, const uint32_t *dt,
			 const uint64_t *place, uint64_t *V /* OUT [ngroups] */)
{
#ifdef WZ_ENCODE_512
	if (pack512) {
		group_values_512(lp, dt, place, V);
		return;
	}
#else
	(void)pack512;
#endif
	group_values_portable(lp, dt, place, V);
}

/* wz's record, wzt's when tp is not NULL, wzs's with search (step 6). */
static void encode_layer(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int search, int layer,
			 int n, const float *latent, const float *rope, uint8_t *records,
			 size_t record_bytes)
{
	const layer_plan *lp = wzc_wz_plan_layer(plan, layer);
	if (!lp) {
		memset(records, 0, record_bytes * (size_t)n); /* out of memory: see the reference */
		return;
	}
	const wzc_profile *pr = plan->profile;
	const wzc_part_profile *parts[2] = { &pr->latent[layer], &pr->rope[layer] };
	int R = plan->R, P = plan->P, width[2] = { R, P };
	const float *src[2] = { latent, rope };
	int mmax = R > P ? R : P, nc = lp->ncod[0] + lp->ncod[1];
	float *xt = malloc(sizeof(float) * (size_t)BLOCK * mmax);
	float *col = malloc(sizeof(float) * (size_t)(mmax + 1));
	int16_t *xq = malloc(sizeof(int16_t) * (size_t)(mmax + 2));
	/* the integers pair-major (wzc_igemm) or in the dot form */
	int dot = wzc_igemm_dot_preferred(), kpad = wzc_igemm_dot_pad((mmax + 1) / 2);
	uint32_t *xp = malloc(sizeof(uint32_t) * (size_t)BLOCK *
			      (size_t)(dot ? kpad : (mmax + 1) / 2 + 1));
	int32_t *yc[2] = { malloc(sizeof(int32_t) * (size_t)BLOCK * lp->ldc[0]),
			   malloc(sizeof(int32_t) * (size_t)BLOCK * lp->ldc[1]) };
	/* per token of a group (one for wz, WZT_LANES for wzt, whose search
	 * runs a group's tokens side by side): digits of the coded components
	 * in list order, then the two flags; the standardized coefficients */
	int lanes = tp ? WZT_LANES : 1;
	uint32_t *dig = malloc(sizeof(uint32_t) * (size_t)(nc + 2) * lanes);
	float *z = malloc(sizeof(float) * (size_t)(nc + 1) * lanes);
	wzc_divisor *gM = malloc(sizeof(wzc_divisor) * (size_t)(lp->ngroups + 1));
	/* the level counts in coding order, and each one's place value in
	 * its group's mixed-radix number V (the product of the counts after
	 * it), so that V is a sum of independent products */
	uint64_t *nlev_o = malloc(sizeof(uint64_t) * (size_t)(lp->gstart[lp->ngroups] + 1));
	uint64_t *place = malloc(sizeof(uint64_t) * (size_t)(lp->gstart[lp->ngroups] + 1));
	uint64_t *gV = malloc(sizeof(uint64_t) * (size_t)(lp->ngroups + 1));
	/* the digits in coding order are the list's (as in every plan so far:
	 * latent, then position part), so a group's lie side by side */
	int in_order = 1;
	for (int i = 0; i < lp->gstart[lp->ngroups]; i++)
		in_order &= lp->order_c[i] == i;
	const int avx512 = wzc_wz_encode_avx512(), pack512 = avx512 && in_order;
	wzc_wzt_work *tw = tp ? wzc_wzt_work_new(tp, layer, 2) : NULL;
	int mc = lp->ncod[0] > lp->ncod[1] ? lp->ncod[0] : lp->ncod[1];
	overload_work ow = { malloc(sizeof(float) * (size_t)(mc + 1)),
			     malloc(sizeof(uint32_t) * 5 * (size_t)(mc + 1)),
			     malloc(sizeof(double) * 5 * (size_t)(mc + 1)) };
	uint32_t *kept = search ? malloc(sizeof(uint32_t) * SEARCH_KEEP * (size_t)(mc + 1)) : NULL;
	if (!xt || !col || !xq || !xp || !yc[0] || !yc[1] || !dig || !z || !gM || !nlev_o || !place || !gV ||
	    (tp && !tw) || !ow.zr || !ow.q || !ow.terms || (search && !kept)) {
		free(kept);
		free(ow.zr);
		free(ow.q);
		free(ow.terms);
		wzc_wzt_work_free(tw);
		free(xt);
		free(col);
		free(xq);
		free(xp);
		free(yc[0]);
		free(yc[1]);
		free(dig);
		free(z);
		free(gM);
		free(nlev_o);
		free(place);
		free(gV);
		/* the reference needs less memory */
		if (search)
			wzc_wzs_encode_layer_ref(plan, layer, n, latent, rope, records, record_bytes);
		else
			wzc_wz_encode_layer_trellis(plan, tp, layer, n, latent, rope, records,
						    record_bytes);
		return;
	}
	for (int g = 0; g < lp->ngroups; g++) {
		uint64_t M = 1;
		for (int i = lp->gstart[g]; i < lp->gstart[g + 1]; i++) {
			nlev_o[i] = lp->nlev[lp->order[i]];
			M *= nlev_o[i];
		}
		gM[g] = wzc_divisor_of(M);
		/* V < M, so no place value or partial sum wraps */
		uint64_t pv = 1;
		for (int i = lp->gstart[g + 1] - 1; i >= lp->gstart[g]; i--) {
			place[i] = pv;
			pv *= nlev_o[i];
		}
	}
	for (int t0 = 0; t0 < n; t0 += BLOCK) {
		int nb = n - t0 < BLOCK ? n - t0 : BLOCK;
		uint8_t code[2][BLOCK], flag[2][BLOCK];
		int ex[2][BLOCK];
		memset(code[1], 0, sizeof code[1]);
		memset(flag[1], 0, sizeof flag[1]);
		for (int p = 0; p < 2; p++) {
			int m = width[p];
			if (!m)
				continue;
			const float *x = src[p] + (size_t)t0 * m;
			float inv[BLOCK];
			wzc_wz_prepare_part(plan->scale_mult[p], parts[p], lp->nlev[R + P + p] == 2, m, nb, x,
				     !dot, avx512, xt, flag[p], code[p], inv);
			if (dot) {
				const float *mean = parts[p]->mean, *anchor = parts[p]->anchor;
				int kp = (int)lp->ldt[p];
				wzc_wz_quantize_rows(m, nb, x, mean, anchor, flag[p], inv, kp, xp, ex[p]);
				for (int t = 0; t < nb; t++)
					if (ex[p][t] < 0)
						wzc_wz_redo_row(m, x + (size_t)t * m, flag[p][t] ? anchor : mean,
							 inv[t], col, xq, xp + (size_t)t * kp, &ex[p][t]);
				if (lp->ncod[p])
					wzc_igemm_dot(nb, kp, lp->ncod[p], lp->bt_c[p], lp->ldt[p], xp,
						      (size_t)kp, yc[p], lp->ldc[p]);
				continue;
			}
			wzc_wz_quantize_inputs(m, xt, xp, ex[p]);
			for (int t = 0; t < nb; t++)
				if (ex[p][t] < 0)
					wzc_wz_redo_token(m, xt, t, col, xq, xp, &ex[p][t]);
			if (lp->ncod[p])
				wzc_igemm(nb, (m + 1) / 2, lp->ncod[p], lp->bp_c[p], lp->ldc[p], xp,
					  BLOCK, yc[p], lp->ldc[p]);
		}
		for (int g0 = 0; g0 < nb; g0 += lanes) {
			int ng = nb - g0 < lanes ? nb - g0 : lanes;
			const float *zg[WZT_LANES];
			uint32_t *dg[WZT_LANES];
			for (int l = 0; l < ng; l++) {
				int t = g0 + l;
				float *zt = z + (size_t)l * (nc + 1);
				uint32_t *dt = dig + (size_t)l * (nc + 2);
				zg[l] = zt;
				dg[l] = dt;
				/* The next block's token t towards the caches while
				 * this one is packed: the transposition reads 64 rows
				 * side by side, more streams than the hardware
				 * prefetcher follows. */
				if (t0 + BLOCK + t < n)
					for (int p = 0; p < 2; p++) {
						const char *row = (const char *)(src[p] +
										 (size_t)(t0 + BLOCK + t) * width[p]);
						for (size_t b = 0; b < sizeof(float) * (size_t)width[p]; b += 64)
							prefetch(row + b);
					}
				uint8_t *rec = records + (size_t)(t0 + t) * record_bytes;
				memset(rec, 0, record_bytes);
				rec[0] = code[0][t];
				if (P)
					rec[1] = code[1][t];
				const int sh = WZC_XQ_SHIFT + WZC_BQ_SHIFT;
				int outside[2] = { 0, 0 };
				outside[0] = standardize(lp->ncod[0], yc[0] + (size_t)t * lp->ldc[0],
							 ldexpf(1.0f, ex[0][t] - sh), lp->rsig_c,
							 lp->olo_c, lp->ohi_c, zt);
				if (P)
					outside[1] = standardize(lp->ncod[1], yc[1] + (size_t)t * lp->ldc[1],
								 ldexpf(1.0f, ex[1][t] - sh),
								 lp->rsig_c + lp->ncod[0],
								 lp->olo_c + lp->ncod[0],
								 lp->ohi_c + lp->ncod[0], zt + lp->ncod[0]);
				/* a part beyond its tables gets a larger scale code
				 * (the reference's rule, the same function); wzs
				 * searches the code by its error (step 6) */
				int known[2] = { 0, 0 }; /* the part's digits are in dt */
				for (int p = 0, j0 = 0; p < 2; j0 += lp->ncod[p], p++) {
					const float *mult = plan->scale_mult[p];
					int nc_p = lp->ncod[p], c0 = code[p][t], c = c0;
					if (outside[p]) {
						const uint32_t *q = NULL;
						c += wzc_wz_overload_raise_fast(lp, p, j0, nc_p, zt + j0, mult, c0,
									 &ow, &q);
						/* wz: the weighed candidate's digits are the
						 * part's (wzs searches on; wzt's trellis
						 * takes its components' own) */
						if (q && !search && !tp) {
							memcpy(dt + j0, q, sizeof(uint32_t) * (size_t)nc_p);
							known[p] = 1;
						}
					}
					if (search && c0 >= 1 && nc_p > 0) {
						search_ctx x = { lp, wzc_qbatch_slice(&lp->qb, j0, nc_p),
								 j0, nc_p, c0, zt + j0, mult, ow.zr, { NULL },
								 { 0 }, 0 };
						for (int i = 0; i < SEARCH_KEEP; i++)
							x.q[i] = kept + (size_t)i * (mc + 1);
						c = wzc_search_descent(c, &x, wzc_wz_search_cost);
						const uint32_t *q = wzc_wz_search_digits(&x, c);
						if (q) {
							memcpy(dt + j0, q, sizeof(uint32_t) * (size_t)nc_p);
							known[p] = 1;
						}
					}
					if (c == c0)
						continue;
					float r = mult[c0] / mult[c];
					for (int j = j0; j < j0 + nc_p; j++)
						zt[j] *= r;
					rec[p] = (uint8_t)c;
				}
				/* the digits of each part not known yet (a searched
				 * part, or a wz part that step 5 weighed, has them),
				 * unless every coded component of wzt is on the
				 * trellis */
				if (!tp || tp->layers[layer].nsteps < nc)
					for (int p = 0, j0 = 0; p < 2; j0 += lp->ncod[p], p++)
						if (!known[p] && lp->ncod[p]) {
							wzc_qbatch b = wzc_qbatch_slice(&lp->qb, j0, lp->ncod[p]);
							wzc_quantize_batch(&b, zt + j0, dt + j0);
						}
				dt[nc] = flag[0][t];
				dt[nc + 1] = flag[1][t];
			}
			if (tp)
				wzc_wzt_digits_lanes(tp, tw, lp, layer, ng, zg, dg);
			for (int l = 0; l < ng; l++) {
				const uint32_t *dt = dg[l];
				/* fields LSB first from the first byte after the scales */
				uint8_t *w = records + (size_t)(t0 + g0 + l) * record_bytes + plan->scale_bytes;
				u128 buf = 0;
				int nbits = 0;
				group_values(lp, pack512, dt, place, gV);
				for (int g = 0; g < lp->ngroups; g++) {
					uint64_t V = gV[g];
					int kb = lp->gbits[g];
					buf |= (u128)wzc_field_word(V, kb, &gM[g]) << nbits;
					nbits += kb;
					if (nbits >= 64) {
						store64(w, (uint64_t)buf);
						w += 8;
						buf >>= 64;
						nbits -= 64;
					}
				}
				for (; nbits > 0; nbits -= 8, buf >>= 8)
					*w++ = (uint8_t)buf;
			}
		}
	}
	free(xt);
	free(col);
	free(xq);
	free(xp);
	free(yc[0]);
	free(yc[1]);
	free(dig);
	free(z);
	free(gM);
	free(nlev_o);
	free(place);
	free(gV);
	free(ow.zr);
	free(ow.q);
	free(ow.terms);
	free(kept);
	wzc_wzt_work_free(tw);
}

void wzc_wz_encode_layer(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			 const float *rope, uint8_t *records, size_t record_bytes)
{
	encode_layer(plan, NULL, 0, layer, n, latent, rope, records, record_bytes);
}

void wzc_wzs_encode_layer(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			  const float *rope, uint8_t *records, size_t record_bytes)
{
	encode_layer(plan, NULL, 1, layer, n, latent, rope, records, record_bytes);
}

void wzc_wzt_encode_layer(const wzc_wz_plan *plan, const wzc_wzt_plan *tp, int layer, int n,
			  const float *latent, const float *rope, uint8_t *records,
			  size_t record_bytes)
{
	encode_layer(plan, tp, 0, layer, n, latent, rope, records, record_bytes);
}
