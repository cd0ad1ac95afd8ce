/* Type 5's AVX2 loop (codec/wzx/wzx_fast5.c has the reference it is tested
 * against): a block of 32 or 64 tokens, place by place, each round of 32
 * lanes one place of 32 tokens, so its four vectors look up one table (in
 * L1 while the place lasts): the slot's symbol byte, then the symbol's
 * frequency, start and level value in one 8-byte entry (tables of more
 * than 256 symbols keep type 4's u32 slot entries).  The values of 8
 * components are gathered in columns and written to the tokens' rows by
 * 8 x 8 transposes.  The same rounds to a block's digits, place by place
 * (wzc_wzx_decode_lanes5_digits: the rANS step alone, which
 * bench/bench_wzx_zstd times beside the restore to records). */
#include <stdint.h>
#include <string.h>

#include "codec/wzx/wzx_fast32_internal.h"
#include "codec/wzx/wzx_fast5_internal.h"

#ifdef WZ_HAVE_AVX2_PATH
#include "codec/wzx/wzx_avx2_lanes.h"

/* One round: the 32 lanes' slot entries from the table fb, the state
 * steps, then the renormalisations in lane order (from a vector of the
 * next words while 64 bytes are left, else lane by lane with every read
 * checked).  -1 where the payload holds no further word. */
AVX2_TARGET static inline __attribute__((always_inline)) int
round32(__m256i *x, const int *fb, const uint8_t **pp, const uint8_t *end, __m256i *e, __m256i *slot,
	const int loads)
{
	const __m256i low12 = _mm256_set1_epi32(SLOTS - 1), one = _mm256_set1_epi32(1);
#pragma GCC unroll 4
	for (int h = 0; h < 4; h++) {
		slot[h] = _mm256_and_si256(x[h], low12);
		e[h] = gather8(fb, slot[h], loads);
		__m256i f = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(e[h], 12), low12), one);
		x[h] = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x[h], WZC_RANS12_BITS)),
					_mm256_and_si256(e[h], low12));
	}
	return renorm32(x, pp, end);
}

/* round32 for a type 6 narrow place: the slot entries f << 12 | (slot -
 * c) | s << 24 of its 2^9-slot table e6. */
AVX2_TARGET static inline __attribute__((always_inline)) int
round32_6(__m256i *x, const int *e6, const uint8_t **pp, const uint8_t *end, __m256i *e, const int loads)
{
	const __m256i low6 = _mm256_set1_epi32(WZC_RANS6_M - 1), low12 = _mm256_set1_epi32(SLOTS - 1);
#pragma GCC unroll 4
	for (int h = 0; h < 4; h++) {
		e[h] = gather8(e6, _mm256_and_si256(x[h], low6), loads);
		__m256i f = _mm256_and_si256(_mm256_srli_epi32(e[h], 12), low12);
		x[h] = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x[h], WZC_RANS6_BITS)),
					_mm256_and_si256(e[h], low12));
	}
	return renorm32(x, pp, end);
}

/* The 8 x 8 floats col[k][0..7] (k < 8, rows of cs floats apart) to
 * out[k * stride + 0..7] transposed. */
AVX2_TARGET static inline __attribute__((always_inline)) void
transpose8(const float *col, size_t cs, float *out, size_t stride)
{
	__m256 r0 = _mm256_load_ps(col), r1 = _mm256_load_ps(col + cs), r2 = _mm256_load_ps(col + 2 * cs),
	       r3 = _mm256_load_ps(col + 3 * cs), r4 = _mm256_load_ps(col + 4 * cs),
	       r5 = _mm256_load_ps(col + 5 * cs), r6 = _mm256_load_ps(col + 6 * cs),
	       r7 = _mm256_load_ps(col + 7 * cs);
	__m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
	__m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
	__m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
	__m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
	__m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xee);
	__m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xee);
	__m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xee);
	__m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xee);
	_mm256_storeu_ps(out, _mm256_permute2f128_ps(u0, u4, 0x20));
	_mm256_storeu_ps(out + stride, _mm256_permute2f128_ps(u1, u5, 0x20));
	_mm256_storeu_ps(out + 2 * stride, _mm256_permute2f128_ps(u2, u6, 0x20));
	_mm256_storeu_ps(out + 3 * stride, _mm256_permute2f128_ps(u3, u7, 0x20));
	_mm256_storeu_ps(out + 4 * stride, _mm256_permute2f128_ps(u0, u4, 0x31));
	_mm256_storeu_ps(out + 5 * stride, _mm256_permute2f128_ps(u1, u5, 0x31));
	_mm256_storeu_ps(out + 6 * stride, _mm256_permute2f128_ps(u2, u6, 0x31));
	_mm256_storeu_ps(out + 7 * stride, _mm256_permute2f128_ps(u3, u7, 0x31));
}

