/* `wzplan verify RUN`: recomputes an archived run from its recorded inputs
 * and reports every figure that differs and every input that changed. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/codec_cli.h"
#include "cli/commands.h"
#include "cli/propose_cli.h"
#include "cli/sim_cli.h"
#include "common/wz_io.h"
#include "config.h"
#include "data/embedded.h"
#include "runs/codec_record.h"
#include "runs/propose.h"
#include "runs/publish.h"
#include "runs/sim_setup.h"

static void help(void)
{
	printf("Usage: wzplan verify RUN [options]\n"
	       "\n"
	       "Recomputes an archived run from the inputs it recorded and compares every\n"
	       "figure with the stored one, and for simulations every result and every\n"
	       "point of the latency and occupancy series (the recorded seed gives the\n"
	       "same figures).  Inputs are read as they are now (files from their recorded\n"
	       "paths, embedded catalogs from this program); any whose hash differs from\n"
	       "the recorded one is named.  With --stored the recorded texts are used\n"
	       "instead, which checks the program alone (a traffic file over 1 MiB is not\n"
	       "stored, so it is always read from its path).\n"
	       "\n"
	       "Runs of 'propose' (with or without a simulation or a quality measurement),\n"
	       "'size' and 'codec measure' can be recomputed (cache traces and the wz\n"
	       "profile are read from their recorded paths; a changed one is named by its\n"
	       "hash); 'sim' runs cannot yet (rerun 'wzplan sim' with the recorded\n"
	       "arguments and compare with 'wzplan archive diff').\n"
	       "\n"
	       "Exit status: 0 every figure reproduced exactly, 1 some figure differs (or\n"
	       "the run could not be recomputed), 2 bad usage or unknown run.\n"
	       "\n"
	       "Options:\n"
	       "  --archive FILE         the archive (default as in wzplan-archive(1))\n"
	       "  --stored               recompute from the stored input texts\n"
	       "  -h, --help             this help\n");
}

/* The text of an input as it is now: the file at its recorded path, or the
 * embedded file this program carries.  NULL when it cannot be read. */
