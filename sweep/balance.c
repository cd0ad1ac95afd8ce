/* Sharing a sweep's points out by their estimated cost: shards of about
 * equal work for job arrays, and the longest points first for the pool and
 * the MPI ranks (sweep.h). */
#include "sweep/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_kv.h"
#include "common/wz_str.h"
#include "costmodel/scenario.h"
#include "sim/params.h"

/* The estimate, in whole units so that every machine computes the same
 * plan: a point without simulation costs one unit per format (the cost
 * model alone takes microseconds; the unit is the run's fixed overhead);
 * a simulated point adds, per format, its simulated user-minutes, since
 * the simulator's events grow with users and simulated time (a replayed
 * traffic file: its size in units of 100 bytes, about one request row).
 * Only the ratios matter, and only to scheduling: no figure depends on
 * them. */
long long wzsw_point_cost(const wzsw_point *p)
{
	wz_kv *kv;
	wz_diag diag;
	if (wz_kv_parse(p->scenario, "sweep point", &kv, &diag))
		return 1;
	wzs_params params;
	wzs_params_default(&params);
	long long users = 0;
	int nformats = 1;
	if (!wzs_params_from_kv(kv, &params, &diag)) {
		wzm_scenario *scn = NULL;
		/* wzm_scenario_from_kv takes kv over. */
		if (!wzm_scenario_from_kv(kv, &scn, &diag)) {
			users = scn->users > 0 ? scn->users : 0;
			nformats = scn->nformats > 0 ? scn->nformats : 1;
		}
		kv = NULL;
		wzm_scenario_free(scn);
	}
	wz_kv_free(kv);
	long long work = 0;
	if (p->traffic) {
		FILE *f = fopen(p->traffic, "rb");
		if (f) {
			fseek(f, 0, SEEK_END);
			long size = ftell(f);
			fclose(f);
			work = size > 0 ? size / 100 : 0;
		}
	} else if (p->simulate) {
		double minutes = (params.duration_s + params.warmup_s) / 60.0;
		work = (long long)((double)users * (minutes > 0 ? minutes : 0) + 0.5);
	}
	return (long long)nformats * (1 + work);
}

typedef struct {
	long index;
	long long cost;
} costed;

static int by_cost_desc(const void *a, const void *b)
{
	const costed *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

static wz_err cost_all(const wzsw_sweep *s, const long *indices, long n, costed **out,
		       wz_diag *diag)
{
	costed *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
	if (!c)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	for (long i = 0; i < n; i++) {
		wzsw_point p;
		wz_err err = wzsw_point_build(s, indices ? indices[i] : i, &p, diag);
		if (err) {
			free(c);
			return err;
		}
		c[i].index = p.index;
		c[i].cost = wzsw_point_cost(&p);
		wzsw_point_clear(&p);
	}
	qsort(c, (size_t)n, sizeof *c, by_cost_desc);
	*out = c;
	return WZ_OK;
}

wz_err wzsw_shard_plan(const wzsw_sweep *s, long nshards, long *shard_of, long long *load,
		       wz_diag *diag)
{
	costed *c;
	wz_err err = cost_all(s, NULL, s->npoints, &c, diag);
	if (err)
		return err;
	long long *sum = calloc((size_t)nshards, sizeof *sum);
	if (!sum) {
		free(c);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	/* Longest point first, each to the least loaded shard (the lowest
	 * numbered of equals): within 4/3 of the best split (Graham's LPT). */
	for (long i = 0; i < s->npoints; i++) {
		long best = 0;
		for (long k = 1; k < nshards; k++)
			if (sum[k] < sum[best])
				best = k;
		sum[best] += c[i].cost;
		shard_of[c[i].index] = best + 1;
	}
	if (load)
		memcpy(load, sum, (size_t)nshards * sizeof *sum);
	free(sum);
	free(c);
	return WZ_OK;
}

wz_err wzsw_order_by_cost(const wzsw_sweep *s, long *indices, long n, wz_diag *diag)
{
	costed *c;
	wz_err err = cost_all(s, indices, n, &c, diag);
	if (err)
		return err;
	for (long i = 0; i < n; i++)
		indices[i] = c[i].index;
	free(c);
	return WZ_OK;
}
