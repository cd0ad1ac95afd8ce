/* Type 5 blocks straight to wz records (what a wz GPU tier restores): the
 * layer's records plan (groups cut into 32-bit pieces, each group's 128-bit
 * reciprocal) and the one-pass AVX2 loop's (codec/wzx/wzx_records5_x86.c),
 * a portable loop that decodes a block's digits place by place, the
 * records from them (codec/wzx/wzx_rec5.h, shared with the CUDA kernel),
 * and the choice of path.  The reference is the symbols'
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
	free(p->gp);
	free(p->pe);
	free(p->pm);
	free(p->q);
	free(p->pv);
	free(p->k);
	free(p->rhi);
	free(p->rlo);
	free(p->qoff);
	free(p);
}

void wzc_wzx_fused5_free(wzx_fused5 *f)
{
	if (!f)
		return;
	free(f->pl);
	free(f->gpoff);
	free(f->prow);
	free(f->ppm);
	free(f->gsh);
	free(f->gwi);
	free(f->e5);
	free(f);
}

/* The fused loop's plan (wzx_fast5_internal.h): each coded place's table
 * and accumulator row, each group's pieces' rows and bit place; NULL where
 * the layer needs more rows than WZC_FUSED5_ROWS (its blocks then take the
 * portable loop), -1 out of memory. */
