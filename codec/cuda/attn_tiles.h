/* The per-thread steps of the fused absorbed-MLA decode-attention kernel
 * (attn_kernels.cu), as WZ_HD inline functions that the CUDA kernel runs
 * between barriers and the CPU emulation (tests/gpu/emulate.h) runs in
 * loops over block and thread indices.
 *
 * The FlashMLA formulation: per head h of a sequence, score_i = scale *
 * (q_latent . c_i + q_rope . k_rope_i) over the context, softmax, output
 * sum_i p_i c_i.  One block takes a group of WZK_ATT_HEADS heads and one
 * split of the context (flash decoding); it decodes each tile of
 * WZK_ATT_TILE tokens from its records on chip (shared memory, never
 * global memory), then scores, an online-softmax update and the
 * accumulation; a second kernel combines the splits.  For wz the cache is
 * decoded to the transformed domain y (x = mean + basis^T y), and the
 * queries come rotated (q~ = basis q, once per step) with the constant
 * bias q . mean, so no inverse transform runs per token; the output is
 * then sum p y, rotated back once per step (wzk_rotate_rows).  Where the
 * profile undoes RoPE in the layer, the position part's transformed
 * domain is rotated back per token, so its query would have to be turned
 * per token: the tile decode gives that part in the cache's domain
 * instead (an inverse transform of P values per token, and the pair
 * turned forward), the query's position part comes as cached, and the
 * bias is q_latent . mean_latent alone. */
#ifndef WZK_ATTN_TILES_H
#define WZK_ATTN_TILES_H

#include <math.h>

#include "codec/cuda/paged_wz.h"

#define WZK_ATT_HEADS 16
#define WZK_ATT_TILE 16
#define WZK_ATT_THREADS 256
#define WZK_ATT_MAXR 512
#define WZK_ATT_MAXP 64
#define WZK_ATT_NV (WZK_ATT_MAXR + WZK_ATT_MAXP)
/* Row stride of the decoded tile: odd, so the threads of a warp that read
 * one column of different tokens hit different shared-memory banks. */
#define WZK_ATT_KS (WZK_ATT_NV + 1)
#define WZK_FMT_WZ 16 /* codec/formats/format.h's WZC_FMT_WZ */

typedef struct {
	float q[WZK_ATT_HEADS][WZK_ATT_NV];
	float k[WZK_ATT_TILE][WZK_ATT_KS];
	/* the position part in the cache's domain, where the plan undoes RoPE */
	float kr[WZK_ATT_TILE][WZK_ATT_MAXP];
	wzk_wz_tok tok[WZK_ATT_TILE];
	float acc[WZK_ATT_HEADS][WZK_ATT_MAXR];
	float p[WZK_ATT_HEADS][WZK_ATT_TILE];
	float m[WZK_ATT_HEADS], l[WZK_ATT_HEADS], alpha[WZK_ATT_HEADS];
} wzk_att_smem;

typedef struct {
	int fmt;                   /* WZK_BF16, WZK_FP8_MIX or WZK_FMT_WZ */
	wzk_layout l;              /* the baseline's layout (rb for every format) */
	wzc_wz_flat f;             /* wz's plan (device pointers on the GPU) */
	int R, P, H, B;
	const int32_t *ctx_len;    /* [B] tokens of context of each sequence */
	const int32_t *pages;      /* [B][max_pages] physical page of each logical page */
	int max_pages;
	const uint8_t *pool;       /* records, WZK_PAGE_TOKENS per page */
	const float *q;            /* [B][H][R + P]; for wz rotated (the position
				    * part as cached where the plan undoes RoPE) */
	const float *bias;         /* [B][H] added to q . c before scaling, or NULL */
	float scale;               /* softmax scale */
	int chunk;                 /* tokens per split (a multiple of WZK_ATT_TILE) */
	int nsplit;
	float *part_o;             /* [B][H][nsplit][R] unnormalized partial outputs */
	float *part_ml;            /* [B][H][nsplit][2] their running max and sum */
} wzk_att_args;

static inline WZ_HD const uint8_t *wzk_att_rec(const wzk_att_args *a, int b, int i)
{
	int page = a->pages[(size_t)b * a->max_pages + i / WZK_PAGE_TOKENS];
	size_t slot = (size_t)page * WZK_PAGE_TOKENS + (size_t)(i % WZK_PAGE_TOKENS);
	return a->pool + slot * (size_t)a->l.rb;
}

/* Context range [*c0, *c1) of split s of sequence b. */
static inline WZ_HD void wzk_att_range(const wzk_att_args *a, int s, int b, int *c0, int *c1)
{
	int n = a->ctx_len[b];
	*c0 = s * a->chunk;
	*c1 = *c0 + a->chunk < n ? *c0 + a->chunk : n;
	if (*c0 > n)
		*c0 = n;
}

