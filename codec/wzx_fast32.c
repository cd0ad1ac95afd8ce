/* Type 4 blocks (wzx version 4): 32 lanes of 12-bit rANS over each token's
 * symbols in output order (docs/wzx-format.md, "Interleaved 12-bit rANS in
 * output order"), so that a decoder writes the transformed domain straight
 * from its rANS loop.  Per static table and level table a 4096-entry slot
 * arena (a u32 of frequency, slot offset and symbol byte; the level value;
 * the u16 symbol), all of a layer's in one allocation; the encoder; the
 * scalar reference (every read checked, the symbol by binary search); a
 * branch-free scalar loop; an AVX-512 loop (two vectors of 16 lanes, the
 * renormalisation words placed by a mask expand, as htscodecs'
 * rANS_static32x16pr_avx512 does) and an AVX2 loop (four vectors of 8
 * lanes, the words placed by a permutation table, as htscodecs'
 * rANS_static32x16pr_avx2 does), each to symbols and fused to rows.
 * Every fast path is tested against the reference. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WZ_HAVE_AVX512_PATH 1
#define WZ_HAVE_AVX2_PATH 1
#endif

#include "codec/hot.h"
#include "codec/wz_flat.h"
#include "codec/wzx_fast.h"
#include "codec/wzx_internal.h"
#include "codec/wzx_lanes.h"
#include "codec/wzx_token.h"

#define SLOTS WZC_RANS12_M
#define K4 WZC_LANES4

/* A single-level component's table: one symbol, f = 2^12 (no state change,
 * no word read or written). */
static const uint32_t one_cum[2] = { 0, SLOTS };

typedef struct {
	int S, H, sb, nv, P;
	int32_t *src;          /* [S] scale byte j (j < sb), else the entry coded there, -1 single level */
	const uint32_t **cum;  /* [S] the place's 12-bit table */
	uint32_t *cnt;         /* [S] its symbols */
	uint32_t *fb;          /* [ntab * 4096] (s & 255) << 24 | (f - 1) << 12 | (slot - c) */
	float *val;            /* [ntab * 4096] the level value of the slot's symbol (1 single, 0 heads) */
	uint16_t *sym;         /* [ntab * 4096 + 2] the symbol */
	float *lv;             /* the plan's level tables, then 1 (single levels), then 256 zeros (heads) */
	int32_t *lvbase;       /* [S + K4] where place j's level table starts in lv */
	uint32_t *off;         /* [S + K4] arena offset of place j's table, j mod S */
	uint8_t *wide;         /* [S] a round from place j meets a table of over 256 symbols */
	float *sigma, *delta;  /* [S + K4] the component's sigma (a single level's level x sigma), delta */
	uint8_t *rope;         /* [S + K4] 0xff for a position component */
	int flag_place[2];     /* place of the latent and position anchor flags, -1 none */
	const float *scale_mult;
	float scale_ref[2];
} fast32;

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

int wzc_wzx_layer_type4(const wzc_wzx *x, int layer)
{
	return layer_tables(x, layer) != NULL;
}

int wzc_wzx_block_symbols4(const wzc_wzx *x, int layer)
{
	const fast32 *t = layer_tables(x, layer);
	return t ? t->S : 0;
}

