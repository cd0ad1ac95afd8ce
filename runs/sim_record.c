/* Simulation runs into the archive: inputs, figures, series and fleets
 * (sim_record.h). */
#include "runs/sim_record.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "data/embedded.h"
#include "runs/say.h"
#include "runs/schema.h"

/* Small enough to keep a copy of: larger traffic files are recorded by
 * path, size and hash only. */
#define TRAFFIC_KEEP_BYTES (1 << 20)
/* A day at the default sampling interval is 1,441 samples; charts and the
 * archive need no more than this many. */
#define OCCUPANCY_MAX_POINTS 720

void wz_sim_record_setup(wza_run *run, const wz_sim_setup *s, const char *traffic_path)
{
	const wzs_params *p = &s->params;
	char seed[32];
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)p->seed);
	wza_run_input(run, WZ_IN_SEED, "seed", "simulation", NULL, (long long)strlen(seed), seed);
	if (s->search)
		wza_run_figure(run, WZ_T_SIM_SETUP, "setup", "search", NAN, "yes");
	if (p->ttft_per_1k_tokens_s > 0)
		wza_run_figure(run, WZ_T_SIM_SETUP, "setup", "ttft_per_1k_tokens_s",
			       p->ttft_per_1k_tokens_s, NULL);
	if (traffic_path) {
		char abs[PATH_MAX], hex[17];
		const char *where = realpath(traffic_path, abs) ? abs : traffic_path;
		uint64_t size = 0;
		char *text = NULL;
		size_t len = 0;
		if (wz_hash_file(traffic_path, hex, &size, NULL)) {
			wza_run_input(run, WZ_IN_TRACE, "traffic", where, NULL, -1, NULL);
		} else {
			if (size <= TRAFFIC_KEEP_BYTES &&
			    wz_read_file(traffic_path, TRAFFIC_KEEP_BYTES, &text, &len, NULL))
				text = NULL;
			wza_run_input(run, WZ_IN_TRACE, "traffic", where, hex, (long long)size, text);
			free(text);
		}
	}
	if (s->has_rates) {
		/* The decode rates restores were timed with, kept whole: a rates
		 * file is a few lines. */
		char abs[PATH_MAX], hex[17];
		const char *where = realpath(s->rates.origin, abs) ? abs : s->rates.origin;
		uint64_t size = 0;
		char *text = NULL;
		size_t len = 0;
		if (wz_hash_file(s->rates.origin, hex, &size, NULL) ||
		    wz_read_file(s->rates.origin, TRAFFIC_KEEP_BYTES, &text, &len, NULL))
			wza_run_input(run, "rates", "restore_rates", where, NULL, -1, NULL);
		else
			wza_run_input(run, "rates", "restore_rates", where, hex, (long long)size, text);
		free(text);
	}
	const char *t = WZ_T_SIM_SETUP, *r = "setup";
	wza_run_figure(run, t, r, "traffic", NAN,
		       s->traffic ? (s->traffic->source ? s->traffic->source : s->traffic->origin)
				  : "closed population");
	if (s->traffic) {
		wza_run_figure(run, t, r, "requests", (double)s->traffic->n, NULL);
		wza_run_figure(run, t, r, "speedup", s->speedup, NULL);
	} else {
		wza_run_figure(run, t, r, "users", (double)s->scn->users, NULL);
		wza_run_figure(run, t, r, "initial_context", (double)s->initial_context, NULL);
		wza_run_figure(run, t, r, "duration_s", p->duration_s, NULL);
	}
	wza_run_figure(run, t, r, "warmup_s", p->warmup_s, NULL);
	wza_run_figure(run, t, r, "seed", (double)p->seed, NULL);
	if (p->search_seeds > 1)
		wza_run_figure(run, t, r, "search_seeds", (double)p->search_seeds, NULL);
	wza_run_figure(run, t, r, "ttft_p99_target_s", p->ttft_p99_s, NULL);
	wza_run_figure(run, t, r, "tpot_p99_target_s", p->tpot_p99_s, NULL);
	wza_run_figure(run, t, r, "queue_timeout_s", p->queue_timeout_s, NULL);
	/* the roofline's shares of peak and the step overhead: parameters, not
	 * measurements, which a proposal names beside the fleets they size */
	wza_run_figure(run, t, r, "hbm_efficiency", p->hbm_efficiency, NULL);
	wza_run_figure(run, t, r, "compute_efficiency", p->compute_efficiency, NULL);
	wza_run_figure(run, t, r, "prefill_compute_efficiency", wzs_prefill_efficiency(p), NULL);
	wza_run_figure(run, t, r, "step_overhead_ms", p->step_overhead_s * 1e3, NULL);
	wza_run_figure(run, t, r, "idle_policy", NAN, wzs_idle_policy_name(p->idle_policy));
	wza_run_figure(run, t, r, "gpus_per_replica", (double)s->scn->mem.gpus_per_replica, NULL);
	/* How the replicas serve, so that a proposal can say what it sized. */
	wza_run_figure(run, t, r, "serving", NAN, p->disaggregated ? "disaggregated" : "aggregated");
	if (p->disaggregated)
		wza_run_figure(run, t, r, "prefill_gpus_per_replica", (double)p->prefill_gpus, NULL);
	if (p->disaggregated && p->prefill_gpus_search[0])
		wza_run_figure(run, t, r, "prefill_gpus_search", NAN, p->prefill_gpus_search);
	if (p->prefill_cp > 1) {
		wza_run_figure(run, t, r, "prefill_context_parallel", (double)p->prefill_cp, NULL);
		wza_run_figure(run, t, r, "prefill_cp_min_tokens", (double)p->prefill_cp_min_tokens,
			       NULL);
		wza_run_figure(run, t, r, "prefill_cp_efficiency", p->prefill_cp_efficiency, NULL);
	}
	wza_run_figure(run, t, r, "expert_parallel", NAN,
		       !p->expert_parallel ? "no" : p->dual_batch_overlap ? "yes, dual-batch overlap"
									    : "yes");
}

