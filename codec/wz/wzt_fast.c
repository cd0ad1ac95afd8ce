/* The fast wzt search: wzc_wzt_digits's Viterbi rule for up to eight tokens
 * of a layer at once, one token per vector lane, with the same doubles
 * and the same ties, so the same digits (docs/wz-format.md,
 * "Trellis-coded records").
 *
 * Two phases per run of steps.  Branch metrics, token by token: each
 * subset's nearest level to z lies within the 8 levels around p, the
 * number of levels <= z, which a grid over the codebook gives with one
 * comparison of 8 levels; the 4 levels below p and the 4 above, taken
 * from the multiple of 4 at or below p so that level j of each quadruple
 * is of subset j, give each subset's lower and upper neighbour.  Then
 * the add-compare-selects of all states, the tokens side by side in the
 * lanes: per next state, F the candidate from the smaller predecessor
 * and S the other's, the metric is S < F ? S : F (the reference's "keep
 * a later candidate only when strictly smaller", visiting predecessors
 * in increasing order; no candidate is NaN, as a token whose
 * coefficients are not all finite is searched by the reference's loop
 * instead) and the survivor's branch bit is kept, one bit per lane. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WZT_HAVE_X86 1
#endif

#include "codec/wz/wz_plan.h"
#include "codec/hot.h"
#include "codec/wz/wz_plan.h"
#include "codec/wz/wzt_trellis.h"

/* Steps per run: the branch metrics of a run (CHUNK x 8 tokens x 4
 * subsets, 8 KiB) stay in the first-level cache until the
 * add-compare-selects read them. */
#define CHUNK 32

struct wzc_wzt_work {
	int ns, nu, simd; /* simd: 0 portable, 1 AVX2, 2 AVX-512 */
	int nc;           /* the coefficients' count (the largest place + 1) */
	uint64_t (*code)[WZT_LANES]; /* [ns]: each subset's digit, 16 bits each */
	uint8_t *bits;               /* [ns][2^nu]: survivors' branch bits, a bit per lane */
	double *e;                   /* [CHUNK][WZT_LANES][4] branch metrics */
	double *mbuf;                /* [2][2^nu][WZT_LANES] path metrics */
	float *zt;                   /* [nc][WZT_LANES]: the lanes' coefficients side by side */
	float *zeros;                /* [nc + 1]: the coefficients of an unused lane */
	uint32_t *sink;              /* [nc + 1]: its digits */
};

/* The widest kernel any work may take (wzc_wzt_force_simd). */
static int simd_cap = 2;

void wzc_wzt_force_simd(int simd)
{
	simd_cap = simd < 0 ? 0 : simd > 2 ? 2 : simd;
}

wzc_wzt_work *wzc_wzt_work_new(const wzc_wzt_plan *tp, int layer, int simd)
{
	simd = simd < simd_cap ? simd : simd_cap;
	wzc_wzt_work *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	const wzc_wzt_layer *tl = &tp->layers[layer];
	size_t ns = (size_t)(tl->nsteps ? tl->nsteps : 1), S = (size_t)1 << tp->nu;
	int nc = 0;
	for (int t = 0; t < tl->nsteps; t++)
		nc = tl->steps[t].jl + 1 > nc ? tl->steps[t].jl + 1 : nc;
	w->ns = tl->nsteps;
	w->nu = tp->nu;
	w->nc = nc;
	w->code = malloc(sizeof *w->code * ns);
	w->bits = malloc(ns * S);
	w->e = aligned_alloc(64, sizeof(double) * CHUNK * WZT_LANES * 4);
	w->mbuf = aligned_alloc(64, sizeof(double) * 2 * S * WZT_LANES);
	w->zt = aligned_alloc(32, sizeof(float) * WZT_LANES * ((size_t)nc + 1));
	w->zeros = calloc((size_t)nc + 1, sizeof(float));
	w->sink = calloc((size_t)nc + 1, sizeof(uint32_t));
	if (!w->code || !w->bits || !w->e || !w->mbuf || !w->zt || !w->zeros || !w->sink) {
		wzc_wzt_work_free(w);
		return NULL;
	}
#ifdef WZT_HAVE_X86
	__builtin_cpu_init();
	if (simd >= 1 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt"))
		w->simd = 1;
	if (simd >= 2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))
		w->simd = 2;
#else
	(void)simd;
#endif
	return w;
}

