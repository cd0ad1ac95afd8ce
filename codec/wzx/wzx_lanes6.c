/* Type 6 blocks (wzx version 6): type 5's 32 lanes over the same
 * place-major digits, each coded place's table narrow (2^11, one slot
 * entry holding frequency, offset and digit: one look-up a symbol) where
 * it has at most 256 symbols, else type 5's 12-bit table
 * (docs/wzx-format.md, "Interleaved narrow rANS, place-major").  The
 * layer's tables, the encoder, the scalar reference (every read checked,
 * the symbol by binary search), the portable loop (codec/wzx/wzx_rec6.h's
 * step, shared with the CUDA kernel) and the choice of path; the AVX2
 * records loop is type 5's (codec/wzx/wzx_records5_x86.c) reading the
 * narrow places' entries. */
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/wz/wz_flat.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_fast32_internal.h"
#include "codec/wzx/wzx_fast5_internal.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_lanes.h"
#include "codec/wzx/wzx_rec6.h"
#include "codec/wzx/wzx_token.h"

static void tables_free(fast6 *t)
{
	if (!t)
		return;
	free(t->cum);
	free(t->cnt);
	free(t->e);
	free(t->eq);
	free(t->ev);
	free(t->evq);
	free(t->r6.qoff);
	free(t->r6.qb);
	free(t->r6.qf);
	free(t->r6.qn);
	free(t);
}

void wzc_wzx_fast6_free_layer(wzx_layer *ly)
{
	tables_free(ly->fast6);
	ly->fast6 = NULL;
}

/* Each coded place's table (the scale codes' and the anchor flags'
 * uniform ones, the components' from ecum6) and the narrow tables' slot
 * entries, one arena of 2^11 entries per distinct table. */
