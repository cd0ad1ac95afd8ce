/* The wz rate plan of one layer as flat arrays in one memory block (so a
 * GPU gets it with one copy), and the per-group and per-token decode steps
 * as WZ_HD inline functions shared by the C reference and the CUDA kernels
 * (docs/wz-format.md, "Record"). */
#ifndef WZC_WZ_FLAT_H
#define WZC_WZ_FLAT_H

#include <stddef.h>
#include <stdint.h>

#include "codec/formats/fpconv.h"
#include "codec/profile/rope.h"
#include "codec/wz/wzt_trellis.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wzc_wz_flat {
	int R, P, nv;           /* nv = R + P; the anchor flags are components nv, nv + 1 */
	int scale_bytes, record_bytes;
	int ngroups, nentries, nones;
	const uint32_t *goff;   /* [ngroups] bit offset of each group in the record */
	const uint8_t *gbits;   /* [ngroups] */
	const int32_t *gstart;  /* [ngroups + 1] into the entries */
	const int32_t *comp;    /* [nentries] component of each entry, in coding order */
	const int32_t *part;    /* [nentries] 0 latent, 1 position */
	const uint32_t *nlev;   /* [nentries] */
	const float *sigma;     /* [nentries] */
	const uint32_t *tab;    /* [nentries] offset of the entry's level table in tables[] */
	const float *tables;
	const int32_t *ones;    /* [nones] components with a single level */
	const float *ones_lev;  /* [nones] that level */
	const float *ones_sigma;/* [nones] */
	const float *delta;     /* [nv] the anchor minus the mean, transformed (latent, position) */
	const float *scale_mult;/* [256] decoded scale of each scale code */
	float scale_ref[2];
	/* 1 when the profile undoes RoPE in this layer (docs/wz-format.md,
	 * "RoPE undone"): the records hold the position part rotated back, and
	 * the GPU kernels give it in the cache's domain, turned forward at each
	 * token's position (wzc_wz_rope_pair), from the position part's basis,
	 * mean and frequencies below (NULL when 0) */
	int rope_undone;
	const float *rope_basis; /* [P][P]: row k is component k's basis vector */
	const float *rope_mean;  /* [P] */
	const double *rope_freq; /* [P / 2] the inverse frequency of pair (2i, 2i + 1) */
	/* A trellis-coded plan (wzt-R, wzt8-R, wzt32-R; docs/wz-format.md,
	 * "Trellis-coded records"): nu is the trellis memory (0 for wz, whose
	 * fields below are unused), th0 and th1 the parity polynomials shifted
	 * right once (wzt_next_h), and cbt[i] the offset in tables[] of
	 * entry i's 2N-level union codebook, WZC_FLAT_SCALAR for an entry that
	 * is not on the trellis (a flag, or a component the scalar tables
	 * code).  Decoding then takes two steps: the groups' digits
	 * (wzc_wz_decode_group, one group per thread), then the state's walk
	 * over the trellis entries in coding order, split in runs over up to
	 * WZC_WZT_WALKERS threads (wzc_wzt_run_summary, wzc_wzt_run_walk;
	 * one thread walks them all as run 0 of 1). */
	int nu;
	uint32_t th0, th1;
	const uint32_t *cbt;    /* [nentries] */
	void *block;            /* the memory all pointers above point into */
	size_t block_bytes;
} wzc_wz_flat;

/* 64-bit fraction times a count: the high part is the digit, the low part
 * the remaining fraction (exact). */
static inline WZ_HD uint64_t wzc_frac_mul(uint64_t x, uint32_t n, uint32_t *digit)
{
#ifdef __CUDA_ARCH__
	*digit = (uint32_t)__umul64hi(x, (uint64_t)n);
	return x * (uint64_t)n;
#else
	unsigned __int128 p = (unsigned __int128)x * n;
	*digit = (uint32_t)(p >> 64);
	return (uint64_t)p;
#endif
}

