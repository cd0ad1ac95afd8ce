/* `propose --serving-modes`: the scenario's formats sized by simulation under
 * each of several serving modes (aggregated or disaggregated; idle sessions
 * resident, offloaded in the GPU format or another, or dropped), recorded
 * into the run and rendered from its figures (propose.h). */
#include "runs/propose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "runs/schema.h"

static void add(wz_propose_modes *m, const char *serving, const char *idle, const char *offload)
{
	wz_propose_mode *x = &m->modes[m->n++];
	x->serving = serving;
	x->idle = idle;
	snprintf(x->offload, sizeof x->offload, "%s", offload);
}

/* 'all': both servings (disaggregated where the scenario has a prefill
 * pool), each with every idle policy, and offloading in the scenario's
 * offload format too where that is not the GPU format. */
static void expand_all(const wz_sim_setup *main, wz_propose_modes *out, const char **skipped)
{
	const wzs_params *p = &main->params;
	int pool = p->prefill_gpus > 0; /* set from prefill_gpus_search too */
	const char *other = strcmp(p->offload_format, "same") ? p->offload_format : "";
	out->n = 0;
	*skipped = pool ? NULL
			: "disaggregated serving was not sized: the scenario names no prefill pool "
			  "(prefill_gpus_per_replica or prefill_gpus_search)";
	for (int s = 0; s < 1 + pool; s++) {
		add(out, wz_propose_servings[s], "resident", "");
		add(out, wz_propose_servings[s], "offload", "");
		if (*other)
			add(out, wz_propose_servings[s], "offload", other);
		add(out, wz_propose_servings[s], "drop", "");
	}
}

static void mode_label(const wz_propose_mode *m, char *out, size_t n)
{
	snprintf(out, n, "%s/%s%s%s", m->serving, m->idle, m->offload[0] ? "/" : "", m->offload);
}

static void record_mode(wza_run *run, int order, const wz_propose_mode *m,
			const wz_size_row *rows, int nrows)
{
	char label[128], key[256];
	mode_label(m, label, sizeof label);
	const char *t = WZ_T_SERVING_MODES;
	wza_run_figure(run, t, label, "order", order, NULL);
	wza_run_figure(run, t, label, "serving", NAN, m->serving);
	wza_run_figure(run, t, label, "idle_policy", NAN, m->idle);
	wza_run_figure(run, t, label, "offload_format", NAN, m->offload[0] ? m->offload : "same");
	t = WZ_T_SERVING_MODE_FLEETS;
	for (int i = 0; i < nrows; i++) {
		const wz_size_row *r = &rows[i];
		char bind[WZS_BINDS_TEXT];
		int found = r->search.replicas > 0;
		snprintf(key, sizeof key, "%s|%s", label, r->size.name);
		wza_run_figure(run, t, key, "replicas", found ? (double)r->fleet.replicas : NAN, NULL);
		wza_run_figure(run, t, key, "gpus", found ? (double)r->fleet.gpus : NAN, NULL);
		wza_run_figure(run, t, key, "reserved_usd_year",
			       found ? r->fleet.reserved_usd_year : NAN, NULL);
		wza_run_figure(run, t, key, "ttft_p99_s", found ? r->search.result.ttft.p99 : NAN,
			       NULL);
		wza_run_figure(run, t, key, "tpot_p99_s", found ? r->search.result.tpot.p99 : NAN,
			       NULL);
		wza_run_figure(run, t, key, "occupancy_peak",
			       found ? r->search.result.occupancy_peak : NAN, NULL);
		if (r->prefill_gpus > 0)
			wza_run_figure(run, t, key, "prefill_gpus_per_replica", (double)r->prefill_gpus,
				       NULL);
		wza_run_figure(run, t, key, "runs", (double)r->search.runs, NULL);
		wza_run_figure(run, t, key, "within_noise", NAN,
			       r->search.marginal || r->search.below_marginal ? "yes" : "no");
		wza_run_figure(run, t, key, "binds", NAN, wzs_search_binds(&r->search, bind));
	}
}

/* Whether a mode's set-up sizes what the main one did: loaded from the
 * same scenario and options, they differ at most in these three. */
static int same_mode(const wzs_params *a, const wzs_params *b)
{
	return a->disaggregated == b->disaggregated && a->idle_policy == b->idle_policy &&
	       !strcmp(a->offload_format, b->offload_format);
}

/* The set-up of mode m: the main one's scenario and options under m's
 * serving, idle policy and offload format (a message and non-zero when
 * the scenario cannot serve so). */
static int mode_setup(const char *cmd, const wz_propose_opts *o, const wz_propose_mode *m,
		      wz_sim_setup *setup)
{
	wz_sim_opts so = o->sim;
	so.serving = m->serving;
	so.idle_policy = m->idle;
	so.offload_format = m->offload[0] ? m->offload : "same";
	return wz_sim_setup_load(cmd, &o->scn, &so, setup);
}