static char *current_text(const wza_input *in, size_t *len)
{
	*len = 0;
	if (!strncmp(in->origin, "embedded:", 9)) {
		char name[160];
		if (!strcmp(in->kind, "scenario"))
			snprintf(name, sizeof name, "scenarios/%s.scenario", in->origin + 9);
		else
			snprintf(name, sizeof name, "%s", in->origin + 9);
		const char *text = wz_embedded_file(name, len);
		return text ? strdup(text) : NULL;
	}
	char *text = NULL;
	if (wz_read_file(in->origin, 16 << 20, &text, len, NULL))
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
	int gone = wz_hash_file(in->origin, hex, &size, NULL) != WZ_OK;
	if (gone) {
		(*nchanged)++;
		wz_buf_printf(changes, "  %s %s: %s is gone%s\n", in->kind, in->name, in->origin,
			      in->content ? "; using the recorded text" : "");
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
	if (!strcmp(in->kind, "scenario"))
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
		if (!strcmp(in->kind, "trace") && !strcmp(in->name, "traffic")) {
			wz_err err = stage_traffic(in, stored, dir, changes, nchanged, traffic, diag);
			if (err)
				return err;
			continue;
		}
		if (strcmp(in->kind, "scenario") && strcmp(in->kind, "catalog"))
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
			wz_buf_printf(changes, "  %s %s: %s is gone%s\n", in->kind, in->name, in->origin,
				      in->content ? "; using the recorded text" : "");
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

/* The recorded arguments back as an argv: argv[0] is the command. */
static char **args_to_argv(const wza_run *run, int *argc)
{
	json_t *arr = json_loads(run->args ? run->args : "[]", 0, NULL);
	if (!json_is_array(arr)) {
		json_decref(arr);
		return NULL;
	}
	size_t n = json_array_size(arr);
	char **argv = calloc(n + 2, sizeof *argv);
	int failed = !argv;
	if (argv) {
		argv[0] = strdup(run->command);
		failed |= !argv[0];
		for (size_t i = 0; i < n; i++) {
			const char *s = json_string_value(json_array_get(arr, i));
			argv[i + 1] = strdup(s ? s : "");
			failed |= !argv[i + 1];
		}
	}
	json_decref(arr);
	*argc = (int)n + 1;
	if (failed) {
		for (int i = 0; argv && i < *argc; i++)
			free(argv[i]);
		free(argv);
		return NULL;
	}
	return argv;
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

/* A run whose recorded command line no longer parses cannot be recomputed. */
static int arguments_unparsable(const wza_run *run)
{
	wz_diag diag;
	wz_diag_set(&diag, WZ_ERR_CORRUPT, "run %lld: its recorded arguments do not parse", run->id);
	return wz_cli_fail("verify", &diag);
}

/* Recomputes a propose or size run into fresh; returns an exit status. */
static int recompute(const wza_run *run, int argc, char **argv, const char *dir,
		     const char *traffic, const wza_run *codec_run, wza_run *fresh)
{
	wz_diag diag;
	char *scn_path = wz_path_join(dir, "run.scenario");
	int rc = 0;
	if (!scn_path) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail("verify", &diag);
	} else if (!strcmp(run->command, "codec")) {
		rc = wz_codec_measure_recompute(run, fresh);
	} else if (!strcmp(run->command, "propose")) {
		wz_propose_opts o;
		if (wz_propose_parse(argc, argv, &o) >= 0) {
			rc = arguments_unparsable(run);
		} else {
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
		}
	} else {
		wz_size_opts o;
		if (wz_size_parse(argc, argv, &o) >= 0) {
			rc = arguments_unparsable(run);
		} else {
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
	}
	free(scn_path);
	return rc;
}

static int verify_recompute(const wza_run *run, int stored, const wza_run *codec_run)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	int argc, rc = 0;
	char **argv = args_to_argv(run, &argc);
	if (!argv) {
		wz_diag_set(&diag, WZ_ERR_CORRUPT, "run %lld: its recorded arguments are unreadable",
			    run->id);
		return wz_cli_fail("verify", &diag);
	}
	/* getopt reorders argv; keep the originals to free. */
	char **copy = calloc((size_t)argc + 1, sizeof *copy);
	if (copy)
		memcpy(copy, argv, (size_t)argc * sizeof *argv);
	if (!copy) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail("verify", &diag);
	}
	char tmpl[4096];
	const char *tmpdir = getenv("TMPDIR");
	snprintf(tmpl, sizeof tmpl, "%s/wzplan-verify", tmpdir && *tmpdir ? tmpdir : "/tmp");
	char *dir = NULL, *traffic = NULL;
	wz_buf changes = { 0 }, diffs = { 0 };
	int nchanged = 0;
	if (!rc && wz_staging_create(tmpl, &dir, &diag))
		rc = wz_cli_fail("verify", &diag);
	if (!rc && stage_inputs(run, stored, dir, &changes, &nchanged, &traffic, &diag))
		rc = wz_cli_fail("verify", &diag);
	wza_run *fresh = rc ? NULL : wza_run_new(run->command, 0, NULL, PACKAGE_VERSION);
	if (!rc && !fresh) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail("verify", &diag);
	}
	if (!rc)
		rc = recompute(run, argc, copy, dir, traffic, codec_run, fresh);
	/* Traces and profiles are named when they changed, even when the
	 * changed file no longer recomputes. */
	nchanged += wz_codec_inputs_changed(run, &changes);
	if (rc && nchanged)
		printf("%d input%s changed since the run:\n%s", nchanged, nchanged == 1 ? "" : "s",
		       wz_buf_str(&changes));
	if (!rc) {
		int n = wz_figures_diff(run, fresh, "archived", "recomputed", &diffs);
		int ns = series_diff(run, fresh, &diffs);
		int nc = wz_codec_rows_diff(run, fresh, &diffs);
		printf("Run %lld (wzplan %s, %s, program %s): recomputed from the %s inputs with "
		       "wzplan %s.\n",
		       run->id, run->command, run->started, run->version,
		       stored ? "stored" : "current", PACKAGE_VERSION);
		if (nchanged)
			printf("%d input%s changed since the run:\n%s", nchanged, nchanged == 1 ? "" : "s",
			       wz_buf_str(&changes));
		else
			printf("Every input is as recorded (XXH3 hashes match).\n");
		if (nc)
			printf("%d of %d figures, %d of %d simulation results and series points and "
			       "%d of %d codec measurements differ:\n%s",
			       n, run->nfigures, ns, run->nsim + run->npoints, nc, run->ncodec,
			       wz_buf_str(&diffs));
		else if (n && !ns)
			printf("%d of %d figures differ:\n%s", n, run->nfigures, wz_buf_str(&diffs));
		else if (n || ns)
			printf("%d of %d figures and %d of %d simulation results and series points "
			       "differ:\n%s",
			       n, run->nfigures, ns, run->nsim + run->npoints, wz_buf_str(&diffs));
		else if (run->ncodec)
			printf("All %d figures and %d codec measurements reproduced exactly.\n",
			       run->nfigures, run->ncodec);
		else if (run->nsim + run->npoints)
			printf("All %d figures, %d simulation results and %d series points "
			       "reproduced exactly.\n",
			       run->nfigures, run->nsim, run->npoints);
		else
			printf("All %d figures reproduced exactly.\n", run->nfigures);
		rc = n || ns || nc ? 1 : 0;
	}
	if (dir)
		wz_staging_remove(dir);
	free(dir);
	free(traffic);
	wz_buf_free(&changes);
	wz_buf_free(&diffs);
	wza_run_free(fresh);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	free(argv);
	free(copy);
	return rc;
}

