/* The non-inline parts of the interleaved rANS coder (codec/wzx/wzx_lanes.h):
 * set-up, flush and the exact-end check. */
#include "codec/wzx/wzx_lanes.h"

void wzc_lanes_enc_init(wzc_lanes_enc *e, int K, uint8_t *buf, size_t cap)
{
	e->K = K;
	for (int k = 0; k < K; k++)
		e->x[k] = WZC_LANES_LOW;
	e->begin = buf;
	e->ptr = buf + cap;
	e->overflow = 0;
}

uint8_t *wzc_lanes_enc_flush(wzc_lanes_enc *e)
{
	size_t need = 4 * (size_t)e->K;
	if (e->overflow || (size_t)(e->ptr - e->begin) < need)
		return NULL;
	e->ptr -= need;
	for (int k = 0; k < e->K; k++)
		for (int i = 0; i < 4; i++)
			e->ptr[4 * k + i] = (uint8_t)(e->x[k] >> (8 * i));
	return e->ptr;
}

void wzc_lanes_dec_init(wzc_lanes_dec *d, int K, const uint8_t *payload, size_t n)
{
	d->K = K;
	d->end = payload + n;
	d->bad = n < 4 * (size_t)K;
	if (d->bad) {
		for (int k = 0; k < K; k++)
			d->x[k] = WZC_LANES_LOW;
		d->ptr = d->end;
		return;
	}
	for (int k = 0; k < K; k++) {
		const uint8_t *p = payload + 4 * k;
		d->x[k] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			  (uint32_t)p[3] << 24;
	}
	d->ptr = payload + 4 * (size_t)K;
	/* A state below 2^16 cannot come from the encoder; decoding it is
	 * harmless and the end check rejects it. */
}

int wzc_lanes_dec_done(const wzc_lanes_dec *d)
{
	if (d->bad || d->ptr != d->end)
		return 0;
	for (int k = 0; k < d->K; k++)
		if (d->x[k] != WZC_LANES_LOW)
			return 0;
	return 1;
}
