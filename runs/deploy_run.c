/* The deployment search over a scenario's cache formats (sim/deploy): each
 * format sized at the cheapest serving configuration that meets the
 * targets, beside the scenario's own configuration and the baseline's
 * winner, for `size` and `propose` (sim_setup.h). */
#include "runs/sim_setup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/say.h"

typedef struct {
	const char *cmd, *format;
	int quiet;
} note;

static void on_run(void *ud, const wzd_config *c, long replicas, const wzs_result *r, int ok)
{
	const note *n = ud;
	if (n->quiet)
		return;
	char text[256], ttft[32] = "none measured", tpot[32] = "none measured";
	if (r->ttft.n)
		snprintf(ttft, sizeof ttft, "%.3f s", r->ttft.p99);
	if (r->tpot.n)
		snprintf(tpot, sizeof tpot, "%.4f s", r->tpot.p99);
	wz_say(WZ_SAY_ERR,
	       "wzplan %s: %s: %s: %ld replicas: p99 TTFT %s, p99 TPOT %s, %llu refused, "
	       "%llu events%s -> %s\n",
	       n->cmd, n->format, wzd_config_text(c, text, sizeof text), replicas, ttft, tpot,
	       r->refused, r->events,
	       r->stopped_early ? " (stopped at the first refusal)" : "", ok ? "meets" : "fails");
}

static void on_default_run(void *ud, long replicas, const wzs_result *r, int ok)
{
	const note *n = ud;
	if (n->quiet)
		return;
	wz_say(WZ_SAY_ERR,
	       "wzplan %s: %s: the scenario's configuration: %ld replicas: p99 TTFT %.3f s, p99 "
	       "TPOT %.4f s, %llu refused -> %s\n",
	       n->cmd, n->format, replicas, r->ttft.p99, r->tpot.p99, r->refused,
	       ok ? "meets" : "fails");
}

/* The largest of a confirmed configuration's p99s over their targets at
 * its largest fleet (a refusal: infinite). */
static double over(const wzd_confirmed *c)
{
	const wzs_search *s = &c->search;
	if (s->below_refused_timeout || s->below_refused_too_big || !s->below_completed)
		return HUGE_VAL;
	double t = s->below_ttft_over, u = s->below_tpot_p99 / c->params.tpot_p99_s;
	return t > u ? t : u;
}