void wzc_wzt_work_free(wzc_wzt_work *w)
{
	if (!w)
		return;
	free(w->code);
	free(w->bits);
	free(w->e);
	free(w->mbuf);
	free(w->zt);
	free(w->zeros);
	free(w->sink);
	free(w);
}

int wzc_wzt_work_simd(const wzc_wzt_work *w)
{
	return w->simd;
}

/* wzc_qlut_cell of the step's grid (the same operations). */
static inline uint32_t cell_of(const wzc_wzt_step *st, float z)
{
	float f = (z - st->lo) * st->inv;
	f = f > 0 ? f : 0;
	f = f < st->gmax ? f : st->gmax;
	return (uint32_t)(int)f;
}

/* p = the number of levels <= z, by the grid (or a binary search). */
static inline uint32_t levels_at_most(const wzc_wzt_step *st, float z)
{
	const float *cb = st->pad;
	if (st->start) {
		uint32_t s = st->start[cell_of(st, z)], p = s;
		for (int i = 0; i < 8; i++)
			p += cb[s + i] <= z;
		return p;
	}
	uint32_t lo = 0, n = st->n2;
	while (n > 0) {
		uint32_t half = n >> 1;
		int le = cb[lo + half] <= z;
		lo = le ? lo + half + 1 : lo;
		n = le ? n - half - 1 : half;
	}
	return lo;
}

/* One step's branch metrics e[4] (subset order) and its code, portably:
 * the subsets' neighbours and the tie rule of the reference's
 * subset_nearest, read from the padded codebook (its infinities are the
 * reference's missing neighbours). */
static inline uint64_t metrics_portable(const wzc_wzt_step *st, float z, double e[4])
{
	uint32_t p = levels_at_most(st, z), r = p & 3, q = p - r;
	uint64_t code = 0;
	for (uint32_t j = 0; j < 4; j++) {
		int64_t a = (int64_t)q - 4 + j + (j < r ? 4 : 0);
		double ea = (double)st->pad[a] - z, eb = (double)st->pad[a + 4] - z;
		ea *= ea;
		eb *= eb;
		/* the level taken (never a padding one) and its digit */
		code |= (uint64_t)((uint64_t)(a + (eb < ea ? 4 : 0)) >> 1) << (16 * j);
		e[j] = (eb < ea ? eb : ea) * st->w;
	}
	return code;
}

/* The digit of subset j from a step's code (digits are below N <= 65536). */
static inline uint32_t digit_of(uint64_t code, uint32_t j)
{
	return (uint32_t)(code >> (16 * j)) & 0xFFFF;
}

/* The predecessor of state sp by branch b: every branch into sp is of
 * union sp >> (nu - 1), from state ((sp ^ union H0 ^ b H1) << 1) | union. */
static inline uint32_t pred_of(int nu, uint32_t sp, uint32_t b)
{
	uint32_t z0 = sp >> (nu - 1);
	uint32_t H0 = wzt_h0[nu] >> 1, H1 = wzt_h1[nu] >> 1;
	return ((sp ^ (z0 ? H0 : 0) ^ (b ? H1 : 0)) << 1) | z0;
}

/* The add-compare-selects of steps t0..t1 in the lanes, portably: m and
 * nm are [2^nu][WZT_LANES], swapped per step; returns the metrics'
 * buffer after the last step. */