/* k <= 64 bits at bit offset off, LSB first. */
static inline WZ_HD uint64_t wzc_read_bits(const uint8_t *rec, uint32_t off, int k)
{
	uint64_t v = 0;
	int got = 0;
	uint32_t byte = off >> 3;
	int sh = (int)(off & 7);
	while (got < k) {
		uint64_t b = (uint64_t)(rec[byte++] >> sh);
		v |= b << got;
		got += 8 - sh;
		sh = 0;
	}
	return k >= 64 ? v : v & (((uint64_t)1 << k) - 1);
}

/* The scale of part p of a record (0 for a missing position part). */
static inline WZ_HD float wzc_wz_scale(const wzc_wz_flat *f, const uint8_t *rec, int p)
{
	if (p == 1 && f->P == 0)
		return 0.0f;
	return f->scale_mult[rec[p]] * f->scale_ref[p];
}

#define WZC_FLAT_SCALAR 0xFFFFFFFFu

/* Decodes group g: y[c] for its components, flags[] for the anchor flags.
 * In a trellis-coded plan (f->nu > 0) a trellis entry's level needs the
 * state, which follows from every digit before it: its digit goes to its
 * component's place y[c] as the bits of a float (wzc_f32_from_bits), for
 * the trellis walk (wzc_wzt_run_walk) to read and replace (no buffer beyond y, so the fused
 * attention's tiles decode in place too). */
static inline WZ_HD void wzc_wz_decode_group(const wzc_wz_flat *f, const uint8_t *rec, int g,
					     const float *s, float *y, uint32_t *flags)
{
	int k = f->gbits[g];
	uint64_t x = wzc_read_bits(rec, f->goff[g], k) << (64 - k);
	for (int i = f->gstart[g]; i < f->gstart[g + 1]; i++) {
		uint32_t digit;
		x = wzc_frac_mul(x, f->nlev[i], &digit);
		int c = f->comp[i];
		if (c >= f->nv)
			flags[c - f->nv] = digit;
		else if (f->nu && f->cbt[i] != WZC_FLAT_SCALAR)
			y[c] = wzc_f32_from_bits(digit);
		else
			y[c] = f->tables[f->tab[i] + digit] * f->sigma[i] * s[f->part[i]];
	}
}

/* The walk split over threads.  A trellis step is affine over GF(2):
 * wzt_next_h(s, b) = A s xor b H1 with A s = wzt_next_h(s, 0), so walking
 * a run of m trellis entries from state s ends in A^m s xor e, e the end
 * of the same run from state 0.  Each of `w` walkers takes a run of the
 * entries (wzc_wzt_run), walks it from 0 for e and carries the images of
 * the state bits under A alongside (wzc_wzt_run_summary); then each
 * composes the runs before its own into its start state
 * (wzc_wzt_run_start) and walks its run again from there, writing the
 * values (wzc_wzt_run_walk).  The states are the single walk's, so the
 * values are bit for bit its values; two passes of n / w entries replace
 * one of n.  WZC_WZT_WALKERS bounds w (the summaries' room per token). */
#define WZC_WZT_WALKERS 16

/* The state-bit images of a run: byte k is A^m applied to state 1 << k
 * (nu <= 8, so a state fits a byte). */
typedef struct {
	uint64_t cols;
	uint32_t end0;
} wzc_wzt_summary;

/* Entries [*i0, *i1) are run j of w (runs of entries, trellis or not, as
 * even as whole entries allow). */
static inline WZ_HD void wzc_wzt_run(const wzc_wz_flat *f, int j, int w, int *i0, int *i1)
{
	*i0 = (int)((int64_t)f->nentries * j / w);
	*i1 = (int)((int64_t)f->nentries * (j + 1) / w);
}

/* A applied to eight states at once, one a byte (the form of wzt_next_h
 * with b = 0, each byte shifted right and, where its low bit was set,
 * xored with H0). */
static inline WZ_HD uint64_t wzc_wzt_step8(uint64_t x, uint32_t th0)
{
	uint64_t low = x & 0x0101010101010101ull;
	return ((x >> 1) & 0x7F7F7F7F7F7F7F7Full) ^ ((low * 0xFFu) & (0x0101010101010101ull * th0));
}