void wz_sim_record_scenario(wza_run *run, const wz_sim_setup *s)
{
	const char *t = WZ_T_SCENARIO, *r = "scenario";
	wza_run_figure(run, t, r, "name", NAN, s->scn->name);
	wza_run_figure(run, t, r, "model", NAN, s->model->name);
	wza_run_figure(run, t, r, "gpu", NAN, s->gpu->name);
	wza_run_figure(run, t, r, "users", (double)s->scn->users, NULL);
	wza_run_figure(run, t, r, "context", (double)s->scn->context, NULL);
	wza_run_figure(run, t, r, "baseline_format", NAN, s->scn->baseline_format);
	wza_run_figure(run, t, r, "gpus_per_replica", (double)s->scn->mem.gpus_per_replica, NULL);
	wza_run_figure(run, t, r, "price_set", NAN, s->scn->price_set);
}

static void record_series(wza_run *run, const char *format, const wzs_result *res)
{
	/* Each series whole, one after the other, so a listing groups them. */
	for (int i = 0; i < WZS_CDF_POINTS; i++)
		wza_run_point(run, format, WZ_SERIES_TTFT, res->ttft_cdf[i], wzs_cdf_p[i]);
	for (int i = 0; i < WZS_CDF_POINTS; i++)
		wza_run_point(run, format, WZ_SERIES_TPOT, res->tpot_cdf[i] * 1e3, wzs_cdf_p[i]);
	size_t step = (res->nsamples + OCCUPANCY_MAX_POINTS - 1) / OCCUPANCY_MAX_POINTS;
	if (step < 1)
		step = 1;
	for (size_t i = 0; i < res->nsamples; i += step) {
		const wzs_sample *x = &res->samples[i];
		wza_run_point(run, format, WZ_SERIES_OCCUPANCY, x->time,
			      x->blocks_total > 0 ? x->blocks_used / x->blocks_total : 0);
	}
}

