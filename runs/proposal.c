/* A pilot proposal assembled: the run computed, the Markdown, CSV tables and
 * charts written into an output folder that appears whole, and the run
 * stored in the archive (propose.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "config.h"
#include "runs/cost_report.h"
#include "runs/propose.h"
#include "runs/publish.h"
#include "runs/schema.h"

/* Text from a file (a scenario's name, a catalog's names and sources) made
 * inert in Markdown (wz_buf_markdown), in one of a few rotating buffers so
 * that a line may hold several; "" when out of memory. */
static const char *md_text(const char *text)
{
	static wz_buf bufs[8];
	static int next;
	wz_buf *b = &bufs[next++ % 8];
	wz_buf_free(b);
	wz_buf_markdown(b, text ? text : "");
	return b->failed ? "" : wz_buf_str(b);
}

static void assumptions(wz_buf *md, const wzm_scenario *s, const wzm_compare *c)
{
	const wzm_model *m = c->model;
	const wzm_gpu *g = c->gpu;
	wz_buf_printf(md, "## Scenario and assumptions\n\n");
	wz_buf_printf(md, "- Scenario: %s (%s)\n", md_text(s->name), md_text(s->origin));
	wz_buf_printf(md, "- Traffic: %ld concurrent users, each holding %ld tokens of context\n",
		      s->users, s->context);
	wz_buf_printf(md, "- Model: %s: %.0f layers, latent %.0f + position %.0f values per token "
			  "per layer, %.0fB parameters at %.0f bits (%s:%d; source: %s)\n",
		      md_text(m->name), m->layers, m->kv_lora_rank, m->rope_dim, m->params_total_b,
		      isnan(s->mem.weight_bits) ? m->weight_bits : s->mem.weight_bits,
		      md_text(m->origin), m->line, md_text(m->source));
	wz_buf_printf(md, "- GPU: %s, %.0f GiB HBM (%s:%d)\n", md_text(g->name), g->hbm_gib,
		      md_text(g->origin), g->line);
	wz_buf_printf(md, "- Prices: set `%s`, $%.2f/GPU-hour reserved, $%.2f on demand, 8,760 "
			  "hours a year (%s:%d; source: %s; %s)\n",
		      s->price_set, c->rates.reserved_usd_h, c->rates.ondemand_usd_h,
		      md_text(c->rates.origin), c->rates.line, md_text(c->rates.source),
		      c->rates.date ? md_text(c->rates.date) : "undated");
	if (s->mode & WZM_MODE_MEMORY)
		wz_buf_printf(md, "- Replicas: %d GPUs, %s; the engine uses %.0f%% of HBM and "
				  "keeps %.1f GiB per GPU for activations (parameters, not "
				  "measurements)\n",
			      s->mem.gpus_per_replica, wzm_parallelism_name(s->mem.par),
			      s->mem.mem_util * 100, s->mem.act_reserve_gib);
	if (s->mode & WZM_MODE_SCALING)
		wz_buf_printf(md, "- Scaling: today's fleet is %ld GPUs with `%s`; users per GPU "
				  "scale with cache capacity, decode assumed at the baseline's "
				  "speed; GPU counts rounded %s\n",
			      s->baseline_gpus, s->baseline_format,
			      s->rounding == WZM_ROUND_UP ? "up" : "to the nearest GPU");
	for (int i = 0; i < c->nrows; i++)
		if (!strncmp(c->rows[i].fmt.name, "iso:", 4))
			wz_buf_printf(md, "- `%s`: a format at %s's quality in %s times fewer bits; "
					  "the ratio is an input here, not a measurement\n",
				      c->rows[i].fmt.name, s->baseline_format,
				      c->rows[i].fmt.name + 4);
	wz_buf_puts(md, "\n");
}

/* Both sizing methods side by side, and which one binds (needs more GPUs),
 * as DESIGN.md asks of a proposal; in Markdown for proposal.md, as text for
 * what the program prints, where a simulation's verdict belongs on standard
 * output rather than in the progress on standard error. */
