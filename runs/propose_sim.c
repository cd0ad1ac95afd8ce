/* The proposal's simulation section: the fleets sized by simulation, and
 * which of the three sizing methods binds, read from the run's figures
 * (propose.h). */
#include "runs/propose.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/wz_io.h"
#include "runs/schema.h"

static const char *fig_text(const wza_run *run, const char *table, const char *row,
			    const char *col)
{
	return wza_run_text(run, table, row, col, "");
}

int wz_propose_simulated(const wza_run *run)
{
	return wza_run_find_figure(run, WZ_T_SIM_SETUP, "setup", "seed") != NULL;
}

double wz_propose_sim_gpus(const wza_run *run, const char *format)
{
	return wza_run_value(run, WZ_T_SIMULATION, format, "gpus");
}

static void money(char *out, size_t n, double usd)
{
	if (isnan(usd))
		snprintf(out, n, "-");
	else
		snprintf(out, n, "%s$%.2fM", usd < 0 ? "-" : "", fabs(usd) / 1e6);
}

/* "1,760" */
static const char *count(double v, char *out, size_t n)
{
	if (isnan(v))
		snprintf(out, n, "-");
	else
		wz_format_thousands(v, 0, out, n);
	return out;
}

/* What was simulated, in one sentence. */
static void what_was_simulated(wz_buf *md, const wza_run *run)
{
	const char *t = WZ_T_SIM_SETUP, *r = "setup";
	char n[32];
	if (isnan(wza_run_value(run, t, r, "users")))
		wz_buf_printf(md, "replay of `%s` (%s requests, arrival times divided by %g) after "
				  "%g s of warm-up",
			      fig_text(run, t, r, "traffic"), count(wza_run_value(run, t, r, "requests"), n, sizeof n),
			      wza_run_value(run, t, r, "speedup"), wza_run_value(run, t, r, "warmup_s"));
	else
		wz_buf_printf(md, "the scenario's closed population of %s users, %g s measured "
				  "after %g s of warm-up",
			      count(wza_run_value(run, t, r, "users"), n, sizeof n),
			      wza_run_value(run, t, r, "duration_s") - wza_run_value(run, t, r, "warmup_s"),
			      wza_run_value(run, t, r, "warmup_s"));
	wz_buf_printf(md, ", idle sessions %s", fig_text(run, t, r, "idle_policy"));
	/* Runs archived before the serving mode was recorded say nothing of it. */
	const char *serving = fig_text(run, t, r, "serving");
	const char *searched = fig_text(run, t, r, "prefill_gpus_search");
	if (!strcmp(fig_text(run, t, r, "search"), "yes")) {
		/* the scenario's serving keys describe its own configuration, not
		 * the ones the deployment search sized */
		wz_buf_puts(md, ", each format at the serving configuration the deployment search "
				"chose (the Configuration column)");
		wz_buf_printf(md, ", seed %.0f", wza_run_value(run, t, r, "seed"));
		return;
	}
	if (!strcmp(serving, "disaggregated") && *searched)
		wz_buf_printf(md, ", disaggregated serving (beside each replica's %.0f decode GPUs a "
				  "prefill pool searched over %s GPUs, each format's fleet the one of "
				  "fewest GPUs in all)",
			      wza_run_value(run, t, r, "gpus_per_replica"), searched);
	else if (!strcmp(serving, "disaggregated"))
		wz_buf_printf(md, ", disaggregated serving (a prefill pool of %.0f GPUs beside each "
				  "replica's %.0f decode GPUs, counted in the fleet)",
			      wza_run_value(run, t, r, "prefill_gpus_per_replica"),
			      wza_run_value(run, t, r, "gpus_per_replica"));
	else if (*serving)
		wz_buf_printf(md, ", %s serving (prefill and decode on each replica's %.0f GPUs)",
			      serving, wza_run_value(run, t, r, "gpus_per_replica"));
	const char *ep = fig_text(run, t, r, "expert_parallel");
	if (!strncmp(ep, "yes", 3))
		wz_buf_printf(md, ", expert parallelism over each replica's GPUs%s",
			      strcmp(ep, "yes") ? " with dual-batch overlap" : "");
	wz_buf_printf(md, ", seed %.0f", wza_run_value(run, t, r, "seed"));
}

/* What the search's largest failing run (simulation_below) did: one
 * replica below the fleet it sized, or the largest it tried where none
 * met the targets. */
