/* The wzt fixed-rate coder: wz's rate plan and record, with the coded
 * components coded by trellis-coded quantization (Marcellin and
 * Fischer, IEEE Trans. Commun. 38(1), 1990) instead of one scalar table
 * each: a Viterbi search over the token's components at encode time, a
 * state-machine walk at decode time (docs/wz-format.md, "Trellis-coded
 * records"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/wz/wz_plan.h"
#include "codec/profile/levels.h"
#include "codec/wz/wz_plan.h"
#include "codec/wz/wzt_trellis.h"

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
		free(tp->layers[l].steps);
		free(tp->layers[l].padded);
		free(tp->layers[l].grids);
	}
	free(tp->layers);
	free(tp);
}

/* The grid of a union codebook of n2 levels (the fast search's): cells
 * by wzc_qlut_cell, refined until none holds more than 8 levels;
 * start[c] = the levels in the cells below c.  Returns the cell count G,
 * or 0 when no grid within the cap does (the search then bisects). */
static int grid_of(const float *cb, uint32_t n2, uint32_t *start /* OUT [8 n2 + 4097] */,
		   float *lo /* OUT */, float *inv /* OUT */)
{
	float range = cb[n2 - 1] - cb[0];
	for (int G = 2 * (int)n2 + 2; G <= 8 * (int)n2 + 4096; G *= 2) {
		*lo = cb[0];
		*inv = range > 0 && isfinite((G - 1) / range) ? (float)((G - 1) / range) : 1.0f;
		memset(start, 0, sizeof *start * ((size_t)G + 1));
		for (uint32_t i = 0; i < n2; i++)
			start[wzc_qlut_cell(*lo, *inv, G, cb[i]) + 1]++;
		uint32_t most = 0;
		for (int c = 1; c <= G; c++) {
			most = start[c] > most ? start[c] : most;
			start[c] += start[c - 1];
		}
		if (most <= 8)
			return G;
	}
	return 0;
}

/* The fast search's steps: per trellis component in coding order, its
 * codebook padded and gridded (one copy per codebook), place and weight. */
static wz_err plan_steps(const layer_plan *lp, wzc_wzt_layer *tl, wz_diag *diag)
{
	int nord = lp->gstart[lp->ngroups];
	size_t npad = 0, ngrid = 0;
	for (int i = 0; i < nord; i++) {
		int first = 1;
		for (int k = 0; tl->cb[i] && first && k < i; k++)
			first = tl->cb[k] != tl->cb[i];
		if (tl->cb[i] && first) {
			size_t n2 = 2 * (size_t)lp->nlev[lp->order[i]];
			npad += n2 + 20;
			ngrid += 8 * n2 + 4097;
		}
	}
	tl->steps = calloc((size_t)(tl->nsteps ? tl->nsteps : 1), sizeof *tl->steps);
	tl->padded = malloc(sizeof(float) * (npad ? npad : 1));
	tl->grids = malloc(sizeof(uint32_t) * (ngrid ? ngrid : 1));
	if (!tl->steps || !tl->padded || !tl->grids)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	float *pad = tl->padded;
	uint32_t *grid = tl->grids;
	for (int i = 0, t = 0; i < nord; i++) {
		if (!tl->cb[i])
			continue;
		wzc_wzt_step *st = &tl->steps[t++];
		uint32_t n2 = 2 * lp->nlev[lp->order[i]];
		const wzc_wzt_step *prev = tl->steps;
		while (prev < st && prev->cb != tl->cb[i])
			prev++;
		if (prev < st) { /* the codebook of an earlier step */
			*st = *prev;
		} else {
			for (int q = 0; q < 4; q++)
				pad[q] = -INFINITY;
			memcpy(pad + 4, tl->cb[i], sizeof(float) * n2);
			for (int q = 0; q < 16; q++)
				pad[4 + n2 + q] = INFINITY;
			st->pad = pad + 4;
			st->n2 = n2;
			st->cb = tl->cb[i];
			st->G = grid_of(tl->cb[i], n2, grid, &st->lo, &st->inv);
			st->start = st->G ? grid : NULL;
			st->gmax = (float)(st->G - 1);
			pad += n2 + 20;
			grid += st->G ? (size_t)st->G + 1 : 0;
		}
		st->jl = lp->order_c[i];
		st->w = lp->ew_c[st->jl];
	}
	return WZ_OK;
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
			if (wzc_levels_table_count(pp->hist, pr->version, 2 * N, at, at + 2 * N))
				return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
			at += 2 * (size_t)(2 * N);
		}
		tl->cb[i] = tab[p][j];
		tl->nsteps++;
	}
	return plan_steps(lp, tl, diag);
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
	uint8_t *bp = calloc((size_t)ns, (size_t)S); /* states never reached stay 0 */
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
