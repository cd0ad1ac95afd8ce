/* `wzplan propose`: a pilot proposal for a scenario: Markdown, CSV tables and
 * charts written into an output folder, and the run stored in the archive. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/commands.h"
#include "cli/propose.h"
#include "cli/publish.h"
#include "common/wz_io.h"
#include "config.h"

static void help(void)
{
	printf("Usage: wzplan propose [options]\n"
	       "\n"
	       "Writes a pilot proposal for a scenario (the embedded product-page scenario by\n"
	       "default): the cost comparison of cache formats by scaling and by memory\n"
	       "accounting, the assumptions with their catalog sources, charts, and what\n"
	       "was not measured.  With --trace FILE... --profile FILE it measures the\n"
	       "cache formats on those test windows (calibration windows are refused) and\n"
	       "adds \"Measured quality\" with provenance, the rate-distortion chart and a\n"
	       "cost row for wz at the measured iso-quality rate; --codec-run RUN uses an\n"
	       "archived 'wzplan codec measure --iso' run instead.  With --simulate (the\n"
	       "scenario's closed population) or --traffic FILE (a request table) it also\n"
	       "sizes every format by simulation, adds the table \"Sized by simulation\",\n"
	       "which sizing method binds, and latency and cache occupancy charts; with\n"
	       "--serving-modes, the same under each serving mode.  The run is stored in\n"
	       "the archive and its id printed.\n"
	       "Files: OUT/proposal.md, OUT/cost.csv, OUT/cost.json, OUT/memory.csv,\n"
	       "OUT/context.csv, OUT/simulation.csv (with a simulation),\n"
	       "OUT/serving-modes.csv (with --serving-modes), OUT/quality.csv (with a\n"
	       "measurement: every codec row), OUT/charts/\n"
	       "(gnuplot data, scripts, PNG and SVG).\n"
	       "\n"
	       "%s\n%s%s"
	       "  --simulate             size the fleets by simulating the scenario's users\n"
	       "  --serving-modes LIST   also size them under each serving mode: 'all', or\n"
	       "                         SERVING:IDLE and SERVING:offload:FORMAT items, e.g.\n"
	       "                         aggregated:resident,disaggregated:offload:wzx-5.0\n"
	       "                         (adds \"Sized under each serving mode\" and\n"
	       "                         OUT/serving-modes.csv)\n"
	       "  --max-replicas N       the size search's limit (default 100000)\n"
	       "  -q, --quiet            no simulation progress on standard error\n"
	       "\n"
	       "Measured quality:\n"
	       "  --trace FILE...        test windows of a cache trace to measure\n"
	       "  --profile FILE         the wz profile prepared from calibration windows\n"
	       "  --codec-run RUN        use this archived codec measurement instead\n"
	       "  --live-kl FILE         live-model next-token KL per format (the summary\n"
	       "                         `wzcapture.py report --json` writes; docs/real-model.md)\n"
	       "\n"
	       "Output:\n"
	       "  --out DIR              output folder (default: wzplan-out)\n"
	       "  --archive FILE         archive to store the run in (default: $WZPLAN_ARCHIVE,\n"
	       "                         else $XDG_DATA_HOME/wzplan/archive.sqlite, else\n"
	       "                         ~/.local/share/wzplan/archive.sqlite; when that cannot\n"
	       "                         be used, OUT/archive.sqlite)\n"
	       "  --no-archive           do not store the run (the proposal says so; it\n"
	       "                         cannot be verified later)\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Charts need gnuplot ($WZ_GNUPLOT, or gnuplot on $PATH); without it the\n"
	       "proposal is written without images and says so.\n"
	       "\n"
	       "Example:\n"
	       "  wzplan propose --out wzplan-out\n"
	       "  wzplan propose --simulate --duration 1200 --out sized\n",
	       wz_scenario_opts_help, wz_sim_opts_help, wz_sim_threads_help);
}

static void assumptions(wz_buf *md, const wzm_scenario *s, const wzm_compare *c)
{
	const wzm_model *m = c->model;
	const wzm_gpu *g = c->gpu;
	wz_buf_printf(md, "## Scenario and assumptions\n\n");
	wz_buf_printf(md, "- Scenario: `%s` (%s)\n", s->name, s->origin);
	wz_buf_printf(md, "- Traffic: %ld concurrent users, each holding %ld tokens of context\n",
		      s->users, s->context);
	wz_buf_printf(md, "- Model: %s: %.0f layers, latent %.0f + position %.0f values per token "
			  "per layer, %.0fB parameters at %.0f bits (%s:%d; source: %s)\n",
		      m->name, m->layers, m->kv_lora_rank, m->rope_dim, m->params_total_b,
		      isnan(s->mem.weight_bits) ? m->weight_bits : s->mem.weight_bits, m->origin,
		      m->line, m->source ? m->source : "");
	wz_buf_printf(md, "- GPU: %s, %.0f GiB HBM (%s:%d)\n", g->name, g->hbm_gib, g->origin,
		      g->line);
	wz_buf_printf(md, "- Prices: set `%s`, $%.2f/GPU-hour reserved, $%.2f on demand, 8,760 "
			  "hours a year (%s:%d; source: %s; %s)\n",
		      s->price_set, c->rates.reserved_usd_h, c->rates.ondemand_usd_h,
		      c->rates.origin, c->rates.line, c->rates.source ? c->rates.source : "",
		      c->rates.date ? c->rates.date : "undated");
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
 * as DESIGN.md asks of a proposal. */
