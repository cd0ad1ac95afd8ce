/* What `propose`, `verify`, `plot` and `archive` share: the propose options,
 * the computation of a propose run's figures, the charts drawn from a run's
 * figures, and opening the archive the user chose. */
#ifndef WZ_PROPOSE_H
#define WZ_PROPOSE_H

#include "archive/archive.h"
#include "runs/say.h"
#include "runs/setup.h"
#include "runs/sim_record.h"
#include "runs/sim_setup.h"
#include "plots/chart.h"

#define WZ_PROPOSE_MAX_TRACES 64

/* A serving mode of --serving-modes: "aggregated" or "disaggregated", idle
 * policy "resident", "offload" or "drop", and for offload the parked
 * format ("" for the GPU format). */
#define WZ_PROPOSE_MAX_MODES 16
typedef struct {
	const char *serving, *idle;
	char offload[64];
} wz_propose_mode;

typedef struct {
	int all;  /* 'all': expanded from the scenario (wz_propose_modes_run) */
	int n;
	wz_propose_mode modes[WZ_PROPOSE_MAX_MODES];
} wz_propose_modes;

/* Parses --serving-modes: 'all' or a comma-separated list of SERVING:IDLE
 * and SERVING:offload:FORMAT (propose_modes_list.c).  Returns 0, or -1 with a
 * sentence in why. */
int wz_propose_modes_parse(const char *list, wz_propose_modes *out /* OUT */, char *why,
			   size_t why_n);
/* The servings a mode names: "aggregated", "disaggregated". */
extern const char *const wz_propose_servings[2];

typedef struct {
	wz_scenario_opts scn;
	wz_sim_opts sim;      /* --traffic and the simulator's options */
	wz_propose_modes modes; /* --serving-modes (n 0 and not all: none) */
	const char *serving_modes; /* ...as the user gave the list (NULL: none) */
	const char *out_dir;  /* default "wzplan-out" */
	const char *archive;  /* --archive FILE, or NULL for the default */
	int no_archive;       /* --no-archive: the run is not stored */
	int simulate;         /* size the fleets by simulation (--simulate or --traffic) */
	long max_replicas;    /* the size search's limit */
	int quiet;            /* no simulation progress on standard error */
	/* Measured quality (propose_quality.c): --trace FILE... --profile FILE
	 * measure test windows in this run; --codec-run RUN uses an archived
	 * measurement, which the caller loads into codec_loaded. */
	const char *traces[WZ_PROPOSE_MAX_TRACES];
	int ntraces;
	const char *profile;
	/* --calibration FILE: windows kvtc's transforms are fitted on; with
	 * them kvtc is measured at the wz rates too */
	const char *calibration[WZ_PROPOSE_MAX_TRACES];
	int ncalibration;
	long long codec_run;
	const wza_run *codec_loaded;
	/* --live-kl FILE: the live-model KL summary of traces/capture/
	 * (propose_livekl.c). */
	const char *live_kl;
} wz_propose_opts;

/* Loads scenario and catalogs, runs the comparison and records into run
 * every figure the proposal shows (tables "scenario", "cost", "memory_gib",
 * "gpus_by_context", "users_per_gpu_by_context"), the fleets and the inputs
 * (scenario and catalog texts with their hashes).  With o->simulate it also
 * sizes every format by simulation and records tables "sim_setup" and
 * "simulation", the latency and occupancy series, the simulated fleets and
 * the traffic file and seed among the inputs (sim_record.h).  On success the caller
 * owns *scn, *cat and *cmp.  Returns an exit status after printing errors. */
int wz_propose_compute(const char *cmd, const wz_propose_opts *o, wza_run *run,
		       wzm_scenario **scn /* OUT */, wzm_catalog **cat /* OUT */,
		       wzm_compare *cmp /* OUT */);

/* What a proposal wrote, for the program to tell: the cost tables as text,
 * the charts drawn (or why not), and where the run was stored (archive_path
 * NULL: not stored).  Free with wz_proposal_free. */
typedef struct {
	wz_buf text;
	int ncharts, rendered;
	wz_buf why_not;
	char *archive_path;
	long long run_id;
} wz_proposal;

/* `propose`: computes the run's figures (wz_propose_compute), writes the
 * proposal into o->out_dir (whole or not at all: proposal.md, the CSV
 * tables, charts/) and stores run in the archive o asks for (the default
 * place, else the output folder when the default cannot be used).  run
 * holds the user's arguments.  Returns an exit status after reporting
 * errors; *out is to be freed either way. */
int wz_propose_write(const char *cmd, const wz_propose_opts *o, wza_run *run,
		     wz_proposal *out /* OUT */);
void wz_proposal_free(wz_proposal *p);

/* The charts for a run's figures (cost, savings, GPUs and users per GPU
 * against context, memory breakdown), quality against bits/value when
 * `codec` holds measurements, and one chart per simulation series.  The
 * caller frees each chart and the array.  `skipped` gets a sentence per
 * chart left out, with the reason. */
wz_err wz_charts_build(const wza_run *run, const wza_run *codec, wzp_chart ***charts /* OUT */,
		       int *n /* OUT */, wz_buf *skipped);
void wz_charts_free(wzp_chart **charts, int n);
/* A codec chart of a run holding codec measurements (charts_codec.c):
 * metric "nmse" (error against bits/value per format with the Gaussian
 * bound: rate-distortion) or "kl" (attention KL against bits/value), each
 * format averaged over the windows.  NULL when there is nothing to draw
 * (for nmse a sentence saying why goes to skipped). */
