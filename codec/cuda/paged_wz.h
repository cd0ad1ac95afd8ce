/* The per-thread steps of the GPU decode of wz records from paged slots
 * into the transformed domain that attention reads (for a layer whose
 * profile undoes RoPE, the position part in the cache's domain), as WZ_HD inline
 * functions over the per-group code of codec/wz/wz_flat.h: the CUDA kernel
 * (paged_kernels.cu) and the attention kernel's tile decode run them
 * between barriers, the CPU emulation (tests/gpu/emulate.h) in loops over
 * block and thread indices. */
#ifndef WZK_PAGED_WZ_H
#define WZK_PAGED_WZ_H

#include "codec/cuda/paged_baseline.h"
#include "codec/wz/wz_flat.h"

/* Decode state of nt tokens being decoded together. */
typedef struct {
	float s[2];      /* the two part scales */
	uint32_t flags[2];
	/* a trellis-coded plan's runs, for the split walk (wz_flat.h) */
	wzc_wzt_summary runs[WZC_WZT_WALKERS];
} wzk_wz_tok;

/* Walkers of a token's trellis among its nthr threads. */
static inline WZ_HD int wzk_wz_walkers(int nthr)
{
	return nthr < WZC_WZT_WALKERS ? nthr : WZC_WZT_WALKERS;
}

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

/* Step 2: one group per thread turn; for a trellis-coded plan (f->nu > 0)
 * the trellis entries' digits stay in y for step 2b. */
static inline WZ_HD void wzk_wz_groups(const wzc_wz_flat *f, const uint8_t *rec, int tid,
				       int nthr, wzk_wz_tok *st, float *y)
{
	float s[2] = { wzc_wz_scale(f, rec, 0), wzc_wz_scale(f, rec, 1) };
	for (int g = tid; g < f->ngroups; g += nthr)
		wzc_wz_decode_group(f, rec, g, s, y, st->flags);
}

/* Step 2b, trellis-coded plans only (after step 2 and a barrier): the
 * first walkers each summarize their run of the trellis entries from
 * state 0 (wzc_wzt_run_summary). */
static inline WZ_HD void wzk_wz_walk_runs(const wzc_wz_flat *f, int tid, int nthr, wzk_wz_tok *st,
					  const float *y)
{
	int w = wzk_wz_walkers(nthr);
	if (f->nu && tid < w)
		st->runs[tid] = wzc_wzt_run_summary(f, y, tid, w);
}

/* Step 2c (after step 2b and a barrier): each walker starts its run in
 * the state the runs before it end in and writes its entries' values, at
 * the scales step 1 kept. */
static inline WZ_HD void wzk_wz_walk(const wzc_wz_flat *f, int tid, int nthr, const wzk_wz_tok *st,
				     float *y)
{
	int w = wzk_wz_walkers(nthr);
	if (!f->nu || tid >= w)
		return;
	wzc_wzt_run_walk(f, st->s, y, tid, w, wzc_wzt_run_start(st->runs, tid));
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
	float *out;             /* [n][R + P], transformed domain (but see rope_undone) */
	/* [n] each token's absolute position, or NULL for 0..n-1: read only
	 * where the plan undoes RoPE (wzc_wz_flat.rope_undone), whose position
	 * part comes out in the cache's domain, turned forward there */
	const int64_t *positions;
} wzk_wz_dec_args;

static inline WZ_HD const uint8_t *wzk_wz_rec(const wzk_wz_dec_args *a, int blk)
{
	size_t slot = a->slots ? (size_t)a->slots[blk] : (size_t)blk;
	return a->pool + slot * (size_t)a->f.record_bytes;
}

/* Step 3 of the stand-alone decode: the token's outputs; where the plan
 * undoes RoPE, the latent in the transformed domain and the position
 * part in the cache's, a pair per thread turn. */
static inline WZ_HD void wzk_wz_dec_store(const wzk_wz_dec_args *a, int blk, int tid, int nthr,
					  const wzk_wz_tok *st, const float *y)
{
	const wzc_wz_flat *f = &a->f;
	float *o = a->out + (size_t)blk * f->nv;
	int n = f->rope_undone ? f->R : f->nv;
	for (int k = tid; k < n; k += nthr)
		o[k] = wzk_wz_value(f, st, y, k);
	if (!f->rope_undone)
		return;
	int64_t pos = a->positions ? a->positions[blk] : blk;
	/* the pairs from the thread after the one that took the last latent
	 * value, so that the turns spread evenly */
	int first = (tid - n % nthr + nthr) % nthr;
	for (int i = first; i < f->P / 2; i += nthr)
		wzc_wz_rope_pair(f, y, st->flags, pos, i, o + f->R + 2 * i);
}

#endif
