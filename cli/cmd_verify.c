/* `wzplan verify RUN`: recomputes an archived run from its recorded inputs
 * and reports every figure that differs and every input that changed. */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/commands.h"
#include "cli/propose.h"
#include "cli/publish.h"
#include "common/wz_io.h"
#include "config.h"
#include "data/embedded.h"

static void help(void)
{
	printf("Usage: wzplan verify RUN [options]\n"
	       "\n"
	       "Recomputes an archived run from the inputs it recorded and compares every\n"
	       "figure with the stored one.  Inputs are read as they are now (files from\n"
	       "their recorded paths, embedded catalogs from this program); any whose\n"
	       "hash differs from the recorded one is named.  With --stored the recorded\n"
	       "texts are used instead, which checks the program alone.\n"
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

/* Writes the inputs to use into dir and notes those that changed. */
static int stage_inputs(const wza_run *run, int stored, const char *dir, wz_buf *changes,
			int *nchanged, wz_diag *diag)
{
	*nchanged = 0;
	for (int i = 0; i < run->ninputs; i++) {
		const wza_input *in = &run->inputs[i];
		if (strcmp(in->kind, "scenario") && strcmp(in->kind, "catalog"))
			continue;
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
		const char *file = strcmp(in->kind, "scenario") ? in->name : "run.scenario";
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

static int verify_propose(const wza_run *run, int stored)
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
	wz_propose_opts o;
	int prc = copy ? wz_propose_parse(argc, copy, &o) : 1;
	if (prc >= 0) {
		wz_diag_set(&diag, WZ_ERR_CORRUPT, "run %lld: its recorded arguments do not parse",
			    run->id);
		rc = wz_cli_fail("verify", &diag);
	}
	char tmpl[4096];
	const char *tmpdir = getenv("TMPDIR");
	snprintf(tmpl, sizeof tmpl, "%s/wzplan-verify", tmpdir && *tmpdir ? tmpdir : "/tmp");
	char *dir = NULL;
	wz_buf changes = { 0 }, diffs = { 0 };
	int nchanged = 0;
	if (!rc && wz_staging_create(tmpl, &dir, &diag))
		rc = wz_cli_fail("verify", &diag);
	if (!rc && stage_inputs(run, stored, dir, &changes, &nchanged, &diag))
		rc = wz_cli_fail("verify", &diag);
	char *scn_path = dir ? wz_path_join(dir, "run.scenario") : NULL;
	wza_run *fresh = rc ? NULL : wza_run_new(run->command, 0, NULL, PACKAGE_VERSION);
	if (!rc && (!scn_path || !fresh)) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail("verify", &diag);
	}
	if (!rc) {
		o.scn.scenario_path = scn_path;
		o.scn.catalog_dir = dir;
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
	if (!rc) {
		int n = wz_figures_diff(run, fresh, "archived", "recomputed", &diffs);
		printf("Run %lld (wzplan %s, %s, program %s): recomputed from the %s inputs with "
		       "wzplan %s.\n",
		       run->id, run->command, run->started, run->version,
		       stored ? "stored" : "current", PACKAGE_VERSION);
		if (nchanged)
			printf("%d input%s changed since the run:\n%s", nchanged, nchanged == 1 ? "" : "s",
			       wz_buf_str(&changes));
		else
			printf("Every input is as recorded (XXH3 hashes match).\n");
		if (n)
			printf("%d of %d figures differ:\n%s", n, run->nfigures, wz_buf_str(&diffs));
		else
			printf("All %d figures reproduced exactly.\n", run->nfigures);
		rc = n ? 1 : 0;
	}
	if (dir)
		wz_staging_remove(dir);
	free(dir);
	free(scn_path);
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
		case ':': return wz_cli_usage("verify", "option %s needs a value", argv[optind - 1]);
		default: return wz_cli_usage("verify", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 1)
		return wz_cli_usage("verify", "give one run id (see 'wzplan archive list')");
	long long id;
	int rc = wz_run_id_parse("verify", argv[optind], &id);
	if (rc)
		return rc;
	wza_archive *a;
	if ((rc = wz_archive_open_cli("verify", path, 0, &a)))
		return rc;
	wz_diag diag;
	wza_run *run = NULL;
	if (wza_load(a, id, &run, &diag))
		rc = wz_cli_fail("verify", &diag);
	wza_close(a);
	if (rc)
		return rc;
	if (!strcmp(run->command, "propose")) {
		rc = verify_propose(run, stored);
	} else {
		wz_diag_set(&diag, WZ_ERR_UNSUPPORTED,
			    "run %lld is a '%s' run; this wzplan recomputes propose runs only", id,
			    run->command);
		rc = wz_cli_fail("verify", &diag);
	}
	wza_run_free(run);
	return rc;
}
