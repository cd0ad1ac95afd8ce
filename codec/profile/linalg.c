/* Symmetric eigendecomposition by Householder tridiagonalisation and the
 * implicit QL algorithm (the EISPACK tred2/tql2 pair, as in JAMA): O(n^3),
 * fast enough for 576 x 576 per layer, no external dependency.  The
 * eigenvalues alone come from the same reduction without accumulating its
 * reflections and the same QL iteration without rotating vectors (the
 * EISPACK tred1/tql1 pair): about a sixth of the work. */
#include "codec/profile/linalg.h"

#include "codec/hot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* tred2 and tql2 work on the transpose of the matrix they are written
 * for: v(i, j) is V[j * n + i].  Their O(n^3) loops walk columns of it
 * (v(k, j) over k), which are then rows of memory; the operations and
 * their order are those of JAMA's, so are the results, bit for bit
 * (wzc_sym_eigen transposes in and out). */
static WZ_VEC_CLONES WZ_HOT void tred2(int n, double *V, double *d, double *e)
{
#define v(i, j) V[(size_t)(j) * n + (i)]
	for (int j = 0; j < n; j++)
		d[j] = v(n - 1, j);
	for (int i = n - 1; i > 0; i--) {
		double scale = 0.0, h = 0.0;
		for (int k = 0; k < i; k++)
			scale += fabs(d[k]);
		if (scale == 0.0) {
			e[i] = d[i - 1];
			for (int j = 0; j < i; j++) {
				d[j] = v(i - 1, j);
				v(i, j) = 0.0;
				v(j, i) = 0.0;
			}
		} else {
			for (int k = 0; k < i; k++) {
				d[k] /= scale;
				h += d[k] * d[k];
			}
			double f = d[i - 1];
			double g = sqrt(h);
			if (f > 0)
				g = -g;
			e[i] = scale * g;
			h = h - f * g;
			d[i - 1] = f - g;
			for (int j = 0; j < i; j++)
				e[j] = 0.0;
			for (int j = 0; j < i; j++) {
				f = d[j];
				v(j, i) = f;
				g = e[j] + v(j, j) * f;
				for (int k = j + 1; k <= i - 1; k++) {
					g += v(k, j) * d[k];
					e[k] += v(k, j) * f;
				}
				e[j] = g;
			}
			f = 0.0;
			for (int j = 0; j < i; j++) {
				e[j] /= h;
				f += e[j] * d[j];
			}
			double hh = f / (h + h);
			for (int j = 0; j < i; j++)
				e[j] -= hh * d[j];
			for (int j = 0; j < i; j++) {
				f = d[j];
				g = e[j];
				for (int k = j; k <= i - 1; k++)
					v(k, j) -= (f * e[k] + g * d[k]);
				d[j] = v(i - 1, j);
				v(i, j) = 0.0;
			}
		}
		d[i] = h;
	}
	for (int i = 0; i < n - 1; i++) {
		v(n - 1, i) = v(i, i);
		v(i, i) = 1.0;
		double h = d[i + 1];
		if (h != 0.0) {
			for (int k = 0; k <= i; k++)
				d[k] = v(k, i + 1) / h;
			for (int j = 0; j <= i; j++) {
				double g = 0.0;
				for (int k = 0; k <= i; k++)
					g += v(k, i + 1) * v(k, j);
				for (int k = 0; k <= i; k++)
					v(k, j) -= g * d[k];
			}
		}
		for (int k = 0; k <= i; k++)
			v(k, i + 1) = 0.0;
	}
	for (int j = 0; j < n; j++) {
		d[j] = v(n - 1, j);
		v(n - 1, j) = 0.0;
	}
	v(n - 1, n - 1) = 1.0;
	e[0] = 0.0;
}

/* With V NULL, the eigenvalues alone: the same shifts and rotations on d
 * and e, so they agree with the eigenvectors' run bit for bit. */
static WZ_VEC_CLONES WZ_HOT int tql2(int n, double *V, double *d, double *e)
{
	for (int i = 1; i < n; i++)
		e[i - 1] = e[i];
	e[n - 1] = 0.0;
	double f = 0.0, tst1 = 0.0;
	const double eps = pow(2.0, -52.0);
	for (int l = 0; l < n; l++) {
		tst1 = fmax(tst1, fabs(d[l]) + fabs(e[l]));
		int m = l;
		while (m < n) {
			if (fabs(e[m]) <= eps * tst1)
				break;
			m++;
		}
		if (m == n)
			m = n - 1;
		if (m > l) {
			int iter = 0;
			do {
				if (++iter > 60)
					return -1;
				double g = d[l];
				double p = (d[l + 1] - g) / (2.0 * e[l]);
				double r = hypot(p, 1.0);
				if (p < 0)
					r = -r;
				d[l] = e[l] / (p + r);
				d[l + 1] = e[l] * (p + r);
				double dl1 = d[l + 1];
				double h = g - d[l];
				for (int i = l + 2; i < n; i++)
					d[i] -= h;
				f += h;
				p = d[m];
				double c = 1.0, c2 = c, c3 = c;
				double el1 = e[l + 1];
				double s = 0.0, s2 = 0.0;
				for (int i = m - 1; i >= l; i--) {
					c3 = c2;
					c2 = c;
					s2 = s;
					g = c * e[i];
					h = c * p;
					r = hypot(p, e[i]);
					e[i + 1] = s * r;
					s = e[i] / r;
					c = p / r;
					p = c * d[i] - s * g;
					d[i + 1] = h + s * (c * g + s * d[i]);
					for (int k = 0; V && k < n; k++) {
						h = v(k, i + 1);
						v(k, i + 1) = s * v(k, i) + c * h;
						v(k, i) = c * v(k, i) - s * h;
					}
				}
				p = -s * s2 * c3 * el1 * e[l] / dl1;
				e[l] = s * p;
				d[l] = c * p;
			} while (fabs(e[l]) > eps * tst1);
		}
		d[l] = d[l] + f;
		e[l] = 0.0;
	}
	return 0;
#undef v
}

