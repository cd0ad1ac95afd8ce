/* Small dense linear algebra for the statistical tests of the synthetic
 * generator: sample covariance and symmetric eigenvalues (cyclic Jacobi),
 * fine for the 64..128-wide matrices the tests use. */
#ifndef WZ_TEST_LINALG_H
#define WZ_TEST_LINALG_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* cov[n][n] of rows x[m][n] (stride n), about the sample mean. */
static void sample_cov(const float *x, int m, int n, double *cov)
{
	double *mean = calloc((size_t)n, sizeof *mean);
	for (int t = 0; t < m; t++)
		for (int i = 0; i < n; i++)
			mean[i] += x[(size_t)t * n + i];
	for (int i = 0; i < n; i++)
		mean[i] /= m;
	memset(cov, 0, sizeof *cov * (size_t)n * n);
	double *d = malloc(sizeof *d * (size_t)n);
	for (int t = 0; t < m; t++) {
		for (int i = 0; i < n; i++)
			d[i] = x[(size_t)t * n + i] - mean[i];
		for (int i = 0; i < n; i++)
			for (int j = i; j < n; j++)
				cov[(size_t)i * n + j] += d[i] * d[j];
	}
	for (int i = 0; i < n; i++)
		for (int j = i; j < n; j++)
			cov[(size_t)j * n + i] = cov[(size_t)i * n + j] /= (m - 1);
	free(d);
	free(mean);
}

typedef struct {
	double value;
	int index;
} eig_pair;

static int by_value_desc(const void *a, const void *b)
{
	double x = ((const eig_pair *)a)->value, y = ((const eig_pair *)b)->value;
	return x < y ? 1 : x > y ? -1 : 0;
}

/* Eigenvalues of symmetric a[n][n] (destroyed), sorted descending; with
 * vec (may be NULL) also the eigenvectors as rows vec[k][n] in that order. */
static void sym_eigen(double *a, int n, double *eig, double *vec)
{
	double *v = calloc((size_t)n * n, sizeof *v);
	for (int i = 0; i < n; i++)
		v[(size_t)i * n + i] = 1;
	for (int sweep = 0; sweep < 50; sweep++) {
		double off = 0;
		for (int p = 0; p < n; p++)
			for (int q = p + 1; q < n; q++)
				off += a[(size_t)p * n + q] * a[(size_t)p * n + q];
		if (off < 1e-22)
			break;
		for (int p = 0; p < n; p++)
			for (int q = p + 1; q < n; q++) {
				double apq = a[(size_t)p * n + q];
				if (fabs(apq) < 1e-300)
					continue;
				double app = a[(size_t)p * n + p], aqq = a[(size_t)q * n + q];
				double theta = (aqq - app) / (2 * apq);
				double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
				double c = 1 / sqrt(t * t + 1), s = t * c;
				for (int k = 0; k < n; k++) {
					double akp = a[(size_t)k * n + p], akq = a[(size_t)k * n + q];
					a[(size_t)k * n + p] = c * akp - s * akq;
					a[(size_t)k * n + q] = s * akp + c * akq;
				}
				for (int k = 0; k < n; k++) {
					double apk = a[(size_t)p * n + k], aqk = a[(size_t)q * n + k];
					a[(size_t)p * n + k] = c * apk - s * aqk;
					a[(size_t)q * n + k] = s * apk + c * aqk;
				}
				for (int k = 0; k < n; k++) { /* columns of v: eigenvectors */
					double vkp = v[(size_t)k * n + p], vkq = v[(size_t)k * n + q];
					v[(size_t)k * n + p] = c * vkp - s * vkq;
					v[(size_t)k * n + q] = s * vkp + c * vkq;
				}
			}
	}
	eig_pair *order = malloc(sizeof *order * (size_t)n);
	for (int i = 0; i < n; i++) {
		order[i].value = a[(size_t)i * n + i];
		order[i].index = i;
	}
	qsort(order, (size_t)n, sizeof *order, by_value_desc);
	for (int k = 0; k < n; k++) {
		eig[k] = order[k].value;
		for (int i = 0; vec && i < n; i++)
			vec[(size_t)k * n + i] = v[(size_t)i * n + order[k].index];
	}
	free(order);
	free(v);
}

/* Least-squares slope of log(eig[k]) against log(k+1) for k in [k0, k1). */
static double loglog_slope(const double *eig, int k0, int k1)
{
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	int m = 0;
	for (int k = k0; k < k1; k++, m++) {
		double x = log(k + 1.0), y = log(eig[k]);
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
	}
	return (m * sxy - sx * sy) / (m * sxx - sx * sx);
}

#endif
