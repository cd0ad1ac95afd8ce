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

static void note_failure(wzs_search *out, long replicas, const wzs_result *res)
{
	out->below = replicas;
	out->below_ttft_p99 = res->ttft.p99;
	out->below_tpot_p99 = res->tpot.p99;
	out->below_refused_timeout = res->refused_timeout;
	out->below_refused_too_big = res->refused_too_big;
	out->below_completed = res->completed;
}

wz_err wzs_size(const wzs_run_config *base, long max_replicas,
		void (*on_run)(void *ud, long replicas, const wzs_result *r, int ok), void *ud,
		wzs_search *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	/* Past one replica per session, more replicas cannot help. */
	long sessions = base->users;
	if (base->traffic) {
		sessions = 1;
		for (size_t i = 0; i < base->traffic->n; i++)
			if (base->traffic->requests[i].session + 1 > sessions)
				sessions = (long)(base->traffic->requests[i].session + 1);
	}
	if (max_replicas > sessions)
		max_replicas = sessions > 0 ? sessions : 1;
	out->largest = max_replicas;
	long bad = 0, good = 0;
	wzs_result res;
	int ok = 0;
	wz_err err;
	for (long n = 1;; n = n * 2 < max_replicas ? n * 2 : max_replicas) {
		if ((err = try_size(base, n, 1, &res, &ok, out, on_run, ud, diag)))
			return err;
		if (ok) {
			good = n;
			out->result = res;
			break;
		}
		note_failure(out, n, &res);
		wzs_result_free(&res);
		bad = n;
		if (n >= max_replicas)
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
			note_failure(out, mid, &res);
			wzs_result_free(&res);
		}
	}
	out->replicas = good;
	return WZ_OK;
}
