/* verify as a job (verify.h): the inputs a run recorded staged in a scratch
 * folder (today's files, or the recorded texts), the run recomputed through
 * its job, and every figure, simulation result, series point and codec
 * measurement compared with the stored one. */
#include "runs/verify.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "config.h"
#include "data/embedded.h"
#include "runs/codec_record.h"
#include "runs/publish.h"
#include "runs/request.h"
#include "runs/say.h"
#include "runs/schema.h"

/* Why an input's recorded path was not read: "is gone", or that it lies
 * outside the folders where recorded paths are read (wz_recorded_roots). */
static const char *not_read(const char *origin)
{
	return wz_recorded_path_check(origin, NULL) ? "is outside the archive's folder and the "
						      "current folder, so not read"
						    : "is gone";
}

/* The text of an input as it is now: the file at its recorded path, or the
 * embedded file this program carries.  NULL when it cannot be read, or when
 * the path lies outside the folders recorded paths are read in. */
static char *current_text(const wza_input *in, size_t *len)
{
	*len = 0;
	if (!strncmp(in->origin, "embedded:", 9)) {
		char name[160];
		if (!strcmp(in->kind, WZ_IN_SCENARIO))
			snprintf(name, sizeof name, "scenarios/%s.scenario", in->origin + 9);
		else
			snprintf(name, sizeof name, "%s", in->origin + 9);
		const char *text = wz_embedded_file(name, len);
		return text ? strdup(text) : NULL;
	}
	char *text = NULL;
	if (wz_recorded_path_check(in->origin, NULL) ||
	    wz_read_file(in->origin, 16 << 20, &text, len, NULL))
		return NULL;
	return text;
}

/* A traffic file can be far larger than the texts kept in the archive: it
 * is hashed where it lies and read from there, unless its recorded text is
 * to be used (--stored, or the file is gone).  *path gets the file to
 * replay; the caller frees it. */
static int stage_traffic(const wza_input *in, int stored, const char *dir, wz_buf *changes,
			 int *nchanged, char **path, wz_diag *diag)
{
	char hex[17];
	uint64_t size = 0;
	int gone = wz_recorded_path_check(in->origin, NULL) ||
		   wz_hash_file(in->origin, hex, &size, NULL) != WZ_OK;
	if (gone) {
		(*nchanged)++;
		wz_buf_printf(changes, "  %s %s: %s %s%s\n", in->kind, in->name, in->origin,
			      not_read(in->origin), in->content ? "; using the recorded text" : "");
	} else if (!in->hash || strcmp(hex, in->hash)) {
		(*nchanged)++;
		wz_buf_printf(changes, "  %s %s: %s changed (recorded XXH3 %s, %lld bytes; now %s, "
				       "%llu bytes)\n",
			      in->kind, in->name, in->origin, in->hash ? in->hash : "none", in->size,
			      hex, (unsigned long long)size);
	}
	if ((stored || gone) && in->content) {
		*path = wz_path_join(dir, "traffic.csv");
		if (!*path)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		return wz_staging_file(dir, "traffic.csv", in->content, diag);
	}
	if (gone)
		return wz_diag_set(diag, WZ_ERR_MISSING,
				   "input %s (%s) was not recorded and cannot be read", in->name,
				   in->origin);
	*path = strdup(in->origin);
	return *path ? WZ_OK : wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
}

static const char *staged_name(const wza_input *in)
{
	static const char *const catalogs[] = { "models.csv", "gpus.csv", "prices.csv" };
	if (!strcmp(in->kind, WZ_IN_SCENARIO))
		return "run.scenario";
	for (size_t i = 0; i < sizeof catalogs / sizeof catalogs[0]; i++)
		if (!strcmp(in->name, catalogs[i]))
			return catalogs[i];
	return NULL;
}

