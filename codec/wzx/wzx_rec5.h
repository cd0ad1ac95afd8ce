/* Type 5 blocks to wz records from their digits: the layer's plan (each
 * group's bits, levels and reciprocal, each coded entry's place and place
 * value) and one token's record from a block's place-major digits, static
 * inline and WZ_HD so that the CUDA restore kernel (codec/cuda/wzx_kernels.cu)
 * runs the same steps as the CPU (codec/wzx/wzx_records5.c). */
#ifndef WZC_WZX_REC5_H
#define WZC_WZX_REC5_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx/wzx_token.h"

/* A group's value is V = (..(d1 N2 + d2) N3 ..) Nn + dn; its entries of
 * more than one level are cut, from the last up, into pieces whose levels
 * multiply to less than 2^32, so that a piece's value P (the sum of digit x
 * place value in the piece) is a 32-bit sum in any order, and
 * V = (..(P1 M2 + P2) M3 ..) + Pm over the group's pieces, M the piece's
 * levels in all.  Its field is wzc_wzx_field of V.  The fields lie end to
 * end from bit 8 sb (checked when the plan is made). */
typedef struct wzx_rec5 {
	int ng, sb, S5;
	int B;             /* record bytes */
	/* the layer's 12-bit rANS tables (borrowed from its type 4/5 tables):
	 * per slot (f - 1) << 12 | (slot - c) (and the symbol's low byte at
	 * << 24), and the symbol; coded place q's table at qoff[q] */
	const uint32_t *fb;
	const uint16_t *sym;
	size_t nslots;
	uint32_t *qoff;    /* [S5] */
	int32_t *gp;       /* [ng + 1] the group's pieces, gp[g] .. gp[g + 1] - 1, the last (least significant) first */
	int32_t *pe;       /* [np + 1] the piece's entries in q and pv, pe[j] .. pe[j + 1] - 1 */
	uint64_t *pm;      /* [np] the piece's levels in all (below 2^32) */
	int32_t *q;        /* coded place (row of the digits) of each entry of more than one level */
	uint32_t *pv;      /* its place value in its piece */
	uint8_t *k;        /* [ng] the group's bits */
	uint64_t *rhi, *rlo; /* [ng] wzc_wzx_field_recip's R */
} wzx_rec5;

/* Piece j's value of token tok from dig[q * n + tok]. */
static inline WZ_HD uint32_t wzc_wzx_rec5_piece(const wzx_rec5 *p, const uint16_t *dig, int n, int tok, int j)
{
	uint32_t P = 0;
	for (int e = p->pe[j]; e < p->pe[j + 1]; e++)
		P += (uint32_t)dig[(size_t)p->q[e] * n + tok] * p->pv[e];
	return P;
}

/* One symbol of a lane at coded place q: its slot's entry, the state's
 * step, the digit to *dig; 1 where the state then needs a word (below
 * 2^16).  The portable loop's and the CUDA kernel's step. */
static inline WZ_HD int wzc_wzx5_step(const wzx_rec5 *p, int q, uint32_t *x, uint16_t *dig)
{
	uint32_t base = p->qoff[q], slot = *x & 4095u, e = p->fb[base + slot];
	*x = ((e >> 12 & 0xfffu) + 1) * (*x >> 12) + (e & 0xfffu);
	*dig = p->sym[base + slot];
	return *x < (1u << 16);
}

/* Token tok's record (B bytes) from dig[q * n + tok] (the block's n
 * tokens' digits, place by place; scale codes in rows 0 .. sb - 1):
 * scale codes, then each group's field, LSB first, unused bits 0. */
static inline WZ_HD void wzc_wzx_rec5_token(const wzx_rec5 *p, const uint16_t *dig, int n, int tok,
					     uint8_t *rec)
{
	int pos = 0;
	for (; pos < p->sb; pos++)
		rec[pos] = (uint8_t)dig[(size_t)pos * n + tok];
	uint64_t acc = 0; /* fewer than 8 bits wait in it between pushes */
	int na = 0;
	for (int g = 0; g < p->ng; g++) {
		uint64_t V = 0;
		for (int j = p->gp[g + 1] - 1; j >= p->gp[g]; j--)
			V = V * p->pm[j] + wzc_wzx_rec5_piece(p, dig, n, tok, j);
		int k = p->k[g];
		uint64_t w = wzc_wzx_field(V, p->rhi[g], p->rlo[g]);
		/* pushed 32 bits at a time, so acc never passes 40 bits */
		for (int h = 0; h < k; h += 32) {
			int nb = k - h < 32 ? k - h : 32;
			acc |= (w >> h & 0xffffffffu) << na;
			na += nb;
			while (na >= 8) {
				rec[pos++] = (uint8_t)acc;
				acc >>= 8;
				na -= 8;
			}
		}
	}
	if (na)
		rec[pos++] = (uint8_t)acc;
	for (; pos < p->B; pos++)
		rec[pos] = 0;
}

#endif
