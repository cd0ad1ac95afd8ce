/* The charts of a run, drawn from its archived figures only, so `propose`
 * and `plot RUN` make the same charts (propose.h). */
#include "runs/propose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "runs/schema.h"

/* Distinct values of a figure field in first-seen order, for one table. */
typedef struct {
	const char *items[256];
	int n;
} name_list;

static void add_name(name_list *l, const char *s)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->items[i], s))
			return;
	if (l->n < 256)
		l->items[l->n++] = s;
}

static void rows_of(const wza_run *run, const char *table, name_list *rows, name_list *cols)
{
	rows->n = 0;
	if (cols)
		cols->n = 0;
	for (int i = 0; i < run->nfigures; i++)
		if (!strcmp(run->figures[i].table, table)) {
			add_name(rows, run->figures[i].row);
			if (cols)
				add_name(cols, run->figures[i].col);
		}
}

static const char *fig_text(const wza_run *run, const char *table, const char *row,
			    const char *col)
{
	return wza_run_text(run, table, row, col, "?");
}

/* "10,000 users at 100k tokens, DeepSeek-V3 on H100 SXM 80GB" */
static void scenario_line(const wza_run *run, char *out, size_t n)
{
	char users[32];
	wz_format_thousands(wza_run_value(run, WZ_T_SCENARIO, "scenario", "users"), 0, users,
			    sizeof users);
	snprintf(out, n, "%s users at %.0fk tokens, %s on %s", users,
		 wza_run_value(run, WZ_T_SCENARIO, "scenario", "context") / 1000.0,
		 fig_text(run, WZ_T_SCENARIO, "scenario", "model"),
		 fig_text(run, WZ_T_SCENARIO, "scenario", "gpu"));
}

static int has_iso(const name_list *formats)
{
	for (int i = 0; i < formats->n; i++)
		if (!strncmp(formats->items[i], "iso:", 4))
			return 1;
	return 0;
}

static void source_note(wzp_chart *c, const wza_run *run, const name_list *formats)
{
	if (has_iso(formats))
		wzp_chart_note(c, "iso:X = a wz format at %s quality in X times fewer bits (the ratio "
				  "is an input, not a measurement).",
			       fig_text(run, WZ_T_SCENARIO, "scenario", "baseline_format"));
	/* No run id here: propose draws before it stores the run, and `plot`
	 * must make the same script from the archived figures. */
	(void)run;
}

static wzp_chart *cost_chart(const wza_run *run, int savings)
{
	name_list formats;
	rows_of(run, WZ_T_COST, &formats, NULL);
	if (!formats.n)
		return NULL;
	char line[256], title[400];
	scenario_line(run, line, sizeof line);
	const char *base = fig_text(run, WZ_T_SCENARIO, "scenario", "baseline_format");
	if (savings)
		snprintf(title, sizeof title, "Annual saving against %s\n%s", base, line);
	else
		snprintf(title, sizeof title, "Annual GPU cost per cache format\n%s", line);
	wzp_chart *c = wzp_chart_new(WZP_CHART_BARS, savings ? "savings" : "cost", title);
	if (!c)
		return NULL;
	char ylabel[128];
	if (savings)
		snprintf(ylabel, sizeof ylabel, "Saving per year against %s (million US$)", base);
	else
		snprintf(ylabel, sizeof ylabel, "GPU cost per year (million US$)");
	wzp_chart_axes(c, "Cache format", ylabel);
	static const char *const methods[] = { "scaling", "memory" };
	static const char *const method_names[] = { "scaling", "memory accounting" };
	int series[4], col = 0;
	const char *keys[4];
	for (int m = 0; m < 2; m++) {
		char key[64];
		snprintf(key, sizeof key, "%s_%s", methods[m], savings ? "saving_reserved"
								       : "reserved_usd_year");
		if (isnan(wza_run_value(run, WZ_T_COST, formats.items[0], key)))
			continue;
		char name[96];
		snprintf(name, sizeof name, "Reserved, %s", method_names[m]);
		series[col] = wzp_chart_series(c, name);
		keys[col++] = methods[m];
		snprintf(name, sizeof name, "On demand, %s", method_names[m]);
		series[col] = wzp_chart_series(c, name);
		keys[col++] = methods[m];
	}
	for (int i = 0; i < formats.n; i++) {
		const char *f = formats.items[i];
		if (savings && !strcmp(f, base))
			continue;
		wzp_chart_row(c, f, i);
		for (int k = 0; k < col; k++) {
			char key[64];
			if (savings)
				snprintf(key, sizeof key, "%s_saving_%s", keys[k],
					 k % 2 ? "ondemand" : "reserved");
			else
				snprintf(key, sizeof key, "%s_%s_usd_year", keys[k],
					 k % 2 ? "ondemand" : "reserved");
			wzp_chart_value(c, series[k], wza_run_value(run, WZ_T_COST, f, key) / 1e6, NAN, NAN);
		}
	}
	wzp_chart_note(c, "Prices: $%.2f per GPU-hour reserved, $%.2f on demand (price set '%s'), "
			  "x 8,760 hours a year.",
		       wza_run_value(run, WZ_T_SCENARIO, "scenario", "reserved_usd_h"),
		       wza_run_value(run, WZ_T_SCENARIO, "scenario", "ondemand_usd_h"),
		       fig_text(run, WZ_T_SCENARIO, "scenario", "price_set"));
	source_note(c, run, &formats);
	return c;
}

