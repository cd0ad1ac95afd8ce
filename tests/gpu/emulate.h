/* The CUDA kernels' per-thread steps run on the CPU: each kernel's grid is
 * a loop over block indices, each step between two barriers a loop over
 * thread indices calling the same WZ_HD functions the kernels call
 * (codec/cuda/paged_baseline.h, paged_wz.h, attn_tiles.h), so a CPU test
 * checks the arithmetic and the indexing the GPU runs.  Threads of one
 * step run one after another here; the kernels are written so that no
 * thread reads what another writes within a step, and the emulation runs
 * the threads of each step in reverse order too, so that a step that did
 * would give different bytes. */
#ifndef WZ_TEST_GPU_EMULATE_H
#define WZ_TEST_GPU_EMULATE_H

#include <stdlib.h>

#include "codec/cuda/attn_tiles.h"

/* Thread order of a step: 0 forwards, 1 backwards. */
static int emu_reverse;

#define EMU_THREADS(nthr, tid, body)                                                \
	do {                                                                        \
		for (int i_ = 0; i_ < (nthr); i_++) {                               \
			int tid = emu_reverse ? (nthr) - 1 - i_ : i_;               \
			body;                                                       \
		}                                                                   \
	} while (0)

/* paged_kernels.cu's encode kernel; 0, or -1 without memory. */
static inline int emu_encode(const wzk_enc_args *a)
{
	wzk_enc_smem *sm = (wzk_enc_smem *)calloc(1, sizeof *sm);
	if (!sm)
		return -1;
	int nblk = (a->n + WZK_ENC_TOKENS - 1) / WZK_ENC_TOKENS, nt = WZK_ENC_THREADS;
	for (int b = 0; b < nblk; b++) {
		EMU_THREADS(nt, tid, wzk_enc_load(a, b, tid, nt, sm));
		EMU_THREADS(nt, tid, wzk_enc_partial(a, b, tid, nt, sm));
		EMU_THREADS(nt, tid, wzk_enc_scales(a, b, tid, nt, sm));
		EMU_THREADS(nt, tid, wzk_enc_codes(a, b, tid, nt, sm));
		EMU_THREADS(nt, tid, wzk_enc_store(a, b, tid, nt, sm));
	}
	free(sm);
	return 0;
}

/* paged_kernels.cu's decode kernel: a flat grid of one value per thread. */
static inline void emu_decode(const wzk_dec_args *a)
{
	long total = (long)a->n * (a->l.R + a->l.P);
	for (long i = 0; i < total; i++)
		wzk_dec_values(a, emu_reverse ? total - 1 - i : i);
}

/* Threads of a block of the paged decode: the kernel's 64, or fewer to
 * check a trellis walk split over fewer walkers. */
static int emu_wz_threads = 64;

/* wz_kernels.cu's paged decode: one block of 64 threads per token (a
 * trellis-coded plan's walk between the groups and the store). */
static inline int emu_wz_decode(const wzk_wz_dec_args *a)
{
	float *y = (float *)malloc(sizeof(float) * (size_t)a->f.nv);
	if (!y)
		return -1;
	const int nt = emu_wz_threads;
	for (int b = 0; b < a->n; b++) {
		wzk_wz_tok st;
		const uint8_t *rec = wzk_wz_rec(a, b);
		EMU_THREADS(nt, tid, wzk_wz_begin(&a->f, rec, tid, nt, &st, y));
		EMU_THREADS(nt, tid, wzk_wz_groups(&a->f, rec, tid, nt, &st, y));
		if (a->f.nu) {
			EMU_THREADS(nt, tid, wzk_wz_walk_runs(&a->f, tid, nt, &st, y));
			EMU_THREADS(nt, tid, wzk_wz_walk(&a->f, tid, nt, &st, y));
		}
		EMU_THREADS(nt, tid, wzk_wz_dec_store(a, b, tid, nt, &st, y));
	}
	free(y);
	return 0;
}

/* attn_kernels.cu's split kernel and combine kernel; out[B][H][R]. */
static inline int emu_attention(const wzk_att_args *a, float *out)
{
	wzk_att_smem *sm = (wzk_att_smem *)calloc(1, sizeof *sm);
	if (!sm)
		return -1;
	int ng = (a->H + WZK_ATT_HEADS - 1) / WZK_ATT_HEADS, nt = WZK_ATT_THREADS;
	for (int b = 0; b < a->B; b++)
		for (int hg = 0; hg < ng; hg++)
			for (int s = 0; s < a->nsplit; s++) {
				int c0, c1;
				wzk_att_range(a, s, b, &c0, &c1);
				EMU_THREADS(nt, tid, wzk_att_init(a, hg, b, tid, nt, sm));
				for (int n0 = c0; n0 < c1; n0 += WZK_ATT_TILE) {
					int n = c1 - n0 < WZK_ATT_TILE ? c1 - n0 : WZK_ATT_TILE;
					EMU_THREADS(nt, tid, wzk_att_decode1(a, b, n0, n, tid, nt, sm));
					EMU_THREADS(nt, tid, wzk_att_decode2(a, b, n0, n, tid, nt, sm));
					if (a->fmt == WZK_FMT_WZ && a->f.nu) {
						EMU_THREADS(nt, tid, wzk_att_walk_runs(a, n, tid, nt, sm));
						EMU_THREADS(nt, tid, wzk_att_walk(a, n, tid, nt, sm));
					}
					EMU_THREADS(nt, tid, wzk_att_decode3(a, n0, n, tid, nt, sm));
					EMU_THREADS(nt, tid, wzk_att_scores(a, hg, b, n, tid, nt, sm));
					EMU_THREADS(nt, tid, wzk_att_softmax(n, tid, nt, sm));
					EMU_THREADS(nt, tid, wzk_att_accumulate(a, n, tid, nt, sm));
				}
				EMU_THREADS(nt, tid, wzk_att_finish(a, s, hg, b, tid, nt, sm));
			}
	for (int bh = 0; bh < a->B * a->H; bh++)
		for (int d = 0; d < a->R; d++)
			out[(size_t)bh * a->R + d] = wzk_att_combine(a, bh, d);
	free(sm);
	return 0;
}

#endif
