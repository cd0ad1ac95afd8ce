/* Greedy reverse water-filling for the wz planner.  The scan in
 * wzc_wz_allocate_ref looks at every component for every level step it
 * hands out: at 512 + 64 values and ~10,000 steps it was 77% of building a
 * plan (perf on wzc_wz_plan_new), and a 61-layer profile took seconds to
 * open.  The allocator below makes exactly the same choices, faster:
 *
 * - Each component's next step waits in a binary max-heap, O(steps x log
 *   n).  The heap orders by gain and then by lowest index (the scan's
 *   strict `>` keeps the first maximum).  A step whose cost no longer fits
 *   is dropped for good: the bits used only grow, and a component's next
 *   cost does not change until it is picked.
 * - The planner runs it for up to a dozen budgets a few bits apart (the
 *   grouping's overhead is corrected in rounds).  Until its first pick
 *   that does not fit, every run makes the same picks, whatever its
 *   budget: one chain of states.  The allocator keeps states along that
 *   chain (a checkpoint every CHECKPOINT_BITS bits, and the furthest state
 *   reached), and a run starts from the last one whose bits used its
 *   budget holds: each pick up to there fitted, as the bits used after it
 *   are at most the checkpoint's. */
#include "codec/wz/wz_allocate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void step_tables(const double (*d)[WZC_NSET], double cost[WZC_NSET],
			double gain[2][WZC_NSET])
{
	for (int j = 0; j + 1 < WZC_NSET; j++) {
		cost[j] = log2((double)wzc_level_count(j + 1) / wzc_level_count(j));
		for (int p = 0; p < 2; p++)
			gain[p][j] = (d[p][j] - d[p][j + 1]) / cost[j];
	}
}

/* The bits of starting at count indices floor[] (NULL: 0), summed in
 * component order, as both versions do. */
static double floor_bits(int n, const double cost[WZC_NSET], const int *floor)
{
	double used = 0;
	for (int k = 0; floor && k < n; k++)
		for (int j = 0; j < floor[k]; j++)
			used += cost[j];
	return used;
}

void wzc_wz_allocate_ref_floor(int n, const double *v, const double (*d)[WZC_NSET],
			       const int *part, const int *floor, double budget, int *jidx)
{
	double cost[WZC_NSET], gain[2][WZC_NSET];
	step_tables(d, cost, gain);
	double used = floor_bits(n, cost, floor);
	for (int k = 0; k < n; k++)
		jidx[k] = floor ? floor[k] : 0;
	for (;;) {
		int best = -1;
		double bestg = 0;
		for (int k = 0; k < n; k++) {
			int j = jidx[k];
			if (j + 1 >= WZC_NSET || used + cost[j] > budget)
				continue;
			double g = v[k] * gain[part[k]][j];
			if (g > bestg) {
				bestg = g;
				best = k;
			}
		}
		if (best < 0)
			break;
		used += cost[jidx[best]];
		jidx[best]++;
	}
}

void wzc_wz_allocate_ref(int n, const double *v, const double (*d)[WZC_NSET], const int *part,
			 double budget, int *jidx)
{
	wzc_wz_allocate_ref_floor(n, v, d, part, NULL, budget, jidx);
}

double wzc_wz_floor(int n, const double *var, const double d[WZC_NSET], double cap,
		    double max_bits, int *jidx)
{
	double cost[WZC_NSET], gain[WZC_NSET], used = 0, dist = 0;
	for (int j = 0; j + 1 < WZC_NSET; j++) {
		cost[j] = log2((double)wzc_level_count(j + 1) / wzc_level_count(j));
		gain[j] = (d[j] - d[j + 1]) / cost[j];
	}
	for (int k = 0; k < n; k++) {
		jidx[k] = 0;
		dist += var[k] * d[0];
	}
	while (dist > cap) {
		int best = -1;
		double bestg = 0;
		for (int k = 0; k < n; k++) {
			int j = jidx[k];
			if (j + 1 >= WZC_NSET || used + cost[j] > max_bits)
				continue;
			double g = var[k] * gain[j];
			if (g > bestg) {
				bestg = g;
				best = k;
			}
		}
		if (best < 0)
			break;
		int j = jidx[best]++;
		used += cost[j];
		dist -= var[best] * (d[j] - d[j + 1]);
	}
	return used;
}

/* entry a before entry b: larger gain, then lower index */
static int before(const double *g, const int *k, int a, int b)
{
	return g[a] > g[b] || (g[a] == g[b] && k[a] < k[b]);
}

static void sift_down(double *g, int *k, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && before(g, k, l, m))
			m = l;
		if (r < n && before(g, k, r, m))
			m = r;
		if (m == i)
			return;
		double tg = g[i];
		int tk = k[i];
		g[i] = g[m];
		k[i] = k[m];
		g[m] = tg;
		k[m] = tk;
		i = m;
	}
}

/* Bits between checkpoints: a 650-byte record plans in about 40. */
#define CHECKPOINT_BITS 128

typedef struct {
	double used, *g;
	int *k, *j, hn;
} checkpoint;

struct wzc_wz_allocator {
	int n;
	const double *v;
	const int *part;
	double cost[WZC_NSET], gain[2][WZC_NSET];
	double *hg; /* the heap: gain and component of each entry */
	int *hk, hn;
	int *jidx;
	double used;
	int *floor;         /* [n] the count indices a run starts from, or NULL */
	double floor_used;  /* their bits */
	checkpoint *cp; /* states on the common chain, by bits used */
	int ncp, capcp;
};

wzc_wz_allocator *wzc_wz_allocator_new(int n, const double *v, const double (*d)[WZC_NSET],
				       const int *part)
{
	return wzc_wz_allocator_new_floor(n, v, d, part, NULL);
}

