/* The one-pass loop from a type 5 or type 6 block's payload straight to
 * wz records (or to its digits alone), written once and compiled twice by
 * codec/wzx/wzx_records5_x86.c: with AVX2 (FL(name) = name_avx2) and with
 * AVX-512VL too (name_vl), whose rounds renormalise by a compare into a
 * mask and vpexpandd (renorm32_vl, codec/wzx/wzx_avx2_lanes.h) where the
 * AVX2 loop takes a permutation from a table by the lanes' movemask.
 * Before including it, define FL(name), FL_TARGET and FL_RENORM32; the
 * caller defines the enum HEAD, FIRST, ADD, DIG. */

/* The entries f | c << 12 | s << 24 of 8 lanes' slots: the slot's symbol
 * byte, then its symbol's entry, by plain loads (the slots stored and
 * read back as indices, 2-4% faster on Zen 3 than taking them out of the
 * vector by extracts and shifts: bench/bench_wzx_zstd, the two in one
 * binary, runs alternated) or by vpgatherdd. */
FL_TARGET static inline __attribute__((always_inline)) __m256i
FL(lookup8_e5)(const uint8_t *s2s, const uint32_t *e5, __m256i slot, const int loads)
{
	if (!loads) {
		__m256i sy = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)s2s, slot, 1),
					      _mm256_set1_epi32(0xff));
		return _mm256_i32gather_epi32((const int *)(const void *)e5, sy, 4);
	}
	uint32_t i[8] __attribute__((aligned(32)));
	_mm256_store_si256((__m256i *)(void *)i, slot);
	return _mm256_setr_epi32((int)e5[s2s[i[0]]], (int)e5[s2s[i[1]]], (int)e5[s2s[i[2]]], (int)e5[s2s[i[3]]],
				 (int)e5[s2s[i[4]]], (int)e5[s2s[i[5]]], (int)e5[s2s[i[6]]], (int)e5[s2s[i[7]]]);
}

/* The slot entries (f - 1) << 12 | (slot - c) of 8 lanes' slots (wide
 * tables) and their symbols (*d). */
FL_TARGET static inline __attribute__((always_inline)) __m256i
FL(lookup8_wide)(const uint32_t *fb, const uint16_t *sym, __m256i slot, __m256i *d, const int loads)
{
	if (!loads) {
		/* sym has 2 spare entries after the last table: 4 bytes read at each */
		*d = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(const void *)sym, slot, 2),
				      _mm256_set1_epi32(0xffff));
		return _mm256_i32gather_epi32((const int *)(const void *)fb, slot, 4);
	}
	uint32_t i[8];
	_mm256_storeu_si256((__m256i *)(void *)i, slot);
	*d = _mm256_setr_epi32(sym[i[0]], sym[i[1]], sym[i[2]], sym[i[3]], sym[i[4]], sym[i[5]], sym[i[6]], sym[i[7]]);
	return _mm256_setr_epi32((int)fb[i[0]], (int)fb[i[1]], (int)fb[i[2]], (int)fb[i[3]], (int)fb[i[4]],
				 (int)fb[i[5]], (int)fb[i[6]], (int)fb[i[7]]);
}

/* What a round does with the digits d of 8 tokens (k0 the first): a head
 * writes them as the records' byte q; a piece's first place sets its row
 * to d times the place value, the others add it. */

FL_TARGET static inline __attribute__((always_inline)) void
FL(put8)(__m256i d, __m256i pv, uint32_t *row, int k0, uint8_t *records, int B, int q, const int kind)
{
	if (kind == DIG) { /* the digits alone: records is dig, B its tokens (digits below 2^16) */
		__m128i w = _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(d, d), 0x08));
		_mm_storeu_si128((__m128i *)(void *)((uint16_t *)(void *)records + (size_t)q * B + k0), w);
		return;
	}
	if (kind == HEAD) {
		uint32_t v[8];
		_mm256_storeu_si256((__m256i *)(void *)v, d);
		for (int i = 0; i < 8; i++)
			records[(size_t)(k0 + i) * B + q] = (uint8_t)v[i];
		return;
	}
	__m256i a = _mm256_mullo_epi32(d, pv);
	if (kind == ADD)
		a = _mm256_add_epi32(a, _mm256_load_si256((const __m256i *)(const void *)(row + k0)));
	_mm256_store_si256((__m256i *)(void *)(row + k0), a);
}

