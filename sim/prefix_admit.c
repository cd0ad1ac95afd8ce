/* The shared prefix cache in a run: which requests look their prefix up,
 * what a hit saves, what a computed prefix adds, and the synthetic
 * population's prefix popularity (fleet.h). */
#include <math.h>
#include <stdlib.h>

#include "sim/fleet.h"

int wzs_prefix_path(const wzs_fleet *f, int32_t shared_id, int64_t shared_tokens,
		    wzs_prefix_link *path)
{
	const wzt_traffic *t = f->cfg->traffic;
	const wzt_prefix *x = t ? wzt_traffic_prefix(t, shared_id) : NULL;
	int64_t own = x && x->tokens > shared_tokens ? x->tokens : shared_tokens;
	wzs_prefix_link up[WZS_PREFIX_MAX_DEPTH];
	int n = 0;
	up[n++] = (wzs_prefix_link){ shared_id, own };
	while (x && x->parent >= 0 && n < WZS_PREFIX_MAX_DEPTH &&
	       (x = wzt_traffic_prefix(t, x->parent)))
		up[n++] = (wzs_prefix_link){ x->id, x->tokens };
	for (int k = 0; k < n; k++)
		path[k] = up[n - 1 - k];
	return n;
}

wzs_prefix_tier wzs_prefix_admit(wzs_fleet *f, wzs_rep *r, wzs_req *q, int64_t *tokens,
				 int64_t *gpu_tokens)
{
	*tokens = *gpu_tokens = 0;
	q->prefix_missed = 0;
	/* At least the last token is computed: it gives the first output. */
	int64_t want = q->shared_tokens;
	if (want > q->prefix + q->prompt - 1)
		want = q->prefix + q->prompt - 1;
	if (!r->prefix || want <= 0)
		return WZS_PREFIX_MISS;
	wzs_prefix_link path[WZS_PREFIX_MAX_DEPTH];
	int n = wzs_prefix_path(f, q->shared_id, q->shared_tokens, path);
	int64_t per[WZS_PREFIX_TIERS];
	wzs_prefix_tier tier = wzs_prefix_cache_lookup_path(r->prefix, path, n, want, per);
	*tokens = per[0] + per[1] + per[2];
	*gpu_tokens = per[WZS_PREFIX_HBM];
	if (q->counted) {
		f->res->prefix_lookups++;
		f->res->prefix_tokens_wanted += (double)want;
		for (int t = 0; t < WZS_PREFIX_TIERS; t++)
			f->res->prefix_hit_tokens[t] += (double)per[t];
		if (tier != WZS_PREFIX_MISS) {
			f->res->prefix_hits[tier]++;
			f->res->prefix_tokens_saved += (double)*tokens;
		}
	}
	/* A partial hit computes the rest, which then goes into the cache. */
	q->prefix_missed = *tokens < want;
	return tier;
}

void wzs_prefix_computed(wzs_fleet *f, wzs_rep *r, wzs_req *q)
{
	if (!q->prefix_missed || !r->prefix)
		return;
	q->prefix_missed = 0;
	int64_t tokens = q->shared_tokens;
	if (tokens > q->prefix + q->prompt - 1)
		tokens = q->prefix + q->prompt - 1;
	wzs_prefix_link path[WZS_PREFIX_MAX_DEPTH];
	int n = wzs_prefix_path(f, q->shared_id, q->shared_tokens, path);
	if (wzs_prefix_cache_insert_path(r->prefix, path, n, tokens)) {
		f->err = wz_diag_set(f->diag, WZ_ERR_NOMEM, "out of memory (prefix cache)");
		f->stop = 1;
	}
}

wz_err wzs_prefix_popularity(wzs_fleet *f)
{
	long n = f->p->prefixes;
	if (n <= 0 || f->cfg->traffic)
		return WZ_OK;
	f->prefix_cdf = malloc((size_t)n * sizeof *f->prefix_cdf);
	if (!f->prefix_cdf)
		return wz_diag_set(f->diag, WZ_ERR_NOMEM, "out of memory (prefix popularity)");
	double sum = 0;
	for (long i = 0; i < n; i++) {
		sum += pow((double)(i + 1), -f->p->prefix_zipf);
		f->prefix_cdf[i] = sum;
	}
	for (long i = 0; i < n; i++)
		f->prefix_cdf[i] /= sum;
	f->prefix_cdf[n - 1] = 1;
	return WZ_OK;
}

int32_t wzs_prefix_draw(const wzs_fleet *f, wzs_rng *rng)
{
	double u = wzs_rng_uniform(rng);
	long lo = 0, hi = f->p->prefixes - 1;
	while (lo < hi) {
		long mid = lo + (hi - lo) / 2;
		if (f->prefix_cdf[mid] >= u)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (int32_t)lo;
}