static void below_reason(wz_buf *md, const wza_run *run, const char *format)
{
	const char *u = WZ_T_SIMULATION_BELOW, *v = WZ_T_SIM_SETUP, *r = "setup";
	double ttft_t = wza_run_value(run, v, r, "ttft_p99_target_s");
	double tpot_t = wza_run_value(run, v, r, "tpot_p99_target_s");
	char done[32];
	if (wza_run_value(run, u, format, "refused_too_big") > 0)
		wz_buf_puts(md, "refused a request too large for a replica's cache pool");
	else if (wza_run_value(run, u, format, "refused_timeout") > 0)
		wz_buf_printf(md, "refused a request that waited longer than the %g s queue limit, "
				  "after %s completed",
			      wza_run_value(run, v, r, "queue_timeout_s"),
			      count(wza_run_value(run, u, format, "completed"), done, sizeof done));
	else if (!isnan(wza_run_value(run, u, format, "ttft_over_target")) &&
		 wza_run_value(run, u, format, "ttft_over_target") > 1)
		wz_buf_printf(md, "missed the TTFT target (%g s plus %g s per 1,000 new tokens) at "
				  "p99 by %.3g times",
			      ttft_t, wza_run_value(run, v, r, "ttft_per_1k_tokens_s"),
			      wza_run_value(run, u, format, "ttft_over_target"));
	else if (isnan(wza_run_value(run, u, format, "ttft_over_target")) &&
		 wza_run_value(run, u, format, "ttft_p99_s") > ttft_t)
		wz_buf_printf(md, "missed the p99 TTFT target (%.3g s against %g s)",
			      wza_run_value(run, u, format, "ttft_p99_s"), ttft_t);
	else if (wza_run_value(run, u, format, "tpot_p99_s") > tpot_t)
		wz_buf_printf(md, "missed the p99 TPOT target (%.3g ms against %g ms)",
			      1e3 * wza_run_value(run, u, format, "tpot_p99_s"), 1e3 * tpot_t);
	else
		wz_buf_puts(md, "completed no request");
}

/* Where the sized fleet stands against each limit, and why one replica
 * fewer failed: the search keeps the largest failing run's reason. */
static void why_this_fleet(wz_buf *md, const wza_run *run, const char *format)
{
	const char *t = WZ_T_SIMULATION, *u = WZ_T_SIMULATION_BELOW, *v = WZ_T_SIM_SETUP, *r = "setup";
	double ttft_t = wza_run_value(run, v, r, "ttft_p99_target_s");
	double tpot_t = wza_run_value(run, v, r, "tpot_p99_target_s");
	char gpus[32];
	wz_buf_printf(md, "The simulated fleet of %s GPUs (%.0f replicas) runs at %.0f%% of the "
			  "p99 TTFT target and %.0f%% of the p99 TPOT target, its cache pool at "
			  "most %.0f%% full.",
		      count(wza_run_value(run, t, format, "gpus"), gpus, sizeof gpus),
		      wza_run_value(run, t, format, "replicas"),
		      100 * (isnan(wza_run_value(run, t, format, "ttft_over_target"))
				     ? wza_run_value(run, t, format, "ttft_p99_s") / ttft_t
				     : wza_run_value(run, t, format, "ttft_over_target")),
		      100 * wza_run_value(run, t, format, "tpot_p99_s") / tpot_t,
		      100 * wza_run_value(run, t, format, "occupancy_peak"));
	double behind = wza_run_value(run, t, format, "decode_behind_prefill");
	if (!isnan(behind))
		wz_buf_printf(md, "  Its decoding requests spend %.0f%% of their time waiting while "
				  "their replica runs a prefill pass.",
			      100 * behind);
	if (!isnan(wza_run_value(run, u, format, "replicas"))) {
		char n[32];
		wz_buf_printf(md, "  With %s replicas the run ",
			      count(wza_run_value(run, u, format, "replicas"), n, sizeof n));
		below_reason(md, run, format);
		wz_buf_puts(md, ": that is what sets this fleet.");
	}
}

/* Which method needs the most GPUs for the baseline, by how much, and for
 * how many formats each method binds. */
