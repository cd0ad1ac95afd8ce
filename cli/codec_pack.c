/* `wzplan codec pack` and `wzplan codec unpack`: a cache trace to a wzx
 * offload container and back to wz GPU-tier records or bf16 values
 * (docs/wzx-format.md). */
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
	       "records, so unpacking gives exactly them.  Prints the bytes written.\n");
}

static void help_unpack(void)
{
	printf("Usage: wzplan codec unpack --in FILE.wzx --profile PROFILE --out FILE\n"
	       "                           [--to wz|bf16] [--layer L --block B]\n"
	       "\n"
	       "Reads a wzx container, checking every block's checksum, and writes the\n"
	       "wz GPU-tier records it holds ([L][T][record bytes], --to wz, the default)\n"
	       "or the decoded values ([L][T][R + P] little-endian bf16, latent first).\n"
	       "--layer and --block read one block of 64 tokens through the index.  A\n"
	       "damaged or foreign container exits with status 2.\n");
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

/* Records [n][B] of one layer to bf16 values [n][R + P]. */
static void to_bf16(const wzc_codec *codec, int layer, int n, int R, int P, const uint8_t *rec,
		    uint16_t *dst, float *lat, float *rope)
{
	wzc_decode_layer(codec, layer, n, rec, lat, rope);
	for (int t = 0; t < n; t++) {
		uint16_t *d = dst + (size_t)t * (R + P);
		for (int i = 0; i < R; i++)
			d[i] = wzc_bf16_from_f32(lat[(size_t)t * R + i]);
		for (int i = 0; i < P; i++)
			d[R + i] = wzc_bf16_from_f32(rope[(size_t)t * P + i]);
	}
}

int wz_codec_unpack(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "in", required_argument, NULL, 'i' },	   { "profile", required_argument, NULL, 'p' },
		{ "out", required_argument, NULL, 'o' },   { "to", required_argument, NULL, 'T' },
		{ "layer", required_argument, NULL, 'l' }, { "block", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },	   { NULL, 0, NULL, 0 },
	};
	const char *in = NULL, *profile = NULL, *out = NULL, *to = "wz";
	long layer = -1, block = -1;
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":i:p:o:T:l:b:h", longopts, NULL)) != -1) {
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
		case 'h': help_unpack(); return 0;
		case ':': return wz_cli_bad_option(CMD, ':', argv);
		default: return wz_cli_bad_option(CMD, '?', argv);
		}
	}
	if (optind < argc)
		return wz_cli_usage(CMD, "unexpected argument '%s'", argv[optind]);
	if (!in || !profile || !out)
		return wz_cli_usage(CMD, "unpack needs --in, --profile and --out");
	if (strcmp(to, "wz") && strcmp(to, "bf16"))
		return wz_cli_usage(CMD, "--to: wz or bf16, not '%s'", to);
	if ((layer < 0) != (block < 0))
		return wz_cli_usage(CMD, "--layer and --block go together");
	wz_diag diag;
	wzc_profile *prof;
	if (wzc_profile_read(profile, &prof, &diag))
		return wz_cli_fail(CMD, &diag);
	char *bytes = NULL;
	size_t n;
	wzc_wzx_reader *r = NULL;
	wzc_wzx *x = NULL;
	uint8_t *rec = NULL, *outb = NULL;
	float *lat = NULL, *rope = NULL;
	size_t nout = 0;
	wz_err e = wz_read_file(in, (size_t)1 << 40, &bytes, &n, &diag);
	if (!e)
		e = wzc_wzx_open(bytes, n, in, &r, &diag);
	if (!e)
		e = wzc_wzx_coder_for(r, prof, &x, &diag);
	const wzc_wzx_info *info = r ? wzc_wzx_reader_info(r) : NULL;
	int L0 = 0, L1 = info ? info->L : 0, T = info ? info->T : 0, ntok = 0;
	if (!e && layer >= 0) {
		L0 = (int)layer;
		L1 = L0 + 1;
	}
	size_t B = info ? info->record_bytes : 0;
	if (!e) {
		size_t span = layer >= 0 ? 64 : (size_t)T;
		rec = malloc(B * span * (L1 - L0));
		if (!rec)
			e = wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
	}
	if (!e && layer >= 0)
		e = wzc_wzx_read_block(r, x, (int)layer, (int)block, rec, &ntok, &diag);
	else if (!e)
		e = wzc_wzx_read_all(r, x, rec, &diag);
	int span = layer >= 0 ? ntok : T;
	outb = rec;
	nout = B * (size_t)span * (L1 - L0);
	if (!e && !strcmp(to, "bf16")) {
		wzc_format fmt = { .id = WZC_FMT_WZ, .rate_bits = B * 8.0 / (info->R + info->P) };
		wzc_codec *codec = NULL;
		e = wzc_codec_new(&fmt, info->L, info->R, info->P, prof, &codec, &diag);
		nout = sizeof(uint16_t) * (size_t)span * (info->R + info->P) * (L1 - L0);
		outb = e ? NULL : malloc(nout);
		lat = malloc(sizeof(float) * (size_t)span * info->R);
		rope = malloc(sizeof(float) * ((size_t)span * info->P + 1));
		if (!e && (!outb || !lat || !rope))
			e = wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		for (int l = L0; !e && l < L1; l++)
			to_bf16(codec, l, span, info->R, info->P, rec + B * (size_t)span * (l - L0),
				(uint16_t *)outb + (size_t)span * (info->R + info->P) * (l - L0), lat, rope);
		wzc_codec_free(codec);
	}
	if (!e)
		e = wz_write_file_atomic(out, outb, nout, &diag);
	if (!e)
		printf("%s: %d layer%s x %d tokens as %s, %zu bytes\n", out, L1 - L0,
		       L1 - L0 == 1 ? "" : "s", span, to, nout);
	if (outb != rec)
		free(outb);
	free(rec);
	free(lat);
	free(rope);
	wzc_wzx_free(x);
	wzc_wzx_reader_free(r);
	free(bytes);
	wzc_profile_free(prof);
	return e ? wz_cli_fail(CMD, &diag) : 0;
}
