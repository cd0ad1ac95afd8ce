/* The throughput decoder of type 3 blocks (wzx version 3, 12-bit rANS in
 * eight lanes): per static table a 4096-entry slot table (frequency and
 * slot offset packed in a u32, the symbol in a u16), all of a layer's
 * tables in one arena so eight lanes look up their slots with one gather;
 * a branch-free scalar loop, an AVX2 loop chosen at run time, and the
 * scalar reference (every read checked) that both are tested against on
 * every payload. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WZ_HAVE_AVX2_PATH 1
#endif

#include "codec/hot.h"
#include "codec/wz/wz_flat.h"
#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_lanes.h"

#define SLOTS WZC_RANS12_M
#define K3 WZC_LANES /* the lanes of a type 3 block */

typedef struct {
	uint32_t *fb;   /* [ntab * 4096] (s & 255) << 24 | (f - 1) << 12 | (slot - c) */
	uint16_t *sym;  /* [ntab * 4096 + 2] the symbol (2 spare: a 32-bit gather reads past) */
	uint32_t *off;  /* [S + K3] arena offset of symbol position j's table, j mod S */
	uint8_t *wide;  /* [S] 1 when a round from position j meets a table of over 256
			 * symbols (its symbols are then read from sym, not the entry) */
	int S;
} fast12;

/* An entry's parts: the frequency, the slot's offset in its interval, and
 * the symbol's low byte (all of it for a table of at most 256 symbols). */
#define E_FREQ(e) ((((e) >> 12) & 0xfff) + 1)
#define E_BIAS(e) ((e) & 0xfff)

void wzc_wzx_fast12_free_layer(wzx_layer *ly)
{
	fast12 *t = ly->fast12;
	if (!t)
		return;
	free(t->fb);
	free(t->sym);
	free(t->off);
	free(t->wide);
	free(t);
	ly->fast12 = NULL;
}

/* The 12-bit table of symbol position j of a token. */
static const uint32_t *position_cum(const wzc_wzx *x, const wzx_layer *ly, int j, uint32_t *n)
{
	int sb = x->scale_bytes;
	*n = j < sb ? 256 : ly->ecount12[j - sb];
	return j < sb ? x->cum12_scale : ly->ecum12[j - sb];
}

static fast12 *build(const wzc_wzx *x, const wzx_layer *ly)
{
	int S = x->scale_bytes + ly->flat->nentries;
	fast12 *t = calloc(1, sizeof *t);
	const uint32_t **seen = malloc(sizeof *seen * (size_t)S);
	uint32_t *tab_of = malloc(sizeof *tab_of * (size_t)S);
	if (!t || !seen || !tab_of)
		goto fail;
	/* distinct tables, by pointer: the coder shares one per (part, count) */
	int ntab = 0;
	for (int j = 0; j < S; j++) {
		uint32_t n;
		const uint32_t *cum = position_cum(x, ly, j, &n);
		int k = 0;
		while (k < ntab && seen[k] != cum)
			k++;
		if (k == ntab)
			seen[ntab++] = cum;
		tab_of[j] = (uint32_t)k;
	}
	t->fb = malloc(sizeof *t->fb * (size_t)ntab * SLOTS);
	t->sym = malloc(sizeof *t->sym * ((size_t)ntab * SLOTS + 2));
	t->off = malloc(sizeof *t->off * ((size_t)S + K3));
	t->wide = calloc((size_t)S, 1);
	if (!t->fb || !t->sym || !t->off || !t->wide)
		goto fail;
	for (int k = 0; k < ntab; k++) {
		const uint32_t *cum = seen[k];
		for (uint32_t s = 0; cum[s] < SLOTS; s++)
			for (uint32_t slot = cum[s]; slot < cum[s + 1]; slot++) {
				t->fb[(size_t)k * SLOTS + slot] =
					(s & 255) << 24 | (cum[s + 1] - cum[s] - 1) << 12 | (slot - cum[s]);
				t->sym[(size_t)k * SLOTS + slot] = (uint16_t)s;
			}
	}
	t->sym[(size_t)ntab * SLOTS] = t->sym[(size_t)ntab * SLOTS + 1] = 0;
	for (int j = 0; j < S + K3; j++)
		t->off[j] = tab_of[j % S] * SLOTS;
	for (int j = 0; j < S; j++) {
		uint32_t n;
		position_cum(x, ly, j, &n);
		if (n > 256)
			for (int k = 0; k < K3; k++)
				t->wide[(j - k + S * K3) % S] = 1;
	}
	t->S = S;
	free(seen);
	free(tab_of);
	return t;
fail:
	if (t) {
		free(t->fb);
		free(t->sym);
		free(t->off);
		free(t->wide);
	}
	free(t);
	free(seen);
	free(tab_of);
	return NULL;
}