static void binding(wz_buf *md, const wza_run *run, const wzm_scenario *s, const wzm_compare *c,
		    int markdown)
{
	const char *q = markdown ? "`" : "", *em = markdown ? "**" : "";
	const wzm_compare_row *b = &c->rows[c->baseline];
	double g[3] = { (s->mode & WZM_MODE_SCALING) ? (double)b->scaling.gpus : NAN,
			(s->mode & WZM_MODE_MEMORY) ? (double)b->by_memory.gpus : NAN,
			wz_propose_sim_gpus(run, b->fmt.name) };
	static const char *const name[3] = { "scaling", "memory accounting", "simulation" };
	int k = -1;
	for (int i = 0; i < 3; i++)
		if (!isnan(g[i]) && (k < 0 || g[i] > g[k]))
			k = i;
	if (k < 0 || isnan(g[2])) {
		wz_buf_printf(md, "No fleet of the baseline %s%s%s met the targets in the simulation, "
				  "so the methods cannot be compared for it.",
			      q, b->fmt.name, q);
		if (!isnan(wza_run_value(run, WZ_T_SIMULATION_BELOW, b->fmt.name, "replicas"))) {
			const char *bind = fig_text(run, WZ_T_SIMULATION, b->fmt.name, "binds");
			char n[32];
			wz_buf_printf(md, "  The largest fleet the search tried, %s replicas, ",
				      count(wza_run_value(run, WZ_T_SIMULATION_BELOW, b->fmt.name,
							  "replicas"),
					    n, sizeof n));
			below_reason(md, run, b->fmt.name);
			if (*bind)
				wz_buf_printf(md, "; what binds: %s", bind);
			wz_buf_puts(md, ".");
		}
		wz_buf_puts(md, "\n\n");
		return;
	}
	char a[32], x[32];
	wz_buf_printf(md, "%sWhich sizing binds.%s For the baseline %s%s%s, %s needs the most "
			  "GPUs: %s",
		      em, em, q, b->fmt.name, q, name[k], count(g[k], a, sizeof a));
	for (int i = 0; i < 3; i++)
		if (i != k && !isnan(g[i]))
			wz_buf_printf(md, ", against %s by %s (%+.0f%%)", count(g[i], x, sizeof x),
				      name[i], g[i] > 0 ? 100 * (g[k] - g[i]) / g[i] : 0.0);
	wz_buf_puts(md, ".  ");
	if (!isnan(wza_run_value(run, WZ_T_SIM_SETUP, "setup", "users")))
		why_this_fleet(md, run, b->fmt.name);
	else
		wz_buf_puts(md, "The simulation replays the traffic file while scaling and memory "
				"accounting size the scenario's users, so the counts answer "
				"different loads.");
	int wins[3] = { 0, 0, 0 }, compared = 0;
	for (int i = 0; i < c->nrows; i++) {
		const wzm_compare_row *r = &c->rows[i];
		double h[3] = { (s->mode & WZM_MODE_SCALING) ? (double)r->scaling.gpus : NAN,
				(s->mode & WZM_MODE_MEMORY) ? (double)r->by_memory.gpus : NAN,
				wz_propose_sim_gpus(run, r->fmt.name) };
		int m = -1;
		for (int j = 0; j < 3; j++)
			if (!isnan(h[j]) && (m < 0 || h[j] > h[m]))
				m = j;
		if (m >= 0 && !isnan(h[2])) {
			wins[m]++;
			compared++;
		}
	}
	wz_buf_printf(md, "  Over the %d formats with a simulated fleet, the largest count comes "
			  "from simulation for %d, memory accounting for %d and scaling for %d; "
			  "the proposal's savings should be read from the binding method.\n\n",
		      compared, wins[2], wins[1], wins[0]);
}

/* The second comparison of a search: every format at the baseline's
 * winning configuration, so that the formats differ in their cache alone. */