int wz_propose_modes_check(const char *cmd, const wz_propose_opts *o, const wz_sim_setup *main)
{
	wz_propose_modes modes = o->modes;
	const char *skipped = NULL;
	if (modes.all)
		expand_all(main, &modes, &skipped);
	for (int k = 0; k < modes.n; k++) {
		wz_sim_setup setup;
		int rc = mode_setup(cmd, o, &modes.modes[k], &setup);
		if (rc)
			return rc;
		wz_sim_setup_free(&setup);
	}
	return 0;
}

int wz_propose_modes_run(const char *cmd, const wz_propose_opts *o, const wz_sim_setup *main,
			 const wz_size_row *main_rows, wza_run *run)
{
	wz_propose_modes modes = o->modes;
	const char *skipped = NULL;
	if (modes.all)
		expand_all(main, &modes, &skipped);
	if (skipped)
		wza_run_figure(run, "serving_modes_note", "all", "skipped", NAN, skipped);
	for (int k = 0; k < modes.n; k++) {
		const wz_propose_mode *m = &modes.modes[k];
		char label[128];
		mode_label(m, label, sizeof label);
		if (!o->quiet)
			wz_say(WZ_SAY_ERR, "wzplan %s: serving mode %d of %d: %s\n", cmd, k + 1, modes.n, label);
		wz_sim_setup setup;
		int rc = mode_setup(cmd, o, m, &setup);
		if (rc)
			return rc;
		/* the modes compare serving modes at the scenario's configuration,
		 * searched or not in the main sizing */
		setup.search = 0;
		if (!main->search && same_mode(&setup.params, &main->params)) {
			record_mode(run, k, m, main_rows, setup.scn->nformats);
			wz_sim_setup_free(&setup);
			continue;
		}
		wz_size_row *rows = NULL;
		int base = -1;
		rc = wz_size_formats(cmd, &setup, o->max_replicas, o->quiet, &rows, &base);
		if (!rc)
			record_mode(run, k, m, rows, setup.scn->nformats);
		wz_size_rows_free(rows, setup.scn->nformats);
		wz_sim_setup_free(&setup);
		if (rc)
			return rc;
	}
	return 0;
}

static const char *fig_text(const wza_run *run, const char *table, const char *row,
			    const char *col)
{
	return wza_run_text(run, table, row, col, "");
}

/* The run's modes in their order: labels pointing into the run. */
static int mode_labels(const wza_run *run, const char **labels, int max)
{
	int n = 0;
	for (int i = 0; i < run->nfigures; i++) {
		const wza_figure *f = &run->figures[i];
		if (strcmp(f->table, WZ_T_SERVING_MODES) || strcmp(f->col, "order"))
			continue;
		/* a run read back from an archive is input like any other */
		if (!(f->value >= 0 && f->value < max))
			continue;
		int at = (int)f->value;
		labels[at] = f->row;
		n = at + 1 > n ? at + 1 : n;
	}
	for (int i = 0; i < n; i++)
		if (!labels[i])
			return 0;
	return n;
}

static void idle_words(const wza_run *run, const char *label, char *out, size_t n)
{
	const char *idle = fig_text(run, WZ_T_SERVING_MODES, label, "idle_policy");
	const char *f = fig_text(run, WZ_T_SERVING_MODES, label, "offload_format");
	if (!strcmp(idle, "offload"))
		snprintf(out, n, "offload, in %s", strcmp(f, "same") ? f : "the GPU format");
	else
		snprintf(out, n, "%s", idle);
}

