/* The fast wz encoder: the reference's arithmetic (codec/wz_codec.c,
 * wzc_wz_encode_layer_ref) reorganized for speed, same bytes.  A block of
 * tokens is transposed so that the per-token sums (each still over the
 * values in order) run in vector lanes, one token per lane; the transform
 * is one matrix product restricted to the components with more than one
 * level; levels come from a grid, not a search; the groups' fields go out
 * through a bit buffer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_internal.h"
#include "codec/wz_gemm.h"
#include "codec/wz_plan.h"

typedef unsigned __int128 u128;

/* Vectorized at -O3; never contracted to fused multiply-adds (the sums of
 * squares decide the anchor flag and the scale code). */
#if defined(__GNUC__) && !defined(__clang__)
#define WZ_HOT __attribute__((optimize("O3", "fp-contract=off")))
#if defined(__x86_64__) && defined(__GLIBC__)
#define WZ_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#else
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#define WZ_HOT
#endif
#ifndef WZ_CLONES
#define WZ_CLONES
#endif

#define BLOCK 64

/* Anchor flags, scale codes and the centred, scaled values of nb <= BLOCK
 * tokens x[t][i], written transposed: xt[i][t] (lanes past nb are zero). */
WZ_HOT WZ_CLONES static void prepare_part(const float *scale_mult, const wzc_part_profile *pp,
					  int can_flag, int m, int nb, const float *x,
					  float *xt /* OUT [m][BLOCK] */,
					  uint8_t *flag /* OUT [BLOCK] */,
					  uint8_t *code /* OUT [BLOCK] */)
{
	const float *mean = pp->mean, *anchor = pp->anchor;
	double dm[BLOCK], da[BLOCK];
	float inv[BLOCK];
	int use_anchor[BLOCK];
	/* transposed in tiles of 16 values x the block's tokens, which stay
	 * in the first-level cache */
	for (int i0 = 0; i0 < m; i0 += 16) {
		int ni = m - i0 < 16 ? m - i0 : 16;
		float tile[16][BLOCK];
		for (int t = 0; t < nb; t++) {
			const float *src = x + (size_t)t * m + i0;
			for (int i = 0; i < ni; i++)
				tile[i][t] = src[i];
		}
		for (int i = 0; i < ni; i++) {
			float *dst = xt + (size_t)(i0 + i) * BLOCK;
			for (int t = 0; t < nb; t++)
				dst[t] = tile[i][t];
			for (int t = nb; t < BLOCK; t++)
				dst[t] = 0.0f;
		}
	}
	for (int t = 0; t < BLOCK; t++)
		dm[t] = da[t] = 0;
	for (int i = 0; i < m; i++) {
		const float *row = xt + (size_t)i * BLOCK;
		float mi = mean[i], ai = anchor[i];
		for (int t = 0; t < BLOCK; t++) {
			double a = row[t] - mi, b = row[t] - ai;
			dm[t] += a * a;
			da[t] += b * b;
		}
	}
	for (int t = 0; t < BLOCK; t++) {
		use_anchor[t] = can_flag && da[t] < dm[t];
		/* The reference's sum of squares about the chosen base is the
		 * same sum over the same values in the same order as dm or da:
		 * the same double, without a third pass. */
		double ss = use_anchor[t] ? da[t] : dm[t];
		uint8_t cd = wzc_scale_code(sqrt(ss / m), pp->scale_ref);
		float s = scale_mult[cd] * pp->scale_ref;
		inv[t] = s > 0 ? 1.0f / s : 0;
		flag[t] = (uint8_t)use_anchor[t];
		code[t] = cd;
	}
	for (int i = 0; i < m; i++) {
		float *row = xt + (size_t)i * BLOCK;
		float mi = mean[i], ai = anchor[i];
		for (int t = 0; t < BLOCK; t++) {
			float c = row[t] - (use_anchor[t] ? ai : mi);
			row[t] = c * inv[t];
		}
	}
}

/* z = y / sigma over a token's coded components (0 where sigma is not
 * positive), as the reference divides. */
WZ_HOT WZ_CLONES static void standardize(int nc, const float *y, const float *sigma, float *z)
{
	for (int j = 0; j < nc; j++)
		z[j] = sigma[j] > 0 ? y[j] / sigma[j] : 0;
}

/* ceil(V * 2^kb / M) for V < M <= 2^kb, kb in 1..64: the quotient fits in
 * 64 bits, so one hardware division does on x86-64. */
static inline uint64_t field_word(uint64_t V, int kb, uint64_t M)
{
	u128 num = ((u128)V << kb) + (M - 1);
#if defined(__GNUC__) && defined(__x86_64__)
	uint64_t q, r, lo = (uint64_t)num, hi = (uint64_t)(num >> 64);
	__asm__("divq %4" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), "rm"(M) : "cc");
	(void)r;
	return q;