static void at_baseline_config(wz_buf *md, const wza_run *run, const wzm_scenario *s,
			       const wzm_compare *c)
{
	const char *b = s->baseline_format, *conf = fig_text(run, WZ_T_DEPLOYMENT, b, "configuration");
	if (!*conf)
		return;
	wzp_table *t = wzp_table_new("Every format at the baseline's configuration");
	if (!t)
		return;
	wzp_table_column(t, "format", "Cache format", 0);
	wzp_table_column(t, "gpus", "GPUs", 1);
	wzp_table_column(t, "reserved", "Reserved per year", 1);
	wzp_table_column(t, "saving", "Saving per year, reserved", 1);
	double base_gpus = wza_run_value(run, WZ_T_DEPLOYMENT, b, "at_baseline_config_gpus");
	double per_gpu = wza_run_value(run, WZ_T_DEPLOYMENT, b, "reserved_usd_year") /
			 wza_run_value(run, WZ_T_DEPLOYMENT, b, "gpus");
	for (int i = 0; i < c->nrows; i++) {
		const char *f = c->rows[i].fmt.name;
		double g = wza_run_value(run, WZ_T_DEPLOYMENT, f, "at_baseline_config_gpus");
		char m[48];
		wzp_table_row(t);
		wzp_table_str(t, c->rows[i].fmt.label);
		if (isnan(g)) {
			const char *why = fig_text(run, WZ_T_DEPLOYMENT, f, "at_baseline_config_gpus");
			wzp_table_str(t, *why ? "none met the targets" : "not sized");
			wzp_table_empty(t);
			wzp_table_empty(t);
			continue;
		}
		wzp_table_numf(t, g, 0);
		money(m, sizeof m, g * per_gpu);
		wzp_table_num(t, g * per_gpu, m);
		if (i == c->baseline) {
			wzp_table_str(t, "baseline");
		} else {
			money(m, sizeof m, (base_gpus - g) * per_gpu);
			wzp_table_num(t, (base_gpus - g) * per_gpu, m);
		}
	}
	wzp_table_note(t, "All formats at `%s`'s best configuration (%s), so that they differ in "
			  "their cache alone; the table above gives each format at its own best.",
		       b, conf);
	wzp_table_render(t, WZP_MD, md);
	wzp_table_free(t);
	wz_buf_puts(md, "\n");
}