/* Writes the inputs to use into dir and notes those that changed. */
static int stage_inputs(const wza_run *run, int stored, const char *dir, wz_buf *changes,
			int *nchanged, char **traffic, wz_diag *diag)
{
	*nchanged = 0;
	for (int i = 0; i < run->ninputs; i++) {
		const wza_input *in = &run->inputs[i];
		if (!strcmp(in->kind, WZ_IN_TRACE) && !strcmp(in->name, "traffic")) {
			wz_err err = stage_traffic(in, stored, dir, changes, nchanged, traffic, diag);
			if (err)
				return err;
			continue;
		}
		if (strcmp(in->kind, WZ_IN_SCENARIO) && strcmp(in->kind, WZ_IN_CATALOG))
			continue;
		/* An archived name is data, never a file name: staged files get
		 * the names wzplan gives them. */
		const char *file = staged_name(in);
		if (!file)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "run %lld: input %s '%.80s' is not one that wzplan records "
					   "(models.csv, gpus.csv, prices.csv)",
					   run->id, in->kind, in->name);
		size_t len;
		char *now = current_text(in, &len);
		char hex[17] = "";
		if (now)
			snprintf(hex, sizeof hex, "%016" PRIx64, wz_hash_bytes(now, len));
		if (!now) {
			(*nchanged)++;
			wz_buf_printf(changes, "  %s %s: %s %s%s\n", in->kind, in->name, in->origin,
				      not_read(in->origin), in->content ? "; using the recorded text" : "");
		} else if (!in->hash || strcmp(hex, in->hash)) {
			(*nchanged)++;
			wz_buf_printf(changes, "  %s %s: %s changed (recorded XXH3 %s, %lld bytes; "
					       "now %s, %zu bytes)\n",
				      in->kind, in->name, in->origin, in->hash ? in->hash : "none",
				      in->size, hex, len);
		}
		const char *use = stored || !now ? in->content : now;
		if (!use) {
			free(now);
			return wz_diag_set(diag, WZ_ERR_MISSING,
					   "run %lld: input %s (%s) was not recorded and cannot be read",
					   run->id, in->name, in->origin);
		}
		wz_err err = wz_staging_file(dir, file, use, diag);
		free(now);
		if (err)
			return err;
	}
	return WZ_OK;
}

/* Simulation results and series that differ between two runs, counted
 * and listed like figures. */
static int series_diff(const wza_run *a, const wza_run *b, wz_buf *out)
{
	int n = 0;
	if (a->nsim != b->nsim || a->npoints != b->npoints) {
		wz_buf_printf(out, "  simulation: archived %d results and %d series points, "
				   "recomputed %d and %d\n",
			      a->nsim, a->npoints, b->nsim, b->npoints);
		return 1;
	}
	for (int i = 0; i < a->nsim; i++) {
		const wza_sim *x = &a->sim[i], *y = &b->sim[i];
		if (strcmp(x->format, y->format) || strcmp(x->metric, y->metric) ||
		    (x->value != y->value && !(isnan(x->value) && isnan(y->value)))) {
			n++;
			wz_buf_printf(out, "  simulation / %s / %s: archived %.10g, recomputed %s %.10g\n",
				      x->format, x->metric, x->value, y->metric, y->value);
		}
	}
	for (int i = 0; i < a->npoints; i++) {
		const wza_point *x = &a->points[i], *y = &b->points[i];
		if (strcmp(x->format, y->format) || strcmp(x->series, y->series) || x->x != y->x ||
		    x->y != y->y) {
			n++;
			wz_buf_printf(out, "  series %s / %s point %d: archived (%.10g, %.10g), "
					   "recomputed (%.10g, %.10g)\n",
				      x->series, x->format, i + 1, x->x, x->y, y->x, y->y);
		}
	}
	return n;
}

/* The recorded path of a trace or profile a measurement names. */
static const char *recorded_path(const wza_run *run, const char *name)
{
	for (int k = 0; k < run->ninputs; k++) {
		const wza_input *in = &run->inputs[k];
		if ((!strcmp(in->kind, WZ_IN_TRACE) || !strcmp(in->kind, WZ_IN_PROFILE)) &&
		    !strcmp(in->name, name))
			return in->origin;
	}
	return name;
}

/* A codec run measured again into fresh, its traces and profile read from
 * their recorded absolute paths (so it recomputes from any folder). */
static int remeasure(const wza_run *run, wz_verify_request *r, wza_run *fresh)
{
	wz_measure_req rq = r->measure;
	for (int i = 0; i < rq.npaths; i++)
		r->paths[i] = recorded_path(run, rq.paths[i]);
	rq.paths = r->paths;
	if (rq.profile_path)
		rq.profile_path = recorded_path(run, rq.profile_path);
	wz_measure_result res;
	int rc = wz_measure_run(&rq, &res);
	if (!rc)
		rc = wz_measure_record(fresh, &rq, &res);
	wz_measure_result_free(&res);
	return rc;
}

