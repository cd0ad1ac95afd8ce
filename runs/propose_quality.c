/* A proposal's measured quality: the measurement of test windows in a propose
 * run (or an archived codec run), and the "Measured quality" section with
 * its provenance (propose.h). */
#include "runs/propose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/measure.h"
#include "plots/table.h"
#include "runs/schema.h"

/* The formats a proposal measures: today's baselines and the wz rates the
 * product page names; the iso sweep adds the rates in between. */
#define PROPOSE_FORMATS "fp8-mix,fp8-flat,int4-g64,nvfp4,wz-4.97,wz-5.44,wz-6.31"
/* With calibration windows, kvtc (docs/kvtc.md) at the same wz rates. */
#define PROPOSE_FORMATS_KVTC PROPOSE_FORMATS ",kvtc-4.97,kvtc-5.44,kvtc-6.31"
#define PROPOSE_SEED 1

int wz_propose_measure(const char *cmd, const wz_propose_opts *o, wza_run *run)
{
	/* Quality claims rest on windows the profile never saw: refuse
	 * calibration windows as prepare refuses test windows. */
	for (int i = 0; i < o->ntraces; i++) {
		wzt_cache_trace *t;
		wz_diag diag;
		if (wzt_cache_trace_read(o->traces[i], &t, &diag))
			return wz_say_fail(cmd, &diag);
		int test = t->split && !strcmp(t->split, "test");
		char split[32];
		snprintf(split, sizeof split, "%s", t->split ? t->split : "none");
		wzt_cache_trace_free(t);
		if (!test)
			return wz_say_usage(cmd, "%s is a '%s' window: quality is measured on test "
					    "windows only (a profile is prepared from calibration "
					    "windows, and measuring on them would flatter it); make "
					    "both with 'wzplan trace synth-cache --calibration K --test M'",
					    o->traces[i], split);
	}
	wz_measure_req rq = {
		.paths = o->traces, .npaths = o->ntraces, .profile_path = o->profile,
		.formats = o->ncalibration ? PROPOSE_FORMATS_KVTC : PROPOSE_FORMATS, .iso = 1,
		.nboot = WZC_BOOT_DEFAULT, .seed = PROPOSE_SEED,
		.calibration_paths = o->calibration, .ncalibration = o->ncalibration,
	};
	wz_measure_result res;
	int rc = wz_measure_run(&rq, &res);
	if (!rc)
		rc = wz_measure_record(run, &rq, &res);
	wz_measure_result_free(&res);
	return rc;
}

int wz_propose_load_codec_run(const char *cmd, const char *path, long long id, wza_run **out)
{
	*out = NULL;
	wza_archive *a;
	int rc = wz_run_archive_open(cmd, path, 0, &a);
	if (rc)
		return rc;
	wz_diag diag;
	if (wza_load(a, id, out, &diag)) {
		rc = wz_say_usage(cmd, "--codec-run %lld: %s", id, diag.msg);
	} else if (!(*out)->ncodec) {
		rc = wz_say_usage(cmd, "--codec-run %lld: run %lld (wzplan %s) holds no codec "
				  "measurements; 'wzplan codec measure --iso' makes one", id, id,
				  (*out)->command);
		wza_run_free(*out);
		*out = NULL;
	}
	wza_close(a);
	return rc;
}

static const char *origin_of(const wza_run *run, const char *kind, const char *name)
{
	for (int i = 0; i < run->ninputs; i++)
		if (!strcmp(run->inputs[i].kind, kind) && !strcmp(run->inputs[i].name, name))
			return run->inputs[i].origin;
	return name;
}

void wz_propose_quality_paths(const wza_run *run, wz_propose_opts *o)
{
	for (int i = 0; i < o->ntraces; i++)
		o->traces[i] = origin_of(run, WZ_IN_TRACE, o->traces[i]);
	if (o->profile)
		o->profile = origin_of(run, WZ_IN_PROFILE, o->profile);

	if (o->live_kl)
		o->live_kl = origin_of(run, WZ_IN_LIVE_KL, "live-kl.json");
}

static const wza_codec *row(const wza_run *c, const char *window, const char *format,
			    const char *metric)
{
	for (int i = 0; i < c->ncodec; i++) {
		const wza_codec *m = &c->codec[i];
		if (!strcmp(m->window, window) && !strcmp(m->format, format) &&
		    !strcmp(m->metric, metric))
			return m;
	}
	return NULL;
}