/* Before the tiles: the block's queries, running max -inf, sums zero. */
static inline WZ_HD void wzk_att_init(const wzk_att_args *a, int hg, int b, int tid, int nthr,
				      wzk_att_smem *sm)
{
	int nv = a->R + a->P;
	for (int i = tid; i < WZK_ATT_HEADS * nv; i += nthr) {
		int h = i / nv, k = i % nv, hh = hg * WZK_ATT_HEADS + h;
		sm->q[h][k] = hh < a->H ? a->q[((size_t)b * a->H + hh) * nv + k] : 0.0f;
	}
	for (int i = tid; i < WZK_ATT_HEADS * a->R; i += nthr)
		sm->acc[i / a->R][i % a->R] = 0.0f;
	for (int h = tid; h < WZK_ATT_HEADS; h += nthr) {
		sm->m[h] = -INFINITY;
		sm->l[h] = 0.0f;
	}
}

/* Tile step 1: baselines decode every value; wz its scales and the
 * components with one level (WZK_ATT_THREADS / WZK_ATT_TILE threads per
 * token). */
static inline WZ_HD void wzk_att_decode1(const wzk_att_args *a, int b, int n0, int nt, int tid,
					 int nthr, wzk_att_smem *sm)
{
	int nv = a->R + a->P;
	if (a->fmt != WZK_FMT_WZ) {
		for (int i = tid; i < nt * nv; i += nthr) {
			int t = i / nv, k = i % nv;
			sm->k[t][k] = wzk_decode_value(&a->l, wzk_att_rec(a, b, n0 + t), k);
		}
		return;
	}
	int per = nthr / WZK_ATT_TILE, t = tid / per;
	if (t < nt)
		wzk_wz_begin(&a->f, wzk_att_rec(a, b, n0 + t), tid % per, per, &sm->tok[t], sm->k[t]);
}

/* Tile step 2 (wz only): the groups. */
static inline WZ_HD void wzk_att_decode2(const wzk_att_args *a, int b, int n0, int nt, int tid,
					 int nthr, wzk_att_smem *sm)
{
	int per = nthr / WZK_ATT_TILE, t = tid / per;
	if (a->fmt == WZK_FMT_WZ && t < nt)
		wzk_wz_groups(&a->f, wzk_att_rec(a, b, n0 + t), tid % per, per, &sm->tok[t], sm->k[t]);
}

/* Tile step 2b (a trellis-coded wz plan only, after step 2 and a barrier):
 * each token's trellis runs summarized, a run by each of its first
 * wzk_wz_walkers(per) threads (wzk_wz_walk_runs). */
static inline WZ_HD void wzk_att_walk_runs(const wzk_att_args *a, int n, int tid, int nthr,
					   wzk_att_smem *sm)
{
	int per = nthr / WZK_ATT_TILE, t = tid / per;
	if (a->fmt == WZK_FMT_WZ && t < n)
		wzk_wz_walk_runs(&a->f, tid % per, per, &sm->tok[t], sm->k[t]);
}

/* Tile step 2c (after step 2b and a barrier): each token's trellis walk,
 * a run per walker. */
static inline WZ_HD void wzk_att_walk(const wzk_att_args *a, int nt, int tid, int nthr,
				      wzk_att_smem *sm)
{
	int per = nthr / WZK_ATT_TILE, t = tid / per;
	if (a->fmt == WZK_FMT_WZ && t < nt)
		wzk_wz_walk(&a->f, tid % per, per, &sm->tok[t], sm->k[t]);
}

/* Tile step 3 (wz only): the anchor offsets, in place.  Where the plan
 * undoes RoPE, the latent's in place and the position part into kr in
 * the cache's domain, turned forward at the token's position in its
 * sequence (context token i is at position i), a pair per thread turn:
 * the pairs read the transformed position part in k, which this step
 * does not write then. */
static inline WZ_HD void wzk_att_decode3(const wzk_att_args *a, int n0, int nt, int tid,
					 int nthr, wzk_att_smem *sm)
{
	int nv = a->R + a->P, undo = a->f.rope_undone, w = undo ? a->R : nv;
	if (a->fmt != WZK_FMT_WZ)
		return;
	for (int i = tid; i < nt * w; i += nthr) {
		int t = i / w, k = i % w;
		sm->k[t][k] = wzk_wz_value(&a->f, &sm->tok[t], sm->k[t], k);
	}
	if (!undo)
		return;
	int np = a->P / 2;
	for (int i = tid; i < nt * np; i += nthr) {
		int t = i / np, j = i % np;
		wzc_wz_rope_pair(&a->f, sm->k[t], sm->tok[t].flags, (int64_t)n0 + t, j,
				 &sm->kr[t][2 * j]);
	}
}

/* Tile step 4: the scores, one (head, token) per thread turn, each a chain
 * of fused multiply-adds over the components in order. */
