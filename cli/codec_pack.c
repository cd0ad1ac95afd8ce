/* `wzplan codec pack`: a cache trace to a wzx offload container
 * (docs/wzx-format.md), read a run of blocks at a time, coded on many
 * threads and written as it goes (neither the trace, the records nor the
 * container is ever held whole); cli/codec_unpack.c reads it back. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/codec_cli.h"
#include "codec/formats/fpconv.h"
#include "codec/profile/profile.h"
#include "codec/wzx/wzx_files.h"

/* A block's values, read from the trace file when a thread asks. */
static wz_err from_stream(void *ctx, int layer, int t0, int n, float *lat, float *rope,
			  wz_diag *diag)
{
	return wzt_cache_stream_read(ctx, layer, t0, n, lat, rope, diag);
}

static void help_pack(void)
{
	printf("Usage: wzplan codec pack --trace FILE --profile PROFILE (--rate BITS | --grid wz-BITS)\n"
	       "                         --out FILE.wzx [--threads N] [--rate-fit sample|profile]\n"
	       "\n"
	       "Encodes a cache trace in the wz GPU-tier grid and writes it as a wzx offload\n"
	       "container: the records' digits entropy-coded (rANS, static tables from the\n"
	       "profile) in blocks of 64 tokens x one layer, with a checksum per block and\n"
	       "an index for random access.  --rate chooses the grid that writes at most\n"
	       "BITS bits/value on a sample of the trace's own blocks (8 a layer, spread over\n"
	       "the session): the profile's grid for wzx-BITS, or a smaller one where this\n"
	       "trace codes larger than the calibration windows (--rate-fit profile: the\n"
	       "profile's grid, not checked on the trace); --grid wz-BITS packs that GPU\n"
	       "tier's records, so unpacking gives exactly them (give one of the two).  The trace\n"
	       "is read a few blocks per thread at a time, the blocks coded on N threads\n"
	       "(default: every core) and written in order as they are done, to a temporary\n"
	       "file renamed to the --out path at the end: memory does not grow with the\n"
	       "session, and the container is the same for any N (--out - writes it to\n"
	       "standard output as it goes).  Prints the bytes written (to standard error\n"
	       "with --out -).\n");
}

