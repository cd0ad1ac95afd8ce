/* The wz transforms' matrix products: a scalar reference and an AVX-512
 * kernel (8 tokens x 48 columns of accumulators in registers, the inner
 * index in order), chosen at run time; and the quantizer's grids. */
#include "codec/wz_gemm.h"

#include <math.h>
#include <stdlib.h>

/* Multiply, then add: contracting the two into one fused multiply-add would
 * round differently and change the written levels. */
#if defined(__clang__)
#pragma clang fp contract(off)
#define WZ_NOCONTRACT
#elif defined(__GNUC__)
#define WZ_NOCONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define WZ_NOCONTRACT
#endif

WZ_NOCONTRACT void wzc_gemm_ref(int ntok, int kdim, int ncol, const float *B, size_t ldb,
				const float *X, size_t xst, size_t xsr, float *Y, size_t ldy)
{
	for (int t = 0; t < ntok; t++)
		for (int c = 0; c < ncol; c++)
			Y[(size_t)t * ldy + c] = 0;
	for (int r = 0; r < kdim; r++) {
		const float *br = B + (size_t)r * ldb;
		for (int t = 0; t < ntok; t++) {
			float xr = X[(size_t)t * xst + (size_t)r * xsr];
			float *yt = Y + (size_t)t * ldy;
			for (int c = 0; c < ncol; c++) {
				float prod = xr * br[c];
				yt[c] = yt[c] + prod;
			}
		}
	}
}

/* Without AVX-512: the reference's loops, vectorized by the compiler
 * (-O3, an AVX2 clone on x86-64), the same operations in the same order. */
#if defined(__GNUC__) && !defined(__clang__)
#define WZ_PORTABLE __attribute__((optimize("O3", "fp-contract=off")))
#if defined(__x86_64__) && defined(__GLIBC__)
#define WZ_PORTABLE_CLONES __attribute__((target_clones("avx2", "default")))
#endif
#else
#define WZ_PORTABLE
#endif
#ifndef WZ_PORTABLE_CLONES
#define WZ_PORTABLE_CLONES
#endif

