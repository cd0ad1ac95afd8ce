/* `wzplan codec measure` on the command line: the options into a
 * measurement request (runs/measure.h), its table printed, the run stored. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/codec_cli.h"
#include "codec/measure/metrics.h"
#include "config.h"
#include "runs/measure.h"
#include "runs/request.h"
#include "runs/sim_record.h"

static void help_measure(void)
{
	printf("Usage: wzplan codec measure --trace FILE... --formats LIST [options]\n"
	       "\n"
	       "Encodes every trace window in each format, decodes, and prints one row per\n"
	       "window and format: bits/value counted from the written bytes, nmse (both\n"
	       "parts; also latent and position part) and SQNR, with queries the attention\n"
	       "KL and output error, the ratio to fp8-mix with a paired bootstrap 95%%\n"
	       "interval over tokens (queries for KL), the share of tokens (and queries)\n"
	       "where the format beats fp8-mix, and the gap in dB to the Gaussian\n"
	       "rate-distortion bound at the same rate for the window's measured\n"
	       "covariance.  CSV and JSON carry every interval and figure the archive\n"
	       "stores (with --iso, the sweep's rows too).\n"
	       "\n"
	       "Options:\n"
	       "  --trace FILE        a trace window (repeat, or several after one)\n"
	       "  --profile FILE      the wz profile (needed for wz-<bits> formats)\n"
	       "  --calibration FILE  a calibration window KVTC's transforms are fitted on\n"
	       "                      (repeat; needed for kvtc-<bits>, with --profile)\n"
	       "  --formats LIST      e.g. fp8-mix,int4-g64,wz-4.97,wz-5.44,wz-6.31\n"
	       "  --iso               also the iso-quality bits of wz against fp8-mix and\n"
	       "                      int4-g64 (a rate sweep, slower)\n"
	       "  --per-layer         also one row per layer of each window and format\n"
	       "  --threads N         windows and formats measured on N threads (default:\n"
	       "                      every core); the results are the same for any N\n"
	       "  --boot N            bootstrap resamples (default %d)\n"
	       "  --seed N            bootstrap seed (default 1)\n"
	       "  --format F          text (default), csv, json or md\n"
	       "  -o, --output FILE   write there instead of standard output\n"
	       "  --archive FILE      archive to store the run in (default: $WZPLAN_ARCHIVE,\n"
	       "                      else $XDG_DATA_HOME/wzplan/archive.sqlite); the run id\n"
	       "                      goes to standard error; 'wzplan plot RUN' draws it\n"
	       "  --no-archive        do not store the run\n"
	       "  -h, --help          this help\n",
	       WZC_BOOT_DEFAULT);
}

int wz_codec_measure_parse(int argc, char **argv, wz_codec_measure_args *a)
{
	static const struct option longopts[] = {
		{ "trace", required_argument, NULL, 't' },
		{ "profile", required_argument, NULL, 'p' },
		{ "calibration", required_argument, NULL, 'C' },
		{ "formats", required_argument, NULL, 'F' },
		{ "iso", no_argument, NULL, 'i' },
		{ "per-layer", no_argument, NULL, 'l' },
		{ "threads", required_argument, NULL, 'j' },
		{ "boot", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	wz_codec_run_opts *o = &a->run;
	wz_codec_run_opts_default(o);
	a->iso = a->per_layer = 0;
	a->threads = 0;
	a->ncal = 0;
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:p:C:F:ilj:b:s:f:o:h", longopts, NULL)) != -1) {
		if (wz_codec_run_option(c, argc, argv, o, &rc)) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'C':
			if (a->ncal == MAX_TRACES)
				return wz_cli_usage(CMD, "at most %d calibration windows", MAX_TRACES);
			a->cal[a->ncal++] = optarg;
			break;
		case 'i':
			a->iso = 1;
			break;
		case 'l':
			a->per_layer = 1;
			break;
		case 'j':
			if ((rc = wz_cli_long(CMD, "--threads", optarg, 1, 1024, &a->threads)))
				return rc;
			break;
		case 'h':
			help_measure();
			return 0;
		case ':':
			return wz_cli_bad_option(CMD, ':', argv);
		default:
			return wz_cli_bad_option(CMD, '?', argv);
		}
	}
	if (optind < argc)
		return wz_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
	a->req = (wz_measure_req){
		.paths = o->paths, .npaths = o->npaths, .profile_path = o->profile_path,
		.formats = o->formats, .iso = a->iso, .per_layer = a->per_layer,
		.threads = a->threads, .nboot = o->nboot, .seed = o->seed,
		.calibration_paths = a->cal, .ncalibration = a->ncal,
	};
	return -1;
}

/* The measurement's table, on standard output or -o FILE. */
static int print_table(const wz_codec_measure_args *a, const wz_measure_result *res)
{
	const wz_codec_run_opts *o = &a->run;
	int wide = o->how == WZP_CSV || o->how == WZP_JSON, rc;
	wzp_table *t = wz_codec_measure_table(res->shown, res->nshown, a->iso, a->per_layer, wide,
					      (int)o->nboot, (uint64_t)o->seed);
	wz_buf out = { 0 };
	if (!t || wzp_table_render(t, o->how, &out)) {
		wz_diag diag;
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail(CMD, &diag);
	} else {
		/* the headline (with --iso) after it, in text and Markdown */
		wzp_table *h = wide ? NULL : wz_measure_headline_table(res, 0);
		if (h) {
			wz_buf_puts(&out, "\n");
			wzp_table_render(h, o->how, &out);
		}
		wzp_table_free(h);
		rc = wz_cli_emit(CMD, o->output, wz_buf_str(&out));
	}
	wz_buf_free(&out);
	wzp_table_free(t);
	return rc;
}