static fast6 *build(const wzc_wzx *x, const wzx_layer *ly, const fast32 *t)
{
	int S5 = t->S5, none = 0; /* none: a plan the tables do not cover */
	fast6 *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->t = t;
	s->cum = malloc(sizeof *s->cum * (size_t)S5);
	s->cnt = malloc(sizeof *s->cnt * (size_t)S5);
	s->eq = calloc((size_t)S5, sizeof *s->eq);
	s->evq = calloc((size_t)S5, sizeof *s->evq);
	s->r6.qoff = calloc((size_t)S5 + 1, sizeof *s->r6.qoff);
	s->r6.qb = malloc((size_t)S5 + 1);
	s->r6.qf = calloc((size_t)S5 + 1, sizeof *s->r6.qf);
	s->r6.qn = calloc((size_t)S5 + 1, sizeof *s->r6.qn);
	const uint32_t **seen = malloc(sizeof *seen * ((size_t)S5 + 1));
	/* the rows' entries: per distinct (table, level table) */
	const uint32_t **vseen = malloc(sizeof *vseen * ((size_t)S5 + 1));
	int32_t *vlev = malloc(sizeof *vlev * ((size_t)S5 + 1));
	uint32_t *vat = malloc(sizeof *vat * ((size_t)S5 + 1));
	if (!s->cum || !s->cnt || !s->eq || !s->evq || !s->r6.qoff || !s->r6.qb || !s->r6.qf || !s->r6.qn || !seen ||
	    !vseen || !vlev || !vat)
		goto fail;
	int ntab = 0, nv = 0;
	for (int q = 0; q < S5; q++) {
		int j = t->coded[q];
		const uint32_t *cum = j < t->sb ? x->cum6_scale : ly->ecum6[t->src[j]];
		uint32_t n = t->cnt[j];
		none = !cum || n < 2 || (cum[n] != WZC_RANS6_M && cum[n] != WZC_RANS12_M && cum[n] != 65536);
		if (none)
			goto fail;
		s->cum[q] = cum;
		s->cnt[q] = n;
		s->r6.qb[q] = cum[n] == WZC_RANS6_M ? WZC_RANS6_BITS : cum[n] == WZC_RANS12_M ? WZC_RANS12_BITS : 16;
		if (s->r6.qb[q] == 16) {
			/* uniform: only counts over 4096 (type 2's f = 2^16 / n) */
			none = n <= WZC_RANS12_M || n > 65536 || !t->huge[j] || cum[1] != 65536 / n;
			if (none)
				goto fail;
			s->r6.qf[q] = cum[1];
			s->r6.qn[q] = n;
			continue;
		}
		if ((none = t->huge[j]))
			goto fail;
		if (s->r6.qb[q] != WZC_RANS6_BITS)
			continue;
		if ((none = n > 256)) /* the entry's digit is a byte */
			goto fail;
		int k = 0;
		while (k < ntab && seen[k] != cum)
			k++;
		if (k == ntab)
			seen[ntab++] = cum;
		s->r6.qoff[q] = (uint32_t)k * WZC_RANS6_M;
		int v = 0;
		while (v < nv && !(vseen[v] == cum && vlev[v] == t->lvbase[j]))
			v++;
		if (v == nv) {
			vseen[nv] = cum;
			vlev[nv++] = t->lvbase[j];
		}
		vat[q] = (uint32_t)v;
	}
	s->r6.nslots = (size_t)ntab * WZC_RANS6_M;
	s->e = malloc(sizeof *s->e * (s->r6.nslots + 1));
	s->ev = malloc(sizeof *s->ev * ((size_t)nv * WZC_RANS6_M + 1));
	if (!s->e || !s->ev)
		goto fail;
	for (int k = 0; k < ntab; k++) {
		const uint32_t *cum = seen[k];
		for (uint32_t sy = 0; cum[sy] < WZC_RANS6_M; sy++)
			for (uint32_t slot = cum[sy]; slot < cum[sy + 1]; slot++)
				s->e[(size_t)k * WZC_RANS6_M + slot] =
					sy << 24 | (cum[sy + 1] - cum[sy]) << 12 | (slot - cum[sy]);
	}
	for (int v = 0; v < nv; v++) {
		const uint32_t *cum = vseen[v];
		for (uint32_t sy = 0; cum[sy] < WZC_RANS6_M; sy++) {
			uint32_t vb;
			memcpy(&vb, &t->lv[vlev[v] + sy], sizeof vb);
			for (uint32_t slot = cum[sy]; slot < cum[sy + 1]; slot++)
				s->ev[(size_t)v * WZC_RANS6_M + slot] =
					(uint64_t)vb << 32 | sy << 24 | (cum[sy + 1] - cum[sy]) << 12 | (slot - cum[sy]);
		}
	}
	s->r6.e = s->e;
	for (int q = 0; q < S5; q++)
		if (s->r6.qb[q] == WZC_RANS6_BITS) {
			s->eq[q] = s->e + s->r6.qoff[q];
			s->evq[q] = s->ev + (size_t)vat[q] * WZC_RANS6_M;
		}
	free(seen);
	free(vseen);
	free(vlev);
	free(vat);
	return s;
fail:
	free(seen);
	free(vseen);
	free(vlev);
	free(vat);
	tables_free(s);
	return none ? WZC_WZX_NO_TABLE : NULL;
}

static void *build_tables(const wzc_wzx *x, const wzx_layer *ly)
{
	/* type 4's tables are built or known not to exist (wzc_wzx_fast6_layer) */
	int r = __atomic_load_n(&ly->fast32_ready, __ATOMIC_ACQUIRE);
	return r > 0 ? build(x, ly, ly->fast32) : WZC_WZX_NO_TABLE;
}

/* The layer's type 6 tables, built on first use; NULL where a count is
 * over 2^16 or out of memory. */
const fast6 *wzc_wzx_fast6_layer(const wzc_wzx *cx, int layer)
{
	wzc_wzx *x = (wzc_wzx *)cx; /* the tables are a cache, not the coder's state */
	wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	/* type 6's tables rest on type 4's, built first outside the lock the
	 * build holds (none of those: none of these) */
	if (!ly || (!wzc_wzx_fast32_layer6(x, layer) && wzc_wzx_table_nomem(&ly->fast32_ready)))
		return NULL;
	return wzc_wzx_layer_table(x, ly, &ly->fast6_ready, &ly->fast6, build_tables);
}

int wzc_wzx_layer_type6(const wzc_wzx *x, int layer)
{
	return wzc_wzx_fast6_layer(x, layer) != NULL;
}

