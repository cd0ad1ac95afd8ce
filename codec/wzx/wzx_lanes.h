/* Interleaved rANS with 16-bit renormalisation, the entropy coder of wzx
 * version 2 blocks (docs/wzx-format.md, "Interleaved rANS"): K lanes, each
 * a 32-bit state in [2^16, 2^32), sharing one stream of 16-bit words.  The
 * encoder and the scalar reference decoder work for any K (the bench
 * compares lane counts); the container uses WZC_LANES.  Type 2 has 2^16
 * probabilities, type 3 2^12 (the wzc_lanes12_ steps). */
#ifndef WZC_WZX_LANES_H
#define WZC_WZX_LANES_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx/wzx_rans.h"

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
/* The fast loops' renormalisation of one state: below 2^16 it takes the
 * next 16-bit word (little-endian) and *p moves past it.  0, or -1 where
 * the payload holds no further word. */
static inline int wzc_lanes_refill(uint32_t *xs, const uint8_t **p, const uint8_t *end)
{
	if (*xs >= WZC_LANES_LOW)
		return 0;
	if (end - *p < 2)
		return -1;
	*xs = *xs << 16 | (uint32_t)(*p)[0] | (uint32_t)(*p)[1] << 8;
	*p += 2;
	return 0;
}
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

/* Type 3 (version 3): the same lanes, words and payload with probabilities
 * summing to 2^12 (docs/wzx-format.md, "Interleaved 12-bit rANS").  Its
 * tables are always cumulative frequencies, cum[n] = 2^12. */
#define WZC_RANS12_BITS 12
#define WZC_RANS12_M (1u << WZC_RANS12_BITS)

/* Type 6 (version 6): type 5's lanes and words with each coded place's
 * table at its own precision, 2^bits (codec/wzx/wzx_rec6.h,
 * docs/wzx-format.md, "Interleaved narrow rANS, place-major").  The
 * encoder's and the reference's steps for a table of any precision bits
 * <= 12 (cum[n] = 2^bits); type 3's are these at 12 bits. */

static inline void wzc_lanesb_put(wzc_lanes_enc *e, int lane, const uint32_t *cum, uint32_t s, int bits)
{
	uint32_t c = cum[s], f = cum[s + 1] - c, x = e->x[lane];
	if ((uint64_t)x >= (uint64_t)f << (32 - bits)) {
		if (e->ptr - e->begin < 2) {
			e->overflow = 1;
			return;
		}
		e->ptr -= 2;
		e->ptr[0] = (uint8_t)x;
		e->ptr[1] = (uint8_t)(x >> 8);
		x >>= 16;
	}
	e->x[lane] = ((x / f) << bits) + (x % f) + c;
}

static inline uint32_t wzc_lanesb_get(wzc_lanes_dec *d, int lane, const uint32_t *cum, uint32_t n, int bits)
{
	uint32_t x = d->x[lane], slot = x & ((1u << bits) - 1), lo = 0, hi = n;
	while (hi - lo > 1) { /* cum[lo] <= slot < cum[hi] */
		uint32_t mid = (lo + hi) >> 1;
		if (cum[mid] <= slot)
			lo = mid;
		else
			hi = mid;
	}
	uint32_t c = cum[lo], f = cum[lo + 1] - c;
	x = f * (x >> bits) + slot - c;
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
	return lo;
}

static inline void wzc_lanes12_put(wzc_lanes_enc *e, int lane, const uint32_t *cum, uint32_t s)
{
	wzc_lanesb_put(e, lane, cum, s, WZC_RANS12_BITS);
}

/* The scalar reference step of type 3: the symbol by binary search of cum
 * (n symbols), every read checked. */
static inline uint32_t wzc_lanes12_get(wzc_lanes_dec *d, int lane, const uint32_t *cum, uint32_t n)
{
	return wzc_lanesb_get(d, lane, cum, n, WZC_RANS12_BITS);
}

#endif