double wz_propose_iso_bits(const wza_run *codec)
{
	double worst = NAN;
	for (int i = 0; codec && i < codec->ncodec; i++) {
		const wza_codec *m = &codec->codec[i];
		if (!strcmp(m->format, "fp8-mix") && !strcmp(m->metric, "iso_bits_nmse") &&
		    !(m->value <= worst))
			worst = m->value;
	}
	/* Rounded up: wz-R stores at most R bits/value, so the row's format
	 * is never below the measured rate. */
	return isnan(worst) ? NAN : ceil(worst * 100.0 - 1e-9) / 100.0;
}

static const char *fig_text(const wza_run *run, const char *table, const char *r,
			    const char *col)
{
	const wza_figure *f = wza_run_find_figure(run, table, r, col);
	return f && f->text ? f->text : "?";
}

static double fig(const wza_run *run, const char *table, const char *r, const char *col)
{
	const wza_figure *f = wza_run_find_figure(run, table, r, col);
	return f ? f->value : NAN;
}

/* value [lo, hi], or "-" */
static void ci_text(const wza_codec *m, char *out, size_t n, const char *fmt)
{
	char a[32], b[32], c[32];
	if (!m || isnan(m->value)) {
		snprintf(out, n, "-");
		return;
	}
	snprintf(a, sizeof a, fmt, m->value);
	if (isnan(m->ci_low) || isnan(m->ci_high)) {
		snprintf(out, n, "%s", a);
		return;
	}
	snprintf(b, sizeof b, fmt, m->ci_low);
	snprintf(c, sizeof c, fmt, m->ci_high);
	snprintf(out, n, "%s [%s, %s]", a, b, c);
}

/* prefix: "<= " for a censored iso rate (already beaten at the sweep's
 * lowest rate), ">= " for the fewer-bits ratio that follows from it. */
static void cell_p(wzp_table *t, const wza_codec *m, const char *fmt, const char *prefix)
{
	char text[128], shown[140];
	ci_text(m, text, sizeof text, fmt);
	snprintf(shown, sizeof shown, "%s%s", m && !isnan(m->value) ? prefix : "", text);
	if (m && !isnan(m->value))
		wzp_table_num(t, m->value, shown);
	else
		wzp_table_str(t, "-");
}

static void cell(wzp_table *t, const wza_codec *m, const char *fmt)
{
	char text[128];
	ci_text(m, text, sizeof text, fmt);
	if (m && !isnan(m->value))
		wzp_table_num(t, m->value, text);
	else
		wzp_table_str(t, "-");
}

/* Windows in the order measured: rows of figure table codec_window, else
 * (a run stored without them) the windows of the measurements. */
static int windows_of(const wza_run *c, const char **out, int max)
{
	int n = 0;
	for (int i = 0; i < c->nfigures && n < max; i++)
		if (!strcmp(c->figures[i].table, WZ_T_CODEC_WINDOW) && !strcmp(c->figures[i].col, "file"))
			out[n++] = c->figures[i].row;
	int from_rows = n == 0;
	for (int i = 0; from_rows && i < c->ncodec; i++) {
		int k = 0;
		while (k < n && strcmp(out[k], c->codec[i].window))
			k++;
		if (k == n && n < max)
			out[n++] = c->codec[i].window;
	}
	return n;
}

/* A window's trace hash: its figure, else its measurements'. */
static const char *trace_hash(const wza_run *c, const char *window)
{
	const char *h = fig_text(c, WZ_T_CODEC_WINDOW, window, "trace_hash");
	for (int i = 0; !strcmp(h, "?") && i < c->ncodec; i++)
		if (!strcmp(c->codec[i].window, window) && c->codec[i].trace_hash)
			h = c->codec[i].trace_hash;
	return h;
}

