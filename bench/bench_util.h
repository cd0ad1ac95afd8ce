/* Timing and medians shared by the bench/ programs. */
#ifndef WZ_BENCH_UTIL_H
#define WZ_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* CPU time of this thread: a one-core figure even on a shared machine. */
static inline double bench_thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int bench_by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place; the mean of the middle two when n
 * is even). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
