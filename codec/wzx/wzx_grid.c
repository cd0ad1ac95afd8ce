/* The wz grid (record bytes) a wzx rate takes: the largest whose layers'
 * expected coded bits stay within the rate, by a guided search and by the
 * plain bisection it is tested against (docs/wzx-format.md). */
#include <math.h>

#include "codec/cores.h"
#include "codec/profile/profile_cache.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_internal.h"

/* The expected bits/value of the grid of m-byte records, its layers
 * planned on nthreads threads. */
static wz_err probe(const wzc_profile *p, long m, int nthreads, double *est, wz_diag *diag)
{
	wzc_wzx *x;
	wz_err e = wzc_wzx_new_unhashed(p, (size_t)m, &x, diag);
	if (e)
		return e;
	if (!(e = wzc_wzx_build_layers(x, 0, x->L, nthreads, diag)))
		*est = wzc_wzx_expected_bits(x);
	wzc_wzx_free(x);
	return e;
}

/* The search's bracket: the smallest grid (assumed to fit, as every grid
 * whose records hold at most `bits` a value), and one past the largest. */
static void bracket(const wzc_profile *p, double bits, long *ok, long *bad)
{
	int nv = p->R + p->P;
	*ok = (long)floor(bits * nv / 8.0 + 1e-9);
	*bad = 2L * nv + 1;
	if (*ok < (p->P ? 2 : 1))
		*ok = p->P ? 2 : 1;
}

wz_err wzc_wzx_grid_bisect(const wzc_profile *p, double bits, int nthreads, size_t *record_bytes,
			   int *probes, wz_diag *diag)
{
	long ok, bad;
	bracket(p, bits, &ok, &bad);
	int n = 0;
	while (bad - ok > 1) {
		long mid = ok + (bad - ok) / 2;
		double est;
		wz_err e = probe(p, mid, nthreads, &est, diag);
		n++;
		if (e)
			return e;
		if (est <= bits)
			ok = mid;
		else
			bad = mid;
	}
	*record_bytes = (size_t)ok;
	if (probes)
		*probes = n;
	return WZ_OK;
}

/* The bisection's answer (the largest grid that fits, the estimate rising
 * with the grid) in about a third of its probes: each probe plans every
 * layer, and the bisection's ten of them were about a third of the CPU
 * time of a whole `codec pack` of 61 x 4,096 tokens (perf).  The estimate at the bracket's floor gives the
 * ratio of coded to record bits; the grid that ratio puts at `bits` is
 * probed, then steps of 1, 2, 4, ... away from it find the boundary's
 * other side, and a bisection between the two.  Where the estimate rises
 * with the grid (the coded size of more digits is larger) it is the
 * bisection's grid; tests/codec/test_wzx compares the two. */
wz_err wzc_wzx_grid_search(const wzc_profile *p, double bits, int nthreads, size_t *record_bytes,
			   int *probes, wz_diag *diag)
{
	long ok, bad;
	bracket(p, bits, &ok, &bad);
	int nv = p->R + p->P, n = 0;
	double est;
	wz_err e = WZ_OK;
#define PROBE(m) (n++, (e = probe(p, (m), nthreads, &est, diag)))
	if (bad - ok > 1 && !PROBE(ok) && est <= bits && est > 0) {
		/* the ratio of coded to record bits at the floor */
		double g = floor(bits / (est / (8.0 * ok / nv)) * nv / 8.0);
		long m = g <= ok ? ok + 1 : g >= bad ? bad - 1 : (long)g;
		if (!PROBE(m)) {
			if (est <= bits) {
				ok = m;
				for (long step = 1; !e && bad - ok > 1; step *= 2) {
					long t = ok + step < bad ? ok + step : bad - 1;
					if (PROBE(t))
						break;
					if (est > bits) {
						bad = t;
						break;
					}
					ok = t;
				}
			} else {
				bad = m;
				for (long step = 1; !e && bad - ok > 1; step *= 2) {
					long t = bad - step > ok ? bad - step : ok + 1;
					if (PROBE(t))
						break;
					if (est <= bits) {
						ok = t;
						break;
					}
					bad = t;
				}
			}
		}
	}
	/* a floor that does not fit: the bisection, never probing it, keeps it */
	while (!e && bad - ok > 1 && !(n == 1 && est > bits)) {
		long mid = ok + (bad - ok) / 2;
		if (PROBE(mid))
			break;
		if (est <= bits)
			ok = mid;
		else
			bad = mid;
	}
#undef PROBE
	if (e)
		return e;
	*record_bytes = (size_t)ok;
	if (probes)
		*probes = n;
	return WZ_OK;
}

wz_err wzc_wzx_grid_bytes(const wzc_profile *p, double bits, size_t *record_bytes, wz_diag *diag)
{
	return wzc_wzx_grid_bytes_threads(p, bits, wzc_cores(), record_bytes, diag);
}

wz_err wzc_wzx_grid_bytes_threads(const wzc_profile *p, double bits, int nthreads,
				  size_t *record_bytes, wz_diag *diag)
{
	if (wzc_profile_grid_get(p, bits, record_bytes))
		return WZ_OK;
	wz_err e = wzc_wzx_grid_search(p, bits, nthreads < 1 ? 1 : nthreads, record_bytes, NULL, diag);
	if (!e)
		wzc_profile_grid_put(p, bits, *record_bytes);
	return e;
}
