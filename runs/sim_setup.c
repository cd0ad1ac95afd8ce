/* A simulation's set-up from a request's simulator part: the scenario,
 * catalogs, traffic and restore rates loaded and checked, a replica model
 * per cache format (sim_setup.h). */
#include "runs/sim_setup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/formats/format.h"
#include "costmodel/fleet.h"
#include "runs/say.h"
#include "sim/speedup.h"

static int apply(const char *cmd, const wz_sim_opts *o, wzs_params *p)
{
	wz_diag diag;
	int rc;
	if (o->idle_policy && wzs_idle_policy_parse(o->idle_policy, &p->idle_policy, &diag))
		return wz_say_usage(cmd, "--idle-policy: %s", diag.msg);
	if (o->duration && (rc = wz_say_double(cmd, "--duration", o->duration, 1e-3, 3.2e7,
					       &p->duration_s)))
		return rc;
	if (o->warmup && (rc = wz_say_double(cmd, "--warmup", o->warmup, 0, 3.2e7, &p->warmup_s)))
		return rc;
	if (o->seed) {
		long v;
		if ((rc = wz_say_long(cmd, "--seed", o->seed, 0, 2147483647L, &v)))
			return rc;
		p->seed = (uint64_t)v;
	}
	if (o->search_seeds &&
	    (rc = wz_say_long(cmd, "--search-seeds", o->search_seeds, 1, WZS_MAX_SEARCH_SEEDS,
			      &p->search_seeds)))
		return rc;
	if (o->offload_format) {
		if (strlen(o->offload_format) >= sizeof p->offload_format)
			return wz_say_usage(cmd, "--offload-format: name too long");
		snprintf(p->offload_format, sizeof p->offload_format, "%s", o->offload_format);
	}
	if (o->serving) {
		if (strcmp(o->serving, "aggregated") && strcmp(o->serving, "disaggregated"))
			return wz_say_usage(cmd, "--serving: '%s': use aggregated or disaggregated",
					    o->serving);
		p->disaggregated = !strcmp(o->serving, "disaggregated");
	}
	if (o->ttft && (rc = wz_say_double(cmd, "--ttft-p99", o->ttft, 1e-6, 86400, &p->ttft_p99_s)))
		return rc;
	if (o->tpot && (rc = wz_say_double(cmd, "--tpot-p99", o->tpot, 1e-6, 3600, &p->tpot_p99_s)))
		return rc;
	if (o->ttft_per_1k && (rc = wz_say_double(cmd, "--ttft-per-1k", o->ttft_per_1k, 0, 3600,
						  &p->ttft_per_1k_tokens_s)))
		return rc;
	return 0;
}

/* A bad value read from the scenario: exit 2 naming file:line and key. */
static int fail_at(const char *cmd, const wz_kv *kv, const char *key, const char *msg)
{
	wz_diag diag;
	wz_diag_set(&diag, WZ_ERR_INPUT, "%s:%d: %s: %s", wz_kv_origin(kv), wz_kv_line(kv, key), key,
		    msg);
	return wz_say_fail(cmd, &diag);
}

/* The rates file from --restore-rates, else the scenario's restore_rates
 * (relative to the scenario's folder). */
static int load_rates(const char *cmd, const wz_sim_opts *o, wz_sim_setup *out)
{
	wz_diag diag;
	if (o->restore_rates) {
		if (strlen(o->restore_rates) >= sizeof out->params.restore_rates)
			return wz_say_usage(cmd, "--restore-rates: path too long");
		snprintf(out->params.restore_rates, sizeof out->params.restore_rates, "%s",
			 o->restore_rates);
	} else {
		const char *origin = wz_kv_origin(out->scn->kv), *slash = strrchr(origin, '/');
		if (out->params.restore_rates[0] != '/' && slash) {
			char path[sizeof out->params.restore_rates];
			int n = snprintf(path, sizeof path, "%.*s/%s", (int)(slash - origin), origin,
					 out->params.restore_rates);
			if (n < 0 || (size_t)n >= sizeof path)
				return fail_at(cmd, out->scn->kv, "restore_rates", "path too long");
			memcpy(out->params.restore_rates, path, (size_t)n + 1);
		}
	}
	if (wzs_restore_rates_read(out->params.restore_rates, &out->rates, &diag))
		return wz_say_fail(cmd, &diag);
	out->has_rates = 1;
	return 0;
}