static wzp_chart *context_chart(const wza_run *run, int users)
{
	const char *table = users ? WZ_T_USERS_BY_CONTEXT : WZ_T_GPUS_BY_CONTEXT;
	name_list formats, contexts;
	rows_of(run, table, &formats, &contexts);
	if (!formats.n)
		return NULL;
	char line[256], title[400];
	scenario_line(run, line, sizeof line);
	if (users)
		snprintf(title, sizeof title, "Users per GPU against context\n%s on %s",
			 fig_text(run, WZ_T_SCENARIO, "scenario", "model"),
			 fig_text(run, WZ_T_SCENARIO, "scenario", "gpu"));
	else
		snprintf(title, sizeof title, "GPUs needed against context (memory accounting)\n%s",
			 line);
	wzp_chart *c = wzp_chart_new(WZP_CHART_LINES, users ? "users_per_gpu" : "gpus_by_context",
				     title);
	if (!c)
		return NULL;
	wzp_chart_axes(c, "Context per user (thousand tokens, log scale)",
		       users ? "Users per GPU (log scale)" : "GPUs needed");
	wzp_chart_log(c, 1, users);
	for (int s = 0; s < formats.n; s++)
		wzp_chart_series(c, formats.items[s]);
	for (int k = 0; k < contexts.n; k++) {
		double ctx = atof(contexts.items[k]);
		wzp_chart_row(c, contexts.items[k], ctx / 1000.0);
		for (int s = 0; s < formats.n; s++) {
			double v = wza_run_value(run, table, formats.items[s], contexts.items[k]);
			/* Zero users cannot be drawn on a log scale: it is "does not fit". */
			wzp_chart_value(c, s, users && v <= 0 ? NAN : v, NAN, NAN);
		}
	}
	char mark[64];
	snprintf(mark, sizeof mark, "scenario: %.0fk tokens",
		 wza_run_value(run, WZ_T_SCENARIO, "scenario", "context") / 1000.0);
	wzp_chart_mark_x(c, wza_run_value(run, WZ_T_SCENARIO, "scenario", "context") / 1000.0, mark);
	wzp_chart_note(c, "Whole replicas of %.0f GPUs; every user's cache stays resident; a gap "
			  "means not one user fits.",
		       wza_run_value(run, WZ_T_SCENARIO, "scenario", "gpus_per_replica"));
	source_note(c, run, &formats);
	return c;
}

