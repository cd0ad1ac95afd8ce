/* The fast wz encoder: the reference's arithmetic (codec/wz/wz_codec.c,
 * wzc_wz_encode_layer_ref) reorganized for speed, same bytes.  A block of
 * tokens is transposed so that the per-token sums (each still over the
 * values in order) run in vector lanes, one token per lane; the transform
 * is one integer matrix product restricted to the components with more
 * than one level; levels come from a grid, not a search; the groups'
 * fields go out through a bit buffer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/wz/wz_gemm.h"
#include "codec/wz/wz_plan.h"

typedef unsigned __int128 u128;

/* Vectorized at -O3; never contracted to fused multiply-adds (the sums of
 * squares decide the anchor flag and the scale code, and the reference
 * computes them with separate multiplies and adds). */
#if defined(__GNUC__) && !defined(__clang__)
#define WZ_HOT __attribute__((optimize("O3", "fp-contract=off")))
#if defined(__x86_64__) && defined(__GLIBC__)
#define WZ_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#else
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#define WZ_HOT
#endif
#ifndef WZ_CLONES
#define WZ_CLONES
#endif

#define BLOCK 64

/* x[t][i] (nb <= BLOCK tokens of m values) transposed into xt[i][t], the
 * lanes past nb zero, in tiles of 16 values x the block's tokens, which
 * stay in the first-level cache; and each lane's sums of squares about
 * the mean and the anchor, dm[t] and da[t], over its values in order from
 * 0 (the float difference, then its square and sum in double precision). */
