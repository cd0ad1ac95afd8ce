/* `wzplan verify RUN`: recomputes an archived run from its recorded inputs
 * (runs/verify.c does it) and prints every figure that differs and every
 * input that changed.  A run stored with its request recomputes that
 * request; an older run's recorded arguments are parsed as its command
 * parsed them. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/codec_cli.h"
#include "cli/commands.h"
#include "cli/propose_cli.h"
#include "cli/sim_cli.h"
#include "common/wz_io.h"
#include "runs/verify.h"

static void help(void)
{
	printf("Usage: wzplan verify RUN [options]\n"
	       "\n"
	       "Recomputes an archived run from the inputs and the request it recorded (a\n"
	       "run stored before requests were: its arguments) and compares every\n"
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

/* A run's request from its recorded arguments, for a run stored before
 * requests were: the command's own parser reads them (getopt reorders
 * argv, so the words are kept apart to be freed).  Returns 0 or an exit
 * status. */
static int request_from_args(const wza_run *run, wz_verify_request *r, char ***words, int *nwords,
			     char ***argv_out, wz_codec_measure_args *measure)
{
	wz_diag diag;
	int argc;
	char **argv = args_to_argv(run, &argc);
	if (!argv) {
		wz_diag_set(&diag, WZ_ERR_CORRUPT, "run %lld: its recorded arguments are unreadable",
			    run->id);
		return wz_cli_fail("verify", &diag);
	}
	*words = argv;
	*nwords = argc;
	char **copy = calloc((size_t)argc + 1, sizeof *copy);
	if (!copy) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail("verify", &diag);
	}
	*argv_out = copy;
	int n = 0, rc;
	if (!strcmp(run->command, "codec")) {
		/* argv[0] "codec", argv[1] "measure": where the table went and
		 * the archive are not the measurement's. */
		for (int i = 1; i < argc; i++) {
			const char *a = argv[i];
			if (i > 1 && (!strcmp(a, "--archive") || !strcmp(a, "-o") ||
				      !strcmp(a, "--output")))
				i++;
			else if (i > 1 && (!strcmp(a, "--no-archive") || !strncmp(a, "--archive=", 10) ||
					   !strncmp(a, "--output=", 9) || (!strncmp(a, "-o", 2) && a[2])))
				continue;
			else
				copy[n++] = argv[i];
		}
		rc = wz_codec_measure_parse(n, copy, measure);
		if (rc < 0) {
			r->measure = measure->req;
			return 0;
		}
	} else {
		memcpy(copy, argv, (size_t)argc * sizeof *argv);
		rc = !strcmp(run->command, "propose") ? wz_propose_parse(argc, copy, &r->propose)
						       : wz_size_parse(argc, copy, &r->size);
		if (rc < 0)
			return 0;
	}
	wz_diag_set(&diag, WZ_ERR_CORRUPT, "run %lld: its recorded arguments do not parse", run->id);
	return wz_cli_fail("verify", &diag);
}

static int recompute(const wza_run *run, int stored, const wza_run *codec_run)
{
	wz_verify_request r;
	char **words = NULL, **argv = NULL;
	int nwords = 0;
	wz_codec_measure_args measure;
	int rc = wz_verify_request_read(run, &r);
	if (rc < 0)
		rc = request_from_args(run, &r, &words, &nwords, &argv, &measure);
	if (!rc) {
		wz_verify_req rq = { run, codec_run, stored, &r };
		wz_buf report = { 0 };
		rc = wz_verify_run(&rq, &report);
		fputs(wz_buf_str(&report), stdout);
		wz_buf_free(&report);
	}
	wz_verify_request_free(&r);
	for (int i = 0; i < nwords; i++)
		free(words[i]);
	free(words);
	free(argv);
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
	/* An archive may come from anyone: the paths it records are read only
	 * inside its own folder and the current one. */
	char *folder = strdup(wza_path(a));
	char *slash = folder ? strrchr(folder, '/') : NULL;
	if (slash)
		*(slash == folder ? slash + 1 : slash) = '\0';
	const char *where[2] = { slash ? folder : ".", "." };
	wz_recorded_roots(where, 2);
	free(folder);
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
		rc = recompute(run, stored, codec_run);
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
