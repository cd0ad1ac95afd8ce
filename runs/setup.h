/* Setting a run up: a request's scenario part (the scenario file and the
 * overrides a user gave), loaded with the catalogs and checked; the formats
 * resolved into sizes; the cost comparison.  Errors and warnings go to the
 * sink (runs/say.h); the functions return exit statuses. */
#ifndef WZ_RUNS_SETUP_H
#define WZ_RUNS_SETUP_H

#include "common/wz_error.h"
#include "common/wz_str.h"
#include "costmodel/compare.h"
#include "plots/table.h"

/* The scenario part of every request: the scenario file (the embedded
 * default when NULL), the catalogs' folder, and overrides as text, as a
 * user gave them (checked and applied by wz_scenario_setup). */
typedef struct {
	const char *scenario_path;
	const char *catalog_dir;
	const char *model, *gpu, *formats, *baseline, *mode, *rounding, *price_set,
		*parallelism;
	const char *users, *context, *baseline_gpus, *gpus_per_replica, *mem_util,
		*act_reserve, *weight_bits;
} wz_scenario_opts;

/* Resolves scenario format specs into sizes for the cost model:
 * codec names ("fp8-mix", "wz-5.44") through the codec registry, and
 * "iso:X" as "the baseline's quality at X times fewer bits".  R and P are
 * the model's latent and position widths.  out has room for n entries. */
wz_err wz_resolve_formats(char *const *specs, int n, const char *baseline, int R, int P,
			    wzm_format_size *out /* OUT */, wz_diag *diag);

/* Loads catalog and scenario and applies overrides. Returns an exit status
 * (0 on success) after reporting any error. */
int wz_scenario_setup(const char *cmd, const wz_scenario_opts *opts, wzm_catalog **cat /* OUT */,
		      wzm_scenario **scn /* OUT */);

/* Resolves formats and runs the comparison; reports errors and warnings.
 * Returns an exit status. */
int wz_cost_compare(const char *cmd, const wzm_scenario *s, const wzm_catalog *cat,
		    wzm_compare *out /* OUT */);

/* The cores online (1 when unknown, at most 1024). */
int wz_cores(void);

#endif
