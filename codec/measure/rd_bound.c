/* The Gaussian rate-distortion bound of a window (metrics.h): each layer's
 * sample covariance, its eigenvalues, and reverse water-filling over them. */
#include "codec/measure/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/profile/linalg.h"

/* Reverse water-filling: the water level theta whose rate
 * sum_k max(0, log2(lam_k / theta) / 2) is bits (0 when no lam_k > 0). */
static double rwf_level(const double *lam, int n, double bits)
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
	return exp2(hi);
}

/* sum_k min(theta, lam_k), negative eigenvalues (rounding) as 0. */
static double below_level(const double *lam, int n, double theta)
{
	double d = 0;
	for (int k = 0; k < n; k++)
		d += lam[k] < theta ? (lam[k] > 0 ? lam[k] : 0) : theta;
	return d;
}

/* The distortion at a rate of bits. */
static double rwf_distortion(const double *lam, int n, double bits)
{
	return below_level(lam, n, rwf_level(lam, n, bits));
}

/* The water level theta at which sum_k min(theta, lam_k) = dist (dist below
 * the total), and the rate that costs: sum_k max(0, log2(lam_k / theta) / 2). */
static double rwf_rate_for(const double *lam, int n, double dist)
{
	double lmax = 0, total = below_level(lam, n, INFINITY);
	for (int k = 0; k < n; k++)
		lmax = lam[k] > lmax ? lam[k] : lmax;
	if (!(dist < total) || !(lmax > 0))
		return 0;
	double lo = -200, hi = log2(lmax);
	for (int it = 0; it < 200; it++) {
		double mid = 0.5 * (lo + hi);
		if (below_level(lam, n, exp2(mid)) > dist)
			hi = mid;
		else
			lo = mid;
	}
	double theta = exp2(lo), rate = 0;
	for (int k = 0; k < n; k++)
		if (lam[k] > theta)
			rate += 0.5 * log2(lam[k] / theta);
	return rate;
}

/* The position part's loss when the latent and position blocks share one
 * water level at bits_total (NaN when out of memory). */
static double shared_level_rope_loss(const double *ll, int R, const double *lp, int P,
				     double bits_total)
{
	double *both = malloc(sizeof *both * (size_t)(R + P));
	if (!both)
		return NAN;
	memcpy(both, ll, sizeof *both * (size_t)R);
	memcpy(both + R, lp, sizeof *both * (size_t)P);
	double theta = rwf_level(both, R + P, bits_total);
	free(both);
	return below_level(lp, P, theta);
}

/* Layer l's capped distortion per token (see the header). */
static double capped_layer(const wzc_spectrum *sp, int l, double bits, double cap)
{
	int n = sp->n, R = sp->R, P = sp->P;
	double joint = rwf_distortion(sp->lam + (size_t)l * n, n, bits * n);
	if (!(cap > 0) || P < 1 || !sp->lam_latent || !sp->lam_rope)
		return joint;
	const double *ll = sp->lam_latent + (size_t)l * R, *lp = sp->lam_rope + (size_t)l * P;
	double dp = shared_level_rope_loss(ll, R, lp, P, bits * n);
	if (!(dp > cap))
		return joint; /* the cap does not bind (or no memory to tell) */
	double rl = bits * n - rwf_rate_for(lp, P, cap), d;
	if (rl > 0) {
		d = rwf_distortion(ll, R, rl) + cap;
	} else { /* the cap takes every bit: the latent keeps all its variance */
		d = rwf_distortion(lp, P, bits * n) + below_level(ll, R, INFINITY);
	}
	return d > joint ? d : joint;
}

double wzc_spectrum_capped_bound_nmse(const wzc_spectrum *sp, int l, double bits, const float *cap)
{
	if (l >= 0) {
		double d = capped_layer(sp, l, bits, cap ? cap[l] : 0) * sp->T;
		return sp->layer_energy[l] > 0 ? d / sp->layer_energy[l] : 0;
	}
	double dist = 0;
	for (int k = 0; k < sp->L; k++)
		dist += capped_layer(sp, k, bits, cap ? cap[k] : 0) * sp->T;
	return sp->energy > 0 ? dist / sp->energy : 0;
}

void wzc_spectrum_free(wzc_spectrum *s)
{
	if (!s)
		return;
	free(s->lam_latent);
	free(s->lam_rope);
	free(s->lam);
	free(s->layer_energy);
	free(s);
}

static wz_err spectrum(const wzc_window *w, int parts, wzc_spectrum **out, wz_diag *diag);

/* A decomposition's return as an error. */
static wz_err eig_error(int rc, wz_diag *diag)
{
	if (rc == WZC_EIG_NOMEM)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (rc)
		return wz_diag_set(diag, WZ_ERR_INTERNAL, "eigenvalues did not converge");
	return WZ_OK;
}

wz_err wzc_spectrum_of(const wzc_window *w, wzc_spectrum **out, wz_diag *diag)
{
	return spectrum(w, 0, out, diag);
}

wz_err wzc_spectrum_of_parts(const wzc_window *w, wzc_spectrum **out, wz_diag *diag)
{
	return spectrum(w, 1, out, diag);
}

/* WZ_HOT: the covariance's row updates vectorize (each entry's sum in the
 * same order, so the same doubles). */
static WZ_VEC_CLONES WZ_HOT wz_err spectrum(const wzc_window *w, int parts, wzc_spectrum **out, wz_diag *diag)
{
	int T = w->T, R = w->R, P = w->P, n = R + P;
	size_t un = (size_t)n;
	*out = NULL;
	wzc_spectrum *sp = calloc(1, sizeof *sp);
	double *cov = malloc(sizeof *cov * un * un), *mean = malloc(sizeof *mean * un);
	double *x = malloc(sizeof *x * un);
	wz_err rc = WZ_OK;
	double *block = parts ? malloc(sizeof *block * (size_t)R * R) : NULL;
	if (sp) {
		sp->lam = malloc(sizeof *sp->lam * un * (size_t)w->L);
		sp->layer_energy = calloc((size_t)(w->L > 0 ? w->L : 1), sizeof *sp->layer_energy);
		if (parts) {
			sp->lam_latent = malloc(sizeof *sp->lam_latent * (size_t)R * (size_t)w->L);
			sp->lam_rope = malloc(sizeof *sp->lam_rope * ((size_t)P * (size_t)w->L + 1));
		}
	}
	if (!sp || !sp->lam || !sp->layer_energy || !cov || !mean || !x ||
	    (parts && (!block || !sp->lam_latent || !sp->lam_rope))) {
		rc = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		goto out;
	}
	sp->L = w->L;
	sp->n = n;
	sp->T = T;
	sp->R = R;
	sp->P = P;
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
		/* The bound needs the spectrum only: no eigenvectors.  The parts'
		 * blocks first: the joint routine works in place. */
		for (int p = 0; parts && p < 2 && !rc; p++) {
			int m = p ? P : R, at = p ? R : 0;
			if (m < 1)
				continue;
			for (int i = 0; i < m; i++)
				memcpy(block + (size_t)i * m, cov + (size_t)(at + i) * un + at,
				       sizeof *block * (size_t)m);
			rc = eig_error(wzc_sym_eigenvalues(block, m, (p ? sp->lam_rope + (size_t)l * P
									: sp->lam_latent + (size_t)l * R)),
				       diag);
		}
		if (!rc)
			rc = eig_error(wzc_sym_eigenvalues(cov, n, sp->lam + (size_t)l * un), diag);
	}
out:
	free(block);
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
