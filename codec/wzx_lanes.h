/* Interleaved rANS with 16-bit renormalisation, the entropy coder of wzx
 * version 2 blocks (docs/wzx-format.md, "Interleaved rANS"): K lanes, each
 * a 32-bit state in [2^16, 2^32), sharing one stream of 16-bit words.  The
 * encoder and the scalar reference decoder work for any K (the bench
 * compares lane counts); the container uses WZC_LANES. */
#ifndef WZC_WZX_LANES_H
#define WZC_WZX_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx_rans.h"

#define WZC_LANES 8        /* lanes of a version 2 block */
#define WZC_LANES_MAX 32
#define WZC_LANES_LOW (1u << 16) /* lower bound (and start) of a lane's state */

typedef struct {
	uint32_t x[WZC_LANES_MAX];
	int K;
	uint8_t *ptr, *begin; /* written backwards; ptr moves down */
	int overflow;
} wzc_lanes_enc;

void wzc_lanes_enc_init(wzc_lanes_enc *e, int K, uint8_t *buf, size_t cap);
/* Symbols are put in reverse order of decoding, each in its lane. */
static inline void wzc_lanes_put(wzc_lanes_enc *e, int lane, const wzc_rans_table *t, uint32_t s)
{
	uint32_t c, f;
	wzc_rans_sym(t, s, &c, &f);
	uint32_t x = e->x[lane];
	if (x >= f << 16) {
		if (e->ptr - e->begin < 2) {
			e->overflow = 1;
			return;
		}
		e->ptr -= 2;
		e->ptr[0] = (uint8_t)x;
		e->ptr[1] = (uint8_t)(x >> 8);
		x >>= 16;
	}
	e->x[lane] = ((x / f) << WZC_RANS_BITS) + (x % f) + c;
}
/* Writes the K states; returns the start of the payload, or NULL on overflow. */
uint8_t *wzc_lanes_enc_flush(wzc_lanes_enc *e);

/* The scalar reference decoder over an untrusted payload (any K): one
 * symbol at a time, the symbol found as type 1 finds it, every read
 * checked.  Reading past the payload sets bad. */
typedef struct {
	uint32_t x[WZC_LANES_MAX];
	int K;
	const uint8_t *ptr, *end;
	int bad;
} wzc_lanes_dec;

void wzc_lanes_dec_init(wzc_lanes_dec *d, int K, const uint8_t *payload, size_t n);
static inline uint32_t wzc_lanes_get(wzc_lanes_dec *d, int lane, const wzc_rans_table *t)
{
	uint32_t x = d->x[lane], slot = x & (WZC_RANS_M - 1);
	uint32_t s = wzc_rans_find(t, slot), c, f;
	wzc_rans_sym(t, s, &c, &f);
	x = f * (x >> WZC_RANS_BITS) + slot - c;
	if (x < WZC_LANES_LOW) {
		if (d->end - d->ptr < 2) {
			d->bad = 1;
			x = WZC_LANES_LOW;
		} else {
			x = x << 16 | (uint32_t)d->ptr[0] | (uint32_t)d->ptr[1] << 8;
			d->ptr += 2;
		}
	}
	d->x[lane] = x;
	return s;
}
/* 1 when the payload was consumed exactly and every lane is back at start. */
int wzc_lanes_dec_done(const wzc_lanes_dec *d);

#endif