WZ_PORTABLE WZ_PORTABLE_CLONES static void gemm_portable(int ntok, int kdim, int ncol,
							 const float *B, size_t ldb,
							 const float *X, size_t xst, size_t xsr,
							 float *Y, size_t ldy)
{
	for (int t = 0; t < ntok; t++)
		for (int c = 0; c < ncol; c++)
			Y[(size_t)t * ldy + c] = 0;
	for (int r = 0; r < kdim; r++) {
		const float *br = B + (size_t)r * ldb;
		for (int t = 0; t < ntok; t++) {
			float xr = X[(size_t)t * xst + (size_t)r * xsr];
			float *yt = Y + (size_t)t * ldy;
			for (int c = 0; c < ncol; c++) {
				float prod = xr * br[c];
				yt[c] = yt[c] + prod;
			}
		}
	}
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(WZ_NO_SIMD)
#include <immintrin.h>
#define WZ_HAVE_AVX512 1
#if defined(__clang__)
#define WZ_AVX512 __attribute__((target("avx512f")))
#else
#define WZ_AVX512 __attribute__((target("avx512f"), optimize("O3", "fp-contract=off")))
#endif

/* nt tokens x nv vectors of 16 columns; mask for the last vector. */
static inline __attribute__((always_inline)) WZ_AVX512 void
tile(int nt, int nv, int kdim, const float *B, size_t ldb, const float *X, size_t xst, size_t xsr,
     float *Y, size_t ldy, __mmask16 last)
{
	__m512 acc[8][3];
	for (int t = 0; t < nt; t++)
		for (int v = 0; v < nv; v++)
			acc[t][v] = _mm512_setzero_ps();
	for (int r = 0; r < kdim; r++) {
		const float *br = B + (size_t)r * ldb;
		__m512 b[3];
		for (int v = 0; v < nv; v++)
			b[v] = v == nv - 1 ? _mm512_maskz_loadu_ps(last, br + 16 * v)
					   : _mm512_loadu_ps(br + 16 * v);
		for (int t = 0; t < nt; t++) {
			__m512 x = _mm512_set1_ps(X[(size_t)t * xst + (size_t)r * xsr]);
			for (int v = 0; v < nv; v++)
				acc[t][v] = _mm512_add_ps(acc[t][v], _mm512_mul_ps(x, b[v]));
		}
	}
	for (int t = 0; t < nt; t++)
		for (int v = 0; v < nv; v++) {
			float *y = Y + (size_t)t * ldy + 16 * v;
			if (v == nv - 1)
				_mm512_mask_storeu_ps(y, last, acc[t][v]);
			else
				_mm512_storeu_ps(y, acc[t][v]);
		}
}

#define TILE_NT(nt)                                                                         \
	do {                                                                                \
		if (nv == 3)                                                                \
			tile(nt, 3, kdim, b, ldb, x, xst, xsr, y, ldy, last);                    \
		else if (nv == 2)                                                           \
			tile(nt, 2, kdim, b, ldb, x, xst, xsr, y, ldy, last);                    \
		else                                                                        \
			tile(nt, 1, kdim, b, ldb, x, xst, xsr, y, ldy, last);                    \
	} while (0)

static WZ_AVX512 void gemm_avx512(int ntok, int kdim, int ncol, const float *B, size_t ldb,
				  const float *X, size_t xst, size_t xsr, float *Y, size_t ldy)
{
	for (int c0 = 0; c0 < ncol; c0 += 48) {
		int nc = ncol - c0 < 48 ? ncol - c0 : 48;
		int nv = (nc + 15) / 16, rem = nc - 16 * (nv - 1);
		__mmask16 last = (__mmask16)((1u << rem) - 1);
		const float *b = B + c0;
		for (int t0 = 0; t0 < ntok; t0 += 8) {
			const float *x = X + (size_t)t0 * xst;
			float *y = Y + (size_t)t0 * ldy + c0;
			switch (ntok - t0 < 8 ? ntok - t0 : 8) {
			case 8: TILE_NT(8); break;
			case 7: TILE_NT(7); break;
			case 6: TILE_NT(6); break;
			case 5: TILE_NT(5); break;
			case 4: TILE_NT(4); break;
			case 3: TILE_NT(3); break;
			case 2: TILE_NT(2); break;
			default: TILE_NT(1); break;
			}
		}
	}
}

/* 16 components per step: the cell's start and two comparisons by
 * gathers; lanes whose table has no exact grid take the binary search. */
static WZ_AVX512 void quantize_batch_avx512(const wzc_qbatch *b, const float *z, uint32_t *digit)
{
	const int *starts = (const int *)b->starts;
	const __m512i one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
	for (int j0 = 0; j0 < b->n; j0 += 16) {
		int nl = b->n - j0 < 16 ? b->n - j0 : 16;
		__mmask16 m = (__mmask16)((1u << nl) - 1);
		__m512 zv = _mm512_maskz_loadu_ps(m, z + j0);
		/* wzc_qlut_cell, lane by lane */
		__m512 f = _mm512_mul_ps(_mm512_sub_ps(zv, _mm512_maskz_loadu_ps(m, b->t0 + j0)),
					 _mm512_maskz_loadu_ps(m, b->inv_w + j0));
		f = _mm512_max_ps(f, _mm512_setzero_ps()); /* NaN gives 0 */
		f = _mm512_min_ps(f, _mm512_maskz_loadu_ps(m, b->gmax + j0));
		__m512i cell = _mm512_add_epi32(_mm512_cvttps_epi32(f),
						_mm512_maskz_loadu_epi32(m, b->start_off + j0));
		__m512i s = _mm512_mask_i32gather_epi32(zero, m, cell, starts, 4);
		__m512i n = _mm512_maskz_loadu_epi32(m, b->nthr + j0);
		__m512i toff = _mm512_maskz_loadu_epi32(m, b->thr_off + j0);
		__m512i s1 = _mm512_add_epi32(s, one);
		__mmask16 in0 = _mm512_mask_cmplt_epi32_mask(m, s, n);
		__mmask16 in1 = _mm512_mask_cmplt_epi32_mask(m, s1, n);
		__m512 t0 = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), in0, _mm512_add_epi32(toff, s),
						     b->thr_base, 4);
		__m512 t1 = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), in1, _mm512_add_epi32(toff, s1),
						     b->thr_base, 4);
		s = _mm512_mask_add_epi32(s, _mm512_mask_cmp_ps_mask(in0, t0, zv, _CMP_LT_OQ), s, one);
		s = _mm512_mask_add_epi32(s, _mm512_mask_cmp_ps_mask(in1, t1, zv, _CMP_LT_OQ), s, one);
		_mm512_mask_storeu_epi32(digit + j0, m, s);
		unsigned bad = (unsigned)_mm512_mask_cmpeq_epi32_mask(
			m, _mm512_maskz_loadu_epi32(m, b->exact + j0), zero);
		while (bad) {
			int l = __builtin_ctz(bad);
			bad &= bad - 1;
			const wzc_qlut *q = b->q[j0 + l];
			digit[j0 + l] = wzc_quantize_ref(q->thr, q->nthr, z[j0 + l]);
		}
	}
}
#endif

