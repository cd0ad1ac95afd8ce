/* The sink of runs/ (say.h) and the messages every run reports through it. */
#include "runs/say.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "common/wz_str.h"

static wz_say_fn sink;
static void *sink_ud;

void wz_say_to(wz_say_fn fn, void *ud)
{
	sink = fn;
	sink_ud = ud;
}

static int vsay(wz_say_stream to, const char *fmt, va_list ap)
{
	char small[1024];
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	int rc = 0;
	if (n < 0) {
		rc = -1;
	} else if ((size_t)n < sizeof small) {
		rc = sink ? sink(sink_ud, to, small) : 0;
	} else {
		char *big = malloc((size_t)n + 1);
		if (!big) {
			rc = -1;
		} else {
			vsnprintf(big, (size_t)n + 1, fmt, again);
			rc = sink ? sink(sink_ud, to, big) : 0;
			free(big);
		}
	}
	va_end(again);
	return rc;
}

int wz_say(wz_say_stream to, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vsay(to, fmt, ap);
	va_end(ap);
	return rc;
}

/* "wzplan CMD: " + the message + tail, in one call of the sink, so that a
 * line stays whole among the lines of other threads. */
static void say_line(const char *cmd, const char *head, const char *tail, const char *fmt,
		     va_list ap)
{
	char *msg = NULL;
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	wz_say(WZ_SAY_ERR, "wzplan %s: %s%s%s", cmd, head, msg ? msg : "out of memory", tail);
	free(msg);
}

int wz_say_fail(const char *cmd, const wz_diag *diag)
{
	wz_say(WZ_SAY_ERR, "wzplan %s: %s\n", cmd,
	       diag->msg[0] ? diag->msg : wz_strerror(diag->code));
	return wz_exit_status(diag->code);
}

int wz_say_usage(const char *cmd, const char *fmt, ...)
{
	char tail[256];
	snprintf(tail, sizeof tail, "\nTry 'wzplan %s --help'.\n", cmd);
	va_list ap;
	va_start(ap, fmt);
	say_line(cmd, "", tail, fmt, ap);
	va_end(ap);
	return 2;
}

void wz_say_warn(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say_line(cmd, "warning: ", "\n", fmt, ap);
	va_end(ap);
}

int wz_say_long(const char *cmd, const char *opt, const char *text, long min, long max,
		long *out)
{
	long v;
	if (wz_parse_count(text, &v))
		return wz_say_usage(cmd, "%s: '%s' is not a whole number", opt, text);
	if (v < min || v > max)
		return wz_say_usage(cmd, "%s: %ld is not in %ld..%ld", opt, v, min, max);
	*out = v;
	return 0;
}

int wz_say_double(const char *cmd, const char *opt, const char *text, double min, double max,
		  double *out)
{
	double v;
	if (wz_parse_double(text, &v))
		return wz_say_usage(cmd, "%s: '%s' is not a number", opt, text);
	if (v < min || v > max)
		return wz_say_usage(cmd, "%s: %g is not in %g..%g", opt, v, min, max);
	*out = v;
	return 0;
}

int wz_say_emit(const char *cmd, const char *path, const char *text)
{
	if (!path || !strcmp(path, "-")) {
		if (wz_say(WZ_SAY_OUT, "%s", text)) {
			wz_say(WZ_SAY_ERR, "wzplan %s: cannot write to standard output\n", cmd);
			return 1;
		}
		return 0;
	}
	wz_diag diag;
	if (wz_write_file_atomic(path, text, strlen(text), &diag))
		return wz_say_fail(cmd, &diag);
	return 0;
}
