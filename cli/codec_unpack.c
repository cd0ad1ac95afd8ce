/* `wzplan codec unpack`: a wzx container back to wz GPU-tier records, the
 * transformed domain or bf16 values, streaming: the container is read a
 * run of blocks at a time (its index held, 16 bytes a block) and restored
 * on all cores into an output written as it goes (atomically: a temporary
 * file renamed at the end, or standard output for --out -), so memory
 * stays a few blocks per thread whatever the session's length (docs/wzx-format.md; the run loop is
 * codec/wzx/wzx_files.c's). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/codec_cli.h"
#include "codec/wzx/wzx_files.h"

static void help_unpack(void)
{
	printf("Usage: wzplan codec unpack --in FILE.wzx --profile PROFILE --out FILE\n"
	       "                           [--to wz|transformed|bf16] [--layer L --block B]\n"
	       "                           [--threads N]\n"
	       "\n"
	       "Reads a wzx container, checking every block's checksum, and writes the\n"
	       "wz GPU-tier records it holds ([L][T][record bytes], --to wz, the default),\n"
	       "the transformed domain attention reads ([L][T][R + P] little-endian float32,\n"
	       "--to transformed) or the decoded values ([L][T][R + P] little-endian bf16,\n"
	       "latent first).  --layer and --block read one block of 64 tokens through the\n"
	       "index, and of a version 5 profile that layer alone.  Blocks are restored on\n"
	       "N threads (default: every core); the output is the same for any N.  A\n"
	       "damaged or foreign container exits with status 2.  --out - writes to\n"
	       "standard output (the summary then goes to standard error); a file is\n"
	       "written to a temporary beside it and renamed when complete.\n");
}

int wz_codec_unpack(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "in", required_argument, NULL, 'i' },	   { "profile", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' },   { "to", required_argument, NULL, 'T' },
		{ "layer", required_argument, NULL, 'l' }, { "block", required_argument, NULL, 'b' },
		{ "threads", required_argument, NULL, 'j' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = NULL, *profile = NULL, *out = NULL, *to = "wz";
	long layer = -1, block = -1, threads = 0;
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:p:o:T:l:b:j:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'i': in = optarg; break;
		case 'p': profile = optarg; break;
		case 'o': out = optarg; break;
		case 'T': to = optarg; break;
		case 'l':
			if ((rc = wz_cli_long(CMD, "--layer", optarg, 0, 4095, &layer)))
				return rc;
			break;
		case 'b':
			if ((rc = wz_cli_long(CMD, "--block", optarg, 0, 0x7fffffffL, &block)))
				return rc;
			break;
		case 'j':
			if ((rc = wz_cli_long(CMD, "--threads", optarg, 1, 1024, &threads)))
				return rc;
			break;
		case 'h': help_unpack(); return 0;
		case ':': return wz_cli_bad_option(CMD, ':', argv);
		default: return wz_cli_bad_option(CMD, '?', argv);
		}
	}
	if (optind < argc)
		return wz_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
	if (!in || !profile || !out)
		return wz_cli_usage(CMD, "unpack needs --in, --profile and --out");
	wzc_restore_kind kind;
	if (!strcmp(to, "wz"))
		kind = WZC_RESTORE_RECORDS;
	else if (!strcmp(to, "transformed"))
		kind = WZC_RESTORE_TRANSFORMED;
	else if (!strcmp(to, "bf16"))
		kind = WZC_RESTORE_BF16;
	else
		return wz_cli_usage(CMD, "--to: wz, transformed or bf16, not '%s'", to);
	if ((layer < 0) != (block < 0))
		return wz_cli_usage(CMD, "--layer and --block go together");
	int nthreads = threads > 0 ? (int)threads : wz_cores();
	wz_diag diag;
	wzc_wzx_unpack_result res;
	/* one block: its layer alone read from the profile */
	wz_err e = wzc_wzx_unpack_path(in, profile, kind, layer, block, nthreads, out, &res, &diag);
	if (!e)
		/* the summary goes to standard error when the output goes to
		 * standard output */
		fprintf(strcmp(out, "-") ? stdout : stderr,
			"%s: %d layer%s x %ld tokens as %s, %zu bytes (%d thread%s)\n",
			strcmp(out, "-") ? out : "standard output", res.layers, res.layers == 1 ? "" : "s",
			res.tokens / res.layers, to, res.bytes, nthreads, nthreads == 1 ? "" : "s");
	return e ? wz_cli_fail(CMD, &diag) : 0;
}