static int kernel_choice = -1; /* 0 scalar, 1 avx512f */

static int choose(void)
{
	if (kernel_choice < 0) {
		int k = 0;
#ifdef WZ_HAVE_AVX512
		__builtin_cpu_init();
		k = __builtin_cpu_supports("avx512f") ? 1 : 0;
#endif
		kernel_choice = k;
	}
	return kernel_choice;
}

const char *wzc_gemm_kernel(void)
{
	return choose() ? "avx512f" : "portable";
}

void wzc_gemm(int ntok, int kdim, int ncol, const float *B, size_t ldb, const float *X,
	      size_t xst, size_t xsr, float *Y, size_t ldy)
{
#ifdef WZ_HAVE_AVX512
	if (choose()) {
		gemm_avx512(ntok, kdim, ncol, B, ldb, X, xst, xsr, Y, ldy);
		return;
	}
#endif
	gemm_portable(ntok, kdim, ncol, B, ldb, X, xst, xsr, Y, ldy);
}

void wzc_quantize_batch_ref(const wzc_qbatch *b, const float *z, uint32_t *digit)
{
	for (int j = 0; j < b->n; j++)
		digit[j] = wzc_quantize(b->q[j], z[j]);
}

void wzc_quantize_batch(const wzc_qbatch *b, const float *z, uint32_t *digit)
{
#ifdef WZ_HAVE_AVX512
	if (choose()) {
		quantize_batch_avx512(b, z, digit);
		return;
	}
#endif
	wzc_quantize_batch_ref(b, z, digit);
}

int wzc_qlut_init(wzc_qlut *q, const float *thr, uint32_t nthr)
{
	q->thr = thr;
	q->nthr = nthr;
	q->start = NULL;
	q->exact = 0;
	float range = thr[nthr - 1] - thr[0];
	/* Enough cells that none holds more than two thresholds, within a cap
	 * (a table with three equal thresholds keeps the binary search). */
	for (int G = 2 * (int)nthr + 2;; G *= 2) {
		uint32_t *start = calloc((size_t)G + 1, sizeof *start);
		if (!start) {
			wzc_qlut_free(q);
			return -1;
		}
		q->t0 = thr[0];
		q->inv_w = range > 0 && isfinite((G - 1) / range) ? (float)((G - 1) / range) : 1.0f;
		q->G = G;
		/* count per cell, then the counts of the cells below */
		for (uint32_t i = 0; i < nthr; i++)
			start[wzc_qlut_cell(q->t0, q->inv_w, G, thr[i]) + 1]++;
		uint32_t most = 0;
		for (int c = 1; c <= G; c++) {
			most = start[c] > most ? start[c] : most;
			start[c] += start[c - 1];
		}
		free(q->start);
		q->start = start;
		q->exact = most <= 2;
		if (q->exact || G > 8 * (int)nthr + 4096)
			return 0;
	}
}

void wzc_qlut_free(wzc_qlut *q)
{
	free(q->start);
	q->start = NULL;
}
