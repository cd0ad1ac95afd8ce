/* `wzplan codec measure`: every trace window in every listed format, one
 * row per window and format with bootstrap intervals, and optionally the
 * iso-quality bits of wz against each format. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/codec_cli.h"
#include "cli/codec_record.h"
#include "codec/format.h"
#include "codec/metrics.h"
#include "codec/profile.h"

static void help_measure(void)
{
	printf("Usage: wzplan codec measure --trace FILE... --formats LIST [options]\n"
	       "\n"
	       "Encodes every trace window in each format, decodes, and prints one row per\n"
	       "window and format: bits/value counted from the written bytes, nmse (both\n"
	       "parts; also latent and position part) and SQNR, with queries the attention\n"
	       "KL and output error, the ratio to fp8-mix with a paired bootstrap 95%%\n"
	       "interval over tokens (queries for KL), the share of tokens where the format\n"
	       "beats fp8-mix, and the gap in dB to the Gaussian rate-distortion bound at\n"
	       "the same rate for the window's measured covariance.\n"
	       "\n"
	       "Options:\n"
	       "  --trace FILE        a trace window (repeat, or several after one)\n"
	       "  --profile FILE      the wz profile (needed for wz-<bits> formats)\n"
	       "  --formats LIST      e.g. fp8-mix,int4-g64,wz-4.97,wz-5.44,wz-6.31\n"
	       "  --iso               also the iso-quality bits of wz against fp8-mix and\n"
	       "                      int4-g64 (a rate sweep, slower)\n"
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

/* One measured (window, format). */
typedef struct {
	const char *window, *split;
	const char *format;
	wzc_errors *e;
	double gap_db;
	wzc_ci iso[2];     /* wz rate at this format's nmse / KL quality (--iso) */
	int iso_censored[2];
} measure_row;

/* Adds value [lo, hi]: one cell in text and Markdown, three in CSV/JSON. */
static void ci_cells(wzp_table *t, int wide, wzc_ci ci, const char *fmt)
{
	char disp[128], a[32], b[32], c[32];
	if (isnan(ci.value)) {
		for (int i = 0; i < (wide ? 3 : 1); i++)
			wzp_table_empty(t);
		return;
	}
	snprintf(a, sizeof a, fmt, ci.value);
	if (wide) {
		wzp_table_num(t, ci.value, a);
		snprintf(b, sizeof b, fmt, ci.lo);
		snprintf(c, sizeof c, fmt, ci.hi);
		if (isnan(ci.lo))
			wzp_table_empty(t);
		else
			wzp_table_num(t, ci.lo, b);
		if (isnan(ci.hi))
			wzp_table_empty(t);
		else
			wzp_table_num(t, ci.hi, c);
		return;
	}
	snprintf(b, sizeof b, fmt, ci.lo);
	snprintf(c, sizeof c, fmt, ci.hi);
	snprintf(disp, sizeof disp, "%s [%s, %s]", a, isnan(ci.lo) ? "?" : b, isnan(ci.hi) ? "?" : c);
	wzp_table_num(t, ci.value, disp);
}

static void ci_columns(wzp_table *t, int wide, const char *key, const char *label)
{
	char k[64];
	wzp_table_column(t, key, label, 1);
	if (!wide)
		return;
	snprintf(k, sizeof k, "%s_lo", key);
	wzp_table_column(t, k, "", 1);
	snprintf(k, sizeof k, "%s_hi", key);
	wzp_table_column(t, k, "", 1);
}

