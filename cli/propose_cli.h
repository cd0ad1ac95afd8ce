/* `propose`'s command line: its arguments into the request (runs/propose.h),
 * shared by `propose` and `verify`'s recomputation of an old run; and a run
 * id on the command line. */
#ifndef WZ_PROPOSE_CLI_H
#define WZ_PROPOSE_CLI_H

#include "cli/cli.h"
#include "runs/propose.h"

/* Parses propose's arguments (argv[0] is the command name).  Returns -1 to
 * go on, 0 after printing help, or an exit status after a usage error. */
int wz_propose_parse(int argc, char **argv, wz_propose_opts *o /* OUT */);

/* Parses a run id ("12"); prints a usage error and returns 2 when bad. */
int wz_run_id_parse(const char *cmd, const char *text, long long *id /* OUT */);

#endif
