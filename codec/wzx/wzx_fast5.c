/* Type 5 blocks (wzx version 5): type 4's 32 lanes of 12-bit rANS and its
 * tables over a block's symbols in place-major order (docs/wzx-format.md,
 * "Interleaved 12-bit rANS, place-major"): every token's scale codes, then
 * its anchor flags, then component by component every token's digit, a
 * component of a single level not coded at all.  A round of 32 lanes then
 * reads one table, which stays in L1 for the component's tokens.  The
 * encoder; the scalar reference (every read checked, the symbol by binary
 * search); a portable loop (one symbol at a time from the slot tables,
 * every read checked); the choice among it and the AVX2 loop of
 * codec/wzx/wzx_fast5_x86.c, which is tested against the reference. */
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

int wzc_wzx_fast5_build(fast32 *t, const uint32_t *const *seen, int ntab, const uint32_t *tab_of)
{
	int S = t->S;
	t->coded = malloc(sizeof *t->coded * (size_t)S);
	uint32_t *sbase = malloc(sizeof *sbase * ((size_t)ntab + 1));
	if (!t->coded || !sbase) {
		free(sbase);
		return -1;
	}
	for (int j = 0; j < S; j++)
		if (j < t->H || t->src[j] >= 0)
			t->coded[t->S5++] = j;
	size_t nst = 0;
	for (int k = 0; k < ntab; k++) {
		uint32_t ns = 0;
		while (seen[k][ns] < SLOTS)
			ns++;
		sbase[k] = (uint32_t)nst;
		if (ns <= 256)
			nst += ns;
	}
	t->s2s = calloc((size_t)ntab * SLOTS + 4, 1); /* a gather reads 4 bytes at a slot */
	t->stab = malloc(sizeof *t->stab * (nst + 1));
	t->soff = calloc((size_t)S, sizeof *t->soff);
	if (!t->s2s || !t->stab || !t->soff || nst > UINT32_MAX) {
		free(sbase);
		return -1;
	}
	for (int k = 0; k < ntab; k++) {
		const uint32_t *cum = seen[k];
		uint32_t ns = 0;
		for (; cum[ns] < SLOTS; ns++)
			for (uint32_t slot = cum[ns]; slot < cum[ns + 1]; slot++)
				t->s2s[(size_t)k * SLOTS + slot] = (uint8_t)ns;
		for (uint32_t s = 0; ns <= 256 && s < ns; s++) {
			float v = t->val[(size_t)k * SLOTS + cum[s]];
			uint32_t vb;
			memcpy(&vb, &v, sizeof vb);
			t->stab[sbase[k] + s] = (uint64_t)vb << 32 | cum[s] << 16 | (cum[s + 1] - cum[s]);
		}
	}
	for (int j = 0; j < S; j++)
		t->soff[j] = sbase[tab_of[j]];
	free(sbase);
	return 0;
}

size_t wzc_wzx_encode_lanes5(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			     uint8_t *out, size_t cap)
{
	return wzc_wzx_encode_lanes32(x, layer, n, records, 1, out, cap);
}

