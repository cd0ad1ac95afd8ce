/* `wzplan size`: the smallest fleet per cache format that meets the latency
 * targets with no refused request, found by simulation, with its annual
 * cost. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "runs/sim_setup.h"
#include "cli/sim_cli.h"
#include "runs/sim_record.h"
#include "config.h"
#include "costmodel/layers.h"

static void help(void)
{
	printf("Usage: wzplan size [options]\n"
	       "\n"
	       "For each cache format of the scenario (--formats), finds by simulation the\n"
	       "smallest whole number of replicas whose run meets the p99 time-to-first-token\n"
	       "and p99 time-per-output-token targets with no refused request (search 1, 2,\n"
	       "4, ... then bisect), and prices that fleet at reserved and on-demand rates,\n"
	       "with the saving against the baseline format.  Each run is reported on\n"
	       "standard error.  The sizing is stored in the archive (inputs, figures,\n"
	       "latency distributions, cache occupancy over time, fleets and costs) and its\n"
	       "run id printed on standard error; 'wzplan plot RUN' draws it and 'wzplan\n"
	       "verify RUN' recomputes it.\n"
	       "\n"
	       "%s\n%s%s"
	       "\n"
	       "Search and output:\n"
	       "  --max-replicas N       give up above N replicas (default 100000)\n"
	       "  --report F             text (default), md, csv or json\n"
	       "  -o, --output FILE      write there instead of standard output\n"
	       "  --archive FILE         archive to store the run in (default: $WZPLAN_ARCHIVE,\n"
	       "                         else $XDG_DATA_HOME/wzplan/archive.sqlite, else\n"
	       "                         ~/.local/share/wzplan/archive.sqlite)\n"
	       "  --no-archive           do not store the run\n"
	       "  -q, --quiet            no progress on standard error\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Examples:\n"
	       "  wzplan size --users 500 --duration 900 --formats fp8-mix,wz-5.44\n"
	       "  wzplan size --idle-policy offload --formats fp8-mix,wz-5.44,int4-g64\n",
	       wz_scenario_opts_help, wz_sim_opts_help, wz_sim_threads_help);
}

/* " to N (...)", the last seed of a search over several (search_seeds),
 * else "". */
static const char *seeds_tail(const wzs_params *p, char *buf, size_t size)
{
	if (p->search_seeds <= 1)
		return "";
	snprintf(buf, size, " to %llu (a fleet size meets the targets only if every seed's run does)",
		 (unsigned long long)(p->seed + (uint64_t)p->search_seeds - 1));
	return buf;
}