size_t wzc_wzx_encode_lanes4(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			     uint8_t *out, size_t cap)
{
	const fast32 *t = layer_tables(x, layer);
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!t || !ly || n < 1)
		return 0;
	const wzc_wz_flat *f = ly->flat;
	int S = t->S;
	size_t room = (size_t)n * x->B + 4 * (size_t)K4 + 2;
	uint16_t *sym = malloc(sizeof *sym * (size_t)n * S);
	uint32_t *dig = malloc(sizeof *dig * ((size_t)f->nentries + 1));
	uint8_t *tmp = malloc(room);
	size_t got = 0;
	if (sym && dig && tmp) {
		for (int k = 0; k < n; k++) {
			const uint8_t *rec = records + (size_t)k * x->B;
			wzc_wzx_digits(f, rec, dig);
			for (int j = 0; j < S; j++)
				sym[(size_t)k * S + j] = (uint16_t)(j < t->sb ? rec[j] : t->src[j] < 0 ? 0 : dig[t->src[j]]);
		}
		wzc_lanes_enc enc;
		wzc_lanes_enc_init(&enc, K4, tmp, room);
		for (long i = (long)n * S - 1; i >= 0 && !enc.overflow; i--)
			wzc_lanes12_put(&enc, (int)(i % K4), t->cum[i % S], sym[i]);
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

static void read_states(const uint8_t *payload, uint32_t *x)
{
	for (int k = 0; k < K4; k++) {
		const uint8_t *q = payload + 4 * k;
		x[k] = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
	}
}

#define E_FREQ(e) ((((e) >> 12) & 0xfff) + 1)
#define E_BIAS(e) ((e) & 0xfff)

/* Where the rows of a fused decode stand: the token's row, its scales and
 * anchor flags as the heads of its places are decoded. */
typedef struct {
	float *row;
	size_t stride;
	uint32_t head[4];
	float s[2];
	int flag[2];
} rows_state;

/* Place j of the current token decoded to symbol s with level value v. */
static inline void put_value(const fast32 *t, rows_state *r, int j, uint32_t s, float v)
{
	if (j < t->H) {
		r->head[j] = s;
		if (j == t->H - 1) {
			r->s[0] = t->scale_mult[r->head[0]] * t->scale_ref[0];
			r->s[1] = t->P ? t->scale_mult[r->head[1]] * t->scale_ref[1] : 0.0f;
			for (int p = 0; p < 2; p++)
				r->flag[p] = t->flag_place[p] >= 0 && r->head[t->flag_place[p]];
		}
		return;
	}
	int p = t->rope[j] & 1;
	float y = v * t->sigma[j] * r->s[p];
	r->row[j - t->H] = r->flag[p] ? y + t->delta[j] : y;
}

/* The last symbols one at a time with every read checked, then the end
 * check; sym or rows (the other NULL). */
static int tail(const fast32 *t, uint32_t *x, long i, long N, int j, const uint8_t *p,
		const uint8_t *end, uint16_t *sym, rows_state *r)
{
	for (; i < N; i++) {
		int k = (int)(i % K4);
		uint32_t idx = t->off[j] + (x[k] & (SLOTS - 1)), e = t->fb[idx];
		uint32_t xs = E_FREQ(e) * (x[k] >> WZC_RANS12_BITS) + E_BIAS(e);
		if (xs < WZC_LANES_LOW) {
			if (end - p < 2)
				return -1;
			xs = xs << 16 | (uint32_t)p[0] | (uint32_t)p[1] << 8;
			p += 2;
		}
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
	return tail(t, x, i, N, j, p, end, sym, r);
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

#if defined(WZ_HAVE_AVX512_PATH) || defined(WZ_HAVE_AVX2_PATH)
/* Bits a .. b - 1 of a 32-bit lane mask (clipped to 0 .. 32). */
static inline uint32_t lanes_between(int a, int b)
{
	a = a < 0 ? 0 : a > 32 ? 32 : a;
	b = b < 0 ? 0 : b > 32 ? 32 : b;
	if (b <= a)
		return 0;
	uint64_t m = ((uint64_t)1 << b) - ((uint64_t)1 << a);
	return (uint32_t)m;
}

/* The heads among lanes [a, b) (places a - base .. of the token) from the
 * entries' symbol bytes; the token's scales and flags once the last is in. */
static inline void take_heads(const fast32 *t, rows_state *r, const uint32_t *e, int a, int b, int base)
{
	for (int k = a; k < b; k++)
		put_value(t, r, k - base, e[k] >> 24, 0.0f);
}

#endif

#ifdef WZ_HAVE_AVX512_PATH
#define AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,popcnt")))

/* One vector of 16 lanes: the slot entries gathered, the state step, and
 * the renormalisation of the lanes below 2^16 from the next words (the
 * next 16 widened, then spread to those lanes by a mask expand, as
 * htscodecs' rANS_static32x16pr_avx512 places them). */
AVX512_TARGET static inline __attribute__((always_inline)) __m512i
step16(__m512i x, __m512i off, const int *fb, const uint8_t **pp, __m512i *idx_out,
       __m512i *e_out)
{
	const __m512i low12 = _mm512_set1_epi32(SLOTS - 1), one = _mm512_set1_epi32(1);
	__m512i idx = _mm512_add_epi32(off, _mm512_and_si512(x, low12));
	__m512i e = _mm512_i32gather_epi32(idx, fb, 4);
	__m512i f = _mm512_add_epi32(_mm512_and_si512(_mm512_srli_epi32(e, 12), low12), one);
	x = _mm512_add_epi32(_mm512_mullo_epi32(f, _mm512_srli_epi32(x, WZC_RANS12_BITS)),
			     _mm512_and_si512(e, low12));
	__mmask16 m = _mm512_cmplt_epu32_mask(x, _mm512_set1_epi32((int)WZC_LANES_LOW));
	__m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)*pp));
	w = _mm512_maskz_expand_epi32(m, w);
	x = _mm512_mask_or_epi32(x, m, _mm512_slli_epi32(x, 16), w);
	*pp += 2 * __builtin_popcount((unsigned)m);
	*idx_out = idx;
	*e_out = e;
	return x;
}

