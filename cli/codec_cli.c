/* The options `codec measure` and `codec compare` share (codec_cli.h). */
#include "cli/codec_cli.h"

#include <getopt.h>
#include <string.h>

#include "cli/cli.h"

/* Collects --trace values: the option's argument and the non-option words
 * that follow it ("--trace a b c"). */
int wz_codec_add_traces(int argc, char **argv, const char **traces, int *n)
{
	if (*n >= MAX_TRACES)
		return wz_cli_usage(CMD, "at most %d traces", MAX_TRACES);
	traces[(*n)++] = optarg;
	while (optind < argc && argv[optind][0] != '-') {
		if (*n >= MAX_TRACES)
			return wz_cli_usage(CMD, "at most %d traces", MAX_TRACES);
		traces[(*n)++] = argv[optind++];
	}
	return 0;
}

void wz_codec_run_opts_default(wz_codec_run_opts *o)
{
	memset(o, 0, sizeof *o);
	o->nboot = WZC_BOOT_DEFAULT;
	o->seed = 1;
	o->how = WZP_TEXT;
}

int wz_codec_run_option(int c, int argc, char **argv, wz_codec_run_opts *o, int *rc)
{
	wz_diag diag;
	*rc = 0;
	switch (c) {
	case 't':
		*rc = wz_codec_add_traces(argc, argv, o->paths, &o->npaths);
		return 1;
	case 'p':
		o->profile_path = optarg;
		return 1;
	case 'F':
		o->formats = optarg;
		return 1;
	case 'b':
		*rc = wz_cli_long(CMD, "--boot", optarg, 0, 100000, &o->nboot);
		return 1;
	case 's':
		*rc = wz_cli_long(CMD, "--seed", optarg, 0, 2147483647L, &o->seed);
		return 1;
	case 'f':
		if (wzp_output_parse(optarg, &o->how, &diag))
			*rc = wz_cli_usage(CMD, "%s", diag.msg);
		return 1;
	case 'o':
		o->output = optarg;
		return 1;
	default:
		return 0;
	}
}