void wz_propose_sim_section(wz_buf *md, const wza_run *run, const wzm_scenario *s,
			    const wzm_compare *c)
{
	if (!wz_propose_simulated(run))
		return;
	double ttft_t = wza_run_value(run, WZ_T_SIM_SETUP, "setup", "ttft_p99_target_s");
	double tpot_t = wza_run_value(run, WZ_T_SIM_SETUP, "setup", "tpot_p99_target_s");
	wz_buf_puts(md, "## Sized by simulation\n\n");
	wz_buf_puts(md, "Each format's fleet is the smallest whole number of replicas whose "
			"simulated run meets the latency targets with no refused request: ");
	what_was_simulated(md, run);
	wz_buf_puts(md, ".\n\n");
	wzp_table *t = wzp_table_new("Fleets sized by simulation");
	if (!t)
		return;
	char h_ttft[64], h_tpot[64];
	snprintf(h_ttft, sizeof h_ttft, "p99 TTFT s (target %g)", ttft_t);
	snprintf(h_tpot, sizeof h_tpot, "p99 TPOT ms (target %g)", tpot_t * 1e3);
	wzp_table_column(t, "format", "Cache format", 0);
	wzp_table_column(t, "replicas", "Replicas", 1);
	wzp_table_column(t, "gpus", "GPUs", 1);
	wzp_table_column(t, "reserved", "Reserved per year", 1);
	wzp_table_column(t, "ondemand", "On demand per year", 1);
	wzp_table_column(t, "saving", "Saving per year, reserved", 1);
	wzp_table_column(t, "ttft", h_ttft, 1);
	wzp_table_column(t, "tpot", h_tpot, 1);
	wzp_table_column(t, "occupancy", "Cache peak", 1);
	wzp_table_column(t, "binds", "Binds", 0);
	int searched = !strcmp(fig_text(run, WZ_T_SIM_SETUP, "setup", "search"), "yes");
	if (searched) {
		wzp_table_column(t, "configuration", "Configuration", 0);
		wzp_table_column(t, "vs_default", "Cheaper than the scenario's configuration", 1);
	}
	for (int i = 0; i < c->nrows; i++) {
		const char *f = c->rows[i].fmt.name;
		char m[48];
		wzp_table_row(t);
		wzp_table_str(t, c->rows[i].fmt.label);
		double rep = wza_run_value(run, WZ_T_SIMULATION, f, "replicas");
		if (isnan(rep)) {
			wzp_table_str(t, "none met the targets");
			for (int k = 0; k < 7; k++)
				wzp_table_empty(t);
			wzp_table_str(t, fig_text(run, WZ_T_SIMULATION, f, "binds"));
			if (searched) {
				const char *closest = fig_text(run, WZ_T_DEPLOYMENT, f,
							       "closest_configuration");
				char text[320];
				snprintf(text, sizeof text, "closest: %s", closest);
				wzp_table_str(t, *closest ? text : "");
				wzp_table_empty(t);
			}
			continue;
		}
		wzp_table_numf(t, rep, 0);
		wzp_table_numf(t, wza_run_value(run, WZ_T_SIMULATION, f, "gpus"), 0);
		money(m, sizeof m, wza_run_value(run, WZ_T_SIMULATION, f, "reserved_usd_year"));
		wzp_table_num(t, wza_run_value(run, WZ_T_SIMULATION, f, "reserved_usd_year"), m);
		money(m, sizeof m, wza_run_value(run, WZ_T_SIMULATION, f, "ondemand_usd_year"));
		wzp_table_num(t, wza_run_value(run, WZ_T_SIMULATION, f, "ondemand_usd_year"), m);
		if (i == c->baseline) {
			wzp_table_str(t, "baseline");
		} else {
			money(m, sizeof m, wza_run_value(run, WZ_T_SIMULATION, f, "saving_reserved"));
			wzp_table_num(t, wza_run_value(run, WZ_T_SIMULATION, f, "saving_reserved"), m);
		}
		wzp_table_numf(t, wza_run_value(run, WZ_T_SIMULATION, f, "ttft_p99_s"), 3);
		wzp_table_numf(t, wza_run_value(run, WZ_T_SIMULATION, f, "tpot_p99_s") * 1e3, 1);
		char occ[32];
		snprintf(occ, sizeof occ, "%.0f%%", 100 * wza_run_value(run, WZ_T_SIMULATION, f, "occupancy_peak"));
		wzp_table_num(t, wza_run_value(run, WZ_T_SIMULATION, f, "occupancy_peak"), occ);
		wzp_table_str(t, fig_text(run, WZ_T_SIMULATION, f, "binds"));
		if (searched) {
			wzp_table_str(t, fig_text(run, WZ_T_DEPLOYMENT, f, "configuration"));
			double def = wza_run_value(run, WZ_T_DEPLOYMENT, f, "default_gpus");
			double g = wza_run_value(run, WZ_T_SIMULATION, f, "gpus");
			char pct[32];
			if (isnan(def)) {
				wzp_table_str(t, fig_text(run, WZ_T_DEPLOYMENT, f, "default_gpus"));
			} else {
				snprintf(pct, sizeof pct, "%.0f%%", 100 * (1 - g / def));
				wzp_table_num(t, 1 - g / def, pct);
			}
		}
	}
	if (searched)
		wzp_table_note(t, "Each format at the cheapest serving configuration the deployment "
				  "search found (Configuration; `wzplan size --search`); cost at the "
				  "scenario's prices; savings against `%s` at its own best.  Cheaper than "
				  "the scenario's configuration: against the scenario's own (%.0f GPUs a "
				  "replica) sized the same way, up to four times the winner's GPUs.  Cache "
				  "peak: the largest share of the fleet's cache blocks in use at a "
				  "sample.  Binds: the resource that made the largest fleet short of it "
				  "fail.  Figures per run: `wzplan archive show`.",
			       s->baseline_format,
			       wza_run_value(run, WZ_T_SIM_SETUP, "setup", "gpus_per_replica"));
	else
		wzp_table_note(t, "Replicas of %.0f GPUs; cost at the scenario's prices; savings "
				  "against `%s` sized the same way.  Cache peak: the largest share of "
				  "the fleet's cache blocks in use at a sample.  Binds: the resource that "
				  "made the largest fleet short of it fail.  Figures per run: `wzplan "
				  "archive show`.",
			       wza_run_value(run, WZ_T_SIM_SETUP, "setup", "gpus_per_replica"),
			       s->baseline_format);
	if (*fig_text(run, WZ_T_SIM_SETUP, "setup", "prefill_gpus_search")) {
		wz_buf pools = { 0 };
		for (int i = 0; i < c->nrows; i++)
			wz_buf_printf(&pools, "%s%s %.0f", i ? ", " : "", c->rows[i].fmt.label,
				      wza_run_value(run, WZ_T_SIMULATION, c->rows[i].fmt.name,
					  "prefill_gpus_per_replica"));
		wzp_table_note(t, "Prefill pool per replica chosen by the search (GPUs beside the "
				  "decode GPUs, in the GPUs column): %s.",
			       wz_buf_str(&pools));
		wz_buf_free(&pools);
	}
	wzp_table_render(t, WZP_MD, md);
	wzp_table_free(t);
	wz_buf_puts(md, "\n");
	if (searched)
		at_baseline_config(md, run, s, c);
	binding(md, run, s, c, 1);
}