static wzp_table *make_table(const wz_sim_setup *s, const wz_size_row *rows, int n, int base)
{
	wzp_table *t = wzp_table_new("Fleets sized by simulation");
	if (!t)
		return NULL;
	wzp_table_column(t, "format", "Format", 0);
	wzp_table_column(t, "bits_per_value", "Bits/value", 1);
	wzp_table_column(t, "replicas", "Replicas", 1);
	wzp_table_column(t, "gpus", "GPUs", 1);
	wzp_table_column(t, "memory_mode_replicas", "Memory-mode replicas", 1);
	/* The product page's method, for comparison: GPUs in proportion to
	 * bytes per token from the known baseline fleet. */
	int scaling = !s->traffic && s->scn->baseline_gpus > 0 && base >= 0;
	if (scaling)
		wzp_table_column(t, "scaling_gpus", "Scaling GPUs", 1);
	wzp_table_column(t, "ttft_p99_s", "p99 TTFT s", 1);
	wzp_table_column(t, "tpot_p99_s", "p99 TPOT s", 1);
	wzp_table_column(t, "goodput_rps", "Goodput req/s", 1);
	wzp_table_column(t, "parks", "Parks", 1);
	wzp_table_column(t, "recomputes", "Recomputes", 1);
	wzp_table_column(t, "reserved_usd_year", "Reserved $/yr", 1);
	wzp_table_column(t, "ondemand_usd_year", "On-demand $/yr", 1);
	wzp_table_column(t, "saving_reserved", "Saving reserved", 1);
	wzp_table_column(t, "saving_ondemand", "Saving on-demand", 1);
	wzp_table_column(t, "runs", "Runs", 1);
	wzp_table_column(t, "binds", "Binds", 0);
	if (s->search)
		wzp_table_column(t, "configuration", "Configuration", 0);
	for (int i = 0; i < n; i++) {
		const wz_size_row *r = &rows[i];
		const wzs_result *res = &r->search.result;
		char bind[WZS_BINDS_TEXT], conf[256];
		wzp_table_row(t);
		wzp_table_str(t, r->size.name);
		wzp_table_numf(t, r->size.bits_per_value, 2);
		if (!r->search.replicas) {
			wzp_table_str(t, "none");
			for (int k = 0; k < 11 + scaling; k++)
				wzp_table_empty(t);
			wzp_table_numf(t, (double)r->search.runs, 0);
			wzp_table_str(t, wzs_search_binds(&r->search, bind));
			if (s->search)
				wzp_table_str(t, "none met the targets");
			continue;
		}
		long upr = r->model.mem.users_per_replica;
		wzp_table_numf(t, (double)r->search.replicas, 0);
		wzp_table_numf(t, (double)r->fleet.gpus, 0);
		if (s->traffic || upr < 1)
			wzp_table_empty(t);
		else
			wzp_table_numf(t, (double)((s->scn->users + upr - 1) / upr), 0);
		if (scaling) {
			wzm_fleet f;
			wzm_fleet_scaling(s->scn->baseline_gpus,
					  wzm_token_bytes(s->model, rows[base].size.record_per_layer,
							  s->scn->context),
					  wzm_token_bytes(s->model, r->size.record_per_layer,
							  s->scn->context),
					  1, s->scn->rounding, &f);
			wzp_table_numf(t, (double)f.gpus, 0);
		}
		wzp_table_numf(t, res->ttft.p99, 3);
		wzp_table_numf(t, res->tpot.p99, 4);
		wzp_table_numf(t, res->goodput_rps, 2);
		wzp_table_numf(t, (double)(res->parks_cpu + res->parks_ssd), 0);
		wzp_table_numf(t, (double)res->recomputes, 0);
		wzp_table_numf(t, r->fleet.reserved_usd_year, 0);
		wzp_table_numf(t, r->fleet.ondemand_usd_year, 0);
		wzp_table_numf(t, r->fleet.saving_reserved, 0);
		wzp_table_numf(t, r->fleet.saving_ondemand, 0);
		wzp_table_numf(t, (double)r->search.runs, 0);
		wzp_table_str(t, wzs_search_binds(&r->search, bind));
		if (s->search)
			wzp_table_str(t, wzd_config_text(&r->config, conf, sizeof conf));
	}
	const wzs_params *p = &s->params;
	char tail[160];
	char ttft_extra[128] = "";
	if (p->ttft_per_1k_tokens_s > 0)
		snprintf(ttft_extra, sizeof ttft_extra,
			 " + %g s per 1,000 new tokens of the request (each request's TTFT over its own "
			 "target, at p99)",
			 p->ttft_per_1k_tokens_s);
	if (s->search)
		wzp_table_note(t, "%s on %s, each format at the configuration the deployment search "
				  "chose (Configuration), %s; targets p99 TTFT <= %g s%s, p99 TPOT <= "
				  "%g s, no refused request.",
			       s->model->name, s->gpu->name,
			       s->traffic ? "replayed traffic" : "closed population", p->ttft_p99_s,
			       ttft_extra, p->tpot_p99_s);
	else
		wzp_table_note(t, "%s on %d x %s per replica (%s), %s; targets p99 TTFT <= %g s%s, "
				  "p99 TPOT <= %g s, no refused request.",
			       s->model->name, s->scn->mem.gpus_per_replica, s->gpu->name,
			       wzm_parallelism_name(s->scn->mem.par),
			       s->traffic ? "replayed traffic" : "closed population", p->ttft_p99_s,
			       ttft_extra, p->tpot_p99_s);
	if (!s->traffic)
		wzp_table_note(t, "%ld users starting at %ld tokens; think %g s, %g turns, %g prompt and "
				  "%g output tokens per turn (%s); %g s simulated after %g s warm-up; "
				  "%s %llu%s.",
			       s->scn->users, s->initial_context, p->think_s, p->turns,
			       p->prompt_tokens, p->output_tokens,
			       p->length_dist == WZS_DIST_FIXED ? "fixed" : "exponential means",
			       p->duration_s - p->warmup_s, p->warmup_s,
			       p->search_seeds > 1 ? "seeds" : "seed", (unsigned long long)p->seed,
			       seeds_tail(p, tail, sizeof tail));
	else
		wzp_table_note(t, "Traffic: %s (%zu requests), sessions arriving %g times faster "
			       "(think time %s).",
			       s->traffic->source ? s->traffic->source : s->traffic->origin,
			       s->traffic->n, s->speedup, s->speedup_all ? "compressed too" : "kept");
	wzp_table_note(t, "Roofline: HBM x %g, compute x %g, %g ms per step, %g heads, attention "
			  "at %s; prefill chunks of %ld tokens; at most %ld running per GPU; "
			  "refused after %g s in the queue.",
		       p->hbm_efficiency, p->compute_efficiency, p->step_overhead_s * 1e3,
		       p->attention_heads, p->attention_fp8 ? "fp8" : "bf16", p->prefill_chunk_tokens,
		       p->max_batch, p->queue_timeout_s);
	wzp_table_note(t, "Prefill per operation: dense weight matmuls at x %g "
			  "(prefill_compute_efficiency), attention at x %g "
			  "(prefill_attention_efficiency), routed experts at %s.",
		       wzs_prefill_efficiency(p), p->prefill_attention_efficiency,
		       p->prefill_moe_efficiency > 0 ? "prefill_moe_efficiency"
						     : "their measured share for the expert split");
	if (p->prefill_cp > 1)
		wzp_table_note(t, "Context-parallel prefill: a request with %ld or more tokens to "
				  "prefill runs its attention on %ld ranks at %g of linear scaling, its "
				  "cache passed round their ring in the format's bytes.",
			       p->prefill_cp_min_tokens, p->prefill_cp, p->prefill_cp_efficiency);
	if (p->disaggregated && !p->prefill_gpus_search[0])
		wzp_table_note(t, "Serving: disaggregated; each replica's prefills run on %ld more "
				  "GPUs (counted in GPUs), whole prompts first come first served, and "
				  "the new tokens' cache moves to the decode GPUs in the format's bytes "
				  "at %g GB/s per prefill GPU (in TTFT); the pool's size per replica is "
				  "the scenario's, not searched.",
			       p->prefill_gpus, p->kv_transfer_gbps);
	if (p->disaggregated && p->prefill_gpus_search[0]) {
		wz_buf chosen = { 0 };
		for (int i = 0; i < n; i++)
			wz_buf_printf(&chosen, "%s%s %ld", i ? ", " : "", rows[i].size.name,
				      rows[i].prefill_gpus);
		wzp_table_note(t, "Serving: disaggregated; each replica's prefills run on a pool of "
				  "more GPUs (counted in GPUs), whole prompts first come first served, "
				  "and the new tokens' cache moves to the decode GPUs in the format's "
				  "bytes at %g GB/s per prefill GPU (in TTFT).  The pool per replica was "
				  "searched over %s GPUs, keeping the fleet of fewest GPUs: %s.",
			       p->kv_transfer_gbps, p->prefill_gpus_search, wz_buf_str(&chosen));
		wz_buf_free(&chosen);
	}
	if (p->mtp_acceptance > 0)
		wzp_table_note(t, "Multi-token prediction: %ld draft token(s) verified per step, each "
				  "kept with probability %g (to the power of its place).",
			       p->mtp_draft_tokens, p->mtp_acceptance);
	wzp_table_note(t, "Idle sessions: %s%s%s.", wzs_idle_policy_name(p->idle_policy),
		       p->idle_policy == WZS_IDLE_OFFLOAD ? ", offload format " : "",
		       p->idle_policy == WZS_IDLE_OFFLOAD ? p->offload_format : "");
	wzp_table_note(t, "Binds: the resource that made the largest fleet short of each one "
			  "fail (HBM capacity: requests waited for cache blocks; decode compute or "
			  "HBM bandwidth: decode steps, by their roofline; prefill compute; "
			  "restore bandwidth or decode: parked caches coming back over the link, or decoded on the host; "
			  "network: the cache's move to decode GPUs, or the expert all-to-all where it outlasts the roofline; "
			  "batch limit: max_batch).");
	wzp_table_note(t, "Savings against %s; prices: %s.", s->scn->baseline_format,
		       s->scn->price_set);
	if (scaling)
		wzp_table_note(t, "Scaling GPUs: %ld GPUs with %s today, times bytes per token, rounded "
				  "%s (wzplan cost --mode scaling).",
			       s->scn->baseline_gpus, s->scn->baseline_format,
			       wzm_rounding_name(s->scn->rounding));
	/* A fleet decided by a p99 of a few tail requests can move by a
	 * step of the search in a longer run, and a smaller format can then
	 * come out larger by chance: say which. */
	for (int i = 0; i < n; i++) {
		const wzs_search *sr = &rows[i].search;
		if (sr->marginal)
			wzp_table_note(t, "%s: at %ld replica%s a p99 target lies inside its p99's 95%% "
					  "interval (TTFT %.3f..%.3f s, TPOT %.4f..%.4f s): met by chance as "
					  "much as by capacity; simulate longer to tell.",
				       rows[i].size.name, sr->replicas, sr->replicas == 1 ? "" : "s",
				       sr->result.ttft.p99_lo,
				       sr->result.ttft.p99_hi, sr->result.tpot.p99_lo,
				       sr->result.tpot.p99_hi);
		if (sr->below_marginal)
			wzp_table_note(t, "%s: %ld replica%s missed a p99 target that lies inside its "
					  "p99's 95%% interval (p99 TTFT %.3f s, TPOT %.4f s): missed by "
					  "chance as much as by capacity; simulate longer to tell.",
				       rows[i].size.name, sr->below, sr->below == 1 ? "" : "s",
				       sr->below_ttft_p99,
				       sr->below_tpot_p99);
	}
	return t;
}

