/* A simulation's request (the simulator's options, as text as a user gave
 * them) and its set-up: scenario, catalog and traffic loaded, a replica
 * model for a cache format; sizing fleets by simulation (size_run.c).
 * Errors and progress go to the sink (runs/say.h). */
#ifndef WZ_RUNS_SIM_SETUP_H
#define WZ_RUNS_SIM_SETUP_H

#include "archive/archive.h"
#include "runs/say.h"
#include "runs/setup.h"
#include "sim/deploy/deploy.h"
#include "sim/params.h"
#include "sim/replica.h"
#include "sim/restore_rates.h"
#include "sim/search.h"
#include "sim/sim.h"
#include "traces/traffic.h"

typedef struct {
	const char *idle_policy, *duration, *warmup, *seed, *offload_format, *ttft, *tpot,
		*traffic, *speedup, *threads, *restore_rates, *serving, *search_seeds,
		*ttft_per_1k;
	int sort_traffic, speedup_all;
	/* the deployment search (size, propose): 1 --search, -1 --no-search,
	 * 0 the scenario's `search` key; --config pins keys of the space */
	int search;
	const char *config;
	const char *confirm_limit; /* --confirm-limit */
} wz_sim_opts;

typedef struct {
	wzm_catalog *cat;
	wzm_scenario *scn;
	const wzm_model *model;
	const wzm_gpu *gpu;
	wzs_params params;
	wzt_traffic *traffic;     /* NULL: the synthetic population */
	long initial_context;
	double speedup;           /* replay: session arrivals were sped up by this */
	int speedup_all;          /* ...and the time between turns too */
	int threads;              /* simulations run at once by size and propose */
	wzs_restore_rates rates;  /* host decode rates of restores (has_rates) */
	int has_rates;
	/* size each format at the cheapest serving configuration the
	 * deployment search finds (sim/deploy) instead of the scenario's own */
	int search;
	wzd_space space;          /* the space searched: the scenario's `config` and --config pinned */
	int confirm_limit;        /* the most configurations the search confirms (--confirm-limit) */
} wz_sim_setup;

/* Loads everything; returns an exit status (0 on success) after printing
 * any error.  Free with wz_sim_setup_free. */
int wz_sim_setup_load(const char *cmd, const wz_scenario_opts *so, const wz_sim_opts *o,
		      wz_sim_setup *out /* OUT */);
void wz_sim_setup_free(wz_sim_setup *s);

/* GPUs one replica takes: its own, and its prefill pool's when serving is
 * disaggregated. */
long wz_sim_gpus_per_replica(const wz_sim_setup *s);

/* The replica model for one format spec; *size gets the resolved format.
 * Returns an exit status after printing any error. */
int wz_sim_model(const char *cmd, const wz_sim_setup *s, const char *format,
		 wzs_replica_model *out /* OUT */, wzm_format_size *size /* OUT */);

/* The deployment search's inputs for one format spec (sim/deploy): the
 * set-up's model, GPU, parameters, replica shape and population, the
 * format's record bytes, decode cost and restore rate, the scenario's
 * reserved rate.  *size gets the resolved format.  Returns an exit status
 * after printing any error. */
int wz_sim_deploy_base(const char *cmd, const wz_sim_setup *s, const char *format,
		       wzd_base *out /* OUT */, wzm_format_size *size /* OUT */);

/* A run configuration for the set-up (replicas left to the caller). */
void wz_sim_config(const wz_sim_setup *s, const wzs_replica_model *m, wzs_run_config *cfg /* OUT */);

/* A cache format sized by simulation (size_run.c): its replica model,
 * the search and the smallest fleet that met the targets, priced. */
typedef struct {
	wzm_format_size size;
	wzs_replica_model model;
	wzs_search search;  /* search.replicas 0: no fleet met the targets */
	wzm_fleet fleet;
	long prefill_gpus;  /* disaggregated: the prefill pool per replica chosen (0: aggregated) */
	/* The deployment search (searched 1, deploy_run.c): the configuration
	 * sized; the scenario's own sized the same way up to four times the
	 * winner's GPUs (default_gpus, 0: none met the targets within that;
	 * default_sized 0: not tried, no winner); the format at the baseline's
	 * winning configuration (at_base_gpus, 0: none met; -1: not tried);
	 * the screen's counts; where no fleet met the targets, the
	 * configuration that came closest (closest_over: its largest fleet's
	 * worst p99 over its target). */
	int searched;
	wzd_config config;
	long default_gpus;
	int default_sized;
	long at_base_gpus;
	long nconfigs, nfeasible;
	double screen_s;
	/* configurations confirmed by simulation; where the confirmation limit
	 * stopped them, how many left unconfirmed could still have beaten the
	 * winner (their lower bound below it; the lowest: unconfirmed_bound) */
	int nconfirmed, confirm_limit;
	long unconfirmed, unconfirmed_bound;
	int has_closest;
	wzd_config closest;
	double closest_over;
	/* the screen's Pareto frontier over every configuration: output
	 * tokens/s per GPU (y) against tokens/s per user (x), x falling */
	int npareto;
	double pareto_x[WZD_PARETO_POINTS], pareto_y[WZD_PARETO_POINTS];
} wz_size_row;

/* Sizes each format at the deployment search's cheapest configuration
 * (sim/deploy, the set-up's space): the baseline first, whose winner is
 * every other format's first candidate.  Fills rows[0..nformats) as
 * wz_size_formats does (fleets priced at `rates`), with the search's
 * fields.  Returns an exit status after printing any error. */
int wz_size_search(const char *cmd, const wz_sim_setup *s, long max_replicas, int quiet,
		   const wzm_rates *rates, wz_size_row *rows /* OUT */, int *base /* OUT */);

/* Sizes each of the scenario's formats by simulation (wzs_size), prices the
 * fleets at the scenario's rates and the savings against the baseline.
 * Disaggregated with prefill_gpus_search, each format is sized with every
 * listed prefill pool per replica and keeps the fleet of fewest GPUs in
 * all (the smaller pool on a tie).
 * *base is the baseline's row or -1.  Progress goes to standard error
 * unless quiet.  The caller frees *rows with wz_size_rows_free (also after
 * a failure).  Returns an exit status after printing any error. */
int wz_size_formats(const char *cmd, const wz_sim_setup *s, long max_replicas, int quiet,
		    wz_size_row **rows /* OUT */, int *base /* OUT */);
void wz_size_rows_free(wz_size_row *rows, int n);

/* `size`'s options, parsed apart from the command so that `verify` can
 * recompute an archived size run the way `size` computed it. */
typedef struct {
	wz_scenario_opts scn;
	wz_sim_opts sim;
	const char *output, *archive;
	long max_replicas;
	wzp_output how;
	int quiet, no_archive;
} wz_size_opts;

/* Loads the set-up, sizes every format and records into run (when not
 * NULL) the inputs, figures, series and fleets.  On success the caller owns
 * *setup (wz_sim_setup_free) and *rows (wz_size_rows_free, n =
 * setup->scn->nformats).  Returns an exit status after printing errors. */
int wz_size_compute(const char *cmd, const wz_size_opts *o, wza_run *run,
		    wz_sim_setup *setup /* OUT */, wz_size_row **rows /* OUT */, int *base /* OUT */);

/* Progress callback printing to standard error. */
void wz_sim_progress(void *cmd, double sim_time, double end_time, unsigned long long events);

#endif