void wz_propose_sim_verdict(wz_buf *out, const wza_run *run, const wzm_scenario *s,
			    const wzm_compare *c)
{
	if (wz_propose_simulated(run))
		binding(out, run, s, c, 0);
}

void wz_propose_csv_values(wz_buf *out, const wza_run *run, const char *table, const char *row,
			   const char *const *cols, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		double v = wza_run_value(run, table, row, cols[k]);
		wz_buf_puts(out, ",");
		if (!isnan(v))
			wz_buf_printf(out, "%.10g", v);
	}
}

void wz_propose_sim_csv(const wza_run *run, wz_buf *out)
{
	static const char *const cols[] = { "bits_per_value", "replicas", "gpus",
					    "reserved_usd_year", "ondemand_usd_year",
					    "saving_reserved", "saving_ondemand", "ttft_p99_s",
					    "tpot_p99_s", "refused", "goodput_rps", "occupancy_mean",
					    "occupancy_peak", "runs" };
	const size_t n = sizeof cols / sizeof cols[0];
	wz_buf_puts(out, "format");
	for (size_t k = 0; k < n; k++)
		wz_buf_printf(out, ",%s", cols[k]);
	wz_buf_puts(out, "\n");
	for (int i = 0; i < run->nfigures; i++) {
		const wza_figure *f = &run->figures[i];
		if (strcmp(f->table, WZ_T_SIMULATION) || strcmp(f->col, "replicas"))
			continue;
		wz_buf_puts(out, f->row);
		wz_propose_csv_values(out, run, WZ_T_SIMULATION, f->row, cols, n);
		wz_buf_puts(out, "\n");
	}
}

void wz_propose_sim_not_measured(wz_buf *md, const wza_run *run)
{
	if (!wz_propose_simulated(run)) {
		wz_buf_puts(md, "- Latency under traffic: the simulation was not run, so no fleet "
				"was sized against latency targets and the memory mode assumes every "
				"user's cache stays resident.  `wzplan propose --simulate` sizes each "
				"format by simulating the scenario's users (`--duration S` shortens "
				"it); `--traffic FILE` replays a request table (wzplan-traffic(5)).\n");
		return;
	}
	wz_buf_puts(md, "- Beyond the simulated stretch: the fleets were sized on ");
	what_was_simulated(md, run);
	wz_buf_puts(md, "; other seeds, longer runs and other traffic can need other fleets.  "
			"Decode cost per byte of each format is a parameter, not a codec "
			"benchmark.\n");
	double hbm = wza_run_value(run, WZ_T_SIM_SETUP, "setup", "hbm_efficiency"),
	       dec = wza_run_value(run, WZ_T_SIM_SETUP, "setup", "compute_efficiency"),
	       pre = wza_run_value(run, WZ_T_SIM_SETUP, "setup", "prefill_compute_efficiency"),
	       ovh = wza_run_value(run, WZ_T_SIM_SETUP, "setup", "step_overhead_ms");
	if (isnan(hbm) || isnan(dec) || isnan(pre) || isnan(ovh))
		return; /* a run archived before they were recorded */
	wz_buf_printf(md, "- The step times themselves: a roofline at shares of the data sheet's "
			  "peaks (HBM bandwidth x %g, decode FLOP/s x %g, prefill's dense matmuls "
			  "x %g, its attention and routed experts at their own shares measured on "
			  "SGLang's layers) plus %g ms a step, parameters of the scenario, not "
			  "measured on this deployment.  "
			  "Where prefill compute binds a fleet, a smaller cache format saves "
			  "little, and how often it binds depends on prefill's share of peak: "
			  "set `prefill_compute_efficiency` from a kernel profile of the engine "
			  "(docs/validation.md, \"How far the disaggregated saving rests on "
			  "prefill's share of peak\").\n",
		      hbm, dec, pre, ovh);
}