static wzp_table *measure_table(measure_row *rows, int n, int iso, int wide, int nboot,
				uint64_t seed, const measure_row *const *refs)
{
	wzp_table *t = wzp_table_new("Cache-format quality per window (95% bootstrap intervals)");
	if (!t)
		return NULL;
	wzp_table_column(t, "window", "Window", 0);
	wzp_table_column(t, "split", "Split", 0);
	wzp_table_column(t, "format", "Format", 0);
	wzp_table_column(t, "bits_per_value", "Bits/value", 1);
	ci_columns(t, wide, "nmse", "nmse");
	wzp_table_column(t, "sqnr_db", "SQNR dB", 1);
	wzp_table_column(t, "nmse_latent", "nmse latent", 1);
	wzp_table_column(t, "nmse_rope", "nmse rope", 1);
	ci_columns(t, wide, "kl", "Attention KL");
	wzp_table_column(t, "out_err", "Output err", 1);
	ci_columns(t, wide, "nmse_vs_fp8", "nmse / fp8-mix");
	ci_columns(t, wide, "kl_vs_fp8", "KL / fp8-mix");
	wzp_table_column(t, "tokens_better", "Tokens better", 1);
	wzp_table_column(t, "bound_gap_db", "dB from bound", 1);
	if (iso) {
		ci_columns(t, wide, "iso_bits_nmse", "wz bits at equal nmse");
		ci_columns(t, wide, "iso_bits_kl", "wz bits at equal KL");
		wzp_table_column(t, "fewer_bits", "Fewer bits (nmse)", 1);
	}
	for (int i = 0; i < n; i++) {
		measure_row *r = &rows[i];
		const wzc_errors *ref = refs[i] ? refs[i]->e : NULL;
		char d[48];
		wzp_table_row(t);
		wzp_table_str(t, r->window);
		wzp_table_str(t, r->split ? r->split : "");
		wzp_table_str(t, r->format);
		snprintf(d, sizeof d, "%.3f", r->e->bits_per_value);
		wzp_table_num(t, r->e->bits_per_value, d);
		wzc_ci nm = wzc_metric_ci(r->e, WZC_M_NMSE, nboot, seed);
		ci_cells(t, wide, nm, "%.3g");
		snprintf(d, sizeof d, "%.2f", wzc_sqnr_db(nm.value));
		wzp_table_num(t, wzc_sqnr_db(nm.value), d);
		double nl = wzc_metric_ci(r->e, WZC_M_NMSE_LATENT, 0, seed).value;
		double nr = wzc_metric_ci(r->e, WZC_M_NMSE_ROPE, 0, seed).value;
		snprintf(d, sizeof d, "%.3g", nl);
		wzp_table_num(t, nl, d);
		snprintf(d, sizeof d, "%.3g", nr);
		wzp_table_num(t, nr, d);
		ci_cells(t, wide, wzc_metric_ci(r->e, WZC_M_KL, nboot, seed), "%.3g");
		double oe = wzc_metric_ci(r->e, WZC_M_OUT_ERR, 0, seed).value;
		if (isnan(oe)) {
			wzp_table_empty(t);
		} else {
			snprintf(d, sizeof d, "%.3g", oe);
			wzp_table_num(t, oe, d);
		}
		wzc_ci none = { NAN, NAN, NAN };
		ci_cells(t, wide, ref ? wzc_ratio_ci(r->e, ref, WZC_M_NMSE, nboot, seed) : none, "%.3f");
		ci_cells(t, wide, ref ? wzc_ratio_ci(r->e, ref, WZC_M_KL, nboot, seed) : none, "%.3f");
		double share = ref ? wzc_share_better(r->e, ref, WZC_M_NMSE) : NAN;
		if (isnan(share) || r->e == ref) {
			wzp_table_empty(t);
		} else {
			snprintf(d, sizeof d, "%.0f%%", 100 * share);
			wzp_table_num(t, share, d);
		}
		snprintf(d, sizeof d, "%.2f", r->gap_db);
		wzp_table_num(t, r->gap_db, d);
		if (iso) {
			const char *f0 = r->iso_censored[0] ? "<=%.2f" : "%.2f";
			const char *f1 = r->iso_censored[1] ? "<=%.2f" : "%.2f";
			ci_cells(t, wide, r->iso[0], f0);
			ci_cells(t, wide, r->iso[1], f1);
			double fewer = r->e->bits_per_value / r->iso[0].value;
			if (isnan(fewer)) {
				wzp_table_empty(t);
			} else {
				/* a censored iso rate (already beaten at the sweep's
				 * lowest rate) makes this a lower bound */
				snprintf(d, sizeof d, r->iso_censored[0] ? ">=%.2fx" : "%.2fx", fewer);
				wzp_table_num(t, fewer, d);
			}
		}
	}
	wzp_table_note(t, "bits/value from the bytes each encoder wrote; nmse over both parts; "
			  "ratios and intervals paired over tokens (queries for KL).");
	for (int i = 0; i < n; i++)
		if (rows[i].e->payload_bytes)
			wzp_table_note(t, "%s on %s: the wzx container (header, index, block headers and "
					  "checksums included) %.3f bits/value; block payloads alone %.3f.",
				       rows[i].format, rows[i].window, rows[i].e->bits_per_value,
				       rows[i].e->payload_bytes * 8.0 / (double)rows[i].e->values);
	return t;
}