static wzp_chart *memory_chart(const wza_run *run)
{
	name_list formats;
	rows_of(run, WZ_T_MEMORY, &formats, NULL);
	if (!formats.n)
		return NULL;
	char title[400];
	snprintf(title, sizeof title, "Per-GPU memory\n%s on %s, %.0fk tokens per user",
		 fig_text(run, WZ_T_SCENARIO, "scenario", "model"),
		 fig_text(run, WZ_T_SCENARIO, "scenario", "gpu"),
		 wza_run_value(run, WZ_T_SCENARIO, "scenario", "context") / 1000.0);
	wzp_chart *c = wzp_chart_new(WZP_CHART_STACKED, "memory", title);
	if (!c)
		return NULL;
	wzp_chart_axes(c, "Cache format", "Memory per GPU (GiB)");
	static const char *const parts[] = { "weights", "reserve", "cache_used", "cache_free",
					     "outside_engine" };
	static const char *const names[] = { "Weights (this GPU's share)", "Activation reserve",
					     "Cache in use", "Cache pool unused",
					     "Left outside the engine (mem-util)" };
	for (int p = 0; p < 5; p++)
		wzp_chart_series(c, names[p]);
	for (int i = 0; i < formats.n; i++) {
		wzp_chart_row(c, formats.items[i], i);
		for (int p = 0; p < 5; p++)
			wzp_chart_value(c, p, wza_run_value(run, WZ_T_MEMORY, formats.items[i], parts[p]), NAN,
					NAN);
	}
	wzp_chart_note(c, "Bars add up to the GPU's HBM (%.0f GiB); cache in use = users per GPU x "
			  "their 64-token blocks.",
		       wza_run_value(run, WZ_T_MEMORY, formats.items[0], "hbm"));
	source_note(c, run, &formats);
	return c;
}

/* What a simulation series is, for its chart (sim_record.h names them). */
static const struct {
	const char *name, *title, *x, *y, *target;
	double target_scale;
} sim_series[] = {
	{ "ttft_cdf", "Time to first token, distribution per cache format",
	  "Time to first token (s, log scale)", "Share of requests at or below",
	  "ttft_p99_target_s", 1 },
	{ "tpot_cdf", "Time per output token, distribution per cache format",
	  "Time per output token (ms, log scale)", "Share of requests at or below",
	  "tpot_p99_target_s", 1e3 },
	{ "occupancy", "Cache occupancy over time", "Simulated time (s)",
	  "Cache blocks in use (share of the fleet's pool)", NULL, 0 },
};

/* "10,000 users, 3,300 s simulated after 300 s warm-up, seed 1" or the
 * replayed traffic's name. */
static void sim_line(const wza_run *run, char *out, size_t n)
{
	const char *t = WZ_T_SIM_SETUP, *r = "setup";
	char users[32];
	double u = wza_run_value(run, t, r, "users");
	if (isnan(u)) {
		snprintf(out, n, "replay of %s, seed %.0f", fig_text(run, t, r, "traffic"),
			 wza_run_value(run, t, r, "seed"));
		return;
	}
	wz_format_thousands(u, 0, users, sizeof users);
	snprintf(out, n, "%s users at %.0fk tokens, %.0f s simulated after %.0f s warm-up, "
			 "idle sessions %s, seed %.0f",
		 users, wza_run_value(run, WZ_T_SCENARIO, "scenario", "context") / 1000.0,
		 wza_run_value(run, t, r, "duration_s") - wza_run_value(run, t, r, "warmup_s"),
		 wza_run_value(run, t, r, "warmup_s"),
		 fig_text(run, t, r, "idle_policy"), wza_run_value(run, t, r, "seed"));
}