/* The n tokens' rounds of place pl: 0, or -1 past the payload's end.
 * e6: a type 6 narrow place's slot entries f << 12 | (slot - c) | s << 24
 * (one look-up a lane), else NULL. */
FL_TARGET static inline __attribute__((always_inline)) int
FL(place)(const wzx_fused5_place *pl, const uint32_t *e6, uint32_t hf, uint32_t hn, int n, __m256i *x,
      const uint8_t **pp, const uint8_t *end, uint32_t *row, uint8_t *records, int B, int q, const int kind,
      const int loads)
{
	const __m256i low12 = _mm256_set1_epi32(SLOTS - 1), pv = _mm256_set1_epi32((int)pl->pv);
	if (hf) {
		/* a type 6 uniform 16-bit place (wzc_wzx6_uniform): the symbol
		 * slot / f, at most n - 1, by the float product with 1/f
		 * truncated, exact for every slot below 2^16 and f below 16:
		 * float(1/f) is at least 1/f for each such f (so a whole
		 * quotient is not rounded down), and above it by less than
		 * 2^-24, which moves the product less than 2^16 2^-24 < 1/f
		 * (so no quotient reaches the next whole number).
		 * tests/codec/test_wzx_records6 checks every (slot, f).  A
		 * multiply where a division was: the division's 3.5-cycle
		 * throughput bound the place on Zen 3.  The symbol times f is
		 * at most the slot, below 2^16, so one 16-bit product
		 * (vpmullw) gives the offset slot - c; the last symbol's is
		 * slot - (n - 1) f.  No 32-bit product but the state's (vpmulld
		 * takes 10 cycles and 2 micro-ops on Intel's Golden Cove). */
		const __m256i low16 = _mm256_set1_epi32(0xffff), f = _mm256_set1_epi32((int)hf),
			      last = _mm256_set1_epi32((int)(hn - 1)),
			      flast = _mm256_set1_epi32((int)(65536u - (hn - 1) * hf)),
			      clast = _mm256_set1_epi32((int)((hn - 1) * hf));
		const __m256 inv = _mm256_set1_ps(1.0f / (float)hf);
		for (int r = 0; r < n / K4; r++) {
#pragma GCC unroll 4
			for (int h = 0; h < 4; h++) {
				__m256i slot = _mm256_and_si256(x[h], low16);
				__m256i s = _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_cvtepi32_ps(slot), inv));
				s = _mm256_min_epu32(s, last);
				__m256i is_last = _mm256_cmpeq_epi32(s, last);
				__m256i fs = _mm256_blendv_epi8(f, flast, is_last);
				__m256i rem = _mm256_blendv_epi8(_mm256_sub_epi32(slot, _mm256_mullo_epi16(s, f)),
								 _mm256_sub_epi32(slot, clast), is_last);
				x[h] = _mm256_add_epi32(_mm256_mullo_epi32(fs, _mm256_srli_epi32(x[h], 16)), rem);
				FL(put8)(s, pv, row, K4 * r + 8 * h, records, B, q, kind);
			}
			if (FL_RENORM32(x, pp, end))
				return -1;
		}
		return 0;
	}
	if (e6) {
		const __m256i low6 = _mm256_set1_epi32(WZC_RANS6_M - 1);
		for (int r = 0; r < n / K4; r++) {
#pragma GCC unroll 4
			for (int h = 0; h < 4; h++) {
				__m256i slot = _mm256_and_si256(x[h], low6);
				__m256i e = gather8((const int *)(const void *)e6, slot, loads);
				__m256i f = _mm256_and_si256(_mm256_srli_epi32(e, 12), low12);
				x[h] = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x[h], WZC_RANS6_BITS)),
							_mm256_and_si256(e, low12));
				FL(put8)(_mm256_srli_epi32(e, 24), pv, row, K4 * r + 8 * h, records, B, q, kind);
			}
			if (FL_RENORM32(x, pp, end))
				return -1;
		}
		return 0;
	}
	if (!pl->wide) {
		for (int r = 0; r < n / K4; r++) {
#pragma GCC unroll 4
			for (int h = 0; h < 4; h++) {
				__m256i slot = _mm256_and_si256(x[h], low12);
				__m256i e = FL(lookup8_e5)(pl->s2s, pl->e5, slot, loads);
				__m256i f = _mm256_and_si256(e, low12);
				__m256i c = _mm256_and_si256(_mm256_srli_epi32(e, 12), low12);
				x[h] = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x[h], WZC_RANS12_BITS)),
							_mm256_sub_epi32(slot, c));
				FL(put8)(_mm256_srli_epi32(e, 24), pv, row, K4 * r + 8 * h, records, B, q, kind);
			}
			if (FL_RENORM32(x, pp, end))
				return -1;
		}
		return 0;
	}
	/* the slot entries (s & 255) << 24 | (f - 1) << 12 | (slot - c); the
	 * symbol's bits past 8 from the slot by four compares (at most 1280
	 * symbols), else the symbol by slot */
	const __m256i one = _mm256_set1_epi32(1);
	if (pl->hi4) {
		const __m256i t0 = _mm256_set1_epi32(pl->thr[0]), t1 = _mm256_set1_epi32(pl->thr[1]),
			      t2 = _mm256_set1_epi32(pl->thr[2]), t3 = _mm256_set1_epi32(pl->thr[3]);
		const int *fb = (const int *)(const void *)pl->fb;
		for (int r = 0; r < n / K4; r++) {
#pragma GCC unroll 4
			for (int h = 0; h < 4; h++) {
				__m256i slot = _mm256_and_si256(x[h], low12);
				__m256i e = gather8(fb, slot, loads);
				__m256i f = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(e, 12), low12), one);
				x[h] = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x[h], WZC_RANS12_BITS)),
							_mm256_and_si256(e, low12));
				__m256i hi = _mm256_add_epi32(_mm256_add_epi32(_mm256_cmpgt_epi32(slot, t0),
									       _mm256_cmpgt_epi32(slot, t1)),
							      _mm256_add_epi32(_mm256_cmpgt_epi32(slot, t2),
									       _mm256_cmpgt_epi32(slot, t3)));
				__m256i d = _mm256_sub_epi32(_mm256_srli_epi32(e, 24), _mm256_slli_epi32(hi, 8));
				FL(put8)(d, pv, row, K4 * r + 8 * h, records, B, q, kind);
			}
			if (FL_RENORM32(x, pp, end))
				return -1;
		}
		return 0;
	}
	for (int r = 0; r < n / K4; r++) {
		for (int h = 0; h < 4; h++) {
			__m256i slot = _mm256_and_si256(x[h], low12), d;
			__m256i e = FL(lookup8_wide)(pl->fb, pl->sym, slot, &d, loads);
			__m256i f = _mm256_add_epi32(_mm256_and_si256(_mm256_srli_epi32(e, 12), low12), one);
			x[h] = _mm256_add_epi32(_mm256_mullo_epi32(f, _mm256_srli_epi32(x[h], WZC_RANS12_BITS)),
						_mm256_and_si256(e, low12));
			FL(put8)(d, pv, row, K4 * r + 8 * h, records, B, q, kind);
		}
		if (FL_RENORM32(x, pp, end))
			return -1;
	}
	return 0;
}

