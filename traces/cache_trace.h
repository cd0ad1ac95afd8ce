/* Cache traces: captured (or synthetic) MLA caches per layer and token, with
 * optional absorbed queries, held in memory as float32.  File format: a
 * safetensors file, specified in docs/cache-trace.md (DESIGN.md, "Cache
 * trace file"). */
#ifndef WZT_CACHE_TRACE_H
#define WZT_CACHE_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "common/wz_error.h"

typedef enum {
	WZT_DTYPE_F32 = 0,
	WZT_DTYPE_F16 = 1,
	WZT_DTYPE_BF16 = 2,
} wzt_dtype;

/* All arrays are row-major float32 (converted on read), owned by the trace. */
typedef struct {
	int L;              /* layers */
	int T;              /* tokens */
	int R;              /* latent values per token per layer (kv_lora_rank) */
	int P;              /* position values per token per layer (qk_rope_head_dim) */
	int Q;              /* queries (0 when the trace has none) */
	int H;              /* heads per query (0 when none) */
	float *latent;      /* [L][T][R] */
	float *rope;        /* [L][T][P], after RoPE, unnormalized */
	int64_t *positions; /* [T] absolute positions (0..T-1 when the file has none) */
	float *q_latent;    /* [L][Q][H][R] absorbed queries, or NULL */
	float *q_rope;      /* [L][Q][H][P], or NULL */
	int64_t *q_index;   /* [Q]: query q attends to tokens 0..q_index[q], or NULL */
	/* __metadata__ */
	char *model;
	double softmax_scale;
	char *split;        /* "calibration" or "test" */
	char *window;
	char *source;       /* "synthetic:<family> seed=..." or what captured it */
	double rope_theta;  /* the model's RoPE base, or 0 when the trace does not say */
	double rope_yarn[4]; /* YaRN factor, original positions, beta_fast, beta_slow; [0] = 0: none */
} wzt_cache_trace;

/* Reads and checks a cache-trace file: every shape and offset against the
 * file size, dtypes, required tensors, metadata.  NaN or Inf in any tensor
 * is refused with WZ_ERR_INPUT naming tensor, layer, token and channel (the
 * documented policy: a cache with non-finite values is a capture bug, and no
 * format's error can be measured against it).  The caller frees the result
 * with wzt_cache_trace_free. */
wz_err wzt_cache_trace_read(const char *path, wzt_cache_trace **out /* OUT */, wz_diag *diag);

/* The same on bytes in memory (used by the fuzz target); origin names the
 * source in messages. */
wz_err wzt_cache_trace_parse(const void *bytes, size_t n, const char *origin,
			     wzt_cache_trace **out /* OUT */, wz_diag *diag);

/* A cache trace read a run of tokens at a time, for sessions too long to
 * hold (`wzplan codec pack`): memory is the header, not the file.  Opening
 * checks what wzt_cache_trace_read checks except the cache's own values:
 * the header, shapes and offsets against the file's size, the metadata,
 * positions and q_index, and the queries' values (read through in pieces,
 * not kept); every run of the cache read later is checked for non-finite
 * values as it is read, with the same message.  So a file is refused by
 * one reader exactly when by the other (by the block reader when the run
 * holding the bad value is read); only which fault is named first may
 * differ in a file with several. */
typedef struct wzt_cache_stream wzt_cache_stream;

/* Opens path; the caller closes the stream with wzt_cache_stream_close. */
wz_err wzt_cache_stream_open(const char *path, wzt_cache_stream **out /* OUT */, wz_diag *diag);
void wzt_cache_stream_close(wzt_cache_stream *s);

/* The trace's shape and metadata, with every array NULL but the
 * positions (8 bytes a token; NULL when the file has none: 0..T-1):
 * borrowed, valid until the stream is closed. */
const wzt_cache_trace *wzt_cache_stream_info(const wzt_cache_stream *s);

/* Tokens t0 .. t0 + n - 1 of one layer as float32: latent [n][R], rope
 * [n][P].  Safe to call from many threads at once (pread).  WZ_ERR_INPUT
 * for a non-finite value (naming tensor, layer, token and channel) or a
 * file that shrank since it was opened; WZ_ERR_RANGE for a range outside
 * the trace. */
wz_err wzt_cache_stream_read(const wzt_cache_stream *s, int layer, int t0, int n,
			     float *latent /* OUT */, float *rope /* OUT */, wz_diag *diag);

/* Writes a trace atomically, tensors stored in dtype.  Refuses (and writes
 * nothing) what the reader would refuse: non-finite values, values that
 * overflow dtype (WZ_ERR_RANGE), a split other than calibration or test, a
 * trace with queries but no positive softmax_scale, out-of-range indices. */
wz_err wzt_cache_trace_write(const char *path, const wzt_cache_trace *trace, wzt_dtype dtype,
			     wz_diag *diag);

/* The file's bytes in memory, as wzt_cache_trace_write would write them.
 * The caller frees *bytes with free(). */
wz_err wzt_cache_trace_encode(const wzt_cache_trace *trace, wzt_dtype dtype,
			      unsigned char **bytes /* OUT */, size_t *n /* OUT */, wz_diag *diag);

/* "F32", "F16", "BF16" (the safetensors names). */
const char *wzt_dtype_name(wzt_dtype dtype);
/* Parses bf16, f16, f32 (or bfloat16, float16, float32), any case;
 * WZ_ERR_USAGE otherwise. */
wz_err wzt_dtype_parse(const char *name, wzt_dtype *out /* OUT */, wz_diag *diag);

/* Allocates an empty trace of the given shape (Q = H = 0 for no queries),
 * positions 0..T-1, all values zero, metadata strings NULL (set split,
 * and softmax_scale when there are queries, before writing; the trace
 * frees the strings, so give it malloc'd ones).  NULL when out of memory
 * or a dimension is out of range. */
wzt_cache_trace *wzt_cache_trace_new(int L, int T, int R, int P, int Q, int H);
void wzt_cache_trace_free(wzt_cache_trace *trace);

#endif
