/* The wz transforms' matrix products: the scalar references and portable
 * loops of the float products and of the encoder's exact integer products
 * (pair-major and in the dot form), the choice at run time among them and
 * the x86 kernels (codec/wz/wz_gemm_x86.c), and the quantizer's grids.
 * Every float product is one fused multiply-add (fmaf), never a multiply
 * and a separate add: the chain's bits are then defined by IEEE 754 alone. */
#include "codec/wz/wz_gemm.h"
#include "codec/wz/wz_gemm_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void wzc_gemm_ref(int ntok, int kdim, int ncol, const float *B, size_t ldb,
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
			for (int c = 0; c < ncol; c++)
				yt[c] = fmaf(xr, br[c], yt[c]);
		}
	}
}

/* Without AVX-512: the reference's loops, vectorized by the compiler
 * (-O3, an AVX2 and FMA clone on x86-64), the same operations in the same
 * order.  The default clone calls the C library's fmaf, exact but slow on
 * x86-64 processors without FMA (made before about 2013). */
#if defined(__GNUC__) && !defined(__clang__)
#define WZ_PORTABLE __attribute__((optimize("O3")))
#if defined(__x86_64__) && defined(__GLIBC__)
#define WZ_PORTABLE_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
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
			for (int c = 0; c < ncol; c++)
				yt[c] = fmaf(xr, br[c], yt[c]);
		}
	}
}

int wzc_input_q(int m, const float *x, int16_t *xq)
{
	for (int e = 0;; e++) {
		/* a power of two: the product is exact (or too small to count) */
		float mult = ldexpf(1.0f, WZC_XQ_SHIFT - e);
		uint64_t ss = 0;
		int fits = 1;
		for (int i = 0; i < m && fits; i++) {
			float v = isfinite(x[i]) ? x[i] * mult : 0.0f;
			if (!(fabsf(v) < WZC_XQ_MAX + 0.5f)) {
				fits = 0;
				break;
			}
			long q = lrintf(v);
			xq[i] = (int16_t)q;
			ss += (uint64_t)(q * q);
		}
		/* e reaches 160 only if a finite value exceeds 2^140: never */
		if ((fits && ss <= WZC_XQ_SUMSQ_MAX) || e >= 160)
			return e;
	}
}

void wzc_igemm_ref(int ntok, int kpairs, int ncol, const uint32_t *Bp, size_t ldb,
		   const uint32_t *Xp, size_t ldx, int32_t *Y, size_t ldy)
{
	for (int t = 0; t < ntok; t++)
		for (int c = 0; c < ncol; c++) {
			uint32_t acc = 0;
			for (int q = 0; q < kpairs; q++)
				acc += (uint32_t)pair_dot(Xp[(size_t)q * ldx + t], Bp[(size_t)q * ldb + c]);
			Y[(size_t)t * ldy + c] = (int32_t)acc;
		}
}

/* Without 512-bit vectors: the same sums (exact in any order), left to the
 * compiler's vectorizer. */
WZ_PORTABLE WZ_PORTABLE_CLONES static void igemm_portable(int ntok, int kpairs, int ncol,
							  const uint32_t *Bp, size_t ldb,
							  const uint32_t *Xp, size_t ldx,
							  int32_t *Y, size_t ldy)
{
	/* tokens in fours, so that a row of basis pairs serves four of them
	 * while it is in the first-level cache */
	for (int t0 = 0; t0 < ntok; t0 += 4) {
		int nt = ntok - t0 < 4 ? ntok - t0 : 4;
		for (int t = t0; t < t0 + nt; t++)
			for (int c = 0; c < ncol; c++)
				Y[(size_t)t * ldy + c] = 0;
		for (int q = 0; q < kpairs; q++) {
			const uint32_t *bq = Bp + (size_t)q * ldb;
			for (int t = t0; t < t0 + nt; t++) {
				uint32_t xp = Xp[(size_t)q * ldx + t];
				int32_t x0 = (int16_t)(uint16_t)xp, x1 = (int16_t)(uint16_t)(xp >> 16);
				uint32_t *yt = (uint32_t *)(Y + (size_t)t * ldy);
				for (int c = 0; c < ncol; c++) {
					int32_t b0 = (int16_t)(uint16_t)bq[c];
					int32_t b1 = (int16_t)(uint16_t)(bq[c] >> 16);
					yt[c] += (uint32_t)(x0 * b0) + (uint32_t)(x1 * b1);
				}
			}
		}
	}
}

