/* The fast wz encoder's block of tokens made ready for the transform
 * (wz_encode_internal.h): transposed with each token's sums of squares
 * (portable and AVX-512), anchor flags, scale codes and reciprocal scales,
 * the scaled values as 16-bit integers pair-major or in the dot form, and
 * the reference's integers for a token the lanes leave out. */
#include <math.h>
#include <string.h>

#include "codec/profile/scale_code.h"
#include "codec/wz/wz_encode_internal.h"

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

#ifdef WZ_ENCODE_512
/* The same with AVX-512: 16 tokens' rows of 16 values a tile, transposed
 * in registers (pairs of floats, then of doubles interleaved within each
 * 128-bit lane, then the lanes' 4 x 4 transpose in two shuffles), the
 * sums taken from the registers in the same pass, where the portable
 * loops' scalar stores took a quarter of wzc_wz_prepare_part (perf,
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
int wzc_wz_encode_avx512(void)
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
 * avx512 as wzc_wz_encode_avx512 says. */
WZ_HOT WZ_CLONES void wzc_wz_prepare_part(const float *scale_mult, const wzc_part_profile *pp,
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
WZ_HOT WZ_CLONES void wzc_wz_quantize_inputs(int m, const float *xt, uint32_t *xp /* OUT */,
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
WZ_HOT WZ_CLONES void wzc_wz_quantize_rows(int m, int nb, const float *x, const float *mean,
					   const float *anchor, const uint8_t *flag, const float *inv,
					   int kpad, uint32_t *xd /* OUT [nb][kpad] */,
					   int *e /* OUT [nb] */)
{
	const float mult = (float)(1 << WZC_XQ_SHIFT), lim = WZC_XQ_MAX + 0.5f;
	const float magic = 12582912.0f; /* as in wzc_wz_quantize_inputs */
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
void wzc_wz_redo_row(int m, const float *row, const float *base, float s, float *col /* [m] */,
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
void wzc_wz_redo_token(int m, const float *xt, int t, float *col /* [m] */,
		       int16_t *xq /* [m + 1] */, uint32_t *xp, int *e)
{
	for (int i = 0; i < m; i++)
		col[i] = xt[(size_t)i * BLOCK + t];
	*e = wzc_input_q(m, col, xq);
	xq[m] = 0;
	for (int q = 0; q < (m + 1) / 2; q++)
		xp[(size_t)q * BLOCK + t] = wzc_pair16(xq[2 * q], xq[2 * q + 1]);
}
