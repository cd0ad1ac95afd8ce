/* The simulator's options of `sim`, `size` and `propose` on the command
 * line: getopt entries, their help, filling the request (sim_setup.h). */
#ifndef WZ_SIM_CLI_H
#define WZ_SIM_CLI_H

#include <getopt.h>

#include "cli/cli.h"
#include "runs/sim_setup.h"

/* getopt_long entries; `val`s are 1100.. */
#define WZ_SIM_LONGOPTS                                                                 \
	{ "idle-policy", required_argument, NULL, 1100 },                               \
	{ "duration", required_argument, NULL, 1101 },                                  \
	{ "warmup", required_argument, NULL, 1102 },                                    \
	{ "seed", required_argument, NULL, 1103 },                                      \
	{ "offload-format", required_argument, NULL, 1104 },                            \
	{ "ttft-p99", required_argument, NULL, 1105 },                                  \
	{ "tpot-p99", required_argument, NULL, 1106 },                                  \
	{ "traffic", required_argument, NULL, 1107 },                                   \
	{ "sort-traffic", no_argument, NULL, 1108 },                                    \
	{ "speedup", required_argument, NULL, 1109 },                                   \
	{ "speedup-think", no_argument, NULL, 1110 },                                   \
	{ "threads", required_argument, NULL, 1111 },                                   \
	{ "restore-rates", required_argument, NULL, 1112 },                             \
	{ "serving", required_argument, NULL, 1113 },                                   \
	{ "search-seeds", required_argument, NULL, 1114 },                              \
	{ "search", no_argument, NULL, 1115 },                                          \
	{ "no-search", no_argument, NULL, 1116 },                                       \
	{ "config", required_argument, NULL, 1117 },                                    \
	{ "ttft-per-1k", required_argument, NULL, 1118 },                               \
	{ "confirm-limit", required_argument, NULL, 1119 }

/* Records option `val` (1100..1119); returns 0 when it was one. */
int wz_sim_opt(wz_sim_opts *o, int val, const char *arg);
extern const char wz_sim_opts_help[];
/* --threads, for the commands that run several simulations (size, propose);
 * `sim` runs one and refuses it. */
extern const char wz_sim_threads_help[];

/* Parses size's arguments (argv[0] is the command name).  Returns -1 to go
 * on, 0 when --help was asked, or an exit status after a usage error. */
int wz_size_parse(int argc, char **argv, wz_size_opts *o /* OUT */);

#endif
