/* One token's wz record to its rANS symbols and back, exactly: the digits of
 * each mixed-radix group, and the record the wz encoder writes for given
 * digits (docs/wz-format.md, "Record").  Static inline and WZ_HD so a GPU
 * restore kernel can share them with the C reference. */
#ifndef WZC_WZX_TOKEN_H
#define WZC_WZX_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wz/wz_flat.h"

/* The digits of a record's groups, in coding order (nentries of them). */
static inline WZ_HD void wzc_wzx_digits(const wzc_wz_flat *f, const uint8_t *rec, uint32_t *dig)
{
	for (int g = 0; g < f->ngroups; g++) {
		int k = f->gbits[g];
		uint64_t x = k ? wzc_read_bits(rec, f->goff[g], k) << (64 - k) : 0;
		for (int i = f->gstart[g]; i < f->gstart[g + 1]; i++)
			x = wzc_frac_mul(x, f->nlev[i], &dig[i]);
	}
}

/* ORs v (< 2^k) into a zeroed record at bit offset off, LSB first. */
static inline WZ_HD void wzc_wzx_put_bits(uint8_t *rec, uint32_t off, int k, uint64_t v)
{
	unsigned __int128 w = (unsigned __int128)v << (off & 7);
	uint8_t *p = rec + (off >> 3);
	for (int i = 0; i < k + (int)(off & 7); i += 8)
		*p++ |= (uint8_t)(w >> i);
}

/* The record of B bytes the wz encoder writes for these scale codes and
 * digits: per group w = ceil(V 2^k / M), unused bits 0. */
static inline WZ_HD void wzc_wzx_record(const wzc_wz_flat *f, size_t B, const uint8_t *scales,
					const uint32_t *dig, uint8_t *rec)
{
	for (size_t i = 0; i < B; i++)
		rec[i] = 0;
	for (int i = 0; i < f->scale_bytes; i++)
		rec[i] = scales[i];
	for (int g = 0; g < f->ngroups; g++) {
		uint64_t V = 0, M = 1;
		for (int i = f->gstart[g]; i < f->gstart[g + 1]; i++) {
			V = V * f->nlev[i] + dig[i];
			M *= f->nlev[i];
		}
		int k = f->gbits[g];
		uint64_t w = (uint64_t)((((unsigned __int128)V << k) + M - 1) / M);
		wzc_wzx_put_bits(rec, f->goff[g], k, w);
	}
}

/* The high 64 bits of a x b. */
static inline WZ_HD uint64_t wzc_mulhi64(uint64_t a, uint64_t b)
{
#ifdef __CUDA_ARCH__
	return __umul64hi(a, b);
#else
	return (uint64_t)(((unsigned __int128)a * b) >> 64);
#endif
}

/* A group's field w = ceil(V 2^k / M) for V < M, 1 <= k <= 64 and
 * 2^(k-1) < M <= 2^k, without a division: with D = 2^k - M (< M) and
 * R = floor(2^128 D / M) (wzc_wzx_field_recip: rhi, rlo its halves),
 * w = V + ceil(V R / 2^128).  Why: V 2^k / M = V + V D / M, and with
 * y = V D / M = a + r / M (0 <= r < M), V R / 2^128 lies in (y - V / 2^128, y],
 * a window narrower than 2^-64 <= 1 / M; so it is above a where r > 0 and
 * in (a - 2^-64, a] where r = 0, and its ceiling is y's.  Two 64 x 64-bit
 * products and no correction step.  The value wzc_wzx_record's division
 * gives for every V < M (tests/codec/test_wzx_records checks edge and
 * random cases). */
static inline WZ_HD uint64_t wzc_wzx_field(uint64_t V, uint64_t rhi, uint64_t rlo)
{
	/* V R = (b1 2^64 + b0) 2^64 + a1 2^64 + a0 */
#ifdef __CUDA_ARCH__
	uint64_t a0 = V * rlo, a1 = wzc_mulhi64(V, rlo), b0 = V * rhi, b1 = wzc_mulhi64(V, rhi);
	uint64_t mid = b0 + a1;
	return V + b1 + (mid < b0) + ((mid | a0) != 0);
#else
	unsigned __int128 a = (unsigned __int128)V * rlo, b = (unsigned __int128)V * rhi + (uint64_t)(a >> 64);
	return V + (uint64_t)(b >> 64) + (((uint64_t)b | (uint64_t)a) != 0);
#endif
}

#ifndef __CUDA_ARCH__
/* R's halves for a group of k bits and M levels in all; -1 where M is not
 * in (2^(k-1), 2^k] (the field then needs the division). */
static inline int wzc_wzx_field_recip(int k, uint64_t M, uint64_t *rhi, uint64_t *rlo)
{
	if (k < 1 || k > 64 || M <= ((uint64_t)1 << (k - 1)) || (k < 64 && M > (uint64_t)1 << k))
		return -1;
	uint64_t D = k == 64 ? 0 - M : ((uint64_t)1 << k) - M; /* < M */
	unsigned __int128 hi = ((unsigned __int128)D << 64) / M, r = ((unsigned __int128)D << 64) % M;
	*rhi = (uint64_t)hi;
	*rlo = (uint64_t)((r << 64) / M);
	return 0;
}
#endif

#endif
