/* The eigenvalues-only routine against the full eigendecomposition and
 * against matrices built from known eigenvalues. */
#include "tests/tap.h"

#include <stdint.h>

#include "codec/profile/linalg.h"

static uint64_t rng = 0x1234567ull;

static double uniform(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return ((rng >> 11) * 0x1.0p-53) * 2 - 1;
}

/* A = Q diag(lam) Q^T with Q a product of two random reflections. */
static void from_spectrum(const double *lam, int n, double *a)
{
	double *q = calloc((size_t)n * n, sizeof *q), *u = malloc(sizeof *u * n);
	for (int i = 0; i < n; i++)
		q[(size_t)i * n + i] = 1;
	for (int r = 0; r < 2; r++) {
		double nn = 0;
		for (int i = 0; i < n; i++) {
			u[i] = uniform();
			nn += u[i] * u[i];
		}
		for (int j = 0; j < n; j++) { /* q = (I - 2uu^T/nn) q, column by column */
			double d = 0;
			for (int i = 0; i < n; i++)
				d += u[i] * q[(size_t)i * n + j];
			for (int i = 0; i < n; i++)
				q[(size_t)i * n + j] -= 2 * u[i] * d / nn;
		}
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			double s = 0;
			for (int k = 0; k < n; k++)
				s += q[(size_t)i * n + k] * lam[k] * q[(size_t)j * n + k];
			a[(size_t)i * n + j] = s;
		}
	free(q);
	free(u);
}

/* Largest |values-only - full| over the spectrum, relative to max |lambda|. */
static double against_full(const double *a, int n, int *rc_values, int *rc_full)
{
	double *x = malloc(sizeof *x * n * n), *y = malloc(sizeof *y * n * n);
	double *wx = malloc(sizeof *wx * n), *wy = malloc(sizeof *wy * n);
	memcpy(x, a, sizeof *x * n * n);
	memcpy(y, a, sizeof *y * n * n);
	*rc_values = wzc_sym_eigenvalues(x, n, wx);
	*rc_full = wzc_sym_eigen(y, n, wy);
	double worst = 0, scale = 0;
	for (int i = 0; i < n; i++)
		scale = fmax(scale, fabs(wy[i]));
	for (int i = 0; i < n; i++)
		worst = fmax(worst, fabs(wx[i] - wy[i]));
	free(x);
	free(y);
	free(wx);
	free(wy);
	return scale > 0 ? worst / scale : worst;
}

static void random_symmetric(int n)
{
	double *a = malloc(sizeof *a * n * n);
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= i; j++)
			a[(size_t)i * n + j] = a[(size_t)j * n + i] = uniform();
	int r1, r2;
	double d = against_full(a, n, &r1, &r2);
	ok(r1 == 0 && r2 == 0 && d < 1e-12, "random symmetric %d x %d: eigenvalues agree with the "
					   "full decomposition (relative %.2g)", n, n, d);
	free(a);
}

/* A sample covariance of T < n tokens: rank T, n - T zero eigenvalues. */
static void rank_deficient(int n, int T)
{
	double *x = malloc(sizeof *x * T * n), *a = calloc((size_t)n * n, sizeof *a);
	for (int t = 0; t < T; t++)
		for (int i = 0; i < n; i++)
			x[(size_t)t * n + i] = uniform() * (1 + i % 7);
	for (int t = 0; t < T; t++)
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				a[(size_t)i * n + j] += x[(size_t)t * n + i] * x[(size_t)t * n + j] / T;
	int r1, r2;
	double d = against_full(a, n, &r1, &r2);
	ok(r1 == 0 && r2 == 0 && d < 1e-12, "covariance of %d tokens in %d dimensions: agree "
					   "(relative %.2g)", T, n, d);
	free(x);
	free(a);
}

static void known_spectrum(int n, int repeated)
{
	double *lam = malloc(sizeof *lam * n), *a = malloc(sizeof *a * n * n);
	double *w = malloc(sizeof *w * n);
	for (int i = 0; i < n; i++)
		lam[i] = repeated ? (i < n / 2 ? 3.0 : 0.5) : pow(10.0, -4.0 * i / n) * (i % 2 ? 1 : -1);
	from_spectrum(lam, n, a);
	int rc = wzc_sym_eigenvalues(a, n, w);
	/* the known values in decreasing order */
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (lam[j] > lam[i]) {
				double t = lam[i];
				lam[i] = lam[j];
				lam[j] = t;
			}
	double worst = 0;
	for (int i = 0; i < n; i++)
		worst = fmax(worst, fabs(w[i] - lam[i]));
	ok(rc == 0 && worst < 1e-11, "%d x %d with %s eigenvalues: recovered in decreasing order "
				     "(largest error %.2g)", n, n,
	   repeated ? "two repeated" : "known signed", worst);
	free(lam);
	free(a);
	free(w);
}

int main(void)
{
	double one = 4.5, w1;
	ok(wzc_sym_eigenvalues(&one, 1, &w1) == 0 && w1 == 4.5, "1 x 1: the element itself");
	double two[4] = { 2, 1, 1, 2 }, w2[2];
	ok(wzc_sym_eigenvalues(two, 2, w2) == 0 && fabs(w2[0] - 3) < 1e-14 && fabs(w2[1] - 1) < 1e-14,
	   "2 x 2 [[2,1],[1,2]]: 3 and 1");
	double zero[9] = { 0 }, w3[3];
	ok(wzc_sym_eigenvalues(zero, 3, w3) == 0 && w3[0] == 0 && w3[2] == 0, "the zero matrix: zeros");
	double diag[9] = { 1, 0, 0, 0, 5, 0, 0, 0, -2 };
	ok(wzc_sym_eigenvalues(diag, 3, w3) == 0 && w3[0] == 5 && w3[1] == 1 && w3[2] == -2,
	   "a diagonal matrix: its diagonal, sorted");
	int sizes[] = { 3, 17, 64, 200, 576 };
	for (int i = 0; i < 5; i++)
		random_symmetric(sizes[i]);
	rank_deficient(96, 40);
	rank_deficient(576, 300);
	known_spectrum(50, 0);
	known_spectrum(120, 1);
	return tap_done();
}
