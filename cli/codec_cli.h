/* Pieces shared by the files of `wzplan codec` (cli/cmd_codec.c,
 * cli/codec_measure.c, cli/codec_compare.c, cli/codec_pack.c). */
#ifndef WZ_CODEC_CLI_H
#define WZ_CODEC_CLI_H

#include "archive/archive.h"
#include "codec/codec.h"
#include "runs/measure.h"
#include "plots/table.h"
#include "traces/cache_trace.h"

#define CMD "codec"
#define MAX_TRACES WZ_MEASURE_MAX_TRACES
#define MAX_FORMATS WZ_MEASURE_MAX_FORMATS

/* Collects --trace values: the option's argument and the non-option words
 * that follow it ("--trace a b c").  Returns 0 or an exit status. */
int wz_codec_add_traces(int argc, char **argv, const char **traces, int *n);
/* The options measure and compare share: the windows, the profile, the
 * formats, the bootstrap and the output. */
typedef struct {
	const char *paths[MAX_TRACES]; /* --trace */
	int npaths;
	const char *profile_path, *formats, *output;
	long nboot, seed;
	wzp_output how;
} wz_codec_run_opts;
void wz_codec_run_opts_default(wz_codec_run_opts *o);
/* Takes getopt's value C if it is one of those options ('t' --trace, 'p'
 * --profile, 'F' --formats, 'b' --boot, 's' --seed, 'f' --format, 'o'
 * --output): returns 1 with *rc 0 or an exit status; 0 if C is another. */
int wz_codec_run_option(int c, int argc, char **argv, wz_codec_run_opts *o, int *rc);
/* `codec measure`'s options: the request and how the table is printed. */
typedef struct {
	wz_codec_run_opts run;
	int iso, per_layer;
	long threads;
	const char *cal[MAX_TRACES]; /* --calibration */
	int ncal;
	wz_measure_req req; /* paths point into run */
} wz_codec_measure_args;
/* Parses measure's arguments (argv[0] "measure"; no --archive).  Returns -1
 * to go on, 0 after printing help, or an exit status after a usage error. */
int wz_codec_measure_parse(int argc, char **argv, wz_codec_measure_args *a /* OUT */);
/* `wzplan codec measure` (argv[0] "measure"), stored in the archive. */
int wz_codec_measure(int argc, char **argv);
int wz_codec_compare(int argc, char **argv);
/* `wzplan codec pack` and `wzplan codec unpack` (cli/codec_pack.c). */
int wz_codec_pack(int argc, char **argv);
int wz_codec_unpack(int argc, char **argv);

#endif
