/* Exponential-then-binary search for the smallest feasible fleet (search.h). */
#include "sim/search.h"

#include <string.h>

static wz_err try_size(const wzs_run_config *base, long replicas, int keep, wzs_result *res,
		       int *ok, wzs_search *out,
		       void (*on_run)(void *, long, const wzs_result *, int), void *ud,
		       wz_diag *diag)
{
	wzs_run_config cfg = *base;
	cfg.replicas = replicas;
	cfg.stop_on_refusal = 1;
	wz_err err = wzs_run(&cfg, res, diag);
	if (err) {
		wzs_result_free(res);
		return err;
	}
	out->runs++;
	out->events += res->events;
	out->seconds += res->sim_time_s;
	*ok = wzs_meets_targets(base->params, res);
	if (on_run)
		on_run(ud, replicas, res, *ok);
	if (!keep)
		wzs_result_free(res);
	return WZ_OK;
}

wz_err wzs_size(const wzs_run_config *base, long max_replicas,
		void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
		wzs_search *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	long bad = 0, good = 0;
	wzs_result res;
	int ok = 0;
	wz_err err;
	for (long n = 1; n <= max_replicas; n = n * 2 > max_replicas && n < max_replicas
								? max_replicas : n * 2) {
		if ((err = try_size(base, n, 1, &res, &ok, out, on_run, ud, diag)))
			return err;
		if (ok) {
			good = n;
			out->result = res;
			break;
		}
		wzs_result_free(&res);
		bad = n;
		if (n == max_replicas)
			break;
	}
	if (!good)
		return WZ_OK;
	while (good - bad > 1) {
		long mid = bad + (good - bad) / 2;
		if ((err = try_size(base, mid, 1, &res, &ok, out, on_run, ud, diag)))
			return err;
		if (ok) {
			good = mid;
			wzs_result_free(&out->result);
			out->result = res;
		} else {
			bad = mid;
			wzs_result_free(&res);
		}
	}
	out->replicas = good;
	return WZ_OK;
}
