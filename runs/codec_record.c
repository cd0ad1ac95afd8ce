/* Codec measurements into the archive: inputs, window provenance and every
 * measured row with its interval and bits/value (codec_record.h). */
#include "runs/codec_record.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "runs/measure.h"
#include "runs/say.h"
#include "runs/schema.h"

#define CMD "codec"

/* The path as given without its folders: what the proposal prints, and the
 * same whether verify reads the file by a relative or absolute path. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void put(wza_run *run, const wz_codec_measured *r, const char *metric, wzc_ci ci,
		const char *hash)
{
	if (!isnan(ci.value))
		wza_run_codec(run, r->window, r->format, metric, ci.value, ci.lo, ci.hi,
			      r->cell->e->bits_per_value, hash);
}

static wzc_ci point(double v)
{
	wzc_ci ci = { v, NAN, NAN };
	return ci;
}

/* Whether a measured (not sweep) row of r's window has r's format: then a
 * sweep row at that rate leaves the bound, the same figure, to it. */
static int measured_too(const wz_codec_measured *rows, int nrows, const wz_codec_measured *r)
{
	for (int i = 0; i < nrows; i++)
		if (!rows[i].sweep && !strcmp(rows[i].window, r->window) &&
		    !strcmp(rows[i].format, r->format))
			return 1;
	return 0;
}

static void record_row(wza_run *run, const wz_codec_measured *r, int nboot, uint64_t seed,
		       const char *hash, int bound_elsewhere)
{
	static const char *const iso_names[2][3] = {
		{ "iso_bits_nmse", "fewer_bits_nmse", "iso_censored_nmse" },
		{ "iso_bits_kl", "fewer_bits_kl", "iso_censored_kl" },
	};
	const wzc_errors *e = r->cell->e;
	const wzc_errors *ref = r->ref ? r->ref->e : NULL;
	int kl = wzc_metric_available(e, WZC_M_KL);
	if (r->sweep) {
		/* The iso sweep: what the iso-quality bits were read from, and
		 * the bound at each of its rates. */
		put(run, r, "sweep_nmse", wzc_metric_ci(e, WZC_M_NMSE, nboot, seed), hash);
		if (kl)
			put(run, r, "sweep_kl", wzc_metric_ci(e, WZC_M_KL, nboot, seed), hash);
		if (!bound_elsewhere)
			put(run, r, "nmse_bound", point(r->cell->bound_nmse), hash);
		return;
	}
	wzc_ci nmse = wzc_metric_ci(e, WZC_M_NMSE, nboot, seed);
	put(run, r, "nmse", nmse, hash);
	wzc_ci sqnr = { wzc_sqnr_db(nmse.value), wzc_sqnr_db(nmse.hi), wzc_sqnr_db(nmse.lo) };
	put(run, r, "sqnr_db", sqnr, hash);
	put(run, r, "nmse_latent", wzc_metric_ci(e, WZC_M_NMSE_LATENT, nboot, seed), hash);
	put(run, r, "nmse_rope", wzc_metric_ci(e, WZC_M_NMSE_ROPE, nboot, seed), hash);
	if (kl) {
		put(run, r, "kl", wzc_metric_ci(e, WZC_M_KL, nboot, seed), hash);
		put(run, r, "out_err", wzc_metric_ci(e, WZC_M_OUT_ERR, nboot, seed), hash);
	}
	if (ref && ref != e) {
		put(run, r, "nmse_vs_fp8", wzc_ratio_ci(e, ref, WZC_M_NMSE, nboot, seed), hash);
		put(run, r, "tokens_better", point(wzc_share_better(e, ref, WZC_M_NMSE)), hash);
		if (kl) {
			put(run, r, "kl_vs_fp8", wzc_ratio_ci(e, ref, WZC_M_KL, nboot, seed), hash);
			put(run, r, "queries_better", point(wzc_share_better(e, ref, WZC_M_KL)),
			    hash);
		}
	}
	put(run, r, "bound_gap_db", point(r->cell->gap_db), hash);
	put(run, r, "nmse_bound", point(r->cell->bound_nmse), hash);
	if (!isnan(r->cell->bound_capped_nmse)) {
		put(run, r, "bound_capped_gap_db", point(r->cell->capped_gap_db), hash);
		put(run, r, "nmse_bound_capped", point(r->cell->bound_capped_nmse), hash);
	}
	/* Only iso figures really measured (--iso, formats other than wz). */
	for (int k = 0; k < 2 && r->cell->has_iso; k++) {
		if (isnan(r->cell->iso[k].value))
			continue;
		put(run, r, iso_names[k][0], r->cell->iso[k], hash);
		put(run, r, iso_names[k][1], wzc_fewer_bits(e->bits_per_value, r->cell->iso[k]),
		    hash);
		if (r->cell->iso_censored[k])
			put(run, r, iso_names[k][2], point(1), hash);
	}
}