static void *build_tables(const wzc_wzx *x, const wzx_layer *ly)
{
	return build(x, ly);
}

/* The layer's tables, built on first use; NULL when out of memory or the
 * layer has no type 3 tables. */
static const fast12 *layer_tables(const wzc_wzx *cx, int layer)
{
	wzc_wzx *x = (wzc_wzx *)cx; /* the tables are a cache, not the coder's state */
	wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly || !ly->type3)
		return NULL;
	return wzc_wzx_layer_table(x, ly, &ly->fast12_ready, &ly->fast12, build_tables);
}

int wzc_wzx_decode_lanes12_ref(const wzc_wzx *x, int layer, int K, int n, const uint8_t *payload,
			       size_t size, uint16_t *sym)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly || !ly->type3)
		return -1;
	int S = x->scale_bytes + ly->flat->nentries;
	wzc_lanes_dec dec;
	wzc_lanes_dec_init(&dec, K, payload, size);
	long N = (long)n * S;
	for (long i = 0; i < N && !dec.bad; i++) {
		uint32_t cnt;
		const uint32_t *cum = position_cum(x, ly, (int)(i % S), &cnt);
		sym[i] = (uint16_t)wzc_lanes12_get(&dec, (int)(i % K), cum, cnt);
	}
	return wzc_lanes_dec_done(&dec) ? 0 : -1;
}

/* The last symbols (fewer than a round, or too few bytes left for a round
 * unchecked) one at a time with every read checked, then the end check. */
static int tail(const fast12 *t, uint32_t *x, long i, long N, int j, const uint8_t *p,
		const uint8_t *end, uint16_t *sym)
{
	for (; i < N; i++) {
		int k = (int)(i % K3);
		uint32_t idx = t->off[j] + (x[k] & (SLOTS - 1)), e = t->fb[idx];
		uint32_t xs = E_FREQ(e) * (x[k] >> WZC_RANS12_BITS) + E_BIAS(e);
		if (wzc_lanes_refill(&xs, &p, end))
			return -1;
		x[k] = xs;
		sym[i] = t->sym[idx];
		j = j + 1 == t->S ? 0 : j + 1;
	}
	if (p != end)
		return -1;
	for (int k = 0; k < K3; k++)
		if (x[k] != WZC_LANES_LOW)
			return -1;
	return 0;
}

static void read_states(const uint8_t *payload, uint32_t *x)
{
	for (int k = 0; k < K3; k++) {
		const uint8_t *q = payload + 4 * k;
		x[k] = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
	}
}

/* While at least 2 x 8 bytes are left a round of eight symbols cannot read
 * past the payload (each reads at most one word): no checks there.  Every
 * lane's state step first (eight independent chains), then the
 * renormalisations in lane order, each a conditional move. */
WZ_HOT static int scalar_loop(const fast12 *t, long N, const uint8_t *payload, size_t size,
			      uint16_t *sym)
{
	if (size < 4 * K3)
		return -1;
	uint32_t x[K3];
	read_states(payload, x);
	const uint8_t *p = payload + 4 * K3, *end = payload + size;
	const uint32_t *fb = t->fb, *off = t->off;
	const uint16_t *sy = t->sym;
	long i = 0;
	int j = 0, S = t->S;
	while (i + K3 <= N && end - p >= 2 * K3) {
#pragma GCC unroll 8
		for (int k = 0; k < K3; k++) {
			uint32_t idx = off[j + k] + (x[k] & (SLOTS - 1)), e = fb[idx];
			x[k] = E_FREQ(e) * (x[k] >> WZC_RANS12_BITS) + E_BIAS(e);
			sym[i + k] = sy[idx];
		}
#pragma GCC unroll 8
		for (int k = 0; k < K3; k++) {
			uint32_t w = (uint32_t)p[0] | (uint32_t)p[1] << 8;
			uint32_t low = x[k] < WZC_LANES_LOW;
			x[k] = low ? x[k] << 16 | w : x[k];
			p += 2 * low;
		}
		i += K3;
		j += K3;
		while (j >= S)
			j -= S;
	}
	return tail(t, x, i, N, j, p, end, sym);
}

#ifdef WZ_HAVE_AVX2_PATH
/* For each mask of lanes that renormalise: where each such lane finds its
 * word among the next eight (the lanes before it that also read, in lane
 * order). */
static uint32_t spread[256][8];
static pthread_once_t spread_once = PTHREAD_ONCE_INIT;
static void spread_init(void)
{
	for (int m = 0; m < 256; m++)
		for (int k = 0, c = 0; k < 8; k++)
			spread[m][k] = (m >> k & 1) ? (uint32_t)c++ : 0;
}

