/* The throughput path of wzx version 2 blocks (codec/wzx_fast.c): the
 * interleaved rANS payload to the block's symbols (fast, and the scalar
 * reference), and symbols to records or to the transformed domain. */
#ifndef WZC_WZX_FAST_H
#define WZC_WZX_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx.h"

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
 * size, or 0 when it does not fit. */
size_t wzc_wzx_encode_lanes(const wzc_wzx *x, int layer, int K, int n, const uint8_t *records,
			    uint8_t *out, size_t cap);

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

#endif
