/* The wzt fixed-rate coder: wz's rate plan and record, with the coded
 * components coded by trellis-coded quantization (Marcellin and
 * Fischer, IEEE Trans. Commun. 38(1), 1990) instead of one scalar table
 * each: a Viterbi search over the token's components at encode time, a
 * state-machine walk at decode time (docs/wz-format.md, "Trellis-coded
 * records"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WZT_HAVE_AVX2_KERNEL 1
#endif

#include "codec/codec_internal.h"
#include "codec/levels.h"
#include "codec/wz_plan.h"
#include "codec/wzt_trellis.h"

/* The count's index in the level set (every count a plan gives is in it). */
static int count_index(uint32_t N)
{
	for (int j = 0; j < WZC_NSET; j++)
		if (wzc_level_count(j) == N)
			return j;
	return WZC_NSET - 1;
}

/* 1 when a component with N levels is coded on the trellis: every coded
 * one (an odd N gives subsets of unequal sizes, none empty). */
static int is_trellis_count(uint32_t N)
{
	return N >= 2;
}

void wzc_wzt_plan_free(wzc_wzt_plan *tp)
{
	if (!tp)
		return;
	for (int l = 0; tp->layers && l < tp->L; l++) {
		free(tp->layers[l].cb);
		free(tp->layers[l].tables);
	}
	free(tp->layers);
	free(tp);
}

static wz_err plan_layer(const wzc_profile *pr, int l, const layer_plan *lp, wzc_wzt_layer *tl,
			 wz_diag *diag)
{
	int nord = lp->gstart[lp->ngroups], nv = lp->n - 2, R = pr->R;
	tl->cb = calloc((size_t)(nord ? nord : 1), sizeof *tl->cb);
	if (!tl->cb)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	/* one codebook per (part, count), as the scalar tables are shared */
	size_t need = 0;
	int used[2][WZC_NSET] = { { 0 } };
	for (int i = 0; i < nord; i++) {
		int c = lp->order[i];
		uint32_t N = lp->nlev[c];
		if (c >= nv || !is_trellis_count(N))
			continue;
		int j = count_index(N);
		if (used[c >= R][j]++)
			continue;
		need += 2 * (size_t)(2 * N);
	}
	tl->tables = malloc(sizeof(float) * (need ? need : 1));
	if (!tl->tables)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	float *at = tl->tables, *tab[2][WZC_NSET] = { { NULL } };
	for (int i = 0; i < nord; i++) {
		int c = lp->order[i], p = c >= R;
		uint32_t N = lp->nlev[c];
		if (c >= nv || !is_trellis_count(N))
			continue;
		int j = count_index(N);
		if (!tab[p][j]) {
			tab[p][j] = at;
			/* the Lloyd (companded past 64 levels) table of 2N levels
			 * on the part's histogram: Marcellin and Fischer's union
			 * codebook for a memoryless source, the Lloyd-Max
			 * quantizer of one bit more */
			const wzc_part_profile *pp = p ? &pr->rope[l] : &pr->latent[l];
			wzc_levels_table_count(pp->hist, pr->version, 2 * N, at, at + 2 * N);
			at += 2 * (size_t)(2 * N);
		}
		tl->cb[i] = tab[p][j];
		tl->nsteps++;
	}
	return WZ_OK;
}

wz_err wzc_wzt_plan_new(const wzc_wz_plan *plan, int nu, wzc_wzt_plan **out, wz_diag *diag)
{
	*out = NULL;
	if (nu < 2 || nu > 8)
		return wz_diag_set(diag, WZ_ERR_RANGE, "trellis memory %d (2..8)", nu);
	wzc_wzt_plan *tp = calloc(1, sizeof *tp);
	if (!tp)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	tp->nu = nu;
	tp->L = plan->L;
	for (uint32_t s = 0; s < (1u << nu); s++)
		for (uint32_t b = 0; b < 2; b++)
			tp->next[s][b] = (uint16_t)wzt_next(nu, s, b);
	tp->layers = calloc((size_t)plan->L, sizeof *tp->layers);
	if (!tp->layers) {
		free(tp);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int l = 0; l < plan->L; l++) {
		/* wz's plan of the layer, made here if no one asked for it yet */
		const layer_plan *lp;
		wz_err e = wzc_wz_plan_layer_get(plan, l, &lp, diag);
		if (!e)
			e = plan_layer(plan->profile, l, lp, &tp->layers[l], diag);
		if (e) {
			wzc_wzt_plan_free(tp);
			return e;
		}
	}
	*out = tp;
	return WZ_OK;
}