/* The values of the lanes in mask (places j + k - shift of the token whose
 * row is row, place H at row[0]; the place tables run past S, wrapped)
 * into that row: level x sigma x the part's scale,
 * plus delta where the part's anchor flag is set. */
AVX512_TARGET static inline __attribute__((always_inline)) void
store_values(const fast32 *t, int j, int shift, __m512 v0, __m512 v1, uint32_t mask,
	     float *row, const float *s, const int *flag)
{
	__m512 sl = _mm512_set1_ps(s[0]), sr = _mm512_set1_ps(s[1]);
	for (int h = 0; h < 2; h++) {
		__mmask16 m = (__mmask16)(mask >> (16 * h));
		if (!m)
			continue;
		int q = j + 16 * h;
		__m512 lv = h ? v1 : v0;
		__mmask16 rope = _mm_movepi8_mask(_mm_loadu_si128((const __m128i *)(const void *)(t->rope + q)));
		__m512 y = _mm512_mul_ps(_mm512_mul_ps(lv, _mm512_loadu_ps(t->sigma + q)),
					 _mm512_mask_blend_ps(rope, sl, sr));
		__mmask16 fm = (__mmask16)((flag[0] ? ~rope : 0) | (flag[1] ? rope : 0));
		y = _mm512_mask_add_ps(y, fm, y, _mm512_loadu_ps(t->delta + q));
		/* lanes outside mask are not written (nor read past the row) */
		_mm512_mask_storeu_ps(row + (q - shift - t->H), m, y);
	}
}

/* G blocks of one layer and one token count in lockstep (G a constant
 * after inlining; only G = 1 is used: 2 and 4 were measured slower, see
 * wzc_wzx_decode_lanes4_rows_group).  The unchecked rounds run while
 * every block has a round's bytes left; each block then finishes alone in
 * the checked tail.  sym[g] or r[g] (the other NULL). */