static void provenance(wz_buf *md, const wza_run *run, const wza_run *c, const char **win,
		       int nw)
{
	int synthetic = 0;
	for (int i = 0; i < nw; i++)
		synthetic |= !strncmp(fig_text(c, WZ_T_CODEC_WINDOW, win[i], "source"),
				      WZ_SYNTHETIC_PREFIX, strlen(WZ_SYNTHETIC_PREFIX));
	if (synthetic)
		wz_buf_puts(md, "**SYNTHETIC DATA.** The cache traces measured here were made by "
				"wzplan's synthetic generator (`wzplan trace synth-cache`), not "
				"captured from a serving model: the figures show what each format "
				"does on that statistical model, not on a real model's cache.  "
				"Measure captured traces before relying on them.\n\n");
	const wza_figure *src = wza_run_find_figure(run, WZ_T_QUALITY, "source", "codec_run");
	if (src)
		wz_buf_printf(md, "Measured by archived codec run %.0f (`--codec-run %.0f`; "
				  "`wzplan archive show %.0f` lists it) on %d test window%s:\n\n",
			      src->value, src->value, src->value, nw, nw == 1 ? "" : "s");
	else
		wz_buf_printf(md, "Measured in this run (`--trace`, `--profile`) on %d test "
				  "window%s:\n\n",
			      nw, nw == 1 ? "" : "s");
	for (int i = 0; i < nw; i++)
		wz_buf_printf(md, "- `%s`: file `%s` (XXH3 `%s`), split `%s`, %.0f layer(s) x %.0f "
				  "tokens, %.0f queries, model `%s`, source `%s`\n",
			      win[i], fig_text(c, WZ_T_CODEC_WINDOW, win[i], "file"),
			      trace_hash(c, win[i]),
			      fig_text(c, WZ_T_CODEC_WINDOW, win[i], "split"),
			      fig(c, WZ_T_CODEC_WINDOW, win[i], "layers"),
			      fig(c, WZ_T_CODEC_WINDOW, win[i], "tokens"),
			      fig(c, WZ_T_CODEC_WINDOW, win[i], "queries"),
			      fig_text(c, WZ_T_CODEC_WINDOW, win[i], "model"),
			      fig_text(c, WZ_T_CODEC_WINDOW, win[i], "source"));
	wz_buf_printf(md, "- wz profile: `%s` (XXH3 `%s`); bootstrap: %.0f resamples, seed %.0f\n\n",
		      fig_text(c, WZ_T_CODEC_SETUP, "setup", "profile_file"),
		      fig_text(c, WZ_T_CODEC_SETUP, "setup", "profile_hash"),
		      fig(c, WZ_T_CODEC_SETUP, "setup", "boot"), fig(c, WZ_T_CODEC_SETUP, "setup", "seed"));
}

static void per_format(wz_buf *md, const wza_run *c, const char **win, int nw)
{
	wzp_table *t = wzp_table_new("Quality per format and window (95% bootstrap intervals)");
	if (!t)
		return;
	wzp_table_column(t, "window", "Window", 0);
	wzp_table_column(t, "format", "Format", 0);
	wzp_table_column(t, "bits", "Bits/value (written)", 1);
	wzp_table_column(t, "nmse", "nmse", 1);
	wzp_table_column(t, "nmse_vs_fp8", "nmse / fp8-mix", 1);
	wzp_table_column(t, "kl", "Attention KL", 1);
	wzp_table_column(t, "kl_vs_fp8", "KL / fp8-mix", 1);
	wzp_table_column(t, "gap", "dB from bound", 1);
	for (int w = 0; w < nw; w++)
		for (int i = 0; i < c->ncodec; i++) {
			const wza_codec *m = &c->codec[i];
			if (strcmp(m->window, win[w]) || strcmp(m->metric, "nmse"))
				continue;
			wzp_table_row(t);
			wzp_table_str(t, m->window);
			wzp_table_str(t, m->format);
			wzp_table_numf(t, m->bits_per_value, 2);
			cell(t, m, "%.3g");
			cell(t, row(c, m->window, m->format, "nmse_vs_fp8"), "%.3f");
			cell(t, row(c, m->window, m->format, "kl"), "%.3g");
			cell(t, row(c, m->window, m->format, "kl_vs_fp8"), "%.3f");
			cell(t, row(c, m->window, m->format, "bound_gap_db"), "%.2f");
		}
	wzp_table_note(t, "Bits/value counted from the bytes each encoder wrote.  nmse over the "
			  "latent and position parts; KL between the attention distributions with "
			  "the exact and the decoded cache; ratios paired over tokens (queries for "
			  "KL).  dB from bound: distance to the Gaussian rate-distortion bound at "
			  "the same rate for the window's sample covariance, which makes the bound "
			  "far too low on windows of fewer tokens than a few times the 576 values "
			  "per token.");
	wzp_table_render(t, WZP_MD, md);
	wzp_table_free(t);
	wz_buf_puts(md, "\n");
}

