/* wzx containers to and from files, as `wzplan codec pack` and `unpack`
 * run them: streaming, on many threads, with memory a few blocks per
 * thread whatever the session's length, and outputs written atomically
 * (a temporary file renamed into place; nothing half-written is left on
 * failure).  The values to pack come from a caller's source, so the codec
 * does not depend on any trace format (the CLI reads cache traces a block
 * at a time, traces/cache_trace_stream.h). */
#ifndef WZC_WZX_FILES_H
#define WZC_WZX_FILES_H

#include "codec/wzx/wzx.h"

/* Blocks per thread in one run of pack and unpack: every thread busy
 * between writes, memory a handful of blocks per thread.  Measured with
 * `codec unpack --to transformed --out -` on 61 layers x 16,384 tokens,
 * 2 threads, medians of 5 (docs/restore.md): 4, 8 and 16 blocks 0.89,
 * 1.02 and 1.12 s (a longer run's output no longer stays in cache). */
#define WZC_WZX_BLOCKS_PER_THREAD 4
/* The same for pack, whose blocks take far longer (the wz encode), so that
 * its threads, started for each run, wait less at each run's end: 61 x
 * 4,096 tokens at wzx-5.4 on 2 threads, medians of 3, 3.50 s at 4, 3.08 s
 * at 16, 3.20 s at 32. */
#define WZC_WZX_PACK_BLOCKS_PER_THREAD 16

typedef struct {
	size_t record_bytes; /* the grid's bytes per token and layer */
	wzc_wzx_stats stats;
} wzc_wzx_pack_result;

/* Codes the w->L x w->T tokens of shape w (its values are not read: they
 * come from src, a block at a time) in the grid of fmt (a wz-<bits> or
 * wzx-<bits> format) into a container at path, on nthreads threads.  The
 * container is the same for any nthreads. */
/* A container holds a session from position 0: token t is at position
 * t.  WZ_ERR_INPUT, naming the first token elsewhere, when the profile
 * undoes RoPE (which codes each token at its position) and the window's
 * positions are not 0..T-1; WZ_OK otherwise. */
wz_err wzc_wzx_check_positions(const wzc_profile *prof, const wzc_window *w, wz_diag *diag);
wz_err wzc_wzx_pack_file(const wzc_profile *prof, const wzc_format *fmt, const wzc_window *w,
			 wzc_wzx_source src, void *src_ctx, int nthreads, const char *path,
			 wzc_wzx_pack_result *res /* OUT, may be NULL */, wz_diag *diag);

/* Blocks per layer a rate fit codes (wzc_wzx_fit_rate).  With 2, 4, 8 and
 * 16 the sample wrote within 0.005 bits/value of the whole container on 61
 * layers x 4,096 and x 16,384 tokens of synthetic mla-b (docs/restore.md);
 * 8 leaves room for sessions whose statistics drift more along the
 * session, at little cost: planning the grids, not coding the sample, is
 * most of a fit's time. */
#define WZC_WZX_FIT_BLOCKS 8

typedef struct {
	size_t record_bytes;        /* the grid chosen */
	size_t profile_bytes;       /* the profile's grid for the rate (wzc_wzx_grid_bytes) */
	double profile_estimate;    /* the profile's expected bits/value of that grid */
	double profile_sample_bits; /* the sample in that grid, bits/value written */
	double sample_bits;         /* the sample in the grid chosen */
	long sample_blocks;         /* blocks in the sample (0: the session is under a block) */
	int probes;                 /* grids the sample was coded in */
} wzc_wzx_rate_fit;

/* The grid for `bits` bits/value on this session's own values: the
 * profile's grid for the rate (its expected coded size, from the
 * calibration windows' statistics), unless a sample of the session's
 * blocks (WZC_WZX_FIT_BLOCKS full blocks of every layer, spread over it)
 * packed in it writes more than `bits`; then the largest grid found whose
 * sample writes at most `bits` (a smaller grid than the profile's, never a
 * larger one).  src gives the values as wzc_wzx_pack_file's does; the
 * sample is coded on nthreads threads and written nowhere.  The same for
 * any nthreads. */
wz_err wzc_wzx_fit_rate(const wzc_profile *prof, const wzc_window *w, wzc_wzx_source src,
			void *src_ctx, double bits, int nthreads, wzc_wzx_rate_fit *fit /* OUT */,
			wz_diag *diag);

typedef struct {
	int layers;        /* layers written: 1 for one block */
	long tokens;       /* tokens written, over all layers */
	size_t bytes;      /* bytes written */
} wzc_wzx_unpack_result;

/* Restores the container at in (untrusted: read with pread a run of
 * blocks at a time, never mapped, so a file that shrinks while it is read
 * is an error naming it) as kind into a file at out, on nthreads threads;
 * layer and block (both >= 0, or both -1 for every block) pick one block.
 * The output is the same for any nthreads. */
wz_err wzc_wzx_unpack_file(const char *in, const wzc_profile *prof, wzc_restore_kind kind,
			   long layer, long block, int nthreads, const char *out,
			   wzc_wzx_unpack_result *res /* OUT, may be NULL */, wz_diag *diag);

/* wzc_wzx_unpack_file with the profile read from profile_path first, only
 * the layers the restore uses: one block's layer alone, or every layer
 * (wzc_profile_read_layers; a version 5 profile is then read and checked
 * one layer, not the whole file). */
wz_err wzc_wzx_unpack_path(const char *in, const char *profile_path, wzc_restore_kind kind,
			   long layer, long block, int nthreads, const char *out,
			   wzc_wzx_unpack_result *res /* OUT, may be NULL */, wz_diag *diag);

#endif