static int fused5_build(fast32 *t, const wzx_rec5 *p, wzx_fused5 **out)
{
	*out = NULL;
	int S5 = p->S5, ng = p->ng, np = p->gp[ng];
	wzx_fused5 *f = calloc(1, sizeof *f);
	int32_t *maxq = malloc(sizeof *maxq * ((size_t)ng + 1));
	int32_t *row = malloc(sizeof *row * ((size_t)np + 1));
	if (!f || !maxq || !row)
		goto nomem;
	f->pl = calloc((size_t)S5, sizeof *f->pl);
	f->gpoff = malloc(sizeof *f->gpoff * ((size_t)ng + 1));
	f->prow = malloc(sizeof *f->prow * ((size_t)np + 1));
	f->ppm = malloc(sizeof *f->ppm * ((size_t)np + 1));
	f->gsh = malloc((size_t)ng + 1);
	f->gwi = malloc(sizeof *f->gwi * ((size_t)ng + 1));
	size_t nst = 0;
	for (int q = 0; q < S5; q++) {
		int j = t->coded[q];
		if (t->cnt[j] <= 256 && !t->huge[j] && t->soff[j] + t->cnt[j] > nst)
			nst = t->soff[j] + t->cnt[j];
	}
	f->e5 = malloc(sizeof *f->e5 * (nst + 1));
	if (!f->pl || !f->gpoff || !f->prow || !f->ppm || !f->gsh || !f->gwi || !f->e5)
		goto nomem;
	/* the places' tables: by the symbol byte and f | c << 12 | s << 24 where
	 * the table has at most 256 symbols, none of frequency 4096; else the
	 * slot entries */
	for (int q = 0; q < S5; q++) {
		int j = t->coded[q];
		wzx_fused5_place *pl = &f->pl[q];
		/* a huge place (type 6 alone) reads no table of these */
		pl->wide = t->cnt[j] > 256 || t->huge[j];
		for (uint32_t s = 0; !pl->wide && s < t->cnt[j]; s++)
			pl->wide = (t->stab[t->soff[j] + s] & 0xffff) > 4095;
		pl->hi4 = pl->wide && t->cnt[j] <= 1280 && !t->huge[j];
		for (int h = 0; h < 4; h++)
			pl->thr[h] = 256u * (h + 1) < t->cnt[j] && !t->huge[j] ? (int32_t)t->cum[j][256 * (h + 1)] - 1
									   : (int32_t)SLOTS - 1;
		pl->fb = t->fb + t->off[j];
		pl->sym = t->sym + t->off[j];
		pl->s2s = t->s2s + t->off[j];
		pl->e5 = f->e5 + t->soff[j];
		for (uint32_t s = 0; !pl->wide && s < t->cnt[j]; s++) {
			uint64_t e = t->stab[t->soff[j] + s];
			f->e5[t->soff[j] + s] = (uint32_t)(e & 0xfff) | (uint32_t)(e >> 16 & 0xfff) << 12 | s << 24;
		}
		pl->row = -1;
		pl->gend = -1;
	}
	/* where each piece starts and each group ends in coded order; a group's
	 * fields are written once it and every group before it have ended */
	for (int g = 0; g < ng; g++) {
		maxq[g] = -1;
		for (int j = p->gp[g]; j < p->gp[g + 1]; j++) {
			for (int e = p->pe[j]; e < p->pe[j + 1]; e++) {
				int q = p->q[e];
				if (q < p->sb || q >= S5 || f->pl[q].pv)
					goto plain;
				f->pl[q].pv = p->pv[e];
				f->pl[q].piece = j;
				if (q > maxq[g])
					maxq[g] = q;
			}
		}
		if (maxq[g] < 0)
			goto plain;
		if (g && maxq[g - 1] > maxq[g])
			maxq[g] = maxq[g - 1];
		f->pl[maxq[g]].gend = g + 1; /* groups up to g written after place maxq[g] */
	}
	for (int q = p->sb; q < S5; q++)
		if (!f->pl[q].pv)
			goto plain;
	/* rows: a piece's from its first place until its group is written */
	int used[WZC_FUSED5_ROWS] = { 0 }, gdone = 0;
	for (int j = 0; j < np; j++)
		row[j] = -1;
	for (int q = p->sb; q < S5; q++) {
		wzx_fused5_place *pl = &f->pl[q];
		int j = pl->piece;
		if (row[j] < 0) {
			int r = 0;
			while (r < WZC_FUSED5_ROWS && used[r])
				r++;
			if (r == WZC_FUSED5_ROWS)
				goto plain;
			used[r] = 1;
			row[j] = r;
			pl->first = 1;
			if (r + 1 > f->nrows)
				f->nrows = r + 1;
		}
		pl->row = row[j];
		for (; pl->gend > 0 && gdone < pl->gend; gdone++)
			for (int jj = p->gp[gdone]; jj < p->gp[gdone + 1]; jj++)
				used[row[jj]] = 0;
	}
	/* each group's pieces' rows, most significant first, and its bit place */
	int o = 0;
	for (int g = 0, off = 0; g < ng; off += p->k[g++]) {
		f->gpoff[g] = o;
		for (int j = p->gp[g + 1] - 1; j >= p->gp[g]; j--, o++) {
			f->prow[o] = (int16_t)row[j];
			f->ppm[o] = p->pm[j];
		}
		f->gwi[g] = off / 64;
		f->gsh[g] = (uint8_t)(off % 64);
	}
	f->gpoff[ng] = o;
	f->nbits = 0;
	for (int g = 0; g < ng; g++)
		f->nbits += p->k[g];
	*out = f;
	free(maxq);
	free(row);
	return 0;
plain:
	wzc_wzx_fused5_free(f);
	free(maxq);
	free(row);
	return 0;
nomem:
	wzc_wzx_fused5_free(f);
	free(maxq);
	free(row);
	return -1;
}