static wz_err measure_one(const wzc_window *w, const wzc_format *f, const wzc_profile *prof,
			  wzc_errors **e, wz_diag *diag)
{
	wzc_codec *codec;
	wz_err rc = wzc_codec_new(f, w->L, w->R, w->P, prof, &codec, diag);
	if (!rc)
		rc = wzc_measure(w, codec, e, diag);
	wzc_codec_free(codec);
	return rc;
}

/* The wz rate sweep for iso-quality bits. */
#define ISO_N 17
static const double iso_rates[ISO_N] = { 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5,
					 7.0, 7.5, 8.0, 8.5, 9.0, 10.0, 11.0, 12.0 };

int wz_codec_measure(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "trace", required_argument, NULL, 't' },
		{ "profile", required_argument, NULL, 'p' },
		{ "formats", required_argument, NULL, 'F' },
		{ "iso", no_argument, NULL, 'i' },
		{ "boot", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *paths[MAX_TRACES], *profile_path = NULL, *formats = NULL, *output = NULL;
	int npaths = 0, iso = 0, c, rc;
	long nboot = WZC_BOOT_DEFAULT, seed = 1;
	wzp_output how = WZP_TEXT;
	wz_diag diag;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:p:F:ib:s:f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't':
			if ((rc = wz_codec_add_traces(argc, argv, paths, &npaths)))
				return rc;
			break;
		case 'p':
			profile_path = optarg;
			break;
		case 'F':
			formats = optarg;
			break;
		case 'i':
			iso = 1;
			break;
		case 'b':
			if ((rc = wz_cli_long(CMD, "--boot", optarg, 0, 100000, &nboot)))
				return rc;
			break;
		case 's':
			if ((rc = wz_cli_long(CMD, "--seed", optarg, 0, 2147483647L, &seed)))
				return rc;
			break;
		case 'f':
			if (wzp_output_parse(optarg, &how, &diag))
				return wz_cli_usage(CMD, "%s", diag.msg);
			break;
		case 'o':
			output = optarg;
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
	if (!npaths || !formats)
		return wz_cli_usage(CMD, "measure needs --trace and --formats");
	/* fp8-mix is every ratio's reference and int4-g64 the second iso
	 * reference: measured even when not listed (not printed then). */
	wzc_format fmts[MAX_FORMATS];
	int shown[MAX_FORMATS] = { 0 }, nf = 0, need_profile = 0, has_fp8 = -1, has_int4 = -1;
	char **items;
	int nitems = wz_split_list(formats, &items);
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
		need_profile |= fmts[nf].id == WZC_FMT_WZ || fmts[nf].id == WZC_FMT_WZX;
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
	if ((need_profile || iso) && !profile_path)
		return wz_cli_usage(CMD, "wz formats and --iso need --profile");
	wzc_profile *prof = NULL;
	if (profile_path && wzc_profile_read(profile_path, &prof, &diag))
		return wz_cli_fail(CMD, &diag);
	wzt_cache_trace **traces = calloc((size_t)npaths, sizeof *traces);
	measure_row *rows = calloc((size_t)npaths * nf, sizeof *rows);
	const measure_row **refs = calloc((size_t)npaths * nf, sizeof *refs);
	if (!traces || !rows || !refs) {
		free(traces);
		free(rows);
		free(refs);
		wzc_profile_free(prof);
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail(CMD, &diag);
	}
	rc = wz_codec_load_traces(paths, npaths, traces);
	int nrows = 0, nshown = 0;
	wz_err e = WZ_OK;
	for (int i = 0; !rc && !e && i < npaths; i++) {
		wzc_window w = wz_codec_window(traces[i], paths[i]);
		if (prof && (e = wzc_profile_check_window(prof, &w, &diag)))
			break;
		wzc_spectrum *sp = NULL;
		if ((e = wzc_spectrum_of(&w, &sp, &diag)))
			break;
		int first = nrows;
		for (int f = 0; !e && f < nf; f++) {
			fprintf(stderr, "wzplan codec: %s: %s\n", w.name, fmts[f].name);
			measure_row *r = &rows[nrows];
			e = measure_one(&w, &fmts[f], prof, &r->e, &diag);
			if (e)
				break;
			r->window = w.name;
			r->split = w.split;
			r->format = fmts[f].name;
			r->gap_db = 10 * log10(wzc_metric_ci(r->e, WZC_M_NMSE, 0, 1).value /
					       wzc_spectrum_bound_nmse(sp, r->e->bits_per_value));
			nrows++;
		}
		wzc_spectrum_free(sp);
		if (!e && iso) {
			wzc_errors *sweep[ISO_N] = { 0 };
			for (int k = 0; !e && k < ISO_N; k++) {
				wzc_format f;
				char name[32];
				snprintf(name, sizeof name, "wz-%g", iso_rates[k]);
				fprintf(stderr, "wzplan codec: %s: iso sweep %s\n", w.name, name);
				wzc_format_parse(name, &f, &diag);
				e = measure_one(&w, &f, prof, &sweep[k], &diag);
			}
			for (int f = first; !e && f < nrows; f++) {
				/* Bits the sweep really wrote, so interpolation is in
				 * counted bits/value. */
				double rates[ISO_N];
				for (int k = 0; k < ISO_N; k++)
					rates[k] = sweep[k]->bits_per_value;
				rows[f].iso[0] = wzc_iso_bits(rates, sweep, ISO_N, rows[f].e, WZC_M_NMSE,
							      (int)nboot, (uint64_t)seed, &rows[f].iso_censored[0]);
				rows[f].iso[1] = wzc_iso_bits(rates, sweep, ISO_N, rows[f].e, WZC_M_KL,
							      (int)nboot, (uint64_t)seed, &rows[f].iso_censored[1]);
			}
			for (int k = 0; k < ISO_N; k++)
				wzc_errors_free(sweep[k]);
		}
		for (int f = first; f < nrows; f++)
			refs[f] = &rows[first + has_fp8];
	}
	if (!rc && e)
		rc = wz_cli_fail(CMD, &diag);
	if (!rc) {
		/* Only the listed formats are printed. */
		measure_row *out_rows = calloc((size_t)nrows + 1, sizeof *out_rows);
		const measure_row **out_refs = calloc((size_t)nrows + 1, sizeof *out_refs);
		for (int r = 0; out_rows && out_refs && r < nrows; r++)
			if (shown[r % nf]) {
				out_rows[nshown] = rows[r];
				out_refs[nshown++] = refs[r];
			}
		int wide = how == WZP_CSV || how == WZP_JSON;
		wzp_table *t = out_rows && out_refs
				       ? measure_table(out_rows, nshown, iso, wide, (int)nboot,
						       (uint64_t)seed, out_refs)
				       : NULL;
		wz_buf out = { 0 };
		if (!t || wzp_table_render(t, how, &out)) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_cli_fail(CMD, &diag);
		} else {
			rc = wz_cli_emit(CMD, output, wz_buf_str(&out));
		}
		wz_buf_free(&out);
		wzp_table_free(t);
		free(out_rows);
		free(out_refs);
	}
	/* Into the archive (cli/codec_record.c): every row, listed or not. */
	wz_codec_measured *rec = rc ? NULL : calloc((size_t)nrows + 1, sizeof *rec);
	for (int r = 0; rec && r < nrows; r++)
		rec[r] = (wz_codec_measured){ rows[r].window, rows[r].split, rows[r].format,
					      paths[r / nf], traces[r / nf], rows[r].e, refs[r]->e,
					      rows[r].gap_db, { rows[r].iso[0], rows[r].iso[1] },
					      { rows[r].iso_censored[0], rows[r].iso_censored[1] } };
	if (!rc && !rec)
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
	if (!rc)
		rc = rec ? wz_codec_record(argc, argv, profile_path, seed, nboot, formats, rec, nrows)
			 : wz_cli_fail(CMD, &diag);
	free(rec);
	for (int r = 0; r < nrows; r++)
		wzc_errors_free(rows[r].e);
	for (int i = 0; i < npaths; i++)
		wzt_cache_trace_free(traces[i]);
	free(traces);
	free(rows);
	free(refs);
	wzc_profile_free(prof);
	return rc;
}

