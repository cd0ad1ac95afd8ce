/* The planner's allocator against the scan that defines it: the same
 * level counts, element for element, on distortion tables fitted to real
 * histogram shapes and on crafted ones with ties, zero and NaN weights,
 * non-monotone gains, and budgets from nothing to everything, each
 * allocator run for many budgets in a shuffled order (so runs start both
 * afresh and from an earlier run's snapshot). */
#include "tests/tap.h"

#include <stdint.h>

#include "codec/profile/levels.h"
#include "codec/profile/profile.h"
#include "codec/wz/wz_allocate.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (rng >> 11) * 0x1.0p-53;
}

/* a Gaussian (shape 2) or Laplacian-like (shape 1) histogram's tables */
static void fitted_tables(double shape, double d[WZC_NSET])
{
	static float hist[WZC_HIST_BINS];
	double bw = 2.0 * WZC_HIST_RANGE / WZC_HIST_BINS, total = 0;
	for (int b = 0; b < WZC_HIST_BINS; b++) {
		double x = -WZC_HIST_RANGE + (b + 0.5) * bw;
		hist[b] = (float)exp(-pow(fabs(x), shape) / shape);
		total += hist[b];
	}
	for (int b = 0; b < WZC_HIST_BINS; b++)
		hist[b] = (float)(hist[b] / total);
	wzc_levels_distortion(hist, 2, d);
}

/* Runs one allocator for nb budgets in the given order; the number that
 * differ from the scan. */
static int differ_floor(int n, const double *v, double (*d)[WZC_NSET], const int *part,
			const int *floor, const double *budgets, int nb)
{
	int *a = malloc(sizeof *a * (size_t)n), *b = malloc(sizeof *b * (size_t)n), bad = 0;
	wzc_wz_allocator *al =
		floor ? wzc_wz_allocator_new_floor(n, v, (const double(*)[WZC_NSET])d, part, floor)
		      : wzc_wz_allocator_new(n, v, (const double(*)[WZC_NSET])d, part);
	if (!a || !b || !al)
		return nb;
	for (int i = 0; i < nb; i++) {
		if (floor)
			wzc_wz_allocate_ref_floor(n, v, (const double(*)[WZC_NSET])d, part, floor,
						  budgets[i], a);
		else
			wzc_wz_allocate_ref(n, v, (const double(*)[WZC_NSET])d, part, budgets[i], a);
		wzc_wz_allocator_run(al, budgets[i], b);
		if (memcmp(a, b, sizeof *a * (size_t)n) == 0)
			continue;
		if (!bad++)
			for (int k = 0; k < n; k++)
				if (a[k] != b[k]) {
					printf("#   budget %g (run %d), component %d: scan %d, "
					       "allocator %d\n",
					       budgets[i], i, k, a[k], b[k]);
					break;
				}
	}
	wzc_wz_allocator_free(al);
	free(a);
	free(b);
	return bad;
}

static int differ(int n, const double *v, double (*d)[WZC_NSET], const int *part,
		  const double *budgets, int nb)
{
	return differ_floor(n, v, d, part, NULL, budgets, nb);
}

/* budgets lo, lo + step, ... in a shuffled order, then the planner's
 * pattern: a few bits down and up around each */
static int budgets_of(double lo, double hi, double step, double *out, int cap)
{
	int nb = 0;
	for (double b = lo; b <= hi && nb + 3 <= cap; b += step) {
		out[nb++] = b;
		out[nb++] = b - 2.5;
		out[nb++] = b + 1.25;
	}
	for (int i = nb - 1; i > 0; i--) {
		int j = (int)(uniform() * (i + 1));
		double t = out[i];
		out[i] = out[j];
		out[j] = t;
	}
	return nb;
}

