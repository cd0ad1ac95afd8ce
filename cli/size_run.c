/* The fleet-size search over a scenario's cache formats, shared by `size`
 * and `propose` (sim_cli.h). */
#include "cli/sim_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	const char *cmd, *format;
	int quiet;
} run_note;

static void on_run(void *ud, long replicas, const wzs_result *r, int ok)
{
	const run_note *n = ud;
	if (n->quiet)
		return;
	fprintf(stderr,
		"wzplan %s: %s: %ld replicas: p99 TTFT %.3f s, p99 TPOT %.4f s, %llu refused, "
		"%llu events%s -> %s\n",
		n->cmd, n->format, replicas, r->ttft.p99, r->tpot.p99, r->refused, r->events,
		r->stopped_early ? " (stopped at the first refusal)" : "", ok ? "meets" : "fails");
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
	for (int i = 0; i < n; i++) {
		wz_size_row *r = &rows[i];
		if ((rc = wz_sim_model(cmd, s, s->scn->formats[i], &r->model, &r->size)))
			return rc;
		wzs_run_config cfg;
		wz_sim_config(s, &r->model, &cfg);
		run_note note = { cmd, r->size.name, quiet };
		if (wzs_size(&cfg, max_replicas, on_run, &note, &r->search, &diag))
			return wz_cli_fail(cmd, &diag);
		if (!r->search.replicas)
			wz_cli_warn(cmd, "%s: no fleet of up to %ld replicas meets the targets%s",
				    r->size.name, r->search.largest,
				    r->search.largest < max_replicas ? " (one per session)" : "");
		r->fleet.replicas = r->search.replicas;
		r->fleet.gpus = r->search.replicas * s->scn->mem.gpus_per_replica;
		r->fleet.gpus_exact = (double)r->fleet.gpus;
		r->fleet.gpus_up = r->fleet.gpus_nearest = r->fleet.gpus;
		wzm_fleet_price(&r->fleet, &rates);
		if (!strcmp(s->scn->formats[i], s->scn->baseline_format))
			*base = i;
	}
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