static void iso_table(wz_buf *md, const wza_run *c, const char **win, int nw)
{
	wzp_table *t = wzp_table_new("Fewer bits at equal quality: the wz rate that matches each "
				     "reference (95% bootstrap intervals)");
	if (!t)
		return;
	wzp_table_column(t, "window", "Window", 0);
	wzp_table_column(t, "reference", "Reference", 0);
	wzp_table_column(t, "bits", "Reference bits/value", 1);
	wzp_table_column(t, "iso_nmse", "wz bits at equal nmse", 1);
	wzp_table_column(t, "fewer_nmse", "Fewer bits (nmse)", 1);
	wzp_table_column(t, "iso_kl", "wz bits at equal KL", 1);
	wzp_table_column(t, "fewer_kl", "Fewer bits (KL)", 1);
	int any = 0, censored = 0;
	for (int w = 0; w < nw; w++)
		for (int i = 0; i < c->ncodec; i++) {
			const wza_codec *m = &c->codec[i];
			if (strcmp(m->window, win[w]) || strcmp(m->metric, "iso_bits_nmse"))
				continue;
			any = 1;
			int cn = row(c, m->window, m->format, "iso_censored_nmse") != NULL;
			int ck = row(c, m->window, m->format, "iso_censored_kl") != NULL;
			censored |= cn || ck;
			wzp_table_row(t);
			wzp_table_str(t, m->window);
			wzp_table_str(t, m->format);
			wzp_table_numf(t, m->bits_per_value, 2);
			cell_p(t, m, "%.2f", cn ? "<= " : "");
			cell_p(t, row(c, m->window, m->format, "fewer_bits_nmse"), "%.2fx",
			       cn ? ">= " : "");
			cell_p(t, row(c, m->window, m->format, "iso_bits_kl"), "%.2f", ck ? "<= " : "");
			cell_p(t, row(c, m->window, m->format, "fewer_bits_kl"), "%.2fx",
			       ck ? ">= " : "");
		}
	if (!any) {
		wzp_table_free(t);
		wz_buf_puts(md, "Iso-quality bits were not measured (`wzplan codec measure --iso` "
				"measures them).\n\n");
		return;
	}
	wzp_table_note(t, "wz bits at equal quality: the smallest wz rate whose error is not above "
			  "the reference's, from a sweep of wz rates interpolated in log error; fewer "
			  "bits = reference bits / that rate.%s",
		       censored ? "  Marked <=: the reference was already beaten at the sweep's "
				  "lowest rate, so the rate is an upper bound (and fewer bits a lower "
				  "bound)." : "");
	wzp_table_render(t, WZP_MD, md);
	wzp_table_free(t);
	wz_buf_puts(md, "\n");
}

/* Paired ratios recorded on wz rows against a reference (metric names
 * nmse_vs_<ref>, kl_vs_<ref>, queries_better_vs_<ref>; runs/measure.h): a
 * row per window and wz format; 0 where the run holds none. */
static int pair_table(wz_buf *md, const wza_run *c, const char **win, int nw, const char *ref,
		      const char *title, const char *note)
{
	char m_nmse[64], m_kl[64], m_q[64];
	snprintf(m_nmse, sizeof m_nmse, "nmse_vs_%s", ref);
	snprintf(m_kl, sizeof m_kl, "kl_vs_%s", ref);
	snprintf(m_q, sizeof m_q, "queries_better_vs_%s", ref);
	wzp_table *t = wzp_table_new(title);
	if (!t)
		return 0;
	wzp_table_column(t, "window", "Window", 0);
	wzp_table_column(t, "format", "wz format", 0);
	wzp_table_column(t, "bits", "Bits/value (written)", 1);
	wzp_table_column(t, "kl_ratio", "Attention KL ratio", 1);
	wzp_table_column(t, "nmse_ratio", "nmse ratio", 1);
	wzp_table_column(t, "queries_better", "Queries better", 1);
	int any = 0;
	for (int w = 0; w < nw; w++)
		for (int i = 0; i < c->ncodec; i++) {
			const wza_codec *m = &c->codec[i];
			if (strcmp(m->window, win[w]) || strcmp(m->metric, m_nmse))
				continue;
			any = 1;
			wzp_table_row(t);
			wzp_table_str(t, m->window);
			wzp_table_str(t, m->format);
			wzp_table_numf(t, m->bits_per_value, 3);
			cell(t, row(c, m->window, m->format, m_kl), "%.3g");
			cell(t, m, "%.3g");
			const wza_codec *q = row(c, m->window, m->format, m_q);
			char d[16];
			if (q && !isnan(q->value)) {
				snprintf(d, sizeof d, "%.0f%%", 100 * q->value);
				wzp_table_num(t, q->value, d);
			} else {
				wzp_table_str(t, "-");
			}
		}
	if (any) {
		wzp_table_note(t, "%s", note);
		wzp_table_render(t, WZP_MD, md);
		wz_buf_puts(md, "\n");
	}
	wzp_table_free(t);
	return any;
}