/* A paired comparison on its first format's row: nmse_vs_<ref>,
 * tokens_better_vs_<ref>, with queries kl_vs_<ref> and
 * queries_better_vs_<ref>. */
static void record_pair(wza_run *run, const wz_codec_measured *r, const wzc_pair_result *h,
			const char *ref, const char *hash)
{
	char m[64];
	snprintf(m, sizeof m, "nmse_vs_%s", ref);
	put(run, r, m, h->nmse_ratio, hash);
	snprintf(m, sizeof m, "tokens_better_vs_%s", ref);
	put(run, r, m, point(h->tokens_better), hash);
	if (!h->has_kl)
		return;
	snprintf(m, sizeof m, "kl_vs_%s", ref);
	put(run, r, m, h->kl_ratio, hash);
	snprintf(m, sizeof m, "queries_better_vs_%s", ref);
	put(run, r, m, point(h->queries_better), hash);
}

/* The trace and profile files with size and hash; a file that cannot be
 * hashed now is recorded without one. */
static void record_file(wza_run *run, const char *kind, const char *path, char hex[17])
{
	char abs[PATH_MAX];
	const char *where = realpath(path, abs) ? abs : path;
	uint64_t size = 0;
	if (wz_hash_file(path, hex, &size, NULL)) {
		hex[0] = '\0';
		wza_run_input(run, kind, path, where, NULL, -1, NULL);
	} else {
		wza_run_input(run, kind, path, where, hex, (long long)size, NULL);
	}
}

static void record_window(wza_run *run, const wz_codec_measured *r, const char *hash)
{
	const char *t = WZ_T_CODEC_WINDOW, *w = r->window;
	const wzt_cache_trace *tr = r->trace;
	wza_run_figure(run, t, w, "file", NAN, base_name(r->path));
	wza_run_figure(run, t, w, "trace_hash", NAN, hash);
	wza_run_figure(run, t, w, "split", NAN, r->split ? r->split : "none");
	wza_run_figure(run, t, w, "source", NAN, tr && tr->source ? tr->source : "not stated");
	wza_run_figure(run, t, w, "model", NAN, tr && tr->model ? tr->model : "not stated");
	if (tr) {
		wza_run_figure(run, t, w, "layers", tr->L, NULL);
		wza_run_figure(run, t, w, "tokens", tr->T, NULL);
		wza_run_figure(run, t, w, "queries", tr->Q, NULL);
	}
}

