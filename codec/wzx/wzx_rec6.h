/* Type 6 blocks' rANS step, static inline and WZ_HD so that the CUDA
 * restore kernel (codec/cuda/wzx_kernels.cu) and the CPU's portable loop
 * (codec/wzx/wzx_lanes6.c) take the same step: a coded place's table is
 * narrow (WZC_RANS6_BITS bits, one slot entry holding frequency, offset
 * and digit), type 5's 12-bit table (wzc_wzx5_step), or for a count over
 * 4096 type 2's uniform 16-bit table, its symbol by a division. */
#ifndef WZC_WZX_REC6_H
#define WZC_WZX_REC6_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx/wzx_rec5.h"

/* A coded place's table is narrow, M = 2^WZC_RANS6_BITS, where it has at
 * most WZC_RANS6_MAXN symbols, uniform over M = 2^16 where it has over
 * 4096, else type 5's M = 2^12. */
#define WZC_RANS6_BITS 9
#define WZC_RANS6_M (1u << WZC_RANS6_BITS)
#define WZC_RANS6_MAXN 64

typedef struct wzx_rec6 {
	/* the layer's narrow tables: per slot f << 12 | (slot - c) | s << 24
	 * (f < 2^12, s < 256); coded place q's at qoff[q] where qb[q] is
	 * WZC_RANS6_BITS, else the place reads type 5's tables (wzx_rec5) */
	const uint32_t *e;
	size_t nslots;
	uint32_t *qoff;    /* [S5] */
	uint8_t *qb;       /* [S5] WZC_RANS6_BITS, 12, or 16 (uniform) */
	uint32_t *qf, *qn; /* [S5] a uniform place's f = 2^16 / n and its count n (else 0) */
} wzx_rec6;

/* A uniform 16-bit place's symbol of slot: slot / f, the last symbol
 * taking the remainder; its start in *c and frequency in *fs. */
static inline WZ_HD uint32_t wzc_wzx6_uniform(uint32_t slot, uint32_t f, uint32_t n, uint32_t *c, uint32_t *fs)
{
	uint32_t s = slot / f;
	if (s > n - 1)
		s = n - 1;
	*c = s * f;
	*fs = s == n - 1 ? 65536u - (n - 1) * f : f;
	return s;
}

/* One symbol of a lane at coded place q: the state's step and the digit to
 * *dig; 1 where the state then needs a word (below 2^16). */
static inline WZ_HD int wzc_wzx6_step(const wzx_rec5 *p, const wzx_rec6 *p6, int q, uint32_t *x, uint16_t *dig)
{
	if (p6->qb[q] == 16) {
		uint32_t slot = *x & 0xffffu, c, fs;
		uint32_t s = wzc_wzx6_uniform(slot, p6->qf[q], p6->qn[q], &c, &fs);
		*x = fs * (*x >> 16) + slot - c;
		*dig = (uint16_t)s;
		return *x < (1u << 16);
	}
	if (p6->qb[q] != WZC_RANS6_BITS)
		return wzc_wzx5_step(p, q, x, dig);
	uint32_t slot = *x & (WZC_RANS6_M - 1u), e = p6->e[p6->qoff[q] + slot];
	*x = (e >> 12 & 0xfffu) * (*x >> WZC_RANS6_BITS) + (e & 0xfffu);
	*dig = (uint16_t)(e >> 24);
	return *x < (1u << 16);
}

#endif
