/* Level tables fitted to a histogram of standardized values: Lloyd's
 * algorithm up to 64 levels, where it beats companding measurably; beyond,
 * the high-resolution optimum (point density proportional to f^(1/3)),
 * whose distortion is the Panter-Dite integral. */
#include "codec/profile/levels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/profile/profile.h"

#define LLOYD_MAX WZC_LLOYD_MAX
#define LLOYD_ITERS 60
#define BW (2.0 * WZC_HIST_RANGE / WZC_HIST_BINS)

uint32_t wzc_level_count(int j)
{
	if (j < 3)
		return (uint32_t)j + 1;
	j -= 3;
	return (uint32_t)(4 + j % 4) << (j / 4);
}

static double center(int b)
{
	return -WZC_HIST_RANGE + (b + 0.5) * BW;
}

/* The companding density f^(1/3) per bin, over the bins it spans, and its
 * sum: computed once per histogram, as every count's table walks it.
 * Version 1 spread a floor of 10^-12 over every bin of [-12, 12], which
 * put a level or two in the empty range past the calibration values and
 * left one wide cell between them: a test value there (a token type
 * calibration never held) was coded with an error of several of its
 * sigmas.  From version 2 the density is the histogram's alone, over its
 * support, and a value past it is the encoder's overload rule's
 * (docs/wz-format.md). */
typedef struct {
	int b0, b1;
	double total, g[WZC_HIST_BINS];
} density;

static void density_of(const float *hist, int version, density *dn)
{
	double floor_mass = version >= 2 ? 0 : 1e-12;
	int b0 = 0, b1 = WZC_HIST_BINS - 1;
	if (version >= 2) {
		while (b0 < b1 && !(hist[b0] > 0))
			b0++;
		while (b1 > b0 && !(hist[b1] > 0))
			b1--;
	}
	dn->b0 = b0;
	dn->b1 = b1;
	dn->total = 0;
	for (int b = b0; b <= b1; b++) {
		dn->g[b] = cbrt(hist[b] + floor_mass);
		dn->total += dn->g[b];
	}
}

/* Levels at equal steps of the cumulative density. */
static void compand(const density *dn, uint32_t N, double *lev)
{
	double acc = 0, total = dn->total;
	int b = dn->b0, b1 = dn->b1;
	for (uint32_t i = 0; i < N; i++) {
		double target = (i + 0.5) / N * total;
		while (b < b1 && acc + dn->g[b] < target) {
			acc += dn->g[b];
			b++;
		}
		double g = dn->g[b];
		double frac = g > 0 ? (target - acc) / g : 0.5;
		frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
		lev[i] = -WZC_HIST_RANGE + (b + frac) * BW;
	}
}

/* The histogram's bins that hold mass, in order, with their centres: a
 * Lloyd step visits only these (bins without mass add nothing to either
 * sum, so the result is exactly the full scan's), and a standardized
 * histogram's mass sits in a small part of its 4,096 bins. */
typedef struct {
	int n;
	double c[WZC_HIST_BINS], m[WZC_HIST_BINS];
} support;

static void support_of(const float *hist, support *s)
{
	s->n = 0;
	for (int b = 0; b < WZC_HIST_BINS; b++) {
		double m = hist[b];
		if (m <= 0)
			continue;
		s->c[s->n] = center(b);
		s->m[s->n++] = m;
	}
}

/* Squared error of the histogram (mass uniform within each bin) against
 * sorted levels, by nearest level; also Lloyd's centroid update when
 * `update` is set. */
static double lloyd_step(const support *s, uint32_t N, double *lev, int update)
{
	double mass[LLOYD_MAX] = { 0 }, mom[LLOYD_MAX] = { 0 };
	double dist = 0;
	uint32_t i = 0;
	for (int t = 0; t < s->n; t++) {
		double c = s->c[t], m = s->m[t];
		while (i + 1 < N && c > 0.5 * (lev[i] + lev[i + 1]))
			i++;
		dist += m * ((c - lev[i]) * (c - lev[i]) + BW * BW / 12);
		if (update) {
			mass[i] += m;
			mom[i] += m * c;
		}
	}
	if (update)
		for (i = 0; i < N; i++)
			if (mass[i] > 0)
				lev[i] = mom[i] / mass[i];
	return dist;
}

/* The squared error of the histogram (mass uniform within each bin)
 * against N sorted levels by nearest level, integrated exactly over the
 * cells and bins: for the companded tables above LLOYD_MAX levels, whose
 * cells can be narrower than a bin.  The position floor of profile
 * version 4 checks its cap with it: the Panter-Dite integral, the limit
 * for large N, is below the tables' distortion at the counts the cap
 * needs (about 256 levels), and a position part planned at its cap by the
 * integral was coded with 13% more error than the cap (iid). */
static double table_distortion(const support *s, uint32_t N, const double *lev)
{
	double dist = 0;
	uint32_t i = 0;
	for (int t = 0; t < s->n; t++) {
		double a = s->c[t] - 0.5 * BW, b = s->c[t] + 0.5 * BW, sum = 0;
		while (i + 1 < N && a >= 0.5 * (lev[i] + lev[i + 1]))
			i++;
		while (a < b) {
			double th = i + 1 < N ? 0.5 * (lev[i] + lev[i + 1]) : b;
			double e = th < b ? th : b, l = lev[i];
			sum += ((e - l) * (e - l) * (e - l) - (a - l) * (a - l) * (a - l)) / 3;
			a = e;
			if (a < b)
				i++;
		}
		dist += s->m[t] * sum / BW;
	}
	return dist;
}

