/* The throughput path of wzx version 2 blocks (codec/wzx/wzx_fast.c): the
 * interleaved rANS payload to the block's symbols (fast, and the scalar
 * reference), and symbols to records or to the transformed domain. */
#ifndef WZC_WZX_FAST_H
#define WZC_WZX_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"

/* codec/wzx/wzx.h names it too */
typedef struct wzc_wzx wzc_wzx;

/* Symbols per token of a layer: its scale codes, then its entries. */
int wzc_wzx_block_symbols(const wzc_wzx *x, int layer);

/* An interleaved payload of n tokens with K lanes (4, 8, 16 or 32 take the
 * fast loop, others the reference) to sym [n][wzc_wzx_block_symbols]; 0, or
 * -1 when the payload is not exactly what the encoder writes.  _ref is the
 * scalar reference: the same symbols and the same verdict on any bytes. */
int wzc_wzx_decode_lanes(const wzc_wzx *x, int layer, int K, int n, const uint8_t *payload,
			 size_t size, uint16_t *sym /* OUT */);
int wzc_wzx_decode_lanes_ref(const wzc_wzx *x, int layer, int K, int n, const uint8_t *payload,
			     size_t size, uint16_t *sym /* OUT */);

/* Codes n records of a layer with K lanes into out (cap bytes); the payload
 * size, or 0 when it does not fit or memory ran out (_checked: *nomem
 * set to 1 for the latter, left alone otherwise). */
size_t wzc_wzx_encode_lanes(const wzc_wzx *x, int layer, int K, int n, const uint8_t *records,
			    uint8_t *out, size_t cap);
size_t wzc_wzx_encode_lanes_checked(const wzc_wzx *x, int layer, int K, int n,
				    const uint8_t *records, uint8_t *out, size_t cap, int *nomem);

/* The version 1 coding of the same block (one byte-wise state, type 1),
 * no longer written: for measuring against and for tests of reading
 * version 1.  The payload size, or 0 when it does not fit. */
size_t wzc_wzx_encode_rans1(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			    uint8_t *out, size_t cap);

/* n tokens' symbols to their wz records [n][B], or to the transformed
 * domain (y_latent [n][R], y_rope [n][P]): exactly the values
 * wzc_wz_decode_token_transformed gives for those records. */
void wzc_wzx_symbols_records(const wzc_wzx *x, int layer, int n, const uint16_t *sym,
			     uint8_t *records /* OUT */);
void wzc_wzx_symbols_transformed(const wzc_wzx *x, int layer, int n, const uint16_t *sym,
				 float *y_latent /* OUT */, float *y_rope /* OUT */);
/* The same values as rows of R + P floats (latent first), token k's at
 * rows + k * stride (codec/wzx/wzx_transform.c), on a chosen path: _REF the
 * wz decoder's own steps, the others a per-layer table in output order
 * (scalar, AVX2: eight consecutive symbols with one load, others gathered;
 * _AVX2_GATHER gathers every symbol, so tests reach that loop on layers
 * whose symbols are all in output order); every path gives the same
 * floats bit for bit. */
typedef enum { WZC_TRANSFORM_REF, WZC_TRANSFORM_SCALAR, WZC_TRANSFORM_AVX2, WZC_TRANSFORM_BEST,
	       WZC_TRANSFORM_AVX2_GATHER } wzc_transform_path;
int wzc_wzx_transform_have(wzc_transform_path path);
void wzc_wzx_symbols_rows_path(const wzc_wzx *x, int layer, wzc_transform_path path, int n,
			       const uint16_t *sym, float *rows /* OUT */, size_t stride);
void wzc_wzx_symbols_rows(const wzc_wzx *x, int layer, int n, const uint16_t *sym,
			  float *rows /* OUT */, size_t stride);