/* Recomputes a propose, size or codec run into fresh; returns an exit
 * status. */
static int recompute(const wza_run *run, wz_verify_request *r, const char *dir,
		     const char *traffic, const wza_run *codec_run, wza_run *fresh)
{
	wz_diag diag;
	char *scn_path = wz_path_join(dir, "run.scenario");
	int rc = 0;
	if (!scn_path) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_say_fail("verify", &diag);
	} else if (!strcmp(run->command, "codec")) {
		rc = remeasure(run, r, fresh);
	} else if (!strcmp(run->command, "propose")) {
		wz_propose_opts o = r->propose;
		o.scn.scenario_path = scn_path;
		o.scn.catalog_dir = dir;
		o.quiet = 1;
		if (traffic)
			o.sim.traffic = traffic;
		o.codec_loaded = codec_run;
		wz_propose_quality_paths(run, &o);
		wzm_scenario *scn;
		wzm_catalog *cat;
		wzm_compare cmp;
		rc = wz_propose_compute("verify", &o, fresh, &scn, &cat, &cmp);
		if (!rc) {
			wzm_compare_free(&cmp);
			wzm_scenario_free(scn);
			wzm_catalog_free(cat);
		}
	} else {
		wz_size_opts o = r->size;
		o.scn.scenario_path = scn_path;
		o.scn.catalog_dir = dir;
		o.quiet = 1;
		if (traffic)
			o.sim.traffic = traffic;
		wz_sim_setup setup;
		wz_size_row *rows;
		int base;
		rc = wz_size_compute("verify", &o, fresh, &setup, &rows, &base);
		if (!rc) {
			wz_size_rows_free(rows, setup.scn->nformats);
			wz_sim_setup_free(&setup);
		}
	}
	free(scn_path);
	return rc;
}

static void changed(wz_buf *report, int n, const wz_buf *changes)
{
	wz_buf_printf(report, "%d input%s changed since the run:\n%s", n, n == 1 ? "" : "s",
		      wz_buf_str(changes));
}

int wz_verify_run(const wz_verify_req *rq, wz_buf *report)
{
	const wza_run *run = rq->run, *codec_run = rq->codec_run;
	int stored = rq->stored, rc = 0;
	wz_diag diag;
	wz_diag_clear(&diag);
	char tmpl[4096];
	const char *tmpdir = getenv("TMPDIR");
	snprintf(tmpl, sizeof tmpl, "%s/wzplan-verify", tmpdir && *tmpdir ? tmpdir : "/tmp");
	char *dir = NULL, *traffic = NULL;
	wz_buf changes = { 0 }, diffs = { 0 };
	int nchanged = 0;
	if (!rc && wz_staging_create(tmpl, &dir, &diag))
		rc = wz_say_fail("verify", &diag);
	if (!rc && stage_inputs(run, stored, dir, &changes, &nchanged, &traffic, &diag))
		rc = wz_say_fail("verify", &diag);
	wza_run *fresh = rc ? NULL : wza_run_new(run->command, 0, NULL, PACKAGE_VERSION);
	if (!rc && !fresh) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_say_fail("verify", &diag);
	}
	if (!rc)
		rc = recompute(run, rq->request, dir, traffic, codec_run, fresh);
	/* Traces and profiles are named when they changed, even when the
	 * changed file no longer recomputes. */
	nchanged += wz_codec_inputs_changed(run, &changes);
	if (rc && nchanged)
		changed(report, nchanged, &changes);
	if (!rc) {
		int n = wz_figures_diff(run, fresh, "archived", "recomputed", &diffs);
		int ns = series_diff(run, fresh, &diffs);
		int nc = wz_codec_rows_diff(run, fresh, &diffs);
		wz_buf_printf(report, "Run %lld (wzplan %s, %s, program %s): recomputed from the %s "
				      "inputs with wzplan %s.\n",
			      run->id, run->command, run->started, run->version,
			      stored ? "stored" : "current", PACKAGE_VERSION);
		if (nchanged)
			changed(report, nchanged, &changes);
		else
			wz_buf_puts(report, "Every input is as recorded (XXH3 hashes match).\n");
		int points = run->nsim + run->npoints;
		if (nc)
			wz_buf_printf(report, "%d of %d figures, %d of %d simulation results and series "
					      "points and %d of %d codec measurements differ:\n%s",
				      n, run->nfigures, ns, points, nc, run->ncodec, wz_buf_str(&diffs));
		else if (n && !ns)
			wz_buf_printf(report, "%d of %d figures differ:\n%s", n, run->nfigures,
				      wz_buf_str(&diffs));
		else if (n || ns)
			wz_buf_printf(report, "%d of %d figures and %d of %d simulation results and "
					      "series points differ:\n%s",
				      n, run->nfigures, ns, points, wz_buf_str(&diffs));
		else if (run->ncodec)
			wz_buf_printf(report, "All %d figures and %d codec measurements reproduced "
					      "exactly.\n",
				      run->nfigures, run->ncodec);
		else if (points)
			wz_buf_printf(report, "All %d figures, %d simulation results and %d series "
					      "points reproduced exactly.\n",
				      run->nfigures, run->nsim, run->npoints);
		else
			wz_buf_printf(report, "All %d figures reproduced exactly.\n", run->nfigures);
		rc = n || ns || nc ? 1 : 0;
	}
	if (dir)
		wz_staging_remove(dir);
	free(dir);
	free(traffic);
	wz_buf_free(&changes);
	wz_buf_free(&diffs);
	wza_run_free(fresh);
	return rc;
}