static inline WZ_HOT double *acs_portable(int nu, const double *e, uint8_t *bits, int t0, int t1,
					  double *m, double *nm)
{
	int S = 1 << nu;
	for (int t = t0; t < t1; t++) {
		const double *et = e + (size_t)(t - t0) * WZT_LANES * 4;
		uint8_t *bt = bits + (size_t)t * S;
		for (int sp = 0; sp < S; sp++) {
			uint32_t z0 = (uint32_t)sp >> (nu - 1);
			uint32_t p0 = pred_of(nu, (uint32_t)sp, 0), p1 = pred_of(nu, (uint32_t)sp, 1);
			/* F from the smaller predecessor: branch 0 when p0 < p1 */
			uint32_t bf = p0 < p1 ? 0 : 1, pf = bf ? p1 : p0, ps = bf ? p0 : p1;
			uint32_t jf = 2 * bf + z0, js = 2 * (bf ^ 1) + z0;
			unsigned mask = 0;
			for (int l = 0; l < WZT_LANES; l++) {
				double F = m[pf * WZT_LANES + l] + et[l * 4 + jf];
				double Sv = m[ps * WZT_LANES + l] + et[l * 4 + js];
				nm[sp * WZT_LANES + l] = Sv < F ? Sv : F;
				mask |= (unsigned)(Sv < F) << l;
			}
			bt[sp] = (uint8_t)(bf ? ~mask : mask);
		}
		double *x = m;
		m = nm;
		nm = x;
	}
	return m;
}

#ifdef WZT_HAVE_X86
#define T512 __attribute__((target("avx512f,avx512vl,popcnt")))
#define T256 __attribute__((target("avx2,popcnt")))

/* Per r = p & 3, the places in the 8 levels from p - 4 of each subset's
 * lower neighbour, (j - r) mod 4, and upper one, 4 levels on: subset
 * order. */
static const int32_t subset_at[4][8] __attribute__((aligned(32))) = {
	{ 0, 1, 2, 3, 4, 5, 6, 7 },
	{ 3, 0, 1, 2, 7, 4, 5, 6 },
	{ 2, 3, 0, 1, 6, 7, 4, 5 },
	{ 1, 2, 3, 0, 5, 6, 7, 4 },
};

/* One step's branch metrics of one token into e[4] (subset order) and
 * its code, with AVX-512VL: the same doubles as metrics_portable, in two
 * parts (p, then the metrics from p), which the caller runs as two
 * passes over a run of steps: fewer operations wait on each load, so
 * more steps are in flight. */
static inline __attribute__((always_inline)) T512 uint32_t at_most_512(const wzc_wzt_step *st,
									 float z)
{
	uint32_t p;
	if (st->start) {
		uint32_t s = st->start[cell_of(st, z)];
		__mmask8 le = _mm256_cmp_ps_mask(_mm256_loadu_ps(st->pad + s), _mm256_set1_ps(z),
						 _CMP_LE_OQ);
		p = s + (uint32_t)__builtin_popcount(le);
	} else {
		p = levels_at_most(st, z);
	}
	return p;
}

/* The levels p - 4 .. p + 3, each subset's lower neighbour and then its
 * upper one, are one load, put in subset order by a permutation. */
static inline __attribute__((always_inline)) T512 uint64_t window_512(const wzc_wzt_step *st,
									float z, uint32_t p, double *e)
{
	const int32_t *at = subset_at[p & 3];
	__m256 lu = _mm256_permutexvar_ps(_mm256_load_si256((const __m256i *)at),
					  _mm256_loadu_ps(st->pad + p - 4));
	__m512d d = _mm512_sub_pd(_mm512_cvtps_pd(lu), _mm512_set1_pd((double)z));
	d = _mm512_mul_pd(d, d);
	__m256d lo = _mm512_castpd512_pd256(d), hi = _mm512_extractf64x4_pd(d, 1);
	__mmask8 up = _mm256_cmp_pd_mask(hi, lo, _CMP_LT_OQ);
	/* min(hi, lo) is hi < lo ? hi : lo */
	_mm256_store_pd(e, _mm256_mul_pd(_mm256_min_pd(hi, lo), _mm256_set1_pd(st->w)));
	/* the levels taken, p - 4 + at[j] (+ 4 for the upper neighbour),
	 * halved to digits, 16 bits each */
	__m128i idx = _mm_add_epi32(_mm_set1_epi32((int)p - 4), _mm_load_si128((const __m128i *)at));
	idx = _mm_mask_add_epi32(idx, up, idx, _mm_set1_epi32(4));
	return (uint64_t)_mm_cvtsi128_si64(_mm_cvtepi32_epi16(_mm_srli_epi32(idx, 1)));
}

