/* The wzt trellis (docs/wz-format.md, "Trellis-coded records"): Ungerboeck's
 * four-subset trellises for amplitude modulation as trellis-coded
 * quantization uses them, and the decoder's step, per element, in code C
 * and CUDA can share. */
#ifndef WZC_WZT_TRELLIS_H
#define WZC_WZT_TRELLIS_H

#include <stdint.h>

#if defined(__CUDACC__)
#define WZT_HD __host__ __device__
#else
#define WZT_HD
#endif

/* States of the wzt formats' trellis: 2^WZT_NU. */
#define WZT_NU 8
#define WZT_STATES (1 << WZT_NU)

/* Parity-check polynomials (octal) h0, h1 of Ungerboeck's codes for
 * one-dimensional (amplitude) modulation with four subsets, by memory nu =
 * 2..8: G. Ungerboeck, "Trellis-coded modulation with redundant signal sets,
 * part II", IEEE Commun. Mag. 25(2), 1987, Table I; the trellises of
 * Marcellin and Fischer, "Trellis coded quantization of memoryless and
 * Gauss-Markov sources", IEEE Trans. Commun. 38(1), 1990. */
static const uint16_t wzt_h0[9] = { 0, 0, 05, 013, 023, 045, 0103, 0235, 0515 };
static const uint16_t wzt_h1[9] = { 0, 0, 02, 04, 04, 010, 024, 0126, 0362 };

/* The union a state allows: 0 for D0 u D2 (even levels of the union
 * codebook), 1 for D1 u D3 (odd levels). */
static inline WZT_HD uint32_t wzt_union(uint32_t s)
{
	return s & 1;
}

/* wzt_next (below) with the polynomials given, shifted right once (H0 = h0 >> 1,
 * H1 = h1 >> 1), and b 0 or 1: the form of a decoder that holds them with
 * its plan (a GPU reads them from device memory, not from wzt_h0). */
static inline WZT_HD uint32_t wzt_next_h(uint32_t s, uint32_t b, uint32_t H0, uint32_t H1)
{
	return (s >> 1) ^ (H0 & (0u - (s & 1))) ^ (H1 & (0u - b));
}

/* The systematic feedback encoder in observer form: the subset taken is
 * j = 2 b + wzt_union(s), and the parity check h1(D) z1 + h0(D) z0 = 0
 * (z1 = b, z0 = the union) moves the register to the next state. */
static inline WZT_HD uint32_t wzt_next(int nu, uint32_t s, uint32_t b)
{
	return wzt_next_h(s, b != 0, (uint32_t)(wzt_h0[nu] >> 1), (uint32_t)(wzt_h1[nu] >> 1));
}

/* Up to 8 states (nu <= 3) the whole transition table fits 64 bits, 4
 * bits an entry at bit 8 s + 4 b, so that a decoder's state moves by a
 * shift and a mask (wzt_next_in): a shorter dependency chain per step
 * than wzt_next's arithmetic, with the same states. */
#define WZT_NU_IN_WORD 3
static inline WZT_HD uint64_t wzt_next_table(int nu)
{
	uint64_t t = 0;
	for (uint32_t s = 0; s < (1u << nu); s++)
		for (uint32_t b = 0; b < 2; b++)
			t |= (uint64_t)wzt_next(nu, s, b) << (8 * s + 4 * b);
	return t;
}

static inline WZT_HD uint32_t wzt_next_in(uint64_t table, uint32_t s, uint32_t b)
{
	return (uint32_t)(table >> (8 * s + 4 * b)) & 0xF;
}

/* One decoder step: digit d (radix N) of a trellis component in state s
 * names level 2 d + union(s) of its 2N-level union codebook; its low bit
 * is the branch taken. */
static inline WZT_HD uint32_t wzt_level_index(uint32_t s, uint32_t d)
{
	return 2 * d + wzt_union(s);
}

#endif
