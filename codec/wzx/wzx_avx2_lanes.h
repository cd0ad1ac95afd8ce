/* The AVX2 pieces the 32-lane decoders of types 4 and 5 share
 * (codec/wzx/legacy/wzx_fast32_x86.c, codec/wzx/wzx_fast5_x86.c): the table look-up of 8
 * lanes (vpgatherdd or plain loads) and the permutation table that gives
 * each renormalising lane its word among the next eight (htscodecs'
 * rANS_static32x16pr_avx2 technique), and a round's renormalisation of
 * 32 lanes. */
#ifndef WZC_WZX_AVX2_LANES_H
#define WZC_WZX_AVX2_LANES_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>

#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_lanes.h"

#define AVX2_TARGET __attribute__((target("avx2,popcnt")))

/* spread8[m][k]: for a mask m of the 8 lanes that renormalise, where lane
 * k finds its word among the next eight (the lanes before it that also
 * read, in lane order).  One copy per file that uses it, filled by
 * wzx_spread8_ready. */
static uint32_t spread8[256][8];
static pthread_once_t spread8_once = PTHREAD_ONCE_INIT;
static void spread8_init(void)
{
	for (int m = 0; m < 256; m++)
		for (int k = 0, c = 0; k < 8; k++)
			spread8[m][k] = (m >> k & 1) ? (uint32_t)c++ : 0;
}
static inline void wzx_spread8_ready(void)
{
	pthread_once(&spread8_once, spread8_init);
}

/* base[idx[k]] for the 8 lanes: by vpgatherdd, or (loads) by eight plain
 * loads put together with inserts, which on AMD's Zen 3 runs faster
 * than its microcoded gather (bench/bench_decode4 prints both in one
 * run; docs/restore.md). */
AVX2_TARGET static inline __attribute__((always_inline)) __m256i
gather8(const int *base, __m256i idx, const int loads)
{
	if (!loads)
		return _mm256_i32gather_epi32(base, idx, 4);
	__m128i lo = _mm256_castsi256_si128(idx), hi = _mm256_extracti128_si256(idx, 1);
	uint64_t a = (uint64_t)_mm_cvtsi128_si64(lo), b = (uint64_t)_mm_extract_epi64(lo, 1);
	uint64_t c = (uint64_t)_mm_cvtsi128_si64(hi), d = (uint64_t)_mm_extract_epi64(hi, 1);
	__m128i r0 = _mm_cvtsi32_si128(base[(uint32_t)a]);
	r0 = _mm_insert_epi32(r0, base[a >> 32], 1);
	r0 = _mm_insert_epi32(r0, base[(uint32_t)b], 2);
	r0 = _mm_insert_epi32(r0, base[b >> 32], 3);
	__m128i r1 = _mm_cvtsi32_si128(base[(uint32_t)c]);
	r1 = _mm_insert_epi32(r1, base[c >> 32], 1);
	r1 = _mm_insert_epi32(r1, base[(uint32_t)d], 2);
	r1 = _mm_insert_epi32(r1, base[d >> 32], 3);
	return _mm256_inserti128_si256(_mm256_castsi128_si256(r0), r1, 1);
}

/* The 32 lanes' states at the payload's start (4 bytes each,
 * little-endian, lane 0 first: as an x86 load reads them) into four
 * vectors of 8. */
AVX2_TARGET static inline __attribute__((always_inline)) void states32_load(const uint8_t *payload, __m256i x[4])
{
	for (int h = 0; h < 4; h++)
		x[h] = _mm256_loadu_si256((const __m256i *)(const void *)(payload + 32 * h));
}

/* The renormalisation of one vector of 8 lanes: those below 2^16 take the
 * next words (the next 8 widened, then permuted to them); *pp moves past
 * the words taken.  The caller makes sure 16 bytes are there. */
AVX2_TARGET static inline __attribute__((always_inline)) __m256i
renorm8(__m256i x, const uint8_t **pp)
{
	__m256i need = _mm256_cmpeq_epi32(_mm256_srli_epi32(x, 16), _mm256_setzero_si256());
	int m = _mm256_movemask_ps(_mm256_castsi256_ps(need));
	__m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)*pp));
	w = _mm256_permutevar8x32_epi32(w, _mm256_loadu_si256((const __m256i *)(const void *)spread8[m]));
	*pp += 2 * (size_t)(unsigned)__builtin_popcount((unsigned)m);
	return _mm256_blendv_epi8(x, _mm256_or_si256(_mm256_slli_epi32(x, 16), w), need);
}
/* A round's renormalisation (type 5's loops): the 32 lanes' words from the payload, by
 * vector while two rounds' words are left, else lane by lane with the
 * end checked; 0, or -1 past the payload's end. */
AVX2_TARGET static inline __attribute__((always_inline)) int renorm32(__m256i x[4], const uint8_t **pp,
								     const uint8_t *end)
{
	if (end - *pp >= 2 * WZC_LANES4) {
#pragma GCC unroll 4
		for (int h = 0; h < 4; h++)
			x[h] = renorm8(x[h], pp);
		return 0;
	}
	uint32_t xs[WZC_LANES4];
	for (int h = 0; h < 4; h++)
		_mm256_storeu_si256((__m256i *)(void *)(xs + 8 * h), x[h]);
	for (int k = 0; k < WZC_LANES4; k++)
		if (wzc_lanes_refill(&xs[k], pp, end))
			return -1;
	for (int h = 0; h < 4; h++)
		x[h] = _mm256_loadu_si256((const __m256i *)(const void *)(xs + 8 * h));
	return 0;
}
/* renorm8 and renorm32 with AVX-512F and AVX-512VL: the lanes below 2^16
 * by a compare into a mask, each its word by vpexpandd of the next eight
 * widened (htscodecs' rANS_static32x16pr_avx512 technique), where renorm8
 * takes a movemask and a permutation from a table, a load on the state's
 * chain of dependencies. */
#define AVX512VL_TARGET __attribute__((target("avx2,popcnt,avx512f,avx512vl")))
AVX512VL_TARGET static inline __attribute__((always_inline)) __m256i renorm8_vl(__m256i x, const uint8_t **pp)
{
	__mmask8 need = _mm256_cmplt_epu32_mask(x, _mm256_set1_epi32(1 << 16));
	__m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)*pp));
	*pp += 2 * (size_t)(unsigned)__builtin_popcount((unsigned)need);
	return _mm256_mask_or_epi32(x, need, _mm256_slli_epi32(x, 16), _mm256_maskz_expand_epi32(need, w));
}
AVX512VL_TARGET static inline __attribute__((always_inline)) int renorm32_vl(__m256i x[4], const uint8_t **pp,
									    const uint8_t *end)
{
	if (end - *pp >= 2 * WZC_LANES4) {
#pragma GCC unroll 4
		for (int h = 0; h < 4; h++)
			x[h] = renorm8_vl(x[h], pp);
		return 0;
	}
	return renorm32(x, pp, end);
}
/* A block's end: 0 where the payload is used up (p at end) and every
 * lane's state is back at the coder's initial one, else -1 (the block is
 * damaged). */
AVX2_TARGET static inline int lanes32_end(const __m256i x[4], const uint8_t *p, const uint8_t *end)
{
	if (p != end)
		return -1;
	uint32_t xs[WZC_LANES4];
	for (int h = 0; h < 4; h++)
		_mm256_storeu_si256((__m256i *)(void *)(xs + 8 * h), x[h]);
	for (int k = 0; k < WZC_LANES4; k++)
		if (xs[k] != WZC_LANES_LOW)
			return -1;
	return 0;
}
#endif

#endif
