/* Type 4 blocks (wzx version 4): 32 lanes of 12-bit rANS over each token's
 * symbols in output order (docs/wzx-format.md, "Interleaved 12-bit rANS in
 * output order"), so that a decoder writes the transformed domain straight
 * from its rANS loop.  Per static table and level table a 4096-entry slot
 * arena (a u32 of frequency, slot offset and symbol byte; the level value;
 * the u16 symbol), all of a layer's in one allocation; the encoder; the
 * scalar reference (every read checked, the symbol by binary search); a
 * branch-free scalar loop; and the choice among it and the AVX-512 and
 * AVX2 loops of codec/wzx_fast32_x86.c.  Every fast path is tested
 * against the reference. */
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/wz_flat.h"
#include "codec/wzx_fast.h"
#include "codec/wzx_fast32_internal.h"
#include "codec/wzx_fast5_internal.h"
#include "codec/wzx_internal.h"
#include "codec/wzx_lanes.h"
#include "codec/wzx_token.h"

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
	free(t->sigma);
	free(t->delta);
	free(t->rope);
	free(t->coded);
	free(t->s2s);
	free(t->stab);
	free(t->soff);
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
				return NULL;
			fl[f->comp[i] - nv] = i;
		}
	nflags = (fl[0] >= 0) + (fl[1] >= 0);
	int H = sb + nflags, S = H + nv;
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
	t->sigma = calloc((size_t)S + K4, sizeof *t->sigma);
	t->delta = calloc((size_t)S + K4, sizeof *t->delta);
	t->rope = calloc((size_t)S + K4, 1);
	if (!t->src || !t->cum || !t->cnt || !t->off || !t->wide || !t->sigma || !t->delta || !t->rope)
		goto fail;
	for (int c = 0; c < nv; c++)
		ent_of[c] = one_of[c] = -1;
	for (int i = 0; i < f->nentries; i++) {
		int c = f->comp[i];
		if (c >= nv)
			continue;
		if (c < 0 || ent_of[c] >= 0)
			goto fail;
		ent_of[c] = i;
	}
	for (int i = 0; i < f->nones; i++) {
		int c = f->ones[i];
		if (c < 0 || c >= nv || ent_of[c] >= 0 || one_of[c] >= 0)
			goto fail;
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
			} else if (one_of[c] >= 0) {
				t->src[j] = -1;
				cum = one_cum;
				n = 1;
				lv = -2;
				t->sigma[j] = f->ones_lev[one_of[c]] * f->ones_sigma[one_of[c]];
			} else {
				goto fail; /* a component nothing writes */
			}
		}
		if (!cum || n < 1 || n > SLOTS || cum[n] != SLOTS)
			goto fail;
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
	for (int j = 0; j < S; j++)
		if (t->cnt[j] > 256)
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
	if (!t->lv || !t->lvbase || ntables > INT32_MAX - 512)
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
	return NULL;
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

