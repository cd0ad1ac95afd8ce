/* The deployment search's time on the embedded scenario, every format:
 * the screen over every configuration of the space, then the simulator
 * confirming candidates until none left can beat the best fleet or the
 * limit binds (sim/deploy/deploy.h), with the winner per
 * format and how much cheaper it is than the scenario's own configuration
 * sized the same way.  The baseline is searched first and its winner is
 * each other format's first candidate.  Wall and CPU seconds of the
 * searches (they run on every core; the default's sizing is left out).
 *
 *   bench_deploy [LIMIT [THREADS [FORMATS]]]   defaults WZD_CONFIRM_LIMIT (128), the
 *                                             cores online and the scenario's formats
 *   bench_deploy screen [N]             the screen's N cheapest per format */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/sim_cli.h"

/* The process's CPU seconds, all threads: the machine may be shared. */
static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The screen alone: its n cheapest configurations per format. */
static int screen_only(wz_sim_setup *setup, const wzd_space *space, int n)
{
	long nc = wzd_space_enumerate(space, NULL, 0);
	wzd_config *cs = malloc((size_t)nc * sizeof *cs);
	wzd_estimate *es = malloc((size_t)nc * sizeof *es);
	if (!cs || !es)
		return 1;
	wzd_space_enumerate(space, cs, nc);
	for (int i = 0; i < setup->scn->nformats; i++) {
		wzd_base base;
		wzm_format_size size;
		if (wz_sim_deploy_base("bench_deploy", setup, setup->scn->formats[i], &base, &size))
			return 1;
		double t0 = wall();
		for (long k = 0; k < nc; k++)
			wzd_screen(&base, &cs[k], &es[k]);
		double t = wall() - t0;
		long feas = 0, drop = 0;
		for (long k = 0; k < nc; k++) {
			feas += es[k].feasible;
			drop += es[k].dropped;
		}
		printf("%s: %ld configurations, %ld dropped, %ld feasible, screened in %.3f s\n",
		       size.name, nc, drop, feas, t);
		for (int r = 0; r < n; r++) {
			long best = -1;
			for (long k = 0; k < nc; k++)
				if (es[k].feasible && (best < 0 || es[k].gpus < es[best].gpus))
					best = k;
			if (best < 0)
				break;
			char text[256];
			printf("  %6ld GPUs %8.1f users/replica batch %4.0f tpot %.4f tok/s/GPU %7.1f "
			       "first %.2f/%.2f s bind %s: %s\n",
			       es[best].gpus, es[best].users_per_replica, es[best].batch, es[best].tpot_s,
			       es[best].tok_s_gpu, es[best].first_prefill_s, es[best].first_target_s,
			       wzd_bind_name(es[best].bind), wzd_config_text(&cs[best], text, sizeof text));
			es[best].feasible = 0;
		}
	}
	free(cs);
	free(es);
	return 0;
}