/* The nearest level of each subset j = 0..3 (levels j, j + 4, ... of the
 * 2N-level codebook cb) to z: idx[j], and its squared distance. */
static void subset_nearest(const float *cb, uint32_t n2, float z, uint32_t idx[4], double e[4])
{
	/* p = how many levels are <= z (a binary search) */
	uint32_t lo = 0, n = n2;
	while (n > 0) {
		uint32_t half = n >> 1;
		int le = cb[lo + half] <= z;
		lo = le ? lo + half + 1 : lo;
		n = le ? n - half - 1 : half;
	}
	uint32_t p = lo;
	for (uint32_t j = 0; j < 4; j++) {
		/* the subset's levels on either side of z */
		int64_t a = p >= j + 1 ? (int64_t)(p - 1) - (int64_t)((p - 1 - j) & 3) : -1;
		int64_t b = (int64_t)p + (int64_t)((j - p) & 3);
		double ea = a >= 0 ? (double)z - cb[a] : INFINITY;
		double eb = b < (int64_t)n2 ? (double)cb[b] - z : INFINITY;
		ea *= ea;
		eb *= eb;
		if (a >= 0 && !(eb < ea)) {
			idx[j] = (uint32_t)a;
			e[j] = ea;
		} else {
			idx[j] = (uint32_t)b;
			e[j] = eb;
		}
	}
}

void wzc_wzt_digits(const wzc_wzt_plan *tp, const layer_plan *lp, int layer, const float *zl,
		    uint32_t *dig)
{
	const wzc_wzt_layer *tl = &tp->layers[layer];
	int nord = lp->gstart[lp->ngroups], S = 1 << tp->nu, ns = tl->nsteps;
	if (ns == 0)
		return;
	/* per step: each subset's nearest level; per step and state: the
	 * branch bit of the survivor entering it (its predecessor follows
	 * from the state and the bit) */
	uint32_t (*idx)[4] = malloc(sizeof *idx * (size_t)ns);
	uint8_t *bp = malloc((size_t)ns * S);
	double m[1 << 8], nm[1 << 8];
	if (!idx || !bp) {
		free(idx);
		free(bp);
		return; /* out of memory: the scalar digits stand */
	}
	for (int s = 0; s < S; s++)
		m[s] = s ? INFINITY : 0;
	int t = 0;
	for (int i = 0; i < nord; i++) {
		const float *cb = tl->cb[i];
		if (!cb)
			continue;
		int c = lp->order[i], jl = lp->order_c[i];
		uint32_t n2 = 2 * lp->nlev[c];
		double e[4], w = lp->ew_c[jl];
		subset_nearest(cb, n2, zl[jl], idx[t], e);
		for (int j = 0; j < 4; j++)
			e[j] *= w;
		for (int s = 0; s < S; s++)
			nm[s] = INFINITY;
		uint8_t *bt = bp + (size_t)t * S;
		for (int s = 0; s < S; s++) {
			if (!(m[s] < INFINITY))
				continue;
			uint32_t z0 = wzt_union((uint32_t)s);
			for (uint32_t b = 0; b < 2; b++) {
				double cand = m[s] + e[2 * b + z0];
				int to = tp->next[s][b];
				if (cand < nm[to]) {
					nm[to] = cand;
					bt[to] = (uint8_t)b;
				}
			}
		}
		memcpy(m, nm, sizeof(double) * (size_t)S);
		t++;
	}
	int s = 0;
	for (int k = 1; k < S; k++)
		if (m[k] < m[s])
			s = k;
	uint32_t H0 = wzt_h0[tp->nu] >> 1, H1 = wzt_h1[tp->nu] >> 1;
	for (int i = nord - 1; i >= 0; i--) {
		if (!tl->cb[i])
			continue;
		t--;
		uint32_t b = bp[(size_t)t * S + s];
		uint32_t z0 = (uint32_t)s >> (tp->nu - 1); /* every branch into s is of this union */
		uint32_t prev = ((((uint32_t)s ^ (z0 ? H0 : 0) ^ (b ? H1 : 0))) << 1) | z0;
		dig[lp->order[i]] = idx[t][2 * b + z0] >> 1;
		s = (int)prev;
	}
	free(idx);
	free(bp);
}