/* One step's add-compare-selects, eight lanes a vector, for a trellis
 * of memory nu known when the function is made (so that for the small
 * trellises every index is a constant and the metrics stay in
 * registers), m to nm.  et[lane][4] is transposed to one vector per
 * subset. */
static inline __attribute__((always_inline)) T512 void acs_step_512(const int nu, const double *et,
								    uint8_t *bt, const __m512d *m,
								    __m512d *nm)
{
	const int S = 1 << nu;
	const __m512i ix0 = _mm512_setr_epi64(0, 4, 8, 12, 1, 5, 9, 13);
	const __m512i ix1 = _mm512_setr_epi64(2, 6, 10, 14, 3, 7, 11, 15);
	__m512d a0 = _mm512_load_pd(et), a1 = _mm512_load_pd(et + 8);
	__m512d a2 = _mm512_load_pd(et + 16), a3 = _mm512_load_pd(et + 24);
	__m512d b0 = _mm512_permutex2var_pd(a0, ix0, a1), b1 = _mm512_permutex2var_pd(a0, ix1, a1);
	__m512d c0 = _mm512_permutex2var_pd(a2, ix0, a3), c1 = _mm512_permutex2var_pd(a2, ix1, a3);
	__m512d E[4] = { _mm512_shuffle_f64x2(b0, c0, 0x44), _mm512_shuffle_f64x2(b0, c0, 0xEE),
			 _mm512_shuffle_f64x2(b1, c1, 0x44), _mm512_shuffle_f64x2(b1, c1, 0xEE) };
#pragma GCC unroll 16
	for (int sp = 0; sp < S; sp++) {
		uint32_t z0 = (uint32_t)sp >> (nu - 1);
		uint32_t p0 = pred_of(nu, (uint32_t)sp, 0), p1 = pred_of(nu, (uint32_t)sp, 1);
		uint32_t bf = p0 < p1 ? 0 : 1, pf = bf ? p1 : p0, ps = bf ? p0 : p1;
		__m512d F = _mm512_add_pd(m[pf], E[2 * bf + z0]);
		__m512d Sv = _mm512_add_pd(m[ps], E[2 * (bf ^ 1) + z0]);
		__mmask8 lt = _mm512_cmp_pd_mask(Sv, F, _CMP_LT_OQ);
		nm[sp] = _mm512_min_pd(Sv, F);
		bt[sp] = (uint8_t)(bf ? ~lt : lt);
	}
}

/* The same, eight lanes as two AVX2 vectors. */
static inline __attribute__((always_inline)) T256 void acs_step_256(const int nu, const double *et,
								    uint8_t *bt, __m256d (*m)[2],
								    __m256d (*nm)[2])
{
	const int S = 1 << nu;
	__m256d E[4][2];
	for (int h = 0; h < 2; h++) {
		/* lanes 4h..4h+3, 4 subsets each: a 4 x 4 transpose */
		__m256d r0 = _mm256_load_pd(et + 16 * h), r1 = _mm256_load_pd(et + 16 * h + 4);
		__m256d r2 = _mm256_load_pd(et + 16 * h + 8), r3 = _mm256_load_pd(et + 16 * h + 12);
		__m256d u0 = _mm256_unpacklo_pd(r0, r1), u1 = _mm256_unpackhi_pd(r0, r1);
		__m256d u2 = _mm256_unpacklo_pd(r2, r3), u3 = _mm256_unpackhi_pd(r2, r3);
		E[0][h] = _mm256_permute2f128_pd(u0, u2, 0x20);
		E[1][h] = _mm256_permute2f128_pd(u1, u3, 0x20);
		E[2][h] = _mm256_permute2f128_pd(u0, u2, 0x31);
		E[3][h] = _mm256_permute2f128_pd(u1, u3, 0x31);
	}
#pragma GCC unroll 16
	for (int sp = 0; sp < S; sp++) {
		uint32_t z0 = (uint32_t)sp >> (nu - 1);
		uint32_t p0 = pred_of(nu, (uint32_t)sp, 0), p1 = pred_of(nu, (uint32_t)sp, 1);
		uint32_t bf = p0 < p1 ? 0 : 1, pf = bf ? p1 : p0, ps = bf ? p0 : p1;
		unsigned lt = 0;
		for (int h = 0; h < 2; h++) {
			__m256d F = _mm256_add_pd(m[pf][h], E[2 * bf + z0][h]);
			__m256d Sv = _mm256_add_pd(m[ps][h], E[2 * (bf ^ 1) + z0][h]);
			lt |= (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(Sv, F, _CMP_LT_OQ)) << (4 * h);
			nm[sp][h] = _mm256_min_pd(Sv, F);
		}
		bt[sp] = (uint8_t)(bf ? ~lt : lt);
	}
}

