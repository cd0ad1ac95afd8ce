/* Type 4 blocks (wzx version 4, read for old files): the fast loops over
 * 32 lanes of 12-bit rANS in output order (docs/wzx-format.md,
 * "Interleaved 12-bit rANS in output order"), so that a decoder writes the
 * transformed domain straight from its rANS loop: a branch-free scalar
 * loop, and the choice among it and the AVX-512 and AVX2 loops of
 * codec/wzx/legacy/wzx_fast32_x86.c.  The tables and the scalar reference
 * are codec/wzx/wzx_lanes32.c's, shared with type 5.  Every fast path is
 * tested against the reference. */
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast32_internal.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_lanes.h"

static const fast32 *layer_tables(const wzc_wzx *x, int layer)
{
	return wzc_wzx_fast32_layer(x, layer);
}

size_t wzc_wzx_encode_lanes4(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			     uint8_t *out, size_t cap)
{
	return wzc_wzx_encode_lanes32(x, layer, n, records, 0, out, cap);
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