int wzc_wzx_block_symbols6(const wzc_wzx *x, int layer)
{
	const fast6 *s = wzc_wzx_fast6_layer(x, layer);
	return s ? s->t->S : 0;
}

const wzx_rec6 *wzc_wzx_rec6_of(const wzc_wzx *x, int layer, const struct wzx_rec5 **plan)
{
	const fast6 *s = wzc_wzx_fast6_layer(x, layer);
	if (plan)
		*plan = s ? s->t->rec5 : NULL;
	return s && s->t->rec5 ? &s->r6 : NULL;
}

size_t wzc_wzx_encode_lanes6(const wzc_wzx *x, int layer, int n, const uint8_t *records, uint8_t *out,
			     size_t cap)
{
	int nomem = 0;
	return wzc_wzx_encode_lanes6_checked(x, layer, n, records, out, cap, &nomem);
}

size_t wzc_wzx_encode_lanes6_checked(const wzc_wzx *x, int layer, int n, const uint8_t *records,
				     uint8_t *out, size_t cap, int *nomem)
{
	const fast6 *s = wzc_wzx_fast6_layer(x, layer);
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!s || !ly || n < 1 || n > WZC_WZX_BLOCK_TOKENS) {
		if (!ly || (!s && wzc_wzx_table_nomem(&ly->fast6_ready)))
			*nomem = 1;
		return 0;
	}
	const fast32 *t = s->t;
	const wzc_wz_flat *f = ly->flat;
	size_t room = (size_t)n * x->B + 4 * (size_t)K4 + 2;
	uint16_t *dig = malloc(sizeof *dig * ((size_t)n * t->S5 + 1));
	uint32_t *d = malloc(sizeof *d * ((size_t)f->nentries + 1));
	uint8_t *tmp = malloc(room);
	size_t got = 0;
	if (dig && d && tmp) {
		for (int k = 0; k < n; k++) {
			const uint8_t *rec = records + (size_t)k * x->B;
			wzc_wzx_digits(f, rec, d);
			for (int q = 0; q < t->S5; q++) {
				int j = t->coded[q];
				dig[(size_t)q * n + k] = (uint16_t)(j < t->sb ? rec[j] : d[t->src[j]]);
			}
		}
		wzc_lanes_enc enc;
		wzc_lanes_enc_init(&enc, K4, tmp, room);
		for (long i = (long)n * t->S5 - 1; i >= 0 && !enc.overflow; i--) {
			int q = (int)(i / n);
			wzc_lanesb_put(&enc, (int)(i % K4), s->cum[q], dig[i], s->r6.qb[q]);
		}
		uint8_t *start = wzc_lanes_enc_flush(&enc);
		if (start && (size_t)(tmp + room - start) <= cap) {
			got = (size_t)(tmp + room - start);
			memcpy(out, start, got);
		}
	} else {
		*nomem = 1;
	}
	free(dig);
	free(d);
	free(tmp);
	return got;
}