/* Group g's values of the n tokens from its pieces' rows (most
 * significant first), V = V M + P, four tokens a vector (each product of a
 * 64-bit V and a 32-bit M from two 32 x 32-bit ones), into vc[0][k]; then
 * each token's field, put after the bits in vc[1][k] (its word in the
 * making); a word filled is stored in the record (w0 + k B) and the bits
 * past it (w >> (64 - sh)) begin the next.  full and sh0 constants, so
 * that the loop is straight; apart from group's vector step, so that it
 * keeps its values in registers. */
FL_TARGET static inline __attribute__((always_inline)) void
FL(fields)(uint64_t (*vc)[WZC_WZX_BLOCK_TOKENS], uint8_t *w0, uint64_t rhi, uint64_t rlo, int sh, int n, int B,
       const int full, const int sh0)
{
	const uint64_t s1 = (uint64_t)sh, s2 = 64 - (uint64_t)sh;
	const size_t step = (size_t)B;
	for (uint64_t *v = vc[0], *end = vc[0] + n; v < end; v++, w0 += step) {
		uint64_t w = wzc_wzx_field(v[0], rhi, rlo), c = v[WZC_WZX_BLOCK_TOKENS] | w << s1;
		if (full) {
			memcpy(w0, &c, 8);
			c = sh0 ? 0 : w >> s2;
		}
		v[WZC_WZX_BLOCK_TOKENS] = c;
	}
}

