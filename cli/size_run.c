/* The fleet-size search over a scenario's cache formats, shared by `size`
 * and `propose` (sim_cli.h). */
#include "cli/sim_cli.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	pthread_mutex_lock(&progress_lock);
	fprintf(stderr,
		"wzplan %s: %s: %ld replicas: p99 TTFT %.3f s, p99 TPOT %.4f s, %llu refused, "
		"%llu events%s -> %s\n",
		n->cmd, n->format, replicas, r->ttft.p99, r->tpot.p99, r->refused, r->events,
		r->stopped_early ? " (stopped at the first refusal)" : "", ok ? "meets" : "fails");
	pthread_mutex_unlock(&progress_lock);
}

/* One format's search, run on a thread of its own.  Every search reads the
 * shared set-up and writes only its own row, so the rows do not depend on
 * how the searches were spread over threads. */
typedef struct {
	const wz_sim_setup *s;
	wz_size_row *row;
	long max_replicas;
	int threads;
	run_note note;
	wz_err err;
	wz_diag diag;
} format_job;

static void *size_one(void *arg)
{
	format_job *j = arg;
	wzs_run_config cfg;
	wz_sim_config(j->s, &j->row->model, &cfg);
	wz_diag_clear(&j->diag);
	j->err = wzs_size(&cfg, j->max_replicas, j->threads, on_run, &j->note, &j->row->search,
			  &j->diag);
	return NULL;
}

/* Runs the formats' searches: all at once when there are threads enough
 * (each with its share for running counts ahead), else `threads` at a time
 * in the scenario's order. */
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
		return wz_cli_fail(cmd, &diag);
	}
	if (wzm_find_rates(s->cat, s->scn->price_set, s->gpu, &rates, &diag))
		return wz_cli_fail(cmd, &diag);
	format_job *jobs = calloc((size_t)(n > 0 ? n : 1), sizeof *jobs);
	if (!jobs) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail(cmd, &diag);
	}
	for (int i = 0; i < n; i++) {
		wz_size_row *r = &rows[i];
		if ((rc = wz_sim_model(cmd, s, s->scn->formats[i], &r->model, &r->size))) {
			free(jobs);
			return rc;
		}
		jobs[i] = (format_job){ .s = s, .row = r, .max_replicas = max_replicas,
					.note = { cmd, r->size.name, quiet } };
	}
	size_all(jobs, n, s->threads > 0 ? s->threads : 1);
	for (int i = 0; i < n; i++) {
		wz_size_row *r = &rows[i];
		if (jobs[i].err) {
			diag = jobs[i].diag;
			free(jobs);
			return wz_cli_fail(cmd, &diag);
		}
		if (!r->search.replicas)
			wz_cli_warn(cmd, "%s: no fleet of up to %ld replicas meets the targets%s",
				    r->size.name, r->search.largest,
				    r->search.largest < max_replicas ? " (one per session)" : "");
		r->fleet.replicas = r->search.replicas;
		r->fleet.gpus = r->search.replicas * wz_sim_gpus_per_replica(s);
		r->fleet.gpus_exact = (double)r->fleet.gpus;
		r->fleet.gpus_up = r->fleet.gpus_nearest = r->fleet.gpus;
		wzm_fleet_price(&r->fleet, &rates);
		if (!strcmp(s->scn->formats[i], s->scn->baseline_format))
			*base = i;
	}
	free(jobs);
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
