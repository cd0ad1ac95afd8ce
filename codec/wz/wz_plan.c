/* The wz fixed-rate coder's plan (GPU tier).  Per layer, both parts'
 * components (KLT coefficients over a per-token scale) get level counts by
 * greedy reverse water-filling on the profile's weighted variances, and the
 * components of more than one level are grouped into mixed-radix fields of
 * at most 64 bits, so the rate is fractional without entropy coding
 * (docs/wz-format.md); the plans are built per layer on first use.  The
 * coder that follows a plan: codec/wz/wz_codec.c. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codec/profile/levels.h"
#include "codec/profile/profile.h"
#include "codec/profile/profile_cache.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_allocate.h"
#include "codec/wz/wz_plan.h"

typedef unsigned __int128 u128;

static void free_layer(layer_plan *lp)
{
	free(lp->nlev);
	free(lp->lev);
	free(lp->thr);
	free(lp->sigma);
	free(lp->gstart);
	free(lp->order);
	free(lp->gbits);
	free(lp->ones);
	free(lp->dec);
	free(lp->tables);
	free(lp->bq[0]);
	free(lp->bq[1]);
	free(lp->delta[0]);
	free(lp->delta[1]);
	for (int p = 0; p < 2; p++) {
		free(lp->cod[p]);
		free(lp->bp_c[p]);
		free(lp->bt_c[p]);
	}
	for (int i = 0; lp->qluts && i < lp->nqluts; i++)
		wzc_qlut_free(&lp->qluts[i]);
	free(lp->qluts);
	free(lp->qlut_of);
	free(lp->comp_c);
	free(lp->order_c);
	free(lp->rsig_c);
	free(lp->qb_block);
	free(lp->olo_c);
	free(lp->ohi_c);
	free(lp->lmin_c);
	free(lp->lmax_c);
	free(lp->lev_c);
	free(lp->thr_c);
	free(lp->nlev_c);
	free(lp->ew_c);
}

void wzc_wz_plan_free(wzc_wz_plan *plan)
{
	if (!plan)
		return;
	for (int l = 0; plan->layers && l < plan->L; l++)
		free_layer(&plan->layers[l]);
	for (int l = 0; plan->lock && l < plan->L; l++)
		pthread_mutex_destroy(&plan->lock[l]);
	free(plan->layers);
	free(plan->ready);
	free(plan->lock);
	wzc_wz_plan_free(plan->anchored);
	if (plan->anchored_profile) { /* a shallow copy: its arrays are the profile's */
		wzc_profile_cache_free(plan->anchored_profile->cache);
		free(plan->anchored_profile);
	}
	free(plan);
}

/* Groups the components with more than one level in order, each group's
 * product of counts below 2^64; then raises counts inside each group while
 * the product stays within the group's whole bits (free precision).
 * Returns the total bits. */
static int group_and_fill(int n, int *jidx, const double *v, double (*d)[WZC_NSET],
			  const int *part, int *order, int *gstart, uint8_t *gbits, int *ngroups)
{
	int ng = 0, no = 0, total = 0;
	u128 M = 1;
	gstart[0] = 0;
	for (int k = 0; k <= n; k++) {
		uint32_t N = k < n ? wzc_level_count(jidx[k]) : 0;
		if (k < n && N <= 1)
			continue;
		if (k == n || M * N > (u128)UINT64_MAX) {
			if (no > gstart[ng]) {
				/* close the group: k_g = ceil(log2 M) */
				int bits = 0;
				while (((u128)1 << bits) < M)
					bits++;
				/* fill: raise counts while M stays <= 2^bits */
				u128 cap = bits >= 64 ? (u128)UINT64_MAX : (u128)1 << bits;
				for (;;) {
					int best = -1;
					double bestg = 0;
					for (int i = gstart[ng]; i < no; i++) {
						int c = order[i], j = jidx[c];
						if (j + 1 >= WZC_NSET)
							continue;
						u128 M2 = M / wzc_level_count(j) * wzc_level_count(j + 1);
						double g = v[c] * (d[part[c]][j] - d[part[c]][j + 1]);
						if (M2 <= cap && g > bestg) {
							bestg = g;
							best = c;
						}
					}
					if (best < 0)
						break;
					M = M / wzc_level_count(jidx[best]) * wzc_level_count(jidx[best] + 1);
					jidx[best]++;
				}
				gbits[ng] = (uint8_t)bits;
				total += bits;
				gstart[++ng] = no;
			}
			M = 1;
			if (k == n)
				break;
		}
		order[no++] = k;
		M *= N;
	}
	*ngroups = ng;
	return total;
}

