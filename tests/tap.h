/* A minimal TAP producer for wzplan's unit tests: each check prints one
 * "ok N - ..." or "not ok N - ..." line; the automake TAP driver counts them. */
#ifndef WZ_TAP_H
#define WZ_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count, tap_failed;

static inline int tap_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%sok %d - ", cond ? "" : "not ", ++tap_count);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok((cond) ? 1 : 0, __VA_ARGS__)

#define is_long(got, want, name)                                                           \
	do {                                                                               \
		long g_ = (long)(got), w_ = (long)(want);                                   \
		if (!ok(g_ == w_, "%s", name))                                              \
			printf("#   got %ld, want %ld\n", g_, w_);                            \
	} while (0)

#define is_double(got, want, tol, name)                                                    \
	do {                                                                               \
		double g_ = (got), w_ = (want);                                            \
		if (!ok(fabs(g_ - w_) <= (tol), "%s", name))                                \
			printf("#   got %.17g, want %.17g (tolerance %g)\n", g_, w_, (double)(tol)); \
	} while (0)

#define is_str(got, want, name)                                                            \
	do {                                                                               \
		const char *g_ = (got), *w_ = (want);                                      \
		if (!ok(g_ && w_ && strcmp(g_, w_) == 0, "%s", name))                       \
			printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
	} while (0)

#define has_str(haystack, needle, name)                                                    \
	do {                                                                               \
		const char *h_ = (haystack), *n_ = (needle);                               \
		if (!ok(h_ && strstr(h_, n_) != NULL, "%s", name))                          \
			printf("#   '%s' not found in '%s'\n", n_, h_ ? h_ : "(null)");        \
	} while (0)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