__attribute__((target("avx2,popcnt"))) static int avx2_loop(const fast12 *t, long N,
							    const uint8_t *payload, size_t size,
							    uint16_t *sym)
{
	if (size < 4 * K3)
		return -1;
	pthread_once(&spread_once, spread_init);
	uint32_t xs[K3];
	read_states(payload, xs);
	__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)xs);
	const __m256i low12 = _mm256_set1_epi32(SLOTS - 1), low16 = _mm256_set1_epi32(0xffff);
	const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
	const uint8_t *p = payload + 4 * K3, *end = payload + size;
	const int *fb = (const int *)(const void *)t->fb, *sy = (const int *)(const void *)t->sym;
	long i = 0;
	int j = 0, S = t->S;
	while (i + K3 <= N && end - p >= 2 * K3) {
		__m256i off = _mm256_loadu_si256((const __m256i *)(const void *)(t->off + j));
		__m256i idx = _mm256_add_epi32(off, _mm256_and_si256(x, low12));
		__m256i e = _mm256_i32gather_epi32(fb, idx, 4);
		__m256i s = t->wide[j] ? _mm256_and_si256(_mm256_i32gather_epi32(sy, idx, 2), low16)
				       : _mm256_srli_epi32(e, 24);
		__m256i f = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(e, 12), low12), one);
		x = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x, WZC_RANS12_BITS)),
				     _mm256_and_si256(e, low12));
		__m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(s, s), 0x08);
		_mm_storeu_si128((__m128i *)(void *)(sym + i), _mm256_castsi256_si128(packed));
		/* lanes below 2^16 take the next words, in lane order */
		__m256i need = _mm256_cmpeq_epi32(_mm256_srli_epi32(x, 16), zero);
		int m = _mm256_movemask_ps(_mm256_castsi256_ps(need));
		__m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
		w = _mm256_permutevar8x32_epi32(w, _mm256_loadu_si256((const __m256i *)(const void *)spread[m]));
		x = _mm256_blendv_epi8(x, _mm256_or_si256(_mm256_slli_epi32(x, 16), w), need);
		p += 2 * __builtin_popcount((unsigned)m);
		i += K3;
		j += K3;
		while (j >= S)
			j -= S;
	}
	_mm256_storeu_si256((__m256i *)(void *)xs, x);
	return tail(t, xs, i, N, j, p, end, sym);
}

/* G blocks of one layer and one token count in lockstep: the same table
 * offsets for all, G independent chains of gather, multiply and
 * renormalisation, so one block's latency hides behind the others'.  The
 * unchecked loop runs while every block has a round's bytes left; each
 * then finishes alone in the checked tail, so a damaged block gets the
 * verdict and symbols it would get alone. */
__attribute__((target("avx2,popcnt"), always_inline)) static inline void
avx2_group(const fast12 *t, int G, long N, const uint8_t *const *payload, const size_t *size,
	   uint16_t *const *sym, int *verdict)
{
	pthread_once(&spread_once, spread_init);
	__m256i x[WZC_LANES12_GROUP_MAX];
	const uint8_t *p[WZC_LANES12_GROUP_MAX], *end[WZC_LANES12_GROUP_MAX];
	for (int g = 0; g < G; g++) {
		uint32_t xs[K3];
		read_states(payload[g], xs);
		x[g] = _mm256_loadu_si256((const __m256i *)(const void *)xs);
		p[g] = payload[g] + 4 * K3;
		end[g] = payload[g] + size[g];
	}
	const __m256i low12 = _mm256_set1_epi32(SLOTS - 1), low16 = _mm256_set1_epi32(0xffff);
	const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
	const int *fb = (const int *)(const void *)t->fb, *sy = (const int *)(const void *)t->sym;
	long i = 0;
	int j = 0, S = t->S;
	for (;;) {
		int room = i + K3 <= N;
		for (int g = 0; g < G; g++)
			room &= end[g] - p[g] >= 2 * K3;
		if (!room)
			break;
		__m256i off = _mm256_loadu_si256((const __m256i *)(const void *)(t->off + j));
		int wide = t->wide[j];
		for (int g = 0; g < G; g++) {
			__m256i idx = _mm256_add_epi32(off, _mm256_and_si256(x[g], low12));
			__m256i e = _mm256_i32gather_epi32(fb, idx, 4);
			__m256i s = wide ? _mm256_and_si256(_mm256_i32gather_epi32(sy, idx, 2), low16)
					 : _mm256_srli_epi32(e, 24);
			__m256i f = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(e, 12), low12), one);
			__m256i y = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x[g], WZC_RANS12_BITS)),
						     _mm256_and_si256(e, low12));
			__m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(s, s), 0x08);
			_mm_storeu_si128((__m128i *)(void *)(sym[g] + i), _mm256_castsi256_si128(packed));
			__m256i need = _mm256_cmpeq_epi32(_mm256_srli_epi32(y, 16), zero);
			int m = _mm256_movemask_ps(_mm256_castsi256_ps(need));
			__m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p[g]));
			w = _mm256_permutevar8x32_epi32(w, _mm256_loadu_si256((const __m256i *)(const void *)spread[m]));
			x[g] = _mm256_blendv_epi8(y, _mm256_or_si256(_mm256_slli_epi32(y, 16), w), need);
			p[g] += 2 * __builtin_popcount((unsigned)m);
		}
		i += K3;
		j += K3;
		while (j >= S)
			j -= S;
	}
	for (int g = 0; g < G; g++) {
		uint32_t xs[K3];
		_mm256_storeu_si256((__m256i *)(void *)xs, x[g]);
		verdict[g] = tail(t, xs, i, N, j, p[g], end[g], sym[g]);
	}
}