wzc_wz_allocator *wzc_wz_allocator_new_floor(int n, const double *v, const double (*d)[WZC_NSET],
					     const int *part, const int *floor)
{
	wzc_wz_allocator *a = calloc(1, sizeof *a);
	size_t m = (size_t)(n > 0 ? n : 1);
	if (!a)
		return NULL;
	a->n = n;
	a->v = v;
	a->part = part;
	step_tables(d, a->cost, a->gain);
	a->hg = malloc(sizeof *a->hg * m);
	a->hk = malloc(sizeof *a->hk * m);
	a->jidx = malloc(sizeof *a->jidx * m);
	if (floor) {
		a->floor = malloc(sizeof *a->floor * m);
		if (a->floor)
			memcpy(a->floor, floor, sizeof *floor * (size_t)n);
	}
	if (!a->hg || !a->hk || !a->jidx || (floor && !a->floor)) {
		wzc_wz_allocator_free(a);
		return NULL;
	}
	a->floor_used = floor_bits(n, a->cost, a->floor);
	return a;
}

void wzc_wz_allocator_free(wzc_wz_allocator *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->ncp; i++) {
		free(a->cp[i].g);
		free(a->cp[i].k);
		free(a->cp[i].j);
	}
	free(a->cp);
	free(a->hg);
	free(a->hk);
	free(a->jidx);
	free(a->floor);
	free(a);
}

static void start(wzc_wz_allocator *a)
{
	a->hn = 0;
	a->used = a->floor_used;
	for (int k = 0; k < a->n; k++) {
		int j = a->floor ? a->floor[k] : 0;
		a->jidx[k] = j;
		double g = j + 1 < WZC_NSET ? a->v[k] * a->gain[a->part[k]][j] : 0;
		if (g > 0) { /* also false for NaN, as in the scan */
			a->hg[a->hn] = g;
			a->hk[a->hn++] = k;
		}
	}
	for (int i = a->hn / 2 - 1; i >= 0; i--)
		sift_down(a->hg, a->hk, a->hn, i);
}

/* Keeps the current state, which is on the chain and further along it
 * than the last checkpoint; without memory it keeps nothing (runs then
 * start further back, with the same result). */
static void save(wzc_wz_allocator *a)
{
	if (a->ncp == a->capcp) {
		int cap = a->capcp ? 2 * a->capcp : 16;
		checkpoint *cp = realloc(a->cp, sizeof *cp * (size_t)cap);
		if (!cp)
			return;
		a->cp = cp;
		a->capcp = cap;
	}
	checkpoint *c = &a->cp[a->ncp];
	size_t n = (size_t)(a->n > 0 ? a->n : 1), h = (size_t)(a->hn > 0 ? a->hn : 1);
	c->g = malloc(sizeof *c->g * h);
	c->k = malloc(sizeof *c->k * h);
	c->j = malloc(sizeof *c->j * n);
	if (!c->g || !c->k || !c->j) {
		free(c->g);
		free(c->k);
		free(c->j);
		return;
	}
	memcpy(c->g, a->hg, sizeof *a->hg * (size_t)a->hn);
	memcpy(c->k, a->hk, sizeof *a->hk * (size_t)a->hn);
	memcpy(c->j, a->jidx, sizeof *a->jidx * (size_t)a->n);
	c->hn = a->hn;
	c->used = a->used;
	a->ncp++;
}

/* Starts from the furthest checkpoint the budget holds; 1 when that is
 * the furthest state known (the run then extends the chain). */
static int resume(wzc_wz_allocator *a, double budget)
{
	int i = a->ncp - 1;
	while (i >= 0 && a->cp[i].used > budget)
		i--;
	if (i < 0) {
		start(a);
		return a->ncp == 0;
	}
	const checkpoint *c = &a->cp[i];
	memcpy(a->hg, c->g, sizeof *a->hg * (size_t)c->hn);
	memcpy(a->hk, c->k, sizeof *a->hk * (size_t)c->hn);
	memcpy(a->jidx, c->j, sizeof *a->jidx * (size_t)a->n);
	a->hn = c->hn;
	a->used = c->used;
	return i == a->ncp - 1;
}

void wzc_wz_allocator_run(wzc_wz_allocator *a, double budget, int *jidx)
{
	/* on the chain and past its last checkpoint: extending it */
	int extending = resume(a, budget);
	double next = a->ncp ? a->cp[a->ncp - 1].used + CHECKPOINT_BITS : 0;
	double *hg = a->hg;
	int *hk = a->hk;
	while (a->hn > 0) {
		int k = hk[0], j = a->jidx[k];
		if (a->used + a->cost[j] > budget) {
			if (extending) { /* the chain ends here for this budget */
				save(a);
				extending = 0;
			}
			/* never fits again */
			a->hn--;
			hg[0] = hg[a->hn];
			hk[0] = hk[a->hn];
			sift_down(hg, hk, a->hn, 0);
			continue;
		}
		if (extending && a->used >= next) {
			save(a);
			next = a->used + CHECKPOINT_BITS;
		}
		a->used += a->cost[j];
		a->jidx[k] = ++j;
		double g = j + 1 < WZC_NSET ? a->v[k] * a->gain[a->part[k]][j] : 0;
		if (g > 0) {
			hg[0] = g;
		} else {
			a->hn--;
			hg[0] = hg[a->hn];
			hk[0] = hk[a->hn];
		}
		sift_down(hg, hk, a->hn, 0);
	}
	if (extending)
		save(a); /* every pick fitted: the result for any budget >= used */
	memcpy(jidx, a->jidx, sizeof *jidx * (size_t)a->n);
}
