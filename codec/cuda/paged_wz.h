/* The per-thread steps of the GPU decode of wz records from paged slots
 * into the transformed domain that attention reads, as WZ_HD inline
 * functions over the per-group code of codec/wz_flat.h: the CUDA kernel
 * (paged_kernels.cu) and the attention kernel's tile decode run them
 * between barriers, the CPU emulation (tests/gpu/emulate.h) in loops over
 * block and thread indices. */
#ifndef WZK_PAGED_WZ_H
#define WZK_PAGED_WZ_H

#include "codec/cuda/paged_baseline.h"
#include "codec/wz_flat.h"

/* Decode state of nt tokens being decoded together. */
typedef struct {
	float s[2];      /* the two part scales */
	uint32_t flags[2];
} wzk_wz_tok;

/* Step 1 for token t (of nt) at rec: its scales and cleared flags, and the
 * components with one level (thread turns over the token's nones). */
static inline WZ_HD void wzk_wz_begin(const wzc_wz_flat *f, const uint8_t *rec, int tid,
				      int nthr, wzk_wz_tok *st, float *y)
{
	/* every thread computes the scales itself: no barrier before step 2
	 * needs them in shared memory */
	float s0 = wzc_wz_scale(f, rec, 0), s1 = wzc_wz_scale(f, rec, 1);
	if (tid == 0) {
		st->s[0] = s0;
		st->s[1] = s1;
		st->flags[0] = st->flags[1] = 0;
	}
	for (int i = tid; i < f->nones; i += nthr)
		y[f->ones[i]] = f->ones_lev[i] * f->ones_sigma[i] * (f->ones[i] >= f->R ? s1 : s0);
}

/* Step 2: one group per thread turn. */
static inline WZ_HD void wzk_wz_groups(const wzc_wz_flat *f, const uint8_t *rec, int tid,
				       int nthr, wzk_wz_tok *st, float *y)
{
	float s[2] = { wzc_wz_scale(f, rec, 0), wzc_wz_scale(f, rec, 1) };
	for (int g = tid; g < f->ngroups; g += nthr)
		wzc_wz_decode_group(f, rec, g, s, y, st->flags);
}

/* Step 3: component k of the output (after steps 1 and 2 and a barrier). */
static inline WZ_HD float wzk_wz_value(const wzc_wz_flat *f, const wzk_wz_tok *st,
				       const float *y, int k)
{
	return wzc_wz_transformed(f, y, st->flags, k);
}

/* The stand-alone decode: block blk decodes token blk of the batch. */
typedef struct {
	wzc_wz_flat f;          /* pointers into device memory on the GPU */
	int n;
	const int64_t *slots;   /* [n], or NULL for records 0..n-1 */
	const uint8_t *pool;
	float *out;             /* [n][R + P], transformed domain */
} wzk_wz_dec_args;

static inline WZ_HD const uint8_t *wzk_wz_rec(const wzk_wz_dec_args *a, int blk)
{
	size_t slot = a->slots ? (size_t)a->slots[blk] : (size_t)blk;
	return a->pool + slot * (size_t)a->f.record_bytes;
}

static inline WZ_HD void wzk_wz_dec_store(const wzk_wz_dec_args *a, int blk, int tid, int nthr,
					  const wzk_wz_tok *st, const float *y)
{
	for (int k = tid; k < a->f.nv; k += nthr)
		a->out[(size_t)blk * a->f.nv + k] = wzk_wz_value(&a->f, st, y, k);
}

#endif
