/* The Gaussian bound's cost: the eigenvalues-only routine the bound uses,
 * beside the full eigendecomposition it replaced, on the same 576 x 576
 * sample covariances in the same run (thread CPU time, medians), and the
 * whole bound of a window (covariance and eigenvalues per layer). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "codec/profile/linalg.h"
#include "codec/measure/metrics.h"

#define N 576
#define RUNS 7

static uint64_t rng = 42;

static double gauss(void)
{
	double s = 0;
	for (int i = 0; i < 4; i++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		s += (rng >> 11) * 0x1.0p-53 - 0.5;
	}
	return s * 1.7320508;
}

int main(void)
{
	int T = 2048, L = 2;
	const char *env = getenv("WZ_BENCH_TOKENS");
	if (env && atoi(env) > 0)
		T = atoi(env);
	float *lat = malloc(sizeof *lat * (size_t)L * T * 512), *rope = malloc(sizeof *rope * (size_t)L * T * 64);
	for (size_t i = 0; i < (size_t)L * T * 512; i++)
		lat[i] = (float)(gauss() * (1 + (i % 512) / 64.0));
	for (size_t i = 0; i < (size_t)L * T * 64; i++)
		rope[i] = (float)gauss();
	/* One layer's covariance, as the bound builds it. */
	double *cov = calloc((size_t)N * N, sizeof *cov), *a = malloc(sizeof *a * N * N);
	double *w = malloc(sizeof *w * N);
	for (int t = 0; t < T; t++)
		for (int i = 0; i < N; i++) {
			double xi = i < 512 ? lat[(size_t)t * 512 + i] : rope[(size_t)t * 64 + i - 512];
			for (int j = 0; j <= i; j++) {
				double xj = j < 512 ? lat[(size_t)t * 512 + j] : rope[(size_t)t * 64 + j - 512];
				cov[(size_t)i * N + j] += xi * xj / T;
			}
		}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < i; j++)
			cov[(size_t)j * N + i] = cov[(size_t)i * N + j];
	double full[RUNS], values[RUNS], bound[RUNS];
	wzc_window win = { 0 };
	win.L = L, win.T = T, win.R = 512, win.P = 64, win.latent = lat, win.rope = rope;
	win.name = "bench";
	for (int r = 0; r < RUNS; r++) {
		memcpy(a, cov, sizeof *a * N * N);
		double t0 = bench_thread_cpu_s();
		if (wzc_sym_eigen(a, N, w))
			return 1;
		full[r] = bench_thread_cpu_s() - t0;
		memcpy(a, cov, sizeof *a * N * N);
		t0 = bench_thread_cpu_s();
		if (wzc_sym_eigenvalues(a, N, w))
			return 1;
		values[r] = bench_thread_cpu_s() - t0;
		wzc_spectrum *sp;
		t0 = bench_thread_cpu_s();
		wz_diag diag;
		if (wzc_spectrum_of(&win, &sp, &diag))
			return 1;
		bound[r] = bench_thread_cpu_s() - t0;
		wzc_spectrum_free(sp);
	}
	double f = bench_median(full, RUNS), v = bench_median(values, RUNS);
	double b = bench_median(bound, RUNS);
	printf("bound: %d x %d covariance, median of %d runs (thread CPU time)\n", N, N, RUNS);
	printf("  full eigendecomposition (wzc_sym_eigen, the reference): %.1f ms\n", f * 1e3);
	printf("  eigenvalues only (wzc_sym_eigenvalues, what the bound uses): %.1f ms  (%.2fx faster)\n",
	       v * 1e3, f / v);
	printf("  the whole bound of a %d-layer, %d-token window (covariances + eigenvalues): %.1f ms "
	       "per layer, of which eigenvalues %.0f%%\n",
	       L, T, b * 1e3 / L, 100 * v / (b / L));
	/* The same bound with the full decomposition in place of the
	 * eigenvalues: covariance time (measured) plus the reference's. */
	double before = b / L - v + f;
	printf("  with the full decomposition instead: %.1f ms per layer, of which the "
	       "decomposition %.0f%% (%.2fx the bound's time now)\n",
	       before * 1e3, 100 * f / before, before / (b / L));
	free(lat);
	free(rope);
	free(cov);
	free(a);
	free(w);
	return 0;
}