wzp_chart *wz_chart_codec(const wza_run *codec, const char *metric, wz_buf *skipped);

/* Writes every chart's .dat and .gp into dir and renders them when gnuplot
 * is there.  *rendered is 1 when images were made; otherwise why_not says
 * why (gnuplot missing).  Errors writing files are returned. */
wz_err wz_charts_write(wzp_chart **charts, int n, const char *dir, int *rendered /* OUT */,
		       wz_buf *why_not, wz_diag *diag);

/* The proposal's simulation parts, from a run's figures (propose_sim.c):
 * the "Sized by simulation" section with the comparison of the sizing
 * methods, its CSV, and the line for "Not measured in this run". */
/* 1 when the run simulated traffic (a population's or a replay's). */
int wz_propose_simulated(const wza_run *run);
void wz_propose_sim_section(wz_buf *md, const wza_run *run, const wzm_scenario *s,
			    const wzm_compare *c);
/* The simulation's verdict as plain text (no Markdown): which sizing method
 * binds for the baseline and why its fleet is that size, or what the largest
 * fleet tried missed.  Nothing when the run did not simulate. */
void wz_propose_sim_verdict(wz_buf *out, const wza_run *run, const wzm_scenario *s,
			    const wzm_compare *c);
void wz_propose_sim_csv(const wza_run *run, wz_buf *out);
void wz_propose_sim_not_measured(wz_buf *md, const wza_run *run);

/* ",value" for each of a run's figures cols[0..n) of table at row, the
 * number in %.10g, empty where the run has none: a CSV row's numbers. */
void wz_propose_csv_values(wz_buf *out, const wza_run *run, const char *table, const char *row,
			   const char *const *cols, size_t n);

/* --serving-modes (propose_modes.c): sizes the scenario's formats under each
 * mode, as the main sizing but with the mode's serving, idle policy and
 * offload format, and records tables "serving_modes" (a row per mode:
 * order, serving, idle_policy, offload_format) and "serving_mode_fleets"
 * (rows "MODE|FORMAT": replicas, gpus, latencies, binds...).  'all' is
 * aggregated and, where `main` has a prefill pool, disaggregated, each
 * resident, offloading in the GPU format (and in the scenario's
 * offload_format where it names another) and dropping.  A mode that is
 * the main sizing's own (the same serving, idle policy and offload
 * format) takes main_rows, the main sizing's fleets, instead of sizing
 * them again.  Returns an exit status after printing errors. */
int wz_propose_modes_run(const char *cmd, const wz_propose_opts *o, const wz_sim_setup *main,
			 const wz_size_row *main_rows, wza_run *run);
/* Loads each mode's set-up without sizing, so that a mode the scenario
 * cannot serve (disaggregated without a prefill pool, an offload format
 * that is not one) is refused before the main sizing's minutes.  Returns
 * an exit status after printing errors. */
int wz_propose_modes_check(const char *cmd, const wz_propose_opts *o, const wz_sim_setup *main);
/* The proposal's "Sized under each serving mode" and serving-modes.csv,
 * from a run's figures (nothing when the run has none). */
void wz_propose_modes_section(wz_buf *md, const wza_run *run, const wzm_scenario *s,
			      const wzm_compare *c);
void wz_propose_modes_csv(const wza_run *run, wz_buf *out);
/* GPUs of a format's simulated fleet in a run; NaN when none. */
double wz_propose_sim_gpus(const wza_run *run, const char *format);

/* Measured quality in a proposal (propose_quality.c).  wz_propose_measure
 * refuses any trace that is not a `test` window (exit 2, before anything is
 * written), then measures the traces into run (codec_record.h): baselines
 * and wz rates with iso-quality bits.  Returns an exit status. */
int wz_propose_measure(const char *cmd, const wz_propose_opts *o, wza_run *run);
/* Loads --codec-run RUN from the archive at path (NULL: the default);
 * refuses a run without codec measurements.  Returns an exit status. */
int wz_propose_load_codec_run(const char *cmd, const char *path, long long id,
			      wza_run **out /* OUT */);
/* For verify: the traces and profile of o read from the absolute paths run
 * recorded for them. */
void wz_propose_quality_paths(const wza_run *run, wz_propose_opts *o);
/* The highest wz rate, over the windows, at fp8-mix's nmse (the measured
 * iso-quality bits), rounded up to 0.01; NaN when not measured. */
double wz_propose_iso_bits(const wza_run *codec);
/* The "Measured quality" section (nothing without measurements) and the
 * quality line of "Not measured in this run". */
void wz_propose_quality_section(wz_buf *md, const wza_run *run, const wza_run *codec);
void wz_propose_quality_not_measured(wz_buf *md, const wza_run *codec);
/* Every codec row as CSV: window, format, metric, value, ci_low, ci_high,
 * bits_per_value, trace_hash. */
void wz_propose_quality_csv(const wza_run *codec, wz_buf *out);

/* Live-model quality (propose_livekl.c): reads and checks the summary
 * `wzcapture.py report --json` writes, records it as an input of run and
 * its figures (tables live_kl_source, live_kl_categories, live_kl,
 * live_kl_iso).  Returns an exit status after printing errors (2 for a
 * malformed file, naming the member). */
int wz_propose_live_kl(const char *cmd, const char *path, wza_run *run);
/* The "Live-model quality" section from a run's figures (nothing without). */
void wz_propose_live_kl_section(wz_buf *md, const wza_run *run);

#endif