WZ_HOT WZ_CLONES static void transpose_sums_portable(int m, int nb, const float *x,
						     const float *mean, const float *anchor,
						     float *xt /* OUT [m][BLOCK] */,
						     double *dm /* OUT [BLOCK] */,
						     double *da /* OUT [BLOCK] */)
{
	for (int i0 = 0; i0 < m; i0 += 16) {
		int ni = m - i0 < 16 ? m - i0 : 16;
		float tile[16][BLOCK];
		for (int t = 0; t < nb; t++) {
			const float *src = x + (size_t)t * m + i0;
			for (int i = 0; i < ni; i++)
				tile[i][t] = src[i];
		}
		for (int i = 0; i < ni; i++) {
			float *dst = xt + (size_t)(i0 + i) * BLOCK;
			for (int t = 0; t < nb; t++)
				dst[t] = tile[i][t];
			for (int t = nb; t < BLOCK; t++)
				dst[t] = 0.0f;
		}
	}
	for (int t = 0; t < BLOCK; t++)
		dm[t] = da[t] = 0;
	for (int i = 0; i < m; i++) {
		const float *row = xt + (size_t)i * BLOCK;
		float mi = mean[i], ai = anchor[i];
		for (int t = 0; t < BLOCK; t++) {
			double a = row[t] - mi, b = row[t] - ai;
			dm[t] += a * a;
			da[t] += b * b;
		}
	}
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WZ_ENCODE_512 1
/* The same with AVX-512: 16 tokens' rows of 16 values a tile, transposed
 * in registers (pairs of floats, then of doubles interleaved within each
 * 128-bit lane, then the lanes' 4 x 4 transpose in two shuffles), the
 * sums taken from the registers in the same pass, where the portable
 * loops' scalar stores took a quarter of prepare_part (perf,
 * bench/bench_codec wz-5.44 on an AVX-512 core). */
__attribute__((target("avx512f"))) static void transpose_sums_512(int m, int nb, const float *x,
							      const float *mean, const float *anchor,
							      float *xt /* OUT [m][BLOCK] */,
							      double *dm /* OUT [BLOCK] */,
							      double *da /* OUT [BLOCK] */)
{
	for (int tb = 0; tb < BLOCK; tb += 16) {
		__m512d sm[2] = { _mm512_setzero_pd(), _mm512_setzero_pd() };
		__m512d sa[2] = { _mm512_setzero_pd(), _mm512_setzero_pd() };
		for (int i0 = 0; i0 < m; i0 += 16) {
			int ni = m - i0 < 16 ? m - i0 : 16;
			__mmask16 lm = (__mmask16)(ni == 16 ? 0xFFFF : (1u << ni) - 1);
			__m512 r[16], a[16], b[16];
			for (int k = 0; k < 16; k++)
				r[k] = tb + k < nb ? _mm512_maskz_loadu_ps(lm, x + (size_t)(tb + k) * m + i0)
						   : _mm512_setzero_ps();
			/* a[k], a[k+1]: elements 4L, 4L+1 and 4L+2, 4L+3 of
			 * lane L, tokens k and k+1 interleaved */
			for (int k = 0; k < 16; k += 2) {
				a[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
				a[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
			}
			/* b[4g+e]: lane L holds element 4L+e of tokens 4g..4g+3 */
			for (int g = 0; g < 16; g += 4) {
				__m512d p0 = _mm512_castps_pd(a[g]), p1 = _mm512_castps_pd(a[g + 1]);
				__m512d p2 = _mm512_castps_pd(a[g + 2]), p3 = _mm512_castps_pd(a[g + 3]);
				b[g] = _mm512_castpd_ps(_mm512_unpacklo_pd(p0, p2));
				b[g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(p0, p2));
				b[g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(p1, p3));
				b[g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(p1, p3));
			}
			/* value 4L+e of the 16 tokens: lane L of b[e], b[4+e],
			 * b[8+e], b[12+e] */
			for (int e = 0; e < 4; e++) {
				__m512 c0 = _mm512_shuffle_f32x4(b[e], b[4 + e], 0x44);
				__m512 c1 = _mm512_shuffle_f32x4(b[e], b[4 + e], 0xEE);
				__m512 c2 = _mm512_shuffle_f32x4(b[8 + e], b[12 + e], 0x44);
				__m512 c3 = _mm512_shuffle_f32x4(b[8 + e], b[12 + e], 0xEE);
				r[e] = _mm512_shuffle_f32x4(c0, c2, 0x88);
				r[4 + e] = _mm512_shuffle_f32x4(c0, c2, 0xDD);
				r[8 + e] = _mm512_shuffle_f32x4(c1, c3, 0x88);
				r[12 + e] = _mm512_shuffle_f32x4(c1, c3, 0xDD);
			}
			/* the sums of squares about the mean and the anchor,
			 * value by value in order as the portable loop's */
			for (int i = 0; i < ni; i++) {
				_mm512_storeu_ps(xt + (size_t)(i0 + i) * BLOCK + tb, r[i]);
				__m512 dv = _mm512_sub_ps(r[i], _mm512_set1_ps(mean[i0 + i]));
				__m512 av = _mm512_sub_ps(r[i], _mm512_set1_ps(anchor[i0 + i]));
				__m512d d0 = _mm512_cvtps_pd(_mm512_castps512_ps256(dv));
				__m512d d1 = _mm512_cvtps_pd(_mm256_castpd_ps(
					_mm512_extractf64x4_pd(_mm512_castps_pd(dv), 1)));
				__m512d a0 = _mm512_cvtps_pd(_mm512_castps512_ps256(av));
				__m512d a1 = _mm512_cvtps_pd(_mm256_castpd_ps(
					_mm512_extractf64x4_pd(_mm512_castps_pd(av), 1)));
				sm[0] = _mm512_add_pd(sm[0], _mm512_mul_pd(d0, d0));
				sm[1] = _mm512_add_pd(sm[1], _mm512_mul_pd(d1, d1));
				sa[0] = _mm512_add_pd(sa[0], _mm512_mul_pd(a0, a0));
				sa[1] = _mm512_add_pd(sa[1], _mm512_mul_pd(a1, a1));
			}
		}
		_mm512_storeu_pd(dm + tb, sm[0]);
		_mm512_storeu_pd(dm + tb + 8, sm[1]);
		_mm512_storeu_pd(da + tb, sa[0]);
		_mm512_storeu_pd(da + tb + 8, sa[1]);
	}
}
#endif

/* 1 when the encoder takes its AVX-512 paths (the block's transposition,
 * the groups' values): the CPU runs them and the integer kernel is not
 * forced to "portable", under which a test runs the portable loops on any
 * CPU.  Decided once per layer encoded, not per block or token. */
static int encode_avx512(void)
{
#ifdef WZ_ENCODE_512
	return wzc_igemm_simd_allowed() && __builtin_cpu_supports("avx512f");
#else
	return 0;
#endif
}

/* The transposition and the sums of squares, the same floats and doubles
 * on either path. */
static void transpose_sums(int avx512, int m, int nb, const float *x, const float *mean,
			   const float *anchor, float *xt /* OUT [m][BLOCK] */,
			   double *dm /* OUT [BLOCK] */, double *da /* OUT [BLOCK] */)
{
#ifdef WZ_ENCODE_512
	if (avx512) {
		transpose_sums_512(m, nb, x, mean, anchor, xt, dm, da);
		return;
	}
#else
	(void)avx512;
#endif
	transpose_sums_portable(m, nb, x, mean, anchor, xt, dm, da);
}

/* Anchor flags, scale codes and the reciprocal scales of nb <= BLOCK
 * tokens x[t][i]; with `scaled`, their centred, scaled values written
 * transposed, xt[i][t] (lanes past nb are zero), else xt is scratch;
 * avx512 as encode_avx512 says. */
WZ_HOT WZ_CLONES static void prepare_part(const float *scale_mult, const wzc_part_profile *pp,
					  int can_flag, int m, int nb, const float *x, int scaled,
					  int avx512,
					  float *xt /* OUT [m][BLOCK] */,
					  uint8_t *flag /* OUT [BLOCK] */,
					  uint8_t *code /* OUT [BLOCK] */,
					  float *inv /* OUT [BLOCK] */)
{
	const float *mean = pp->mean, *anchor = pp->anchor;
	double dm[BLOCK], da[BLOCK];
	int use_anchor[BLOCK];
	transpose_sums(avx512, m, nb, x, mean, anchor, xt, dm, da);
	for (int t = 0; t < BLOCK; t++) {
		use_anchor[t] = can_flag && da[t] < dm[t];
		/* The reference's sum of squares about the chosen base is the
		 * same sum over the same values in the same order as dm or da:
		 * the same double, without a third pass. */
		double ss = use_anchor[t] ? da[t] : dm[t];
		uint8_t cd = wzc_scale_code(sqrt(ss / m), pp->scale_ref);
		float s = scale_mult[cd] * pp->scale_ref;
		inv[t] = s > 0 ? 1.0f / s : 0;
		flag[t] = (uint8_t)use_anchor[t];
		code[t] = cd;
	}
	if (!scaled)
		return;
	for (int i = 0; i < m; i++) {
		float *row = xt + (size_t)i * BLOCK;
		float mi = mean[i], ai = anchor[i];
		for (int t = 0; t < BLOCK; t++) {
			float c = row[t] - (use_anchor[t] ? ai : mi);
			row[t] = c * inv[t];
		}
	}
}

/* The block's scaled values xt[i][t] as 16-bit integers in pairs over i,
 * xp[q][t] (wz_gemm.h), and each token's exponent e[t].  The lanes compute
 * e = 0, which is the reference's whenever every value is within range and
 * the float sum of the squared scaled values v is below 2^31 for m <= 4096:
 * then sqrt(sum xq^2) <= sqrt(sum v^2) + sqrt(m) / 2 < 2^16.  Any other
 * token (e[t] = -1 here) is redone by the reference, wzc_input_q. */
WZ_HOT WZ_CLONES static void quantize_inputs(int m, const float *xt, uint32_t *xp /* OUT */,
					     int *e /* OUT [BLOCK] */)
{
	static const float zero[BLOCK];
	const float mult = (float)(1 << WZC_XQ_SHIFT), lim = WZC_XQ_MAX + 0.5f;
	/* adding and subtracting 1.5 * 2^23 rounds to an integer, to nearest
	 * even, as rintf does, for magnitudes below 2^22 */
	const float magic = 12582912.0f;
	float s2[BLOCK];
	int32_t bad[BLOCK];
	for (int t = 0; t < BLOCK; t++) {
		s2[t] = 0;
		bad[t] = 0;
	}
	for (int q = 0; q < (m + 1) / 2; q++) {
		const float *r0 = xt + (size_t)2 * q * BLOCK;
		const float *r1 = 2 * q + 1 < m ? r0 + BLOCK : zero;
		uint32_t *dst = xp + (size_t)q * BLOCK;
		for (int t = 0; t < BLOCK; t++) {
			float v0 = r0[t] * mult, v1 = r1[t] * mult;
			int32_t in0 = fabsf(v0) < lim, in1 = fabsf(v1) < lim;
			bad[t] |= (in0 & in1) ^ 1;
			float c0 = in0 ? v0 : 0.0f, c1 = in1 ? v1 : 0.0f;
			s2[t] += c0 * c0 + c1 * c1;
			int32_t q0 = (int32_t)((c0 + magic) - magic);
			int32_t q1 = (int32_t)((c1 + magic) - magic);
			dst[t] = (uint32_t)(uint16_t)q0 | (uint32_t)q1 << 16;
		}
	}
	for (int t = 0; t < BLOCK; t++)
		e[t] = bad[t] || !(s2[t] < 2147483648.0f) || m > 4096 ? -1 : 0;
}

/* The same integers in the dot form (wzc_igemm_dot), a token a row, from
 * the untransposed input x[t][i]: xd[t][q] (kpad pairs a row, zero past
 * the part's width) with the values centred on the base the flag chose
 * and scaled by inv[t], the reference's single-precision operations.
 * e[t] = 0 when every value is within range and the exact sum of the
 * squared integers is at most WZC_XQ_SUMSQ_MAX, which is the reference's
 * test at e = 0; any other token (e[t] = -1) is redone by the reference. */
WZ_HOT WZ_CLONES static void quantize_rows(int m, int nb, const float *x, const float *mean,
					   const float *anchor, const uint8_t *flag, const float *inv,
					   int kpad, uint32_t *xd /* OUT [nb][kpad] */,
					   int *e /* OUT [nb] */)
{
	const float mult = (float)(1 << WZC_XQ_SHIFT), lim = WZC_XQ_MAX + 0.5f;
	const float magic = 12582912.0f; /* as in quantize_inputs */
	int half = m / 2;
	for (int t = 0; t < nb; t++) {
		const float *row = x + (size_t)t * m, *base = flag[t] ? anchor : mean;
		const float s = inv[t];
		uint32_t *dst = xd + (size_t)t * kpad;
		int32_t bad = 0;
		uint64_t ss = 0;
		for (int q = 0; q < half; q++) {
			float v0 = ((row[2 * q] - base[2 * q]) * s) * mult;
			float v1 = ((row[2 * q + 1] - base[2 * q + 1]) * s) * mult;
			int32_t in0 = fabsf(v0) < lim, in1 = fabsf(v1) < lim;
			bad |= (in0 & in1) ^ 1;
			float c0 = in0 ? v0 : 0.0f, c1 = in1 ? v1 : 0.0f;
			int32_t q0 = (int32_t)((c0 + magic) - magic);
			int32_t q1 = (int32_t)((c1 + magic) - magic);
			/* each square is below 2^30 */
			ss += (uint32_t)(q0 * q0 + q1 * q1);
			dst[q] = (uint32_t)(uint16_t)q0 | (uint32_t)q1 << 16;
		}
		if (m % 2) {
			float v0 = ((row[m - 1] - base[m - 1]) * s) * mult;
			int32_t in0 = fabsf(v0) < lim;
			bad |= in0 ^ 1;
			int32_t q0 = (int32_t)(((in0 ? v0 : 0.0f) + magic) - magic);
			ss += (uint32_t)(q0 * q0);
			dst[half] = (uint32_t)(uint16_t)q0;
		}
		for (int q = (m + 1) / 2; q < kpad; q++)
			dst[q] = 0;
		e[t] = bad || ss > WZC_XQ_SUMSQ_MAX ? -1 : 0;
	}
}

/* The reference's exponent and dot-form integers for one token row. */
static void redo_row(int m, const float *row, const float *base, float s, float *col /* [m] */,
		     int16_t *xq /* [m + 1] */, uint32_t *dst, int *e)
{
	for (int i = 0; i < m; i++)
		col[i] = (row[i] - base[i]) * s;
	*e = wzc_input_q(m, col, xq);
	xq[m] = 0;
	for (int q = 0; q < (m + 1) / 2; q++)
		dst[q] = wzc_pair16(xq[2 * q], xq[2 * q + 1]);
}

/* The reference's exponent and integers for token t of the block. */
static void redo_token(int m, const float *xt, int t, float *col /* [m] */,
		       int16_t *xq /* [m + 1] */, uint32_t *xp, int *e)
{
	for (int i = 0; i < m; i++)
		col[i] = xt[(size_t)i * BLOCK + t];
	*e = wzc_input_q(m, col, xq);
	xq[m] = 0;
	for (int q = 0; q < (m + 1) / 2; q++)
		xp[(size_t)q * BLOCK + t] = wzc_pair16(xq[2 * q], xq[2 * q + 1]);
}

/* Scratch of overload_raise_fast for a part of up to m coded components. */
typedef struct {
	float *zr;      /* [m] */
	uint32_t *q;    /* [5][m]: each candidate's digits */
	double *terms;  /* [5][m] */
} overload_work;

/* The clipping cost (docs/wz-format.md, "Arithmetic" step 5): the sum in
 * component order of the terms ew_j x_j^2, each as the reference computes
 * it, of the components past their outermost levels.  Every other term is
 * +0, and a sum from +0 is never -0 (a zero sum rounds to +0), so adding
 * a zero leaves it as it was: the reference's sum.  The components past
 * are found sixteen at a time as a bit mask (a vector compare), and only
 * theirs are computed: a part that passes the outer-bound test has a few
 * (4 on average on the bench's mla-b window, of 512), where computing all
 * took 4% of wz's encode. */
WZ_HOT WZ_CLONES static double clip_sum(int nc, const float *z, const float *lmin,
				       const float *lmax, const double *ew)
{
	double clip = 0;
	for (int b = 0; b < nc; b += 16) {
		int e = nc - b < 16 ? nc - b : 16;
		uint32_t m = 0;
		for (int k = 0; k < e; k++)
			m |= (uint32_t)((z[b + k] > lmax[b + k]) | (z[b + k] < lmin[b + k])) << k;
		while (m) {
			int j = b + __builtin_ctz(m);
			m &= m - 1;
			clip += wzc_overload_clip_term(z[j], lmin[j], lmax[j], ew[j]);
		}
	}
	return clip;
}

/* The products z_j r of one candidate's scale (step 5), as the reference
 * rounds them. */
WZ_HOT WZ_CLONES static void scale_part(int nc, const float *z, float r, float *zr)
{
	for (int j = 0; j < nc; j++)
		zr[j] = z[j] * r;
}

/* wzc_overload_raise's d for a part that lies past a table's outer bound
 * (the caller's standardize), with the same doubles, so the same choice,
 * and in *digits the chosen candidate's digits (NULL where none was
 * weighed):
 * - the clipping cost by clip_sum;
 * - each candidate's E(d): the products and their digits a vector of
 *   components at a time (wzc_quantize_batch gives wzc_quantize's
 *   digits), the terms ew_j e_j^2 apart, then the candidates' sums side
 *   by side in one pass over the components, each in component order.
 * A raise costed five serial sums of quantizations, each a dependent
 * chain, where now the chains run together (bench/bench_codec: wz-5.44's
 * encode spent 12% of its time in them on the mla-b window, where about
 * one part in 28 passes the clipping test). */
static int overload_raise_fast(const layer_plan *lp, int part, int j0, int nc, const float *z,
			       const float *mult, int c0, overload_work *ow, const uint32_t **digits)
{
	*digits = NULL;
	if (c0 <= 0 || nc <= 0)
		return 0;
	double *t = ow->terms;
	double clip = clip_sum(nc, z, lp->lmin_c + j0, lp->lmax_c + j0, lp->ew_c + j0);
	if (!(clip > lp->dexp[part]))
		return 0;
	int D = wzc_overload_span(lp, j0, nc, z, mult, c0);
	if (D == 0)
		return 0;
	int d[5], n = wzc_overload_candidates(D, d);
	wzc_qbatch b = wzc_qbatch_slice(&lp->qb, j0, nc);
	for (int i = 0; i < n; i++) {
		float r = mult[c0] / mult[c0 + d[i]];
		double *ti = t + (size_t)i * nc;
		uint32_t *qi = ow->q + (size_t)i * nc;
		scale_part(nc, z, r, ow->zr);
		wzc_quantize_batch(&b, ow->zr, qi);
		for (int j = 0; j < nc; j++)
			ti[j] = wzc_overload_error_term(ow->zr[j], lp->lev_c[j0 + j][qi[j]],
							lp->ew_c[j0 + j]);
	}
	double sum[5] = { 0, 0, 0, 0, 0 };
	for (int j = 0; j < nc; j++)
		for (int i = 0; i < n; i++)
			sum[i] += t[(size_t)i * nc + j];
	int ib = 0; /* d[0] is 0: the code as it was */
	double s0 = mult[c0], emin = s0 * s0 * sum[0];
	for (int i = 1; i < n; i++) {
		double s = mult[c0 + d[i]], e = s * s * sum[i];
		if (e < emin) {
			emin = e;
			ib = i;
		}
	}
	/* the chosen candidate's products are the caller's (the same
	 * quotient r times z), so their digits are its digits */
	*digits = ow->q + (size_t)ib * nc;
	return d[ib];
}

/* Step 6's sum (wzc_search_error) of the terms at one code, the
 * products zr and their digits q given: eight partial sums side by side,
 * as the rule defines them, which the compiler keeps in vector lanes. */
WZ_HOT WZ_CLONES static double search_terms(int nc, const float *zr, const uint32_t *q,
					    const float *const *lev, const double *ew)
{
	double s8[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
	int j = 0;
	for (; j + 8 <= nc; j += 8)
		for (int k = 0; k < 8; k++)
			s8[k] += wzc_overload_error_term(zr[j + k], lev[j + k][q[j + k]], ew[j + k]);
	for (int k = 0; j + k < nc; k++)
		s8[k] += wzc_overload_error_term(zr[j + k], lev[j + k][q[j + k]], ew[j + k]);
	return wzc_search_sum8(s8);
}

/* Step 6's cost at one code for wzc_search_descent, the products and
 * digits a vector at a time (wzc_quantize_batch gives wzc_quantize's
 * digits): the reference's doubles, so the same descent.  The digits of
 * the last SEARCH_KEEP codes tried are kept, and the code the descent
 * returns is among them, so its digits are the record's without
 * quantizing the part again (wzs-5.44's encode 0.086 to 0.091 GB/s,
 * bench/bench_codec). */
#define SEARCH_KEEP 4
typedef struct {
	const layer_plan *lp;
	wzc_qbatch b;        /* the part's slice of the plan's grids */
	int j0, nc, c0;
	const float *z, *mult;
	float *zr;           /* scratch [nc] */
	uint32_t *q[SEARCH_KEEP]; /* [nc] each: the digits of the codes tried */
	int code[SEARCH_KEEP], tried;
} search_ctx;

static double search_cost(void *ctx, int code)
{
	search_ctx *x = (search_ctx *)ctx;
	float r = x->mult[x->c0] / x->mult[code];
	int slot = x->tried++ % SEARCH_KEEP;
	uint32_t *q = x->q[slot];
	x->code[slot] = code;
	scale_part(x->nc, x->z, r, x->zr);
	wzc_quantize_batch(&x->b, x->zr, q);
	double s = x->mult[code];
	return s * s * search_terms(x->nc, x->zr, q, x->lp->lev_c + x->j0, x->lp->ew_c + x->j0);
}

/* The kept digits of code c, newest first, or NULL when they are gone
 * (never, by the descent's order: it returns the first code tried after
 * two more, one of its neighbours after at most two more, or one of the
 * last two). */
static const uint32_t *search_digits(const search_ctx *x, int c)
{
	for (int i = 1; i <= SEARCH_KEEP && i <= x->tried; i++) {
		int slot = (x->tried - i) % SEARCH_KEEP;
		if (x->code[slot] == c)
			return x->q[slot];
	}
	return NULL;
}

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

/* pack512: encode_avx512 and the coding order is the list's. */
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
	const int avx512 = encode_avx512(), pack512 = avx512 && in_order;
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
			prepare_part(plan->scale_mult[p], parts[p], lp->nlev[R + P + p] == 2, m, nb, x,
				     !dot, avx512, xt, flag[p], code[p], inv);
			if (dot) {
				const float *mean = parts[p]->mean, *anchor = parts[p]->anchor;
				int kp = (int)lp->ldt[p];
				quantize_rows(m, nb, x, mean, anchor, flag[p], inv, kp, xp, ex[p]);
				for (int t = 0; t < nb; t++)
					if (ex[p][t] < 0)
						redo_row(m, x + (size_t)t * m, flag[p][t] ? anchor : mean,
							 inv[t], col, xq, xp + (size_t)t * kp, &ex[p][t]);
				if (lp->ncod[p])
					wzc_igemm_dot(nb, kp, lp->ncod[p], lp->bt_c[p], lp->ldt[p], xp,
						      (size_t)kp, yc[p], lp->ldc[p]);
				continue;
			}
			quantize_inputs(m, xt, xp, ex[p]);
			for (int t = 0; t < nb; t++)
				if (ex[p][t] < 0)
					redo_token(m, xt, t, col, xq, xp, &ex[p][t]);
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
						c += overload_raise_fast(lp, p, j0, nc_p, zt + j0, mult, c0,
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
						c = wzc_search_descent(c, &x, search_cost);
						const uint32_t *q = search_digits(&x, c);
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