int main(void)
{
	double d[2][WZC_NSET];
	fitted_tables(2, d[0]);
	fitted_tables(1, d[1]);
	enum { N = 578 };
	static double v[N];
	static int part[N];

	/* A 512 + 64 layer with a decaying spectrum, at every budget a record
	 * of 10..650 bytes gives. */
	for (int k = 0; k < N; k++) {
		part[k] = k >= 512;
		v[k] = exp(-0.01 * (k % 512)) * (0.5 + uniform());
	}
	static double budgets[1024];
	int nb = budgets_of(0, 650 * 8, 37.5, budgets, 1024);
	int bad = differ(N, v, d, part, budgets, nb);
	ok(bad == 0, "decaying spectrum: allocator = scan at %d budgets (%d differ)", nb, bad);

	/* Ties everywhere: equal weights, so only the index breaks them. */
	for (int k = 0; k < N; k++)
		v[k] = k % 3 ? 1.0 : 0.25;
	nb = budgets_of(0.5, 5000, 97, budgets, 1024);
	bad = differ(N, v, d, part, budgets, nb);
	ok(bad == 0, "tied weights: allocator = scan at %d budgets (%d differ)", nb, bad);

	/* Zero, negative and NaN weights are never given bits. */
	for (int k = 0; k < N; k++)
		v[k] = k % 5 == 0 ? 0 : k % 7 == 0 ? NAN : k % 11 == 0 ? -1 : uniform();
	nb = budgets_of(0, 3000, 250, budgets, 1024);
	ok(differ(N, v, d, part, budgets, nb) == 0,
	   "zero, negative and NaN weights: allocator = scan");

	/* Crafted tables whose gains rise and fall with the count, so a
	 * component's next step can be worth more than its last. */
	bad = 0;
	for (int trial = 0; trial < 40; trial++) {
		for (int p = 0; p < 2; p++) {
			double acc = 1;
			for (int j = 0; j < WZC_NSET; j++) {
				d[p][j] = acc;
				acc *= 0.3 + 0.7 * uniform();
			}
		}
		int n = 1 + (int)(uniform() * N);
		for (int k = 0; k < n; k++) {
			part[k] = uniform() < 0.2;
			v[k] = uniform() < 0.1 ? 0 : pow(10, 4 * uniform() - 2);
		}
		nb = budgets_of(uniform() * 6 * n, 12 * n, 1 + n / 8.0, budgets, 64);
		if (differ(n, v, d, part, budgets, nb)) {
			bad++;
			printf("#   trial %d, n %d\n", trial, n);
		}
	}
	ok(bad == 0, "non-monotone gains, 40 random layers: allocator = scan");

	/* The position floor (profile version 4): the greedy over the
	 * position part alone stops once its planned error is within the
	 * cap, or at its bit limit; the allocator from the floor matches the
	 * scan from it, and keeps every count at or above it. */
	fitted_tables(2, d[0]);
	fitted_tables(1, d[1]);
	double var[64], total = 0;
	for (int i = 0; i < 64; i++) {
		var[i] = exp(-0.05 * (i / 2));
		total += var[i];
	}
	static int fl[N];
	int reached = 1, limited = 1, minimal = 1;
	for (int c = 1; c <= 6; c++) {
		double cap = total * pow(10, -c), lim = 1e9;
		double bits = wzc_wz_floor(64, var, d[1], cap, lim, fl);
		double dist = 0;
		for (int i = 0; i < 64; i++)
			dist += var[i] * d[1][fl[i]];
		reached &= dist <= cap * (1 + 1e-12) && bits > 0;
		/* one step less on any component would pass the cap: the
		 * greedy stopped as soon as it was within */
		double less = wzc_wz_floor(64, var, d[1], cap * 1.5, lim, fl + 64);
		minimal &= less <= bits;
		double half = wzc_wz_floor(64, var, d[1], cap, 0.5 * bits, fl + 128);
		limited &= half <= 0.5 * bits && half > 0;
	}
	ok(reached, "floor: planned error within the cap at caps of 10^-1..10^-6 of the energy");
	ok(minimal, "floor: a looser cap takes no more bits");
	ok(limited, "floor: stops at its bit limit when the cap needs more");
	ok(wzc_wz_floor(64, var, d[1], total * d[1][0] * (1 + 1e-9), 1e9, fl) == 0 && fl[0] == 0 && fl[63] == 0,
	   "floor: a cap at the error of coding nothing takes nothing");
	for (int k = 0; k < N; k++) {
		part[k] = k >= 512;
		v[k] = exp(-0.01 * (k % 512)) * (0.5 + uniform());
		fl[k] = 0;
	}
	double fbits = wzc_wz_floor(64, var, d[1], total * 1e-4, 1e9, fl + 512);
	nb = budgets_of(fbits, 650 * 8, 37.5, budgets, 1024);
	bad = differ_floor(N, v, d, part, fl, budgets, nb);
	ok(bad == 0, "from a floor of %.0f bits: allocator = scan at %d budgets (%d differ)", fbits,
	   nb, bad);
	int *got = malloc(sizeof *got * N), above = 1;
	wzc_wz_allocator *al = wzc_wz_allocator_new_floor(N, v, (const double(*)[WZC_NSET])d, part, fl);
	for (int i = 0; got && al && i < nb; i++) {
		wzc_wz_allocator_run(al, budgets[i], got);
		for (int k = 0; k < N; k++)
			above &= got[k] >= fl[k];
	}
	ok(got && al && above, "from a floor: every count at or above the floor");
	wzc_wz_allocator_free(al);
	free(got);
	return tap_done();
}