/* The frequencies and starts (f | c << 16) and level values of 8 lanes'
 * slots: the slot's symbol byte from s2s (4 KB a table), then the
 * symbol's 8 bytes from st; by plain loads (the symbol bytes into
 * registers, each symbol's 8 bytes by one load, the halves then taken
 * apart by two shuffles), or by vpgatherdd. */
AVX2_TARGET static inline __attribute__((always_inline)) void
lookup8(const uint8_t *s2s, const long long *st, __m256i slot, __m256i *fc, __m256 *v, const int loads)
{
	if (!loads) {
		__m256i sy = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)s2s, slot, 1),
					      _mm256_set1_epi32(0xff));
		*fc = _mm256_i32gather_epi32((const int *)(const void *)st, sy, 8);
		*v = _mm256_i32gather_ps((const float *)(const void *)st + 1, sy, 8);
		return;
	}
	__m128i lo = _mm256_castsi256_si128(slot), hi = _mm256_extracti128_si256(slot, 1);
	uint64_t a = (uint64_t)_mm_cvtsi128_si64(lo), b = (uint64_t)_mm_extract_epi64(lo, 1);
	uint64_t c = (uint64_t)_mm_cvtsi128_si64(hi), d = (uint64_t)_mm_extract_epi64(hi, 1);
	__m128i p01 = _mm_loadl_epi64((const __m128i *)(const void *)(st + s2s[(uint32_t)a]));
	p01 = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(p01), (const double *)(const void *)(st + s2s[a >> 32])));
	__m128i p23 = _mm_loadl_epi64((const __m128i *)(const void *)(st + s2s[(uint32_t)b]));
	p23 = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(p23), (const double *)(const void *)(st + s2s[b >> 32])));
	__m128i p45 = _mm_loadl_epi64((const __m128i *)(const void *)(st + s2s[(uint32_t)c]));
	p45 = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(p45), (const double *)(const void *)(st + s2s[c >> 32])));
	__m128i p67 = _mm_loadl_epi64((const __m128i *)(const void *)(st + s2s[(uint32_t)d]));
	p67 = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(p67), (const double *)(const void *)(st + s2s[d >> 32])));
	__m256 A = _mm256_castsi256_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(p01), p45, 1));
	__m256 B = _mm256_castsi256_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(p23), p67, 1));
	*fc = _mm256_castps_si256(_mm256_shuffle_ps(A, B, 0x88));
	*v = _mm256_shuffle_ps(A, B, 0xdd);
}

/* One round by symbol first (lookup8); the state steps and
 * renormalisations as round32's; the level values of the four vectors to
 * v. */
AVX2_TARGET static inline __attribute__((always_inline)) int
round32_sym(__m256i *x, const uint8_t *s2s, const long long *st, const uint8_t **pp, const uint8_t *end,
	    __m256 *v, const int loads)
{
	const __m256i low12 = _mm256_set1_epi32(SLOTS - 1), low16 = _mm256_set1_epi32(0xffff);
#pragma GCC unroll 4
	for (int h = 0; h < 4; h++) {
		__m256i slot = _mm256_and_si256(x[h], low12), fc;
		lookup8(s2s, st, slot, &fc, &v[h], loads);
		__m256i f = _mm256_and_si256(fc, low16);
		x[h] = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x[h], WZC_RANS12_BITS)),
					_mm256_sub_epi32(slot, _mm256_srli_epi32(fc, 16)));
	}
	return renorm32(x, pp, end);
}

/* The values of 8 tokens (level v, scale s, anchor flag mask fm) of a
 * component (sigma sig, delta del) into o: put_value's arithmetic. */