/* Type 4 (version 4; codec/wzx/legacy/wzx_fast32.c): WZC_LANES4 lanes of 12-bit rANS
 * over each token's symbols in output order (scale codes, anchor flags,
 * then every component, a single-level one coded with f = 2^12), so the
 * decoder writes the transformed domain from its rANS loop.  Written
 * where type 3 would be (every count <= 4096).  Every path gives the same
 * symbols (or rows, bit for bit) and verdict as the reference (_REF: the
 * symbols by binary search, every read checked; rows through the wz
 * decoder's own steps); _BEST is AVX-512 where the processor has it,
 * else AVX2 (on AMD processors _AVX2_LOADS, the AVX2 loop with its table
 * look-ups by plain loads: Zen 3's vpgatherdd is slower), else the
 * portable loop (WZX_LANES4_PATH=scalar, =avx2 or =avx2-loads in the
 * environment keeps it to that loop).  0, or -1 when the payload is not exactly what the encoder
 * writes or the layer has no type 4 tables. */
#define WZC_LANES4 32
typedef enum {
	WZC_LANES4_REF,
	WZC_LANES4_SCALAR,
	WZC_LANES4_AVX512,
	WZC_LANES4_AVX2,
	WZC_LANES4_BEST,
	WZC_LANES4_AVX2_LOADS
} wzc_lanes4_path;
int wzc_wzx_lanes4_have(wzc_lanes4_path path);
/* 1 when the layer's blocks are written as type 4; its symbols per token. */
int wzc_wzx_layer_type4(const wzc_wzx *x, int layer);
int wzc_wzx_block_symbols4(const wzc_wzx *x, int layer);
int wzc_wzx_decode_lanes4_ref(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			      size_t size, uint16_t *sym /* OUT [n][wzc_wzx_block_symbols4] */);
/* Type 5 (version 5; codec/wzx/wzx_fast5.c): type 4's lanes and tables over a
 * block's symbols in place-major order (every token's heads, then each
 * component of over one level for every token), so that a round of 32
 * lanes reads one table.  The same paths as type 4, except that _AVX512
 * runs the portable loop and _BEST is the AVX2 loop with plain loads on
 * every processor with AVX2 (WZX_LANES5_PATH=scalar, =avx2 or =avx2-loads
 * keeps _BEST to that loop); the same symbols (type 4's order: [n][wzc_wzx_block_symbols4],
 * 0 where a component has a single level) and rows bit for bit, and the
 * same verdicts as the reference. */
int wzc_wzx_lanes5_have(wzc_lanes4_path path);
size_t wzc_wzx_encode_lanes5(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			     uint8_t *out, size_t cap);
int wzc_wzx_decode_lanes5_ref(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			      size_t size, uint16_t *sym /* OUT [n][wzc_wzx_block_symbols4] */);
int wzc_wzx_decode_lanes5_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
			       const uint8_t *payload, size_t size, uint16_t *sym /* OUT */);
int wzc_wzx_decode_lanes5_rows_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
				    const uint8_t *payload, size_t size, float *rows /* OUT */,
				    size_t stride);
int wzc_wzx_decode_lanes5_rows(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			       size_t size, float *rows /* OUT */, size_t stride);
/* The loop _BEST runs for type 5 on this processor. */
wzc_lanes4_path wzc_wzx_lanes5_best(void);
/* A type 5 block of n tokens straight to its wz records [n][B]
 * (codec/wzx/wzx_records5.c): with AVX2 and n a multiple of 32, one pass
 * (codec/wzx/wzx_records5_x86.c) that sums each group's digits into 32-bit
 * pieces as it decodes them; else the digits place by place (the portable
 * loop), then each token's groups from them; a field by a 128-bit
 * reciprocal instead of a division.  _REF goes the symbols' way
 * (wzc_wzx_decode_lanes5_ref, wzc_wzx_symbols4_entries,
 * wzc_wzx_symbols_records); every path writes the same records and gives
 * the same verdict (0, or -1 as the reference). */
int wzc_wzx_decode_lanes5_records_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
				       const uint8_t *payload, size_t size, uint8_t *records /* OUT */);
int wzc_wzx_decode_lanes5_records(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
				  size_t size, uint8_t *records /* OUT */);
/* A type 5 block's digits alone, dig[q * n + k] for coded place q and
 * token k (the rANS step alone, on the _BEST loop; the portable records
 * path's first step). */
