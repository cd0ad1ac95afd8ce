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

/* 16 components per step: the cell's start and two steps by gathers, the
 * check of every lane, and the scalar search for any lane that fails. */
static WZ_AVX512 void quantize_batch_avx512(const wzc_qbatch *b, const float *z, uint32_t *digit)
{
	const int *starts = (const int *)b->starts;
	const __m512i one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
	for (int j0 = 0; j0 < b->n; j0 += 16) {
		int nl = b->n - j0 < 16 ? b->n - j0 : 16;
		__mmask16 m = (__mmask16)((1u << nl) - 1);
		__m512 zv = _mm512_maskz_loadu_ps(m, z + j0);
		__m512 f = _mm512_mul_ps(_mm512_sub_ps(zv, _mm512_maskz_loadu_ps(m, b->t0 + j0)),
					 _mm512_maskz_loadu_ps(m, b->inv_w + j0));
		f = _mm512_max_ps(f, _mm512_setzero_ps()); /* NaN gives 0 */
		f = _mm512_min_ps(f, _mm512_maskz_loadu_ps(m, b->gmax + j0));
		__m512i cell = _mm512_add_epi32(_mm512_cvttps_epi32(f),
						_mm512_maskz_loadu_epi32(m, b->start_off + j0));
		__m512i s = _mm512_mask_i32gather_epi32(zero, m, cell, starts, 4);
		__m512i n = _mm512_maskz_loadu_epi32(m, b->nthr + j0);
		__m512i toff = _mm512_maskz_loadu_epi32(m, b->thr_off + j0);
		__m512i nm1 = _mm512_sub_epi32(n, one);
		/* Two steps; a lane's check then needs one more threshold at
		 * most: after an increment, thr[s - 1] < z is known; when the
		 * last step did not increment, thr[s] < z is known false. */
		__mmask16 inc[2];
		for (int step = 0; step < 2; step++) {
			__m512i at = _mm512_add_epi32(toff, _mm512_min_epi32(s, nm1));
			__m512 t = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, at, b->thr_base, 4);
			inc[step] = _mm512_mask_cmp_ps_mask(_mm512_mask_cmplt_epi32_mask(m, s, n), t, zv,
							    _CMP_LT_OQ);
			s = _mm512_mask_add_epi32(s, inc[step], s, one);
		}
		/* above: s < n and thr[s] < z; below: s > 0 and not thr[s-1] < z */
		/* (masked gathers, not branches: whether a block of lanes needs
		 * one is a coin flip the branch predictor would lose) */
		__mmask16 need_above = _mm512_mask_cmplt_epi32_mask(inc[1], s, n);
		__m512i at = _mm512_add_epi32(toff, _mm512_min_epi32(s, nm1));
		__m512 ta = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), need_above, at, b->thr_base, 4);
		__mmask16 above = _mm512_mask_cmp_ps_mask(need_above, ta, zv, _CMP_LT_OQ);
		__mmask16 need_below = _mm512_mask_cmpgt_epi32_mask(m & (__mmask16)~(inc[0] | inc[1]),
								    s, zero);
		__m512i bt = _mm512_add_epi32(toff, _mm512_sub_epi32(s, one));
		__m512 tb = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), need_below, bt, b->thr_base, 4);
		__mmask16 below = need_below & (__mmask16)~_mm512_mask_cmp_ps_mask(need_below, tb, zv,
										    _CMP_LT_OQ);
		_mm512_mask_storeu_epi32(digit + j0, m, s);
		unsigned bad = (unsigned)(above | below) & m;
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
	return choose() ? "avx512f" : "scalar";
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
	wzc_gemm_ref(ntok, kdim, ncol, B, ldb, X, xst, xsr, Y, ldy);
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
	double t0 = thr[0], t1 = thr[nthr - 1], range = t1 - t0;
	/* Enough cells that none holds more than two thresholds, within a cap
	 * (a table with near-equal thresholds then searches more often). */
	for (int G = 2 * (int)nthr + 2;; G *= 2) {
		uint32_t *start = malloc(sizeof *start * ((size_t)G + 1));
		if (!start) {
			wzc_qlut_free(q);
			return -1;
		}
		double w = range > 0 ? range / (G - 1) : 1;
		uint32_t s = 0, most = 0;
		for (int b = 0; b <= G; b++) {
			double edge = t0 + b * w;
			while (s < nthr && thr[s] < edge)
				s++;
			start[b] = s;
			if (b > 0 && start[b] - start[b - 1] > most)
				most = start[b] - start[b - 1];
		}
		free(q->start);
		q->start = start;
		q->G = G;
		q->t0 = (float)t0;
		q->inv_w = (float)(1 / w);
		if (most <= 2 || G > 8 * (int)nthr + 4096)
			return 0;
	}
}

void wzc_qlut_free(wzc_qlut *q)
{
	free(q->start);
	q->start = NULL;
}
