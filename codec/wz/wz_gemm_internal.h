/* What codec/wz/wz_gemm.c (the references, portable loops and dispatch)
 * shares with codec/wz/wz_gemm_x86.c (the x86 kernels): a 16-bit pair's
 * dot product, whether this build has the x86 kernels, and their entry
 * points, each giving its scalar reference's values (wz_gemm.h). */
#ifndef WZC_WZ_GEMM_INTERNAL_H
#define WZC_WZ_GEMM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wz/wz_gemm.h"

/* One 16-bit pair's dot product, as the references and the kernels' tails
 * sum it. */
static inline int32_t pair_dot(uint32_t a, uint32_t b)
{
	int32_t a0 = (int16_t)(uint16_t)a, a1 = (int16_t)(uint16_t)(a >> 16);
	int32_t b0 = (int16_t)(uint16_t)b, b1 = (int16_t)(uint16_t)(b >> 16);
	/* each product fits in 32 bits; the sums wrap, as the vector units do */
	return (int32_t)((uint32_t)(a0 * b0) + (uint32_t)(a1 * b1));
}

#if defined(__GNUC__) && defined(__x86_64__) && !defined(WZ_NO_SIMD)
#define WZ_HAVE_AVX512 1

/* wzc_gemm's products, with AVX-512 and with AVX2 and FMA. */
void wzc_gemm_avx512(int ntok, int kdim, int ncol, const float *B, size_t ldb, const float *X,
		     size_t xst, size_t xsr, float *Y /* OUT */, size_t ldy);
void wzc_gemm_avx2(int ntok, int kdim, int ncol, const float *B, size_t ldb, const float *X,
		   size_t xst, size_t xsr, float *Y /* OUT */, size_t ldy);

/* wzc_igemm's pair-major products: AVX-512 VNNI, AVX-512BW, AVX2. */
void wzc_igemm_avx512vnni(int ntok, int kpairs, int ncol, const uint32_t *Bp, size_t ldb,
			  const uint32_t *Xp, size_t ldx, int32_t *Y /* OUT */, size_t ldy);
void wzc_igemm_avx512bw(int ntok, int kpairs, int ncol, const uint32_t *Bp, size_t ldb,
			const uint32_t *Xp, size_t ldx, int32_t *Y /* OUT */, size_t ldy);
void wzc_igemm_avx2(int ntok, int kpairs, int ncol, const uint32_t *Bp, size_t ldb,
		    const uint32_t *Xp, size_t ldx, int32_t *Y /* OUT */, size_t ldy);

/* wzc_igemm_dot's products with AVX2. */
void wzc_igemm_dot_avx2(int ntok, int kpairs, int ncol, const uint32_t *Bt, size_t ldb,
			const uint32_t *Xt, size_t ldx, int32_t *Y /* OUT */, size_t ldy);

/* wzc_quantize_batch with AVX-512. */
void wzc_quantize_batch_avx512(const wzc_qbatch *b, const float *z, uint32_t *digit /* OUT */);
#endif

#endif