/* With BENCH_DEPLOY_VERBOSE set: each run on standard error. */
static void on_run(void *ud, const wzd_config *c, long replicas, const wzs_result *r, int ok)
{
	static double last;
	double t = wall();
	char text[256];
	(void)ud;
	fprintf(stderr, "  %.2f s: %s: %ld replicas, %llu events, p99 TTFT %.2f TPOT %.4f -> %s\n",
		last > 0 ? t - last : 0, wzd_config_text(c, text, sizeof text), replicas, r->events,
		r->ttft.p99, r->tpot.p99, ok ? "meets" : "fails");
	last = t;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "screen")) {
		wz_scenario_opts so;
		memset(&so, 0, sizeof so);
		wz_sim_opts o;
		memset(&o, 0, sizeof o);
		wz_sim_setup setup;
		if (wz_sim_setup_load("bench_deploy", &so, &o, &setup))
			return 1;
		wzd_space space;
		wzd_space_default(&setup.params, &space);
		int rc = screen_only(&setup, &space, argc > 2 ? atoi(argv[2]) : 10);
		wz_sim_setup_free(&setup);
		return rc;
	}
	int confirm = argc > 1 ? atoi(argv[1]) : WZD_CONFIRM_LIMIT;
	wz_scenario_opts so;
	memset(&so, 0, sizeof so);
	wz_sim_opts o;
	memset(&o, 0, sizeof o);
	if (argc > 2)
		o.threads = argv[2];
	if (argc > 3)
		so.formats = argv[3];
	if (confirm < 1 || confirm > 4096) {
		fprintf(stderr, "usage: bench_deploy [LIMIT [THREADS [FORMATS]]]\n");
		return 2;
	}
	wz_sim_setup setup;
	if (wz_sim_setup_load("bench_deploy", &so, &o, &setup))
		return 1;
	wzd_space space;
	wzd_space_default(&setup.params, &space);
	printf("bench_deploy: %s on %s, %ld users at %ld tokens, %d threads, confirming %d\n",
	       setup.model->name, setup.gpu->name, setup.scn->users, setup.scn->context,
	       setup.threads, confirm);
	printf("%-14s %8s %9s %9s %6s %8s %8s  %s\n", "format", "configs", "screen_s", "search_s",
	       "runs", "gpus", "default", "winner");
	int rc = 0;
	double total = 0, cpu0 = cpu();
	/* the baseline first: its winner is each other format's first candidate */
	int nf = setup.scn->nformats, order[64], base_i = 0, have_seed = 0;
	wzd_config seed;
	for (int i = 0; i < nf; i++)
		if (!strcmp(setup.scn->formats[i], setup.scn->baseline_format))
			base_i = i;
	order[0] = base_i;
	for (int i = 0, k = 1; i < nf && k < 64; i++)
		if (i != base_i)
			order[k++] = i;
	for (int oi = 0; oi < nf && oi < 64 && !rc; oi++) {
		int i = order[oi];
		wzd_base base;
		wzm_format_size size;
		if ((rc = wz_sim_deploy_base("bench_deploy", &setup, setup.scn->formats[i], &base,
					     &size)))
			break;
		wzd_result res;
		wz_diag diag;
		double t0 = wall();
		if (wzd_search(&base, &space, have_seed ? &seed : NULL, have_seed, confirm, 100000,
			       setup.threads,
			       getenv("BENCH_DEPLOY_VERBOSE") ? on_run : NULL, NULL, &res,
			       &diag)) {
			fprintf(stderr, "bench_deploy: %s: %s\n", size.name, diag.msg);
			rc = 1;
			break;
		}
		double t = wall() - t0;
		total += t;
		double search_cpu = cpu();
		if (!have_seed && res.best >= 0) {
			seed = res.confirmed[res.best].est.c;
			have_seed = 1;
		}
		/* the scenario's own configuration, sized the same way */
		wzd_config def;
		wzd_config_of(&setup.params, &setup.scn->mem, &def);
		wzd_confirmed dc;
		char dgpus[32] = "none";
		if (!wzd_confirm(&base, &def, 100000, setup.threads, NULL, NULL, &dc, &diag) &&
		    dc.search.replicas > 0)
			snprintf(dgpus, sizeof dgpus, "%ld", dc.gpus);
		wzd_confirmed_free(&dc);
		cpu0 += cpu() - search_cpu; /* the default's sizing is not the search's */
		char text[256];
		if (res.best >= 0) {
			const wzd_confirmed *w = &res.confirmed[res.best];
			printf("%-14s %8ld %9.2f %9.2f %6llu %8ld %8s  %s\n", size.name, res.nconfigs,
			       res.screen_s, t, res.runs, w->gpus, dgpus,
			       wzd_config_text(&w->est.c, text, sizeof text));
		} else {
			printf("%-14s %8ld %9.2f %9.2f %6llu %8s %8s  none met the targets\n", size.name,
			       res.nconfigs, res.screen_s, t, res.runs, "none", dgpus);
		}
		wzd_result_free(&res);
	}
	printf("total search seconds: %.1f wall, %.1f CPU (target: at most 60 on 2 cores)\n",
	       total, cpu() - cpu0);
	wz_sim_setup_free(&setup);
	return rc;
}
