/* The wz transforms' x86 kernels (codec/wz/wz_gemm.c has the scalar
 * references and portable loops they are tested against, and the dispatch):
 * the float products with AVX-512 (8 tokens x 48 columns of accumulators in
 * registers, the inner index in order) and with AVX2 and FMA, the encoder's
 * exact integer products pair-major (AVX-512 VNNI, AVX-512BW, AVX2) and in
 * the dot form (AVX2), and the quantizer's grids with AVX-512. */
#include "codec/wz/wz_gemm_internal.h"

#ifdef WZ_HAVE_AVX512
#include <immintrin.h>
#if defined(__clang__)
#define WZ_AVX512 __attribute__((target("avx512f")))
#else
#define WZ_AVX512 __attribute__((target("avx512f"), optimize("O3")))
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
				acc[t][v] = _mm512_fmadd_ps(x, b[v], acc[t][v]);
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

WZ_AVX512 void wzc_gemm_avx512(int ntok, int kdim, int ncol, const float *B, size_t ldb,
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

/* Integer products: nt tokens x nv vectors of 16 columns, 16-bit pairs
 * multiplied and summed into 32-bit lanes; `vnni` uses one instruction
 * (vpdpwssd) where AVX512BW needs two (vpmaddwd, vpaddd).  The sums are
 * exact (or wrap), so the order does not matter. */
#define ITILE_BODY(DOT)                                                                    \
	__m512i acc[8][3];                                                                 \
	for (int t = 0; t < nt; t++)                                                       \
		for (int v = 0; v < nv; v++)                                               \
			acc[t][v] = _mm512_setzero_si512();                                \
	for (int q = 0; q < kpairs; q++) {                                                 \
		const uint32_t *bq = Bp + (size_t)q * ldb;                                 \
		const uint32_t *xq = Xp + (size_t)q * ldx;                                 \
		__m512i b[3];                                                              \
		for (int v = 0; v < nv; v++)                                               \
			b[v] = v == nv - 1 ? _mm512_maskz_loadu_epi32(last, bq + 16 * v)   \
					   : _mm512_loadu_si512(bq + 16 * v);              \
		for (int t = 0; t < nt; t++) {                                             \
			__m512i x = _mm512_set1_epi32((int)xq[t]);                         \
			for (int v = 0; v < nv; v++)                                       \
				acc[t][v] = DOT(acc[t][v], x, b[v]);                       \
		}                                                                          \
	}                                                                                  \
	for (int t = 0; t < nt; t++)                                                       \
		for (int v = 0; v < nv; v++) {                                             \
			int32_t *y = Y + (size_t)t * ldy + 16 * v;                         \
			__mmask16 mk = v == nv - 1 ? last : (__mmask16)0xffff;             \
			__m512i a = _mm512_add_epi32(                                      \
				acc[t][v], _mm512_maskz_loadu_epi32(first ? 0 : mk, y));   \
			_mm512_mask_storeu_epi32(y, mk, a);                                \
		}

#define DOT_BW(a, x, b) _mm512_add_epi32((a), _mm512_madd_epi16((x), (b)))
/* vpdpwssd through a one-instruction asm: GCC 12 copies and spills the
 * accumulators of the intrinsic's builtin every iteration. */
static inline __attribute__((always_inline, target("avx512f,avx512vnni"))) __m512i
dot_vnni(__m512i a, __m512i x, __m512i b)
{
	__asm__("vpdpwssd %2, %1, %0" : "+v"(a) : "v"(x), "v"(b));
	return a;
}
#define DOT_VNNI(a, x, b) dot_vnni((a), (x), (b))

/* One function per tile shape, each compiled on its own: inlined into one
 * driver, the shapes' accumulators no longer fitted the registers. */
#define ITILE_FN(NAME, TARGET, DOT, NT, NV)                                                \
	static __attribute__((noinline, target(TARGET), optimize("O3"))) void NAME(       \
		int kpairs, const uint32_t *Bp, size_t ldb, const uint32_t *Xp, size_t ldx,  \
		int32_t *Y, size_t ldy, __mmask16 last, int first)                         \
	{                                                                                  \
		const int nt = NT, nv = NV;                                                \
		ITILE_BODY(DOT)                                                            \
	}
/* The full tile, 8 tokens x 48 columns, with its 24 accumulators named:
 * GCC kept the array version's accumulators in memory as well. */
#define A3(t) __m512i a##t##0 = z, a##t##1 = z, a##t##2 = z;
#define D3(t, DOT)                                                                         \
	x = _mm512_set1_epi32((int)xq[t]);                                                 \
	a##t##0 = DOT(a##t##0, x, b0);                                                     \
	a##t##1 = DOT(a##t##1, x, b1);                                                     \
	a##t##2 = DOT(a##t##2, x, b2);
#define S3(t)                                                                              \
	{                                                                                  \
		int32_t *y = Y + (size_t)(t) * ldy;                                        \
		a##t##0 = _mm512_add_epi32(a##t##0, _mm512_maskz_loadu_epi32(keep, y));    \
		a##t##1 = _mm512_add_epi32(a##t##1, _mm512_maskz_loadu_epi32(keep, y + 16)); \
		a##t##2 = _mm512_add_epi32(a##t##2,                                        \
					   _mm512_maskz_loadu_epi32(keep & last, y + 32)); \
		_mm512_storeu_si512(y, a##t##0);                                           \
		_mm512_storeu_si512(y + 16, a##t##1);                                      \
		_mm512_mask_storeu_epi32(y + 32, last, a##t##2);                           \
	}
#define ITILE83_FN(NAME, TARGET, DOT)                                                      \
	static __attribute__((noinline, target(TARGET), optimize("O3"))) void NAME(       \
		int kpairs, const uint32_t *Bp, size_t ldb, const uint32_t *Xp, size_t ldx,  \
		int32_t *Y, size_t ldy, __mmask16 last, int first)                         \
	{                                                                                  \
		const __m512i z = _mm512_setzero_si512();                                  \
		A3(0) A3(1) A3(2) A3(3) A3(4) A3(5) A3(6) A3(7)                            \
		for (int q = 0; q < kpairs; q++) {                                         \
			const uint32_t *bq = Bp + (size_t)q * ldb;                         \
			const uint32_t *xq = Xp + (size_t)q * ldx;                         \
			__m512i b0 = _mm512_loadu_si512(bq), b1 = _mm512_loadu_si512(bq + 16); \
			__m512i b2 = _mm512_maskz_loadu_epi32(last, bq + 32), x;           \
			D3(0, DOT) D3(1, DOT) D3(2, DOT) D3(3, DOT)                        \
			D3(4, DOT) D3(5, DOT) D3(6, DOT) D3(7, DOT)                        \
		}                                                                          \
		/* the first chunk's sums replace Y; later ones add to it */               \
		const __mmask16 keep = first ? 0 : 0xffff;                                 \
		S3(0) S3(1) S3(2) S3(3) S3(4) S3(5) S3(6) S3(7)                            \
	}
#define ITILE_SHAPES(PFX, TARGET, DOT)                                                     \
	ITILE83_FN(PFX##_8_3, TARGET, DOT)                                                 \
	ITILE_FN(PFX##_8_2, TARGET, DOT, 8, 2)                                             \
	ITILE_FN(PFX##_8_1, TARGET, DOT, 8, 1)                                             \
	static __attribute__((noinline, target(TARGET), optimize("O3"))) void PFX##_any(  \
		int nt, int nv, int kpairs, const uint32_t *Bp, size_t ldb,                \
		const uint32_t *Xp, size_t ldx, int32_t *Y, size_t ldy, __mmask16 last,    \
		int first)                                                                 \
	{                                                                                  \
		ITILE_BODY(DOT)                                                            \
	}

ITILE_SHAPES(itile_bw, "avx512f,avx512bw", DOT_BW)
ITILE_SHAPES(itile_vnni, "avx512f,avx512bw,avx512vnni", DOT_VNNI)

/* Tokens in tiles of 8 (their pairs broadcast) by columns in tiles of 48
 * (three vectors of the basis pairs), over the inner pairs in chunks of
 * 128 so that a chunk of the basis columns (24 KiB) and of a tile's
 * tokens (128 lines, 8 KiB) stay in the first-level cache; the chunks'
 * sums add up in Y. */
#define IGEMM_KC 128
#define IGEMM_DRIVER(TILE)                                                                 \
	for (int k0 = 0; k0 < kpairs; k0 += IGEMM_KC) {                                    \
		int kc = kpairs - k0 < IGEMM_KC ? kpairs - k0 : IGEMM_KC, first = k0 == 0; \
		const uint32_t *bk = Bp + (size_t)k0 * ldb, *xk = Xp + (size_t)k0 * ldx;   \
		for (int c0 = 0; c0 < ncol; c0 += 48) {                                    \
			int nc = ncol - c0 < 48 ? ncol - c0 : 48;                          \
			int nv = (nc + 15) / 16, rem = nc - 16 * (nv - 1);                 \
			__mmask16 last = (__mmask16)((1u << rem) - 1);                     \
			for (int t0 = 0; t0 < ntok; t0 += 8) {                             \
				int nt = ntok - t0 < 8 ? ntok - t0 : 8;                    \
				const uint32_t *x = xk + t0;                               \
				int32_t *y = Y + (size_t)t0 * ldy + c0;                    \
				if (nt == 8 && nv == 3)                                    \
					TILE##_8_3(kc, bk + c0, ldb, x, ldx, y, ldy, last, first); \
				else if (nt == 8 && nv == 2)                               \
					TILE##_8_2(kc, bk + c0, ldb, x, ldx, y, ldy, last, first); \
				else if (nt == 8)                                          \
					TILE##_8_1(kc, bk + c0, ldb, x, ldx, y, ldy, last, first); \
				else                                                       \
					TILE##_any(nt, nv, kc, bk + c0, ldb, x, ldx, y, ldy, last, first); \
			}                                                                  \
		}                                                                          \
	}                                                                                  \
	if (kpairs == 0)                                                                   \
		for (int t = 0; t < ntok; t++)                                             \
			for (int c = 0; c < ncol; c++)                                     \
				Y[(size_t)t * ldy + c] = 0;

__attribute__((target("avx512f,avx512bw"), optimize("O3"))) void
wzc_igemm_avx512bw(int ntok, int kpairs, int ncol, const uint32_t *Bp, size_t ldb, const uint32_t *Xp,
	       size_t ldx, int32_t *Y, size_t ldy)
{
	IGEMM_DRIVER(itile_bw)
}

__attribute__((target("avx512f,avx512bw,avx512vnni"), optimize("O3"))) void
wzc_igemm_avx512vnni(int ntok, int kpairs, int ncol, const uint32_t *Bp, size_t ldb,
		 const uint32_t *Xp, size_t ldx, int32_t *Y, size_t ldy)
{
	IGEMM_DRIVER(itile_vnni)
}

/* 16 components per step: the cell's start and its two thresholds
 * (wzc_qlut_pairs) by gathers, then two comparisons; lanes whose table has
 * no exact grid take the binary search. */
WZ_AVX512 void wzc_quantize_batch_avx512(const wzc_qbatch *b, const float *z, uint32_t *digit)
{
	const int *starts = (const int *)b->starts;
	const __m512i one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
	const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
	const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
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
		/* the cell's two thresholds (+inf past the table's last, which
		 * no z is above: the reference's count stops there) */
		__m512i pl = _mm512_mask_i32gather_epi64(zero, (__mmask8)m, _mm512_castsi512_si256(cell),
							 (const long long *)b->pairs, 8);
		__m512i ph = _mm512_mask_i32gather_epi64(zero, (__mmask8)(m >> 8),
							 _mm512_extracti64x4_epi64(cell, 1),
							 (const long long *)b->pairs, 8);
		__m512 t0 = _mm512_castsi512_ps(_mm512_permutex2var_epi32(pl, even, ph));
		__m512 t1 = _mm512_castsi512_ps(_mm512_permutex2var_epi32(pl, odd, ph));
		s = _mm512_mask_add_epi32(s, _mm512_mask_cmp_ps_mask(m, t0, zv, _CMP_LT_OQ), s, one);
		s = _mm512_mask_add_epi32(s, _mm512_mask_cmp_ps_mask(m, t1, zv, _CMP_LT_OQ), s, one);
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

#if defined(WZ_HAVE_AVX512)
/* AVX2 (no 512-bit vectors): 4 tokens x 24 columns of 8-lane accumulators,
 * vpmaddwd then vpaddd, the inner pairs in order (exact: the order does not
 * matter). */
static inline __attribute__((always_inline, target("avx2"))) void
itile_avx2(int nt, int nv, int kpairs, const uint32_t *Bp, size_t ldb, const uint32_t *Xp,
	   size_t ldx, int32_t *Y, size_t ldy, int rem)
{
	__m256i acc[4][3];
	const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const __m256i lastm = _mm256_cmpgt_epi32(_mm256_set1_epi32(rem), lanes);
	for (int t = 0; t < nt; t++)
		for (int v = 0; v < nv; v++)
			acc[t][v] = _mm256_setzero_si256();
	for (int q = 0; q < kpairs; q++) {
		const uint32_t *bq = Bp + (size_t)q * ldb;
		const uint32_t *xq = Xp + (size_t)q * ldx;
		__m256i b[3];
		for (int v = 0; v < nv; v++)
			b[v] = v == nv - 1 ? _mm256_maskload_epi32((const int *)(bq + 8 * v), lastm)
					   : _mm256_loadu_si256((const __m256i *)(bq + 8 * v));
		for (int t = 0; t < nt; t++) {
			__m256i x = _mm256_set1_epi32((int)xq[t]);
			for (int v = 0; v < nv; v++)
				acc[t][v] = _mm256_add_epi32(acc[t][v], _mm256_madd_epi16(x, b[v]));
		}
	}
	for (int t = 0; t < nt; t++)
		for (int v = 0; v < nv; v++) {
			int *y = (int *)(Y + (size_t)t * ldy + 8 * v);
			if (v == nv - 1)
				_mm256_maskstore_epi32(y, lastm, acc[t][v]);
			else
				_mm256_storeu_si256((__m256i *)y, acc[t][v]);
		}
}

__attribute__((target("avx2"), optimize("O3"))) void
wzc_igemm_avx2(int ntok, int kpairs, int ncol, const uint32_t *Bp, size_t ldb, const uint32_t *Xp,
	   size_t ldx, int32_t *Y, size_t ldy)
{
	for (int c0 = 0; c0 < ncol; c0 += 24) {
		int nc = ncol - c0 < 24 ? ncol - c0 : 24;
		int nv = (nc + 7) / 8, rem = nc - 8 * (nv - 1);
		for (int t0 = 0; t0 < ntok; t0 += 4) {
			int nt = ntok - t0 < 4 ? ntok - t0 : 4;
			const uint32_t *x = Xp + t0;
			int32_t *y = Y + (size_t)t0 * ldy + c0;
			if (nt == 4 && nv == 3)
				itile_avx2(4, 3, kpairs, Bp + c0, ldb, x, ldx, y, ldy, rem);
			else
				itile_avx2(nt, nv, kpairs, Bp + c0, ldb, x, ldx, y, ldy, rem);
		}
	}
}

/* The float products with AVX2 and FMA: wzc_gemm_avx512's tiles at half the
 * width, 4 tokens x 3 vectors of 8 columns (12 accumulators, 3 basis
 * vectors and a broadcast fill the 16 registers), each output one fused
 * chain over the inner index in order from zero, as the reference's. */
#define T2F __attribute__((target("avx2,fma"), optimize("O3")))
static inline __attribute__((always_inline)) T2F void
ftile_avx2(int nt, int nv, int kdim, const float *B, size_t ldb, const float *X, size_t xst,
	   size_t xsr, float *Y, size_t ldy, __m256i last)
{
	__m256 acc[4][3];
	for (int t = 0; t < nt; t++)
		for (int v = 0; v < nv; v++)
			acc[t][v] = _mm256_setzero_ps();
	for (int r = 0; r < kdim; r++) {
		const float *br = B + (size_t)r * ldb;
		__m256 b[3];
		for (int v = 0; v < nv; v++)
			b[v] = v == nv - 1 ? _mm256_maskload_ps(br + 8 * v, last) : _mm256_loadu_ps(br + 8 * v);
		for (int t = 0; t < nt; t++) {
			__m256 x = _mm256_broadcast_ss(X + (size_t)t * xst + (size_t)r * xsr);
			for (int v = 0; v < nv; v++)
				acc[t][v] = _mm256_fmadd_ps(x, b[v], acc[t][v]);
		}
	}
	for (int t = 0; t < nt; t++)
		for (int v = 0; v < nv; v++) {
			float *y = Y + (size_t)t * ldy + 8 * v;
			if (v == nv - 1)
				_mm256_maskstore_ps(y, last, acc[t][v]);
			else
				_mm256_storeu_ps(y, acc[t][v]);
		}
}

/* One function per tile shape (constant nt and nv keep the accumulators
 * in registers). */
#define FTILE_FN(NT, NV)                                                                    \
	static __attribute__((noinline)) T2F void ftile_##NT##_##NV(                       \
		int kdim, const float *B, size_t ldb, const float *X, size_t xst, size_t xsr, \
		float *Y, size_t ldy, __m256i last)                                         \
	{                                                                                   \
		ftile_avx2(NT, NV, kdim, B, ldb, X, xst, xsr, Y, ldy, last);                \
	}
FTILE_FN(4, 3)
FTILE_FN(4, 2)
FTILE_FN(4, 1)
FTILE_FN(3, 3)
FTILE_FN(2, 3)
FTILE_FN(1, 3)
FTILE_FN(3, 2)
FTILE_FN(2, 2)
FTILE_FN(1, 2)
FTILE_FN(3, 1)
FTILE_FN(2, 1)
FTILE_FN(1, 1)
#undef FTILE_FN

typedef void (*ftile_fn)(int, const float *, size_t, const float *, size_t, size_t, float *, size_t,
			 __m256i);
static const ftile_fn ftiles[4][3] = {
	{ ftile_1_1, ftile_1_2, ftile_1_3 },
	{ ftile_2_1, ftile_2_2, ftile_2_3 },
	{ ftile_3_1, ftile_3_2, ftile_3_3 },
	{ ftile_4_1, ftile_4_2, ftile_4_3 },
};

T2F void wzc_gemm_avx2(int ntok, int kdim, int ncol, const float *B, size_t ldb, const float *X,
			  size_t xst, size_t xsr, float *Y, size_t ldy)
{
	for (int c0 = 0; c0 < ncol; c0 += 24) {
		int nc = ncol - c0 < 24 ? ncol - c0 : 24;
		int nv = (nc + 7) / 8, rem = nc - 8 * (nv - 1);
		__m256i last = _mm256_cmpgt_epi32(_mm256_set1_epi32(rem),
						  _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
		for (int t0 = 0; t0 < ntok; t0 += 4) {
			int nt = ntok - t0 < 4 ? ntok - t0 : 4;
			ftiles[nt - 1][nv - 1](kdim, B + c0, ldb, X + (size_t)t0 * xst, xst, xsr,
					       Y + (size_t)t0 * ldy + c0, ldy, last);
		}
	}
}
#undef T2F

/* The dot form with AVX2: 2 tokens x 4 columns of 8-lane accumulators,
 * each a vpmaddwd of one token's and one column's eight pairs as they lie
 * in memory plus a vpaddd (no broadcasts), the eight summed across their
 * lanes at the end.  Columns outermost, so a tile's four basis rows stay
 * in the first-level cache while the tokens' rows stream past. */
static inline __attribute__((always_inline, target("avx2"))) __m256i
madd_add(__m256i acc, __m256i x, __m256i b)
{
	/* in place: GCC 12 otherwise adds into the product's register and
	 * copies it back, a move per multiply-add */
	__m256i t;
	__asm__("vpmaddwd %3, %2, %1\n\tvpaddd %1, %0, %0" : "+x"(acc), "=&x"(t) : "x"(x), "x"(b));
	return acc;
}

/* [sum of a0's lanes, ..., sum of a7's] */
static inline __attribute__((always_inline, target("avx2"))) __m256i
lane_sums8(__m256i a0, __m256i a1, __m256i a2, __m256i a3, __m256i a4, __m256i a5, __m256i a6,
	   __m256i a7)
{
	__m256i h01 = _mm256_hadd_epi32(a0, a1), h23 = _mm256_hadd_epi32(a2, a3);
	__m256i h45 = _mm256_hadd_epi32(a4, a5), h67 = _mm256_hadd_epi32(a6, a7);
	__m256i h0 = _mm256_hadd_epi32(h01, h23), h1 = _mm256_hadd_epi32(h45, h67);
	return _mm256_add_epi32(_mm256_permute2x128_si256(h0, h1, 0x20),
				_mm256_permute2x128_si256(h0, h1, 0x31));
}

/* Y[t][c] for the tokens of rows x0, x1 and the columns of rows b0..b3
 * over kv vectors of pairs, nt <= 2 tokens and nc <= 4 columns stored
 * (the caller repeats a row for the ones past the edge).  Not inlined:
 * its 8 accumulators, 6 operands and the product need 15 of the 16
 * registers, and the caller's variables made GCC spill some. */
static __attribute__((noinline, target("avx2"), optimize("O3"))) void
idot_tile(int kv, const uint32_t *x0, const uint32_t *x1, const uint32_t *b0, const uint32_t *b1,
	  const uint32_t *b2, const uint32_t *b3, int nt, int nc, int32_t *Y, size_t ldy)
{
	__m256i z = _mm256_setzero_si256(), a0 = z, a1 = z, a2 = z, a3 = z, a4 = z, a5 = z, a6 = z,
		a7 = z;
	for (int v = 0; v < kv; v++) {
#define LD(p) _mm256_loadu_si256((const __m256i *)((p) + 8 * v))
		__m256i X0 = LD(x0), X1 = LD(x1), B0 = LD(b0), B1 = LD(b1), B2 = LD(b2), B3 = LD(b3);
#undef LD
		a0 = madd_add(a0, X0, B0);
		a1 = madd_add(a1, X0, B1);
		a2 = madd_add(a2, X0, B2);
		a3 = madd_add(a3, X0, B3);
		a4 = madd_add(a4, X1, B0);
		a5 = madd_add(a5, X1, B1);
		a6 = madd_add(a6, X1, B2);
		a7 = madd_add(a7, X1, B3);
	}
	__m256i r = lane_sums8(a0, a1, a2, a3, a4, a5, a6, a7);
	if (nc == 4) {
		_mm_storeu_si128((__m128i *)Y, _mm256_castsi256_si128(r));
		if (nt == 2)
			_mm_storeu_si128((__m128i *)(Y + ldy), _mm256_extracti128_si256(r, 1));
		return;
	}
	int32_t out[8];
	_mm256_storeu_si256((__m256i *)out, r);
	for (int t = 0; t < nt; t++)
		for (int c = 0; c < nc; c++)
			Y[(size_t)t * ldy + c] = out[4 * t + c];
}

__attribute__((target("avx2"), optimize("O3"))) void
wzc_igemm_dot_avx2(int ntok, int kpairs, int ncol, const uint32_t *Bt, size_t ldb, const uint32_t *Xt,
	       size_t ldx, int32_t *Y, size_t ldy)
{
	int kv = kpairs / 8;
	for (int c0 = 0; c0 < ncol; c0 += 4) {
		int nc = ncol - c0 < 4 ? ncol - c0 : 4;
		const uint32_t *b[4];
		for (int c = 0; c < 4; c++)
			b[c] = Bt + (size_t)(c0 + (c < nc ? c : 0)) * ldb;
		for (int t0 = 0; t0 < ntok; t0 += 2) {
			int nt = ntok - t0 < 2 ? ntok - t0 : 2;
			const uint32_t *x0 = Xt + (size_t)t0 * ldx, *x1 = nt == 2 ? x0 + ldx : x0;
			idot_tile(kv, x0, x1, b[0], b[1], b[2], b[3], nt, nc, Y + (size_t)t0 * ldy + c0,
				  ldy);
		}
	}
	/* pairs past the last full vector (the encoder pads its rows, so
	 * that only other shapes have any) */
	for (int q = 8 * kv; q < kpairs; q++)
		for (int t = 0; t < ntok; t++)
			for (int c = 0; c < ncol; c++) {
				int32_t *y = Y + (size_t)t * ldy + c;
				*y = (int32_t)((uint32_t)*y + (uint32_t)pair_dot(Xt[(size_t)t * ldx + q],
										 Bt[(size_t)c * ldb + q]));
			}
}
#endif