/* The branch metrics of steps t0..t1 of every lane, in two passes. */
static T512 void branch_metrics_512(wzc_wzt_work *w, const wzc_wzt_step *steps,
				    const float *const *z, int t0, int t1)
{
	for (int t = t0; t < t1; t++)
		for (int l = 0; l < WZT_LANES; l++)
			w->code[t][l] = at_most_512(&steps[t], z[l][steps[t].jl]);
	for (int t = t0; t < t1; t++)
		for (int l = 0; l < WZT_LANES; l++)
			w->code[t][l] = window_512(&steps[t], z[l][steps[t].jl], w->code[t][l],
						   w->e + ((size_t)(t - t0) * WZT_LANES + l) * 4);
}

/* For AVX2, per p & 3 = r, the blend of window_512 (levels j < r of each
 * quadruple from the one above) as a load, and per r and the mask u of
 * the subsets whose upper neighbour is the nearer, the four digits less
 * q / 2 - 2 (q = p - r), 16 bits each: level q - 4 + j (+ 4 for j < r)
 * (+ 4 when u has bit j), halved, is q / 2 - 2 + that. */
static const int32_t blend_sel[4][8] __attribute__((aligned(32))) = {
	{ 0, 0, 0, 0, 0, 0, 0, 0 },
	{ -1, 0, 0, 0, -1, 0, 0, 0 },
	{ -1, -1, 0, 0, -1, -1, 0, 0 },
	{ -1, -1, -1, 0, -1, -1, -1, 0 },
};
#define DIGIT_OFF(r, u, j) ((uint64_t)(((j) + ((j) < (r) ? 4 : 0) + (((u) >> (j)) & 1) * 4) >> 1) << (16 * (j)))
#define DIGITS_OFF(r, u) (DIGIT_OFF(r, u, 0) | DIGIT_OFF(r, u, 1) | DIGIT_OFF(r, u, 2) | DIGIT_OFF(r, u, 3))
#define DIGITS_ROW(r)                                                                            \
	{ DIGITS_OFF(r, 0), DIGITS_OFF(r, 1), DIGITS_OFF(r, 2), DIGITS_OFF(r, 3), DIGITS_OFF(r, 4), \
	  DIGITS_OFF(r, 5), DIGITS_OFF(r, 6), DIGITS_OFF(r, 7), DIGITS_OFF(r, 8), DIGITS_OFF(r, 9), \
	  DIGITS_OFF(r, 10), DIGITS_OFF(r, 11), DIGITS_OFF(r, 12), DIGITS_OFF(r, 13),               \
	  DIGITS_OFF(r, 14), DIGITS_OFF(r, 15) }
static const uint64_t digits_off[4][16] = { DIGITS_ROW(0), DIGITS_ROW(1), DIGITS_ROW(2),
					    DIGITS_ROW(3) };
#undef DIGITS_ROW
#undef DIGITS_OFF
#undef DIGIT_OFF

/* One step's branch metrics of one token with AVX2: window_512's doubles
 * and code, with the blend and the digits from the tables above. */
