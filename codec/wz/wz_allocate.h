/* The wz planner's bit allocation: greedy reverse water-filling over the
 * components' level counts (docs/wz-format.md, "The rate plan", step 1). */
#ifndef WZC_WZ_ALLOCATE_H
#define WZC_WZ_ALLOCATE_H

#include "codec/profile/levels.h"

/* Repeatedly gives the component with the largest weighted distortion
 * drop per bit, v[k] * (d[p][j] - d[p][j+1]) / log2(N(j+1) / N(j)) with p =
 * part[k] and j its current count index, its next level count, while the
 * sum of log2 counts stays within a budget; ties go to the lowest k, and a
 * drop that is not positive is never taken.
 *
 * An allocator is made once per layer for its n components (v, d and part
 * must outlive it) and run for each budget the planner tries; a run reuses
 * the steps an earlier run shares with it. */
typedef struct wzc_wz_allocator wzc_wz_allocator;

/* NULL when out of memory. */
wzc_wz_allocator *wzc_wz_allocator_new(int n, const double *v, const double (*d)[WZC_NSET],
				       const int *part);
/* The same starting from floor[k] (n count indices, copied; NULL: all 0)
 * instead of count 1: the floor's bits count as used, and a budget below
 * them returns the floor. */
wzc_wz_allocator *wzc_wz_allocator_new_floor(int n, const double *v, const double (*d)[WZC_NSET],
					     const int *part, const int *floor);
/* jidx[k] (OUT, n entries): each component's count index within budget. */
void wzc_wz_allocator_run(wzc_wz_allocator *a, double budget, int *jidx /* OUT */);
void wzc_wz_allocator_free(wzc_wz_allocator *a);

/* The same by scanning every component for every step: O(n x steps), the
 * definition the fast version above is tested against. */
void wzc_wz_allocate_ref(int n, const double *v, const double (*d)[WZC_NSET], const int *part,
			 double budget, int *jidx /* OUT */);
void wzc_wz_allocate_ref_floor(int n, const double *v, const double (*d)[WZC_NSET],
			       const int *part, const int *floor, double budget, int *jidx /* OUT */);

/* The position floor of profile version 4 (docs/wz-format.md, "The rate
 * plan", step 1): the same greedy over n components of one part with
 * distortion table d and weights var, from count 1, until the planned
 * error sum var[k] * d[jidx[k]] is at most cap or the next step would
 * pass max_bits.  Writes the count indices to jidx and returns the bits
 * they take. */
double wzc_wz_floor(int n, const double *var, const double d[WZC_NSET], double cap,
		    double max_bits, int *jidx /* OUT */);

#endif
