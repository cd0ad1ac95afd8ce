/* The Gaussian rate-distortion bound of a window (metrics.h): each layer's
 * sample covariance, its eigenvalues, and reverse water-filling over them. */
#include "codec/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/linalg.h"

/* Reverse water-filling: distortion sum_k min(theta, lam_k) at a rate of
 * sum_k max(0, log2(lam_k / theta) / 2) = bits. */
static double rwf_distortion(const double *lam, int n, double bits)
{
	double lo = -200, hi = 0, lmax = 0;
	for (int k = 0; k < n; k++)
		lmax = lam[k] > lmax ? lam[k] : lmax;
	if (!(lmax > 0))
		return 0;
	hi = log2(lmax);
	for (int it = 0; it < 200; it++) {
		double mid = 0.5 * (lo + hi), theta = exp2(mid), rate = 0;
		for (int k = 0; k < n; k++)
			if (lam[k] > theta)
				rate += 0.5 * log2(lam[k] / theta);
		if (rate > bits)
			lo = mid;
		else
			hi = mid;
	}
	double theta = exp2(hi), d = 0;
	for (int k = 0; k < n; k++)
		d += lam[k] < theta ? (lam[k] > 0 ? lam[k] : 0) : theta;
	return d;
}

void wzc_spectrum_free(wzc_spectrum *s)
{
	if (!s)
		return;
	free(s->lam);
	free(s->layer_energy);
	free(s);
}

wz_err wzc_spectrum_of(const wzc_window *w, wzc_spectrum **out, wz_diag *diag)
{
	int T = w->T, R = w->R, P = w->P, n = R + P;
	size_t un = (size_t)n;
	*out = NULL;
	wzc_spectrum *sp = calloc(1, sizeof *sp);
	double *cov = malloc(sizeof *cov * un * un), *mean = malloc(sizeof *mean * un);
	double *x = malloc(sizeof *x * un);
	wz_err rc = WZ_OK;
	if (sp) {
		sp->lam = malloc(sizeof *sp->lam * un * (size_t)w->L);
		sp->layer_energy = calloc((size_t)(w->L > 0 ? w->L : 1), sizeof *sp->layer_energy);
	}
	if (!sp || !sp->lam || !sp->layer_energy || !cov || !mean || !x) {
		rc = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		goto out;
	}
	sp->L = w->L;
	sp->n = n;
	sp->T = T;
	for (int l = 0; l < w->L && !rc; l++) {
		memset(cov, 0, sizeof *cov * un * un);
		memset(mean, 0, sizeof *mean * un);
		for (int t = 0; t < T; t++) {
			const float *a = w->latent + ((size_t)l * T + t) * R;
			const float *b = w->rope + ((size_t)l * T + t) * P;
			for (int i = 0; i < n; i++) {
				double v = i < R ? a[i] : b[i - R];
				mean[i] += v;
				sp->energy += v * v;
				sp->layer_energy[l] += v * v;
			}
		}
		for (int i = 0; i < n; i++)
			mean[i] /= T;
		for (int t = 0; t < T; t++) {
			const float *a = w->latent + ((size_t)l * T + t) * R;
			const float *b = w->rope + ((size_t)l * T + t) * P;
			for (int i = 0; i < n; i++)
				x[i] = (i < R ? a[i] : b[i - R]) - mean[i];
			for (int i = 0; i < n; i++) {
				double *ci = cov + (size_t)i * un;
				for (int j = 0; j <= i; j++)
					ci[j] += x[i] * x[j];
			}
		}
		for (int i = 0; i < n; i++)
			for (int j = 0; j <= i; j++)
				cov[(size_t)j * un + i] = cov[(size_t)i * un + j] /= T;
		/* The bound needs the spectrum only: no eigenvectors. */
		if (wzc_sym_eigenvalues(cov, n, sp->lam + (size_t)l * un))
			rc = wz_diag_set(diag, WZ_ERR_INTERNAL, "eigenvalues did not converge");
	}
out:
	free(cov);
	free(mean);
	free(x);
	if (rc)
		wzc_spectrum_free(sp);
	else
		*out = sp;
	return rc;
}

double wzc_spectrum_bound_nmse(const wzc_spectrum *sp, double bits)
{
	double dist = 0;
	for (int l = 0; l < sp->L; l++)
		dist += rwf_distortion(sp->lam + (size_t)l * sp->n, sp->n, bits * sp->n) * sp->T;
	return sp->energy > 0 ? dist / sp->energy : 0;
}

double wzc_spectrum_layer_bound_nmse(const wzc_spectrum *sp, int l, double bits)
{
	double dist = rwf_distortion(sp->lam + (size_t)l * sp->n, sp->n, bits * sp->n) * sp->T;
	return sp->layer_energy[l] > 0 ? dist / sp->layer_energy[l] : 0;
}

wz_err wzc_rd_bound_nmse(const wzc_window *w, double bits, double *nmse, wz_diag *diag)
{
	wzc_spectrum *sp;
	wz_err rc = wzc_spectrum_of(w, &sp, diag);
	if (rc)
		return rc;
	*nmse = wzc_spectrum_bound_nmse(sp, bits);
	wzc_spectrum_free(sp);
	return WZ_OK;
}