static inline __attribute__((always_inline)) T256 uint64_t window_256(const wzc_wzt_step *st,
									 float z, uint32_t p,
									 double *e)
{
	uint32_t r = p & 3, q = p - r;
	__m256 sel = _mm256_load_ps((const float *)blend_sel[r]);
	__m256 lu = _mm256_blendv_ps(_mm256_loadu_ps(st->pad + q - 4), _mm256_loadu_ps(st->pad + q),
				     sel);
	__m256d zd = _mm256_set1_pd((double)z);
	__m256d lo = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(lu)), zd);
	__m256d hi = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(lu, 1)), zd);
	lo = _mm256_mul_pd(lo, lo);
	hi = _mm256_mul_pd(hi, hi);
	unsigned u = (unsigned)_mm256_movemask_pd(_mm256_cmp_pd(hi, lo, _CMP_LT_OQ));
	_mm256_store_pd(e, _mm256_mul_pd(_mm256_min_pd(hi, lo), _mm256_set1_pd(st->w)));
	/* each digit is of a level of the codebook, so at least 0: the
	 * product wraps, the sum does not borrow */
	return (uint64_t)(int64_t)((int32_t)(q >> 1) - 2) * UINT64_C(0x0001000100010001) +
	       digits_off[r][u];
}

/* With AVX2, from the lanes' coefficients side by side (zt[c][lane]):
 * the grid cells of a step's eight lanes at once (wzc_qlut_cell's
 * operations: max and min give the second operand on NaN, as its
 * comparisons do), then per lane p and the window. */
static T256 void branch_metrics_256(wzc_wzt_work *w, const wzc_wzt_step *steps, const float *zt,
				    int t0, int t1)
{
	for (int t = t0; t < t1; t++) {
		const wzc_wzt_step *st = &steps[t];
		const float *zl = zt + (size_t)st->jl * WZT_LANES;
		if (!st->start) {
			for (int l = 0; l < WZT_LANES; l++)
				w->code[t][l] = levels_at_most(st, zl[l]);
			continue;
		}
		__m256 f = _mm256_mul_ps(_mm256_sub_ps(_mm256_load_ps(zl), _mm256_set1_ps(st->lo)),
					 _mm256_set1_ps(st->inv));
		f = _mm256_min_ps(_mm256_max_ps(f, _mm256_setzero_ps()), _mm256_set1_ps(st->gmax));
		int32_t cell[WZT_LANES] __attribute__((aligned(32)));
		_mm256_store_si256((__m256i *)cell, _mm256_cvttps_epi32(f));
		for (int l = 0; l < WZT_LANES; l++) {
			uint32_t s0 = st->start[cell[l]];
			__m256 le = _mm256_cmp_ps(_mm256_loadu_ps(st->pad + s0), _mm256_broadcast_ss(zl + l),
						  _CMP_LE_OQ);
			w->code[t][l] = s0 + (uint32_t)__builtin_popcount((unsigned)_mm256_movemask_ps(le));
		}
	}
	for (int t = t0; t < t1; t++) {
		const float *zl = zt + (size_t)steps[t].jl * WZT_LANES;
		for (int l = 0; l < WZT_LANES; l++)
			w->code[t][l] = window_256(&steps[t], zl[l], (uint32_t)w->code[t][l],
						    w->e + ((size_t)(t - t0) * WZT_LANES + l) * 4);
	}
}

/* Steps t0..t1 in pairs, m to nm and back, so that the metrics end in m
 * without a copy per step. */
#define ACS_RUN(STEP, NU, M, NM)                                                    \
	do {                                                                        \
		int t = t0;                                                         \
		for (; t + 1 < t1; t += 2) {                                        \
			STEP(NU, w->e + (size_t)(t - t0) * WZT_LANES * 4,           \
			     w->bits + (size_t)t * (1 << NU), M, NM);               \
			STEP(NU, w->e + (size_t)(t + 1 - t0) * WZT_LANES * 4,       \
			     w->bits + (size_t)(t + 1) * (1 << NU), NM, M);         \
		}                                                                   \
		if (t < t1) {                                                       \
			STEP(NU, w->e + (size_t)(t - t0) * WZT_LANES * 4,           \
			     w->bits + (size_t)t * (1 << NU), M, NM);               \
			memcpy(M, NM, sizeof M);                                    \
		}                                                                   \
	} while (0)

/* The whole forward pass of a trellis of memory NU: runs of CHUNK steps,
 * branch metrics token by token, then the lanes' add-compare-selects; the
 * final metrics in w->mbuf as [state][lane]. */