/* The deployment search's table: per format the configuration it sized,
 * against the scenario's own and the baseline's winner. */
static wzp_table *make_search_table(const wz_sim_setup *s, const wz_size_row *rows, int n,
				    int base)
{
	wzp_table *t = wzp_table_new("Serving configurations searched");
	if (!t)
		return NULL;
	char h_base[96];
	snprintf(h_base, sizeof h_base, "GPUs at %s's configuration",
		 base >= 0 ? rows[base].size.name : "the baseline");
	wzp_table_column(t, "format", "Format", 0);
	wzp_table_column(t, "configuration", "Configuration", 0);
	wzp_table_column(t, "gpus", "GPUs", 1);
	wzp_table_column(t, "default_gpus", "GPUs at the scenario's configuration", 1);
	wzp_table_column(t, "saving_vs_default", "Cheaper than it", 1);
	wzp_table_column(t, "at_baseline_config_gpus", h_base, 1);
	wzp_table_column(t, "screened", "Configurations screened", 1);
	wzp_table_column(t, "feasible", "Feasible by the screen", 1);
	wzp_table_column(t, "confirmed", "Confirmed by simulation", 1);
	for (int i = 0; i < n; i++) {
		const wz_size_row *r = &rows[i];
		char text[256], pct[32];
		wzp_table_row(t);
		wzp_table_str(t, r->size.name);
		if (!r->search.replicas) {
			if (r->has_closest) {
				char c[300];
				snprintf(c, sizeof c, "none met the targets; closest: %s",
					 wzd_config_text(&r->closest, text, sizeof text));
				wzp_table_str(t, c);
			} else {
				wzp_table_str(t, "none met the targets");
			}
			wzp_table_empty(t);
			wzp_table_empty(t);
			wzp_table_empty(t);
		} else {
			wzp_table_str(t, wzd_config_text(&r->config, text, sizeof text));
			wzp_table_numf(t, (double)r->fleet.gpus, 0);
			if (r->default_gpus > 0) {
				wzp_table_numf(t, (double)r->default_gpus, 0);
				double save = 1 - (double)r->fleet.gpus / (double)r->default_gpus;
				snprintf(pct, sizeof pct, "%.0f%%", 100 * save);
				wzp_table_num(t, save, pct);
			} else {
				wzp_table_str(t, r->default_sized ? "none within 4x" : "-");
				wzp_table_empty(t);
			}
		}
		if (r->at_base_gpus > 0)
			wzp_table_numf(t, (double)r->at_base_gpus, 0);
		else if (r->at_base_gpus == 0)
			wzp_table_str(t, "none");
		else
			wzp_table_empty(t);
		wzp_table_numf(t, (double)r->nconfigs, 0);
		wzp_table_numf(t, (double)r->nfeasible, 0);
		if (r->unconfirmed > 0) {
			char lim[64];
			snprintf(lim, sizeof lim, "%d (limit; %ld left)", r->nconfirmed, r->unconfirmed);
			wzp_table_str(t, lim);
		} else {
			wzp_table_numf(t, (double)r->nconfirmed, 0);
		}
	}
	wzd_config def;
	char text[256];
	wzd_config_of(&s->params, &s->scn->mem, &def);
	wzp_table_note(t, "Each format's fleet at the cheapest configuration found: an analytic "
			  "screen of every configuration (the simulator's step times at the mean "
			  "load), then the simulator sizing them in order of the screen's optimistic "
			  "fleet, each only below the cheapest fleet found, until no unconfirmed "
			  "one's lower bound beats it or --confirm-limit (%d) is reached; the "
			  "baseline first, whose winner is each other format's first candidate.",
		       s->confirm_limit);
	for (int i = 0; i < n; i++)
		if (rows[i].unconfirmed > 0)
			wzp_table_note(t, "%s: the confirmation limit stopped the search with %ld "
					  "configurations unconfirmed whose lower bound (from %ld GPUs) "
					  "beats the fleet found; a larger --confirm-limit may find a "
					  "cheaper one.",
				       rows[i].size.name, rows[i].unconfirmed, rows[i].unconfirmed_bound);
	wzp_table_note(t, "The scenario's configuration: %s, sized the same way up to four times "
			  "the winner's GPUs.", wzd_config_text(&def, text, sizeof text));
	for (int i = 0; i < n; i++)
		if (!rows[i].search.replicas && rows[i].has_closest) {
			if (isinf(rows[i].closest_over))
				wzp_table_note(t, "%s: the closest configuration's largest fleet refused "
						  "requests.", rows[i].size.name);
			else
				wzp_table_note(t, "%s: the closest configuration's largest fleet ran at "
						  "%.2f times its worst p99 target.",
					       rows[i].size.name, rows[i].closest_over);
		}
	return t;
}