int wz_codec_measure(int argc, char **argv)
{
	/* --archive FILE and --no-archive are taken out before the
	 * measurement's own options; the run keeps every argument given. */
	const char *archive = NULL;
	int no_archive = 0;
	char **args = calloc((size_t)argc + 1, sizeof *args);
	if (!args) {
		fprintf(stderr, "wzplan codec: out of memory\n");
		return 1;
	}
	int n = 0;
	for (int i = 0; i < argc; i++) {
		if (i && !strcmp(argv[i], "--no-archive")) {
			no_archive = 1;
		} else if (i && !strcmp(argv[i], "--archive")) {
			if (i + 1 >= argc) {
				free(args);
				return wz_cli_usage(CMD, "option --archive needs a value");
			}
			archive = argv[++i];
		} else if (i && !strncmp(argv[i], "--archive=", 10)) {
			archive = argv[i] + 10;
		} else {
			args[n++] = argv[i];
		}
	}
	if (archive && no_archive) {
		free(args);
		return wz_cli_usage(CMD, "--archive and --no-archive exclude each other");
	}
	wz_codec_measure_args a;
	int rc = wz_codec_measure_parse(n, args, &a);
	if (rc >= 0) {
		free(args);
		return rc;
	}
	wz_measure_result res;
	rc = wz_measure_run(&a.req, &res);
	if (!rc)
		rc = print_table(&a, &res);
	/* Into the archive: every row, listed or not. */
	if (!rc && !no_archive) {
		wza_run *run = wza_run_new("codec", argc, argv, PACKAGE_VERSION);
		if (!run) {
			wz_diag diag;
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_cli_fail(CMD, &diag);
		} else {
			char *request = wz_request_measure_text(&a.req);
			wz_request_record(run, "codec", request);
			free(request);
			rc = wz_measure_record(run, &a.req, &res);
			if (!rc)
				rc = wz_sim_store(CMD, archive, run);
		}
		wza_run_free(run);
	}
	wz_measure_result_free(&res);
	free(args);
	return rc;
}
