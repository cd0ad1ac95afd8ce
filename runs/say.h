/* Where the runs' words go: runs/ never prints; what a run has to say (an
 * error, a warning, progress, a table for standard output) goes to a sink
 * the program installs once (the CLI prints it, the binding keeps it). */
#ifndef WZ_SAY_H
#define WZ_SAY_H

#include "common/wz_error.h"

typedef enum {
	WZ_SAY_OUT,  /* a command's result: standard output in the CLI */
	WZ_SAY_ERR,  /* errors, warnings, progress: standard error in the CLI */
} wz_say_stream;

/* Takes one piece of text (whole lines for errors; a table may be many).
 * Returns 0, or -1 when the text could not be written. */
typedef int (*wz_say_fn)(void *ud, wz_say_stream to, const char *text);

/* Installs the sink for the whole process (NULL: say nothing).  The sink
 * is called from the threads that measure and simulate too, one whole
 * message a call. */
void wz_say_to(wz_say_fn fn, void *ud);

/* Formats and hands the text to the sink; returns the sink's result. */
int wz_say(wz_say_stream to, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "wzplan CMD: message" for diag; returns the exit status for its code (2
 * for bad usage or input, 1 otherwise). */
int wz_say_fail(const char *cmd, const wz_diag *diag);
/* A usage error and the hint to run --help; returns 2. */
int wz_say_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "wzplan CMD: warning: ...". */
void wz_say_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Number values of a request's fields, with messages naming the option
 * (usage errors, exit status 2). */
int wz_say_long(const char *cmd, const char *opt, const char *text, long min, long max,
		long *out /* OUT */);
int wz_say_double(const char *cmd, const char *opt, const char *text, double min, double max,
		  double *out /* OUT */);

/* Writes text to path atomically, or to the sink's output when path is
 * NULL or "-".  Returns an exit status. */
int wz_say_emit(const char *cmd, const char *path, const char *text);

#endif