/* The deployment search: on with --search or the scenario's `search =
 * yes` (off with --no-search), its space with the scenario's `config` and
 * --config pinned; a bad pin is exit 2 naming the key (and the scenario's
 * line). */
static int load_search(const char *cmd, const wz_sim_opts *o, wz_sim_setup *out)
{
	wz_diag diag;
	wz_kv *kv = out->scn->kv;
	out->search = o->search ? o->search > 0 : out->params.search;
	/* The screen reads the scenario's population: a replayed table is
	 * sized at the scenario's configuration unless --search asks. */
	if (o->traffic && o->search > 0)
		return wz_say_usage(cmd, "--search screens the scenario's population; with --traffic "
				    "size the scenario's configuration (--no-search) or pin it with "
				    "--config");
	if (o->traffic)
		out->search = 0;
	wzd_space_default(&out->params, &out->space);
	/* --serving on the command line pins the search's serving */
	if (o->serving && wzd_space_pin(&out->space, out->params.disaggregated
						      ? "serving=disaggregated" : "serving=aggregated",
					"--serving", &diag))
		return wz_say_fail(cmd, &diag);
	if (out->params.config[0]) {
		char where[512];
		snprintf(where, sizeof where, "%s:%d: config", wz_kv_origin(kv),
			 wz_kv_line(kv, "config"));
		if (wzd_space_pin(&out->space, out->params.config, where, &diag))
			return wz_say_fail(cmd, &diag);
	}
	if (o->config && wzd_space_pin(&out->space, o->config, "--config", &diag))
		return wz_say_usage(cmd, "%s", diag.msg);
	long limit = WZD_CONFIRM_LIMIT;
	int rc = o->confirm_limit ? wz_say_long(cmd, "--confirm-limit", o->confirm_limit, 1, 4096,
						&limit)
				  : 0;
	if (rc)
		return rc;
	out->confirm_limit = (int)limit;
	return 0;
}

