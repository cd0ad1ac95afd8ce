/* What the two cache-trace readers share (traces/cache_trace.c reads a
 * file whole, traces/cache_trace_stream.c a block at a time): the header
 * parsed and checked against the data's size, and the conversions of
 * stored values with their checks, so that both accept and refuse the same
 * files with the same messages. */
#ifndef WZT_CACHE_TRACE_INTERNAL_H
#define WZT_CACHE_TRACE_INTERNAL_H

#include <stdint.h>

#include "traces/cache_trace.h"

/* The safetensors reference implementation refuses larger headers too. */
#define WZT_HEADER_MAX 100000000u
/* Dimensions of tensors we only skip over; ours have at most 4. */
#define WZT_NDIM_MAX 8

typedef struct {
	const char *name; /* a key of the header's JSON object (lives as long as it) */
	int dtype;        /* an index for wzt_desc_size / wzt_desc_kind */
	int ndim;
	uint64_t shape[WZT_NDIM_MAX];
	uint64_t count;
	uint64_t begin, end; /* offsets into the data buffer */
} wzt_tensor_desc;

/* A header parsed and checked: every tensor's layout against the data's
 * size, the required tensors present, the shapes agreeing; the metadata
 * not yet (wzt_layout_metadata). */
typedef struct {
	void *root; /* the JSON header (json_t), owning the names */
	wzt_tensor_desc *descs;
	int ndesc;
	void *meta; /* json_t, inside root */
	const wzt_tensor_desc *latent, *rope, *positions, *q_latent, *q_rope, *q_index;
	int L, T, R, P, Q, H; /* Q = H = 0 without queries */
} wzt_layout;

/* Checks the 8-byte header length read from a file of file_size bytes,
 * with the messages of the whole-file reader. */
wz_err wzt_header_len_check(const char *origin, uint64_t header_len, uint64_t file_size,
			    wz_diag *diag);

/* Parses the header's JSON (header_len bytes) for a data buffer of
 * data_size bytes.  On success the caller frees it with wzt_layout_free
 * (also safe on a failed or zeroed layout). */
wz_err wzt_layout_parse(const char *origin, const unsigned char *header, uint64_t header_len,
			uint64_t data_size, wzt_layout *out /* OUT */, wz_diag *diag);
void wzt_layout_free(wzt_layout *lay);

/* Checks __metadata__ and stores it in t (model, split, window, source,
 * softmax_scale; the strings malloc'd, freed by wzt_cache_trace_free). */
wz_err wzt_layout_metadata(const char *origin, const wzt_layout *lay, wzt_cache_trace *t,
			   wz_diag *diag);

/* Bytes of one stored value of tensor d. */
unsigned wzt_desc_size(const wzt_tensor_desc *d);

/* Converts count stored values of float tensor d, the first of them its
 * element number `first` (row-major), from bytes to out, refusing the
 * first that is not finite with its coordinates (labels name d's
 * dimensions). */
wz_err wzt_convert_floats(const char *origin, const wzt_tensor_desc *d, const unsigned char *bytes,
			  uint64_t first, uint64_t count, float *out /* OUT */,
			  const char *const *labels, wz_diag *diag);

/* Reads count stored I64 values of `positions` or `q_index` (elements
 * first ..), checking each (a position >= 0; a query's token in 0..T-1);
 * out may be NULL (check only). */
wz_err wzt_convert_indices(const char *origin, const wzt_tensor_desc *d, const unsigned char *bytes,
			   uint64_t first, uint64_t count, int T, int64_t *out /* OUT, may be NULL */,
			   wz_diag *diag);

extern const char *const wzt_cache_dims[3];
extern const char *const wzt_query_dims[4];

#endif
