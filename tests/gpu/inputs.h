/* Test inputs shared by the GPU kernels' CPU emulation test and the GPU
 * test: shuffled paged slots and adversarial tokens. */
#ifndef WZ_TEST_GPU_INPUTS_H
#define WZ_TEST_GPU_INPUTS_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "codec/cuda/paged_baseline.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static inline uint64_t next_u64(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A permutation of the slots of npages pages (the first n are used):
 * tokens land in pages out of order, as a serving stack's block table puts
 * them.  The caller frees the result. */
static inline int64_t *shuffled_slots(int n, int npages)
{
	int64_t *s = (int64_t *)malloc(sizeof(int64_t) * (size_t)npages * WZK_PAGE_TOKENS);
	for (int i = 0; i < npages * WZK_PAGE_TOKENS; i++)
		s[i] = i;
	for (int i = npages * WZK_PAGE_TOKENS - 1; i > 0; i--) {
		int j = (int)(next_u64() % (uint64_t)(i + 1));
		int64_t t = s[i];
		s[i] = s[j];
		s[j] = t;
	}
	(void)n;
	return s;
}

/* Tokens built to hit every special case of the conversions and the
 * scale rules. */
static inline void adversarial(int R, int P, int n, float *lat, float *rope)
{
	const float special[] = { 0.0f, -0.0f, 1e-40f, -1e-45f, FLT_MIN, 5.9e-8f, 3e-5f,
				  65504.0f, 65520.0f, 1e30f, -FLT_MAX, INFINITY, -INFINITY,
				  NAN, -NAN, 448.0f, 464.0f, 6.0f, 0.25f, 0.75f, 1.25f };
	const int nsp = (int)(sizeof special / sizeof special[0]);
	for (int t = 0; t < n; t++)
		for (int k = 0; k < R + P; k++) {
			float v;
			switch (t % 8) {
			case 0: /* all zero: +0 first in every group, some -0 (also
				 * last in some groups: int4's zero point keeps the
				 * first of equal minima, as the reference does) */
				v = (k % 64 == 0 || k % 5) ? 0.0f : -0.0f;
				break;
			case 1: /* one special value per token, in different places */
				v = k == (t * 37) % (R + P) ? special[(t / 8) % nsp] : 0.01f * (k % 5);
				break;
			case 2: /* subnormal magnitudes only */
				v = (float)(k % 9 - 4) * 1e-41f;
				break;
			case 3: /* huge values past fp16's range */
				v = (float)(k % 7 - 3) * 3e38f;
				break;
			case 4: /* a special value at the start of every group */
				v = k % 16 == 0 ? special[(k / 16 + t) % nsp] : (float)(k % 11) - 5.0f;
				break;
			case 5: /* a mix of everything */
				v = special[(k + t) % nsp];
				break;
			case 6: /* constant groups (int4: zero range) */
				v = 1.5f;
				break;
			default: /* random bit patterns */
				v = wzc_f32_from_bits((uint32_t)next_u64());
				break;
			}
			if (k < R)
				lat[(size_t)t * R + k] = v;
			else
				rope[(size_t)t * P + (k - R)] = v;
		}
}

#endif
