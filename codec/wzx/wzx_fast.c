/* The throughput decoder of interleaved rANS blocks (wzx version 2): a
 * direct slot-to-symbol table per static table, the lanes unrolled with
 * the renormalisation as a conditional move, and tokens decoded from their
 * digits straight to the transformed domain attention reads (never through
 * records).  wzc_wzx_decode_lanes_ref (scalar, every read checked) is the
 * reference it is tested against bit for bit. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/wz/wz_flat.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_lanes.h"
#include "codec/wzx/wzx_token.h"

/* The symbol of every slot of a table with cumulative frequencies cum[0..n]. */
static uint16_t *direct_of(const uint32_t *cum, uint32_t n)
{
	uint16_t *d = malloc(sizeof *d * WZC_RANS_M);
	if (!d)
		return NULL;
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t slot = cum[s]; slot < cum[s + 1]; slot++)
			d[slot] = (uint16_t)s;
	return d;
}

/* A uniform table's cumulative frequencies (wzc_rans_sym's intervals). */
static uint32_t *uniform_cum(const wzc_rans_table *t, uint32_t *cum)
{
	for (uint32_t s = 0; s < t->n; s++) {
		uint32_t c, f;
		wzc_rans_sym(t, s, &c, &f);
		cum[s] = c;
		cum[s + 1] = c + f;
	}
	return cum;
}

/* Large uniform counts (over WZC_RANS_MAX_TABLE levels): their own tables,
 * kept in a list on the layer. */
typedef struct extra_table {
	uint32_t n;
	uint32_t *cum;
	uint16_t *dir;
	struct extra_table *next;
} extra_table;

void wzc_wzx_fast_free_layer(wzx_layer *ly)
{
	for (int p = 0; p < 2; p++)
		for (int j = 0; j < WZC_NSET; j++)
			free(ly->dirs[p][j]);
	for (extra_table *e = ly->extra, *next; e; e = next) {
		next = e->next;
		free(e->cum);
		free(e->dir);
		free(e);
	}
	free(ly->pos);
}

void wzc_wzx_fast_free(wzc_wzx *x)
{
	free(x->dir_scale);
	free(x->dir_flag);
	if (x->fast_lock) {
		pthread_mutex_destroy(x->fast_lock);
		free(x->fast_lock);
	}
}

char wzc_wzx_no_table;

void *wzc_wzx_layer_table(wzc_wzx *x, wzx_layer *ly, int *ready, void **slot,
			  void *(*build)(const wzc_wzx *x, const wzx_layer *ly))
{
	int r = __atomic_load_n(ready, __ATOMIC_ACQUIRE);
	if (r)
		return r > 0 ? *slot : NULL;
	pthread_mutex_lock(x->fast_lock);
	if (!*ready) {
		void *t = build(x, ly);
		if (t == WZC_WZX_NO_TABLE) {
			*slot = NULL;
			__atomic_store_n(ready, -1, __ATOMIC_RELEASE);
		} else if (t) {
			*slot = t;
			__atomic_store_n(ready, 1, __ATOMIC_RELEASE);
		} /* out of memory: not kept, tried again */
	}
	r = *ready;
	pthread_mutex_unlock(x->fast_lock);
	return r > 0 ? *slot : NULL;
}

int wzc_wzx_table_nomem(const int *ready)
{
	/* built since by another thread: this one's try still failed */
	return __atomic_load_n(ready, __ATOMIC_ACQUIRE) != -1;
}

static int shared_tables(wzc_wzx *x)
{
	if (x->dir_scale)
		return 0;
	wzc_rans_table flag = { 2, WZC_RANS_M / 2, NULL, NULL, 0 };
	uniform_cum(&x->scale_tab, x->cum_scale);
	uniform_cum(&flag, x->cum_flag);
	x->dir_scale = direct_of(x->cum_scale, 256);
	x->dir_flag = direct_of(x->cum_flag, 2);
	return x->dir_scale && x->dir_flag ? 0 : -1;
}