void wzc_igemm_dot_ref(int ntok, int kpairs, int ncol, const uint32_t *Bt, size_t ldb,
		       const uint32_t *Xt, size_t ldx, int32_t *Y, size_t ldy)
{
	for (int t = 0; t < ntok; t++)
		for (int c = 0; c < ncol; c++) {
			uint32_t acc = 0;
			for (int q = 0; q < kpairs; q++)
				acc += (uint32_t)pair_dot(Xt[(size_t)t * ldx + q], Bt[(size_t)c * ldb + q]);
			Y[(size_t)t * ldy + c] = (int32_t)acc;
		}
}

/* The dot form without AVX2: the reference's sums, vectorized by the
 * compiler (an integer sum may be reordered). */
WZ_PORTABLE WZ_PORTABLE_CLONES static void igemm_dot_portable(int ntok, int kpairs, int ncol,
							      const uint32_t *Bt, size_t ldb,
							      const uint32_t *Xt, size_t ldx,
							      int32_t *Y, size_t ldy)
{
	for (int t = 0; t < ntok; t++) {
		const uint32_t *xt = Xt + (size_t)t * ldx;
		for (int c = 0; c < ncol; c++) {
			const uint32_t *bc = Bt + (size_t)c * ldb;
			uint32_t acc = 0;
			for (int q = 0; q < kpairs; q++) {
				int32_t x0 = (int16_t)(uint16_t)xt[q], x1 = (int16_t)(uint16_t)(xt[q] >> 16);
				int32_t b0 = (int16_t)(uint16_t)bc[q], b1 = (int16_t)(uint16_t)(bc[q] >> 16);
				acc += (uint32_t)(x0 * b0) + (uint32_t)(x1 * b1);
			}
			Y[(size_t)t * ldy + c] = (int32_t)acc;
		}
	}
}

/* The integer kernels by name, each with whether this CPU runs it:
 * choose() takes the last that runs (the fastest), wzc_gemm_force any
 * (for tests and benchmarks, before any other thread encodes). */
enum { IK_PORTABLE, IK_AVX2, IK_AVX512BW, IK_AVX512VNNI, IK_N };
static const char *const ikernel_names[IK_N] = { "portable", "avx2", "avx512bw", "avx512vnni" };
static int kernel_choice = -1;  /* wzc_gemm's: 0 portable, 1 avx512f, 2 avx2 (with FMA) */
static int ikernel_choice = -1; /* index into ikernel_names */

static int ikernel_runs(int k)
{
#ifdef WZ_HAVE_AVX512
	__builtin_cpu_init();
	int bw = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
	switch (k) {
	case IK_AVX2: return __builtin_cpu_supports("avx2");
	case IK_AVX512BW: return bw;
	case IK_AVX512VNNI: return bw && __builtin_cpu_supports("avx512vnni");
	default: return 1;
	}
#else
	return k == IK_PORTABLE;
#endif
}

static void choose_once(void)
{
	int ik = IK_N - 1;
	while (!ikernel_runs(ik))
		ik--;
	ikernel_choice = ik;
#ifdef WZ_HAVE_AVX512
	kernel_choice = __builtin_cpu_supports("avx512f")                                   ? 1
			: __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 2
										    : 0;
#else
	kernel_choice = 0;
#endif
}

/* Chosen once for the process: codecs encode and measure on many threads
 * (pthread_once orders the choice before every use). */