#define FIELDS(name, full, sh0)                                                                                 \
	FL_TARGET __attribute__((noinline)) static void name(uint64_t (*vc)[WZC_WZX_BLOCK_TOKENS], uint8_t *w0,      \
								uint64_t rhi, uint64_t rlo, int sh, int n, int B)  \
	{                                                                                                       \
		FL(fields)(vc, w0, rhi, rlo, sh, n, B, full, sh0);                                                 \
	}
FIELDS(FL(fields_part), 0, 0)
FIELDS(FL(fields_full), 1, 0)
FIELDS(FL(fields_full0), 1, 1)

/* A 64-bit v times m (below 2^32) plus P's 4 tokens at r: two 32 x
 * 32-bit products. */
FL_TARGET static inline __attribute__((always_inline)) __m256i FL(madd4)(__m256i v, __m256i m, const uint32_t *r)
{
	__m256i hi = _mm256_slli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(v, 32), m), 32);
	return _mm256_add_epi64(_mm256_add_epi64(_mm256_mul_epu32(v, m), hi),
				_mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(const void *)r)));
}

/* The group's values V of the n tokens from its np pieces' rows pr[]
 * (most significant first; np a constant where it can be): the first
 * step's V is below 2^32, one product. */
FL_TARGET static inline __attribute__((always_inline)) void
FL(values)(const uint32_t (*acc)[WZC_WZX_BLOCK_TOKENS], const int16_t *pr, const uint64_t *pm, int n, uint64_t *V,
       const int np)
{
	const uint32_t *r0 = acc[pr[0]], *r1 = acc[pr[np > 1]], *r2 = acc[pr[np > 2 ? 2 : 0]];
	const __m256i m1 = _mm256_set1_epi64x((long long)pm[np > 1]), m2 = _mm256_set1_epi64x((long long)pm[np > 2 ? 2 : 0]);
	for (int k = 0; k < n; k += 4) {
		__m256i v = _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(r0 + k)));
		if (np > 1)
			v = _mm256_add_epi64(_mm256_mul_epu32(v, m1),
					     _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(r1 + k))));
		if (np > 2)
			v = FL(madd4)(v, m2, r2 + k);
		for (int j = 3; j < np; j++)
			v = FL(madd4)(v, _mm256_set1_epi64x((long long)pm[j]), acc[pr[j]] + k);
		_mm256_store_si256((__m256i *)(void *)(V + k), v);
	}
}

