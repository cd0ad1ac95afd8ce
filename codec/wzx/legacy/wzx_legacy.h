/* Reading old wzx files (zstd keeps its old frame versions the same way,
 * lib/legacy/ behind one header): block types 3 and 4, which only version 3
 * and version 4 containers hold (docs/wzx-format.md).  No writer of this
 * build writes them; the container reader (codec/wzx/wzx_read.c) and the
 * restore (codec/wzx/wzx_restore.c) call them for old files, the tests
 * write them to check that reading.  Everything of the old types is
 * declared here and nowhere else. */
#ifndef WZC_WZX_LEGACY_H
#define WZC_WZX_LEGACY_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx/wzx_fast.h"

/* Type 3 (version 3, eight lanes of 12-bit rANS; codec/wzx/legacy/wzx_fast12.c): the
 * payload of n tokens to sym, 0 or -1 as above.  Every path gives the same
 * symbols and verdict as the reference (_ref, any K; the others K = 8);
 * _BEST is the fastest this processor has (AVX2 when present).  -1 also
 * when the layer has no type 3 tables (a count above 4096). */
typedef enum { WZC_LANES12_REF, WZC_LANES12_SCALAR, WZC_LANES12_AVX2, WZC_LANES12_BEST } wzc_lanes12_path;
int wzc_wzx_lanes12_have(wzc_lanes12_path path);
int wzc_wzx_decode_lanes12(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
			   uint16_t *sym /* OUT */);
int wzc_wzx_decode_lanes12_path(const wzc_wzx *x, int layer, wzc_lanes12_path path, int n,
				const uint8_t *payload, size_t size, uint16_t *sym /* OUT */);
int wzc_wzx_decode_lanes12_ref(const wzc_wzx *x, int layer, int K, int n, const uint8_t *payload,
			       size_t size, uint16_t *sym /* OUT */);
/* G (<= WZC_LANES12_GROUP_MAX) type 3 payloads of one layer, each of n
 * tokens, decoded together (AVX2: in lockstep, the blocks' latencies
 * overlapping); verdict[g] is block g's 0 or -1, exactly what
 * wzc_wzx_decode_lanes12_path gives it alone, and the result -1 when any
 * block fails. */
#define WZC_LANES12_GROUP_MAX 4
int wzc_wzx_decode_lanes12_group(const wzc_wzx *x, int layer, wzc_lanes12_path path, int G, int n,
				 const uint8_t *const *payload, const size_t *size,
				 uint16_t *const *sym /* OUT: [G] */, int *verdict /* OUT: [G] */);
/* 1 when the layer's blocks are written as type 3 (every count <= 4096). */
int wzc_wzx_layer_type3(const wzc_wzx *x, int layer);
/* Codes n records of a layer with K lanes of 12-bit rANS (type 3 when K is
 * 8); the payload size, or 0 when it does not fit or the layer has a count
 * above 4096. */
size_t wzc_wzx_encode_lanes12(const wzc_wzx *x, int layer, int K, int n, const uint8_t *records,
			      uint8_t *out, size_t cap);

/* Type 4 (version 4; codec/wzx/legacy/wzx_fast32.c): the encoder (for the
 * tests of reading version 4) and the decoders on the paths of
 * wzc_lanes4_path (codec/wzx/wzx_fast.h). */
size_t wzc_wzx_encode_lanes4(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			     uint8_t *out, size_t cap);
int wzc_wzx_decode_lanes4_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
			       const uint8_t *payload, size_t size, uint16_t *sym /* OUT */);
/* Straight to rows of R + P floats (latent first), token k's at rows + k *
 * stride: the values wzc_wzx_symbols_rows gives. */
int wzc_wzx_decode_lanes4_rows_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
				    const uint8_t *payload, size_t size, float *rows /* OUT */,
				    size_t stride);
int wzc_wzx_decode_lanes4_rows(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			       size_t size, float *rows /* OUT */, size_t stride);
/* G (<= WZC_LANES4_GROUP_MAX) type 4 payloads of one layer, each of n
 * tokens, to rows[g] (one after another: lockstep was measured slower);
 * verdict[g] is what wzc_wzx_decode_lanes4_rows_path gives
 * block g alone (and its rows the same), the result -1 when any fails. */
#define WZC_LANES4_GROUP_MAX 4 /* at least WZC_LANES12_GROUP_MAX: a restore run (wzx_read.c) */
int wzc_wzx_decode_lanes4_rows_group(const wzc_wzx *x, int layer, wzc_lanes4_path path, int G,
				     int n, const uint8_t *const *payload, const size_t *size,
				     float *const *rows /* OUT: [G] */, size_t stride,
				     int *verdict /* OUT: [G] */);
#endif
