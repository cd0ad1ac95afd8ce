/* A small byte-wise rANS coder with static frequency tables summing to 2^16,
 * the entropy coder of the wzx container (docs/wzx-format.md, "The entropy
 * coder").  Our own rather than a library's: zstd's FSE/tANS API for custom
 * static tables is not public, and the coder is ~100 lines we can specify
 * byte for byte.  The per-symbol steps are static inline so a GPU kernel
 * can share them. */
#ifndef WZC_WZX_RANS_H
#define WZC_WZX_RANS_H

#include <stddef.h>
#include <stdint.h>

#include "codec/formats/fpconv.h"

#define WZC_RANS_BITS 16
#define WZC_RANS_M (1u << WZC_RANS_BITS)
#define WZC_RANS_L (1u << 23)            /* lower bound of the normalized state */
#define WZC_RANS_MAX_TABLE 4096          /* larger counts are coded uniform */

/* A static table of n symbols: uniform (cum == NULL: f = M / n, the last
 * symbol takes the remainder) or cumulative frequencies cum[0..n], cum[n] = M. */
typedef struct {
	uint32_t n;
	uint32_t f;            /* uniform frequency; 0 when cum is used */
	const uint32_t *cum;
	const uint16_t *hint;  /* [M >> hint_shift] or NULL: the symbol at slot
				* h << hint_shift, where a decoder's search starts
				* (speed only, not part of the format) */
	uint32_t hint_shift;
} wzc_rans_table;

static inline WZ_HD void wzc_rans_sym(const wzc_rans_table *t, uint32_t s, uint32_t *c,
				      uint32_t *f)
{
	if (!t->cum) {
		*c = s * t->f;
		*f = s + 1 < t->n ? t->f : WZC_RANS_M - s * t->f;
	} else {
		*c = t->cum[s];
		*f = t->cum[s + 1] - t->cum[s];
	}
}

/* The symbol whose interval holds slot: from a 256-entry hint, else by
 * binary search (a full lookup array would cost 128 KiB per table). */
static inline WZ_HD uint32_t wzc_rans_find(const wzc_rans_table *t, uint32_t slot)
{
	if (!t->cum) {
		uint32_t s = slot / t->f;
		return s < t->n ? s : t->n - 1;
	}
	if (t->hint) {
		/* a short forward scan from the hint (usually 0-2 steps) */
		uint32_t s = t->hint[slot >> t->hint_shift];
		while (t->cum[s + 1] <= slot)
			s++;
		return s;
	}
	uint32_t lo = 0, hi = t->n; /* cum[lo] <= slot < cum[hi] */
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) >> 1;
		if (t->cum[mid] <= slot)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Encoder writing backwards from end of a buffer; ptr moves down. */
typedef struct {
	uint32_t x;
	uint8_t *ptr, *begin; /* ptr > begin while there is room */
	int overflow;
} wzc_rans_enc;

void wzc_rans_enc_init(wzc_rans_enc *e, uint8_t *buf, size_t cap);
/* Symbols are put in reverse order of decoding. */
static inline WZ_HD void wzc_rans_put(wzc_rans_enc *e, const wzc_rans_table *t, uint32_t s)
{
	uint32_t c, f;
	wzc_rans_sym(t, s, &c, &f);
	uint32_t x = e->x, xmax = ((WZC_RANS_L >> WZC_RANS_BITS) << 8) * f;
	while (x >= xmax) {
		if (e->ptr == e->begin) {
			e->overflow = 1;
			return;
		}
		*--e->ptr = (uint8_t)x;
		x >>= 8;
	}
	e->x = ((x / f) << WZC_RANS_BITS) + (x % f) + c;
}
/* Writes the state; returns the start of the payload, or NULL on overflow. */
uint8_t *wzc_rans_enc_flush(wzc_rans_enc *e);

/* Decoder over an untrusted payload: reading past it sets bad. */
typedef struct {
	uint32_t x;
	const uint8_t *ptr, *end;
	int bad;
} wzc_rans_dec;

void wzc_rans_dec_init(wzc_rans_dec *d, const uint8_t *payload, size_t n);
static inline WZ_HD uint32_t wzc_rans_get(wzc_rans_dec *d, const wzc_rans_table *t)
{
	uint32_t slot = d->x & (WZC_RANS_M - 1);
	uint32_t s = wzc_rans_find(t, slot), c, f;
	wzc_rans_sym(t, s, &c, &f);
	uint32_t x = f * (d->x >> WZC_RANS_BITS) + slot - c;
	while (x < WZC_RANS_L) {
		if (d->ptr == d->end) {
			d->bad = 1;
			x = WZC_RANS_L; /* keep going harmlessly; the caller sees bad */
			break;
		}
		x = x << 8 | *d->ptr++;
	}
	d->x = x;
	return s;
}
/* 1 when the payload was consumed exactly and the state is back at start. */
int wzc_rans_dec_done(const wzc_rans_dec *d);

/* Frequencies for n symbols with probabilities p[0..n-1] (any non-negative
 * scale): f = 1 + floor(p / sum * (M - n)), remainder to the first most
 * frequent.  cum gets n + 1 entries.  n must be 1..WZC_RANS_MAX_TABLE. */
void wzc_rans_quantize(const double *p, uint32_t n, uint32_t *cum /* OUT [n + 1] */);
/* The same for a table summing to M (2^12 for wzx type 3 blocks); n <= M. */
void wzc_rans_quantize_m(const double *p, uint32_t n, uint32_t M, uint32_t *cum /* OUT [n + 1] */);
/* A uniform table of n <= M symbols summing to M: f = M / n, the last symbol
 * taking the remainder (wzc_rans_sym's intervals, for any M). */
void wzc_rans_uniform_cum(uint32_t n, uint32_t M, uint32_t *cum /* OUT [n + 1] */);
/* Cross-entropy in bits of a source p coded with cum[0..n] summing to 2^bits. */
double wzc_rans_cost_bits_m(const uint32_t *cum, uint32_t n, uint32_t bits, const double *p);

/* The hint resolution for n symbols: about 4 hint entries per symbol, at
 * least 256 and at most 4096 entries. */
uint32_t wzc_rans_hint_shift(uint32_t n);
/* Fills hint[M >> shift] for a table with cum (n <= WZC_RANS_MAX_TABLE). */
void wzc_rans_hint(const wzc_rans_table *t, uint32_t shift, uint16_t *hint /* OUT */);

/* Cross-entropy in bits of coding a source with probabilities p (summing to
 * about 1) with table t. */
double wzc_rans_cost_bits(const wzc_rans_table *t, const double *p);

#endif