int wzc_wzx_decode_lanes5_digits(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
				 uint16_t *dig /* OUT [coded places][n] */);
/* The layer's records plan and tables (codec/wzx/wzx_rec5.h), what the
 * CUDA restore uploads; NULL where its blocks go the reference's way. */
struct wzx_rec5;
const struct wzx_rec5 *wzc_wzx_rec5_of(const wzc_wzx *x, int layer);
/* 1 where the layer's blocks can take the one-pass AVX2 loop (its plan
 * built), *wide then its coded places read by slot entries (over 256
 * symbols, or a symbol of frequency 4096) and *rows its rows of sums. */
int wzc_wzx_records5_fused(const wzc_wzx *x, int layer, int *wide /* OUT */, int *rows /* OUT */);
/* Type 6 (version 6; codec/wzx/wzx_lanes6.c): type 5's lanes and
 * place-major digits, each coded place's table narrow (2^9, one slot
 * look-up a symbol) where it has at most 64 symbols, type 2's uniform
 * 16-bit table where it has over 4096 (so that a layer with such counts,
 * which type 5 cannot code, is type 6 too), else type 5's.  The
 * same paths, outputs and verdicts as type 5's: symbols (type 4's order),
 * records (the AVX2 one-pass loop, the portable loop, _REF the symbols'
 * way), rows (from the symbols), digits; and _AVX512, the one-pass loop
 * with plain loads compiled with AVX-512F and AVX-512VL too (its rounds
 * renormalised by vpexpandd) for records, symbols and digits, the AVX2
 * loop for rows.  _BEST is _AVX512 where the processor has it and
 * WZX_LANES5_PATH is not set, else type 5's. */
int wzc_wzx_lanes6_have(wzc_lanes4_path path);
wzc_lanes4_path wzc_wzx_lanes6_best(void);
int wzc_wzx_layer_type6(const wzc_wzx *x, int layer);
/* Its places a token (type 4's S, where the layer has type 4's tables). */
int wzc_wzx_block_symbols6(const wzc_wzx *x, int layer);
size_t wzc_wzx_encode_lanes6(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			     uint8_t *out, size_t cap);
/* The same, *nomem set to 1 where memory ran out (0 returned). */
size_t wzc_wzx_encode_lanes6_checked(const wzc_wzx *x, int layer, int n, const uint8_t *records,
				     uint8_t *out, size_t cap, int *nomem);
int wzc_wzx_decode_lanes6_ref(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			      size_t size, uint16_t *sym /* OUT [n][wzc_wzx_block_symbols4] */);
int wzc_wzx_decode_lanes6_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
			       const uint8_t *payload, size_t size, uint16_t *sym /* OUT */);
int wzc_wzx_decode_lanes6_records_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
				       const uint8_t *payload, size_t size, uint8_t *records /* OUT */);
int wzc_wzx_decode_lanes6_records(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
				  size_t size, uint8_t *records /* OUT */);
int wzc_wzx_decode_lanes6_rows_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
				    const uint8_t *payload, size_t size, float *rows /* OUT */,
				    size_t stride);
int wzc_wzx_decode_lanes6_rows(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			       size_t size, float *rows /* OUT */, size_t stride);
int wzc_wzx_decode_lanes6_digits(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
				 uint16_t *dig /* OUT [coded places][n] */);
/* The layer's type 6 tables (codec/wzx/wzx_rec6.h) and its records plan
 * (*plan; wzc_wzx_rec5_of's where the layer also has type 5), what the
 * CUDA restore uploads; NULL where its blocks go the reference's way. */
struct wzx_rec6;
const struct wzx_rec6 *wzc_wzx_rec6_of(const wzc_wzx *x, int layer, const struct wzx_rec5 **plan /* OUT */);
/* Type 4 symbols of n tokens to type 2/3's order (wzc_wzx_block_symbols a
 * token), for records. */
void wzc_wzx_symbols4_entries(const wzc_wzx *x, int layer, int n, const uint16_t *sym4,
			      uint16_t *sym /* OUT */);

#endif
