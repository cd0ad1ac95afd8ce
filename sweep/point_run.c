/* Running one sweep point as an archived propose run, and reading the
 * sweep's results back in point order (point_run.h). */
#include "sweep/point_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/merge.h"
#include "common/wz_io.h"
#include "config.h"
#include "runs/propose.h"
#include "runs/say.h"

/* The sweep's id, the point's id and its parameters go in as inputs, not
 * figures: the figures stay those of a propose run, so that `verify RUN`
 * compares like with like. */
static void tag_run(wza_run *run, const wz_sweep_ctx *c, const wzsw_point *p)
{
	const wzsw_sweep *s = c->sweep;
	wza_run_input(run, WZA_SWEEP_KIND, WZA_SWEEP_NAME, c->sweep_abs, NULL,
		      (long long)strlen(s->name), s->name);
	wza_run_input(run, WZA_SWEEP_KIND, WZA_SWEEP_POINT, s->name, NULL, (long long)strlen(p->id),
		      p->id);
	wz_buf b = { 0 };
	wz_buf_printf(&b, "index = %ld\n", p->index);
	for (int i = 0; i < p->n; i++)
		wz_buf_printf(&b, "%s = %s\n", p->keys[i], p->values[i]);
	if (b.failed)
		run->failed = 1;
	else
		wza_run_input(run, WZA_SWEEP_KIND, WZA_SWEEP_PARAMS, s->name, NULL, (long long)b.len,
			      wz_buf_str(&b));
	wz_buf_free(&b);
}

int wz_sweep_run_point(void *ud, long index)
{
	const wz_sweep_ctx *c = ud;
	const wzsw_sweep *s = c->sweep;
	wz_diag diag;
	wz_diag_clear(&diag);
	wzsw_point p;
	if (wzsw_point_build(s, index, &p, &diag))
		return wz_say_fail("sweep", &diag);
	/* Messages from the computation name the point. */
	char cmd[64], path[4096], maxr[32];
	snprintf(cmd, sizeof cmd, "sweep: point %ld (%s)", index, p.id);
	snprintf(path, sizeof path, "%s/%s.scenario", c->workdir, p.id);
	snprintf(maxr, sizeof maxr, "%ld", p.max_replicas);
	if (wz_write_file_atomic(path, p.scenario, strlen(p.scenario), &diag)) {
		wzsw_point_clear(&p);
		return wz_say_fail("sweep", &diag);
	}
	/* The run is a propose run with these arguments, so that `verify RUN`
	 * recomputes it like any other. */
	char *argv[16];
	int argc = 0;
	argv[argc++] = "propose";
	argv[argc++] = "--scenario", argv[argc++] = path;
	if (s->catalog_dir)
		argv[argc++] = "--catalog", argv[argc++] = s->catalog_dir;
	if (p.simulate) {
		argv[argc++] = "--simulate";
		argv[argc++] = "--max-replicas", argv[argc++] = maxr;
	}
	if (p.traffic)
		argv[argc++] = "--traffic", argv[argc++] = p.traffic;
	argv[argc++] = "--quiet";
	argv[argc] = NULL;
	/* ...and this request, the one those arguments parse into. */
	wz_propose_opts o;
	memset(&o, 0, sizeof o);
	o.out_dir = "wzplan-out";
	o.max_replicas = p.simulate ? p.max_replicas : 100000;
	o.scn.scenario_path = path;
	o.scn.catalog_dir = s->catalog_dir;
	o.simulate = p.simulate || p.traffic;
	o.sim.traffic = p.traffic;
	o.quiet = 1;
	int rc;
	wza_run *run = wza_run_new("propose", argc - 1, argv + 1, PACKAGE_VERSION);
	if (!run) {
		wzsw_point_clear(&p);
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_say_fail("sweep", &diag);
	}
	wzm_scenario *scn = NULL;
	wzm_catalog *cat = NULL;
	wzm_compare cmp;
	rc = wz_propose_compute(cmd, &o, run, &scn, &cat, &cmp);
	if (!rc) {
		tag_run(run, c, &p);
		wza_run_finish(run, "ok");
		wza_archive *a;
		a = NULL;
		if (wza_open(c->archive, 1, &a, &diag) || wza_store_point(a, run, NULL, &diag))
			rc = wz_say_fail(cmd, &diag);
		wza_close(a);
		wzm_compare_free(&cmp);
		wzm_scenario_free(scn);
		wzm_catalog_free(cat);
	}
	remove(path);
	wza_run_free(run);
	wzsw_point_clear(&p);
	return rc;
}