static void record_results(wza_run *run, const char *format, const wzs_result *res)
{
	static const char *const names[] = { "ttft", "tpot", "e2e", "queue" };
	const wzs_summary *sum[] = { &res->ttft, &res->tpot, &res->e2e, &res->queue };
	for (int i = 0; i < 4; i++) {
		char m[32];
		if (sum[i]->n == 0)
			continue; /* nothing measured: no figure, rather than a zero */
		snprintf(m, sizeof m, "%s_p50", names[i]);
		wza_run_sim(run, format, m, sum[i]->p50, "s");
		snprintf(m, sizeof m, "%s_p90", names[i]);
		wza_run_sim(run, format, m, sum[i]->p90, "s");
		snprintf(m, sizeof m, "%s_p99", names[i]);
		wza_run_sim(run, format, m, sum[i]->p99, "s");
		snprintf(m, sizeof m, "%s_mean", names[i]);
		wza_run_sim(run, format, m, sum[i]->mean, "s");
	}
	wza_run_sim(run, format, "requests_arrived", (double)res->arrived, "requests");
	wza_run_sim(run, format, "requests_completed", (double)res->completed, "requests");
	wza_run_sim(run, format, "requests_refused", (double)res->refused, "requests");
	wza_run_sim(run, format, "goodput", res->goodput_rps, "requests/s");
	wza_run_sim(run, format, "throughput", res->throughput_tok_s, "tokens/s");
	/* what the traffic asked for in the window, apart from what was served,
	 * so that a replay that queues is not read as a slow fleet */
	wza_run_sim(run, format, "offered_throughput", res->offered_tok_s, "tokens/s");
	wza_run_sim(run, format, "parks", (double)(res->parks_cpu + res->parks_ssd), "sessions");
	wza_run_sim(run, format, "restores", (double)res->restores, "sessions");
	wza_run_sim(run, format, "recomputes", (double)res->recomputes, "sessions");
	if (res->sessions_moved)
		wza_run_sim(run, format, "sessions_moved", (double)res->sessions_moved, "sessions");
	if (res->prefix_lookups) {
		/* Shared prefix cache hits per tier, as shares of the lookups. */
		static const char *const tier[3] = { "prefix_hit_hbm", "prefix_hit_cpu",
						     "prefix_hit_ssd" };
		wza_run_sim(run, format, "prefix_lookups", (double)res->prefix_lookups, "requests");
		for (int i = 0; i < 3; i++)
			wza_run_sim(run, format, tier[i],
				    (double)res->prefix_hits[i] / (double)res->prefix_lookups, "share");
		wza_run_sim(run, format, "prefix_tokens_saved", res->prefix_tokens_saved, "tokens");
		/* And the tokens found in each tier, as shares of those looked up
		 * (a partial hit counts its part). */
		static const char *const tok[3] = { "prefix_token_hit_hbm", "prefix_token_hit_cpu",
						    "prefix_token_hit_ssd" };
		for (int i = 0; i < 3 && res->prefix_tokens_wanted > 0; i++)
			wza_run_sim(run, format, tok[i],
				    res->prefix_hit_tokens[i] / res->prefix_tokens_wanted, "share");
	}
	wza_run_sim(run, format, "occupancy_mean", res->occupancy_mean, "share");
	wza_run_sim(run, format, "occupancy_peak", res->occupancy_peak, "share");
	double behind = wzs_decode_wait_prefill_share(res);
	if (behind >= 0)
		wza_run_sim(run, format, "decode_time_behind_prefill", behind, "share");
	wza_run_sim(run, format, "simulated", res->sim_time_s, "s");
	wza_run_sim(run, format, "events", (double)res->events, "events");
}

void wz_sim_record_fleet(wza_run *run, const wz_sim_setup *s, const char *format,
			 const wzs_result *res, const wzm_fleet *fleet, int has_saving, long runs)
{
	const char *t = WZ_T_SIMULATION;
	double replicas = fleet ? (double)fleet->replicas : NAN;
	wza_run_figure(run, t, format, "replicas", replicas, NULL);
	wza_run_figure(run, t, format, "gpus", fleet ? (double)fleet->gpus : NAN, NULL);
	wza_run_figure(run, t, format, "reserved_usd_year", fleet ? fleet->reserved_usd_year : NAN,
		       NULL);
	wza_run_figure(run, t, format, "ondemand_usd_year", fleet ? fleet->ondemand_usd_year : NAN,
		       NULL);
	wza_run_figure(run, t, format, "saving_reserved",
		       fleet && has_saving ? fleet->saving_reserved : NAN, NULL);
	wza_run_figure(run, t, format, "saving_ondemand",
		       fleet && has_saving ? fleet->saving_ondemand : NAN, NULL);
	wza_run_figure(run, t, format, "ttft_p99_s", res ? res->ttft.p99 : NAN, NULL);
	if (res && s->params.ttft_per_1k_tokens_s > 0)
		wza_run_figure(run, t, format, "ttft_over_target", wzs_ttft_over(&s->params, res),
			       NULL);
	wza_run_figure(run, t, format, "tpot_p99_s", res ? res->tpot.p99 : NAN, NULL);
	wza_run_figure(run, t, format, "refused", res ? (double)res->refused : NAN, NULL);
	wza_run_figure(run, t, format, "goodput_rps", res ? res->goodput_rps : NAN, NULL);
	wza_run_figure(run, t, format, "occupancy_mean", res ? res->occupancy_mean : NAN, NULL);
	wza_run_figure(run, t, format, "occupancy_peak", res ? res->occupancy_peak : NAN, NULL);
	double behind = res ? wzs_decode_wait_prefill_share(res) : -1;
	wza_run_figure(run, t, format, "decode_behind_prefill", behind >= 0 ? behind : NAN, NULL);
	wza_run_figure(run, t, format, "meets_targets", NAN,
		       res && wzs_meets_targets(&s->params, res) ? "yes" : "no");
	if (runs > 0)
		wza_run_figure(run, t, format, "runs", (double)runs, NULL);
	if (!res)
		return;
	record_results(run, format, res);
	record_series(run, format, res);
	if (fleet) {
		wza_fleet f = {
			.format = (char *)format, .method = "simulation", .gpus = fleet->gpus,
			.replicas = fleet->replicas, .reserved_usd_year = fleet->reserved_usd_year,
			.ondemand_usd_year = fleet->ondemand_usd_year,
			.saving_reserved = has_saving ? fleet->saving_reserved : NAN,
			.saving_ondemand = has_saving ? fleet->saving_ondemand : NAN,
		};
		wza_run_fleet(run, &f);
	}
}

