/* Level tables fitted to a histogram of standardized values: Lloyd's
 * algorithm up to 64 levels, where it beats companding measurably; beyond,
 * the high-resolution optimum (point density proportional to f^(1/3)),
 * whose distortion is the Panter-Dite integral. */
#include "codec/levels.h"

#include <math.h>
#include <stdlib.h>

#include "codec/profile.h"

#define LLOYD_MAX 64
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

/* Levels at equal steps of the cumulative f^(1/3).  Version 1 spread a
 * floor of 10^-12 over every bin of [-12, 12], which put a level or two
 * in the empty range past the calibration values and left one wide cell
 * between them: a test value there (a token type calibration never held)
 * was coded with an error of several of its sigmas.  From version 2 the
 * density is the histogram's alone, over its support, and a value past
 * it is the encoder's overload rule's (docs/wz-format.md). */
static void compand(const float *hist, int version, uint32_t N, double *lev)
{
	double floor_mass = version >= 2 ? 0 : 1e-12, total = 0;
	int b0 = 0, b1 = WZC_HIST_BINS - 1;
	if (version >= 2) {
		while (b0 < b1 && !(hist[b0] > 0))
			b0++;
		while (b1 > b0 && !(hist[b1] > 0))
			b1--;
	}
	for (int b = b0; b <= b1; b++)
		total += cbrt(hist[b] + floor_mass);
	double acc = 0;
	int b = b0;
	for (uint32_t i = 0; i < N; i++) {
		double target = (i + 0.5) / N * total;
		while (b < b1 && acc + cbrt(hist[b] + floor_mass) < target) {
			acc += cbrt(hist[b] + floor_mass);
			b++;
		}
		double g = cbrt(hist[b] + floor_mass);
		double frac = g > 0 ? (target - acc) / g : 0.5;
		frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
		lev[i] = -WZC_HIST_RANGE + (b + frac) * BW;
	}
}

/* Squared error of the histogram (mass uniform within each bin) against
 * sorted levels, by nearest level; also Lloyd's centroid update when
 * `update` is set. */
static double lloyd_step(const float *hist, uint32_t N, double *lev, int update)
{
	double *mass = update ? calloc(N, sizeof *mass) : NULL;
	double *mom = update ? calloc(N, sizeof *mom) : NULL;
	double dist = 0;
	uint32_t i = 0;
	for (int b = 0; b < WZC_HIST_BINS; b++) {
		double c = center(b), m = hist[b];
		while (i + 1 < N && c > 0.5 * (lev[i] + lev[i + 1]))
			i++;
		if (m <= 0)
			continue;
		dist += m * ((c - lev[i]) * (c - lev[i]) + BW * BW / 12);
		if (mass) {
			mass[i] += m;
			mom[i] += m * c;
		}
	}
	if (mass && mom)
		for (i = 0; i < N; i++)
			if (mass[i] > 0)
				lev[i] = mom[i] / mass[i];
	free(mass);
	free(mom);
	return dist;
}

static void fit(const float *hist, int version, uint32_t N, double *lev)
{
	if (N == 1) {
		double m = 0;
		for (int b = 0; b < WZC_HIST_BINS; b++)
			m += hist[b] * center(b);
		lev[0] = m;
		return;
	}
	compand(hist, version, N, lev);
	if (N <= LLOYD_MAX)
		for (int it = 0; it < LLOYD_ITERS; it++)
			lloyd_step(hist, N, lev, 1);
}

void wzc_levels_distortion(const float *hist, int version, double d[WZC_NSET])
{
	double lev[LLOYD_MAX];
	double pd = 0;
	for (int b = 0; b < WZC_HIST_BINS; b++)
		pd += cbrt((double)hist[b]) * cbrt(BW * BW);
	pd = pd * pd * pd / 12;
	for (int j = 0; j < WZC_NSET; j++) {
		uint32_t N = wzc_level_count(j);
		if (N <= LLOYD_MAX) {
			fit(hist, version, N, lev);
			d[j] = lloyd_step(hist, N, lev, 0);
		} else {
			d[j] = pd / ((double)N * N);
		}
		if (j > 0 && d[j] > d[j - 1])
			d[j] = d[j - 1];
	}
}

void wzc_levels_table(const float *hist, int version, int j, float *levels, float *thresholds)
{
	uint32_t N = wzc_level_count(j);
	double *lev = malloc(sizeof *lev * N);
	if (!lev) {
		for (uint32_t i = 0; i < N; i++)
			levels[i] = 0;
		for (uint32_t i = 0; i + 1 < N; i++)
			thresholds[i] = 0;
		return;
	}
	fit(hist, version, N, lev);
	for (uint32_t i = 0; i < N; i++)
		levels[i] = (float)lev[i];
	for (uint32_t i = 0; i + 1 < N; i++) {
		/* keep tables strictly ordered even after float rounding */
		if (levels[i + 1] < levels[i])
			levels[i + 1] = levels[i];
		thresholds[i] = 0.5f * (levels[i] + levels[i + 1]);
	}
	free(lev);
}