int wz_sweep_results_csv(const char *cmd, const wzsw_sweep *s, wza_archive *a, wz_buf *out,
			 long *missing)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	*missing = 0;
	wza_point_run *runs;
	int nruns;
	if (wza_point_runs(a, NULL, &runs, &nruns, &diag))
		return wz_say_fail(cmd, &diag);
	int rc = 0;
	wz_buf_puts(out, "point,point_id,table,row,column,value,text\n");
	for (long i = 0; i < s->npoints && !rc; i++) {
		wzsw_point p;
		if (wzsw_point_build(s, i, &p, &diag)) {
			rc = wz_say_fail(cmd, &diag);
			break;
		}
		long long id = 0;
		for (int k = 0; k < nruns && !id; k++)
			if (!strcmp(runs[k].point, p.id))
				id = runs[k].run;
		wza_run *run = NULL;
		if (!id)
			(*missing)++;
		else if (wza_load(a, id, &run, &diag))
			rc = wz_say_fail(cmd, &diag);
		for (int f = 0; run && f < run->nfigures; f++) {
			const wza_figure *fg = &run->figures[f];
			wz_buf_printf(out, "%ld,%s,", i, p.id);
			wz_buf_csv_field(out, fg->table);
			wz_buf_puts(out, ",");
			wz_buf_csv_field(out, fg->row);
			wz_buf_puts(out, ",");
			wz_buf_csv_field(out, fg->col);
			wz_buf_puts(out, ",");
			if (!isnan(fg->value))
				wz_buf_printf(out, "%.17g", fg->value);
			wz_buf_puts(out, ",");
			wz_buf_csv_field(out, fg->text);
			wz_buf_puts(out, "\n");
		}
		wza_run_free(run);
		wzsw_point_clear(&p);
	}
	wza_point_runs_free(runs, nruns);
	return rc;
}

static void remove_archive(const char *path)
{
	remove(path);
	for (int i = 0; i < 2; i++) {
		wz_buf side = { 0 };
		wz_buf_printf(&side, "%s%s", path, i ? "-shm" : "-wal");
		if (!side.failed)
			remove(wz_buf_str(&side));
		wz_buf_free(&side);
	}
}

/* An archive of one point run is a few hundred KiB; more than this is not
 * one point's. */
#define MAX_POINT_ARCHIVE (1L << 30)

int wz_sweep_mpi_work(void *ud, long index, wz_buf *blob)
{
	const wz_sweep_ctx *c = ud;
	remove_archive(c->archive);
	int rc = wz_sweep_run_point(ud, index);
	if (!rc) {
		char *bytes;
		size_t len;
		wz_diag diag;
		if (wz_read_file(c->archive, MAX_POINT_ARCHIVE, &bytes, &len, &diag)) {
			rc = wz_say_fail("sweep", &diag);
		} else {
			wz_buf_append(blob, bytes, len);
			free(bytes);
		}
	}
	remove_archive(c->archive);
	return rc;
}

int wz_sweep_mpi_take(void *ud, long index, int status, const void *blob, size_t n)
{
	const wz_sweep_ctx *c = ud;
	if (status)
		return status;
	char path[4200], cmd[64];
	wz_diag diag;
	snprintf(cmd, sizeof cmd, "sweep: point %ld", index);
	snprintf(path, sizeof path, "%s/point-%ld.sqlite", c->workdir, index);
	if (wz_write_file_atomic(path, blob, n, &diag))
		return wz_say_fail(cmd, &diag);
	char *in[1] = { path };
	wza_merge_stats stats;
	int rc = 0;
	if (wza_merge(c->archive, in, 1, WZA_DUP_REFUSE, &stats, &diag))
		rc = wz_say_fail(cmd, &diag);
	remove_archive(path);
	return rc;
}