/* Lloyd from the companded start; dn is the histogram's density (needed
 * when N > 1) and s its support (when N is 2..LLOYD_MAX).  It stops early
 * at a fixed point: a step that changes no level changes none after it
 * either. */
static void fit(const float *hist, const density *dn, const support *s, uint32_t N,
		double *lev)
{
	if (N == 1) {
		double m = 0;
		for (int b = 0; b < WZC_HIST_BINS; b++)
			m += hist[b] * center(b);
		lev[0] = m;
		return;
	}
	compand(dn, N, lev);
	if (N > LLOYD_MAX)
		return;
	double prev[LLOYD_MAX];
	for (int it = 0; it < LLOYD_ITERS; it++) {
		memcpy(prev, lev, sizeof *lev * N);
		lloyd_step(s, N, lev, 1);
		if (memcmp(prev, lev, sizeof *lev * N) == 0)
			break;
	}
}

static void to_table(const double *lev, uint32_t N, float *levels, float *thresholds)
{
	for (uint32_t i = 0; i < N; i++)
		levels[i] = (float)lev[i];
	for (uint32_t i = 0; i + 1 < N; i++) {
		/* keep tables strictly ordered even after float rounding */
		if (levels[i + 1] < levels[i])
			levels[i + 1] = levels[i];
		thresholds[i] = 0.5f * (levels[i] + levels[i + 1]);
	}
}

/* what fitting a histogram's tables needs, computed once per histogram */
typedef struct {
	density dn;
	support s;
} scratch;

static scratch *scratch_of(const float *hist, int version)
{
	scratch *sc = malloc(sizeof *sc);
	if (sc) {
		density_of(hist, version, &sc->dn);
		support_of(hist, &sc->s);
	}
	return sc;
}

static int fit_all(const float *hist, int version, double d[WZC_NSET],
		   float *const tables[WZC_NSET], int exact)
{
	scratch *sc = scratch_of(hist, version);
	if (!sc)
		return -1;
	double lev[LLOYD_MAX];
	double *big = NULL;
	if (exact) {
		big = malloc(sizeof *big * wzc_level_count(WZC_NSET - 1));
		if (!big) {
			free(sc);
			return -1;
		}
	}
	double pd = 0;
	for (int b = 0; b < WZC_HIST_BINS; b++)
		if (hist[b] != 0) /* an empty bin adds exactly nothing */
			pd += cbrt((double)hist[b]) * cbrt(BW * BW);
	pd = pd * pd * pd / 12;
	for (int j = 0; j < WZC_NSET; j++) {
		uint32_t N = wzc_level_count(j);
		if (N <= LLOYD_MAX) {
			fit(hist, &sc->dn, &sc->s, N, lev);
			d[j] = lloyd_step(&sc->s, N, lev, 0);
			if (tables && tables[j])
				to_table(lev, N, tables[j], tables[j] + N);
		} else if (big) {
			compand(&sc->dn, N, big);
			d[j] = table_distortion(&sc->s, N, big);
		} else {
			d[j] = pd / ((double)N * N);
		}
		if (j > 0 && d[j] > d[j - 1])
			d[j] = d[j - 1];
	}
	free(big);
	free(sc);
	return 0;
}

int wzc_levels_fit_all(const float *hist, int version, double d[WZC_NSET],
		       float *const tables[WZC_NSET])
{
	return fit_all(hist, version, d, tables, 0);
}

int wzc_levels_distortion_exact(const float *hist, int version, double d[WZC_NSET])
{
	return fit_all(hist, version, d, NULL, 1);
}

int wzc_levels_distortion(const float *hist, int version, double d[WZC_NSET])
{
	if (wzc_levels_fit_all(hist, version, d, NULL) == 0)
		return 0;
	for (int j = 0; j < WZC_NSET; j++)
		d[j] = INFINITY; /* out of memory: no count looks worth its bits */
	return -1;
}

int wzc_levels_table(const float *hist, int version, int j, float *levels, float *thresholds)
{
	return wzc_levels_table_count(hist, version, wzc_level_count(j), levels, thresholds);
}

int wzc_levels_table_count(const float *hist, int version, uint32_t N, float *levels,
			   float *thresholds)
{
	double *lev = malloc(sizeof *lev * N);
	scratch *sc = N > 1 ? scratch_of(hist, version) : NULL;
	if (!lev || (N > 1 && !sc)) {
		free(lev);
		free(sc);
		for (uint32_t i = 0; i < N; i++)
			levels[i] = 0;
		for (uint32_t i = 0; i + 1 < N; i++)
			thresholds[i] = 0;
		return -1;
	}
	fit(hist, sc ? &sc->dn : NULL, sc ? &sc->s : NULL, N, lev);
	to_table(lev, N, levels, thresholds);
	free(lev);
	free(sc);
	return 0;
}