#define FORWARD(NU)                                                                           \
	static T512 void forward512_##NU(wzc_wzt_work *w, const wzc_wzt_step *steps,          \
					 const float *const *z)                               \
	{                                                                                     \
		__m512d m[1 << NU], nm[1 << NU];                                              \
		for (int s = 0; s < (1 << NU); s++)                                           \
			m[s] = _mm512_set1_pd(s ? INFINITY : 0);                              \
		for (int t0 = 0; t0 < w->ns; t0 += CHUNK) {                                   \
			int t1 = w->ns - t0 < CHUNK ? w->ns : t0 + CHUNK;                     \
			branch_metrics_512(w, steps, z, t0, t1);                              \
			ACS_RUN(acs_step_512, NU, m, nm);                                     \
		}                                                                             \
		for (int s = 0; s < (1 << NU); s++)                                           \
			_mm512_store_pd(w->mbuf + (size_t)s * WZT_LANES, m[s]);               \
	}                                                                                     \
	static T256 void forward256_##NU(wzc_wzt_work *w, const wzc_wzt_step *steps,          \
					 const float *const *z)                               \
	{                                                                                     \
		(void)z; /* w->zt holds the lanes' coefficients */                            \
		__m256d m[1 << NU][2], nm[1 << NU][2];                                        \
		for (int s = 0; s < (1 << NU); s++)                                           \
			m[s][0] = m[s][1] = _mm256_set1_pd(s ? INFINITY : 0);                 \
		for (int t0 = 0; t0 < w->ns; t0 += CHUNK) {                                   \
			int t1 = w->ns - t0 < CHUNK ? w->ns : t0 + CHUNK;                     \
			branch_metrics_256(w, steps, w->zt, t0, t1);                          \
			ACS_RUN(acs_step_256, NU, m, nm);                                     \
		}                                                                             \
		for (int s = 0; s < (1 << NU); s++) {                                         \
			_mm256_store_pd(w->mbuf + (size_t)s * WZT_LANES, m[s][0]);            \
			_mm256_store_pd(w->mbuf + (size_t)s * WZT_LANES + 4, m[s][1]);        \
		}                                                                             \
	}
FORWARD(2)
FORWARD(3)
FORWARD(4)
FORWARD(5)
FORWARD(6)
FORWARD(7)
FORWARD(8)
#undef FORWARD

typedef void (*forward_fn)(wzc_wzt_work *, const wzc_wzt_step *, const float *const *);
static const forward_fn forward512[9] = { NULL, NULL, forward512_2, forward512_3, forward512_4,
					  forward512_5, forward512_6, forward512_7, forward512_8 };
static const forward_fn forward256[9] = { NULL, NULL, forward256_2, forward256_3, forward256_4,
					  forward256_5, forward256_6, forward256_7, forward256_8 };
#endif

static void forward_portable(wzc_wzt_work *w, const wzc_wzt_step *steps, const float *const *z)
{
	int S = 1 << w->nu;
	double *m = w->mbuf, *nm = w->mbuf + (size_t)S * WZT_LANES;
	for (int s = 0; s < S; s++)
		for (int l = 0; l < WZT_LANES; l++)
			m[s * WZT_LANES + l] = s ? INFINITY : 0;
	for (int t0 = 0; t0 < w->ns; t0 += CHUNK) {
		int t1 = w->ns - t0 < CHUNK ? w->ns : t0 + CHUNK;
		for (int l = 0; l < WZT_LANES; l++)
			for (int t = t0; t < t1; t++)
				w->code[t][l] = metrics_portable(&steps[t], z[l][steps[t].jl],
								 w->e + ((size_t)(t - t0) * WZT_LANES + l) * 4);
		double *out = acs_portable(w->nu, w->e, w->bits, t0, t1, m, nm);
		nm = out == m ? nm : m;
		m = out;
	}
	if (m != w->mbuf)
		memcpy(w->mbuf, m, sizeof(double) * (size_t)S * WZT_LANES);
}

/* 1 when every coefficient z[0..nc) is finite (a superset of those the
 * search reads: a token that fails runs the reference's loop, which
 * gives the same digits in any case). */