static void summary(wz_buf *md, const wzm_scenario *s, const wzm_compare *c, const wza_run *run,
		    wzp_output form)
{
	if (s->mode != WZM_MODE_BOTH)
		return;
	int sim = wz_propose_simulated(run);
	wzp_table *t = wzp_table_new("GPUs needed by each method; the larger binds");
	if (!t)
		return;
	wzp_table_column(t, "format", "Cache format", 0);
	wzp_table_column(t, "scaling", "GPUs, scaling", 1);
	wzp_table_column(t, "memory", "GPUs, memory", 1);
	if (sim)
		wzp_table_column(t, "simulation", "GPUs, simulation", 1);
	wzp_table_column(t, "binds", "Binds", 0);
	wzp_table_column(t, "saving", "Saving per year, reserved (binding method)", 1);
	for (int i = 0; i < c->nrows; i++) {
		const wzm_compare_row *r = &c->rows[i];
		int mem = r->by_memory.gpus > r->scaling.gpus;
		const wzm_fleet *f = mem ? &r->by_memory : &r->scaling;
		double saving = f->saving_reserved;
		const char *binds = r->by_memory.gpus == r->scaling.gpus ? "both" : mem ? "memory"
										   : "scaling";
		double simg = sim ? wz_propose_sim_gpus(run, r->fmt.name) : NAN;
		char both[48];
		if (sim && isnan(simg)) {
			/* no simulated fleet met the targets: no method's count holds */
			binds = "simulation: none met the targets";
			saving = NAN;
		} else if (!isnan(simg) && simg >= (double)f->gpus) {
			snprintf(both, sizeof both, "%s and simulation", binds);
			binds = simg == (double)f->gpus ? both : "simulation";
			const wza_figure *sv = wza_run_find_figure(run, WZ_T_SIMULATION, r->fmt.name,
								   "saving_reserved");
			saving = sv ? sv->value : NAN;
		}
		char money[48];
		snprintf(money, sizeof money, "%s$%.2fM", saving < 0 ? "-" : "", fabs(saving) / 1e6);
		wzp_table_row(t);
		wzp_table_str(t, r->fmt.label);
		wzp_table_numf(t, (double)r->scaling.gpus, 0);
		wzp_table_numf(t, (double)r->by_memory.gpus, 0);
		if (sim && isnan(simg))
			wzp_table_str(t, "none met the targets");
		else if (sim)
			wzp_table_numf(t, simg, 0);
		wzp_table_str(t, binds);
		if (i == c->baseline)
			wzp_table_str(t, "baseline");
		else if (isnan(saving))
			wzp_table_empty(t);
		else
			wzp_table_num(t, saving, money);
	}
	wzp_table_note(t, "Scaling starts from today's fleet and scales users per GPU with cache "
			  "size; memory counts what each GPU's HBM can hold%s.  Where they differ, "
			  "the larger count binds.",
		       sim ? "; simulation finds the smallest fleet meeting the latency targets" : "");
	if (sim && !strcmp(wza_run_text(run, WZ_T_SIM_SETUP, "setup", "search", ""), "yes"))
		wzp_table_note(t, "Memory counts at the scenario's replicas of %ld GPUs; simulation "
				  "at the configuration the deployment search chose for each format "
				  "(Sized by simulation).",
			       (long)s->mem.gpus_per_replica);
	if (form == WZP_MD)
		wz_buf_puts(md, "## Summary\n\n");
	wzp_table_render(t, form, md);
	wzp_table_free(t);
	wz_buf_puts(md, "\n");
}

/* A chart title on one line ("Title: subtitle"), for Markdown. */
static const char *one_line(const char *title, char *out, size_t n)
{
	size_t j = 0;
	for (const char *p = title; *p && j + 3 < n; p++) {
		if (*p == '\n') {
			out[j++] = ':';
			out[j++] = ' ';
		} else {
			out[j++] = *p;
		}
	}
	out[j] = '\0';
	return out;
}

