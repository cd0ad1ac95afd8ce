/* The 32-lane 12-bit rANS tables of types 4 and 5 (docs/wzx-format.md,
 * "Interleaved 12-bit rANS in output order" and "place-major"): per static
 * table and level table a 4096-entry slot arena (a u32 of frequency, slot
 * offset and symbol byte; the level value; the u16 symbol), all of a
 * layer's in one allocation; the encoder of both orders; type 4's scalar
 * reference (every read checked, the symbol by binary search), which type
 * 5's rows reference shares; which SIMD loops this processor has.  Type
 * 4's fast loops are old-file reading (codec/wzx/legacy/wzx_fast32.c). */
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/wz/wz_flat.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_fast32_internal.h"
#include "codec/wzx/wzx_fast5_internal.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_lanes.h"
#include "codec/wzx/wzx_token.h"

/* A single-level component's table: one symbol, f = 2^12 (no state change,
 * no word read or written). */
static const uint32_t one_cum[2] = { 0, SLOTS };

static void tables_free(fast32 *t)
{
	if (!t)
		return;
	free(t->src);
	free(t->cum);
	free(t->cnt);
	free(t->fb);
	free(t->val);
	free(t->sym);
	free(t->lv);
	free(t->lvbase);
	free(t->off);
	free(t->wide);
	free(t->huge);
	free(t->sigma);
	free(t->delta);
	free(t->rope);
	free(t->coded);
	free(t->s2s);
	free(t->stab);
	free(t->soff);
	wzc_wzx_rec5_free(t->rec5);
	wzc_wzx_fused5_free(t->fused5);
	free(t);
}

void wzc_wzx_fast32_free_layer(wzx_layer *ly)
{
	tables_free(ly->fast32);
	ly->fast32 = NULL;
}

/* The places of a token (docs/wzx-format.md): scale codes, the anchor flags
 * (latent's, position's), then components 0 .. nv - 1. */