__attribute__((target("avx2,popcnt"))) static void avx2_group2(const fast12 *t, long N,
							       const uint8_t *const *payload,
							       const size_t *size, uint16_t *const *sym,
							       int *verdict)
{
	avx2_group(t, 2, N, payload, size, sym, verdict);
}

__attribute__((target("avx2,popcnt"))) static void avx2_group4(const fast12 *t, long N,
							       const uint8_t *const *payload,
							       const size_t *size, uint16_t *const *sym,
							       int *verdict)
{
	avx2_group(t, 4, N, payload, size, sym, verdict);
}
#endif

int wzc_wzx_lanes12_have(wzc_lanes12_path path)
{
	switch (path) {
	case WZC_LANES12_REF:
	case WZC_LANES12_SCALAR: return 1;
	case WZC_LANES12_AVX2:
#ifdef WZ_HAVE_AVX2_PATH
		return __builtin_cpu_supports("avx2");
#else
		return 0;
#endif
	case WZC_LANES12_BEST: return 1;
	}
	return 0;
}

int wzc_wzx_decode_lanes12_path(const wzc_wzx *x, int layer, wzc_lanes12_path path, int n,
				const uint8_t *payload, size_t size, uint16_t *sym)
{
	const fast12 *t = path == WZC_LANES12_REF ? NULL : layer_tables(x, layer);
	if (!t)
		return wzc_wzx_decode_lanes12_ref(x, layer, K3, n, payload, size, sym);
	long N = (long)n * t->S;
	if (path == WZC_LANES12_BEST)
		path = wzc_wzx_lanes12_have(WZC_LANES12_AVX2) ? WZC_LANES12_AVX2 : WZC_LANES12_SCALAR;
#ifdef WZ_HAVE_AVX2_PATH
	if (path == WZC_LANES12_AVX2 && wzc_wzx_lanes12_have(WZC_LANES12_AVX2))
		return avx2_loop(t, N, payload, size, sym);
#endif
	return scalar_loop(t, N, payload, size, sym);
}

int wzc_wzx_decode_lanes12(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
			   uint16_t *sym)
{
	return wzc_wzx_decode_lanes12_path(x, layer, WZC_LANES12_BEST, n, payload, size, sym);
}

int wzc_wzx_decode_lanes12_group(const wzc_wzx *x, int layer, wzc_lanes12_path path, int G, int n,
				 const uint8_t *const *payload, const size_t *size,
				 uint16_t *const *sym, int *verdict)
{
	int bad = 0, g = 0;
	if (path == WZC_LANES12_BEST)
		path = wzc_wzx_lanes12_have(WZC_LANES12_AVX2) ? WZC_LANES12_AVX2 : WZC_LANES12_SCALAR;
#ifdef WZ_HAVE_AVX2_PATH
	const fast12 *t = path == WZC_LANES12_AVX2 && wzc_wzx_lanes12_have(WZC_LANES12_AVX2)
				  ? layer_tables(x, layer)
				  : NULL;
	long N = t ? (long)n * t->S : 0;
	/* fours, then a two; the states must be there to read */
	while (t && G - g >= 2) {
		int k = G - g >= 4 ? 4 : 2, fit = 1;
		for (int h = g; h < g + k; h++)
			fit &= size[h] >= 4 * K3;
		if (!fit)
			break;
		if (k == 4)
			avx2_group4(t, N, payload + g, size + g, sym + g, verdict + g);
		else
			avx2_group2(t, N, payload + g, size + g, sym + g, verdict + g);
		for (int h = g; h < g + k; h++)
			bad |= verdict[h];
		g += k;
	}
#endif
	for (; g < G; g++)
		bad |= verdict[g] = wzc_wzx_decode_lanes12_path(x, layer, path, n, payload[g], size[g], sym[g]);
	return bad ? -1 : 0;
}
