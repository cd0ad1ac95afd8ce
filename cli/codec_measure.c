/* `wzplan codec measure`: the options, the measurement (codec/measure_run.c
 * does the work on every core), its table (codec_measure_table.c) and the
 * archive (codec_record.c). */
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/codec_cli.h"
#include "cli/codec_record.h"
#include "codec/format.h"
#include "codec/measure_run.h"
#include "codec/profile.h"

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

/* Progress lines from the measuring threads stay whole. */
static pthread_mutex_t progress_lock = PTHREAD_MUTEX_INITIALIZER;

void wz_codec_progress(void *ud, const char *window, const char *what)
{
	(void)ud;
	pthread_mutex_lock(&progress_lock);
	fprintf(stderr, "wzplan codec: %s: %s\n", window, what);
	pthread_mutex_unlock(&progress_lock);
}

int wz_codec_measure(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "trace", required_argument, NULL, 't' },
		{ "profile", required_argument, NULL, 'p' },
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
	wz_codec_run_opts o;
	wz_codec_run_opts_default(&o);
	int iso = 0, per_layer = 0, c, rc;
	long threads = 0;
	wz_diag diag;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:p:F:ilj:b:s:f:o:h", longopts, NULL)) != -1) {
		if (wz_codec_run_option(c, argc, argv, &o, &rc)) {
			if (rc)
				return rc;
			continue;
		}
		switch (c) {
		case 'i':
			iso = 1;
			break;
		case 'l':
			per_layer = 1;
			break;
		case 'j':
			if ((rc = wz_cli_long(CMD, "--threads", optarg, 1, 1024, &threads)))
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
	if (!o.npaths || !o.formats)
		return wz_cli_usage(CMD, "measure needs --trace and --formats");
	/* fp8-mix is every ratio's reference and int4-g64 the second iso
	 * reference: measured even when not listed (not printed then). */
	wzc_format fmts[MAX_FORMATS];
	int shown[MAX_FORMATS] = { 0 }, nf = 0, need_profile = 0, has_fp8 = -1, has_int4 = -1;
	char **items;
	int nitems = wz_split_list(o.formats, &items);
	if (nitems <= 0)
		return wz_cli_usage(CMD, "--formats: an empty list");
	for (int i = 0; i < nitems; i++) {
		if (nf >= MAX_FORMATS - 2) {
			wz_strlist_free(items, nitems);
			return wz_cli_usage(CMD, "--formats: at most %d", MAX_FORMATS - 2);
		}
		if (wzc_format_parse(items[i], &fmts[nf], &diag)) {
			wz_strlist_free(items, nitems);
			return wz_cli_fail(CMD, &diag);
		}
		for (int j = 0; j < nf; j++)
			if (!strcmp(fmts[j].name, fmts[nf].name)) {
				rc = wz_cli_usage(CMD, "--formats: %s is listed twice", fmts[nf].name);
				wz_strlist_free(items, nitems);
				return rc;
			}
		need_profile |= wzc_format_needs_profile(fmts[nf].id);
		shown[nf++] = 1;
	}
	wz_strlist_free(items, nitems);
	for (int i = 0; i < nf; i++) {
		if (fmts[i].id == WZC_FMT_FP8_MIX)
			has_fp8 = i;
		if (fmts[i].id == WZC_FMT_INT4_G64)
			has_int4 = i;
	}
	if (has_fp8 < 0) {
		wzc_format_parse("fp8-mix", &fmts[nf], &diag);
		has_fp8 = nf++;
	}
	if (iso && has_int4 < 0) {
		wzc_format_parse("int4-g64", &fmts[nf], &diag);
		has_int4 = nf++;
	}
	if ((need_profile || iso) && !o.profile_path)
		return wz_cli_usage(CMD, "wz formats and --iso need --profile");
	wzc_profile *prof = NULL;
	if (o.profile_path && wzc_profile_read(o.profile_path, &prof, &diag))
		return wz_cli_fail(CMD, &diag);
	wzt_cache_trace **traces = calloc((size_t)o.npaths, sizeof *traces);
	wzc_window *windows = calloc((size_t)o.npaths, sizeof *windows);
	/* Rows per window: the formats, then the sweep's rates. */
	int per = nf + (iso ? WZC_ISO_N : 0);
	wz_codec_measured *rows = calloc((size_t)o.npaths * per, sizeof *rows);
	wz_codec_measured *shown_rows = calloc((size_t)o.npaths * per, sizeof *rows);
	wzc_run *run = NULL;
	rc = !traces || !windows || !rows || !shown_rows;
	if (rc) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail(CMD, &diag);
	} else {
		rc = wz_codec_load_traces(o.paths, o.npaths, traces);
	}
	for (int i = 0; !rc && i < o.npaths; i++)
		windows[i] = wz_codec_window(traces[i], o.paths[i]);
	if (!rc) {
		wzc_run_spec spec = { windows, o.npaths, fmts, nf, has_fp8, prof, iso, per_layer,
				      threads > 0 ? (int)threads : wzc_cores(), (int)o.nboot,
				      (uint64_t)o.seed, wz_codec_progress, NULL, 0 };
		if (wzc_run_measure(&spec, &run, &diag))
			rc = wz_cli_fail(CMD, &diag);
	}
	char iso_names[WZC_ISO_N][16];
	for (int k = 0; k < WZC_ISO_N; k++)
		snprintf(iso_names[k], sizeof iso_names[k], "wz-%g", wzc_iso_rates[k]);
	int nrows = 0, nshown = 0;
	for (int i = 0; !rc && i < o.npaths; i++)
		for (int f = 0; f < per; f++) {
			int sweep = f >= nf;
			wz_codec_measured *r = &rows[nrows++];
			*r = (wz_codec_measured){
				windows[i].name, windows[i].split,
				sweep ? iso_names[f - nf] : fmts[f].name, o.paths[i], traces[i],
				sweep ? &run->sweep[(size_t)i * WZC_ISO_N + f - nf]
				      : &run->cells[(size_t)i * nf + f],
				&run->cells[(size_t)i * nf + has_fp8], sweep
			};
			/* Only the listed formats (and the sweep) are printed. */
			if (sweep || shown[f])
				shown_rows[nshown++] = *r;
		}
	if (!rc) {
		int wide = o.how == WZP_CSV || o.how == WZP_JSON;
		wzp_table *t = wz_codec_measure_table(shown_rows, nshown, iso, per_layer, wide,
						      (int)o.nboot, (uint64_t)o.seed);
		wz_buf out = { 0 };
		if (!t || wzp_table_render(t, o.how, &out)) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_cli_fail(CMD, &diag);
		} else {
			rc = wz_cli_emit(CMD, o.output, wz_buf_str(&out));
		}
		wz_buf_free(&out);
		wzp_table_free(t);
	}
	/* Into the archive (cli/codec_record.c): every row, listed or not. */
	if (!rc)
		rc = wz_codec_record(argc, argv, o.profile_path, o.seed, o.nboot, o.formats, rows, nrows);
	wzc_run_free(run);
	for (int i = 0; traces && i < o.npaths; i++)
		wzt_cache_trace_free(traces[i]);
	free(traces);
	free(windows);
	free(rows);
	free(shown_rows);
	wzc_profile_free(prof);
	return rc;
}
