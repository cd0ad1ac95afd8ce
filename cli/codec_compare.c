/* `wzplan codec compare`: the options into a comparison request
 * (runs/compare.h) and its table printed. */
#include <getopt.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/codec_cli.h"
#include "codec/measure/metrics.h"
#include "runs/compare.h"

static void help_compare(void)
{
	printf("Usage: wzplan codec compare --trace FILE... --formats LIST --against LIST\n"
	       "                            [options]\n"
	       "\n"
	       "Encodes every trace window in each format of both lists and prints one row\n"
	       "per window, format and reference: both formats' bits/value counted from\n"
	       "the written bytes, nmse(format) / nmse(reference) and attention\n"
	       "KL(format) / KL(reference) with paired bootstrap 95%% intervals over tokens\n"
	       "(queries for KL), and the share of tokens (queries) where the format has\n"
	       "the lower error.\n"
	       "\n"
	       "Options:\n"
	       "  --trace FILE        a trace window (repeat, or several after one)\n"
	       "  --profile FILE      the wz profile (needed for wz-<bits> formats)\n"
	       "  --calibration FILE  a calibration window KVTC's transforms are fitted on\n"
	       "                      (repeat; needed for kvtc-<bits>, with --profile)\n"
	       "  --formats LIST      e.g. wz-4.50,wz-4.89,wz-4.97,wz-5.44\n"
	       "  --against LIST      e.g. nvfp4-ds-mla,mxfp4-sgl-mla,nvfp4-trt-cold\n"
	       "  --boot N            bootstrap resamples (default %d)\n"
	       "  --seed N            bootstrap seed (default 1)\n"
	       "  --format F          text (default), csv, json or md\n"
	       "  -o, --output FILE   write there instead of standard output\n"
	       "  --threads N         windows and formats measured on N threads (default:\n"
	       "                      every core); the results are the same for any N\n"
	       "  -h, --help          this help\n"
	       "\n"
	       "Either list may hold TensorRT-LLM's kept tokens (nvfp4-trt-cold-keep4-64:\n"
	       "positions below 4 and the window's last 64 tokens in bf16), whose bits/value\n"
	       "are the window's.\n",
	       WZC_BOOT_DEFAULT);
}

int wz_codec_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "trace", required_argument, NULL, 't' },
		{ "profile", required_argument, NULL, 'p' },
		{ "calibration", required_argument, NULL, 'C' },
		{ "formats", required_argument, NULL, 'F' },
		{ "against", required_argument, NULL, 'A' },
		{ "boot", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "threads", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	wz_codec_run_opts o;
	wz_codec_run_opts_default(&o);
	const char *against = NULL, *cal[MAX_TRACES];
	int ncal = 0;
	long threads = 0;
	int c, rc;
	wz_diag diag;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:p:C:F:A:b:s:f:o:j:h", longopts, NULL)) != -1) {
		if (wz_codec_run_option(c, argc, argv, &o, &rc)) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'A':
			against = optarg;
			break;
		case 'C':
			if (ncal == MAX_TRACES)
				return wz_cli_usage(CMD, "at most %d calibration windows", MAX_TRACES);
			cal[ncal++] = optarg;
			break;
		case 'j':
			if ((rc = wz_cli_long(CMD, "--threads", optarg, 1, 1024, &threads)))
				return rc;
			break;
		case 'h':
			help_compare();
			return 0;
		case ':':
			return wz_cli_bad_option(CMD, ':', argv);
		default:
			return wz_cli_bad_option(CMD, '?', argv);
		}
	}
	if (optind < argc)
		return wz_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
	wz_compare_req rq = {
		.paths = o.paths, .npaths = o.npaths, .profile_path = o.profile_path,
		.formats = o.formats, .against = against, .threads = threads, .nboot = o.nboot,
		.seed = o.seed, .calibration_paths = cal, .ncalibration = ncal,
	};
	wzp_table *t;
	rc = wz_compare_run(&rq, o.how == WZP_CSV || o.how == WZP_JSON, &t);
	if (!rc) {
		wz_buf out = { 0 };
		if (wzp_table_render(t, o.how, &out)) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_cli_fail(CMD, &diag);
		} else {
			rc = wz_cli_emit(CMD, o.output, wz_buf_str(&out));
		}
		wz_buf_free(&out);
	}
	wzp_table_free(t);
	return rc;
}