AVX2_TARGET static inline __attribute__((always_inline)) void
values8(__m256 v, __m256 sig, __m256 del, const float *s, const int32_t *fm, float *o)
{
	__m256 y = _mm256_mul_ps(_mm256_mul_ps(v, sig), _mm256_loadu_ps(s));
	/* a blend, not an add of zero: -0 stays -0 */
	y = _mm256_blendv_ps(y, _mm256_add_ps(y, del),
			     _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(const void *)fm)));
	_mm256_store_ps(o, y);
}

/* The n tokens' values of the component at place j into o: its rounds,
 * by symbol first (round32_sym) for a table of at most 256 symbols, else
 * by the slot entries (round32) and the level values by slot; times sigma
 * and the token's scale s, plus delta where fm is set.  wide a constant,
 * so that each loop is straight. */
AVX2_TARGET static inline __attribute__((always_inline)) int
component(const fast32 *t, int j, int n, __m256i *x, const uint8_t **pp, const uint8_t *end,
	  const float *s, const int32_t *fm, float *o, const int loads, const int wide)
{
	const __m256 sig = _mm256_set1_ps(t->sigma[j]), del = _mm256_set1_ps(t->delta[j]);
	__m256 v[4];
	if (!wide) {
		const uint8_t *s2s = t->s2s + t->off[j];
		const long long *st = (const long long *)(const void *)(t->stab + t->soff[j]);
		for (int r = 0; r < n / K4; r++) {
			if (round32_sym(x, s2s, st, pp, end, v, loads))
				return -1;
#pragma GCC unroll 4
			for (int h = 0; h < 4; h++)
				values8(v[h], sig, del, s + K4 * r + 8 * h, fm + K4 * r + 8 * h, o + K4 * r + 8 * h);
		}
		return 0;
	}
	const int *fb = (const int *)(const void *)(t->fb + t->off[j]);
	const int *val = (const int *)(const void *)(t->val + t->off[j]);
	__m256i e[4], slot[4];
	for (int r = 0; r < n / K4; r++) {
		if (round32(x, fb, pp, end, e, slot, loads))
			return -1;
		for (int h = 0; h < 4; h++)
			values8(_mm256_castsi256_ps(gather8(val, slot[h], loads)), sig, del, s + K4 * r + 8 * h,
				fm + K4 * r + 8 * h, o + K4 * r + 8 * h);
	}
	return 0;
}

/* A type 6 narrow place's 8 lanes' slot entries (*e) and level values
 * (*v) from its 8-byte entries ev (entry, then the value's bits): one
 * load a lane, the halves taken apart by two shuffles, as lookup8's. */
AVX2_TARGET static inline __attribute__((always_inline)) void
lookup8_ev(const long long *ev, __m256i slot, __m256i *e, __m256 *v, const int loads)
{
	if (!loads) {
		*e = _mm256_i32gather_epi32((const int *)(const void *)ev, slot, 8);
		*v = _mm256_i32gather_ps((const float *)(const void *)ev + 1, slot, 8);
		return;
	}
	__m128i lo = _mm256_castsi256_si128(slot), hi = _mm256_extracti128_si256(slot, 1);
	uint64_t a = (uint64_t)_mm_cvtsi128_si64(lo), b = (uint64_t)_mm_extract_epi64(lo, 1);
	uint64_t c = (uint64_t)_mm_cvtsi128_si64(hi), d = (uint64_t)_mm_extract_epi64(hi, 1);
	__m128i p01 = _mm_loadl_epi64((const __m128i *)(const void *)(ev + (uint32_t)a));
	p01 = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(p01), (const double *)(const void *)(ev + (a >> 32))));
	__m128i p23 = _mm_loadl_epi64((const __m128i *)(const void *)(ev + (uint32_t)b));
	p23 = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(p23), (const double *)(const void *)(ev + (b >> 32))));
	__m128i p45 = _mm_loadl_epi64((const __m128i *)(const void *)(ev + (uint32_t)c));
	p45 = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(p45), (const double *)(const void *)(ev + (c >> 32))));
	__m128i p67 = _mm_loadl_epi64((const __m128i *)(const void *)(ev + (uint32_t)d));
	p67 = _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(p67), (const double *)(const void *)(ev + (d >> 32))));
	__m256 A = _mm256_castsi256_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(p01), p45, 1));
	__m256 B = _mm256_castsi256_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(p23), p67, 1));
	*e = _mm256_castps_si256(_mm256_shuffle_ps(A, B, 0x88));
	*v = _mm256_shuffle_ps(A, B, 0xdd);
}