FL_TARGET static void FL(group)(const wzx_rec5 *p, const wzx_fused5 *f, const uint32_t (*acc)[WZC_WZX_BLOCK_TOKENS],
			       int g, int n, uint64_t (*vc)[WZC_WZX_BLOCK_TOKENS], uint8_t *records)
{
	const int16_t *pr = f->prow + f->gpoff[g];
	const uint64_t *pm = f->ppm + f->gpoff[g];
	int np = f->gpoff[g + 1] - f->gpoff[g], sh = f->gsh[g];
	switch (np) {
	case 1: FL(values)(acc, pr, pm, n, vc[0], 1); break;
	case 2: FL(values)(acc, pr, pm, n, vc[0], 2); break;
	case 3: FL(values)(acc, pr, pm, n, vc[0], 3); break;
	default: FL(values)(acc, pr, pm, n, vc[0], np);
	}
	uint8_t *w0 = records + p->sb + 8 * (size_t)f->gwi[g];
	if (sh + p->k[g] < 64)
		FL(fields_part)(vc, w0, p->rhi[g], p->rlo[g], sh, n, p->B);
	else if (sh)
		FL(fields_full)(vc, w0, p->rhi[g], p->rlo[g], sh, n, p->B);
	else
		FL(fields_full0)(vc, w0, p->rhi[g], p->rlo[g], sh, n, p->B);
}

/* Type 5 (s6 NULL) or type 6 (s6's eq[q] a narrow place's entries, NULL
 * where the place has type 5's table or is uniform, r6.qf[q] nonzero) to
 * records, or (dig) to the digits alone, records then dig[q * n + k]. */
FL_TARGET static inline __attribute__((always_inline)) int
FL(loop)(const fast32 *t, const fast6 *s6, int n, const uint8_t *payload, size_t size, uint8_t *records,
	   const int loads, const int dig)
{
	if (size < 4 * K4 || n % K4 || n < K4 || n > WZC_WZX_BLOCK_TOKENS)
		return -1;
	const wzx_rec5 *p = t->rec5;
	const wzx_fused5 *f = t->fused5;
	wzx_spread8_ready();
	__m256i x[4];
	states32_load(payload, x);
	const uint8_t *pp = payload + 4 * K4, *end = payload + size;
	uint32_t acc[WZC_FUSED5_ROWS][WZC_WZX_BLOCK_TOKENS] __attribute__((aligned(32)));
	uint64_t vc[2][WZC_WZX_BLOCK_TOKENS] __attribute__((aligned(32))) = { { 0 } }; /* values, words in the making */
	int B = p->B, gdone = 0;
	for (int q = 0; q < p->S5; q++) {
		const wzx_fused5_place *pl = &f->pl[q];
		const uint32_t *e6 = s6 ? s6->eq[q] : NULL;
		uint32_t hf = s6 ? s6->r6.qf[q] : 0, hn = s6 ? s6->r6.qn[q] : 0;
		int bad;
		if (dig)
			bad = FL(place)(pl, e6, hf, hn, n, x, &pp, end, NULL, records, n, q, DIG, loads);
		else if (pl->row < 0)
			bad = FL(place)(pl, e6, hf, hn, n, x, &pp, end, NULL, records, B, q, HEAD, loads);
		else if (pl->first)
			bad = FL(place)(pl, e6, hf, hn, n, x, &pp, end, acc[pl->row], records, B, q, FIRST, loads);
		else
			bad = FL(place)(pl, e6, hf, hn, n, x, &pp, end, acc[pl->row], records, B, q, ADD, loads);
		if (bad)
			return -1;
		for (; !dig && gdone < pl->gend; gdone++)
			FL(group)(p, f, (const uint32_t (*)[WZC_WZX_BLOCK_TOKENS])acc, gdone, n, vc, records);
	}
	if (lanes32_end(x, pp, end))
		return -1;
	if (dig)
		return 0;
	/* the last word's bytes (cur), then zeros to the record's end */
	size_t at = (size_t)p->sb + 8 * (f->nbits / 64), left = (size_t)B - at;
	size_t part = f->nbits % 64 ? (left < 8 ? left : 8) : 0;
	for (int k = 0; k < n; k++) {
		uint8_t *rec = records + (size_t)k * B;
		memcpy(rec + at, &vc[1][k], part);
		memset(rec + at + part, 0, left - part);
	}
	return 0;
}

#undef FIELDS