int wz_cmd_verify(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "archive", required_argument, NULL, 'A' },
		{ "stored", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	int stored = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'A': path = optarg; break;
		case 'S': stored = 1; break;
		case 'h': help(); return 0;
		case ':': return wz_cli_bad_option("verify", ':', argv);
		default: return wz_cli_bad_option("verify", '?', argv);
		}
	}
	if (argc - optind != 1)
		return wz_cli_usage("verify", "give one run id (see 'wzplan archive list')");
	long long id;
	int rc = wz_run_id_parse("verify", argv[optind], &id);
	if (rc)
		return rc;
	wza_archive *a;
	if ((rc = wz_run_archive_open("verify", path, 0, &a)))
		return rc;
	wz_diag diag;
	wza_run *run = NULL, *codec_run = NULL;
	if (wza_load(a, id, &run, &diag))
		rc = wz_cli_fail("verify", &diag);
	/* A propose run that used --codec-run RUN recomputes with that run's
	 * measurements, as stored. */
	const wza_figure *src = rc ? NULL : wza_run_find_figure(run, "quality", "source",
								"codec_run");
	if (src && wza_load(a, (long long)src->value, &codec_run, &diag))
		rc = wz_cli_fail("verify", &diag);
	wza_close(a);
	if (rc) {
		wza_run_free(run);
		return rc;
	}
	if (!strcmp(run->command, "propose") || !strcmp(run->command, "size") ||
	    !strcmp(run->command, "codec")) {
		rc = verify_recompute(run, stored, codec_run);
	} else {
		wz_diag_set(&diag, WZ_ERR_UNSUPPORTED,
			    "run %lld is a '%s' run; this wzplan recomputes propose, size and "
			    "codec runs only", id, run->command);
		rc = wz_cli_fail("verify", &diag);
	}
	wza_run_free(codec_run);
	wza_run_free(run);
	return rc;
}