/* The deployment search's figures of one format (deploy_run.c): the
 * configuration sized, the scenario's own and the baseline's winner sized
 * the same way, what the screen saw, and where none met the targets the
 * closest configuration. */
static void record_search(wza_run *run, const wz_size_row *r)
{
	const char *t = WZ_T_DEPLOYMENT, *f = r->size.name;
	char text[256];
	if (r->search.replicas > 0) {
		wza_run_figure(run, t, f, "configuration", NAN,
			       wzd_config_text(&r->config, text, sizeof text));
		wza_run_figure(run, t, f, "config", NAN, wzd_config_pairs(&r->config, text, sizeof text));
		wza_run_figure(run, t, f, "gpus", (double)r->fleet.gpus, NULL);
		wza_run_figure(run, t, f, "gpus_per_replica", (double)r->config.gpus, NULL);
		wza_run_figure(run, t, f, "reserved_usd_year", r->fleet.reserved_usd_year, NULL);
	}
	if (r->default_sized)
		wza_run_figure(run, t, f, "default_gpus", r->default_gpus > 0 ? (double)r->default_gpus
										: NAN,
			       r->default_gpus > 0 ? NULL : "none within 4x");
	if (r->at_base_gpus >= 0)
		wza_run_figure(run, t, f, "at_baseline_config_gpus",
			       r->at_base_gpus > 0 ? (double)r->at_base_gpus : NAN,
			       r->at_base_gpus > 0 ? NULL : "none");
	for (int k = 0; k < r->npareto; k++)
		wza_run_point(run, f, "pareto", r->pareto_x[k], r->pareto_y[k]);
	wza_run_figure(run, t, f, "screened", (double)r->nconfigs, NULL);
	wza_run_figure(run, t, f, "feasible", (double)r->nfeasible, NULL);
	wza_run_figure(run, t, f, "confirmed", (double)r->nconfirmed, NULL);
	if (r->unconfirmed > 0)
		wza_run_figure(run, t, f, "unconfirmed_below_bound", (double)r->unconfirmed,
			       "the confirmation limit stopped the search");
	if (r->has_closest) {
		wza_run_figure(run, t, f, "closest_configuration", NAN,
			       wzd_config_text(&r->closest, text, sizeof text));
		wza_run_figure(run, t, f, "closest_over", isinf(r->closest_over) ? NAN : r->closest_over,
			       isinf(r->closest_over) ? "refused requests" : NULL);
	}
}

void wz_size_record(wza_run *run, const wz_sim_setup *s, const wz_size_row *rows, int n,
		    int base)
{
	int base_ok = base >= 0 && rows[base].search.replicas > 0;
	for (int i = 0; i < n; i++) {
		const wz_size_row *r = &rows[i];
		int found = r->search.replicas > 0;
		char bind[WZS_BINDS_TEXT];
		wz_sim_record_fleet(run, s, r->size.name, found ? &r->search.result : NULL,
				    found ? &r->fleet : NULL, base_ok, r->search.runs);
		wza_run_figure(run, WZ_T_SIMULATION, r->size.name, "bits_per_value",
			       r->size.bits_per_value, NULL);
		wza_run_figure(run, WZ_T_SIMULATION, r->size.name, "binds", NAN,
			       wzs_search_binds(&r->search, bind));
		wza_run_figure(run, WZ_T_SIMULATION, r->size.name, "within_noise", NAN,
			       r->search.marginal || r->search.below_marginal ? "yes" : "no");
		if (r->prefill_gpus > 0)
			wza_run_figure(run, WZ_T_SIMULATION, r->size.name, "prefill_gpus_per_replica",
				       (double)r->prefill_gpus, NULL);
		if (r->searched)
			record_search(run, r);
		if (!r->search.below)
			continue;
		const char *t = WZ_T_SIMULATION_BELOW;
		wza_run_figure(run, t, r->size.name, "replicas", (double)r->search.below, NULL);
		wza_run_figure(run, t, r->size.name, "refused_timeout",
			       (double)r->search.below_refused_timeout, NULL);
		wza_run_figure(run, t, r->size.name, "refused_too_big",
			       (double)r->search.below_refused_too_big, NULL);
		wza_run_figure(run, t, r->size.name, "completed", (double)r->search.below_completed,
			       NULL);
		wza_run_figure(run, t, r->size.name, "ttft_p99_s", r->search.below_ttft_p99, NULL);
		if (s->params.ttft_per_1k_tokens_s > 0)
			wza_run_figure(run, t, r->size.name, "ttft_over_target",
				       r->search.below_ttft_over, NULL);
		wza_run_figure(run, t, r->size.name, "tpot_p99_s", r->search.below_tpot_p99, NULL);
	}
}