static wzp_chart *sim_chart(const wza_run *run, const char *series)
{
	int k = -1;
	for (size_t i = 0; i < sizeof sim_series / sizeof sim_series[0]; i++)
		if (!strcmp(series, sim_series[i].name))
			k = (int)i;
	char name[64], title[512], line[256];
	snprintf(name, sizeof name, "sim_");
	for (size_t i = 0, j = 4; series[i] && j < sizeof name - 1; i++) {
		char ch = series[i];
		name[j++] = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ? ch : '_';
		name[j] = '\0';
	}
	sim_line(run, line, sizeof line);
	snprintf(title, sizeof title, "%s\n%s", k >= 0 ? sim_series[k].title : series, line);
	wzp_chart *c = wzp_chart_new(WZP_CHART_LINES, name, title);
	if (!c)
		return NULL;
	wzp_chart_axes(c, k >= 0 ? sim_series[k].x : "x", k >= 0 ? sim_series[k].y : "value");
	/* Latency tails span decades; the targets sit far out in them. */
	if (k >= 0 && sim_series[k].target)
		wzp_chart_log(c, 1, 0);
	name_list formats = { .n = 0 };
	for (int i = 0; i < run->npoints; i++)
		if (!strcmp(run->points[i].series, series))
			add_name(&formats, run->points[i].format);
	for (int s = 0; s < formats.n; s++)
		wzp_chart_series(c, formats.items[s]);
	for (int i = 0; i < run->npoints; i++) {
		const wza_point *p = &run->points[i];
		if (strcmp(p->series, series))
			continue;
		/* A zero latency cannot sit on a log axis. */
		if (k >= 0 && sim_series[k].target && p->x <= 0)
			continue;
		for (int s = 0; s < formats.n; s++)
			if (!strcmp(formats.items[s], p->format)) {
				wzp_chart_row(c, p->format, p->x);
				wzp_chart_value(c, s, p->y, NAN, NAN);
			}
	}
	if (k >= 0 && sim_series[k].target) {
		/* The target as a series of its own, a vertical line from 0 to 1,
		 * so the axis always reaches it and the legend names it. */
		double target = wza_run_value(run, WZ_T_SIM_SETUP, "setup", sim_series[k].target);
		if (!isnan(target) && target > 0) {
			char label[64];
			double x = target * sim_series[k].target_scale;
			snprintf(label, sizeof label, "p99 target, %g %s", x,
				 sim_series[k].target_scale > 1 ? "ms" : "s");
			int t = wzp_chart_series(c, label);
			for (int y = 0; y <= 1; y++) {
				wzp_chart_row(c, "target", x);
				wzp_chart_value(c, t, y, NAN, NAN);
			}
		}
		wzp_chart_note(c, "Each format at the smallest fleet that met the targets (or the "
				  "fleet simulated); quantiles from 0.5%%-wide histogram bins.");
	} else {
		wzp_chart_note(c, "Fleet totals sampled at a fixed interval, warm-up included; "
				  "each format at the fleet sized or simulated.");
	}
	return c;
}

/* One format's frontier of the deployment search's screen: output tokens/s
 * per GPU against tokens/s per user, the form InferenceMAX and SemiAnalysis
 * publish, with the TPOT target as the least tokens/s per user allowed and
 * the chosen configuration's point. */
static wzp_chart *pareto_chart(const wza_run *run, const char *format)
{
	char name[64], title[512];
	snprintf(name, sizeof name, "pareto_");
	for (size_t i = 0, j = 7; format[i] && j < sizeof name - 1; i++) {
		char ch = format[i];
		name[j++] = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ? ch : '_';
		name[j] = '\0';
	}
	snprintf(title, sizeof title, "Throughput per GPU against per user, %s\nthe deployment "
				      "search's screen over every configuration",
		 format);
	wzp_chart *c = wzp_chart_new(WZP_CHART_LINES, name, title);
	if (!c)
		return NULL;
	wzp_chart_axes(c, "Output tokens/s per user", "Output tokens/s per GPU");
	int s = wzp_chart_series(c, "frontier over the configurations");
	double top = 0;
	for (int i = 0; i < run->npoints; i++) {
		const wza_point *p = &run->points[i];
		if (!strcmp(p->series, "pareto") && !strcmp(p->format, format)) {
			wzp_chart_row(c, format, p->x);
			wzp_chart_value(c, s, p->y, NAN, NAN);
			if (p->y > top)
				top = p->y;
		}
	}
	/* The target as a series of its own, a vertical line, so that the
	 * axis reaches it and the legend names it: configurations left of it
	 * are too slow per user. */
	double tpot = wza_run_value(run, WZ_T_SIM_SETUP, "setup", "tpot_p99_target_s");
	if (!isnan(tpot) && tpot > 0) {
		char label[96];
		snprintf(label, sizeof label, "TPOT target %g ms: %.0f tokens/s per user", tpot * 1e3,
			 1 / tpot);
		int t = wzp_chart_series(c, label);
		for (int y = 0; y <= 1; y++) {
			wzp_chart_row(c, "target", 1 / tpot);
			wzp_chart_value(c, t, y * top, NAN, NAN);
		}
	}
	wzp_chart_note(c, "Each configuration at decode batches of 1, 2, 4, ... per rank, at the "
			  "load each carries (prefill's share taken out); the screen's mean "
			  "figures, not the simulator's p99s.  Chosen: %s.",
		       fig_text(run, WZ_T_DEPLOYMENT, format, "configuration"));
	return c;
}