int wz_sim_setup_load(const char *cmd, const wz_scenario_opts *so, const wz_sim_opts *o,
		      wz_sim_setup *out)
{
	memset(out, 0, sizeof *out);
	wz_diag diag;
	wz_diag_clear(&diag);
	int rc = wz_scenario_setup(cmd, so, &out->cat, &out->scn);
	if (rc)
		return rc;
	wzs_params_default(&out->params);
	if (wzs_params_from_kv(out->scn->kv, &out->params, &diag))
		rc = wz_say_fail(cmd, &diag);
	if (!rc)
		rc = apply(cmd, o, &out->params);
	if (!rc && wzs_params_validate(&out->params, cmd, &diag))
		rc = wz_say_usage(cmd, "%s", diag.msg);
	wzc_format ofmt;
	if (!rc && strcmp(out->params.offload_format, "same") &&
	    strncmp(out->params.offload_format, "iso:", 4) &&
	    (wzc_format_parse(out->params.offload_format, &ofmt, &diag) ||
	     (ofmt.keeps && wz_diag_set(&diag, WZ_ERR_INPUT,
					"'%s' keeps tokens in bf16, so its bytes per token depend on "
					"each session's length; offload in %s",
					ofmt.name, wzc_format_unkept(&ofmt).name)))) {
		if (o->offload_format)
			rc = wz_say_usage(cmd, "--offload-format: %s", diag.msg);
		else
			rc = fail_at(cmd, out->scn->kv, "offload_format", diag.msg);
	}
	if (!rc && !(out->model = wzm_find_model(out->cat, out->scn->model, &diag)))
		rc = wz_say_fail(cmd, &diag);
	/* the model's own attention shape where the scenario does not give it */
	if (!rc)
		wzs_params_model_defaults(&out->params, out->scn->kv, out->model);
	if (!rc && !(out->gpu = wzm_find_gpu(out->cat, out->scn->gpu, &diag)))
		rc = wz_say_fail(cmd, &diag);
	if (!rc)
		rc = load_search(cmd, o, out);
	if (!rc && (o->restore_rates || out->params.restore_rates[0]))
		rc = load_rates(cmd, o, out);
	out->speedup = 1;
	long threads = sysconf(_SC_NPROCESSORS_ONLN);
	if (!rc && o->threads)
		rc = wz_say_long(cmd, "--threads", o->threads, 1, 64, &threads);
	out->threads = threads < 1 ? 1 : threads > 64 ? 64 : (int)threads;
	if (!rc && o->speedup)
		rc = o->traffic ? wz_say_double(cmd, "--speedup", o->speedup, 1e-6, 1e6, &out->speedup)
				: wz_say_usage(cmd, "--speedup needs --traffic");
	if (!rc && o->traffic) {
		size_t reordered = 0;
		if (wzt_traffic_read(o->traffic, o->sort_traffic ? WZT_UNSORTED_SORT : WZT_UNSORTED_REFUSE,
				     &out->traffic, &reordered, &diag))
			rc = wz_say_fail(cmd, &diag);
		else if (reordered)
			wz_say_warn(cmd, "%s: %zu rows were out of order and were sorted", o->traffic,
				    reordered);
		/* Speeding up session arrivals raises the load while keeping the
		 * trace's mix of lengths, its sessions and its users' think time. */
		out->speedup_all = o->speedup_all;
		if (!rc && wzs_traffic_speedup(out->traffic, out->speedup,
					       o->speedup_all ? WZS_SPEEDUP_ALL : WZS_SPEEDUP_SESSIONS,
					       &diag))
			rc = wz_say_fail(cmd, &diag);
		size_t n = out->traffic ? out->traffic->n : 0;
		if (!rc && (n == 0 || out->traffic->requests[n - 1].arrival_s < out->params.warmup_s))
			rc = wz_say_usage(cmd, "%s: no request arrives after the %g s warm-up; "
					  "give a shorter --warmup", o->traffic, out->params.warmup_s);
	}
	if (!rc && !o->traffic) {
		wzs_params *p = &out->params;
		double per_turn = p->prompt_tokens + p->output_tokens;
		int fixed = p->length_dist == WZS_DIST_FIXED;
		/* The default session length suits long contexts; at a short one
		 * its turns would outgrow the context, so unless the scenario sets
		 * the session shape, sessions get as many turns as keep a new one
		 * at half the context or more (the mean stays the context). */
		if (!wz_kv_get(out->scn->kv, "pop_turns") &&
		    !wz_kv_get(out->scn->kv, "pop_initial_context") &&
		    wzs_initial_context(p, out->scn->context) < out->scn->context / 2) {
			double room = (double)out->scn->context / 2 / per_turn;
			double turns = floor(1 + (fixed ? 2 * room : room));
			p->turns = turns < 1 ? 1 : turns;
		}
		out->initial_context = wzs_initial_context(p, out->scn->context);
		if (out->initial_context < 1)
			rc = wz_say_usage(cmd, "a closed population at %ld tokens of context: its sessions "
					  "grow by about %.0f turns x %.0f tokens, more than the context; "
					  "set pop_initial_context, or fewer or shorter turns "
					  "(pop_turns, pop_prompt_tokens, pop_output_tokens)",
					  out->scn->context, fixed ? (p->turns - 1) / 2.0 : p->turns - 1,
					  per_turn);
	}
	if (rc)
		wz_sim_setup_free(out);
	return rc;
}

long wz_sim_gpus_per_replica(const wz_sim_setup *s)
{
	return s->scn->mem.gpus_per_replica + (s->params.disaggregated ? s->params.prefill_gpus : 0);
}

void wz_sim_setup_free(wz_sim_setup *s)
{
	wzt_traffic_free(s->traffic);
	wzm_scenario_free(s->scn);
	wzm_catalog_free(s->cat);
	memset(s, 0, sizeof *s);
}

/* wz_sim_model, giving also the offload record's bytes and the restores'
 * per-core decode rate (0: none). */