/* A type 6 narrow place's values, as component's: its rounds by
 * lookup8_ev, the level values with the entries. */
AVX2_TARGET static inline __attribute__((always_inline)) int
component6(const fast32 *t, const uint64_t *ev, int j, int n, __m256i *x, const uint8_t **pp, const uint8_t *end,
	   const float *s, const int32_t *fm, float *o, const int loads)
{
	const __m256 sig = _mm256_set1_ps(t->sigma[j]), del = _mm256_set1_ps(t->delta[j]);
	const __m256i low6 = _mm256_set1_epi32(WZC_RANS6_M - 1), low12 = _mm256_set1_epi32(SLOTS - 1);
	const long long *evl = (const long long *)(const void *)ev;
	__m256 v[4];
	for (int r = 0; r < n / K4; r++) {
#pragma GCC unroll 4
		for (int h = 0; h < 4; h++) {
			__m256i e;
			lookup8_ev(evl, _mm256_and_si256(x[h], low6), &e, &v[h], loads);
			__m256i f = _mm256_and_si256(_mm256_srli_epi32(e, 12), low12);
			x[h] = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x[h], WZC_RANS6_BITS)),
						_mm256_and_si256(e, low12));
		}
		if (renorm32(x, pp, end))
			return -1;
#pragma GCC unroll 4
		for (int h = 0; h < 4; h++)
			values8(v[h], sig, del, s + K4 * r + 8 * h, fm + K4 * r + 8 * h, o + K4 * r + 8 * h);
	}
	return 0;
}

/* A type 6 uniform 16-bit place's values (count n, f = 2^16 / n): the
 * symbol by a float division (exact: slot < 2^16, f < 16), the level
 * value by digit. */
AVX2_TARGET static inline __attribute__((always_inline)) int
component_huge(const fast32 *t, uint32_t hf, uint32_t hn, int j, int n, __m256i *x, const uint8_t **pp,
	       const uint8_t *end, const float *s, const int32_t *fm, float *o, const int loads)
{
	const __m256 sig = _mm256_set1_ps(t->sigma[j]), del = _mm256_set1_ps(t->delta[j]);
	const __m256i low16 = _mm256_set1_epi32(0xffff), f = _mm256_set1_epi32((int)hf),
		      last = _mm256_set1_epi32((int)(hn - 1)), flast = _mm256_set1_epi32((int)(65536u - (hn - 1) * hf));
	const __m256 ff = _mm256_set1_ps((float)hf);
	const int *lv = (const int *)(const void *)(t->lv + t->lvbase[j]);
	__m256i d[4];
	for (int r = 0; r < n / K4; r++) {
#pragma GCC unroll 4
		for (int h = 0; h < 4; h++) {
			__m256i slot = _mm256_and_si256(x[h], low16);
			d[h] = _mm256_min_epu32(_mm256_cvttps_epi32(_mm256_div_ps(_mm256_cvtepi32_ps(slot), ff)), last);
			__m256i fs = _mm256_blendv_epi8(f, flast, _mm256_cmpeq_epi32(d[h], last));
			x[h] = _mm256_add_epi32(_mm256_mullo_epi32(fs, _mm256_srli_epi32(x[h], 16)),
						_mm256_sub_epi32(slot, _mm256_mullo_epi32(d[h], f)));
		}
		if (renorm32(x, pp, end))
			return -1;
		for (int h = 0; h < 4; h++)
			values8(_mm256_castsi256_ps(gather8(lv, d[h], loads)), sig, del, s + K4 * r + 8 * h,
				fm + K4 * r + 8 * h, o + K4 * r + 8 * h);
	}
	return 0;
}

/* Type 5 (s6 NULL) or type 6 (its narrow and uniform places by s6's
 * tables) to rows. */
