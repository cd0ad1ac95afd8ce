/* Pieces shared by the files of `wzplan codec` (cli/cmd_codec.c and
 * cli/codec_measure.c). */
#ifndef WZ_CODEC_CLI_H
#define WZ_CODEC_CLI_H

#include "codec/codec.h"
#include "plots/table.h"
#include "traces/cache_trace.h"

#define CMD "codec"
#define MAX_TRACES 256
#define MAX_FORMATS 32

/* The codec's view of a trace; the window's name, or the path. */
wzc_window wz_codec_window(const wzt_cache_trace *t, const char *path);
/* Collects --trace values: the option's argument and the non-option words
 * that follow it ("--trace a b c").  Returns 0 or an exit status. */
int wz_codec_add_traces(int argc, char **argv, const char **traces, int *n);
/* Reads traces, with progress on stderr; on failure frees what it read,
 * prints the error and returns the exit status. */
int wz_codec_load_traces(const char **paths, int n, wzt_cache_trace **traces);
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
/* A progress line on stderr for a run's piece, whole even from many
 * threads (a wzc_run_spec progress callback). */
void wz_codec_progress(void *ud, const char *window, const char *what);
/* `wzplan codec measure`. */
int wz_codec_measure(int argc, char **argv);
int wz_codec_compare(int argc, char **argv);
/* `wzplan codec pack` and `wzplan codec unpack` (cli/codec_pack.c). */
int wz_codec_pack(int argc, char **argv);
int wz_codec_unpack(int argc, char **argv);

#endif