static int build_layer(wzc_wzx *x, wzx_layer *ly)
{
	const wzc_wz_flat *f = ly->flat;
	int sb = x->scale_bytes, S = sb + f->nentries;
	ly->pos = malloc(sizeof *ly->pos * (size_t)S);
	if (!ly->pos)
		return -1;
	for (int b = 0; b < sb; b++)
		ly->pos[b] = (wzc_wzx_direct){ x->dir_scale, x->cum_scale };
	for (int i = 0; i < f->nentries; i++) {
		const wzc_rans_table *t = &ly->etab[i];
		wzc_wzx_direct *d = &ly->pos[sb + i];
		if (t->cum) {
			int found = 0;
			for (int p = 0; p < 2 && !found; p++)
				for (int j = 0; j < WZC_NSET && !found; j++)
					if (ly->cum[p][j] == t->cum) {
						if (!ly->dirs[p][j] && !(ly->dirs[p][j] = direct_of(t->cum, t->n)))
							return -1;
						*d = (wzc_wzx_direct){ ly->dirs[p][j], t->cum };
						found = 1;
					}
			if (!found)
				return -1;
		} else if (t->n == 256) {
			*d = (wzc_wzx_direct){ x->dir_scale, x->cum_scale };
		} else if (t->n == 2) {
			*d = (wzc_wzx_direct){ x->dir_flag, x->cum_flag };
		} else {
			extra_table *e = ly->extra;
			while (e && e->n != t->n)
				e = e->next;
			if (!e) {
				if (!(e = calloc(1, sizeof *e)))
					return -1;
				e->next = ly->extra;
				ly->extra = e;
				e->n = t->n;
				if (!(e->cum = malloc(sizeof *e->cum * (t->n + 1))))
					return -1;
				uniform_cum(t, e->cum);
				if (!(e->dir = direct_of(e->cum, t->n)))
					return -1;
			}
			*d = (wzc_wzx_direct){ e->dir, e->cum };
		}
	}
	ly->nsym = S;
	return 0;
}

/* The layer's direct tables, built on first use (by whichever thread gets
 * there first; the others wait); NULL when out of memory. */
static const wzc_wzx_direct *layer_tables(const wzc_wzx *cx, int layer)
{
	wzc_wzx *x = (wzc_wzx *)cx; /* the tables are a cache, not the coder's state */
	wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly)
		return NULL;
	if (__atomic_load_n(&ly->fast_ready, __ATOMIC_ACQUIRE))
		return ly->pos;
	pthread_mutex_lock(x->fast_lock);
	if (!ly->fast_ready && !shared_tables(x) && !build_layer(x, ly))
		__atomic_store_n(&ly->fast_ready, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(x->fast_lock);
	return ly->fast_ready ? ly->pos : NULL;
}

int wzc_wzx_decode_lanes_ref(const wzc_wzx *x, int layer, int K, int n, const uint8_t *payload,
			     size_t size, uint16_t *sym)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly)
		return -1;
	int sb = x->scale_bytes, S = sb + ly->flat->nentries;
	wzc_lanes_dec dec;
	wzc_lanes_dec_init(&dec, K, payload, size);
	long N = (long)n * S;
	for (long i = 0; i < N && !dec.bad; i++) {
		int j = (int)(i % S);
		const wzc_rans_table *t = j < sb ? &x->scale_tab : &ly->etab[j - sb];
		sym[i] = (uint16_t)wzc_lanes_get(&dec, (int)(i % K), t);
	}
	return wzc_lanes_dec_done(&dec) ? 0 : -1;
}

/* The fast loop for K lanes (a constant after inlining).  While at least
 * 2K bytes are left a round of K symbols cannot read past the payload (each
 * symbol reads at most one word), so the reads there go unchecked; the
 * last symbols take the checked path. */