/* The fast search: working memory made once per layer, survivors as
 * packed bits, and for the format's 256 states on AVX2 the reference's
 * rule evaluated per target state.  Each state has two predecessors, one
 * per branch bit; the reference visits them in increasing state order and
 * keeps a later candidate only when it is strictly smaller than the
 * metric so far (which starts at infinity), so the new metric is
 * S < min(F, inf) ? S : min(F, inf), with F the candidate of the smaller
 * predecessor and S the other.  The sums are the same doubles; only
 * their grouping into vector lanes differs.  Elsewhere the reference's
 * loop runs as it is. */
struct wzc_wzt_work {
	int ns, S;
	uint32_t (*idx)[4];    /* [ns]: each subset's nearest level */
	uint64_t (*bits)[4];   /* [ns]: the survivor's branch bit of every state */
	int avx2; /* 0 the reference's loop, 1 the AVX2 kernel, 2 the AVX-512 one */
};

wzc_wzt_work *wzc_wzt_work_new(const wzc_wzt_plan *tp, int layer, int simd)
{
	wzc_wzt_work *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->ns = tp->layers[layer].nsteps;
	w->S = 1 << tp->nu;
	w->idx = malloc(sizeof *w->idx * (size_t)(w->ns ? w->ns : 1));
	w->bits = malloc(sizeof *w->bits * (size_t)(w->ns ? w->ns : 1));
	if (!w->idx || !w->bits) {
		wzc_wzt_work_free(w);
		return NULL;
	}
#ifdef WZT_HAVE_AVX2_KERNEL
	if (tp->nu == 8 && simd >= 1 && __builtin_cpu_supports("avx2"))
		w->avx2 = 1;
	if (tp->nu == 8 && simd >= 2 && __builtin_cpu_supports("avx512f"))
		w->avx2 = 2;
#else
	(void)simd;
#endif
	return w;
}

void wzc_wzt_work_free(wzc_wzt_work *w)
{
	if (!w)
		return;
	free(w->idx);
	free(w->bits);
	free(w);
}

/* One step of any trellis, natural state order, m -> nm: the
 * reference's loop (it skips the unreached states of the first steps). */
static void acs_scalar(const wzc_wzt_plan *tp, const double *m, const double e[4], double *nm,
		       uint64_t bits[4])
{
	int S = 1 << tp->nu;
	bits[0] = bits[1] = bits[2] = bits[3] = 0;
	for (int s = 0; s < S; s++)
		nm[s] = INFINITY;
	for (int s = 0; s < S; s++) {
		if (!(m[s] < INFINITY))
			continue;
		uint32_t z0 = wzt_union((uint32_t)s);
		for (uint32_t b = 0; b < 2; b++) {
			double cand = m[s] + e[2 * b + z0];
			int to = tp->next[s][b];
			if (cand < nm[to]) {
				nm[to] = cand;
				uint64_t bit = (uint64_t)1 << (to & 63);
				bits[to >> 6] = b ? bits[to >> 6] | bit : bits[to >> 6] & ~bit;
			}
		}
	}
}

#ifdef WZT_HAVE_AVX2_KERNEL
/* One step of the 256-state trellis (h0 = 0515, h1 = 0362), the metrics
 * of the even states in me[128] and of the odd ones in mo[128].  State
 * to < 128 comes from the even states 2 (to ^ b H1') by branch b, state
 * 128 + k from the odd states 2 (k ^ H0' ^ b H1') + 1 (H0' = 38, H1' =
 * 121: the polynomials shifted right, past the top bit); the smaller
 * predecessor is the one of branch 0 exactly when bit 6 of k is 0.  An
 * index xor a constant is a vector four blocks away xor the constant's
 * upper bits, its lanes permuted by the lower two. */
