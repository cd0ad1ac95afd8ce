/* The fleet-size search over a scenario's cache formats, shared by `size`
 * and `propose`, and a size run computed and recorded (sim_setup.h). */
#include "runs/sim_setup.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/request.h"
#include "runs/say.h"
#include "runs/sim_record.h"

typedef struct {
	const char *cmd, *format;
	int quiet;
} run_note;

/* Progress lines from searches on different threads stay whole. */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_run(void *ud, long replicas, const wzs_result *r, int ok)
{
	const run_note *n = ud;
	if (n->quiet)
		return;
	char ttft[32] = "none measured", tpot[32] = "none measured";
	if (r->ttft.n)
		snprintf(ttft, sizeof ttft, "%.3f s", r->ttft.p99);
	if (r->tpot.n)
		snprintf(tpot, sizeof tpot, "%.4f s", r->tpot.p99);
	pthread_mutex_lock(&progress_lock);
	wz_say(WZ_SAY_ERR,
		"wzplan %s: %s: %ld replicas: p99 TTFT %s, p99 TPOT %s, %llu refused, "
		"%llu events%s -> %s\n",
		n->cmd, n->format, replicas, ttft, tpot, r->refused, r->events,
		r->stopped_early ? " (stopped at the first refusal)" : "", ok ? "meets" : "fails");
	pthread_mutex_unlock(&progress_lock);
}

/* One format's search with one prefill pool size, run on a thread of its
 * own.  Every search reads its own copy of the set-up and writes only its
 * own row, so the rows do not depend on how the searches were spread over
 * threads. */
typedef struct {
	wz_sim_setup s;     /* the set-up with this job's prefill pool */
	wz_size_row row;
	long max_replicas;
	int threads;
	char label[96];
	run_note note;
	wz_err err;
	wz_diag diag;
} format_job;

static void *size_one(void *arg)
{
	format_job *j = arg;
	wzs_run_config cfg;
	wz_sim_config(&j->s, &j->row.model, &cfg);
	wz_diag_clear(&j->diag);
	j->err = wzs_size(&cfg, j->max_replicas, j->threads, on_run, &j->note, &j->row.search,
			  &j->diag);
	return NULL;
}

/* Runs the searches: all at once when there are threads enough (each with
 * its share for running counts ahead), else `threads` at a time in the
 * scenario's order. */
static void size_all(format_job *jobs, int n, int threads)
{
	int at_once = n < threads ? n : threads;
	int each = threads / (at_once > 0 ? at_once : 1);
	for (int i = 0; i < n; i++)
		jobs[i].threads = each > 0 ? each : 1;
	for (int first = 0; first < n; first += at_once) {
		pthread_t tid[64];
		int started[64] = { 0 }, k = n - first < at_once ? n - first : at_once;
		for (int i = 1; i < k; i++)
			started[i] = pthread_create(&tid[i], NULL, size_one, &jobs[first + i]) == 0;
		size_one(&jobs[first]);
		for (int i = 1; i < k; i++) {
			if (started[i])
				pthread_join(tid[i], NULL);
			else
				size_one(&jobs[first + i]);
		}
	}
}

static long job_gpus(const format_job *j)
{
	return j->row.search.replicas * wz_sim_gpus_per_replica(&j->s);
}

/* Of one format's searches, the fleet of fewest GPUs (the smaller pool on
 * a tie); the first when none met the targets. */
static int best_job(const format_job *jobs, int m)
{
	int best = 0;
	for (int k = 1; k < m; k++) {
		const format_job *a = &jobs[k], *b = &jobs[best];
		if (!a->row.search.replicas)
			continue;
		if (!b->row.search.replicas || job_gpus(a) < job_gpus(b) ||
		    (job_gpus(a) == job_gpus(b) && a->s.params.prefill_gpus < b->s.params.prefill_gpus))
			best = k;
	}
	return best;
}