AVX2_TARGET static inline __attribute__((always_inline)) int
avx2_rows(const fast32 *t, const fast6 *s6, int n, const uint8_t *payload, size_t size, float *rows,
	  size_t stride, const int loads)
{
	if (size < 4 * K4 || n % K4 || n < K4 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	wzx_spread8_ready();
	__m256i x[4];
	states32_load(payload, x);
	const uint8_t *p = payload + 4 * K4, *end = payload + size;
	uint32_t hd[4][WZC_WZX_BLOCK_TOKENS];
	float sc[2][WZC_WZX_BLOCK_TOKENS];
	int32_t fm[2][WZC_WZX_BLOCK_TOKENS];
	float col[8][WZC_WZX_BLOCK_TOKENS] __attribute__((aligned(32)));
	const int *fb = (const int *)(const void *)t->fb;
	int H = t->H, nv = t->nv, nr = n / K4;
	__m256i e[4], slot[4];
	/* the heads are coded places 0 .. H - 1 */
	for (int j = 0; j < H; j++)
		for (int r = 0; r < nr; r++) {
			if (s6 && s6->eq[j] ? round32_6(x, (const int *)(const void *)s6->eq[j], &p, end, e, loads)
					    : round32(x, fb + t->off[j], &p, end, e, slot, loads))
				return -1;
			for (int h = 0; h < 4; h++)
				_mm256_storeu_si256((__m256i *)(void *)(hd[j] + K4 * r + 8 * h),
						    _mm256_srli_epi32(e[h], 24));
		}
	wzc_wzx_fast5_heads(t, n, (const uint32_t (*)[WZC_WZX_BLOCK_TOKENS])hd, sc, fm);
	int q = H; /* the coded place of the next coded component */
	for (int c0 = 0; c0 < nv; c0 += 8) {
		int nc = nv - c0 < 8 ? nv - c0 : 8;
		for (int c = c0; c < c0 + nc; c++) {
			int j = H + c, pp = t->rope[j] & 1;
			float *o = col[c - c0];
			if (t->src[j] < 0) {
				/* a single level: no symbol, the value 1 */
				for (int k = 0; k < n; k += 8)
					values8(_mm256_set1_ps(1.0f), _mm256_set1_ps(t->sigma[j]), _mm256_set1_ps(t->delta[j]),
						sc[pp] + k, fm[pp] + k, o + k);
				continue;
			}
			const uint64_t *ev = s6 ? s6->evq[q] : NULL;
			uint32_t hf = s6 ? s6->r6.qf[q] : 0, hn = s6 ? s6->r6.qn[q] : 0;
			q++;
			int bad = hf ? component_huge(t, hf, hn, j, n, x, &p, end, sc[pp], fm[pp], o, loads)
				  : ev		     ? component6(t, ev, j, n, x, &p, end, sc[pp], fm[pp], o, loads)
				  : t->cnt[j] > 256 ? component(t, j, n, x, &p, end, sc[pp], fm[pp], o, loads, 1)
						    : component(t, j, n, x, &p, end, sc[pp], fm[pp], o, loads, 0);
			if (bad)
				return -1;
		}
		if (nc == 8) {
			for (int k = 0; k < n; k += 8)
				transpose8(&col[0][k], WZC_WZX_BLOCK_TOKENS, rows + (size_t)k * stride + c0, stride);
		} else {
			for (int k = 0; k < n; k++)
				for (int c = 0; c < nc; c++)
					rows[(size_t)k * stride + c0 + c] = col[c][k];
		}
	}
	if (lanes32_end(x, p, end))
		return -1;
	return 0;
}

/* n (a multiple of 32) tokens to symbols in type 4's order, sym[k * S +
 * j] (zeroed first: a single level's is 0): each round's symbol bytes (a
 * table of over 256 symbols: its u16 symbols by slot), put in place lane
 * by lane. */
AVX2_TARGET static inline __attribute__((always_inline)) int
avx2_symbols(const fast32 *t, int n, const uint8_t *payload, size_t size, uint16_t *sym, const int loads)
{
	if (size < 4 * K4 || n % K4 || n < K4 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	wzx_spread8_ready();
	__m256i x[4];
	states32_load(payload, x);
	const uint8_t *p = payload + 4 * K4, *end = payload + size;
	const int *fb = (const int *)(const void *)t->fb;
	int S = t->S;
	memset(sym, 0, sizeof *sym * (size_t)n * S);
	__m256i e[4], slot[4];
	for (int q = 0; q < t->S5; q++) {
		int j = t->coded[q], wide = t->cnt[j] > 256;
		for (int r = 0; r < n / K4; r++) {
			if (round32(x, fb + t->off[j], &p, end, e, slot, loads))
				return -1;
			uint32_t sy[K4];
			for (int h = 0; h < 4; h++)
				_mm256_storeu_si256((__m256i *)(void *)(sy + 8 * h), wide ? slot[h] : _mm256_srli_epi32(e[h], 24));
			uint16_t *o = sym + (size_t)K4 * r * S + j;
			if (wide)
				for (int k = 0; k < K4; k++)
					o[(size_t)k * S] = t->sym[t->off[j] + sy[k]];
			else
				for (int k = 0; k < K4; k++)
					o[(size_t)k * S] = (uint16_t)sy[k];
		}
	}
	if (lanes32_end(x, p, end))
		return -1;
	return 0;
}

AVX2_TARGET static int symbols_gather(const fast32 *t, int n, const uint8_t *payload, size_t size, uint16_t *sym)
{
	return avx2_symbols(t, n, payload, size, sym, 0);
}

AVX2_TARGET static int symbols_loads(const fast32 *t, int n, const uint8_t *payload, size_t size, uint16_t *sym)
{
	return avx2_symbols(t, n, payload, size, sym, 1);
}

int wzc_wzx_fast5_avx2_symbols(const fast32 *t, int n, const uint8_t *payload, size_t size, uint16_t *sym,
			       int loads)
{
	return loads ? symbols_loads(t, n, payload, size, sym) : symbols_gather(t, n, payload, size, sym);
}

AVX2_TARGET static int rows_gather(const fast32 *t, int n, const uint8_t *payload, size_t size, float *rows,
				   size_t stride)
{
	return avx2_rows(t, NULL, n, payload, size, rows, stride, 0);
}

AVX2_TARGET static int rows_loads(const fast32 *t, int n, const uint8_t *payload, size_t size, float *rows,
				  size_t stride)
{
	return avx2_rows(t, NULL, n, payload, size, rows, stride, 1);
}

AVX2_TARGET static int rows6_gather(const fast6 *s6, int n, const uint8_t *payload, size_t size, float *rows,
				    size_t stride)
{
	return avx2_rows(s6->t, s6, n, payload, size, rows, stride, 0);
}

AVX2_TARGET static int rows6_loads(const fast6 *s6, int n, const uint8_t *payload, size_t size, float *rows,
				   size_t stride)
{
	return avx2_rows(s6->t, s6, n, payload, size, rows, stride, 1);
}

int wzc_wzx_fast6_avx2_rows(const fast6 *s6, int n, const uint8_t *payload, size_t size, float *rows,
			    size_t stride, int loads)
{
	return loads ? rows6_loads(s6, n, payload, size, rows, stride) : rows6_gather(s6, n, payload, size, rows, stride);
}

int wzc_wzx_fast5_avx2_rows(const fast32 *t, int n, const uint8_t *payload, size_t size, float *rows,
			    size_t stride, int loads)
{
	return loads ? rows_loads(t, n, payload, size, rows, stride) : rows_gather(t, n, payload, size, rows, stride);
}

/* lookup8's frequencies and starts, and the 8 lanes' symbols stored to o
 * (u16): the digits of 8 tokens. */
AVX2_TARGET static inline __attribute__((always_inline)) __m256i
lookup8_dig(const uint8_t *s2s, const long long *st, __m256i slot, uint16_t *o, const int loads)
{
	if (!loads) {
		__m256i sy = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)s2s, slot, 1),
					      _mm256_set1_epi32(0xff));
		__m256i pk = _mm256_permute4x64_epi64(_mm256_packus_epi32(sy, sy), 0x08);
		_mm_storeu_si128((__m128i *)(void *)o, _mm256_castsi256_si128(pk));
		return _mm256_i32gather_epi32((const int *)(const void *)st, sy, 8);
	}
	__m128i lo = _mm256_castsi256_si128(slot), hi = _mm256_extracti128_si256(slot, 1);
	uint64_t a = (uint64_t)_mm_cvtsi128_si64(lo), b = (uint64_t)_mm_extract_epi64(lo, 1);
	uint64_t c = (uint64_t)_mm_cvtsi128_si64(hi), d = (uint64_t)_mm_extract_epi64(hi, 1);
	uint32_t s0 = s2s[(uint32_t)a], s1 = s2s[a >> 32], s2 = s2s[(uint32_t)b], s3 = s2s[b >> 32];
	uint32_t s4 = s2s[(uint32_t)c], s5 = s2s[c >> 32], s6 = s2s[(uint32_t)d], s7 = s2s[d >> 32];
	o[0] = (uint16_t)s0, o[1] = (uint16_t)s1, o[2] = (uint16_t)s2, o[3] = (uint16_t)s3;
	o[4] = (uint16_t)s4, o[5] = (uint16_t)s5, o[6] = (uint16_t)s6, o[7] = (uint16_t)s7;
	const int *w = (const int *)(const void *)st; /* an entry's low half: f | c << 16 */
	return _mm256_setr_epi32(w[2 * s0], w[2 * s1], w[2 * s2], w[2 * s3], w[2 * s4], w[2 * s5], w[2 * s6],
				 w[2 * s7]);
}