int wz_codec_pack(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "trace", required_argument, NULL, 't' }, { "profile", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },  { "grid", required_argument, NULL, 'g' },
		{ "out", required_argument, NULL, 'o' },   { "threads", required_argument, NULL, 'j' },
		{ "rate-fit", required_argument, NULL, 'f' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *trace = NULL, *profile = NULL, *grid = NULL, *out = NULL, *fit_by = NULL;
	double rate = 0;
	long threads = 0;
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:p:r:g:o:j:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't': trace = optarg; break;
		case 'p': profile = optarg; break;
		case 'g': grid = optarg; break;
		case 'o': out = optarg; break;
		case 'f':
			if (strcmp(optarg, "sample") && strcmp(optarg, "profile"))
				return wz_cli_usage(CMD, "--rate-fit: '%s': use sample or profile", optarg);
			fit_by = optarg;
			break;
		case 'r':
			if ((rc = wz_cli_double(CMD, "--rate", optarg, WZC_WZ_MIN_BITS, WZC_WZ_MAX_BITS, &rate)))
				return rc;
			break;
		case 'j':
			if ((rc = wz_cli_long(CMD, "--threads", optarg, 1, 1024, &threads)))
				return rc;
			break;
		case 'h': help_pack(); return 0;
		case ':': return wz_cli_bad_option(CMD, ':', argv);
		default: return wz_cli_bad_option(CMD, '?', argv);
		}
	}
	if (optind < argc)
		return wz_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
	/* Both name the grid: say which to drop rather than a usage line. */
	if (grid && rate > 0)
		return wz_cli_usage(CMD, "--rate and --grid both choose the grid: drop --rate to "
					 "pack %s's records, or drop --grid to pack the grid of "
					 "wzx-%g", grid, rate);
	if (grid && fit_by)
		return wz_cli_usage(CMD, "--rate-fit chooses how --rate's grid is found: drop it "
					 "with --grid %s, whose records are packed as they are", grid);
	if (!fit_by)
		fit_by = "sample";
	if (!trace || !profile || !out || (!grid) == (rate <= 0))
		return wz_cli_usage(CMD, "pack needs --trace, --profile, --out and one of --rate, --grid");
	wz_diag diag;
	wzc_format fmt;
	char name[40];
	if (!grid)
		snprintf(name, sizeof name, "wzx-%g", rate);
	if (wzc_format_parse(grid ? grid : name, &fmt, &diag))
		return wz_cli_fail(CMD, &diag);
	if (fmt.id != WZC_FMT_WZ && fmt.id != WZC_FMT_WZX)
		return wz_cli_usage(CMD, "--grid: a wz-<bits> format, not %s", fmt.name);
	wzc_profile *prof;
	if (wzc_profile_read(profile, &prof, &diag))
		return wz_cli_fail(CMD, &diag);
	wzt_cache_stream *in;
	if (wzt_cache_stream_open(trace, &in, &diag)) {
		wzc_profile_free(prof);
		return wz_cli_fail(CMD, &diag);
	}
	/* the shape and metadata alone: the values come a block at a time */
	wzc_window w = wz_codec_window(wzt_cache_stream_info(in), trace);
	int nthreads = threads > 0 ? (int)threads : wz_cores();
	/* --rate: the grid that writes at most the rate on a sample of this
	 * trace's own blocks, packed as that grid's wz records */
	wzc_wzx_rate_fit fit = { 0 };
	wz_err e = WZ_OK;
	if (!grid && !strcmp(fit_by, "sample")) {
		e = wzc_wzx_fit_rate(prof, &w, from_stream, in, rate, nthreads, &fit, &diag);
		if (!e)
			wzc_format_wz_grid(fit.record_bytes, w.R, w.P, &fmt);
	}
	wzc_wzx_pack_result res;
	if (!e)
		e = wzc_wzx_pack_file(prof, &fmt, &w, from_stream, in, nthreads, out, &res, &diag);
	if (!e && fit.sample_blocks > 0)
		fprintf(strcmp(out, "-") ? stdout : stderr,
			"%s: --rate %g: the profile's grid, %zu bytes (expected %.3f b/v), writes %.3f "
			"b/v on a sample of %ld blocks; grid %zu bytes writes %.3f (%d grid%s tried)\n",
			strcmp(out, "-") ? out : "standard output", rate, fit.profile_bytes,
			fit.profile_estimate, fit.profile_sample_bits, fit.sample_blocks, fit.record_bytes,
			fit.sample_bits, fit.probes, fit.probes == 1 ? "" : "s");
	if (!e) {
		const wzc_wzx_stats *st = &res.stats;
		size_t B = res.record_bytes;
		double values = (double)w.L * w.T * (w.R + w.P);
		/* the summary goes to standard error when the container goes to
		 * standard output */
		fprintf(strcmp(out, "-") ? stdout : stderr,
			"%s: %d layers x %d tokens, grid %zu bytes/token/layer (%.3f b/v); %zu bytes = "
			"%.3f bits/value (payload %.3f, header %zu B, index %zu B, %d blocks, %d raw; "
			"%d thread%s)\n",
			strcmp(out, "-") ? out : "standard output", w.L, w.T, B, B * 8.0 / (w.R + w.P),
			st->total, st->total * 8.0 / values, st->payload * 8.0 / values, st->header,
			st->index, st->nblocks, st->nraw, nthreads, nthreads == 1 ? "" : "s");
	}
	wzt_cache_stream_close(in);
	wzc_profile_free(prof);
	return e ? wz_cli_fail(CMD, &diag) : 0;
}