int wz_sim_archive_open(const char *cmd, const char *path, wza_archive **out)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	*out = NULL;
	if (path)
		return wz_run_archive_open(cmd, path, 1, out);
	char *def = NULL;
	if (wza_default_path(&def, &diag) || wza_open(def, 1, out, &diag))
		wz_say_warn(cmd, "%s; the run will not be archived", diag.msg);
	free(def);
	return 0;
}

int wz_sim_store_in(const char *cmd, wza_archive *a, wza_run *run)
{
	if (!a)
		return 0;
	wz_diag diag;
	wz_diag_clear(&diag);
	int rc = 0;
	wza_run_finish(run, "ok");
	if (wza_store(a, run, &diag))
		rc = wz_say_fail(cmd, &diag);
	else
		wz_say(WZ_SAY_ERR, "Run %lld archived in %s\n", run->id, wza_path(a));
	wza_close(a);
	return rc;
}

int wz_sim_store(const char *cmd, const char *path, wza_run *run)
{
	wza_archive *a;
	int rc = wz_sim_archive_open(cmd, path, &a);
	return rc ? rc : wz_sim_store_in(cmd, a, run);
}

/* Records an input's text: embedded ones by their embedded name, files by
 * their absolute path, so `verify` finds them from any folder. */
static void record_input(wza_run *run, const char *kind, const char *name, const char *origin,
			 const char *embedded_name)
{
	char hex[17];
	if (!strncmp(origin, "embedded:", 9)) {
		size_t len = 0;
		const char *text = wz_embedded_file(embedded_name, &len);
		if (!text)
			return;
		snprintf(hex, sizeof hex, "%016" PRIx64, wz_hash_bytes(text, len));
		wza_run_input(run, kind, name, origin, hex, (long long)len, text);
		return;
	}
	char *text = NULL;
	size_t len = 0;
	char abs[PATH_MAX];
	const char *where = realpath(origin, abs) ? abs : origin;
	if (wz_read_file(origin, 16 << 20, &text, &len, NULL) == WZ_OK) {
		snprintf(hex, sizeof hex, "%016" PRIx64, wz_hash_bytes(text, len));
		wza_run_input(run, kind, name, where, hex, (long long)len, text);
	} else {
		wza_run_input(run, kind, name, where, NULL, -1, NULL);
	}
	free(text);
}

void wz_record_inputs(wza_run *run, const wzm_scenario *s, const wzm_catalog *cat)
{
	char embedded[128];
	const char *name = strncmp(s->origin, "embedded:", 9) ? s->origin : s->origin + 9;
	snprintf(embedded, sizeof embedded, "scenarios/%s.scenario", name);
	record_input(run, WZ_IN_SCENARIO, "scenario", s->origin, embedded);
	record_input(run, WZ_IN_CATALOG, "models.csv", cat->origin_models, "models.csv");
	record_input(run, WZ_IN_CATALOG, "gpus.csv", cat->origin_gpus, "gpus.csv");
	record_input(run, WZ_IN_CATALOG, "prices.csv", cat->origin_prices, "prices.csv");
}

int wz_run_archive_open(const char *cmd, const char *path, int create, wza_archive **a)
{
	wz_diag diag;
	wz_diag_clear(&diag);
	*a = NULL;
	char *def = NULL;
	if (!path) {
		if (wza_default_path(&def, &diag))
			return wz_say_fail(cmd, &diag);
		path = def;
	}
	int rc = 0;
	if (wza_open(path, create, a, &diag))
		rc = wz_say_fail(cmd, &diag);
	free(def);
	return rc;
}