/* The coded components as one list with their grids side by side. */
static wz_err plan_batch(int R, layer_plan *lp, wz_diag *diag)
{
	int nc = lp->ncod[0] + lp->ncod[1];
	size_t ncells = 0;
	for (int i = 0; i < lp->nqluts; i++)
		ncells += (size_t)lp->qluts[i].G;
	size_t nn = (size_t)nc + 1;
	lp->comp_c = malloc(sizeof(int) * nn);
	lp->order_c = malloc(sizeof(int) * (size_t)(lp->n + 1));
	lp->rsig_c = malloc(sizeof(float) * nn);
	lp->qb_block = malloc(nn * (sizeof(void *) + 3 * sizeof(float) + 2 * sizeof(int32_t)) +
			      (ncells + 1) * sizeof(uint32_t) + (ncells + 2) * sizeof(uint64_t));
	int *place = malloc(sizeof(int) * (size_t)lp->n);
	if (!lp->comp_c || !lp->order_c || !lp->rsig_c || !lp->qb_block || !place) {
		free(place);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	wzc_qbatch *b = &lp->qb;
	char *at = lp->qb_block;
	b->q = (const wzc_qlut **)(void *)at;
	at += nn * sizeof(void *);
	b->t0 = (float *)(void *)at;
	b->inv_w = b->t0 + nn;
	b->gmax = b->inv_w + nn;
	b->start_off = (int32_t *)(void *)(b->gmax + nn);
	b->exact = b->start_off + nn;
	uint32_t *starts = (uint32_t *)(void *)(b->exact + nn);
	b->starts = starts;
	/* after starts, at the next multiple of 8 bytes from the block's start */
	size_t poff = (size_t)((char *)(starts + ncells + 1) - (char *)lp->qb_block);
	uint64_t *pairs = (uint64_t *)(void *)((char *)lp->qb_block + (poff + 7) / 8 * 8);
	b->pairs = pairs;
	b->n = nc;
	size_t *first = malloc(sizeof(size_t) * (size_t)(lp->nqluts + 1));
	if (!first) {
		free(place);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	size_t pos = 0;
	for (int i = 0; i < lp->nqluts; i++) {
		first[i] = pos;
		wzc_qlut_pairs(&lp->qluts[i], pairs + pos);
		for (int c = 0; c < lp->qluts[i].G; c++)
			starts[pos++] = lp->qluts[i].start[c];
	}
	int j = 0;
	for (int p = 0; p < 2; p++)
		for (int i = 0; i < lp->ncod[p]; i++, j++) {
			int k = (p ? R : 0) + lp->cod[p][i];
			const wzc_qlut *q = &lp->qluts[lp->qlut_of[k]];
			lp->comp_c[j] = k;
			lp->rsig_c[j] = wzc_rsigma(lp->sigma[k]);
			place[k] = j;
			b->q[j] = q;
			b->t0[j] = q->t0;
			b->inv_w[j] = q->inv_w;
			b->gmax[j] = (float)(q->G - 1);
			b->start_off[j] = (int32_t)first[lp->qlut_of[k]];
			b->exact[j] = q->exact;
		}
	for (int i = 0; i < lp->gstart[lp->ngroups]; i++) {
		int c = lp->order[i], nv = lp->n - 2;
		lp->order_c[i] = c >= nv ? nc + (c - nv) : place[c];
	}
	free(first);
	free(place);
	return WZ_OK;
}

/* The encoders' overload rule per coded component (docs/wz-format.md,
 * "Arithmetic" step 5): its table's outer bounds, clamped to straddle 0,
 * and weight * sigma^2. */
static wz_err plan_overload(const wzc_profile *pr, int l, layer_plan *lp, wz_diag *diag)
{
	const wzc_part_profile *parts[2] = { &pr->latent[l], &pr->rope[l] };
	int R = pr->R, nc = lp->ncod[0] + lp->ncod[1];
	size_t nn = (size_t)nc + 1;
	lp->olo_c = malloc(sizeof(float) * nn);
	lp->ohi_c = malloc(sizeof(float) * nn);
	lp->lev_c = malloc(sizeof(float *) * nn);
	lp->thr_c = malloc(sizeof(float *) * nn);
	lp->nlev_c = malloc(sizeof(uint32_t) * nn);
	lp->ew_c = malloc(sizeof(double) * nn);
	lp->lmin_c = malloc(sizeof(float) * nn);
	lp->lmax_c = malloc(sizeof(float) * nn);
	if (!lp->olo_c || !lp->ohi_c || !lp->lev_c || !lp->thr_c || !lp->nlev_c || !lp->ew_c ||
	    !lp->lmin_c || !lp->lmax_c)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	for (int j = 0; j < nc; j++) {
		int k = lp->comp_c[j], p = k >= R, i = p ? k - R : k;
		const float *lev = lp->lev[k], *thr = lp->thr[k];
		uint32_t N = lp->nlev[k];
		float lo = 2 * lev[0] - thr[0], hi = 2 * lev[N - 1] - thr[N - 2];
		lp->olo_c[j] = lo < 0 ? lo : 0;
		lp->ohi_c[j] = hi > 0 ? hi : 0;
		lp->lmin_c[j] = lev[0];
		lp->lmax_c[j] = lev[N - 1];
		lp->lev_c[j] = lev;
		lp->thr_c[j] = thr;
		lp->nlev_c[j] = N;
		lp->ew_c[j] = (double)parts[p]->weight[i] * (double)lp->sigma[k] * (double)lp->sigma[k];
	}
	/* what the plan expects of each part: the same distortions it was
	 * allocated by */
	double d[2][WZC_NSET];
	if (wzc_profile_levels_distortion(pr, l, 0, d[0]) || wzc_profile_levels_distortion(pr, l, 1, d[1]))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	lp->dexp[0] = lp->dexp[1] = 0;
	for (int j = 0; j < nc; j++) {
		int k = lp->comp_c[j], p = k >= R, idx = 0;
		while (idx + 1 < WZC_NSET && wzc_level_count(idx) < lp->nlev[k])
			idx++;
		lp->dexp[p] += lp->ew_c[j] * d[p][idx];
	}
	return WZ_OK;
}

/* What the fast encoder needs besides the plan: the coded components'
 * integer basis in pairs and their quantizer grids. */
static wz_err plan_fast(const wzc_profile *pr, int l, layer_plan *lp, wz_diag *diag)
{
	const wzc_part_profile *parts[2] = { &pr->latent[l], &pr->rope[l] };
	int R = pr->R;
	lp->qlut_of = malloc(sizeof *lp->qlut_of * (size_t)lp->n);
	lp->qluts = calloc((size_t)lp->n, sizeof *lp->qluts);
	if (!lp->qlut_of || !lp->qluts)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	for (int k = 0; k < lp->n; k++) {
		lp->qlut_of[k] = -1;
		if (lp->nlev[k] <= 1)
			continue;
		for (int i = 0; i < k && lp->qlut_of[k] < 0; i++)
			if (lp->qlut_of[i] >= 0 && lp->thr[i] == lp->thr[k])
				lp->qlut_of[k] = lp->qlut_of[i];
		if (lp->qlut_of[k] >= 0)
			continue;
		if (wzc_qlut_init(&lp->qluts[lp->nqluts], lp->thr[k], lp->nlev[k] - 1))
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		lp->qlut_of[k] = lp->nqluts++;
	}
	for (int p = 0; p < 2; p++) {
		int m = parts[p]->n, nc = 0;
		lp->cod[p] = malloc(sizeof(int) * (size_t)(m ? m : 1));
		if (!lp->cod[p])
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		for (int k = 0; k < m; k++)
			if (lp->nlev[k + (p ? R : 0)] > 1)
				lp->cod[p][nc++] = k;
		lp->ncod[p] = nc;
		lp->ldc[p] = nc ? (size_t)nc : 1;
		int kp = (m + 1) / 2;
		lp->bp_c[p] = malloc(sizeof(uint32_t) * (size_t)(kp ? kp : 1) * lp->ldc[p]);
		if (!lp->bp_c[p])
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		lp->ldt[p] = (size_t)wzc_igemm_dot_pad(kp);
		lp->bt_c[p] = calloc((size_t)(nc ? nc : 1) * (kp ? lp->ldt[p] : 1), sizeof(uint32_t));
		if (!lp->bt_c[p])
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		for (int q = 0; q < kp; q++)
			for (int j = 0; j < nc; j++) {
				const int16_t *row = lp->bq[p] + (size_t)lp->cod[p][j] * m;
				uint32_t pair = wzc_pair16(row[2 * q], 2 * q + 1 < m ? row[2 * q + 1] : 0);
				lp->bp_c[p][(size_t)q * lp->ldc[p] + j] = pair;
				lp->bt_c[p][(size_t)j * lp->ldt[p] + q] = pair;
			}
	}
	wz_err e = plan_batch(R, lp, diag);
	return e ? e : plan_overload(pr, l, lp, diag);
}

/* Bits of budget below which the fallback search of plan_layer stops: the
 * smallest step of a level count costs log2(8/7) = 0.19 bits. */
#define BUDGET_RESOLUTION (1.0 / 16)

/* The best fitting allocation found so far: its counts, model distortion
 * and the budget that gave it. */
typedef struct {
	int *jidx;
	double dist, budget;
} best_fit;

/* The allocators of one layer: from the position floor (profile version
 * 4), and from all ones for the budgets below the floor's bits (or for
 * every budget, when there is no floor). */
typedef struct {
	wzc_wz_allocator *from_floor, *plain;
	double floor_bits;
} layer_allocators;

/* One allocation within `budget` with the two flags and its grouping;
 * when its packed total fits in `bits` and its model distortion is below
 * the best's, it becomes the best.  Returns the packed total. */
static int try_budget(int n, const double *v, double (*d)[WZC_NSET], const int *part,
		      double budget, int *jidx, layer_plan *lp, int bits, best_fit *bf,
		      const layer_allocators *al)
{
	int nv = n - 2, ng;
	wzc_wz_allocator_run(al->from_floor && budget >= al->floor_bits ? al->from_floor : al->plain,
			     budget, jidx);
	jidx[nv] = jidx[nv + 1] = 1;
	int total = group_and_fill(n, jidx, v, d, part, lp->order, lp->gstart, lp->gbits, &ng);
	double dist = 0;
	for (int k = 0; k < n; k++)
		dist += v[k] * d[part[k]][jidx[k]];
	if (total <= bits && dist < bf->dist) {
		bf->dist = dist;
		bf->budget = budget;
		memcpy(bf->jidx, jidx, sizeof *jidx * (size_t)n);
	}
	return total;
}

static wz_err plan_layer(const wzc_profile *pr, int l, int bits, layer_plan *lp, wz_diag *diag)
{
	/* Components: R latent, P position, and last one anchor flag per part
	 * (two levels: relative to the mean or to the anchor). */
	int R = pr->R, P = pr->P, nv = R + P, n = nv + 2;
	const wzc_part_profile *parts[2] = { &pr->latent[l], &pr->rope[l] };
	double d[2][WZC_NSET];
	if (wzc_profile_levels_distortion(pr, l, 0, d[0]) || wzc_profile_levels_distortion(pr, l, 1, d[1]))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	double *v = malloc(sizeof *v * (size_t)n);
	int *part = malloc(sizeof *part * (size_t)n), *jidx = malloc(sizeof *jidx * (size_t)n);
	int *best = malloc(sizeof *best * (size_t)n);
	wzc_wz_allocator *alloc = NULL;
	layer_allocators al = { NULL, NULL, 0 };
	wz_err e = WZ_OK; /* every way out frees the scratch above (done:) */
	lp->n = n;
	lp->nlev = calloc((size_t)n, sizeof *lp->nlev);
	lp->lev = calloc((size_t)n, sizeof *lp->lev);
	lp->thr = calloc((size_t)n, sizeof *lp->thr);
	lp->sigma = calloc((size_t)n, sizeof *lp->sigma);
	lp->gstart = calloc((size_t)n + 1, sizeof *lp->gstart);
	lp->order = calloc((size_t)n, sizeof *lp->order);
	lp->gbits = calloc((size_t)n, 1);
	if (!v || !part || !jidx || !best || !lp->nlev || !lp->lev || !lp->thr || !lp->sigma ||
	    !lp->gstart || !lp->order || !lp->gbits)
		goto nomem;
	for (int k = nv; k < n; k++) {
		part[k] = 0;
		v[k] = 0;
		lp->sigma[k] = 0;
	}
	for (int k = 0; k < nv; k++) {
		int p = k < R ? 0 : 1, i = k < R ? k : k - R;
		part[k] = p;
		v[k] = (double)parts[p]->weight[i] * parts[p]->var[i];
		lp->sigma[k] = parts[p]->sigma[i];
		if (!(lp->sigma[k] > 0))
			v[k] = 0; /* nothing to code: the component is constant */
	}
	/* From profile version 4: the position part's error planned within
	 * its cap, the int8 position part's error on calibration tokens
	 * (docs/wz-format.md, "The rate plan", step 1). */
	int *floor = NULL;
	if (pr->version >= 4 && P > 0 && pr->pos_cap && pr->pos_cap[l] > 0 && bits > 2) {
		double *var = malloc(sizeof *var * (size_t)P), dcap[WZC_NSET];
		floor = calloc((size_t)nv, sizeof *floor);
		int tables = wzc_levels_distortion_exact(parts[1]->hist, pr->version, dcap) == 0;
		if (var && floor && tables) {
			for (int i = 0; i < P; i++)
				var[i] = v[R + i] > 0 ? (double)parts[1]->var[i] : 0;
			al.floor_bits = wzc_wz_floor(P, var, dcap, pr->pos_cap[l], 0.5 * (bits - 2),
						     floor + R);
			if (al.floor_bits > 0)
				al.from_floor = wzc_wz_allocator_new_floor(
					nv, v, (const double(*)[WZC_NSET])d, part, floor);
		}
		int failed = !var || !floor || !tables || (al.floor_bits > 0 && !al.from_floor);
		free(var);
		free(floor);
		if (failed)
			goto nomem;
	}
	alloc = wzc_wz_allocator_new(nv, v, (const double(*)[WZC_NSET])d, part);
	al.plain = alloc;
	if (!alloc)
		goto nomem;
	/* Find the largest allocation whose packed size fits; a few rounds of
	 * correcting the budget by the grouping's overhead. */
	double budget = bits - 2, smallest_over = budget;
	best_fit bf = { best, INFINITY, 0 };
	int found = 0;
	for (int it = 0; it < 8; it++) {
		int total = try_budget(n, v, d, part, budget, jidx, lp, bits, &bf, &al);
		if (total <= bits) {
			found = 1;
			if (total == bits)
				break;
			budget += bits - total;
		} else {
			smallest_over = fmin(smallest_over, budget);
			budget -= total - bits;
		}
	}
	/* The rounds above can stall: the fill step hands the bits that a
	 * smaller budget frees back to the groups, so the total stayed over in
	 * every round, and the layer used to store nothing at all
	 * (docs/wz-format.md, "The rate plan").  Then step down from the
	 * smallest budget that was over, doubling the step until one fits
	 * (budget 0 does: the two flags alone), and bisect between the two. */
	if (!found && bits >= 2) {
		double over = smallest_over, fits = over, step = 1;
		for (;;) {
			fits = fmax(over - step, 0);
			if (try_budget(n, v, d, part, fits, jidx, lp, bits, &bf, &al) <= bits ||
			    fits == 0)
				break;
			over = fits;
			step *= 2;
		}
		while (over - fits > BUDGET_RESOLUTION) {
			double mid = 0.5 * (over + fits);
			if (try_budget(n, v, d, part, mid, jidx, lp, bits, &bf, &al) <= bits)
				fits = mid;
			else
				over = mid;
		}
		found = bf.dist < INFINITY;
	}
	/* From profile version 3: the rounds stop at a budget where the
	 * grouping happens to fit, and a larger budget a few bits up can fit
	 * too, with less distortion; without trying them, one more byte of
	 * record planned more distortion at 47 of 1,081 sizes (iid, 512 + 64).
	 * A budget of bits - 1 or more cannot fit: the greedy stops less than
	 * one step (at most 1 bit) short of its budget unless every step is
	 * taken, and the flags add 2. */
	if (found && pr->version >= 3)
		for (double b = bf.budget + 1; b < bits - 1; b += 1)
			try_budget(n, v, d, part, b, jidx, lp, bits, &bf, &al);
	if (!found) {
		for (int k = 0; k < n; k++)
			best[k] = 0;
		best[nv] = best[nv + 1] = bits >= 2;
		bf.dist = 0;
	}
	/* Re-derive the grouping of the chosen allocation (the fill step is
	 * deterministic, and a no-op on an allocation it produced). */
	lp->total_bits = group_and_fill(n, best, v, d, part, lp->order, lp->gstart, lp->gbits,
					&lp->ngroups);
	lp->distortion = bf.dist;
	/* Level tables for the counts used, shared per (part, count). */
	size_t need = 0;
	int used[2][WZC_NSET] = { { 0 } };
	for (int k = 0; k < n; k++)
		used[part[k]][best[k]] = 1;
	for (int p = 0; p < 2; p++)
		for (int j = 0; j < WZC_NSET; j++)
			if (used[p][j])
				need += 2 * (size_t)wzc_level_count(j);
	lp->ntables = need;
	lp->tables = malloc(sizeof(float) * (need ? need : 1));
	if (!lp->tables)
		goto nomem;
	float *at = lp->tables, *tab[2][WZC_NSET];
	for (int p = 0; p < 2; p++)
		for (int j = 0; j < WZC_NSET; j++) {
			tab[p][j] = NULL;
			if (!used[p][j])
				continue;
			tab[p][j] = at;
			if (wzc_profile_levels_table(pr, l, p, j, at, at + wzc_level_count(j)))
				goto nomem;
			at += 2 * (size_t)wzc_level_count(j);
		}
	lp->ones = malloc(sizeof *lp->ones * (size_t)n);
	if (!lp->ones)
		goto nomem;
	for (int k = 0; k < nv; k++)
		if (best[k] == 0)
			lp->ones[lp->nones++] = k;
	for (int k = 0; k < n; k++) {
		lp->nlev[k] = wzc_level_count(best[k]);
		lp->lev[k] = tab[part[k]][best[k]];
		lp->thr[k] = lp->lev[k] + lp->nlev[k];
	}
	lp->dec = calloc((size_t)n, sizeof *lp->dec);
	if (!lp->dec)
		goto nomem;
	for (int i = 0; i < lp->gstart[lp->ngroups]; i++) {
		int c = lp->order[i];
		lp->dec[i] = (wzc_dec_entry){ lp->lev[c], lp->sigma[c], lp->nlev[c], c, c >= R };
	}
	for (int p = 0; p < 2; p++) {
		int m = parts[p]->n;
		lp->bq[p] = malloc(sizeof(int16_t) * (size_t)(m ? m * m : 1));
		lp->delta[p] = calloc((size_t)(m ? m : 1), sizeof(float));
		if (!lp->bq[p] || !lp->delta[p])
			goto nomem;
		for (size_t i = 0; i < (size_t)m * m; i++)
			lp->bq[p][i] = wzc_basis_q(parts[p]->basis[i]);
		/* the anchor in the transformed domain, relative to the mean */
		for (int k = 0; k < m; k++) {
			double acc = 0;
			for (int i = 0; i < m; i++)
				acc += (double)parts[p]->basis[(size_t)k * m + i] *
				       (parts[p]->anchor[i] - parts[p]->mean[i]);
			lp->delta[p][k] = (float)acc;
		}
	}
	e = plan_fast(pr, l, lp, diag);
	goto done;
nomem:
	e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
done:
	free(v);
	free(part);
	free(jidx);
	free(best);
	wzc_wz_allocator_free(alloc);
	wzc_wz_allocator_free(al.from_floor);
	return e;
}

wz_err wzc_wz_plan_new(const wzc_profile *pr, double rate_bits, size_t record_bytes,
		       wzc_wz_plan **out, wz_diag *diag)
{
	(void)rate_bits; /* the record size already says it */
	*out = NULL;
	wzc_wz_plan *plan = calloc(1, sizeof *plan);
	if (!plan)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	plan->profile = pr;
	plan->L = pr->L;
	plan->R = pr->R;
	plan->P = pr->P;
	plan->scale_bytes = pr->P ? 2 : 1;
	plan->record_bytes = record_bytes;
	long bits = (long)record_bytes * 8 - 8 * plan->scale_bytes;
	if (bits < 0) {
		free(plan);
		return wz_diag_set(diag, WZ_ERR_RANGE, "a record of %zu bytes cannot hold the scales",
				   record_bytes);
	}
	plan->layers = calloc((size_t)pr->L, sizeof *plan->layers);
	plan->ready = calloc((size_t)pr->L, sizeof *plan->ready);
	plan->lock = malloc(sizeof *plan->lock * (size_t)pr->L);
	if (!plan->layers || !plan->ready || !plan->lock) {
		free(plan->layers);
		free(plan->ready);
		free(plan->lock);
		free(plan);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int l = 0; l < pr->L; l++)
		pthread_mutex_init(&plan->lock[l], NULL);
	for (int c = 0; c < 256; c++)
		plan->scale_mult[0][c] = wzc_scale_mult((uint8_t)c);
	memcpy(plan->scale_mult[1], plan->scale_mult[0], sizeof plan->scale_mult[0]);
	/* Version 7: the plan of the tokens at position 0, over the profile
	 * with their own position part (docs/wz-format.md, "Predicted position
	 * part"). */
	int predicts = 0;
	for (int l = 0; pr->predicts && l < pr->L; l++)
		predicts |= pr->predicts[l];
	if (predicts) {
		wzc_profile *ap = malloc(sizeof *ap);
		wz_err e = ap ? WZ_OK : wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		if (ap) {
			*ap = *pr;
			ap->rope = pr->rope_plain;
			ap->predicts = NULL;
			ap->rope_plain = NULL;
			ap->pred_map = NULL;
			ap->backing = NULL;
			ap->cache = wzc_profile_cache_new(pr->L);
			plan->anchored_profile = ap;
			if (!ap->cache)
				e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		}
		if (!e)
			e = wzc_wz_plan_new(ap, rate_bits, record_bytes, &plan->anchored, diag);
		if (e) {
			wzc_wz_plan_free(plan);
			return e;
		}
	}
	/* the layers are planned when first used (wzc_wz_plan_layer) */
	*out = plan;
	return WZ_OK;
}

wz_err wzc_wz_plan_layer_get(const wzc_wz_plan *cplan, int l, const layer_plan **out,
			     wz_diag *diag)
{
	wzc_wz_plan *plan = (wzc_wz_plan *)cplan; /* planning fills a cache, not the plan's meaning */
	*out = NULL;
	if (l < 0 || l >= plan->L)
		return wz_diag_set(diag, WZ_ERR_RANGE, "no layer %d of %d", l, plan->L);
	/* a profile read in part: a layer not read is never planned */
	wz_err need = wzc_profile_need_layer(plan->profile, l, diag);
	if (need)
		return need;
	layer_plan *lp = &plan->layers[l];
	if (__atomic_load_n(&plan->ready[l], __ATOMIC_ACQUIRE)) {
		*out = lp;
		return WZ_OK;
	}
	wz_err e = WZ_OK;
	pthread_mutex_lock(&plan->lock[l]);
	if (!plan->ready[l]) {
		long bits = (long)plan->record_bytes * 8 - 8 * plan->scale_bytes;
		e = plan_layer(plan->profile, l, (int)bits, lp, diag);
		if (e) { /* out of memory: leave it unplanned for a later try */
			free_layer(lp);
			memset(lp, 0, sizeof *lp);
		} else {
			__atomic_store_n(&plan->ready[l], 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&plan->lock[l]);
	if (!e)
		*out = lp;
	return e;
}

const layer_plan *wzc_wz_plan_layer(const wzc_wz_plan *plan, int l)
{
	const layer_plan *lp;
	wz_diag d;
	return wzc_wz_plan_layer_get(plan, l, &lp, &d) ? NULL : lp;
}