int wz_measure_record(wza_run *run, const wz_measure_req *rq, const wz_measure_result *res)
{
	const char *profile_path = rq->profile_path, *formats = rq->formats;
	long seed = rq->seed, nboot = rq->nboot;
	const wz_codec_measured *rows = res->rows;
	int nrows = res->nrows;
	char seed_text[32], boot_text[32], prof_hex[17] = "";
	snprintf(seed_text, sizeof seed_text, "%ld", seed);
	snprintf(boot_text, sizeof boot_text, "%ld", nboot);
	wza_run_input(run, WZ_IN_SEED, "seed", "bootstrap", NULL, (long long)strlen(seed_text),
		      seed_text);
	wza_run_input(run, WZ_IN_OPTION, "formats", "--formats", NULL, (long long)strlen(formats),
		      formats);
	if (profile_path)
		record_file(run, WZ_IN_PROFILE, profile_path, prof_hex);
	const char *t = WZ_T_CODEC_SETUP, *s = "setup";
	wza_run_figure(run, t, s, "seed", (double)seed, NULL);
	wza_run_figure(run, t, s, "boot", (double)nboot, NULL);
	wza_run_figure(run, t, s, "formats", NAN, formats);
	wza_run_figure(run, t, s, "profile_hash", NAN, *prof_hex ? prof_hex : "none");
	wza_run_figure(run, t, s, "profile_file", NAN, profile_path ? base_name(profile_path)
								    : "none");
	const char *last_path = NULL;
	char hex[17] = "";
	for (int i = 0; i < nrows; i++) {
		const wz_codec_measured *r = &rows[i];
		/* Rows come window by window: each trace file once. */
		if (!last_path || strcmp(last_path, r->path)) {
			record_file(run, WZ_IN_TRACE, r->path, hex);
			record_window(run, r, hex);
			last_path = r->path;
		}
		record_row(run, r, (int)nboot, (uint64_t)seed, *hex ? hex : NULL,
			   r->sweep && measured_too(rows, nrows, r));
		/* the headline's ratios on its wz row (the row after the
		 * window's formats is the first of the next window or sweep) */
		if (r->vs_headline)
			record_pair(run, r, r->vs_headline, WZ_HEADLINE_METRIC, *hex ? hex : NULL);
		if (r->vs_kvtc)
			record_pair(run, r, r->vs_kvtc, WZ_KVTC_METRIC, *hex ? hex : NULL);
	}
	if (!run->failed)
		return 0;
	wz_diag diag;
	wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
	return wz_say_fail(CMD, &diag);
}

int wz_codec_inputs_changed(const wza_run *run, wz_buf *changes)
{
	int n = 0;
	for (int i = 0; i < run->ninputs; i++) {
		const wza_input *in = &run->inputs[i];
		int trace = !strcmp(in->kind, WZ_IN_TRACE) && strcmp(in->name, "traffic");
		if (!trace && strcmp(in->kind, WZ_IN_PROFILE))
			continue;
		char hex[17];
		uint64_t size = 0;
		if (wz_recorded_path_check(in->origin, NULL)) {
			n++;
			wz_buf_printf(changes, "  %s %s: %s is outside the archive's folder and the "
					       "current folder, so not read\n",
				      in->kind, base_name(in->name), in->origin);
		} else if (wz_hash_file(in->origin, hex, &size, NULL)) {
			n++;
			wz_buf_printf(changes, "  %s %s: %s is gone\n", in->kind, base_name(in->name),
				      in->origin);
		} else if (!in->hash || strcmp(hex, in->hash)) {
			n++;
			wz_buf_printf(changes, "  %s %s: %s changed (recorded XXH3 %s, %lld bytes; "
					       "now %s, %llu bytes)\n",
				      in->kind, base_name(in->name), in->origin,
				      in->hash ? in->hash : "none", in->size, hex,
				      (unsigned long long)size);
		}
	}
	return n;
}

static int same(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

int wz_codec_rows_diff(const wza_run *a, const wza_run *b, wz_buf *out)
{
	if (a->ncodec != b->ncodec) {
		wz_buf_printf(out, "  codec: archived %d measurements, recomputed %d\n", a->ncodec,
			      b->ncodec);
		return 1;
	}
	int n = 0;
	for (int i = 0; i < a->ncodec; i++) {
		const wza_codec *x = &a->codec[i], *y = &b->codec[i];
		if (strcmp(x->window, y->window) || strcmp(x->format, y->format) ||
		    strcmp(x->metric, y->metric) || !same(x->value, y->value) ||
		    !same(x->ci_low, y->ci_low) || !same(x->ci_high, y->ci_high) ||
		    !same(x->bits_per_value, y->bits_per_value)) {
			n++;
			wz_buf_printf(out, "  codec %s / %s / %s: archived %.10g [%.10g, %.10g] at "
					   "%.6g bits, recomputed %s %.10g [%.10g, %.10g] at %.6g bits\n",
				      x->window, x->format, x->metric, x->value, x->ci_low, x->ci_high,
				      x->bits_per_value, y->metric, y->value, y->ci_low, y->ci_high,
				      y->bits_per_value);
		}
	}
	return n;
}