/* Run j of w from state 0, over the digits wzc_wz_decode_group left in y. */
static inline WZ_HD wzc_wzt_summary wzc_wzt_run_summary(const wzc_wz_flat *f, const float *y,
							 int j, int w)
{
	int i0, i1;
	wzc_wzt_run(f, j, w, &i0, &i1);
	uint32_t state = 0;
	uint64_t cols = 0x8040201008040201ull; /* byte k: 1 << k */
	for (int i = i0; i < i1; i++) {
		if (f->cbt[i] == WZC_FLAT_SCALAR)
			continue;
		uint32_t d = wzc_f32_bits(y[f->comp[i]]);
		state = wzt_next_h(state, d & 1, f->th0, f->th1);
		cols = wzc_wzt_step8(cols, f->th0);
	}
	wzc_wzt_summary r = { cols, state };
	return r;
}

/* The state run j starts in, from the summaries of runs 0..j-1. */
static inline WZ_HD uint32_t wzc_wzt_run_start(const wzc_wzt_summary *sum, int j)
{
	uint32_t s = 0;
	for (int r = 0; r < j; r++) {
		uint32_t t = sum[r].end0;
		for (int k = 0; k < 8; k++)
			if (s >> k & 1)
				t ^= (uint32_t)(sum[r].cols >> (8 * k)) & 0xFF;
		s = t;
	}
	return s;
}

/* Run j of w from state `state`: each trellis entry's component is read
 * once (its digit) and then written with its value: digit d in state s
 * names level 2 d + (s & 1) of the entry's union codebook
 * (wzt_level_index), and its low bit is the branch to the next state. */
static inline WZ_HD void wzc_wzt_run_walk(const wzc_wz_flat *f, const float *s, float *y, int j,
					  int w, uint32_t state)
{
	int i0, i1;
	wzc_wzt_run(f, j, w, &i0, &i1);
	for (int i = i0; i < i1; i++) {
		if (f->cbt[i] == WZC_FLAT_SCALAR)
			continue;
		int c = f->comp[i];
		uint32_t d = wzc_f32_bits(y[c]);
		y[c] = f->tables[f->cbt[i] + wzt_level_index(state, d)] * f->sigma[i] * s[f->part[i]];
		state = wzt_next_h(state, d & 1, f->th0, f->th1);
	}
}

/* Component k of the transformed-domain output once y and flags are known. */
static inline WZ_HD float wzc_wz_transformed(const wzc_wz_flat *f, const float *y,
					     const uint32_t *flags, int k)
{
	return flags[k >= f->R] ? y[k] + f->delta[k] : y[k];
}

/* Pair i (values 2i and 2i + 1) of the position part in the cache's
 * domain, for a layer whose profile undoes RoPE, once y and flags are
 * known: each value is mean_j + sum_k basis[k][j] y~_k, with y~ the
 * transformed-domain values (wzc_wz_transformed), the sum a chain of fused
 * multiply-adds over k from 0 starting at 0 and the mean added after, as
 * the CPU's inverse transform sums (docs/wz-format.md, "Arithmetic"); then
 * the pair turned forward by position * freq_i (wzc_rope_turn_pair). */
static inline WZ_HD void wzc_wz_rope_pair(const wzc_wz_flat *f, const float *y,
					  const uint32_t *flags, int64_t position, int i,
					  float out[2])
{
	int R = f->R, P = f->P;
	float v[2];
	for (int h = 0; h < 2; h++) {
		int j = 2 * i + h;
		float acc = 0.0f;
		for (int k = 0; k < P; k++)
			acc = fmaf(wzc_wz_transformed(f, y, flags, R + k), f->rope_basis[(size_t)k * P + j],
				   acc);
		v[h] = acc + f->rope_mean[j];
	}
	wzc_rope_turn_pair(v, position, f->rope_freq[i], 1);
	out[0] = v[0];
	out[1] = v[1];
}

#ifdef __cplusplus
}
#endif

#endif