void wz_propose_modes_section(wz_buf *md, const wza_run *run, const wzm_scenario *s,
			      const wzm_compare *c)
{
	const char *labels[WZ_PROPOSE_MAX_MODES * 2] = { 0 };
	int n = mode_labels(run, labels, WZ_PROPOSE_MAX_MODES * 2);
	const char *skipped = fig_text(run, "serving_modes_note", "all", "skipped");
	if (n == 0 && !*skipped)
		return;
	wz_buf_puts(md, "## Sized under each serving mode\n\n");
	wz_buf_puts(md, "The same formats, users and targets as \"Sized by simulation\", sized again "
			"with the serving and the idle policy of each row (the scenario's other "
			"keys unchanged).  Each cell: replicas, then GPUs (a disaggregated "
			"replica's prefill pool included).\n\n");
	wzp_table *t = wzp_table_new("Fleets by serving mode");
	if (!t)
		return;
	wzp_table_column(t, "serving", "Serving", 0);
	wzp_table_column(t, "idle", "Idle sessions", 0);
	for (int i = 0; i < c->nrows; i++)
		wzp_table_column(t, c->rows[i].fmt.name, c->rows[i].fmt.label, 1);
	wzp_table_column(t, "binds", "Binds", 0);
	int noisy = 0;
	for (int k = 0; k < n; k++) {
		char words[96], key[256], cell[96], g[32], r[32];
		wzp_table_row(t);
		wzp_table_str(t, fig_text(run, WZ_T_SERVING_MODES, labels[k], "serving"));
		idle_words(run, labels[k], words, sizeof words);
		wzp_table_str(t, words);
		wz_buf binds = { 0 };
		const char *first = NULL;
		int same = 1;
		double base_gpus = NAN;
		if (c->baseline >= 0) {
			snprintf(key, sizeof key, "%s|%s", labels[k], c->rows[c->baseline].fmt.name);
			base_gpus = wza_run_value(run, WZ_T_SERVING_MODE_FLEETS, key, "gpus");
		}
		for (int i = 0; i < c->nrows; i++) {
			snprintf(key, sizeof key, "%s|%s", labels[k], c->rows[i].fmt.name);
			double rep = wza_run_value(run, WZ_T_SERVING_MODE_FLEETS, key, "replicas");
			if (isnan(rep)) {
				wzp_table_str(t, "none met the targets");
			} else {
				int close = !strcmp(fig_text(run, WZ_T_SERVING_MODE_FLEETS, key,
							     "within_noise"),
						    "yes");
				noisy = noisy || close;
				double gpus = wza_run_value(run, WZ_T_SERVING_MODE_FLEETS, key, "gpus");
				char vs[32] = "";
				if (i != c->baseline && base_gpus > 0)
					snprintf(vs, sizeof vs, ", %+.1f%%", 100 * (gpus / base_gpus - 1));
				wz_format_thousands(rep, 0, r, sizeof r);
				wz_format_thousands(gpus, 0, g, sizeof g);
				snprintf(cell, sizeof cell, "%s (%s%s)%s", r, g, vs, close ? " *" : "");
				wzp_table_num(t, rep, cell);
			}
			const char *b = fig_text(run, WZ_T_SERVING_MODE_FLEETS, key, "binds");
			if (!first)
				first = b;
			same = same && !strcmp(first, b);
			wz_buf_printf(&binds, "%s%s: %s", i ? "; " : "", c->rows[i].fmt.label, b);
		}
		wzp_table_str(t, same && first ? first : wz_buf_str(&binds));
		wz_buf_free(&binds);
	}
	wzp_table_note(t, "Replicas of %.0f decode GPUs; the smallest fleet whose run met p99 TTFT "
			  "%g s and p99 TPOT %g ms with no refused request; a percentage is the "
			  "change in GPUs against `%s` in the same mode.  Binds: the resource "
			  "that made the largest fleet short of it fail (or, where none met the "
			  "targets, the run at the limit).  Per format and mode: "
			  "`serving-modes.csv`.",
		       wza_run_value(run, WZ_T_SIM_SETUP, "setup", "gpus_per_replica"),
		       wza_run_value(run, WZ_T_SIM_SETUP, "setup", "ttft_p99_target_s"),
		       wza_run_value(run, WZ_T_SIM_SETUP, "setup", "tpot_p99_target_s") * 1e3,
		       s->baseline_format);
	if (noisy)
		wzp_table_note(t, "*: the fleet met or missed the targets within its runs' own noise "
				  "(a p99 inside its interval), so one replica more or fewer may do; "
				  "a longer --duration narrows it.");
	if (*skipped)
		wzp_table_note(t, "%s.", skipped);
	wzp_table_render(t, WZP_MD, md);
	wzp_table_free(t);
	wz_buf_puts(md, "\n");
}

void wz_propose_modes_csv(const wza_run *run, wz_buf *out)
{
	static const char *const cols[] = { "replicas", "gpus", "prefill_gpus_per_replica",
					    "reserved_usd_year", "ttft_p99_s", "tpot_p99_s",
					    "occupancy_peak", "runs" };
	const size_t nc = sizeof cols / sizeof cols[0];
	const char *labels[WZ_PROPOSE_MAX_MODES * 2] = { 0 };
	int n = mode_labels(run, labels, WZ_PROPOSE_MAX_MODES * 2);
	wz_buf_puts(out, "serving,idle_policy,offload_format,format");
	for (size_t k = 0; k < nc; k++)
		wz_buf_printf(out, ",%s", cols[k]);
	wz_buf_puts(out, ",binds\n");
	for (int k = 0; k < n; k++) {
		size_t len = strlen(labels[k]);
		for (int i = 0; i < run->nfigures; i++) {
			const wza_figure *f = &run->figures[i];
			if (strcmp(f->table, WZ_T_SERVING_MODE_FLEETS) || strcmp(f->col, "replicas") ||
			    strncmp(f->row, labels[k], len) || f->row[len] != '|')
				continue;
			static const char *const keys[] = { "serving", "idle_policy",
							    "offload_format" };
			for (size_t j = 0; j < sizeof keys / sizeof keys[0]; j++) {
				wz_buf_csv_field(out, fig_text(run, WZ_T_SERVING_MODES, labels[k], keys[j]));
				wz_buf_puts(out, ",");
			}
			wz_buf_csv_field(out, f->row + len + 1);
			wz_propose_csv_values(out, run, WZ_T_SERVING_MODE_FLEETS, f->row, cols, nc);
			/* the binds text can hold a comma ("prefill compute, 34% of it ...") */
			wz_buf_puts(out, ",");
			wz_buf_csv_field(out, fig_text(run, WZ_T_SERVING_MODE_FLEETS, f->row, "binds"));
			wz_buf_puts(out, "\n");
		}
	}
}