/* n (a multiple of 32) tokens to their digits place by place,
 * dig[q * n + k]: round32_sym's steps for tables of at most 256 symbols
 * (the slot's symbol byte is the digit), round32's and the u16 symbol by
 * slot for the others.  0, or -1 as the reference.  Tried and dropped
 * (bench/bench_wzx_zstd, Zen 3): four blocks of a layer in lockstep, each
 * place's rounds for every block in turn so that its tables are read from
 * L1 (0.60x zstd against 0.61x one block at a time), and two blocks'
 * rounds interleaved as two chains (no faster): the loop is bound by its
 * instructions, not by latency or the tables' misses. */
AVX2_TARGET static inline __attribute__((always_inline)) int
avx2_digits(const fast32 *t, int n, const uint8_t *payload, size_t size, uint16_t *dig, const int loads)
{
	if (size < 4 * K4 || n % K4 || n < K4 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	wzx_spread8_ready();
	__m256i x[4];
	states32_load(payload, x);
	const uint8_t *p = payload + 4 * K4, *end = payload + size;
	const __m256i low12 = _mm256_set1_epi32(SLOTS - 1), low16 = _mm256_set1_epi32(0xffff);
	for (int q = 0; q < t->S5; q++) {
		int j = t->coded[q];
		uint16_t *o = dig + (size_t)q * n;
		if (t->cnt[j] > 256) {
			const int *fb = (const int *)(const void *)(t->fb + t->off[j]);
			const uint16_t *sy = t->sym + t->off[j];
			__m256i e[4], slot[4];
			for (int r = 0; r < n / K4; r++) {
				if (round32(x, fb, &p, end, e, slot, loads))
					return -1;
				uint32_t sl[K4];
				for (int h = 0; h < 4; h++)
					_mm256_storeu_si256((__m256i *)(void *)(sl + 8 * h), slot[h]);
				for (int k = 0; k < K4; k++)
					o[K4 * r + k] = sy[sl[k]];
			}
			continue;
		}
		const uint8_t *s2s = t->s2s + t->off[j];
		const long long *st = (const long long *)(const void *)(t->stab + t->soff[j]);
		for (int r = 0; r < n / K4; r++) {
#pragma GCC unroll 4
			for (int h = 0; h < 4; h++) {
				__m256i slot = _mm256_and_si256(x[h], low12);
				__m256i fc = lookup8_dig(s2s, st, slot, o + K4 * r + 8 * h, loads);
				__m256i f = _mm256_and_si256(fc, low16);
				x[h] = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x[h], WZC_RANS12_BITS)),
							_mm256_sub_epi32(slot, _mm256_srli_epi32(fc, 16)));
			}
			if (renorm32(x, &p, end))
				return -1;
		}
	}
	if (lanes32_end(x, p, end))
		return -1;
	return 0;
}

AVX2_TARGET static int digits_gather(const fast32 *t, int n, const uint8_t *payload, size_t size, uint16_t *dig)
{
	return avx2_digits(t, n, payload, size, dig, 0);
}

AVX2_TARGET static int digits_loads(const fast32 *t, int n, const uint8_t *payload, size_t size, uint16_t *dig)
{
	return avx2_digits(t, n, payload, size, dig, 1);
}

int wzc_wzx_fast5_avx2_digits(const fast32 *t, int n, const uint8_t *payload, size_t size, uint16_t *dig,
			      int loads)
{
	return loads ? digits_loads(t, n, payload, size, dig) : digits_gather(t, n, payload, size, dig);
}

#endif