__attribute__((target("avx2"))) static void acs256_avx2(double *me, double *mo, const double e[4],
							uint64_t bits[4])
{
	_Static_assert(WZT_NU == 8, "the kernel is written for 256 states");
	const __m256d inf = _mm256_set1_pd(INFINITY);
	const __m256d e0 = _mm256_set1_pd(e[0]), e1 = _mm256_set1_pd(e[1]);
	const __m256d e2 = _mm256_set1_pd(e[2]), e3 = _mm256_set1_pd(e[3]);
	double nm[256] __attribute__((aligned(32)));
	uint64_t bw[4] = { 0, 0, 0, 0 };
	for (int q = 0; q < 32; q++) {
		/* to = 4q + r: k ^ 121 = 4 (q ^ 30) + (r ^ 1) */
		__m256d c0 = _mm256_add_pd(_mm256_loadu_pd(me + 4 * q), e0);
		__m256d c1 = _mm256_add_pd(_mm256_permute_pd(_mm256_loadu_pd(me + 4 * (q ^ 30)), 0x5), e2);
		/* to = 128 + 4q + r: k ^ 38 = 4 (q ^ 9) + (r ^ 2), k ^ 95 = 4 (q ^ 23) + (r ^ 3) */
		__m256d d0 = _mm256_add_pd(
			_mm256_permute4x64_pd(_mm256_loadu_pd(mo + 4 * (q ^ 9)), 0x4E), e1);
		__m256d d1 = _mm256_add_pd(
			_mm256_permute4x64_pd(_mm256_loadu_pd(mo + 4 * (q ^ 23)), 0x1B), e3);
		int lo = q < 16; /* branch 0 comes from the smaller state */
		__m256d fe = _mm256_min_pd(lo ? c0 : c1, inf), se = lo ? c1 : c0;
		__m256d fo = _mm256_min_pd(lo ? d0 : d1, inf), so = lo ? d1 : d0;
		__m256d te = _mm256_cmp_pd(se, fe, _CMP_LT_OQ), to = _mm256_cmp_pd(so, fo, _CMP_LT_OQ);
		_mm256_store_pd(nm + 4 * q, _mm256_blendv_pd(fe, se, te));
		_mm256_store_pd(nm + 128 + 4 * q, _mm256_blendv_pd(fo, so, to));
		uint64_t flip = lo ? 0 : 0xF;
		bw[q >> 4] |= ((uint64_t)_mm256_movemask_pd(te) ^ flip) << ((4 * q) & 63);
		bw[2 + (q >> 4)] |= ((uint64_t)_mm256_movemask_pd(to) ^ flip) << ((4 * q) & 63);
	}
	for (int i = 0; i < 32; i++) {
		__m256d a = _mm256_load_pd(nm + 8 * i), b = _mm256_load_pd(nm + 8 * i + 4);
		_mm256_storeu_pd(me + 4 * i, _mm256_permute4x64_pd(_mm256_unpacklo_pd(a, b), 0xD8));
		_mm256_storeu_pd(mo + 4 * i, _mm256_permute4x64_pd(_mm256_unpackhi_pd(a, b), 0xD8));
	}
	memcpy(bits, bw, sizeof bw);
}

/* The same step eight states a vector (AVX-512F): k ^ 121 = 8 (q ^ 15) +
 * (r ^ 1), k ^ 38 = 8 (q ^ 4) + (r ^ 6), k ^ 95 = 8 (q ^ 11) + (r ^ 7). */