static inline WZ_HD void wzk_att_scores(const wzk_att_args *a, int hg, int b, int nt, int tid,
					int nthr, wzk_att_smem *sm)
{
	int R = a->R, P = a->P;
	int undo = a->fmt == WZK_FMT_WZ && a->f.rope_undone;
	for (int i = tid; i < WZK_ATT_HEADS * nt; i += nthr) {
		int h = i / nt, t = i % nt, hh = hg * WZK_ATT_HEADS + h;
		const float *kr = undo ? sm->kr[t] : sm->k[t] + R;
		float acc = 0.0f;
		for (int k = 0; k < R; k++)
			acc = fmaf(sm->q[h][k], sm->k[t][k], acc);
		for (int k = 0; k < P; k++)
			acc = fmaf(sm->q[h][R + k], kr[k], acc);
		float bias = a->bias && hh < a->H ? a->bias[(size_t)b * a->H + hh] : 0.0f;
		sm->p[h][t] = (acc + bias) * a->scale;
	}
}

/* Tile step 5: the online softmax, one head per thread turn. */
static inline WZ_HD void wzk_att_softmax(int nt, int tid, int nthr, wzk_att_smem *sm)
{
	for (int h = tid; h < WZK_ATT_HEADS; h += nthr) {
		float mt = sm->m[h];
		for (int t = 0; t < nt; t++)
			mt = sm->p[h][t] > mt ? sm->p[h][t] : mt;
		float alpha = sm->m[h] == -INFINITY ? 0.0f : expf(sm->m[h] - mt), sum = 0.0f;
		for (int t = 0; t < nt; t++) {
			sm->p[h][t] = expf(sm->p[h][t] - mt);
			sum += sm->p[h][t];
		}
		sm->l[h] = sm->l[h] * alpha + sum;
		sm->m[h] = mt;
		sm->alpha[h] = alpha;
	}
}

/* Tile step 6: acc = acc * alpha + sum_t p_t c_t, one output per thread
 * turn (consecutive threads take consecutive components). */
static inline WZ_HD void wzk_att_accumulate(const wzk_att_args *a, int nt, int tid, int nthr,
					    wzk_att_smem *sm)
{
	for (int i = tid; i < WZK_ATT_HEADS * a->R; i += nthr) {
		int h = i / a->R, d = i % a->R;
		float acc = sm->acc[h][d] * sm->alpha[h];
		for (int t = 0; t < nt; t++)
			acc = fmaf(sm->p[h][t], sm->k[t][d], acc);
		sm->acc[h][d] = acc;
	}
}

/* After the tiles: the block's partial outputs. */
static inline WZ_HD void wzk_att_finish(const wzk_att_args *a, int s, int hg, int b, int tid,
					int nthr, const wzk_att_smem *sm)
{
	for (int i = tid; i < WZK_ATT_HEADS * a->R; i += nthr) {
		int h = i / a->R, d = i % a->R, hh = hg * WZK_ATT_HEADS + h;
		if (hh < a->H)
			a->part_o[(((size_t)b * a->H + hh) * a->nsplit + s) * a->R + d] = sm->acc[h][d];
	}
	for (int h = tid; h < WZK_ATT_HEADS; h += nthr) {
		int hh = hg * WZK_ATT_HEADS + h;
		if (hh >= a->H)
			continue;
		float *ml = a->part_ml + (((size_t)b * a->H + hh) * a->nsplit + s) * 2;
		ml[0] = sm->m[h];
		ml[1] = sm->l[h];
	}
}

/* The combine: output d of head bh (= b * H + h) from the splits. */
static inline WZ_HD float wzk_att_combine(const wzk_att_args *a, int bh, int d)
{
	const float *ml = a->part_ml + (size_t)bh * a->nsplit * 2;
	float M = -INFINITY, L = 0.0f, o = 0.0f;
	for (int s = 0; s < a->nsplit; s++)
		M = ml[2 * s] > M ? ml[2 * s] : M;
	for (int s = 0; s < a->nsplit; s++) {
		if (ml[2 * s] == -INFINITY)
			continue;
		float w = expf(ml[2 * s] - M);
		L += w * ml[2 * s + 1];
		o += w * a->part_o[((size_t)bh * a->nsplit + s) * a->R + d];
	}
	return L > 0 ? o / L : 0.0f;
}

/* out[r][k] = add[k] + sum_i M[k][i] in[r][i] (forward: q~ = basis q, with
 * add = 0) or sum_i M[i][k] in[r][i] (transposed: x = mean + basis^T y,
 * add = mean); one output per thread turn, the sum a chain of fused
 * multiply-adds in order of i. */
static inline WZ_HD float wzk_rotate_value(int n, const float *M, int transposed,
					   const float *in_row, const float *add, int k)
{
	float acc = 0.0f;
	for (int i = 0; i < n; i++)
		acc = fmaf(transposed ? M[(size_t)i * n + k] : M[(size_t)k * n + i], in_row[i], acc);
	return add ? acc + add[k] : acc;
}

#endif