static inline __attribute__((always_inline)) int lanes_fast(const wzc_wzx_direct *pos, int S,
							     long N, const uint8_t *payload,
							     size_t size, uint16_t *sym, const int K)
{
	if (size < 4 * (size_t)K)
		return -1;
	uint32_t x[WZC_LANES_MAX];
	for (int k = 0; k < K; k++) {
		const uint8_t *q = payload + 4 * k;
		x[k] = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
	}
	const uint8_t *p = payload + 4 * (size_t)K, *end = payload + size;
	long i = 0;
	int j = 0;
	while (i + K <= N && end - p >= 2 * K) {
		/* first every lane's state step (independent chains), then the
		 * renormalisations in lane order: only they share the read
		 * pointer, so the lanes' decodes do not wait for each other */
#pragma GCC unroll 32
		for (int k = 0; k < K; k++) {
			const wzc_wzx_direct *t = &pos[j];
			uint32_t xs = x[k], slot = xs & (WZC_RANS_M - 1);
			uint32_t s = t->dir[slot], c = t->cum[s], f = t->cum[s + 1] - c;
			x[k] = f * (xs >> WZC_RANS_BITS) + slot - c;
			sym[i + k] = (uint16_t)s;
			j = j + 1 == S ? 0 : j + 1;
		}
#pragma GCC unroll 32
		for (int k = 0; k < K; k++) {
			uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8;
			uint32_t low = x[k] < WZC_LANES_LOW;
			x[k] = low ? x[k] << 16 | w : x[k];
			p += 2 * low;
		}
		i += K;
	}
	for (; i < N; i++) {
		int k = (int)(i % K);
		const wzc_wzx_direct *t = &pos[j];
		uint32_t xs = x[k], slot = xs & (WZC_RANS_M - 1);
		uint32_t s = t->dir[slot], c = t->cum[s], f = t->cum[s + 1] - c;
		xs = f * (xs >> WZC_RANS_BITS) + slot - c;
		if (wzc_lanes_refill(&xs, &p, end))
			return -1;
		x[k] = xs;
		sym[i] = (uint16_t)s;
		j = j + 1 == S ? 0 : j + 1;
	}
	if (p != end)
		return -1;
	for (int k = 0; k < K; k++)
		if (x[k] != WZC_LANES_LOW)
			return -1;
	return 0;
}

WZ_HOT static int lanes4(const wzc_wzx_direct *pos, int S, long N, const uint8_t *p, size_t n,
			 uint16_t *sym)
{
	return lanes_fast(pos, S, N, p, n, sym, 4);
}
WZ_HOT static int lanes8(const wzc_wzx_direct *pos, int S, long N, const uint8_t *p, size_t n,
			 uint16_t *sym)
{
	return lanes_fast(pos, S, N, p, n, sym, 8);
}
WZ_HOT static int lanes16(const wzc_wzx_direct *pos, int S, long N, const uint8_t *p, size_t n,
			  uint16_t *sym)
{
	return lanes_fast(pos, S, N, p, n, sym, 16);
}
WZ_HOT static int lanes32(const wzc_wzx_direct *pos, int S, long N, const uint8_t *p, size_t n,
			  uint16_t *sym)
{
	return lanes_fast(pos, S, N, p, n, sym, 32);
}

int wzc_wzx_decode_lanes(const wzc_wzx *x, int layer, int K, int n, const uint8_t *payload,
			 size_t size, uint16_t *sym)
{
	const wzc_wzx_direct *pos = layer_tables(x, layer);
	if (!pos)
		return wzc_wzx_decode_lanes_ref(x, layer, K, n, payload, size, sym);
	int S = x->layers[layer].nsym; /* built by layer_tables */
	long N = (long)n * S;
	switch (K) {
	case 4: return lanes4(pos, S, N, payload, size, sym);
	case 8: return lanes8(pos, S, N, payload, size, sym);
	case 16: return lanes16(pos, S, N, payload, size, sym);
	case 32: return lanes32(pos, S, N, payload, size, sym);
	default: return wzc_wzx_decode_lanes_ref(x, layer, K, n, payload, size, sym);
	}
}

int wzc_wzx_block_symbols(const wzc_wzx *x, int layer)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	return ly ? x->scale_bytes + ly->flat->nentries : 0;
}

void wzc_wzx_symbols_records(const wzc_wzx *x, int layer, int n, const uint16_t *sym,
			     uint8_t *records)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly)
		return; /* out of memory: no symbol was decoded for it either */
	const wzc_wz_flat *f = ly->flat;
	int sb = x->scale_bytes, S = sb + f->nentries;
	uint32_t dig[1024], *d = f->nentries <= 1024 ? dig : malloc(sizeof *d * (size_t)f->nentries);
	if (!d) {
		memset(records, 0, (size_t)n * x->B);
		return;
	}
	for (int t = 0; t < n; t++) {
		const uint16_t *st = sym + (size_t)t * S;
		uint8_t scales[2] = { (uint8_t)st[0], sb > 1 ? (uint8_t)st[1] : 0 };
		for (int i = 0; i < f->nentries; i++)
			d[i] = st[sb + i];
		wzc_wzx_record(f, x->B, scales, d, records + (size_t)t * x->B);
	}
	if (d != dig)
		free(d);
}