static int model_of(const char *cmd, const wz_sim_setup *s, const char *format,
		    wzs_replica_model *out, wzm_format_size *size, double *offload_per_layer,
		    double *restore_per_core)
{
	*restore_per_core = 0;
	wz_diag diag;
	wz_diag_clear(&diag);
	const wzm_model *m = s->model;
	if (wzm_need(m->kv_lora_rank, m->name, "kv_lora_rank", m->origin, m->line, &diag) ||
	    wzm_need(m->rope_dim, m->name, "rope_dim", m->origin, m->line, &diag))
		return wz_say_fail(cmd, &diag);
	int R = (int)m->kv_lora_rank, P = (int)m->rope_dim;
	char *spec = (char *)format;
	if (wz_resolve_formats(&spec, 1, s->scn->baseline_format, R, P, size, &diag))
		return wz_say_fail(cmd, &diag);
	wzm_format_size off = *size;
	if (strcmp(s->params.offload_format, "same")) {
		char *ospec = (char *)s->params.offload_format;
		if (wz_resolve_formats(&ospec, 1, s->scn->baseline_format, R, P, &off, &diag))
			return wz_say_fail(cmd, &diag);
	}
	*offload_per_layer = off.record_per_layer;
	double cost;
	if (wzs_decode_cost(&s->params, size->name, &cost, &diag))
		return wz_say_fail(cmd, &diag);
	if (wzs_replica_model_build(m, s->gpu, &s->scn->mem, s->scn->context, size->record_per_layer,
				    off.record_per_layer, cost, &s->params, out, &diag)) {
		/* A value the replica cannot take: say where the scenario set it. */
		static const char key[] = "prefill_context_parallel";
		size_t n = sizeof key - 1;
		if (!strncmp(diag.msg, key, n) && diag.msg[n] == ':' && wz_kv_get(s->scn->kv, key))
			return fail_at(cmd, s->scn->kv, key, diag.msg + n + 2);
		return wz_say_fail(cmd, &diag);
	}
	/* Only a policy that parks sessions restores them. */
	if (s->params.idle_policy == WZS_IDLE_OFFLOAD) {
		double per_core;
		if (wzs_restore_rate(s->has_rates ? &s->rates : NULL, size->name, off.name, &per_core,
				     &diag))
			return wz_say_fail(cmd, &diag);
		wzs_replica_model_set_restore_decode(out, &s->params, per_core);
		*restore_per_core = per_core;
	}
	return 0;
}

int wz_sim_model(const char *cmd, const wz_sim_setup *s, const char *format,
		 wzs_replica_model *out, wzm_format_size *size)
{
	double off, per_core;
	return model_of(cmd, s, format, out, size, &off, &per_core);
}

int wz_sim_deploy_base(const char *cmd, const wz_sim_setup *s, const char *format,
		       wzd_base *out, wzm_format_size *size)
{
	memset(out, 0, sizeof *out);
	wzs_replica_model *m = malloc(sizeof *m);
	if (!m) {
		wz_diag diag;
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_say_fail(cmd, &diag);
	}
	/* the scenario's own configuration: it resolves the format and its
	 * costs, and checks that the scenario's values hold */
	int rc = model_of(cmd, s, format, m, size, &out->offload_per_layer,
			  &out->restore_per_core_tlps);
	if (!rc) {
		wz_diag diag;
		wzm_rates rates;
		out->model = s->model;
		out->gpu = s->gpu;
		out->mem = s->scn->mem;
		out->params = s->params;
		out->context = s->scn->context;
		out->record_per_layer = size->record_per_layer;
		out->decode_cost = m->decode_cost;
		wz_sim_config(s, m, &out->run);
		out->run.params = NULL;
		out->run.model = NULL;
		if (wzm_find_rates(s->cat, s->scn->price_set, s->gpu, &rates, &diag))
			rc = wz_say_fail(cmd, &diag);
		else
			out->usd_per_gpu_year = rates.reserved_usd_h * WZM_HOURS_PER_YEAR;
	}
	free(m);
	return rc;
}

void wz_sim_config(const wz_sim_setup *s, const wzs_replica_model *m, wzs_run_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->params = &s->params;
	cfg->model = m;
	cfg->replicas = 1;
	cfg->users = s->scn->users;
	cfg->initial_context = s->initial_context;
	cfg->max_context = isnan(s->model->max_context) ? 0 : (long)s->model->max_context;
	cfg->traffic = s->traffic;
}

void wz_sim_progress(void *cmd, double sim_time, double end_time, unsigned long long events)
{
	if (isnan(end_time) || isinf(end_time))
		wz_say(WZ_SAY_ERR, "wzplan %s: simulated %.0f s, %llu events\n", (const char *)cmd,
			sim_time, events);
	else
		wz_say(WZ_SAY_ERR, "wzplan %s: simulated %.0f of %.0f s (%.0f%%), %llu events\n",
			(const char *)cmd, sim_time, end_time, 100.0 * sim_time / end_time, events);
}
