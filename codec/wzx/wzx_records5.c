/* Type 5 blocks straight to wz records (what a wz GPU tier restores): the
 * layer's records plan, a portable loop that decodes a block's digits place
 * by place, the records from them (codec/wzx/wzx_rec5.h, shared with the
 * CUDA kernel), and the choice of path.  The reference is the symbols'
 * way (wzc_wzx_decode_lanes5_ref, then wzc_wzx_symbols_records, whose
 * field is a 128-bit division); every path gives its records bit for bit
 * and its verdicts (tests/codec/test_wzx_records).  The coder stays
 * wzx's own: htscodecs' rans32x16 (order 0) on the same digits decodes at
 * 0.82-0.93 of its rate and stores 19% more (one table a block for every
 * component), order 1 is about 17x slower (bench/bench_wzx_zstd,
 * docs/restore.md). */
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/wz/wz_flat.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_fast32_internal.h"
#include "codec/wzx/wzx_fast5_internal.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_lanes.h"
#include "codec/wzx/wzx_rec5.h"

void wzc_wzx_rec5_free(wzx_rec5 *p)
{
	if (!p)
		return;
	free(p->first);
	free(p->q);
	free(p->pv);
	free(p->k);
	free(p->M);
	free(p->rlo);
	free(p->qoff);
	free(p);
}

int wzc_wzx_rec5_build(fast32 *t, const wzc_wz_flat *f, size_t B)
{
	t->rec5 = NULL;
	int ng = f->ngroups, ne = f->nentries;
	if (B > (size_t)1 << 20 || f->scale_bytes != t->sb)
		return 0;
	wzx_rec5 *p = calloc(1, sizeof *p);
	int32_t *q_of = malloc(sizeof *q_of * ((size_t)ne + 1));
	if (!p || !q_of)
		goto nomem;
	p->ng = ng;
	p->sb = t->sb;
	p->S5 = t->S5;
	p->B = (int)B;
	p->first = malloc(sizeof *p->first * ((size_t)ng + 1));
	p->q = malloc(sizeof *p->q * ((size_t)ne + 1));
	p->pv = malloc(sizeof *p->pv * ((size_t)ne + 1));
	p->k = malloc((size_t)ng + 1);
	p->M = malloc(sizeof *p->M * ((size_t)ng + 1));
	p->rlo = malloc(sizeof *p->rlo * ((size_t)ng + 1));
	p->qoff = malloc(sizeof *p->qoff * ((size_t)t->S5 + 1));
	if (!p->first || !p->q || !p->pv || !p->k || !p->M || !p->rlo || !p->qoff)
		goto nomem;
	p->fb = t->fb;
	p->sym = t->sym;
	for (int q = 0; q < t->S5; q++) {
		p->qoff[q] = t->off[t->coded[q]];
		if (p->qoff[q] + SLOTS > p->nslots)
			p->nslots = p->qoff[q] + SLOTS;
	}
	for (int i = 0; i < ne; i++)
		q_of[i] = -1;
	/* the scale codes are coded places 0 .. sb - 1 (the heads come first) */
	for (int q = 0; q < t->sb; q++)
		if (q >= t->S5 || t->coded[q] != q)
			goto plain;
	for (int q = t->sb; q < t->S5; q++) {
		int j = t->coded[q], i = t->src[j];
		if (i < 0 || i >= ne || q_of[i] >= 0 || t->cnt[j] != f->nlev[i])
			goto plain; /* a decoded digit must be below its count */
		q_of[i] = q;
	}
	uint32_t bit = 8u * (uint32_t)t->sb;
	int m = 0;
	for (int g = 0; g < ng; g++) {
		int k = f->gbits[g];
		if (f->goff[g] != bit)
			goto plain;
		bit += (uint32_t)k;
		p->first[g] = m;
		/* place values from the last entry up; M their product */
		uint64_t pv = 1;
		for (int i = f->gstart[g + 1] - 1; i >= f->gstart[g]; i--) {
			if (f->nlev[i] > 1) {
				if (q_of[i] < 0)
					goto plain;
				p->q[m] = q_of[i];
				p->pv[m++] = pv;
			}
			unsigned __int128 next = (unsigned __int128)pv * f->nlev[i];
			if (next > UINT64_MAX)
				goto plain;
			pv = (uint64_t)next;
		}
		p->k[g] = (uint8_t)k;
		p->M[g] = pv;
		if (wzc_wzx_field_recip(k, pv, &p->rlo[g]))
			goto plain;
	}
	p->first[ng] = m;
	if (bit > 8u * (uint32_t)B)
		goto plain;
	t->rec5 = p;
	free(q_of);
	return 0;
plain:
	wzc_wzx_rec5_free(p);
	free(q_of);
	return 0;
nomem:
	wzc_wzx_rec5_free(p);
	free(q_of);
	return -1;
}

