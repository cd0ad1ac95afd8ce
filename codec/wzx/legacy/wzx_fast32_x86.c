/* Type 4's x86 loops (codec/wzx/legacy/wzx_fast32.c has the tables, the reference
 * and the portable loop they are tested against, and the dispatch): an
 * AVX-512 loop (two vectors of 16 lanes, the renormalisation words placed
 * by a mask expand, as htscodecs' rANS_static32x16pr_avx512 does) and an
 * AVX2 loop (four vectors of 8 lanes, the words placed by a permutation
 * table, as htscodecs' rANS_static32x16pr_avx2 does), each to symbols and
 * fused to rows. */
#include <pthread.h>
#include <stdint.h>

#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast32_internal.h"

#if defined(WZ_HAVE_AVX512_PATH) || defined(WZ_HAVE_AVX2_PATH)
#include <immintrin.h>

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
		verdict[g] = wzc_wzx_fast32_tail(t, xs, i, N, j, p[g], end[g], r ? NULL : sym[g],
						 r ? &r[g] : NULL);
	}
}

AVX512_TARGET int wzc_wzx_fast32_avx512_symbols(const fast32 *t, long N, const uint8_t *payload,
						size_t size, uint16_t *sym)
{
	int v;
	if (size < 4 * K4)
		return -1;
	avx512_loop(t, 1, N, &payload, &size, &sym, NULL, &v);
	return v;
}

AVX512_TARGET int wzc_wzx_fast32_avx512_rows(const fast32 *t, long N, const uint8_t *payload,
					     size_t size, rows_state *r)
{
	int v;
	if (size < 4 * K4)
		return -1;
	avx512_loop(t, 1, N, &payload, &size, NULL, r, &v);
	return v;
}

#endif

#ifdef WZ_HAVE_AVX2_PATH
#include "codec/wzx/wzx_avx2_lanes.h"

/* One vector of 8 lanes: the slot entries gathered, the state step, and
 * the renormalisation of the lanes below 2^16 from the next words (the
 * next 8 widened, then permuted to those lanes). */
AVX2_TARGET static inline __attribute__((always_inline)) __m256i
step8(__m256i x, __m256i off, const int *fb, const uint8_t **pp, __m256i *idx_out, __m256i *e_out,
      const int loads)
{
	const __m256i low12 = _mm256_set1_epi32(SLOTS - 1), one = _mm256_set1_epi32(1);
	__m256i idx = _mm256_add_epi32(off, _mm256_and_si256(x, low12));
	__m256i e = gather8(fb, idx, loads);
	__m256i f = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(e, 12), low12), one);
	x = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x, WZC_RANS12_BITS)),
			     _mm256_and_si256(e, low12));
	x = renorm8(x, pp);
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
 * (the other NULL); loads: the table look-ups by plain loads (gather8). */
AVX2_TARGET static inline __attribute__((always_inline)) int
avx2_loop(const fast32 *t, long N, const uint8_t *payload, size_t size, uint16_t *sym, rows_state *r,
	  const int loads)
{
	if (size < 4 * K4)
		return -1;
	wzx_spread8_ready();
	__m256i x[4];
	states32_load(payload, x);
	const uint8_t *p = payload + 4 * K4, *end = payload + size;
	const int *fb = (const int *)(const void *)t->fb, *sy = (const int *)(const void *)t->sym;
	long i = 0;
	int j = 0, S = t->S, H = t->H;
	while (i + K4 <= N && end - p >= 2 * K4) {
		__m256i idx[4], e[4];
#pragma GCC unroll 4
		for (int h = 0; h < 4; h++) {
			__m256i off = _mm256_loadu_si256((const __m256i *)(const void *)(t->off + j + 8 * h));
			x[h] = step8(x[h], off, fb, &p, &idx[h], &e[h], loads);
		}
		if (!r) {
			__m256i s[4];
			for (int h = 0; h < 4; h++)
				s[h] = t->wide[j] ? _mm256_and_si256(_mm256_i32gather_epi32(sy, idx[h], 2),
								    _mm256_set1_epi32(0xffff))
						  : _mm256_srli_epi32(e[h], 24);
			(void)loads;
			for (int h = 0; h < 4; h += 2) {
				__m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(s[h], s[h + 1]), 0xd8);
				_mm256_storeu_si256((__m256i *)(void *)(sym + i + 8 * h), packed);
			}
		} else {
			__m256 v[4];
			for (int h = 0; h < 4; h++) {
				if (t->wide[j]) {
					v[h] = _mm256_castsi256_ps(gather8((const int *)(const void *)t->val, idx[h], loads));
				} else {
					__m256i lvb = _mm256_loadu_si256((const __m256i *)(const void *)(t->lvbase + j + 8 * h));
					v[h] = _mm256_castsi256_ps(gather8((const int *)(const void *)t->lv,
									   _mm256_add_epi32(lvb, _mm256_srli_epi32(e[h], 24)),
									   loads));
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
	uint32_t xs[K4];
	for (int h = 0; h < 4; h++)
		_mm256_storeu_si256((__m256i *)(void *)(xs + 8 * h), x[h]);
	return wzc_wzx_fast32_tail(t, xs, i, N, j, p, end, sym, r);
}

AVX2_TARGET int wzc_wzx_fast32_avx2_symbols(const fast32 *t, long N, const uint8_t *payload,
					    size_t size, uint16_t *sym)
{
	return avx2_loop(t, N, payload, size, sym, NULL, 0);
}

AVX2_TARGET int wzc_wzx_fast32_avx2_rows(const fast32 *t, long N, const uint8_t *payload,
					 size_t size, rows_state *r)
{
	return avx2_loop(t, N, payload, size, NULL, r, 0);
}

AVX2_TARGET int wzc_wzx_fast32_avx2_loads_symbols(const fast32 *t, long N, const uint8_t *payload,
						  size_t size, uint16_t *sym)
{
	return avx2_loop(t, N, payload, size, sym, NULL, 1);
}

AVX2_TARGET int wzc_wzx_fast32_avx2_loads_rows(const fast32 *t, long N, const uint8_t *payload,
					       size_t size, rows_state *r)
{
	return avx2_loop(t, N, payload, size, NULL, r, 1);
}

#endif