void wz_propose_quality_section(wz_buf *md, const wza_run *run, const wza_run *codec)
{
	if (!codec || !codec->ncodec)
		return;
	const char *win[256];
	int nw = windows_of(codec, win, 256);
	wz_buf_puts(md, "## Measured quality\n\n");
	provenance(md, run, codec, win, nw);
	if (!pair_table(md, codec, win, nw, WZ_HEADLINE_METRIC,
			"Headline: wz against nvfp4-ds-mla (vLLM's 4-bit DeepSeek cache format) at "
			"equal bytes (95% bootstrap intervals)",
			"The wz rate whose records take nvfp4-ds-mla's bytes per token and layer "
			"exactly; ratios are wz's error over nvfp4-ds-mla's on the same tokens, "
			"paired over tokens (queries for attention KL): below 1, wz has the lower "
			"error."))
		wz_buf_puts(md, "The headline (wz against nvfp4-ds-mla at equal bytes) was not measured: "
				"`wzplan codec measure --iso` (what a proposal measures) measures it.\n\n");
	per_format(md, codec, win, nw);
	pair_table(md, codec, win, nw, WZ_KVTC_METRIC,
		   "wz against kvtc (KV-cache transform coding, arXiv 2511.01815; docs/kvtc.md) at "
		   "matched rates (95% bootstrap intervals)",
		   "wz-R against kvtc-R on the same tokens (kvtc's transforms fitted on the "
		   "calibration windows given, `--calibration`), paired: below 1, wz has the "
		   "lower error.  The bits/value each wrote are in the table above.");
	iso_table(md, codec, win, nw);
	const wza_figure *iso = wza_run_find_figure(run, WZ_T_QUALITY, "iso", "bits");
	if (iso)
		wz_buf_printf(md, "The cost tables' row **%s** sizes the fleet at this measured rate: "
				  "the highest wz rate at `fp8-mix`'s nmse over the test windows, "
				  "rounded up to 0.01 bit/value (format `%s`).  The `iso:` rows use the "
				  "product page's input ratio instead.\n\n",
			      fig_text(run, WZ_T_QUALITY, "iso", "label"),
			      fig_text(run, WZ_T_QUALITY, "iso", "format"));
	wz_buf_puts(md, "The charts \"Cache error (rate-distortion) against bits per value\" "
			"(`charts/quality.png`) and, with queries in the traces, \"Attention KL "
			"divergence against bits per value\" (`charts/quality_kl.png`) draw these "
			"figures with the Gaussian bound.\n\n");
}

void wz_propose_quality_not_measured(wz_buf *md, const wza_run *codec)
{
	if (codec && codec->ncodec) {
		wz_buf_puts(md, "- Quality of the `iso:` formats: their ratio is an input, not a "
				"measurement.\n");
		return;
	}
	wz_buf_puts(md, "- Cache quality (error against the uncompressed cache) of each format: "
			"no cache trace was given.  To measure it, make calibration and test windows "
			"(`wzplan trace synth-cache --family mla-b --calibration 1 --test 1 --out t`, "
			"or capture a model's cache), prepare a profile from the calibration windows "
			"(`wzplan codec prepare --trace t/mla-b-cal-0.safetensors --out p.wzp`) and "
			"give the test windows: `wzplan propose --trace t/mla-b-test-0.safetensors "
			"--profile p.wzp` (or `--codec-run RUN` for an archived `wzplan codec "
			"measure --iso`).  Real windows captured from the project's own "
			"DeepSeek-V3-architecture model are installed with wzplan (`data/real/`: "
			"test windows, their profile and a live-KL summary; docs/real-model.md).\n");
}

static void csv_number(wz_buf *out, double v)
{
	if (!isnan(v))
		wz_buf_printf(out, "%.10g", v);
}

void wz_propose_quality_csv(const wza_run *codec, wz_buf *out)
{
	wz_buf_puts(out, "window,format,metric,value,ci_low,ci_high,bits_per_value,trace_hash\n");
	for (int i = 0; i < codec->ncodec; i++) {
		const wza_codec *m = &codec->codec[i];
		/* Window and format names come from trace metadata and the
		 * registry: quoted, with quotes doubled, in case of a comma. */
		const char *text[2] = { m->window, m->format };
		for (int k = 0; k < 2; k++) {
			wz_buf_puts(out, "\"");
			for (const char *p = text[k]; *p; p++)
				wz_buf_append(out, *p == '"' ? "\"\"" : p, *p == '"' ? 2 : 1);
			wz_buf_puts(out, "\",");
		}
		wz_buf_printf(out, "%s,", m->metric);
		csv_number(out, m->value);
		wz_buf_puts(out, ",");
		csv_number(out, m->ci_low);
		wz_buf_puts(out, ",");
		csv_number(out, m->ci_high);
		wz_buf_puts(out, ",");
		csv_number(out, m->bits_per_value);
		wz_buf_printf(out, ",%s\n", m->trace_hash ? m->trace_hash : "");
	}
}