static fast32 *build(const wzc_wzx *x, const wzx_layer *ly)
{
	const wzc_wz_flat *f = ly->flat;
	int sb = x->scale_bytes, nv = f->nv, nflags = 0, fl[2] = { -1, -1 };
	for (int i = 0; i < f->nentries; i++)
		if (f->comp[i] >= nv) {
			if (f->comp[i] - nv > 1 || fl[f->comp[i] - nv] >= 0)
				return WZC_WZX_NO_TABLE;
			fl[f->comp[i] - nv] = i;
		}
	nflags = (fl[0] >= 0) + (fl[1] >= 0);
	int H = sb + nflags, S = H + nv, none = 0; /* none: a plan the tables do not cover */
	fast32 *t = calloc(1, sizeof *t);
	int32_t *ent_of = malloc(sizeof *ent_of * ((size_t)nv + 1));
	int32_t *one_of = malloc(sizeof *one_of * ((size_t)nv + 1));
	const uint32_t **seen = malloc(sizeof *seen * (size_t)S);
	int64_t *seen_lev = malloc(sizeof *seen_lev * (size_t)S);
	uint32_t *tab_of = malloc(sizeof *tab_of * (size_t)S);
	if (!t || !ent_of || !one_of || !seen || !seen_lev || !tab_of)
		goto fail;
	t->S = S;
	t->H = H;
	t->sb = sb;
	t->nv = nv;
	t->P = f->P;
	t->scale_mult = f->scale_mult;
	t->scale_ref[0] = f->scale_ref[0];
	t->scale_ref[1] = f->scale_ref[1];
	t->src = malloc(sizeof *t->src * (size_t)S);
	t->cum = malloc(sizeof *t->cum * (size_t)S);
	t->cnt = malloc(sizeof *t->cnt * (size_t)S);
	t->off = malloc(sizeof *t->off * ((size_t)S + K4));
	t->wide = calloc((size_t)S, 1);
	t->huge = calloc((size_t)S + 1, 1);
	t->sigma = calloc((size_t)S + K4, sizeof *t->sigma);
	t->delta = calloc((size_t)S + K4, sizeof *t->delta);
	t->rope = calloc((size_t)S + K4, 1);
	if (!t->src || !t->cum || !t->cnt || !t->off || !t->wide || !t->huge || !t->sigma || !t->delta || !t->rope)
		goto fail;
	for (int c = 0; c < nv; c++)
		ent_of[c] = one_of[c] = -1;
	for (int i = 0; i < f->nentries; i++) {
		int c = f->comp[i];
		if (c >= nv)
			continue;
		if (c < 0 || ent_of[c] >= 0) {
			none = 1;
			goto fail;
		}
		ent_of[c] = i;
	}
	for (int i = 0; i < f->nones; i++) {
		int c = f->ones[i];
		if (c < 0 || c >= nv || ent_of[c] >= 0 || one_of[c] >= 0) {
			none = 1;
			goto fail;
		}
		one_of[c] = i;
	}
	/* each place: its table and level table (-1 heads, -2 single levels) */
	int64_t *lev = (int64_t *)seen_lev; /* reused below as the distinct keys */
	int ntab = 0;
	for (int j = 0; j < S; j++) {
		const uint32_t *cum;
		uint32_t n;
		int64_t lv;
		if (j < sb) {
			t->src[j] = j;
			cum = x->cum12_scale;
			n = 256;
			lv = -1;
		} else if (j < H) {
			int i = fl[0] >= 0 && j == sb ? fl[0] : fl[1];
			t->src[j] = i;
			t->flag_place[f->comp[i] - nv] = j;
			cum = ly->ecum12[i];
			n = ly->ecount12[i];
			lv = -1;
		} else {
			int c = j - H, i = ent_of[c];
			t->rope[j] = c >= f->R ? 0xff : 0;
			t->delta[j] = f->delta[c];
			if (i >= 0) {
				t->src[j] = i;
				cum = ly->ecum12[i];
				n = ly->ecount12[i];
				lv = f->tab[i];
				t->sigma[j] = f->sigma[i];
				if (!cum && n > SLOTS && ly->ecum6[i]) {
					/* a count over 4096: type 6's alone; a
					 * one-symbol stand-in here, the count kept */
					t->huge[j] = 1;
					cum = one_cum;
				}
			} else if (one_of[c] >= 0) {
				t->src[j] = -1;
				cum = one_cum;
				n = 1;
				lv = -2;
				t->sigma[j] = f->ones_lev[one_of[c]] * f->ones_sigma[one_of[c]];
			} else {
				none = 1; /* a component nothing writes */
				goto fail;
			}
		}
		if (!cum || n < 1 || (!t->huge[j] && (n > SLOTS || cum[n] != SLOTS))) {
			none = 1;
			goto fail;
		}
		t->cum[j] = cum;
		t->cnt[j] = n;
		int k = 0;
		while (k < ntab && !(seen[k] == cum && lev[k] == lv))
			k++;
		if (k == ntab) {
			seen[ntab] = cum;
			lev[ntab++] = lv;
		}
		tab_of[j] = (uint32_t)k;
	}
	if (fl[0] < 0)
		t->flag_place[0] = -1;
	if (fl[1] < 0)
		t->flag_place[1] = -1;
	t->fb = malloc(sizeof *t->fb * (size_t)ntab * SLOTS);
	t->val = malloc(sizeof *t->val * (size_t)ntab * SLOTS);
	t->sym = malloc(sizeof *t->sym * ((size_t)ntab * SLOTS + 2));
	if (!t->fb || !t->val || !t->sym)
		goto fail;
	for (int k = 0; k < ntab; k++) {
		const uint32_t *cum = seen[k];
		for (uint32_t s = 0; cum[s] < SLOTS; s++)
			for (uint32_t slot = cum[s]; slot < cum[s + 1]; slot++) {
				/* (a stand-in's level value is its digit 0's: unused) */
				size_t a = (size_t)k * SLOTS + slot;
				t->fb[a] = (s & 255) << 24 | (cum[s + 1] - cum[s] - 1) << 12 | (slot - cum[s]);
				t->sym[a] = (uint16_t)s;
				t->val[a] = lev[k] >= 0 ? f->tables[lev[k] + s] : lev[k] == -2 ? 1.0f : 0.0f;
			}
	}
	t->sym[(size_t)ntab * SLOTS] = t->sym[(size_t)ntab * SLOTS + 1] = 0;
	if (wzc_wzx_fast5_build(t, seen, ntab, tab_of))
		goto fail;
	for (int j = 0; j < S + K4; j++) {
		t->off[j] = tab_of[j % S] * SLOTS;
		if (j >= S) {
			t->sigma[j] = t->sigma[j % S];
			t->delta[j] = t->delta[j % S];
			t->rope[j] = t->rope[j % S];
		}
	}
	if (wzc_wzx_rec5_build(t, f, x->B)) /* after the tables' offsets */
		goto fail;
	for (int j = 0; j < S; j++)
		if (t->cnt[j] > 256 && !t->huge[j])
			for (int k = 0; k < K4; k++)
				t->wide[(j - k % S + S) % S] = 1;
	/* the level values by symbol, for rounds of tables of at most 256
	 * symbols (the entry's byte is then the symbol): small enough for L1 */
	size_t ntables = 0;
	for (int i = 0; i < f->nentries; i++)
		if (f->comp[i] < nv && f->tab[i] + f->nlev[i] > ntables)
			ntables = f->tab[i] + f->nlev[i];
	t->lv = calloc(ntables + 1 + 256, sizeof *t->lv);
	t->lvbase = malloc(sizeof *t->lvbase * ((size_t)S + K4));
	none = ntables > INT32_MAX - 512;
	if (none || !t->lv || !t->lvbase)
		goto fail;
	if (ntables)
		memcpy(t->lv, f->tables, sizeof *t->lv * ntables);
	t->lv[ntables] = 1.0f;
	for (int j = 0; j < S + K4; j++) {
		int jj = j % S;
		t->lvbase[j] = jj < H ? (int32_t)ntables + 1
			       : t->src[jj] < 0 ? (int32_t)ntables : (int32_t)f->tab[t->src[jj]];
	}
	free(ent_of);
	free(one_of);
	free(seen);
	free(seen_lev);
	free(tab_of);
	return t;
fail:
	tables_free(t);
	free(ent_of);
	free(one_of);
	free(seen);
	free(seen_lev);
	free(tab_of);
	return none ? WZC_WZX_NO_TABLE : NULL;
}

