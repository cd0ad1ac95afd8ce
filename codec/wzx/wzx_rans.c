/* The non-inline parts of the wzx rANS coder: buffer set-up and flush, the
 * exact-end check, and quantizing probabilities to a 2^16 (or 2^12) table. */
#include "codec/wzx/wzx_rans.h"

#include <math.h>

void wzc_rans_enc_init(wzc_rans_enc *e, uint8_t *buf, size_t cap)
{
	e->x = WZC_RANS_L;
	e->begin = buf;
	e->ptr = buf + cap;
	e->overflow = 0;
}

uint8_t *wzc_rans_enc_flush(wzc_rans_enc *e)
{
	if (e->overflow || (size_t)(e->ptr - e->begin) < 4)
		return NULL;
	e->ptr -= 4;
	for (int i = 0; i < 4; i++)
		e->ptr[i] = (uint8_t)(e->x >> (8 * i));
	return e->ptr;
}

void wzc_rans_dec_init(wzc_rans_dec *d, const uint8_t *payload, size_t n)
{
	d->bad = n < 4;
	d->x = 0;
	d->ptr = payload;
	d->end = payload + n;
	if (d->bad) {
		d->x = WZC_RANS_L;
		d->ptr = d->end;
		return;
	}
	for (int i = 0; i < 4; i++)
		d->x |= (uint32_t)payload[i] << (8 * i);
	d->ptr += 4;
	/* A state below L cannot come from the encoder; decoding it anyway is
	 * harmless (no overflow), and the end check rejects it. */
}

int wzc_rans_dec_done(const wzc_rans_dec *d)
{
	return !d->bad && d->ptr == d->end && d->x == WZC_RANS_L;
}

void wzc_rans_quantize(const double *p, uint32_t n, uint32_t *cum)
{
	wzc_rans_quantize_m(p, n, WZC_RANS_M, cum);
}

void wzc_rans_quantize_m(const double *p, uint32_t n, uint32_t M, uint32_t *cum)
{
	double sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += p[i] > 0 ? p[i] : 0;
	uint32_t total = 0, best = 0, bestf = 0;
	double room = (double)(M - n);
	cum[0] = 0;
	for (uint32_t i = 0; i < n; i++) {
		double q = sum > 0 && p[i] > 0 ? p[i] / sum : 0;
		uint32_t f = 1 + (uint32_t)floor(q * room);
		if (f > bestf) {
			bestf = f;
			best = i;
		}
		cum[i + 1] = cum[i] + f;
		total += f;
	}
	/* floor() leaves a remainder in [0, n): give it to the most frequent
	 * symbol, where it costs the least. */
	uint32_t rest = M - total;
	for (uint32_t i = best + 1; i <= n; i++)
		cum[i] += rest;
}

double wzc_rans_cost_bits(const wzc_rans_table *t, const double *p)
{
	double bits = 0;
	for (uint32_t s = 0; s < t->n; s++) {
		uint32_t c, f;
		wzc_rans_sym(t, s, &c, &f);
		if (p[s] > 0)
			bits += p[s] * (WZC_RANS_BITS - log2((double)f));
	}
	return bits;
}

uint32_t wzc_rans_hint_shift(uint32_t n)
{
	uint32_t shift = 8;
	while (shift > 4 && (WZC_RANS_M >> shift) < 4 * n)
		shift--;
	return shift;
}

void wzc_rans_hint(const wzc_rans_table *t, uint32_t shift, uint16_t *hint)
{
	wzc_rans_table plain = *t;
	plain.hint = NULL;
	for (uint32_t h = 0; h < WZC_RANS_M >> shift; h++)
		hint[h] = (uint16_t)wzc_rans_find(&plain, h << shift);
}

double wzc_rans_cost_bits_m(const uint32_t *cum, uint32_t n, uint32_t bits, const double *p)
{
	double b = 0;
	for (uint32_t s = 0; s < n; s++)
		if (p[s] > 0)
			b += p[s] * (bits - log2((double)(cum[s + 1] - cum[s])));
	return b;
}

void wzc_rans_uniform_cum(uint32_t n, uint32_t M, uint32_t *cum)
{
	uint32_t f = M / n;
	for (uint32_t s = 0; s < n; s++)
		cum[s] = s * f;
	cum[n] = M;
}