/* One format: the search, its winner moved into the row. */
static int one_format(const char *cmd, const wz_sim_setup *s, int i, long max_replicas,
		      int quiet, const wzd_config *seed, const wzm_rates *rates, wz_size_row *r)
{
	wzd_base b;
	int rc = wz_sim_deploy_base(cmd, s, s->scn->formats[i], &b, &r->size);
	if (rc)
		return rc;
	note n = { cmd, r->size.name, quiet };
	wzd_result res;
	wz_diag diag;
	wz_diag_clear(&diag);
	if (wzd_search(&b, &s->space, seed, seed ? 1 : 0, s->confirm_limit, max_replicas, s->threads,
		       on_run, &n, &res, &diag)) {
		wzd_result_free(&res);
		return wz_say_fail(cmd, &diag);
	}
	r->searched = 1;
	r->npareto = wzd_pareto(&b, res.screened, res.nconfigs, r->pareto_x, r->pareto_y);
	r->nconfigs = res.nconfigs;
	r->nfeasible = res.nfeasible;
	r->screen_s = res.screen_s;
	r->nconfirmed = res.nconfirmed;
	r->confirm_limit = res.limit;
	r->unconfirmed = res.unconfirmed;
	r->unconfirmed_bound = res.unconfirmed_bound;
	if (res.unconfirmed > 0 && res.best >= 0)
		wz_say_warn(cmd, "%s: the confirmation limit (%d configurations, --confirm-limit) "
			    "stopped the search with %ld configurations unconfirmed whose lower bound "
			    "(from %ld GPUs) beats the fleet found; a larger limit may find a cheaper one",
			    r->size.name, res.limit, res.unconfirmed, res.unconfirmed_bound);
	else if (res.unconfirmed > 0)
		wz_say_warn(cmd, "%s: the confirmation limit (%d configurations, --confirm-limit) "
			    "stopped the search with %ld configurations unconfirmed and no fleet found",
			    r->size.name, res.limit, res.unconfirmed);
	r->at_base_gpus = -1;
	if (seed && res.nconfirmed > 0 && !memcmp(&res.confirmed[0].est.c, seed, sizeof *seed))
		r->at_base_gpus = res.confirmed[0].search.replicas > 0 ? res.confirmed[0].gpus : 0;
	int k = res.best >= 0 ? res.best : res.closest;
	if (k >= 0) {
		wzd_confirmed *c = &res.confirmed[k];
		r->config = c->est.c;
		r->model = c->model;
		r->search = c->search;
		memset(&c->search.result, 0, sizeof c->search.result);
		r->prefill_gpus = c->est.c.prefill_gpus;
		if (res.best < 0) {
			r->has_closest = 1;
			r->closest = c->est.c;
			r->closest_over = over(c);
		}
	}
	long runs = 0;
	for (int j = 0; j < res.nconfirmed; j++)
		runs += res.confirmed[j].search.runs;
	long found_gpus = r->search.replicas > 0 ? r->search.replicas *
						   (r->config.gpus + r->config.prefill_gpus) : 0;
	r->search.runs = runs;
	wzd_result_free(&res);
	/* the scenario's own configuration, sized the same way, up to four
	 * times the winner's GPUs */
	wzd_config def;
	wzd_config_of(&s->params, &s->scn->mem, &def);
	if (found_gpus > 0) {
		wzd_confirmed dc;
		long cap = 4 * found_gpus / (def.gpus + def.prefill_gpus);
		note dn = { cmd, r->size.name, quiet };
		if (!memcmp(&def, &r->config, sizeof def)) {
			r->default_gpus = found_gpus;
		} else if (cap >= 1) {
			if (wzd_confirm(&b, &def, cap, s->threads, on_default_run, &dn, &dc, &diag)) {
				wzd_confirmed_free(&dc);
				return wz_say_fail(cmd, &diag);
			}
			r->default_gpus = dc.search.replicas > 0 ? dc.gpus : 0;
			wzd_confirmed_free(&dc);
		}
		r->default_sized = 1;
	}
	r->fleet.replicas = r->search.replicas;
	r->fleet.gpus = found_gpus;
	r->fleet.gpus_exact = (double)found_gpus;
	r->fleet.gpus_up = r->fleet.gpus_nearest = found_gpus;
	wzm_fleet_price(&r->fleet, rates);
	return 0;
}

int wz_size_search(const char *cmd, const wz_sim_setup *s, long max_replicas, int quiet,
		   const wzm_rates *rates, wz_size_row *rows, int *base)
{
	int n = s->scn->nformats;
	*base = -1;
	for (int i = 0; i < n; i++)
		if (!strcmp(s->scn->formats[i], s->scn->baseline_format))
			*base = i;
	int rc = 0;
	wzd_config seed;
	int have_seed = 0;
	if (*base >= 0) {
		if ((rc = one_format(cmd, s, *base, max_replicas, quiet, NULL, rates, &rows[*base])))
			return rc;
		rows[*base].at_base_gpus = rows[*base].fleet.gpus;
		if (rows[*base].search.replicas > 0) {
			seed = rows[*base].config;
			have_seed = 1;
		}
	}
	for (int i = 0; i < n; i++) {
		if (i == *base)
			continue;
		if ((rc = one_format(cmd, s, i, max_replicas, quiet, have_seed ? &seed : NULL, rates,
				     &rows[i])))
			return rc;
	}
	for (int i = 0; i < n; i++)
		if (!rows[i].search.replicas)
			wz_say_warn(cmd, "%s: no configuration's fleet of up to %ld replicas meets the "
				    "targets", rows[i].size.name, max_replicas);
	return 0;
}