int wz_verify_request_read(const wza_run *run, wz_verify_request *out)
{
	memset(out, 0, sizeof *out);
	const char *text = wz_request_of(run, run->command);
	if (!text)
		return -1;
	char origin[64];
	snprintf(origin, sizeof origin, "run %lld's request", run->id);
	wz_diag diag;
	wz_err err = wz_kv_parse(text, origin, &out->kv, &diag);
	if (!err && !strcmp(run->command, "propose"))
		err = wz_request_propose_read(out->kv, &out->propose, &diag);
	else if (!err && !strcmp(run->command, "size"))
		err = wz_request_size_read(out->kv, &out->size, &diag);
	else if (!err && !strcmp(run->command, "codec"))
		err = wz_request_measure_read(out->kv, &out->measure, out->paths,
					      WZ_MEASURE_MAX_TRACES, &diag);
	if (err)
		return wz_say_fail("verify", &diag);
	return 0;
}

void wz_verify_request_free(wz_verify_request *r)
{
	wz_kv_free(r->kv);
	r->kv = NULL;
}

static int same_value(const wza_figure *a, const wza_figure *b)
{
	if ((a->text == NULL) != (b->text == NULL) || (a->text && strcmp(a->text, b->text)))
		return 0;
	if (isnan(a->value) || isnan(b->value))
		return isnan(a->value) && isnan(b->value);
	return a->value == b->value;
}

static void show_value(wz_buf *out, const wza_figure *f)
{
	if (!f)
		wz_buf_puts(out, "(absent)");
	else if (f->text)
		wz_buf_printf(out, "'%s'", f->text);
	else if (isnan(f->value))
		wz_buf_puts(out, "(none)");
	else
		wz_buf_printf(out, "%.10g", f->value);
}

int wz_figures_diff(const wza_run *a, const wza_run *b, const char *name_a, const char *name_b,
		    wz_buf *out)
{
	int n = 0;
	for (int i = 0; i < a->nfigures; i++) {
		const wza_figure *fa = &a->figures[i];
		const wza_figure *fb = wza_run_find_figure(b, fa->table, fa->row, fa->col);
		if (fb && same_value(fa, fb))
			continue;
		n++;
		wz_buf_printf(out, "  %s / %s / %s: %s ", fa->table, fa->row, fa->col, name_a);
		show_value(out, fa);
		wz_buf_printf(out, ", %s ", name_b);
		show_value(out, fb);
		wz_buf_puts(out, "\n");
	}
	for (int i = 0; i < b->nfigures; i++) {
		const wza_figure *fb = &b->figures[i];
		if (wza_run_find_figure(a, fb->table, fb->row, fb->col))
			continue;
		n++;
		wz_buf_printf(out, "  %s / %s / %s: %s (absent), %s ", fb->table, fb->row, fb->col,
			      name_a, name_b);
		show_value(out, fb);
		wz_buf_puts(out, "\n");
	}
	return n;
}