int wzc_wzx_decode_lanes5_ref(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			      size_t size, uint16_t *sym)
{
	const fast32 *t = wzc_wzx_fast32_layer(x, layer);
	if (!t || n < 1 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	int S = t->S;
	memset(sym, 0, sizeof *sym * (size_t)n * S);
	wzc_lanes_dec dec;
	wzc_lanes_dec_init(&dec, K4, payload, size);
	long N = (long)n * t->S5;
	for (long i = 0; i < N && !dec.bad; i++) {
		int j = t->coded[i / n], k = (int)(i % n);
		sym[(size_t)k * S + j] = (uint16_t)wzc_lanes12_get(&dec, (int)(i % K4), t->cum[j], t->cnt[j]);
	}
	return wzc_lanes_dec_done(&dec) ? 0 : -1;
}

void wzc_wzx_fast5_heads(const fast32 *t, int n, const uint32_t (*hd)[WZC_WZX_BLOCK_TOKENS],
			 float (*sc)[WZC_WZX_BLOCK_TOKENS], int32_t (*fm)[WZC_WZX_BLOCK_TOKENS])
{
	for (int k = 0; k < n; k++) {
		/* put_value's scales and flags, token by token */
		sc[0][k] = t->scale_mult[hd[0][k]] * t->scale_ref[0];
		sc[1][k] = t->P ? t->scale_mult[hd[1][k]] * t->scale_ref[1] : 0.0f;
		for (int p = 0; p < 2; p++)
			fm[p][k] = t->flag_place[p] >= 0 && hd[t->flag_place[p]][k] ? -1 : 0;
	}
}

/* The portable loop: one symbol at a time, its entry from the slot
 * tables, every read checked; sym or rows (the other NULL). */
WZ_HOT static int portable(const fast32 *t, int n, const uint8_t *payload, size_t size, uint16_t *sym,
			   float *rows, size_t stride)
{
	if (size < 4 * K4 || n < 1 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	uint32_t x[K4];
	read_states(payload, x);
	const uint8_t *p = payload + 4 * K4, *end = payload + size;
	uint32_t hd[4][WZC_WZX_BLOCK_TOKENS];
	float sc[2][WZC_WZX_BLOCK_TOKENS];
	int32_t fm[2][WZC_WZX_BLOCK_TOKENS];
	int S = t->S, H = t->H;
	if (sym)
		memset(sym, 0, sizeof *sym * (size_t)n * S);
	long i = 0;
	int heads = 0; /* the tokens' scales and flags taken from their heads */
	for (int q = 0; q < t->S5; q++) {
		int j = t->coded[q];
		const uint32_t *fb = t->fb + t->off[j];
		if (rows && j >= H && !heads++)
			wzc_wzx_fast5_heads(t, n, (const uint32_t (*)[WZC_WZX_BLOCK_TOKENS])hd, sc, fm);
		int pp = t->rope[j] & 1;
		for (int k = 0; k < n; k++, i++) {
			int lane = (int)(i % K4);
			uint32_t slot = x[lane] & (SLOTS - 1), e = fb[slot];
			uint32_t xs = ((e >> 12 & 0xfff) + 1) * (x[lane] >> WZC_RANS12_BITS) + (e & 0xfff);
			if (wzc_lanes_refill(&xs, &p, end))
				return -1;
			x[lane] = xs;
			uint32_t s = t->sym[t->off[j] + slot];
			if (sym) {
				sym[(size_t)k * S + j] = (uint16_t)s;
			} else if (j < H) {
				hd[j][k] = s;
			} else {
				float y = t->val[t->off[j] + slot] * t->sigma[j] * sc[pp][k];
				rows[(size_t)k * stride + (j - H)] = fm[pp][k] ? y + t->delta[j] : y;
			}
		}
	}
	if (p != end)
		return -1;
	for (int k = 0; k < K4; k++)
		if (x[k] != WZC_LANES_LOW)
			return -1;
	if (rows && !heads++)
		wzc_wzx_fast5_heads(t, n, (const uint32_t (*)[WZC_WZX_BLOCK_TOKENS])hd, sc, fm);
	if (rows)
		wzc_wzx_fast5_singles(t, n, (const float (*)[WZC_WZX_BLOCK_TOKENS])sc,
				      (const int32_t (*)[WZC_WZX_BLOCK_TOKENS])fm, rows, stride);
	return 0;
}

void wzc_wzx_fast5_singles(const fast32 *t, int n, const float (*sc)[WZC_WZX_BLOCK_TOKENS],
			   const int32_t (*fm)[WZC_WZX_BLOCK_TOKENS], float *rows, size_t stride)
{
	for (int j = t->H; j < t->S; j++) {
		if (t->src[j] >= 0)
			continue;
		int pp = t->rope[j] & 1;
		for (int k = 0; k < n; k++) {
			float y = 1.0f * t->sigma[j] * sc[pp][k];
			rows[(size_t)k * stride + (j - t->H)] = fm[pp][k] ? y + t->delta[j] : y;
		}
	}
}

int wzc_wzx_lanes5_have(wzc_lanes4_path path)
{
	switch (path) {
	case WZC_LANES4_REF:
	case WZC_LANES4_SCALAR:
	case WZC_LANES4_BEST: return 1;
	case WZC_LANES4_AVX512: return 0;
	case WZC_LANES4_AVX2:
	case WZC_LANES4_AVX2_LOADS: return wzc_wzx_lanes4_have(path);
	}
	return 0;
}

/* BEST: the AVX2 loop with plain loads for its look-ups, else the
 * portable loop; WZX_LANES5_PATH=scalar, =avx2 (vpgatherdd) or
 * =avx2-loads keeps it to that loop.  Plain loads were faster than
 * vpgatherdd on both processors measured (bench/bench_decode4, medians of
 * 9 alternated runs, five invocations each): AMD EPYC Zen 3, 0.93 against
 * 0.44 M token-layers/s; an Intel Xeon with AVX-512, 0.964 against 0.746
 * (docs/restore.md).  A path the processor lacks runs the portable loop. */
static wzc_lanes4_path resolve(wzc_lanes4_path path)
{
	if (path != WZC_LANES4_BEST)
		return path == WZC_LANES4_REF || wzc_wzx_lanes5_have(path) ? path : WZC_LANES4_SCALAR;
	static int best = -1;
	int b = __atomic_load_n(&best, __ATOMIC_RELAXED);
	if (b < 0) {
		const char *env = getenv("WZX_LANES5_PATH");
		int avx2 = wzc_wzx_lanes5_have(WZC_LANES4_AVX2);
		if (env && !strcmp(env, "scalar"))
			b = WZC_LANES4_SCALAR;
		else if (env && !strcmp(env, "avx2"))
			b = avx2 ? WZC_LANES4_AVX2 : WZC_LANES4_SCALAR;
		else if (!avx2)
			b = WZC_LANES4_SCALAR;
		else
			b = WZC_LANES4_AVX2_LOADS;
		__atomic_store_n(&best, b, __ATOMIC_RELAXED);
	}
	return (wzc_lanes4_path)b;
}

wzc_lanes4_path wzc_wzx_lanes5_best(void)
{
	return resolve(WZC_LANES4_BEST);
}

int wzc_wzx_decode_lanes5_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
			       const uint8_t *payload, size_t size, uint16_t *sym)
{
	const fast32 *t = wzc_wzx_fast32_layer(x, layer);
	if (!t)
		return -1;
	path = resolve(path);
	if (path == WZC_LANES4_REF)
		return wzc_wzx_decode_lanes5_ref(x, layer, n, payload, size, sym);
#ifdef WZ_HAVE_AVX2_PATH
	if ((path == WZC_LANES4_AVX2 || path == WZC_LANES4_AVX2_LOADS) && n % K4 == 0)
		return wzc_wzx_fast5_avx2_symbols(t, n, payload, size, sym, path == WZC_LANES4_AVX2_LOADS);
#endif
	return portable(t, n, payload, size, sym, NULL, 0);
}

int wzc_wzx_decode_lanes5_rows_path(const wzc_wzx *x, int layer, wzc_lanes4_path path, int n,
				    const uint8_t *payload, size_t size, float *rows, size_t stride)
{
	const fast32 *t = wzc_wzx_fast32_layer(x, layer);
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!t || !ly)
		return -1;
	path = resolve(path);
	if (path == WZC_LANES4_REF) {
		return wzc_wzx_lanes_ref_rows(x, layer, wzc_wzx_decode_lanes5_ref, n, payload, size,
					      rows, stride);
	}
#ifdef WZ_HAVE_AVX2_PATH
	if ((path == WZC_LANES4_AVX2 || path == WZC_LANES4_AVX2_LOADS) && n % K4 == 0)
		return wzc_wzx_fast5_avx2_rows(t, n, payload, size, rows, stride, path == WZC_LANES4_AVX2_LOADS);
#endif
	return portable(t, n, payload, size, NULL, rows, stride);
}

int wzc_wzx_decode_lanes5_rows(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			       size_t size, float *rows, size_t stride)
{
	return wzc_wzx_decode_lanes5_rows_path(x, layer, WZC_LANES4_BEST, n, payload, size, rows, stride);
}