AVX512_TARGET static inline __attribute__((always_inline)) void
avx512_loop(const fast32 *t, const int G, long N, const uint8_t *const *payload, const size_t *size,
	    uint16_t *const *sym, rows_state *r, int *verdict)
{
	__m512i x0[WZC_LANES4_GROUP_MAX], x1[WZC_LANES4_GROUP_MAX];
	const uint8_t *p[WZC_LANES4_GROUP_MAX], *end[WZC_LANES4_GROUP_MAX];
	for (int g = 0; g < G; g++) {
		uint32_t xs[K4];
		read_states(payload[g], xs);
		x0[g] = _mm512_loadu_si512(xs);
		x1[g] = _mm512_loadu_si512(xs + 16);
		p[g] = payload[g] + 4 * K4;
		end[g] = payload[g] + size[g];
	}
	const int *fb = (const int *)(const void *)t->fb, *sy = (const int *)(const void *)t->sym;
	long i = 0;
	int j = 0, S = t->S, H = t->H;
	for (;;) {
		int room = i + K4 <= N;
		for (int g = 0; g < G; g++)
			room &= end[g] - p[g] >= 2 * K4;
		if (!room)
			break;
		__m512i off0 = _mm512_loadu_si512(t->off + j), off1 = _mm512_loadu_si512(t->off + j + 16);
		__m512i lvb0 = _mm512_loadu_si512(t->lvbase + j), lvb1 = _mm512_loadu_si512(t->lvbase + j + 16);
		for (int g = 0; g < G; g++) {
			__m512i i0, i1, e0, e1;
			x0[g] = step16(x0[g], off0, fb, &p[g], &i0, &e0);
			x1[g] = step16(x1[g], off1, fb, &p[g], &i1, &e1);
			if (!r) {
				__m512i s0, s1;
				if (t->wide[j]) {
					const __m512i low16 = _mm512_set1_epi32(0xffff);
					s0 = _mm512_and_si512(_mm512_i32gather_epi32(i0, sy, 2), low16);
					s1 = _mm512_and_si512(_mm512_i32gather_epi32(i1, sy, 2), low16);
				} else {
					s0 = _mm512_srli_epi32(e0, 24);
					s1 = _mm512_srli_epi32(e1, 24);
				}
				_mm256_storeu_si256((__m256i *)(void *)(sym[g] + i), _mm512_cvtepi32_epi16(s0));
				_mm256_storeu_si256((__m256i *)(void *)(sym[g] + i + 16), _mm512_cvtepi32_epi16(s1));
				continue;
			}
			rows_state *rg = &r[g];
			/* the level values: by symbol byte from the small tables, or
			 * (a round meeting a table of over 256 symbols) by slot */
			__m512 v0, v1;
			if (t->wide[j]) {
				v0 = _mm512_i32gather_ps(i0, t->val, 4);
				v1 = _mm512_i32gather_ps(i1, t->val, 4);
			} else {
				v0 = _mm512_i32gather_ps(_mm512_add_epi32(lvb0, _mm512_srli_epi32(e0, 24)), t->lv, 4);
				v1 = _mm512_i32gather_ps(_mm512_add_epi32(lvb1, _mm512_srli_epi32(e1, 24)), t->lv, 4);
			}
			if (j >= H && j + K4 <= S) {
				/* one token's components alone */
				store_values(t, j, 0, v0, v1, 0xffffffffu, rg->row, rg->s, rg->flag);
				if (j + K4 == S)
					rg->row += rg->stride;
			} else if (S < 2 * K4) {
				/* tokens shorter than two rounds (not a cache shape of
				 * DeepSeek's): lane by lane */
				uint32_t ix[K4];
				_mm512_storeu_si512(ix, i0);
				_mm512_storeu_si512(ix + 16, i1);
				for (int k = 0, jj = j; k < K4; k++) {
					put_value(t, rg, jj, t->sym[ix[k]], t->val[ix[k]]);
					if (++jj == S) {
						jj = 0;
						rg->row += rg->stride;
					}
				}
			} else {
				/* heads, or the next token begins in this round: its
				 * heads first (the scales its values need), by lane masks */
				uint32_t e[K4];
				_mm512_storeu_si512(e, e0);
				_mm512_storeu_si512(e + 16, e1);
				int w = S - j; /* the first lane of the next token (>= 32: none) */
				if (j < H)
					take_heads(t, rg, e, 0, H - j, -j);
				store_values(t, j, 0, v0, v1, lanes_between(H - j, w), rg->row, rg->s, rg->flag);
				if (w < K4) {
					rg->row += rg->stride;
					take_heads(t, rg, e, w, w + H < K4 ? w + H : K4, w);
					store_values(t, j, S, v0, v1, lanes_between(w + H, K4), rg->row, rg->s,
						     rg->flag);
				}
			}
		}
		i += K4;
		j += K4;
		while (j >= S)
			j -= S;
	}
	for (int g = 0; g < G; g++) {
		uint32_t xs[K4];
		_mm512_storeu_si512(xs, x0[g]);
		_mm512_storeu_si512(xs + 16, x1[g]);
		verdict[g] = tail(t, xs, i, N, j, p[g], end[g], r ? NULL : sym[g], r ? &r[g] : NULL);
	}
}