static WZ_HOT int all_finite(int nc, const float *z)
{
	uint32_t bad = 0;
	for (int j = 0; j < nc; j++) {
		uint32_t u;
		memcpy(&u, z + j, sizeof u);
		bad |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
	}
	return !bad;
}

/* The reference's loop for one token (coefficients not all finite): the
 * digits of wzc_wzt_digits, written in list order. */
static void digits_reference(const wzc_wzt_plan *tp, const layer_plan *lp, int layer,
			     const float *zl, uint32_t *dig)
{
	uint32_t *byc = calloc((size_t)lp->n + 1, sizeof(uint32_t));
	int nord = lp->gstart[lp->ngroups];
	const wzc_wzt_layer *tl = &tp->layers[layer];
	if (!byc) { /* out of memory: digits 0, as a zero record has */
		for (int i = 0; i < nord; i++)
			if (tl->cb[i])
				dig[lp->order_c[i]] = 0;
		return;
	}
	wzc_wzt_digits(tp, lp, layer, zl, byc);
	for (int i = 0; i < nord; i++)
		if (tl->cb[i])
			dig[lp->order_c[i]] = byc[lp->order[i]];
	free(byc);
}

void wzc_wzt_digits_lanes(const wzc_wzt_plan *tp, wzc_wzt_work *w, const layer_plan *lp,
			  int layer, int nl, const float *const *z, uint32_t *const *dig)
{
	const wzc_wzt_layer *tl = &tp->layers[layer];
	const wzc_wzt_step *steps = tl->steps;
	int nu = w->nu, S = 1 << nu, ns = w->ns;
	if (ns == 0)
		return;
	const float *zz[WZT_LANES];
	int fin[WZT_LANES];
	for (int l = 0; l < WZT_LANES; l++) {
		fin[l] = l < nl && all_finite(w->nc, z[l]);
		zz[l] = fin[l] ? z[l] : w->zeros;
	}
#ifdef WZT_HAVE_X86
	if (w->simd == 2)
		forward512[nu](w, steps, zz);
	else if (w->simd == 1) {
		for (int j = 0; j < w->nc; j++)
			for (int l = 0; l < WZT_LANES; l++)
				w->zt[(size_t)j * WZT_LANES + l] = zz[l][j];
		forward256[nu](w, steps, zz);
	}
	else
#endif
		forward_portable(w, steps, zz);
	/* per lane the path ending in the state of least metric, the lowest
	 * on a tie, traced back with the lanes interleaved (independent
	 * chains of dependent loads) */
	uint32_t st[WZT_LANES];
	for (int l = 0; l < WZT_LANES; l++) {
		st[l] = 0;
		for (int k = 1; k < S; k++)
			if (w->mbuf[(size_t)k * WZT_LANES + l] < w->mbuf[(size_t)st[l] * WZT_LANES + l])
				st[l] = (uint32_t)k;
	}
	uint32_t *dl[WZT_LANES];
	for (int l = 0; l < WZT_LANES; l++)
		dl[l] = l < nl && fin[l] ? dig[l] : w->sink;
	for (int t = ns - 1; t >= 0; t--) {
		const uint8_t *bt = w->bits + (size_t)t * S;
		int jl = steps[t].jl;
#pragma GCC unroll 8
		for (int l = 0; l < WZT_LANES; l++) {
			uint32_t s = st[l], b = (uint32_t)(bt[s] >> l) & 1, z0 = s >> (nu - 1);
			dl[l][jl] = digit_of(w->code[t][l], 2 * b + z0);
			st[l] = pred_of(nu, s, b);
		}
	}
	for (int l = 0; l < nl; l++)
		if (!fin[l])
			digits_reference(tp, lp, layer, z[l], dig[l]);
}

void wzc_wzt_digits_fast(const wzc_wzt_plan *tp, wzc_wzt_work *w, const layer_plan *lp,
			 int layer, const float *zl, uint32_t *dig)
{
	const float *z[1] = { zl };
	uint32_t *d[1] = { dig };
	wzc_wzt_digits_lanes(tp, w, lp, layer, 1, z, d);
}
