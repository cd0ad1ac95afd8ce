/* The number of online cores (at least 1, at most 1024): the default
 * thread count of every part of the codec that runs on threads. */
#ifndef WZC_CORES_H
#define WZC_CORES_H

#include <unistd.h>

static inline int wzc_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 1024 ? 1024 : (int)n;
}

#endif