AVX512_TARGET static int avx512_symbols(const fast32 *t, long N, const uint8_t *payload,
					size_t size, uint16_t *sym)
{
	int v;
	if (size < 4 * K4)
		return -1;
	avx512_loop(t, 1, N, &payload, &size, &sym, NULL, &v);
	return v;
}

AVX512_TARGET static int avx512_rows(const fast32 *t, long N, const uint8_t *payload, size_t size,
				     rows_state *r)
{
	int v;
	if (size < 4 * K4)
		return -1;
	avx512_loop(t, 1, N, &payload, &size, NULL, r, &v);
	return v;
}

#endif

#ifdef WZ_HAVE_AVX2_PATH
#define AVX2_TARGET __attribute__((target("avx2,popcnt")))

/* For each mask of 8 lanes that renormalise: where each such lane finds
 * its word among the next eight (the lanes before it that also read, in
 * lane order), the permutation table of htscodecs'
 * rANS_static32x16pr_avx2. */
static uint32_t spread8[256][8];
static pthread_once_t spread8_once = PTHREAD_ONCE_INIT;
static void spread8_init(void)
{
	for (int m = 0; m < 256; m++)
		for (int k = 0, c = 0; k < 8; k++)
			spread8[m][k] = (m >> k & 1) ? (uint32_t)c++ : 0;
}

/* One vector of 8 lanes: the slot entries gathered, the state step, and
 * the renormalisation of the lanes below 2^16 from the next words (the
 * next 8 widened, then permuted to those lanes). */
AVX2_TARGET static inline __attribute__((always_inline)) __m256i
step8(__m256i x, __m256i off, const int *fb, const uint8_t **pp, __m256i *idx_out, __m256i *e_out)
{
	const __m256i low12 = _mm256_set1_epi32(SLOTS - 1), one = _mm256_set1_epi32(1);
	__m256i idx = _mm256_add_epi32(off, _mm256_and_si256(x, low12));
	__m256i e = _mm256_i32gather_epi32(fb, idx, 4);
	__m256i f = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(e, 12), low12), one);
	x = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x, WZC_RANS12_BITS)),
			     _mm256_and_si256(e, low12));
	__m256i need = _mm256_cmpeq_epi32(_mm256_srli_epi32(x, 16), _mm256_setzero_si256());
	int m = _mm256_movemask_ps(_mm256_castsi256_ps(need));
	__m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)*pp));
	w = _mm256_permutevar8x32_epi32(w, _mm256_loadu_si256((const __m256i *)(const void *)spread8[m]));
	x = _mm256_blendv_epi8(x, _mm256_or_si256(_mm256_slli_epi32(x, 16), w), need);
	*pp += 2 * __builtin_popcount((unsigned)m);
	*idx_out = idx;
	*e_out = e;
	return x;
}