static void *build_tables(const wzc_wzx *x, const wzx_layer *ly)
{
	return build(x, ly);
}

/* The layer's tables, built on first use; NULL when out of memory or the
 * layer has no type 3 tables (type 4 uses type 3's). */
static const fast32 *layer_tables(const wzc_wzx *cx, int layer)
{
	wzc_wzx *x = (wzc_wzx *)cx; /* the tables are a cache, not the coder's state */
	wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly || !ly->type3)
		return NULL;
	return wzc_wzx_layer_table(x, ly, &ly->fast32_ready, &ly->fast32, build_tables);
}

const fast32 *wzc_wzx_fast32_layer(const wzc_wzx *x, int layer)
{
	return layer_tables(x, layer);
}

/* A layer with counts over 4096 builds the same tables with those places
 * huge; type 4 and 5 never see them (layer_tables refuses the layer). */
const fast32 *wzc_wzx_fast32_layer6(const wzc_wzx *cx, int layer)
{
	wzc_wzx *x = (wzc_wzx *)cx;
	wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly)
		return NULL;
	return wzc_wzx_layer_table(x, ly, &ly->fast32_ready, &ly->fast32, build_tables);
}

int wzc_wzx_layer_type4(const wzc_wzx *x, int layer)
{
	return layer_tables(x, layer) != NULL;
}

int wzc_wzx_block_symbols4(const wzc_wzx *x, int layer)
{
	const fast32 *t = layer_tables(x, layer);
	return t ? t->S : 0;
}