int wz_size_formats(const char *cmd, const wz_sim_setup *s, long max_replicas, int quiet,
		    wz_size_row **out, int *base)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	int n = s->scn->nformats, rc = 0;
	*base = -1;
	wz_size_row *rows = calloc((size_t)(n > 0 ? n : 1), sizeof *rows);
	*out = rows;
	wzm_rates rates;
	if (!rows) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_say_fail(cmd, &diag);
	}
	if (wzm_find_rates(s->cat, s->scn->price_set, s->gpu, &rates, &diag))
		return wz_say_fail(cmd, &diag);
	if (s->search) {
		if ((rc = wz_size_search(cmd, s, max_replicas, quiet, &rates, rows, base)))
			return rc;
		goto savings;
	}
	long pools[WZS_MAX_POOL_SIZES];
	int m = s->params.disaggregated ? wzs_prefill_pool_sizes(&s->params, pools, &diag) : 1;
	if (m < 0)
		return wz_say_fail(cmd, &diag);
	if (!s->params.disaggregated)
		pools[0] = 0;
	format_job *jobs = calloc((size_t)(n > 0 ? n * m : 1), sizeof *jobs);
	if (!jobs) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_say_fail(cmd, &diag);
	}
	for (int i = 0; i < n; i++)
		for (int k = 0; k < m; k++) {
			format_job *j = &jobs[i * m + k];
			j->s = *s;
			if (s->params.disaggregated)
				j->s.params.prefill_gpus = pools[k];
			j->row.prefill_gpus = pools[k];
			j->max_replicas = max_replicas;
			if ((rc = wz_sim_model(cmd, &j->s, s->scn->formats[i], &j->row.model,
					       &j->row.size))) {
				free(jobs);
				return rc;
			}
			if (m > 1)
				snprintf(j->label, sizeof j->label, "%s, prefill pool %ld",
					 j->row.size.name, pools[k]);
			else
				snprintf(j->label, sizeof j->label, "%s", j->row.size.name);
			j->note = (run_note){ cmd, j->label, quiet };
		}
	size_all(jobs, n * m, s->threads > 0 ? s->threads : 1);
	for (int i = 0; i < n * m; i++)
		if (jobs[i].err) {
			diag = jobs[i].diag;
			for (int k = 0; k < n * m; k++)
				wzs_result_free(&jobs[k].row.search.result);
			free(jobs);
			return wz_say_fail(cmd, &diag);
		}
	for (int i = 0; i < n; i++) {
		wz_size_row *r = &rows[i];
		int best = best_job(&jobs[i * m], m);
		for (int k = 0; k < m; k++)
			if (k != best)
				wzs_result_free(&jobs[i * m + k].row.search.result);
		const format_job *j = &jobs[i * m + best];
		*r = j->row;
		if (!r->search.replicas)
			wz_say_warn(cmd, "%s: no fleet of up to %ld replicas meets the targets%s",
				    r->size.name, r->search.largest,
				    r->search.largest < max_replicas ? " (one per session)" : "");
		r->fleet.replicas = r->search.replicas;
		r->fleet.gpus = r->search.replicas * wz_sim_gpus_per_replica(&j->s);
		r->fleet.gpus_exact = (double)r->fleet.gpus;
		r->fleet.gpus_up = r->fleet.gpus_nearest = r->fleet.gpus;
		wzm_fleet_price(&r->fleet, &rates);
		if (!strcmp(s->scn->formats[i], s->scn->baseline_format))
			*base = i;
	}
	free(jobs);
savings:
	for (int i = 0; i < n; i++)
		if (*base >= 0 && rows[*base].search.replicas && rows[i].search.replicas)
			wzm_fleet_saving(&rows[i].fleet, &rows[*base].fleet);
	return 0;
}

void wz_size_rows_free(wz_size_row *rows, int n)
{
	for (int i = 0; rows && i < n; i++)
		wzs_result_free(&rows[i].search.result);
	free(rows);
}

int wz_size_compute(const char *cmd, const wz_size_opts *o, wza_run *run, wz_sim_setup *setup,
		    wz_size_row **rows, int *base)
{
	*rows = NULL;
	int rc = wz_sim_setup_load(cmd, &o->scn, &o->sim, setup);
	if (rc)
		return rc;
	rc = wz_size_formats(cmd, setup, o->max_replicas, o->quiet, rows, base);
	if (!rc && run) {
		wz_record_inputs(run, setup->scn, setup->cat);
		char *request = wz_request_size_text(o);
		wz_request_record(run, "size", request);
		free(request);
		wz_sim_record_setup(run, setup, o->sim.traffic);
		wz_sim_record_scenario(run, setup);
		wz_size_record(run, setup, *rows, setup->scn->nformats, *base);
		if (run->failed) {
			wz_diag diag;
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_say_fail(cmd, &diag);
		}
	}
	if (rc) {
		wz_size_rows_free(*rows, setup->scn ? setup->scn->nformats : 0);
		*rows = NULL;
		wz_sim_setup_free(setup);
	}
	return rc;
}