int wzc_wzx_decode_lanes6_ref(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
			      uint16_t *sym)
{
	const fast6 *s = wzc_wzx_fast6_layer(x, layer);
	if (!s || n < 1 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	const fast32 *t = s->t;
	int S = t->S;
	memset(sym, 0, sizeof *sym * (size_t)n * S);
	wzc_lanes_dec dec;
	wzc_lanes_dec_init(&dec, K4, payload, size);
	long N = (long)n * t->S5;
	for (long i = 0; i < N && !dec.bad; i++) {
		int q = (int)(i / n), k = (int)(i % n);
		sym[(size_t)k * S + t->coded[q]] =
			(uint16_t)wzc_lanesb_get(&dec, (int)(i % K4), s->cum[q], s->cnt[q], s->r6.qb[q]);
	}
	return wzc_lanes_dec_done(&dec) ? 0 : -1;
}

/* The portable loop to digits, dig[q * n + k]: one symbol at a time by
 * wzc_wzx6_step, every read checked. */
WZ_HOT static int digits_portable(const fast6 *s, int n, const uint8_t *payload, size_t size, uint16_t *dig)
{
	const fast32 *t = s->t;
	if (size < 4 * K4 || n < 1 || n > WZC_WZX_BLOCK_TOKENS || !t->rec5)
		return -1;
	uint32_t x[K4];
	read_states(payload, x);
	const uint8_t *p = payload + 4 * K4, *end = payload + size;
	long i = 0;
	for (int q = 0; q < t->S5; q++)
		for (int k = 0; k < n; k++, i++) {
			int lane = (int)(i % K4);
			if (wzc_wzx6_step(t->rec5, &s->r6, q, &x[lane], &dig[(size_t)q * n + k]) &&
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

int wzc_wzx_lanes6_have(wzc_lanes4_path path)
{
	if (path != WZC_LANES4_AVX512)
		return wzc_wzx_lanes5_have(path);
#ifdef WZ_HAVE_AVX2_PATH
	return wzc_wzx_lanes5_have(WZC_LANES4_AVX2_LOADS) && wzc_wzx_fused6_vl_have();
#else
	return 0;
#endif
}

/* BEST: type 5's (wzc_wzx_lanes5_best), and the AVX-512VL loop in place
 * of the AVX2 loop with plain loads where the processor has it and
 * WZX_LANES5_PATH does not choose a loop.  Measured in one run,
 * bench/bench_wzx_zstd's rows "v6 -> wz records" and "... AVX2 alone"
 * (docs/restore.md, "AVX-512VL"). */
wzc_lanes4_path wzc_wzx_lanes6_best(void)
{
	static int best = -1;
	int b = __atomic_load_n(&best, __ATOMIC_RELAXED);
	if (b < 0) {
		b = wzc_wzx_lanes5_best();
		if (b == WZC_LANES4_AVX2_LOADS && !getenv("WZX_LANES5_PATH") && wzc_wzx_lanes6_have(WZC_LANES4_AVX512))
			b = WZC_LANES4_AVX512;
		__atomic_store_n(&best, b, __ATOMIC_RELAXED);
	}
	return (wzc_lanes4_path)b;
}

/* BEST resolved, and a path the processor lacks made the portable loop */
static wzc_lanes4_path resolve6(wzc_lanes4_path path)
{
	if (path == WZC_LANES4_BEST)
		return wzc_wzx_lanes6_best();
	return path == WZC_LANES4_REF || wzc_wzx_lanes6_have(path) ? path : WZC_LANES4_SCALAR;
}

static int digits_path(const fast6 *s, wzc_lanes4_path path, int n, const uint8_t *payload, size_t size,
		       uint16_t *dig)
{
#ifdef WZ_HAVE_AVX2_PATH
	path = resolve6(path);
	int fused = n % K4 == 0 && s->t->fused5 && wzc_wzx_fused5_have();
	if (fused && path == WZC_LANES4_AVX512)
		return wzc_wzx_fused6_vl_digits(s, n, payload, size, dig);
	if (fused && (path == WZC_LANES4_AVX2 || path == WZC_LANES4_AVX2_LOADS))
		return wzc_wzx_fused6_avx2_digits(s, n, payload, size, dig);
#else
	(void)path;
#endif
	return digits_portable(s, n, payload, size, dig);
}

int wzc_wzx_decode_lanes6_digits(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
				 uint16_t *dig)
{
	const fast6 *s = wzc_wzx_fast6_layer(x, layer);
	if (!s || !s->t->rec5 || n < 1 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	return digits_path(s, WZC_LANES4_BEST, n, payload, size, dig);
}

int wzc_wzx_decode_lanes6_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
			       const uint8_t *payload, size_t size, uint16_t *sym)
{
	const fast6 *s = wzc_wzx_fast6_layer(x, layer);
	if (!s || n < 1 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	path = resolve6(path);
	if (path == WZC_LANES4_REF || !s->t->rec5)
		return wzc_wzx_decode_lanes6_ref(x, layer, n, payload, size, sym);
	const fast32 *t = s->t;
	uint16_t *d = malloc(sizeof *d * ((size_t)t->S5 * n + 1));
	if (!d)
		return -1;
	int bad = digits_path(s, path, n, payload, size, d);
	if (!bad) {
		memset(sym, 0, sizeof *sym * (size_t)n * t->S);
		for (int q = 0; q < t->S5; q++)
			for (int k = 0; k < n; k++)
				sym[(size_t)k * t->S + t->coded[q]] = d[(size_t)q * n + k];
	}
	free(d);
	return bad ? -1 : 0;
}

int wzc_wzx_decode_lanes6_records_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
				       const uint8_t *payload, size_t size, uint8_t *records)
{
	const fast6 *s = wzc_wzx_fast6_layer(x, layer);
	if (!s || n < 1 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	const fast32 *t = s->t;
	path = resolve6(path);
	if (path == WZC_LANES4_REF || !t->rec5)
		return wzc_wzx_records_ref(x, layer, n, wzc_wzx_block_symbols6(x, layer), wzc_wzx_decode_lanes6_ref,
					   payload, size, records);
#ifdef WZ_HAVE_AVX2_PATH
	int fused = n % K4 == 0 && t->fused5 && wzc_wzx_fused5_have();
	if (fused && path == WZC_LANES4_AVX512)
		return wzc_wzx_fused6_vl_records(s, n, payload, size, records);
	if (fused && (path == WZC_LANES4_AVX2 || path == WZC_LANES4_AVX2_LOADS))
		return wzc_wzx_fused6_avx2_records(s, n, payload, size, records, path == WZC_LANES4_AVX2_LOADS);
#endif
	uint16_t *d = malloc(sizeof *d * ((size_t)t->S5 * n + 1));
	if (!d)
		return -1;
	int bad = digits_portable(s, n, payload, size, d);
	if (!bad)
		for (int k = 0; k < n; k++)
			wzc_wzx_rec5_token(t->rec5, d, n, k, records + (size_t)k * x->B);
	free(d);
	return bad ? -1 : 0;
}

int wzc_wzx_decode_lanes6_records(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
				  uint8_t *records)
{
	return wzc_wzx_decode_lanes6_records_path(x, layer, WZC_LANES4_BEST, n, payload, size, records);
}

int wzc_wzx_decode_lanes6_rows_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
				    const uint8_t *payload, size_t size, float *rows, size_t stride)
{
	if (path == WZC_LANES4_REF)
		return wzc_wzx_lanes_ref_rows(x, layer, wzc_wzx_decode_lanes6_ref, n, payload, size, rows, stride);
#ifdef WZ_HAVE_AVX2_PATH
	path = resolve6(path);
	if (path == WZC_LANES4_AVX512) /* no AVX-512VL loop to rows: the AVX2 one */
		path = WZC_LANES4_AVX2_LOADS;
	const fast6 *s6 = wzc_wzx_fast6_layer(x, layer);
	if (s6 && (path == WZC_LANES4_AVX2 || path == WZC_LANES4_AVX2_LOADS) && n % K4 == 0 && n >= K4 &&
	    n <= WZC_WZX_BLOCK_TOKENS && wzc_wzx_lanes5_have(path))
		return wzc_wzx_fast6_avx2_rows(s6, n, payload, size, rows, stride, path == WZC_LANES4_AVX2_LOADS);
#endif
	/* else from the symbols */
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	int S4 = wzc_wzx_block_symbols6(x, layer), S3 = wzc_wzx_block_symbols(x, layer);
	if (!ly || S4 < 1 || S3 < 1)
		return -1;
	uint16_t *s4 = malloc(sizeof *s4 * ((size_t)n * S4 + 1)), *s3 = malloc(sizeof *s3 * ((size_t)n * S3 + 2));
	int bad = !s4 || !s3 || wzc_wzx_decode_lanes6_path(x, layer, path, n, payload, size, s4);
	if (!bad) {
		wzc_wzx_symbols4_entries(x, layer, n, s4, s3);
		wzc_wzx_symbols_rows_path(x, layer, WZC_TRANSFORM_BEST, n, s3, rows, stride);
	}
	free(s4);
	free(s3);
	return bad ? -1 : 0;
}

int wzc_wzx_decode_lanes6_rows(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
			       float *rows, size_t stride)
{
	return wzc_wzx_decode_lanes6_rows_path(x, layer, WZC_LANES4_BEST, n, payload, size, rows, stride);
}
