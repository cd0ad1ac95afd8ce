/* The steps of the CUDA restore of wzx type 5 and 6 blocks to wz records
 * (codec/cuda/wzx_kernels.cu), static inline and WZ_HD so that the CPU
 * emulation (tests/gpu/test_wzx_kernels_cpu.c) runs them too: one warp per
 * block, lane L holding rANS lane L's state; a round is 32 consecutive
 * symbols (place-major: coded place q, token k of symbol i = q n + k), each
 * lane's step by wzc_wzx5_step or wzc_wzx6_step (codec/wzx/wzx_rec5.h,
 * wzx_rec6.h, the CPU portable loops'), then the lanes below 2^16 take the next 16-bit words in lane
 * order (their rank among those lanes, a ballot's prefix count on the
 * GPU); then each token's record by wzc_wzx_rec5_token. */
#ifndef WZC_CUDA_WZX_RESTORE_H
#define WZC_CUDA_WZX_RESTORE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx/wzx_rec5.h"
#include "codec/wzx/wzx_rec6.h"

#define WZK_WZX_LANES 32
#define WZK_WZX_TOKENS 64 /* a block's tokens at most */

/* Lane `lane`'s state from the payload's head (size checked by the caller). */
static inline WZ_HD uint32_t wzk_wzx5_state(const uint8_t *pay, int lane)
{
	const uint8_t *q = pay + 4 * lane;
	return (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
}

/* The lane's symbol of the round from symbol `base` (N in all, n tokens a
 * place) into dig[q * n + k]; 1 where its state then needs a word.  p6:
 * type 6's narrow tables, NULL for type 5. */
static inline WZ_HD int wzk_wzx5_lane(const wzx_rec5 *p, const wzx_rec6 *p6, int n, long base, long N, int lane,
				      uint32_t *x, uint16_t *dig)
{
	long i = base + lane;
	if (i >= N)
		return 0;
	int q = (int)(i / n), k = (int)(i % n);
	return p6 ? wzc_wzx6_step(p, p6, q, x, &dig[(size_t)q * n + k]) : wzc_wzx5_step(p, q, x, &dig[(size_t)q * n + k]);
}

/* The word of a lane of rank `rank` among the round's readers, the round's
 * words starting at byte pos; -1 past the payload's end (size). */
static inline WZ_HD int wzk_wzx5_refill(uint32_t *x, const uint8_t *pay, size_t size, size_t pos, int rank)
{
	size_t at = pos + 2 * (size_t)rank;
	if (at + 2 > size)
		return -1;
	*x = *x << 16 | (uint32_t)pay[at] | (uint32_t)pay[at + 1] << 8;
	return 0;
}

#endif
