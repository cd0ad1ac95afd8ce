/* Allocation failure injection for tests/codec/test_oom: the allocator
 * wrapped at link time (-Wl,--wrap: the project's own calls and the
 * test's, not the C library's), its live blocks counted, and a runner
 * that refuses the k-th allocation of a pass for k = 0, 1, 2, ... */
#ifndef WZ_TEST_CODEC_OOM_H
#define WZ_TEST_CODEC_OOM_H

#include <stddef.h>
#include <stdint.h>

#include "common/wz_error.h"

/* One pass of an area: everything it makes is freed before it returns,
 * its output written into out (cap bytes, zeroed before; *n gets the
 * bytes written).  0 or the error. */
typedef wz_err (*oom_pass_fn)(void *ctx, uint8_t *out, size_t cap, size_t *n);

/* What refusing each allocation of a pass in turn gave. */
typedef struct {
	long allocs;        /* allocations of a pass with memory */
	int setup_ok;       /* that pass succeeded and freed all it made */
	long passes;        /* passes with one allocation refused */
	long nomem, coped;  /* ended in WZ_ERR_NOMEM; the output of the pass with memory */
	long wrong, leaked; /* otherwise; blocks left allocated */
	long wrong_at, leak_at; /* the first k of each, -1 for none */
	long full;          /* every k below this was refused; then a sample */
} oom_table;

/* Runs f with memory, then with the k-th allocation refused: every k below
 * full_limit, then about sample_limit more spread evenly (a fixed stride,
 * the offset in each stride from k itself, so the same k every run) up to
 * the pass's allocations.  OOM_ALL=1 refuses every k.  OOM_DEBUG=1 prints
 * each pass that ends otherwise than out of memory or coping;
 * OOM_AREA=NAME runs only that area (the others pass empty). */
oom_table oom_check(const char *name, oom_pass_fn f, void *ctx, size_t cap, long full_limit,
		    long sample_limit);

#endif
