/* Shared pieces of the wzplan command line: the command table, error
 * reporting, and option helpers used by every subcommand. */
#ifndef WZ_CLI_H
#define WZ_CLI_H

#include <stdio.h>

#include "common/wz_error.h"
#include "common/wz_str.h"
#include "costmodel/compare.h"
#include "plots/table.h"

/* A subcommand: argv[0] is the command name ("cost"). Returns the exit status. */
typedef int (*wz_command_fn)(int argc, char **argv);

typedef struct {
	const char *name;
	wz_command_fn run;
	const char *summary;
} wz_command;

/* Defined in cli/commands.c. */
extern const wz_command wz_commands[];
extern const int wz_ncommands;

/* Prints "wzplan CMD: message" to stderr and returns the exit status for
 * the diagnostic's code (2 for bad usage or input, 1 otherwise). */
int wz_cli_fail(const char *cmd, const wz_diag *diag);
/* Prints a usage error and the hint to run --help; returns 2. */
int wz_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* For getopt_long's ':' (missing value) and '?' (unknown option) results:
 * names the offending option, as argv[optind - 1], and returns 2. */
int wz_cli_bad_option(const char *cmd, int result, char *const *argv);
/* Prints a warning to stderr. */
void wz_cli_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Option value parsing with messages naming the option. */
int wz_cli_long(const char *cmd, const char *opt, const char *text, long min, long max,
		long *out /* OUT */);
int wz_cli_double(const char *cmd, const char *opt, const char *text, double min, double max,
		  double *out /* OUT */);

/* Writes text to path atomically, or to stdout when path is NULL or "-". */
int wz_cli_emit(const char *cmd, const char *path, const char *text);

/* Resolves scenario format specs into sizes for the cost model:
 * codec names ("fp8-mix", "wz-5.44") through the codec registry, and
 * "iso:X" as "the baseline's quality at X times fewer bits".  R and P are
 * the model's latent and position widths.  out has room for n entries. */
wz_err wz_cli_resolve_formats(char *const *specs, int n, const char *baseline, int R, int P,
			      wzm_format_size *out /* OUT */, wz_diag *diag);

/* Cost-comparison tables (cli/cost_report.c).  Each returns a new table the
 * caller frees with wzp_table_free, or NULL when out of memory. */
wzp_table *wz_report_scaling(const wzm_scenario *s, const wzm_compare *c);
wzp_table *wz_report_memory(const wzm_scenario *s, const wzm_compare *c);
wzp_table *wz_report_breakdown(const wzm_scenario *s, const wzm_compare *c);
/* One wide row per format with every figure, for CSV and JSON. */
wzp_table *wz_report_wide(const wzm_scenario *s, const wzm_compare *c);
/* Renders the human tables (text/md) or the wide table (csv/json). */
wz_err wz_report_render(const wzm_scenario *s, const wzm_compare *c, wzp_output how,
			wz_buf *out);

/* Scenario options shared by `cost` and `propose` (and later `sim`, `size`):
 * loads the scenario (embedded default unless --scenario) and applies the
 * command-line overrides collected in this struct. */
typedef struct {
	const char *scenario_path;
	const char *catalog_dir;
	const char *model, *gpu, *formats, *baseline, *mode, *rounding, *price_set,
		*parallelism;
	const char *users, *context, *baseline_gpus, *gpus_per_replica, *mem_util,
		*act_reserve, *weight_bits;
} wz_scenario_opts;

/* getopt_long entries for the options above; `val`s are 1000.. */
#define WZ_SCENARIO_LONGOPTS                                                    \
	{ "scenario", required_argument, NULL, 1000 },                          \
	{ "catalog", required_argument, NULL, 1001 },                           \
	{ "model", required_argument, NULL, 1002 },                             \
	{ "gpu", required_argument, NULL, 1003 },                               \
	{ "formats", required_argument, NULL, 1004 },                           \
	{ "baseline", required_argument, NULL, 1005 },                          \
	{ "mode", required_argument, NULL, 1006 },                              \
	{ "rounding", required_argument, NULL, 1007 },                          \
	{ "price-set", required_argument, NULL, 1008 },                         \
	{ "parallelism", required_argument, NULL, 1009 },                       \
	{ "users", required_argument, NULL, 1010 },                             \
	{ "context", required_argument, NULL, 1011 },                           \
	{ "baseline-gpus", required_argument, NULL, 1012 },                     \
	{ "gpus-per-replica", required_argument, NULL, 1013 },                  \
	{ "mem-util", required_argument, NULL, 1014 },                          \
	{ "act-reserve", required_argument, NULL, 1015 },                       \
	{ "weight-bits", required_argument, NULL, 1016 }

/* Records option `val` (1000..1016) into opts; returns 0 when it was one. */
int wz_scenario_opt(wz_scenario_opts *opts, int val, const char *arg);

/* Help text for the scenario options, shared by the commands' --help. */
extern const char wz_scenario_opts_help[];

/* Loads catalog and scenario and applies overrides. Returns an exit status
 * (0 on success) after printing any error. */
int wz_scenario_setup(const char *cmd, const wz_scenario_opts *opts, wzm_catalog **cat /* OUT */,
		      wzm_scenario **scn /* OUT */);

/* Resolves formats and runs the comparison; prints errors and warnings.
 * Returns an exit status. */
int wz_cost_compare(const char *cmd, const wzm_scenario *s, const wzm_catalog *cat,
		    wzm_compare *out /* OUT */);

/* The cores online (1 when unknown, at most 1024). */
int wz_cli_cores(void);

#endif