static void charts_section(wz_buf *md, wzp_chart **charts, int n, int rendered,
			   const char *why_not, const char *skipped)
{
	char alt[512];
	wz_buf_puts(md, "## Charts\n\n");
	if (!rendered) {
		wz_buf_printf(md, "**The charts were not drawn:** %s.  Their data and gnuplot "
				  "scripts are in `charts/`; run `gnuplot NAME.gp` there to draw "
				  "them.\n\n",
			      why_not);
		for (int i = 0; i < n; i++)
			wz_buf_printf(md, "- %s: `charts/%s.gp`\n", one_line(wzp_chart_title(charts[i]), alt,
								     sizeof alt),
				      wzp_chart_name(charts[i]));
		wz_buf_puts(md, "\n");
	} else {
		for (int i = 0; i < n; i++)
			wz_buf_printf(md, "![%s](charts/%s.png)\n\n",
				      one_line(wzp_chart_title(charts[i]), alt, sizeof alt),
				      wzp_chart_name(charts[i]));
		wz_buf_puts(md, "Each chart is also in SVG, with its data (`.dat`) and gnuplot "
				"script (`.gp`) beside it in `charts/`.\n\n");
	}
	if (*skipped) {
		for (const char *p = skipped; *p;) {
			const char *nl = strchr(p, '\n');
			size_t len = nl ? (size_t)(nl - p) : strlen(p);
			wz_buf_puts(md, "- ");
			wz_buf_append(md, p, len);
			wz_buf_puts(md, "\n");
			p += len + (nl ? 1 : 0);
		}
		wz_buf_puts(md, "\n");
	}
}

typedef struct {
	wzp_chart **charts;
	int ncharts, rendered;
	const char *why_not, *skipped;
	const wza_run *codec;
	long long run_id;
	const char *archive_path;
	const wza_run *run;
} md_extras;

static char *build_markdown(const wzm_scenario *s, const wzm_compare *c, const md_extras *x,
			    wz_err *err)
{
	wz_buf md = { 0 };
	wz_buf_printf(&md, "# Pilot proposal: %s cache formats for %s on %s\n\n", md_text(s->name),
		      md_text(c->model->name), md_text(c->gpu->name));
	wz_buf_printf(&md, "Generated by wzplan %s.  Every figure below is computed by the "
			  "program from the scenario and the catalogs named with it.  ",
		      PACKAGE_VERSION);
	if (x->archive_path)
		wz_buf_printf(&md, "This is run %lld in the archive `%s`; `wzplan verify %lld "
				   "--archive %s` recomputes it.\n\n",
			      x->run_id, x->archive_path, x->run_id, x->archive_path);
	else
		wz_buf_puts(&md, "The run was not stored in an archive (`--no-archive`), so "
				 "`wzplan verify` cannot recompute it; the same command without "
				 "that option stores it.\n\n");
	if (c->context_over_limit)
		wz_buf_printf(&md, "**Warning:** the context (%ld tokens) is beyond %s's limit "
				   "of %.0f tokens.\n\n",
			      s->context, c->model->name, c->model->max_context);
	summary(&md, s, c, x->run, WZP_MD);
	assumptions(&md, s, c);
	wz_buf_puts(&md, "## Cost\n\n");
	*err = wz_report_render(s, c, WZP_MD, &md);
	wz_buf_puts(&md, "\n");
	wz_propose_sim_section(&md, x->run, s, c);
	wz_propose_modes_section(&md, x->run, s, c);
	charts_section(&md, x->charts, x->ncharts, x->rendered, x->why_not, x->skipped);
	wz_propose_quality_section(&md, x->run, x->codec);
	wz_propose_live_kl_section(&md, x->run);
	wz_buf_puts(&md, "## Not measured in this run\n\n");
	wz_propose_quality_not_measured(&md, x->codec);
	wz_propose_sim_not_measured(&md, x->run);
	if (!x->rendered)
		wz_buf_puts(&md, "- Charts: not drawn in this run (see above).\n");
	if (md.failed)
		*err = WZ_ERR_NOMEM;
	return wz_buf_take(&md);
}