size_t wzc_wzx_encode_lanes4(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			     uint8_t *out, size_t cap)
{
	return wzc_wzx_encode_lanes32(x, layer, n, records, 0, out, cap);
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
	const fast32 *t = layer_tables(x, layer);
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

/* ---- the fast loops ---- */

#define E_FREQ(e) ((((e) >> 12) & 0xfff) + 1)
#define E_BIAS(e) ((e) & 0xfff)

/* The last symbols one at a time with every read checked, then the end
 * check; sym or rows (the other NULL). */
int wzc_wzx_fast32_tail(const fast32 *t, uint32_t *x, long i, long N, int j, const uint8_t *p,
			const uint8_t *end, uint16_t *sym, rows_state *r)
{
	for (; i < N; i++) {
		int k = (int)(i % K4);
		uint32_t idx = t->off[j] + (x[k] & (SLOTS - 1)), e = t->fb[idx];
		uint32_t xs = E_FREQ(e) * (x[k] >> WZC_RANS12_BITS) + E_BIAS(e);
		if (wzc_lanes_refill(&xs, &p, end))
			return -1;
		x[k] = xs;
		if (sym)
			sym[i] = t->sym[idx];
		else
			put_value(t, r, j, t->sym[idx], t->val[idx]);
		if (++j == t->S) {
			j = 0;
			if (r)
				r->row += r->stride;
		}
	}
	if (p != end)
		return -1;
	for (int k = 0; k < K4; k++)
		if (x[k] != WZC_LANES_LOW)
			return -1;
	return 0;
}

/* Rounds of 32 symbols while 64 bytes are left (a round reads at most 32
 * words): each lane's step, then the renormalisations in lane order as
 * conditional moves. */
static inline __attribute__((always_inline)) int scalar_loop(const fast32 *t, long N,
							      const uint8_t *payload, size_t size,
							      uint16_t *sym, rows_state *r)
{
	if (size < 4 * K4)
		return -1;
	uint32_t x[K4];
	read_states(payload, x);
	const uint8_t *p = payload + 4 * K4, *end = payload + size;
	const uint32_t *fb = t->fb, *off = t->off;
	long i = 0;
	int j = 0, S = t->S;
	while (i + K4 <= N && end - p >= 2 * K4) {
		uint32_t idx[K4];
#pragma GCC unroll 32
		for (int k = 0; k < K4; k++) {
			idx[k] = off[j + k] + (x[k] & (SLOTS - 1));
			uint32_t e = fb[idx[k]];
			x[k] = E_FREQ(e) * (x[k] >> WZC_RANS12_BITS) + E_BIAS(e);
		}
#pragma GCC unroll 32
		for (int k = 0; k < K4; k++) {
			uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8;
			uint32_t low = x[k] < WZC_LANES_LOW;
			x[k] = low ? x[k] << 16 | w : x[k];
			p += 2 * low;
		}
		if (sym) {
			for (int k = 0; k < K4; k++)
				sym[i + k] = t->sym[idx[k]];
		} else if (j >= t->H && j + K4 <= S) {
			/* one token's components: straight into its row */
			float *o = r->row + (j - t->H);
			for (int k = 0; k < K4; k++) {
				int q = t->rope[j + k] & 1;
				float y = t->val[idx[k]] * t->sigma[j + k] * r->s[q];
				o[k] = r->flag[q] ? y + t->delta[j + k] : y;
			}
			if (j + K4 == S)
				r->row += r->stride;
		} else {
			for (int k = 0, jj = j; k < K4; k++) {
				put_value(t, r, jj, t->sym[idx[k]], t->val[idx[k]]);
				if (++jj == S) {
					jj = 0;
					r->row += r->stride;
				}
			}
		}
		i += K4;
		j += K4;
		while (j >= S)
			j -= S;
	}
	return wzc_wzx_fast32_tail(t, x, i, N, j, p, end, sym, r);
}

WZ_HOT static int scalar_symbols(const fast32 *t, long N, const uint8_t *payload, size_t size,
				 uint16_t *sym)
{
	return scalar_loop(t, N, payload, size, sym, NULL);
}

WZ_HOT static int scalar_rows(const fast32 *t, long N, const uint8_t *payload, size_t size,
			      rows_state *r)
{
	return scalar_loop(t, N, payload, size, NULL, r);
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

/* BEST: the fastest this processor has (AVX-512, then AVX2 -- with plain
 * loads for its look-ups on AMD processors, whose gathers (Zen 3's
 * vpgatherdd is microcoded) were measured slower, docs/restore.md --
 * then the portable loop); WZX_LANES4_PATH=scalar, =avx2 or =avx2-loads
 * in the environment keeps it to that loop where the processor has it
 * (for tests and measuring).  A path the processor lacks runs the
 * portable loop. */
static int amd(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
	return __builtin_cpu_is("amd");
#else
	return 0;
#endif
}

static wzc_lanes4_path resolve(wzc_lanes4_path path)
{
	if (path != WZC_LANES4_BEST)
		return (path == WZC_LANES4_AVX512 || path == WZC_LANES4_AVX2 || path == WZC_LANES4_AVX2_LOADS) &&
				       !wzc_wzx_lanes4_have(path)
			       ? WZC_LANES4_SCALAR
			       : path;
	static int best = -1;
	int b = __atomic_load_n(&best, __ATOMIC_RELAXED);
	if (b < 0) {
		const char *env = getenv("WZX_LANES4_PATH");
		if (env && !strcmp(env, "scalar"))
			b = WZC_LANES4_SCALAR;
		else if (env && !strcmp(env, "avx2"))
			b = wzc_wzx_lanes4_have(WZC_LANES4_AVX2) ? WZC_LANES4_AVX2 : WZC_LANES4_SCALAR;
		else if (env && !strcmp(env, "avx2-loads"))
			b = wzc_wzx_lanes4_have(WZC_LANES4_AVX2_LOADS) ? WZC_LANES4_AVX2_LOADS : WZC_LANES4_SCALAR;
		else if (wzc_wzx_lanes4_have(WZC_LANES4_AVX512))
			b = WZC_LANES4_AVX512;
		else if (wzc_wzx_lanes4_have(WZC_LANES4_AVX2))
			b = amd() ? WZC_LANES4_AVX2_LOADS : WZC_LANES4_AVX2;
		else
			b = WZC_LANES4_SCALAR;
		__atomic_store_n(&best, b, __ATOMIC_RELAXED);
	}
	return (wzc_lanes4_path)b;
}

int wzc_wzx_decode_lanes4_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
			       const uint8_t *payload, size_t size, uint16_t *sym)
{
	const fast32 *t = layer_tables(x, layer);
	if (!t)
		return -1;
	path = resolve(path);
	if (path == WZC_LANES4_REF)
		return wzc_wzx_decode_lanes4_ref(x, layer, n, payload, size, sym);
	long N = (long)n * t->S;
#ifdef WZ_HAVE_AVX512_PATH
	if (path == WZC_LANES4_AVX512)
		return wzc_wzx_fast32_avx512_symbols(t, N, payload, size, sym);
#endif
#ifdef WZ_HAVE_AVX2_PATH
	if (path == WZC_LANES4_AVX2)
		return wzc_wzx_fast32_avx2_symbols(t, N, payload, size, sym);
	if (path == WZC_LANES4_AVX2_LOADS)
		return wzc_wzx_fast32_avx2_loads_symbols(t, N, payload, size, sym);
#endif
	return scalar_symbols(t, N, payload, size, sym);
}

int wzc_wzx_lanes_ref_rows(const wzc_wzx *x, int layer, wzc_lanes_ref_fn decode_ref, int n,
			   const uint8_t *payload, size_t size, float *rows, size_t stride)
{
	const fast32 *t = layer_tables(x, layer);
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

int wzc_wzx_decode_lanes4_rows_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
				    const uint8_t *payload, size_t size, float *rows, size_t stride)
{
	const fast32 *t = layer_tables(x, layer);
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!t || !ly)
		return -1;
	path = resolve(path);
	if (path == WZC_LANES4_REF) {
		return wzc_wzx_lanes_ref_rows(x, layer, wzc_wzx_decode_lanes4_ref, n, payload, size,
					      rows, stride);
	}
	rows_state r = { .row = rows, .stride = stride };
	long N = (long)n * t->S;
#ifdef WZ_HAVE_AVX512_PATH
	if (path == WZC_LANES4_AVX512)
		return wzc_wzx_fast32_avx512_rows(t, N, payload, size, &r);
#endif
#ifdef WZ_HAVE_AVX2_PATH
	if (path == WZC_LANES4_AVX2)
		return wzc_wzx_fast32_avx2_rows(t, N, payload, size, &r);
	if (path == WZC_LANES4_AVX2_LOADS)
		return wzc_wzx_fast32_avx2_loads_rows(t, N, payload, size, &r);
#endif
	return scalar_rows(t, N, payload, size, &r);
}

int wzc_wzx_decode_lanes4_rows(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			       size_t size, float *rows, size_t stride)
{
	return wzc_wzx_decode_lanes4_rows_path(x, layer, WZC_LANES4_BEST, n, payload, size, rows, stride);
}

int wzc_wzx_decode_lanes4_rows_group(const wzc_wzx *x, int layer, wzc_lanes4_path path, int G,
				     int n, const uint8_t *const *payload, const size_t *size,
				     float *const *rows, size_t stride, int *verdict)
{
	/* one block after another: two and four blocks in lockstep (the
	 * loop's G) were measured slower than one, 32 lanes being enough
	 * chains already (docs/restore.md) */
	int bad = 0;
	for (int g = 0; g < G; g++)
		bad |= verdict[g] = wzc_wzx_decode_lanes4_rows_path(x, layer, path, n, payload[g], size[g],
								   rows[g], stride);
	return bad ? -1 : 0;
}