int wz_cmd_size(int argc, char **argv)
{
	wz_size_opts o;
	int rc = wz_size_parse(argc, argv, &o);
	if (rc == 0)
		help();
	if (rc >= 0)
		return rc;
	wz_diag diag;
	wz_diag_clear(&diag);
	wza_run *run = NULL;
	if (!o.no_archive && !(run = wza_run_new("size", argc - 1, argv + 1, PACKAGE_VERSION))) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_cli_fail("size", &diag);
	}
	/* The archive is opened first: one that cannot be used fails the
	 * command before any result is printed as if it had been stored. */
	wza_archive *archive = NULL;
	if (run && (rc = wz_sim_archive_open("size", o.archive, &archive))) {
		wza_run_free(run);
		return rc;
	}
	wz_sim_setup setup;
	wz_size_row *rows = NULL;
	int base = -1;
	if ((rc = wz_size_compute("size", &o, run, &setup, &rows, &base))) {
		wza_close(archive);
		wza_run_free(run);
		return rc;
	}
	int n = setup.scn->nformats;
	wzp_table *t = make_table(&setup, rows, n, base);
	/* the search's own table in the human reports; CSV and JSON carry the
	 * configuration as a column */
	int human = o.how == WZP_TEXT || o.how == WZP_MD;
	wzp_table *st = setup.search && human ? make_search_table(&setup, rows, n, base) : NULL;
	wz_buf out = { 0 };
	if (!t || (setup.search && human && !st) || wzp_table_render(t, o.how, &out) ||
	    (st && (wz_buf_puts(&out, "\n"), wzp_table_render(st, o.how, &out)))) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		rc = wz_cli_fail("size", &diag);
	} else {
		rc = wz_cli_emit("size", o.output, wz_buf_str(&out));
	}
	if (!rc)
		rc = wz_sim_store_in("size", archive, run);
	else
		wza_close(archive);
	wz_buf_free(&out);
	wzp_table_free(t);
	wzp_table_free(st);
	wz_size_rows_free(rows, n);
	wz_sim_setup_free(&setup);
	wza_run_free(run);
	return rc;
}