wz_err wz_charts_build(const wza_run *run, const wza_run *codec, wzp_chart ***out, int *n,
		       wz_buf *skipped)
{
	*out = NULL;
	*n = 0;
	wzp_chart **charts = calloc(64, sizeof *charts);
	if (!charts)
		return WZ_ERR_NOMEM;
	int k = 0;
	charts[k++] = cost_chart(run, 0);
	charts[k++] = cost_chart(run, 1);
	charts[k++] = context_chart(run, 0);
	charts[k++] = context_chart(run, 1);
	charts[k++] = memory_chart(run);
	charts[k++] = wz_chart_codec(codec, "nmse", skipped);
	charts[k++] = wz_chart_codec(codec, "kl", skipped);
	name_list series = { .n = 0 }, fronts = { .n = 0 };
	for (int i = 0; i < run->npoints; i++) {
		if (!strcmp(run->points[i].series, "pareto"))
			add_name(&fronts, run->points[i].format);
		else
			add_name(&series, run->points[i].series);
	}
	for (int i = 0; i < series.n && k < 64; i++)
		charts[k++] = sim_chart(run, series.items[i]);
	for (int i = 0; i < fronts.n && k < 64; i++)
		charts[k++] = pareto_chart(run, fronts.items[i]);
	if (!series.n)
		wz_buf_printf(skipped, "Latency distributions and cache occupancy: left out, because %s.\n",
			      wz_propose_simulated(run)
				      ? "no format's fleet met the targets in the simulation (they "
					"show each format at the fleet sized)"
				      : "no traffic was simulated in this run (propose --simulate or "
					"--traffic FILE simulates)");
	/* Drop the charts this run has no data for. */
	int m = 0;
	for (int i = 0; i < k; i++)
		if (charts[i])
			charts[m++] = charts[i];
	*out = charts;
	*n = m;
	return skipped->failed ? WZ_ERR_NOMEM : WZ_OK;
}

void wz_charts_free(wzp_chart **charts, int n)
{
	for (int i = 0; i < n; i++)
		wzp_chart_free(charts[i]);
	free(charts);
}

wz_err wz_charts_write(wzp_chart **charts, int n, const char *dir, int *rendered,
		       wz_buf *why_not, wz_diag *diag)
{
	*rendered = 0;
	wz_err err = wz_mkdir_out(dir, diag);
	for (int i = 0; i < n && !err; i++)
		err = wzp_chart_write(charts[i], dir, diag);
	if (err)
		return err;
	char *gnuplot = NULL;
	wz_diag why;
	if (wzp_gnuplot_find(&gnuplot, &why)) {
		wz_buf_puts(why_not, why.msg);
		return WZ_OK;
	}
	for (int i = 0; i < n; i++) {
		wz_err rerr = wzp_chart_render(gnuplot, dir, wzp_chart_name(charts[i]), &why);
		if (rerr == WZ_ERR_REFUSED) {
			/* a link or a folder where a chart goes: refused, not a
			 * chart gnuplot could not draw */
			free(gnuplot);
			return wz_diag_set(diag, rerr, "%s", why.msg);
		}
		if (rerr) {
			wz_buf_puts(why_not, why.msg);
			free(gnuplot);
			return WZ_OK;
		}
	}
	free(gnuplot);
	*rendered = 1;
	return WZ_OK;
}