/* The portable loop to digits: one symbol at a time from the slot tables,
 * every read checked (wzx_fast5.c's loop, writing the symbol). */
WZ_HOT static int digits_portable(const fast32 *t, int n, const uint8_t *payload, size_t size, uint16_t *dig)
{
	if (size < 4 * K4 || n < 1 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	uint32_t x[K4];
	read_states(payload, x);
	const uint8_t *p = payload + 4 * K4, *end = payload + size;
	long i = 0;
	for (int q = 0; q < t->S5; q++)
		for (int k = 0; k < n; k++, i++) {
			int lane = (int)(i % K4);
			if (wzc_wzx5_step(t->rec5, q, &x[lane], &dig[(size_t)q * n + k]) &&
			    wzc_lanes_refill(&x[lane], &p, end))
				return -1;
		}
	if (p != end)
		return -1;
	for (int k = 0; k < K4; k++)
		if (x[k] != WZC_LANES_LOW)
			return -1;
	return 0;
}

static void records_portable(const wzx_rec5 *p, int n, const uint16_t *dig, uint8_t *records)
{
	for (int k = 0; k < n; k++)
		wzc_wzx_rec5_token(p, dig, n, k, records + (size_t)k * p->B);
}

/* The reference: symbols by binary search, back to coding order, records
 * by the division. */
static int records_ref(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
		       uint8_t *records)
{
	int S4 = wzc_wzx_block_symbols4(x, layer), S3 = wzc_wzx_block_symbols(x, layer);
	uint16_t *s4 = malloc(sizeof *s4 * ((size_t)n * S4 + 1)), *s3 = malloc(sizeof *s3 * ((size_t)n * S3 + 1));
	int bad = !s4 || !s3 || wzc_wzx_decode_lanes5_ref(x, layer, n, payload, size, s4);
	if (!bad) {
		wzc_wzx_symbols4_entries(x, layer, n, s4, s3);
		wzc_wzx_symbols_records(x, layer, n, s3, records);
	}
	free(s4);
	free(s3);
	return bad ? -1 : 0;
}

int wzc_wzx_decode_lanes5_records_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
				       const uint8_t *payload, size_t size, uint8_t *records)
{
	const fast32 *t = wzc_wzx_fast32_layer(x, layer);
	if (!t || n < 1 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	if (path == WZC_LANES4_BEST)
		path = wzc_wzx_lanes5_best();
	if (path == WZC_LANES4_REF || !t->rec5)
		return records_ref(x, layer, n, payload, size, records);
	uint16_t *d = malloc(sizeof *d * ((size_t)t->S5 * n + 1));
	if (!d)
		return -1;
	int bad;
#ifdef WZ_HAVE_AVX2_PATH
	if ((path == WZC_LANES4_AVX2 || path == WZC_LANES4_AVX2_LOADS) && n % K4 == 0 &&
	    wzc_wzx_lanes5_have(path) && t->rec5->ng <= WZC_REC5_AVX2_GROUPS &&
	    t->rec5->B - t->rec5->sb <= 8 * WZC_REC5_AVX2_GROUPS) {
		bad = wzc_wzx_fast5_avx2_digits(t, n, payload, size, d, path == WZC_LANES4_AVX2_LOADS);
		if (!bad)
			wzc_wzx_rec5_avx2_records(t, n, d, records);
	} else
#endif
	{
		bad = digits_portable(t, n, payload, size, d);
		if (!bad)
			records_portable(t->rec5, n, d, records);
	}
	free(d);
	return bad ? -1 : 0;
}

int wzc_wzx_decode_lanes5_digits(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
				 uint16_t *dig)
{
	const fast32 *t = wzc_wzx_fast32_layer(x, layer);
	if (!t || !t->rec5 || n < 1 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
#ifdef WZ_HAVE_AVX2_PATH
	wzc_lanes4_path path = wzc_wzx_lanes5_best();
	if ((path == WZC_LANES4_AVX2 || path == WZC_LANES4_AVX2_LOADS) && n % K4 == 0)
		return wzc_wzx_fast5_avx2_digits(t, n, payload, size, dig, path == WZC_LANES4_AVX2_LOADS);
#endif
	return digits_portable(t, n, payload, size, dig);
}

const wzx_rec5 *wzc_wzx_rec5_of(const wzc_wzx *x, int layer)
{
	const fast32 *t = wzc_wzx_fast32_layer(x, layer);
	return t ? t->rec5 : NULL;
}

int wzc_wzx_decode_lanes5_records(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
				  size_t size, uint8_t *records)
{
	return wzc_wzx_decode_lanes5_records_path(x, layer, WZC_LANES4_BEST, n, payload, size, records);
}
