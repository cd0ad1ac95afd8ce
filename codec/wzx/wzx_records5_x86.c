/* Type 5 records from a block's digits with AVX2 (codec/wzx/wzx_records5.c
 * has the portable form, wzc_wzx_rec5_token, it is tested against): each
 * group's value for four tokens a vector (a digit times a 64-bit place
 * value as two 32 x 32-bit products), the fields by wzc_wzx_field, then
 * each token's fields written end to end 64 bits at a time. */
#include <stdint.h>
#include <string.h>

#include "codec/wzx/wzx_fast32_internal.h"
#include "codec/wzx/wzx_fast5_internal.h"
#include "codec/wzx/wzx_rec5.h"

#ifdef WZ_HAVE_AVX2_PATH
#include <immintrin.h>

#define AVX2_TARGET __attribute__((target("avx2")))
#define CHUNK 32 /* tokens whose group values stay in registers (8 vectors) */

/* d (4 tokens' digits) times the place value (lo, hi halves) added to a. */
#define MADD4(a, d, lo, hi)                                                                      \
	do {                                                                                     \
		__m256i dd_ = _mm256_cvtepu16_epi64(_mm_loadl_epi64((const __m128i *)(const void *)(d))); \
		a = _mm256_add_epi64(a, _mm256_add_epi64(_mm256_mul_epu32(dd_, lo),               \
							 _mm256_slli_epi64(_mm256_mul_epu32(dd_, hi), 32))); \
	} while (0)

/* The group values of tokens k0 .. k0 + 31 for group g into v, eight
 * vectors of four kept in registers (an array of them was kept in memory
 * and zeroed with rep stos for every group: 8% of the restore). */
AVX2_TARGET static inline __attribute__((always_inline)) void
group32(const wzx_rec5 *p, int g, const uint16_t *dig, int n, int k0, uint64_t *v)
{
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
	for (int e = p->first[g]; e < p->first[g + 1]; e++) {
		const uint16_t *d = dig + (size_t)p->q[e] * n + k0;
		const __m256i lo = _mm256_set1_epi64x((long long)(p->pv[e] & 0xffffffffu));
		const __m256i hi = _mm256_set1_epi64x((long long)(p->pv[e] >> 32));
		MADD4(a0, d, lo, hi);
		MADD4(a1, d + 4, lo, hi);
		MADD4(a2, d + 8, lo, hi);
		MADD4(a3, d + 12, lo, hi);
		MADD4(a4, d + 16, lo, hi);
		MADD4(a5, d + 20, lo, hi);
		MADD4(a6, d + 24, lo, hi);
		MADD4(a7, d + 28, lo, hi);
	}
	_mm256_storeu_si256((__m256i *)(void *)(v + 0), a0);
	_mm256_storeu_si256((__m256i *)(void *)(v + 4), a1);
	_mm256_storeu_si256((__m256i *)(void *)(v + 8), a2);
	_mm256_storeu_si256((__m256i *)(void *)(v + 12), a3);
	_mm256_storeu_si256((__m256i *)(void *)(v + 16), a4);
	_mm256_storeu_si256((__m256i *)(void *)(v + 20), a5);
	_mm256_storeu_si256((__m256i *)(void *)(v + 24), a6);
	_mm256_storeu_si256((__m256i *)(void *)(v + 28), a7);
}

AVX2_TARGET void wzc_wzx_rec5_avx2_records(const fast32 *t, int n, const uint16_t *dig, uint8_t *records)
{
	const wzx_rec5 *p = t->rec5;
	int ng = p->ng, B = p->B, sb = p->sb;
	/* where each field lies in the 64-bit words after the scale codes: the
	 * same for every token, so the writing below has no branch */
	int wi[WZC_REC5_AVX2_GROUPS];
	uint8_t sh[WZC_REC5_AVX2_GROUPS];
	uint64_t spill[WZC_REC5_AVX2_GROUPS], keep[WZC_REC5_AVX2_GROUPS];
	uint64_t words[WZC_REC5_AVX2_GROUPS + 2] = { 0 };
	for (int g = 0, off = 0; g < ng; off += p->k[g++]) {
		wi[g] = off / 64;
		sh[g] = (uint8_t)(off % 64);
		spill[g] = sh[g] + p->k[g] > 64 ? ~0ull : 0;
		keep[g] = sh[g] + p->k[g] >= 64 ? 0 : ~0ull;
	}
	uint64_t v[CHUNK], w[CHUNK][WZC_REC5_AVX2_GROUPS];
	for (int k0 = 0; k0 < n; k0 += CHUNK) {
		/* fields by group (tokens in a vector), then written by token */
		for (int g = 0; g < ng; g++) {
			group32(p, g, dig, n, k0, v);
			int k = p->k[g];
			uint64_t M = p->M[g], rlo = p->rlo[g];
			for (int c = 0; c < CHUNK; c++)
				w[c][g] = wzc_wzx_field(v[c], k, M, rlo);
		}
		for (int c = 0; c < CHUNK; c++) {
			uint8_t *rec = records + (size_t)(k0 + c) * B;
			for (int i = 0; i < sb; i++)
				rec[i] = (uint8_t)dig[(size_t)i * n + k0 + c];
			uint64_t cur = 0;
			for (int g = 0; g < ng; g++) {
				uint64_t x = w[c][g];
				cur |= x << sh[g];
				words[wi[g]] = cur;
				/* the bits past the word (x >> (64 - sh), 0 at sh 0) */
				cur = (cur & keep[g]) | ((x >> 1 >> (63 - sh[g])) & spill[g]);
			}
			words[wi[ng - 1] + 1] = cur;
			memcpy(rec + sb, words, (size_t)(B - sb));
		}
	}
}
#endif