/* store_values' AVX2 form: the lanes in mask of the four vectors v. */
AVX2_TARGET static inline __attribute__((always_inline)) void
store_values8(const fast32 *t, int j, int shift, const __m256 *v, uint32_t mask, float *row,
	      const float *s, const int *flag)
{
	const __m256 sl = _mm256_set1_ps(s[0]), sr = _mm256_set1_ps(s[1]);
	const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	const __m256i f0 = _mm256_set1_epi32(flag[0] ? -1 : 0), f1 = _mm256_set1_epi32(flag[1] ? -1 : 0);
	for (int h = 0; h < 4; h++) {
		uint32_t m = mask >> (8 * h) & 0xff;
		if (!m)
			continue;
		int q = j + 8 * h;
		__m256i rope = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(t->rope + q)));
		__m256 y = _mm256_mul_ps(_mm256_mul_ps(v[h], _mm256_loadu_ps(t->sigma + q)),
					 _mm256_blendv_ps(sl, sr, _mm256_castsi256_ps(rope)));
		__m256i fm = _mm256_or_si256(_mm256_andnot_si256(rope, f0), _mm256_and_si256(rope, f1));
		/* a blend, not an add of zero: -0 stays -0 as in the scalar loop */
		y = _mm256_blendv_ps(y, _mm256_add_ps(y, _mm256_loadu_ps(t->delta + q)), _mm256_castsi256_ps(fm));
		float *o = row + (q - shift - t->H);
		if (m == 0xff) {
			_mm256_storeu_ps(o, y);
		} else {
			/* lanes outside mask are not written (nor read past the row) */
			__m256i mv = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int)m), bit), bit);
			_mm256_maskstore_ps(o, mv, y);
		}
	}
}

/* avx512_loop's rounds on four vectors of 8 lanes, one block: sym or r
 * (the other NULL). */
AVX2_TARGET static inline __attribute__((always_inline)) int
avx2_loop(const fast32 *t, long N, const uint8_t *payload, size_t size, uint16_t *sym, rows_state *r)
{
	if (size < 4 * K4)
		return -1;
	pthread_once(&spread8_once, spread8_init);
	uint32_t xs[K4];
	read_states(payload, xs);
	__m256i x[4];
	for (int h = 0; h < 4; h++)
		x[h] = _mm256_loadu_si256((const __m256i *)(const void *)(xs + 8 * h));
	const uint8_t *p = payload + 4 * K4, *end = payload + size;
	const int *fb = (const int *)(const void *)t->fb, *sy = (const int *)(const void *)t->sym;
	long i = 0;
	int j = 0, S = t->S, H = t->H;
	while (i + K4 <= N && end - p >= 2 * K4) {
		__m256i idx[4], e[4];
#pragma GCC unroll 4
		for (int h = 0; h < 4; h++) {
			__m256i off = _mm256_loadu_si256((const __m256i *)(const void *)(t->off + j + 8 * h));
			x[h] = step8(x[h], off, fb, &p, &idx[h], &e[h]);
		}
		if (!r) {
			__m256i s[4];
			for (int h = 0; h < 4; h++)
				s[h] = t->wide[j] ? _mm256_and_si256(_mm256_i32gather_epi32(sy, idx[h], 2),
								    _mm256_set1_epi32(0xffff))
						  : _mm256_srli_epi32(e[h], 24);
			for (int h = 0; h < 4; h += 2) {
				__m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(s[h], s[h + 1]), 0xd8);
				_mm256_storeu_si256((__m256i *)(void *)(sym + i + 8 * h), packed);
			}
		} else {
			__m256 v[4];
			for (int h = 0; h < 4; h++) {
				if (t->wide[j]) {
					v[h] = _mm256_i32gather_ps(t->val, idx[h], 4);
				} else {
					__m256i lvb = _mm256_loadu_si256((const __m256i *)(const void *)(t->lvbase + j + 8 * h));
					v[h] = _mm256_i32gather_ps(t->lv, _mm256_add_epi32(lvb, _mm256_srli_epi32(e[h], 24)), 4);
				}
			}
			if (j >= H && j + K4 <= S) {
				store_values8(t, j, 0, v, 0xffffffffu, r->row, r->s, r->flag);
				if (j + K4 == S)
					r->row += r->stride;
			} else if (S < 2 * K4) {
				uint32_t ix[K4];
				for (int h = 0; h < 4; h++)
					_mm256_storeu_si256((__m256i *)(void *)(ix + 8 * h), idx[h]);
				for (int k = 0, jj = j; k < K4; k++) {
					put_value(t, r, jj, t->sym[ix[k]], t->val[ix[k]]);
					if (++jj == S) {
						jj = 0;
						r->row += r->stride;
					}
				}
			} else {
				uint32_t es[K4];
				for (int h = 0; h < 4; h++)
					_mm256_storeu_si256((__m256i *)(void *)(es + 8 * h), e[h]);
				int w = S - j;
				if (j < H)
					take_heads(t, r, es, 0, H - j, -j);
				store_values8(t, j, 0, v, lanes_between(H - j, w), r->row, r->s, r->flag);
				if (w < K4) {
					r->row += r->stride;
					take_heads(t, r, es, w, w + H < K4 ? w + H : K4, w);
					store_values8(t, j, S, v, lanes_between(w + H, K4), r->row, r->s, r->flag);
				}
			}
		}
		i += K4;
		j += K4;
		while (j >= S)
			j -= S;
	}
	for (int h = 0; h < 4; h++)
		_mm256_storeu_si256((__m256i *)(void *)(xs + 8 * h), x[h]);
	return tail(t, xs, i, N, j, p, end, sym, r);
}