static int choose(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, choose_once);
	return kernel_choice;
}

const char *wzc_igemm_kernel(void)
{
	choose();
	return ikernel_names[ikernel_choice];
}

int wzc_gemm_force(const char *kernel)
{
	choose();
	for (int i = 0; i < IK_N; i++)
		if (!strcmp(kernel, ikernel_names[i])) {
			if (!ikernel_runs(i))
				return -1;
			ikernel_choice = i;
			return 0;
		}
	return -1;
}

int wzc_igemm_simd_allowed(void)
{
	choose();
	return ikernel_choice != IK_PORTABLE;
}

void wzc_igemm(int ntok, int kpairs, int ncol, const uint32_t *Bp, size_t ldb,
	       const uint32_t *Xp, size_t ldx, int32_t *Y, size_t ldy)
{
	choose();
#ifdef WZ_HAVE_AVX512
	if (ikernel_choice == IK_AVX512VNNI) {
		wzc_igemm_avx512vnni(ntok, kpairs, ncol, Bp, ldb, Xp, ldx, Y, ldy);
		return;
	}
	if (ikernel_choice == IK_AVX512BW) {
		wzc_igemm_avx512bw(ntok, kpairs, ncol, Bp, ldb, Xp, ldx, Y, ldy);
		return;
	}
	if (ikernel_choice == IK_AVX2) {
		wzc_igemm_avx2(ntok, kpairs, ncol, Bp, ldb, Xp, ldx, Y, ldy);
		return;
	}
#endif
	igemm_portable(ntok, kpairs, ncol, Bp, ldb, Xp, ldx, Y, ldy);
}

int wzc_igemm_dot_preferred(void)
{
	choose();
	return ikernel_choice == IK_AVX2;
}

void wzc_igemm_dot(int ntok, int kpairs, int ncol, const uint32_t *Bt, size_t ldb,
		   const uint32_t *Xt, size_t ldx, int32_t *Y, size_t ldy)
{
	choose();
#ifdef WZ_HAVE_AVX512
	if (ikernel_choice >= IK_AVX2) {
		wzc_igemm_dot_avx2(ntok, kpairs, ncol, Bt, ldb, Xt, ldx, Y, ldy);
		return;
	}
#endif
	igemm_dot_portable(ntok, kpairs, ncol, Bt, ldb, Xt, ldx, Y, ldy);
}

const char *wzc_gemm_kernel(void)
{
	int k = choose();
	return k == 1 ? "avx512f" : k == 2 ? "avx2" : "portable";
}

void wzc_gemm(int ntok, int kdim, int ncol, const float *B, size_t ldb, const float *X,
	      size_t xst, size_t xsr, float *Y, size_t ldy)
{
#ifdef WZ_HAVE_AVX512
	int k = choose();
	if (k == 1) {
		wzc_gemm_avx512(ntok, kdim, ncol, B, ldb, X, xst, xsr, Y, ldy);
		return;
	}
	if (k == 2) {
		wzc_gemm_avx2(ntok, kdim, ncol, B, ldb, X, xst, xsr, Y, ldy);
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
	if (choose() == 1) {
		wzc_quantize_batch_avx512(b, z, digit);
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

void wzc_qlut_pairs(const wzc_qlut *q, uint64_t *pairs)
{
	for (int c = 0; c < q->G; c++) {
		uint32_t s0 = q->start[c];
		float lo = s0 < q->nthr ? q->thr[s0] : INFINITY;
		float hi = s0 + 1 < q->nthr ? q->thr[s0 + 1] : INFINITY;
		uint32_t ulo, uhi;
		memcpy(&ulo, &lo, sizeof ulo);
		memcpy(&uhi, &hi, sizeof uhi);
		pairs[c] = (uint64_t)ulo | (uint64_t)uhi << 32;
	}
}

void wzc_qlut_free(wzc_qlut *q)
{
	free(q->start);
	q->start = NULL;
}