/* tred2's reduction to tridiagonal form (diagonal d, subdiagonal e[1..n-1])
 * without accumulating the reflections: they only act on the lower triangle
 * of V, whose diagonal is then the tridiagonal's. */
static WZ_VEC_CLONES WZ_HOT void tred1(int n, double *V, double *d, double *e)
{
#define v(i, j) V[(size_t)(j) * n + (i)] /* the transpose, as in tred2 */
	for (int j = 0; j < n; j++)
		d[j] = v(n - 1, j);
	for (int i = n - 1; i > 0; i--) {
		double scale = 0.0, h = 0.0;
		for (int k = 0; k < i; k++)
			scale += fabs(d[k]);
		if (scale == 0.0) {
			e[i] = d[i - 1];
			for (int j = 0; j < i; j++) {
				d[j] = v(i - 1, j);
				v(i, j) = 0.0;
			}
		} else {
			for (int k = 0; k < i; k++) {
				d[k] /= scale;
				h += d[k] * d[k];
			}
			double f = d[i - 1];
			double g = sqrt(h);
			if (f > 0)
				g = -g;
			e[i] = scale * g;
			h = h - f * g;
			d[i - 1] = f - g;
			for (int j = 0; j < i; j++)
				e[j] = 0.0;
			for (int j = 0; j < i; j++) {
				f = d[j];
				g = e[j] + v(j, j) * f;
				for (int k = j + 1; k <= i - 1; k++) {
					g += v(k, j) * d[k];
					e[k] += v(k, j) * f;
				}
				e[j] = g;
			}
			f = 0.0;
			for (int j = 0; j < i; j++) {
				e[j] /= h;
				f += e[j] * d[j];
			}
			double hh = f / (h + h);
			for (int j = 0; j < i; j++)
				e[j] -= hh * d[j];
			for (int j = 0; j < i; j++) {
				f = d[j];
				g = e[j];
				for (int k = j; k <= i - 1; k++)
					v(k, j) -= (f * e[k] + g * d[k]);
				d[j] = v(i - 1, j);
				v(i, j) = 0.0;
			}
		}
	}
	for (int j = 0; j < n; j++)
		d[j] = v(j, j);
	e[0] = 0.0;
#undef v
}

static int by_decreasing(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x < y) - (x > y);
}

int wzc_sym_eigenvalues(double *a, int n, double *w)
{
	if (n <= 0)
		return 0;
	double *e = malloc(sizeof *e * (size_t)n);
	if (!e)
		return WZC_EIG_NOMEM;
	/* the lower triangle mirrored into the upper, which tred1 reads as
	 * the lower triangle of the transpose */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			a[(size_t)j * n + i] = a[(size_t)i * n + j];
	tred1(n, a, w, e);
	int rc = tql2(n, NULL, w, e);
	free(e);
	if (!rc)
		qsort(w, (size_t)n, sizeof *w, by_decreasing);
	return rc;
}

int wzc_sym_eigen(double *a, int n, double *w)
{
	if (n <= 0)
		return 0;
	double *e = malloc(sizeof *e * (size_t)n);
	int *order = malloc(sizeof *order * (size_t)n);
	double *vt = malloc(sizeof *vt * (size_t)n * (size_t)n);
	if (!e || !order || !vt) {
		free(e);
		free(order);
		free(vt);
		return WZC_EIG_NOMEM;
	}
	/* into the layout tred2 and tql2 work on (the transpose) */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			vt[(size_t)j * n + i] = a[(size_t)i * n + j];
	tred2(n, vt, w, e);
	int rc = tql2(n, vt, w, e);
	if (!rc) {
		/* Columns of the result, rows of vt, are the eigenvectors; sort by
		 * decreasing value (selection sort: n is at most a few thousand)
		 * and write them as rows. */
		for (int i = 0; i < n; i++)
			order[i] = i;
		for (int i = 0; i < n; i++) {
			int best = i;
			for (int j = i + 1; j < n; j++)
				if (w[order[j]] > w[order[best]])
					best = j;
			int t = order[i];
			order[i] = order[best];
			order[best] = t;
		}
		for (int k = 0; k < n; k++)
			memcpy(a + (size_t)k * n, vt + (size_t)order[k] * n, sizeof *a * (size_t)n);
		for (int k = 0; k < n; k++)
			e[k] = w[order[k]];
		memcpy(w, e, sizeof *w * (size_t)n);
	}
	free(e);
	free(order);
	free(vt);
	return rc;
}