int wzc_wzx_rec5_build(fast32 *t, const wzc_wz_flat *f, size_t B)
{
	t->rec5 = NULL;
	t->fused5 = NULL;
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
	p->gp = malloc(sizeof *p->gp * ((size_t)ng + 1));
	p->pe = malloc(sizeof *p->pe * ((size_t)ne + 1));
	p->pm = malloc(sizeof *p->pm * ((size_t)ne + 1));
	p->q = malloc(sizeof *p->q * ((size_t)ne + 1));
	p->pv = malloc(sizeof *p->pv * ((size_t)ne + 1));
	p->k = malloc((size_t)ng + 1);
	p->rhi = malloc(sizeof *p->rhi * ((size_t)ng + 1));
	p->rlo = malloc(sizeof *p->rlo * ((size_t)ng + 1));
	p->qoff = malloc(sizeof *p->qoff * ((size_t)t->S5 + 1));
	if (!p->gp || !p->pe || !p->pm || !p->q || !p->pv || !p->k || !p->rhi || !p->rlo || !p->qoff)
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
	int m = 0, np = 0;
	for (int g = 0; g < ng; g++) {
		int k = f->gbits[g];
		if (f->goff[g] != bit)
			goto plain;
		bit += (uint32_t)k;
		p->gp[g] = np;
		/* place values from the last entry up, in pieces of fewer than
		 * 2^32 levels; M their product */
		uint64_t pv = 1, M = 1;
		for (int i = f->gstart[g + 1] - 1; i >= f->gstart[g]; i--) {
			if (f->nlev[i] <= 1)
				continue;
			if (q_of[i] < 0)
				goto plain;
			if (p->gp[g] == np || pv * f->nlev[i] >= (uint64_t)1 << 32) {
				if (np > p->gp[g])
					p->pm[np - 1] = pv;
				p->pe[np++] = m;
				pv = 1;
			}
			p->q[m] = q_of[i];
			p->pv[m++] = (uint32_t)pv;
			pv *= f->nlev[i];
			unsigned __int128 next = (unsigned __int128)M * f->nlev[i];
			if (next > UINT64_MAX)
				goto plain;
			M = (uint64_t)next;
		}
		if (np > p->gp[g])
			p->pm[np - 1] = pv;
		p->k[g] = (uint8_t)k;
		if (wzc_wzx_field_recip(k, M, &p->rhi[g], &p->rlo[g]))
			goto plain;
	}
	p->gp[ng] = np;
	p->pe[np] = m;
	if (bit > 8u * (uint32_t)B)
		goto plain;
	t->rec5 = p;
	free(q_of);
	return fused5_build(t, p, &t->fused5);
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

int wzc_wzx_records_ref(const wzc_wzx *x, int layer, int n, int S4, wzc_wzx_symbols_fn dec, const uint8_t *payload,
			size_t size, uint8_t *records)
{
	int S3 = wzc_wzx_block_symbols(x, layer);
	uint16_t *s4 = malloc(sizeof *s4 * ((size_t)n * S4 + 1)), *s3 = malloc(sizeof *s3 * ((size_t)n * S3 + 1));
	int bad = !s4 || !s3 || dec(x, layer, n, payload, size, s4);
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
		return wzc_wzx_records_ref(x, layer, n, wzc_wzx_block_symbols4(x, layer), wzc_wzx_decode_lanes5_ref,
					   payload, size, records);
#ifdef WZ_HAVE_AVX2_PATH
	if ((path == WZC_LANES4_AVX2 || path == WZC_LANES4_AVX2_LOADS) && n % K4 == 0 &&
	    wzc_wzx_lanes5_have(path) && t->fused5 && wzc_wzx_fused5_have())
		return wzc_wzx_fused5_avx2_records(t, n, payload, size, records, path == WZC_LANES4_AVX2_LOADS);
#endif
	uint16_t *d = malloc(sizeof *d * ((size_t)t->S5 * n + 1));
	if (!d)
		return -1;
	int bad = digits_portable(t, n, payload, size, d);
	if (!bad)
		records_portable(t->rec5, n, d, records);
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

int wzc_wzx_records5_fused(const wzc_wzx *x, int layer, int *wide, int *rows)
{
	const fast32 *t = wzc_wzx_fast32_layer(x, layer);
	*wide = *rows = 0;
	if (!t || !t->rec5 || !t->fused5)
		return 0;
	for (int q = 0; q < t->S5; q++)
		*wide += t->fused5->pl[q].wide;
	*rows = t->fused5->nrows;
	return 1;
}

int wzc_wzx_decode_lanes5_records(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
				  size_t size, uint8_t *records)
{
	return wzc_wzx_decode_lanes5_records_path(x, layer, WZC_LANES4_BEST, n, payload, size, records);
}