#else
	return (uint64_t)(num / M);
#endif
}

static inline void store64(uint8_t *p, uint64_t v)
{
	for (int b = 0; b < 8; b++)
		p[b] = (uint8_t)(v >> (8 * b));
}

void wzc_wz_encode_layer(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			 const float *rope, uint8_t *records, size_t record_bytes)
{
	const layer_plan *lp = &plan->layers[layer];
	const wzc_profile *pr = plan->profile;
	const wzc_part_profile *parts[2] = { &pr->latent[layer], &pr->rope[layer] };
	int R = plan->R, P = plan->P, width[2] = { R, P };
	const float *src[2] = { latent, rope };
	int mmax = R > P ? R : P, nc = lp->ncod[0] + lp->ncod[1];
	float *xt = malloc(sizeof(float) * (size_t)BLOCK * mmax);
	float *yc[2] = { malloc(sizeof(float) * (size_t)BLOCK * lp->ldc[0]),
			 malloc(sizeof(float) * (size_t)BLOCK * lp->ldc[1]) };
	/* digits of the coded components in list order, then the two flags */
	uint32_t *dig = malloc(sizeof(uint32_t) * (size_t)(nc + 2));
	float *z = malloc(sizeof(float) * (size_t)(nc + 1));
	uint64_t *gM = malloc(sizeof(uint64_t) * (size_t)(lp->ngroups + 1));
	if (!xt || !yc[0] || !yc[1] || !dig || !z || !gM) {
		free(xt);
		free(yc[0]);
		free(yc[1]);
		free(dig);
		free(z);
		free(gM);
		/* the reference needs less memory */
		wzc_wz_encode_layer_ref(plan, layer, n, latent, rope, records, record_bytes);
		return;
	}
	for (int g = 0; g < lp->ngroups; g++) {
		uint64_t M = 1;
		for (int i = lp->gstart[g]; i < lp->gstart[g + 1]; i++)
			M *= lp->nlev[lp->order[i]];
		gM[g] = M;
	}
	for (int t0 = 0; t0 < n; t0 += BLOCK) {
		int nb = n - t0 < BLOCK ? n - t0 : BLOCK;
		uint8_t code[2][BLOCK], flag[2][BLOCK];
		memset(code[1], 0, sizeof code[1]);
		memset(flag[1], 0, sizeof flag[1]);
		for (int p = 0; p < 2; p++) {
			int m = width[p];
			if (!m)
				continue;
			prepare_part(plan->scale_mult[p], parts[p], lp->nlev[R + P + p] == 2, m, nb,
				     src[p] + (size_t)t0 * m, xt, flag[p], code[p]);
			if (lp->ncod[p])
				wzc_gemm(nb, m, lp->ncod[p],
					 lp->basis_c[p] ? lp->basis_c[p] : lp->basis_t[p], lp->ldc[p],
					 xt, 1, BLOCK, yc[p], lp->ldc[p]);
		}
		for (int t = 0; t < nb; t++) {
			uint8_t *rec = records + (size_t)(t0 + t) * record_bytes;
			memset(rec, 0, record_bytes);
			rec[0] = code[0][t];
			if (P)
				rec[1] = code[1][t];
			standardize(lp->ncod[0], yc[0] + (size_t)t * lp->ldc[0], lp->sigma_c, z);
			standardize(lp->ncod[1], yc[1] + (size_t)t * lp->ldc[1],
				    lp->sigma_c + lp->ncod[0], z + lp->ncod[0]);
			wzc_quantize_batch(&lp->qb, z, dig);
			dig[nc] = flag[0][t];
			dig[nc + 1] = flag[1][t];
			/* fields LSB first from the first byte after the scales */
			uint8_t *w = rec + plan->scale_bytes;
			u128 buf = 0;
			int nbits = 0;
			for (int g = 0; g < lp->ngroups; g++) {
				uint64_t V = 0;
				for (int i = lp->gstart[g]; i < lp->gstart[g + 1]; i++)
					V = V * lp->nlev[lp->order[i]] + dig[lp->order_c[i]];
				int kb = lp->gbits[g];
				buf |= (u128)field_word(V, kb, gM[g]) << nbits;
				nbits += kb;
				if (nbits >= 64) {
					store64(w, (uint64_t)buf);
					w += 8;
					buf >>= 64;
					nbits -= 64;
				}
			}
			for (; nbits > 0; nbits -= 8, buf >>= 8)
				*w++ = (uint8_t)buf;
		}
	}
	free(xt);
	free(yc[0]);
	free(yc[1]);
	free(dig);
	free(z);
	free(gM);
}
