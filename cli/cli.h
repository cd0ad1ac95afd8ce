/* Shared pieces of the wzplan command line: the command table, error
 * reporting, and option helpers used by every subcommand.  The messages go
 * through runs/say.h's sink, which main() points at stdout and stderr. */
#ifndef WZ_CLI_H
#define WZ_CLI_H

#include <stdio.h>

#include "common/wz_error.h"
#include "common/wz_str.h"
#include "runs/setup.h"

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

#endif
