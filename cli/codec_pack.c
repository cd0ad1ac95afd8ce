/* `wzplan codec pack`: a cache trace to a wzx offload container
 * (docs/wzx-format.md); cli/codec_unpack.c reads it back. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/codec_cli.h"
#include "codec/fpconv.h"
#include "codec/profile.h"
#include "codec/wzx.h"
#include "common/wz_io.h"

static void help_pack(void)
{
	printf("Usage: wzplan codec pack --trace FILE --profile PROFILE (--rate BITS | --grid wz-BITS)\n"
	       "                         --out FILE.wzx\n"
	       "\n"
	       "Encodes a cache trace in the wz GPU-tier grid and writes it as a wzx offload\n"
	       "container: the records' digits entropy-coded (rANS, static tables from the\n"
	       "profile) in blocks of 64 tokens x one layer, with a checksum per block and\n"
	       "an index for random access.  --rate chooses the grid whose expected size\n"
	       "is about BITS bits/value (wzx-BITS); --grid wz-BITS packs that GPU tier's\n"
	       "records, so unpacking gives exactly them (give one of the two).  Prints the\n"
	       "bytes written.\n");
}

int wz_codec_pack(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "trace", required_argument, NULL, 't' }, { "profile", required_argument, NULL, 'p' },
		{ "rate", required_argument, NULL, 'r' },  { "grid", required_argument, NULL, 'g' },
		{ "out", required_argument, NULL, 'o' },   { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *trace = NULL, *profile = NULL, *grid = NULL, *out = NULL;
	double rate = 0;
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:p:r:g:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't': trace = optarg; break;
		case 'p': profile = optarg; break;
		case 'g': grid = optarg; break;
		case 'o': out = optarg; break;
		case 'r':
			if ((rc = wz_cli_double(CMD, "--rate", optarg, WZC_WZ_MIN_BITS, WZC_WZ_MAX_BITS, &rate)))
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
	wzt_cache_trace *tr;
	const char *paths[1] = { trace };
	if ((rc = wz_codec_load_traces(paths, 1, &tr))) {
		wzc_profile_free(prof);
		return rc;
	}
	wzc_window w = wz_codec_window(tr, trace);
	wzc_codec *codec = NULL;
	wzc_wzx *x = NULL;
	uint8_t *rec = NULL, *buf = NULL;
	wz_err e = wzc_profile_check_window(prof, &w, &diag);
	if (!e)
		e = wzc_codec_new(&fmt, w.L, w.R, w.P, prof, &codec, &diag);
	if (!e)
		e = wzc_wzx_of_codec(codec, &x, &diag);
	size_t B = x ? wzc_wzx_record_bytes(x) : 0, per = (size_t)w.T * B, n = 0;
	size_t cap = wzc_wzx_bound(w.L, w.T, w.R, w.P, B, strlen(prof->model));
	wzc_wzx_stats st;
	if (!e && (!(rec = malloc(per * w.L)) || !(buf = malloc(cap ? cap : 1))))
		e = wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
	for (int l = 0; !e && l < w.L; l++)
		e = wzc_encode_layer(codec, l, w.T, w.latent + (size_t)l * w.T * w.R,
				     w.rope + (size_t)l * w.T * w.P, rec + per * l, &diag);
	if (!e)
		e = wzc_wzx_write(x, w.T, rec, buf, cap, &n, &st, &diag);
	if (!e)
		e = wz_write_file_atomic(out, buf, n, &diag);
	if (!e) {
		double values = (double)w.L * w.T * (w.R + w.P);
		printf("%s: %d layers x %d tokens, grid %zu bytes/token/layer (%.3f b/v); %zu bytes = "
		       "%.3f bits/value (payload %.3f, header %zu B, index %zu B, %d blocks, %d raw)\n",
		       out, w.L, w.T, B, B * 8.0 / (w.R + w.P), n, n * 8.0 / values,
		       st.payload * 8.0 / values, st.header, st.index, st.nblocks, st.nraw);
	}
	free(rec);
	free(buf);
	wzc_wzx_free(x);
	wzc_codec_free(codec);
	wzt_cache_trace_free(tr);
	wzc_profile_free(prof);
	return e ? wz_cli_fail(CMD, &diag) : 0;
}