__attribute__((target("avx512f"))) static void acs256_avx512(double *me, double *mo,
							     const double e[4], uint64_t bits[4])
{
	const __m512d inf = _mm512_set1_pd(INFINITY);
	const __m512d e0 = _mm512_set1_pd(e[0]), e1 = _mm512_set1_pd(e[1]);
	const __m512d e2 = _mm512_set1_pd(e[2]), e3 = _mm512_set1_pd(e[3]);
	const __m512i x1 = _mm512_set_epi64(6, 7, 4, 5, 2, 3, 0, 1);
	const __m512i x6 = _mm512_set_epi64(1, 0, 3, 2, 5, 4, 7, 6);
	const __m512i x7 = _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7);
	double nm[256] __attribute__((aligned(64)));
	uint64_t bw[4] = { 0, 0, 0, 0 };
	for (int q = 0; q < 16; q++) {
		__m512d c0 = _mm512_add_pd(_mm512_loadu_pd(me + 8 * q), e0);
		__m512d c1 = _mm512_add_pd(_mm512_permutexvar_pd(x1, _mm512_loadu_pd(me + 8 * (q ^ 15))),
					   e2);
		__m512d d0 = _mm512_add_pd(_mm512_permutexvar_pd(x6, _mm512_loadu_pd(mo + 8 * (q ^ 4))),
					   e1);
		__m512d d1 = _mm512_add_pd(_mm512_permutexvar_pd(x7, _mm512_loadu_pd(mo + 8 * (q ^ 11))),
					   e3);
		int lo = q < 8; /* branch 0 comes from the smaller state */
		__m512d fe = _mm512_min_pd(lo ? c0 : c1, inf), se = lo ? c1 : c0;
		__m512d fo = _mm512_min_pd(lo ? d0 : d1, inf), so = lo ? d1 : d0;
		__mmask8 te = _mm512_cmp_pd_mask(se, fe, _CMP_LT_OQ);
		__mmask8 to = _mm512_cmp_pd_mask(so, fo, _CMP_LT_OQ);
		_mm512_store_pd(nm + 8 * q, _mm512_mask_blend_pd(te, fe, se));
		_mm512_store_pd(nm + 128 + 8 * q, _mm512_mask_blend_pd(to, fo, so));
		uint64_t flip = lo ? 0 : 0xFF;
		bw[q >> 3] |= (((uint64_t)te) ^ flip) << ((8 * q) & 63);
		bw[2 + (q >> 3)] |= (((uint64_t)to) ^ flip) << ((8 * q) & 63);
	}
	const __m512i ev = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
	const __m512i od = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
	for (int i = 0; i < 16; i++) {
		__m512d a = _mm512_load_pd(nm + 16 * i), b = _mm512_load_pd(nm + 16 * i + 8);
		_mm512_storeu_pd(me + 8 * i, _mm512_permutex2var_pd(a, ev, b));
		_mm512_storeu_pd(mo + 8 * i, _mm512_permutex2var_pd(a, od, b));
	}
	memcpy(bits, bw, sizeof bw);
}
#endif

void wzc_wzt_digits_fast(const wzc_wzt_plan *tp, wzc_wzt_work *w, const layer_plan *lp,
			 int layer, const float *zl, uint32_t *dig)
{
	const wzc_wzt_layer *tl = &tp->layers[layer];
	int nord = lp->gstart[lp->ngroups], S = w->S;
	if (w->ns == 0)
		return;
	/* natural order in m (scalar) or even states then odd ones (AVX2) */
	double m[1 << 8], nm[1 << 8];
	for (int s = 0; s < S; s++)
		m[s] = s ? INFINITY : 0;
	int t = 0;
	for (int i = 0; i < nord; i++) {
		const float *cb = tl->cb[i];
		if (!cb)
			continue;
		int c = lp->order[i], jl = lp->order_c[i];
		double e[4], wt = lp->ew_c[jl];
		subset_nearest(cb, 2 * lp->nlev[c], zl[jl], w->idx[t], e);
		for (int j = 0; j < 4; j++)
			e[j] *= wt;
#ifdef WZT_HAVE_AVX2_KERNEL
		if (w->avx2) {
			if (w->avx2 == 2)
				acs256_avx512(m, m + 128, e, w->bits[t]);
			else
				acs256_avx2(m, m + 128, e, w->bits[t]);
			t++;
			continue;
		}
#endif
		acs_scalar(tp, m, e, nm, w->bits[t]);
		memcpy(m, nm, sizeof(double) * (size_t)S);
		t++;
	}
	if (w->avx2) {
		for (int k = 0; k < 128; k++) {
			nm[2 * k] = m[k];
			nm[2 * k + 1] = m[128 + k];
		}
		memcpy(m, nm, sizeof(double) * (size_t)S);
	}
	int s = 0;
	for (int k = 1; k < S; k++)
		if (m[k] < m[s])
			s = k;
	uint32_t H0 = wzt_h0[tp->nu] >> 1, H1 = wzt_h1[tp->nu] >> 1;
	for (int i = nord - 1; i >= 0; i--) {
		if (!tl->cb[i])
			continue;
		t--;
		uint32_t b = (uint32_t)(w->bits[t][s >> 6] >> (s & 63)) & 1;
		uint32_t z0 = (uint32_t)s >> (tp->nu - 1);
		uint32_t prev = ((((uint32_t)s ^ (z0 ? H0 : 0) ^ (b ? H1 : 0))) << 1) | z0;
		dig[lp->order_c[i]] = w->idx[t][2 * b + z0] >> 1;
		s = (int)prev;
	}
}