size_t wzc_wzx_encode_lanes32(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			      int place_major, uint8_t *out, size_t cap)
{
	const fast32 *t = layer_tables(x, layer);
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!t || !ly || n < 1 || (place_major && n > WZC_WZX_BLOCK_TOKENS))
		return 0;
	const wzc_wz_flat *f = ly->flat;
	int S = t->S;
	size_t room = (size_t)n * x->B + 4 * (size_t)K4 + 2;
	uint16_t *sym = malloc(sizeof *sym * (size_t)n * S);
	uint32_t *dig = malloc(sizeof *dig * ((size_t)f->nentries + 1));
	uint8_t *tmp = malloc(room);
	size_t got = 0;
	if (sym && dig && tmp) {
		/* token-major symbols: the scale codes, then each place's digit
		 * (0 where the place has one level) */
		for (int k = 0; k < n; k++) {
			const uint8_t *rec = records + (size_t)k * x->B;
			wzc_wzx_digits(f, rec, dig);
			for (int j = 0; j < S; j++)
				sym[(size_t)k * S + j] = (uint16_t)(j < t->sb ? rec[j] : t->src[j] < 0 ? 0 : dig[t->src[j]]);
		}
		wzc_lanes_enc enc;
		wzc_lanes_enc_init(&enc, K4, tmp, room);
		/* coded in reverse: type 4 symbol i of the token-major order,
		 * type 5 the coded places' digits place by place */
		long N = (long)n * (place_major ? t->S5 : S);
		for (long i = N - 1; i >= 0 && !enc.overflow; i--) {
			int j = place_major ? t->coded[i / n] : (int)(i % S);
			size_t at = place_major ? (size_t)(i % n) * S + j : (size_t)i;
			wzc_lanes12_put(&enc, (int)(i % K4), t->cum[j], sym[at]);
		}
		uint8_t *start = wzc_lanes_enc_flush(&enc);
		if (start && (size_t)(tmp + room - start) <= cap) {
			got = (size_t)(tmp + room - start);
			memcpy(out, start, got);
		}
	}
	free(sym);
	free(dig);
	free(tmp);
	return got;
}

int wzc_wzx_decode_lanes4_ref(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			      size_t size, uint16_t *sym)
{
	const fast32 *t = layer_tables(x, layer);
	if (!t)
		return -1;
	int S = t->S;
	wzc_lanes_dec dec;
	wzc_lanes_dec_init(&dec, K4, payload, size);
	long N = (long)n * S;
	for (long i = 0; i < N && !dec.bad; i++)
		sym[i] = (uint16_t)wzc_lanes12_get(&dec, (int)(i % K4), t->cum[i % S], t->cnt[i % S]);
	return wzc_lanes_dec_done(&dec) ? 0 : -1;
}

void wzc_wzx_symbols4_entries(const wzc_wzx *x, int layer, int n, const uint16_t *sym4,
			      uint16_t *sym)
{
	/* type 6's symbols too, where a layer has counts over 4096 */
	const fast32 *t = wzc_wzx_fast32_layer6(x, layer);
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!t || !ly)
		return;
	int S = t->S, S3 = x->scale_bytes + ly->flat->nentries;
	for (int k = 0; k < n; k++)
		for (int j = 0; j < S; j++) {
			const uint16_t v = sym4[(size_t)k * S + j];
			if (j < t->sb)
				sym[(size_t)k * S3 + j] = v;
			else if (t->src[j] >= 0)
				sym[(size_t)k * S3 + t->sb + t->src[j]] = v;
		}
}

int wzc_wzx_lanes4_have(wzc_lanes4_path path)
{
	switch (path) {
	case WZC_LANES4_REF:
	case WZC_LANES4_SCALAR:
	case WZC_LANES4_BEST: return 1;
	case WZC_LANES4_AVX512:
#ifdef WZ_HAVE_AVX512_PATH
		return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
		return 0;
#endif
	case WZC_LANES4_AVX2:
	case WZC_LANES4_AVX2_LOADS:
#ifdef WZ_HAVE_AVX2_PATH
		return __builtin_cpu_supports("avx2");
#else
		return 0;
#endif
	}
	return 0;
}

int wzc_wzx_lanes_ref_rows(const wzc_wzx *x, int layer, wzc_lanes_ref_fn decode_ref, int n,
			   const uint8_t *payload, size_t size, float *rows, size_t stride)
{
	const fast32 *t = wzc_wzx_fast32_layer6(x, layer); /* as layer_tables where type 4 or 5 calls */
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!t || !ly)
		return -1;
	size_t S3 = (size_t)x->scale_bytes + ly->flat->nentries;
	uint16_t *s4 = malloc(sizeof *s4 * (size_t)n * t->S);
	uint16_t *s3 = malloc(sizeof *s3 * ((size_t)n * S3 + 2));
	int bad = -1;
	if (s4 && s3 && !(bad = decode_ref(x, layer, n, payload, size, s4))) {
		wzc_wzx_symbols4_entries(x, layer, n, s4, s3);
		wzc_wzx_symbols_rows_path(x, layer, WZC_TRANSFORM_REF, n, s3, rows, stride);
	}
	free(s4);
	free(s3);
	return bad;
}