AVX2_TARGET static int avx2_symbols(const fast32 *t, long N, const uint8_t *payload, size_t size,
				    uint16_t *sym)
{
	return avx2_loop(t, N, payload, size, sym, NULL);
}

AVX2_TARGET static int avx2_rows(const fast32 *t, long N, const uint8_t *payload, size_t size,
				 rows_state *r)
{
	return avx2_loop(t, N, payload, size, NULL, r);
}

#endif

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
#ifdef WZ_HAVE_AVX2_PATH
		return __builtin_cpu_supports("avx2");
#else
		return 0;
#endif
	}
	return 0;
}

/* BEST: the fastest this processor has (AVX-512, then AVX2, then the
 * portable loop); WZX_LANES4_PATH=scalar or =avx2 in the environment
 * keeps it to that loop where the processor has it (for tests and
 * measuring).  A path the processor lacks runs the portable loop. */
static wzc_lanes4_path resolve(wzc_lanes4_path path)
{
	if (path != WZC_LANES4_BEST)
		return (path == WZC_LANES4_AVX512 || path == WZC_LANES4_AVX2) && !wzc_wzx_lanes4_have(path)
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
		else
			b = wzc_wzx_lanes4_have(WZC_LANES4_AVX512) ? WZC_LANES4_AVX512
			    : wzc_wzx_lanes4_have(WZC_LANES4_AVX2) ? WZC_LANES4_AVX2
								     : WZC_LANES4_SCALAR;
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
		return avx512_symbols(t, N, payload, size, sym);
#endif
#ifdef WZ_HAVE_AVX2_PATH
	if (path == WZC_LANES4_AVX2)
		return avx2_symbols(t, N, payload, size, sym);
#endif
	return scalar_symbols(t, N, payload, size, sym);
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
		/* the reference: symbols, back to coding order, the wz decoder's steps */
		size_t S3 = (size_t)x->scale_bytes + ly->flat->nentries;
		uint16_t *s4 = malloc(sizeof *s4 * (size_t)n * t->S);
		uint16_t *s3 = malloc(sizeof *s3 * ((size_t)n * S3 + 2));
		int bad = -1;
		if (s4 && s3 && !(bad = wzc_wzx_decode_lanes4_ref(x, layer, n, payload, size, s4))) {
			wzc_wzx_symbols4_entries(x, layer, n, s4, s3);
			wzc_wzx_symbols_rows_path(x, layer, WZC_TRANSFORM_REF, n, s3, rows, stride);
		}
		free(s4);
		free(s3);
		return bad;
	}
	rows_state r = { .row = rows, .stride = stride };
	long N = (long)n * t->S;
#ifdef WZ_HAVE_AVX512_PATH
	if (path == WZC_LANES4_AVX512)
		return avx512_rows(t, N, payload, size, &r);
#endif
#ifdef WZ_HAVE_AVX2_PATH
	if (path == WZC_LANES4_AVX2)
		return avx2_rows(t, N, payload, size, &r);
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