static void summary(wz_buf *md, const wzm_scenario *s, const wzm_compare *c, const wza_run *run)
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
		if (!isnan(simg) && simg >= (double)f->gpus) {
			snprintf(both, sizeof both, "%s and simulation", binds);
			binds = simg == (double)f->gpus ? both : "simulation";
			const wza_figure *sv = wza_run_find_figure(run, "simulation", r->fmt.name,
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
	wz_buf_puts(md, "## Summary\n\n");
	wzp_table_render(t, WZP_MD, md);
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
	wz_buf_printf(&md, "# Pilot proposal: %s cache formats for %s on %s\n\n", s->name,
		      c->model->name, c->gpu->name);
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
	summary(&md, s, c, x->run);
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
		if (strcmp(f->table, "gpus_by_context"))
			continue;
		const wza_figure *u = wza_run_find_figure(run, "users_per_gpu_by_context", f->row,
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

int wz_cmd_propose(int argc, char **argv)
{
	wz_propose_opts o;
	int rc = wz_propose_parse(argc, argv, &o);
	if (rc == 0)
		help();
	if (rc >= 0)
		return rc;
	wz_diag diag;
	wz_diag_clear(&diag);
	wza_run *run = wza_run_new("propose", argc - 1, argv + 1, PACKAGE_VERSION);
	if (!run) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail("propose", &diag);
	}
	wzm_catalog *cat = NULL;
	wzm_scenario *scn = NULL;
	wzm_compare cmp;
	/* Only the codec run asked for: an unrelated archived measurement is
	 * never picked up silently. */
	wza_run *codec_run = NULL;
	if (o.codec_run &&
	    (rc = wz_propose_load_codec_run("propose", o.archive, o.codec_run, &codec_run))) {
		wza_run_free(run);
		return rc;
	}
	o.codec_loaded = codec_run;
	rc = wz_propose_compute("propose", &o, run, &scn, &cat, &cmp);
	if (rc) {
		wza_run_free(codec_run);
		wza_run_free(run);
		return rc;
	}
	const wza_run *codec = run->ncodec ? run : codec_run;

	/* The archive: the one asked for, else the default place, else (no
	 * writable home) the output folder, so a proposal never needs $HOME. */
	wza_archive *archive = NULL;
	char *fallback = NULL;
	if (o.archive) {
		rc = wz_archive_open_cli("propose", o.archive, 1, &archive);
	} else if (!o.no_archive) {
		char *def = NULL;
		wz_diag why;
		if (wza_default_path(&def, &why) || wza_open(def, 1, &archive, &why)) {
			fallback = wz_path_join(o.out_dir, WZA_DEFAULT_NAME);
			wz_cli_warn("propose", "%s; storing the run in %s instead", why.msg,
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
		rc = wz_cli_fail("propose", &diag);
	}
	context_csv(run, &ctx);
	if (o.simulate)
		wz_propose_sim_csv(run, &simcsv);
	int modes = o.modes.all || o.modes.n;
	if (modes)
		wz_propose_modes_csv(run, &modecsv);
	if (codec)
		wz_propose_quality_csv(codec, &qcsv);
	if (!rc && wz_staging_create(o.out_dir, &staging, &diag))
		rc = wz_cli_fail("propose", &diag);
	if (!rc) {
		char *dir = wz_path_join(staging, "charts");
		if (!dir || wz_charts_write(charts, ncharts, dir, &rendered, &why_not, &diag))
			rc = wz_cli_fail("propose", &diag);
		free(dir);
	}
	const char *files[][2] = {
		{ "cost.csv", wz_buf_str(&csv) }, { "cost.json", wz_buf_str(&json) },
		{ "memory.csv", wz_buf_str(&mem) }, { "context.csv", wz_buf_str(&ctx) },
		{ "simulation.csv", wz_buf_str(&simcsv) }, { "quality.csv", wz_buf_str(&qcsv) },
		{ "serving-modes.csv", wz_buf_str(&modecsv) },
	};
	for (size_t i = 0; !rc && i < sizeof files / sizeof files[0]; i++)
		if ((i < 4 || (i == 4 && o.simulate) || (i == 5 && codec) || (i == 6 && modes)) &&
		    wz_staging_file(staging, files[i][0], files[i][1], &diag))
			rc = wz_cli_fail("propose", &diag);

	if (!rc && fallback)
		rc = wz_archive_open_cli("propose", fallback, 1, &archive);
	if (!rc) {
		wza_run_finish(run, "ok");
		if (archive && wza_store(archive, run, &diag))
			rc = wz_cli_fail("propose", &diag);
	}
	if (!rc) {
		wz_err err = WZ_OK;
		md_extras x = { charts, ncharts, rendered, wz_buf_str(&why_not), wz_buf_str(&skipped),
				codec, run->id, archive ? wza_path(archive) : NULL, run };
		md = build_markdown(scn, &cmp, &x, &err);
		if (err || !md) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_cli_fail("propose", &diag);
		} else if (wz_staging_file(staging, "proposal.md", md, &diag) ||
			   wz_staging_publish(staging, o.out_dir, &diag)) {
			rc = wz_cli_fail("propose", &diag);
		}
	}
	if (rc && staging)
		wz_staging_remove(staging);
	if (!rc) {
		fputs(wz_buf_str(&text), stdout);
		printf("\nProposal written to %s/proposal.md\n", o.out_dir);
		if (rendered)
			printf("Charts: %d, in %s/charts (PNG and SVG, with data and gnuplot "
			       "scripts)\n", ncharts, o.out_dir);
		else
			printf("Charts not drawn: %s; their data and gnuplot scripts are in "
			       "%s/charts\n", wz_buf_str(&why_not), o.out_dir);
		if (archive)
			printf("Run %lld archived in %s\n", run->id, wza_path(archive));
		else
			printf("Run not archived (--no-archive)\n");
	}
	free(md);
	free(staging);
	free(fallback);
	wz_charts_free(charts, ncharts);
	wz_buf_free(&skipped), wz_buf_free(&why_not), wz_buf_free(&csv), wz_buf_free(&json);
	wz_buf_free(&mem), wz_buf_free(&ctx), wz_buf_free(&text), wz_buf_free(&simcsv);
	wz_buf_free(&modecsv);
	wz_buf_free(&qcsv);
	wza_run_free(codec_run);
	wza_close(archive);
	wzm_compare_free(&cmp);
	wzm_scenario_free(scn);
	wzm_catalog_free(cat);
	wza_run_free(run);
	return rc;
}
