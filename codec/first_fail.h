/* The lowest failure among threads: wzx pack and restore, prepare's
 * layers. */
#ifndef WZC_FIRST_FAIL_H
#define WZC_FIRST_FAIL_H

#include <pthread.h>

#include "common/wz_error.h"

/* The lowest-numbered failure (a block, a layer) among threads working
 * through a range in any order: its index (end while none), error and
 * message, so that what is reported does not depend on the threads.
 * Workers past `at` may stop: what follows the lowest failure is moot. */
typedef struct {
	long at;
	wz_err err;
	wz_diag diag;
	pthread_mutex_t lock;
} wzc_first_fail;

static inline int wzc_first_fail_init(wzc_first_fail *f, long end)
{
	f->at = end;
	f->err = WZ_OK;
	return pthread_mutex_init(&f->lock, NULL);
}

static inline long wzc_first_fail_at(wzc_first_fail *f)
{
	return __atomic_load_n(&f->at, __ATOMIC_RELAXED);
}

static inline void wzc_first_fail_note(wzc_first_fail *f, long k, wz_err e, const wz_diag *d)
{
	pthread_mutex_lock(&f->lock);
	if (k < f->at) {
		f->err = e;
		f->diag = *d;
		__atomic_store_n(&f->at, k, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&f->lock);
}

/* After the threads are joined: the error, its message to diag, and the
 * lock destroyed. */
static inline wz_err wzc_first_fail_done(wzc_first_fail *f, long end, wz_diag *diag)
{
	pthread_mutex_destroy(&f->lock);
	if (f->at >= end)
		return WZ_OK;
	if (diag)
		*diag = f->diag;
	return f->err;
}

#endif