static wz_err render_table(wzp_table *t, wz_buf *out)
{
	if (!t)
		return WZ_ERR_NOMEM;
	wz_err err = wzp_table_render(t, WZP_CSV, out);
	wzp_table_free(t);
	return err;
}

/* The GPUs-by-context figures as one CSV row per format. */
static void context_csv(const wza_run *run, wz_buf *out)
{
	wz_buf_puts(out, "format,context_tokens,gpus,users_per_gpu\n");
	for (int i = 0; i < run->nfigures; i++) {
		const wza_figure *f = &run->figures[i];
		if (strcmp(f->table, WZ_T_GPUS_BY_CONTEXT))
			continue;
		const wza_figure *u = wza_run_find_figure(run, WZ_T_USERS_BY_CONTEXT, f->row,
							  f->col);
		wz_buf_printf(out, "%s,%s,", f->row, f->col);
		if (!isnan(f->value))
			wz_buf_printf(out, "%.0f", f->value);
		wz_buf_puts(out, ",");
		if (u && !isnan(u->value))
			wz_buf_printf(out, "%.0f", u->value);
		wz_buf_puts(out, "\n");
	}
}

int wz_propose_write(const char *cmd, const wz_propose_opts *o, wza_run *run,
		     wz_proposal *out)
{
	memset(out, 0, sizeof *out);
	int rc = 0;
	wz_diag diag;
	wz_diag_clear(&diag);
	wzm_catalog *cat = NULL;
	wzm_scenario *scn = NULL;
	wzm_compare cmp;
	/* Only the codec run asked for: an unrelated archived measurement is
	 * never picked up silently. */
	wza_run *codec_run = NULL;
	if (o->codec_run &&
	    (rc = wz_propose_load_codec_run(cmd, o->archive, o->codec_run, &codec_run)))
		return rc;
	wz_propose_opts with_codec = *o;
	with_codec.codec_loaded = codec_run;
	rc = wz_propose_compute(cmd, &with_codec, run, &scn, &cat, &cmp);
	if (rc) {
		wza_run_free(codec_run);
		return rc;
	}
	const wza_run *codec = run->ncodec ? run : codec_run;

	/* The archive: the one asked for, else the default place, else (no
	 * writable home) the output folder, so a proposal never needs $HOME. */
	wza_archive *archive = NULL;
	char *fallback = NULL;
	if (o->archive) {
		rc = wz_run_archive_open(cmd, o->archive, 1, &archive);
	} else if (!o->no_archive) {
		char *def = NULL;
		wz_diag why;
		if (wza_default_path(&def, &why) || wza_open(def, 1, &archive, &why)) {
			fallback = wz_path_join(o->out_dir, WZA_DEFAULT_NAME);
			wz_say_warn(cmd, "%s; storing the run in %s instead", why.msg,
				    fallback ? fallback : "?");
		}
		free(def);
	}

	/* Everything is built in a staging folder first; the proposal appears
	 * in OUT only when all of it was made. */
	wzp_chart **charts = NULL;
	int ncharts = 0, rendered = 0;
	wz_buf skipped = { 0 }, why_not = { 0 }, csv = { 0 }, json = { 0 }, mem = { 0 },
	       ctx = { 0 }, text = { 0 }, simcsv = { 0 }, qcsv = { 0 }, modecsv = { 0 };
	char *staging = NULL, *md = NULL;
	if (!rc && (wz_charts_build(run, codec, &charts, &ncharts, &skipped) ||
		    wz_report_render(scn, &cmp, WZP_CSV, &csv) ||
		    wz_report_render(scn, &cmp, WZP_JSON, &json) ||
		    wz_report_render(scn, &cmp, WZP_TEXT, &text) ||
		    render_table(wz_report_breakdown(scn, &cmp), &mem))) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_say_fail(cmd, &diag);
	}
	context_csv(run, &ctx);
	if (o->simulate) {
		wz_propose_sim_csv(run, &simcsv);
		wz_buf_puts(&text, "\n");
		summary(&text, scn, &cmp, run, WZP_TEXT);
		wz_propose_sim_verdict(&text, run, scn, &cmp);
	}
	int modes = o->modes.all || o->modes.n;
	if (modes)
		wz_propose_modes_csv(run, &modecsv);
	if (codec)
		wz_propose_quality_csv(codec, &qcsv);
	if (!rc && wz_staging_create(o->out_dir, &staging, &diag))
		rc = wz_say_fail(cmd, &diag);
	if (!rc) {
		char *dir = wz_path_join(staging, "charts");
		if (!dir || wz_charts_write(charts, ncharts, dir, &rendered, &why_not, &diag))
			rc = wz_say_fail(cmd, &diag);
		free(dir);
	}
	const char *files[][2] = {
		{ "cost.csv", wz_buf_str(&csv) }, { "cost.json", wz_buf_str(&json) },
		{ "memory.csv", wz_buf_str(&mem) }, { "context.csv", wz_buf_str(&ctx) },
		{ "simulation.csv", wz_buf_str(&simcsv) }, { "quality.csv", wz_buf_str(&qcsv) },
		{ "serving-modes.csv", wz_buf_str(&modecsv) },
	};
	for (size_t i = 0; !rc && i < sizeof files / sizeof files[0]; i++)
		if ((i < 4 || (i == 4 && o->simulate) || (i == 5 && codec) || (i == 6 && modes)) &&
		    wz_staging_file(staging, files[i][0], files[i][1], &diag))
			rc = wz_say_fail(cmd, &diag);

	if (!rc && fallback)
		rc = wz_run_archive_open(cmd, fallback, 1, &archive);
	if (!rc) {
		wza_run_finish(run, "ok");
		if (archive && wza_store(archive, run, &diag))
			rc = wz_say_fail(cmd, &diag);
	}
	if (!rc) {
		wz_err err = WZ_OK;
		md_extras x = { charts, ncharts, rendered, wz_buf_str(&why_not), wz_buf_str(&skipped),
				codec, run->id, archive ? wza_path(archive) : NULL, run };
		md = build_markdown(scn, &cmp, &x, &err);
		if (err || !md) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_say_fail(cmd, &diag);
		} else if (wz_staging_file(staging, "proposal.md", md, &diag) ||
			   wz_staging_publish(staging, o->out_dir, &diag)) {
			rc = wz_say_fail(cmd, &diag);
		}
	}
	if (rc && staging)
		wz_staging_remove(staging);
	if (!rc) {
		out->text = text;
		text = (wz_buf){ 0 };
		out->ncharts = ncharts;
		out->rendered = rendered;
		out->why_not = why_not;
		why_not = (wz_buf){ 0 };
		out->run_id = run->id;
		if (archive && !(out->archive_path = strdup(wza_path(archive)))) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_say_fail(cmd, &diag);
		}
	}
	wz_buf_free(&text);
	free(md);
	free(staging);
	free(fallback);
	wz_charts_free(charts, ncharts);
	wz_buf_free(&skipped), wz_buf_free(&why_not), wz_buf_free(&csv), wz_buf_free(&json);
	wz_buf_free(&mem), wz_buf_free(&ctx), wz_buf_free(&simcsv);
	wz_buf_free(&modecsv);
	wz_buf_free(&qcsv);
	wza_run_free(codec_run);
	wza_close(archive);
	wzm_compare_free(&cmp);
	wzm_scenario_free(scn);
	wzm_catalog_free(cat);
	return rc;
}

void wz_proposal_free(wz_proposal *p)
{
	wz_buf_free(&p->text);
	wz_buf_free(&p->why_not);
	free(p->archive_path);
	memset(p, 0, sizeof *p);
}
