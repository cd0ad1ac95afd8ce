/* Profile version 7's joint prediction (docs/wz-format.md, "Predicted
 * position part"): the ridge map from the latent to the rotated-back
 * position part, fitted on calibration tokens with its strength chosen by
 * two-fold validation, the cross-fitted residuals the profile's position
 * part is fitted to, and what the prediction gains. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/profile/predict_fit.h"
#include "codec/profile/predict.h"

int wzc_profile_predicts(const wzc_profile *p, int l)
{
	return p->predicts && l >= 0 && l < p->L && p->predicts[l] && p->pred_map &&
	       p->pred_map[l] && wzc_profile_has_layer(p, l);
}

/* 10 log10 of the ratio of geometric-mean variances, a floor of 1e-12 of
 * the mean variance keeping an empty component from making it infinite
 * (as wzc_profile_rope_gain_db). */
double wzc_pred_gain_of(const float *var_plain, const float *var_res, int n)
{
	double mean_var = 0, lg = 0;
	for (int i = 0; i < n; i++)
		mean_var += (double)var_plain[i] / n;
	double floor_v = 1e-12 * mean_var;
	for (int i = 0; i < n; i++)
		lg += log10(fmax((double)var_plain[i], floor_v)) - log10(fmax((double)var_res[i], floor_v));
	return n > 0 ? 10 * lg / n : 0;
}

double wzc_profile_pred_gain_db(const wzc_profile *p, int l)
{
	if (!wzc_profile_predicts(p, l))
		return 0;
	return wzc_pred_gain_of(p->rope_plain[l].var, p->rope[l].var, p->P);
}

static int is_sink(const wzc_window *w, int t)
{
	return w->positions ? w->positions[t] == 0 : t == 0;
}

/* The fold of token t: the window's first half 0, its second 1 (halves,
 * not alternate tokens: neighbours are alike, and the validation should
 * see tokens the fit did not). */
static int fold_of(const wzc_window *w, int t)
{
	return t >= w->T / 2;
}

/* Solves (G + lambda I) M = C for M (R x P) by Cholesky, in double: G is
 * R x R symmetric positive semidefinite, so with lambda > 0 the factor
 * exists.  a is R x R scratch.  -1 when it does not (lambda too small for
 * rounding). */
static WZ_VEC_CLONES int ridge_solve(const double *G, const double *C, int R, int P,
				     double lambda, double *a, double *M)
{
	size_t uR = (size_t)R, uP = (size_t)P;
	for (size_t i = 0; i < uR; i++)
		for (size_t j = 0; j <= i; j++)
			a[i * uR + j] = G[i * uR + j] + (i == j ? lambda : 0);
	for (size_t j = 0; j < uR; j++) {
		double d = a[j * uR + j];
		for (size_t k = 0; k < j; k++)
			d -= a[j * uR + k] * a[j * uR + k];
		if (!(d > 0))
			return -1;
		d = sqrt(d);
		a[j * uR + j] = d;
		for (size_t i = j + 1; i < uR; i++) {
			double s = a[i * uR + j];
			for (size_t k = 0; k < j; k++)
				s -= a[i * uR + k] * a[j * uR + k];
			a[i * uR + j] = s / d;
		}
	}
	memcpy(M, C, sizeof *M * uR * uP);
	for (size_t i = 0; i < uR; i++) { /* L y = C */
		for (size_t k = 0; k < i; k++) {
			double lik = a[i * uR + k];
			for (size_t c = 0; c < uP; c++)
				M[i * uP + c] -= lik * M[k * uP + c];
		}
		for (size_t c = 0; c < uP; c++)
			M[i * uP + c] /= a[i * uR + i];
	}
	for (size_t ii = uR; ii-- > 0;) { /* L' M = y */
		for (size_t k = ii + 1; k < uR; k++) {
			double lki = a[k * uR + ii];
			for (size_t c = 0; c < uP; c++)
				M[ii * uP + c] -= lki * M[k * uP + c];
		}
		for (size_t c = 0; c < uP; c++)
			M[ii * uP + c] /= a[ii * uR + ii];
	}
	return 0;
}

/* sum over held-out tokens of |y - M'x|^2 from the fold's moments: Eyy -
 * 2 tr(M'C) + tr(M'GM). */
static double heldout_error(const double *G, const double *C, double Eyy, const double *M, int R,
			    int P, double *tmp /* [R][P] */)
{
	size_t uR = (size_t)R, uP = (size_t)P;
	double e = Eyy;
	for (size_t i = 0; i < uR * uP; i++)
		e -= 2 * M[i] * C[i];
	memset(tmp, 0, sizeof *tmp * uR * uP);
	for (size_t i = 0; i < uR; i++)
		for (size_t k = 0; k < uR; k++) {
			double g = G[i * uR + k];
			for (size_t c = 0; c < uP; c++)
				tmp[i * uP + c] += g * M[k * uP + c];
		}
	for (size_t i = 0; i < uR * uP; i++)
		e += M[i] * tmp[i];
	return e;
}

/* The fold moments G (x x'), C (x y') and Eyy of the tokens of fold f
 * (sinks left out), x = latent - mean, y the rotated-back position part. */
static WZ_VEC_CLONES WZ_HOT void fold_moments(const wzc_window *const *ws, const wzc_window *const *rws,
					      int nw, int l, const float *mean, int f, double *G,
					      double *C, double *Eyy, double *x)
{
	int R = ws[0]->R, P = ws[0]->P;
	size_t uR = (size_t)R, uP = (size_t)P;
	memset(G, 0, sizeof *G * uR * uR);
	memset(C, 0, sizeof *C * uR * uP);
	*Eyy = 0;
	for (int w = 0; w < nw; w++)
		for (int t = 0; t < ws[w]->T; t++) {
			if (is_sink(ws[w], t) || fold_of(ws[w], t) != f)
				continue;
			const float *lat = ws[w]->latent + ((size_t)l * ws[w]->T + t) * uR;
			const float *y = rws[w]->rope + ((size_t)l * rws[w]->T + t) * uP;
			for (size_t i = 0; i < uR; i++)
				x[i] = (double)lat[i] - mean[i];
			for (size_t i = 0; i < uR; i++) {
				double xi = x[i];
				double *g = G + i * uR;
				for (size_t k = 0; k <= i; k++)
					g[k] += xi * x[k];
				double *c = C + i * uP;
				for (size_t j = 0; j < uP; j++)
					c[j] += xi * y[j];
			}
			for (size_t j = 0; j < uP; j++)
				*Eyy += (double)y[j] * y[j];
		}
	for (size_t i = 0; i < uR; i++)
		for (size_t k = i + 1; k < uR; k++)
			G[i * uR + k] = G[k * uR + i];
}

int wzc_pred_fit(const wzc_window *const *ws, const wzc_window *const *rws, int nw, int l,
		 const float *mean, float *map, float *const *res, double *alpha_out)
{
	int R = ws[0]->R, P = ws[0]->P;
	size_t uR = (size_t)R, uP = (size_t)P, nG = uR * uR, nC = uR * uP;
	double *G[2], *C[2], Eyy[2];
	double *Gall = malloc(sizeof(double) * nG), *Call = malloc(sizeof(double) * nC);
	double *a = malloc(sizeof(double) * nG), *M[2], *tmp = malloc(sizeof(double) * nC);
	double *x = malloc(sizeof(double) * uR);
	float *mf = malloc(sizeof(float) * nC), *pred = malloc(sizeof(float) * uP);
	G[0] = malloc(sizeof(double) * nG);
	G[1] = malloc(sizeof(double) * nG);
	C[0] = malloc(sizeof(double) * nC);
	C[1] = malloc(sizeof(double) * nC);
	M[0] = malloc(sizeof(double) * nC);
	M[1] = malloc(sizeof(double) * nC);
	int rc = -1;
	if (!Gall || !Call || !a || !tmp || !x || !mf || !pred || !G[0] || !G[1] || !C[0] || !C[1] ||
	    !M[0] || !M[1])
		goto done;
	for (int f = 0; f < 2; f++)
		fold_moments(ws, rws, nw, l, mean, f, G[f], C[f], &Eyy[f], x);
	for (size_t i = 0; i < nG; i++)
		Gall[i] = G[0][i] + G[1][i];
	for (size_t i = 0; i < nC; i++)
		Call[i] = C[0][i] + C[1][i];
	/* The ridge's strength relative to the latent's mean power per
	 * component (tr G / R over the tokens fitted), from a grid of decades,
	 * chosen by the held-out error summed over both folds: each fold's map
	 * fitted on the other. */
	static const double alphas[] = { 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1 };
	double best = INFINITY, alpha = 1;
	for (size_t ai = 0; ai < sizeof alphas / sizeof *alphas; ai++) {
		double err = 0;
		for (int f = 0; f < 2 && isfinite(err); f++) {
			const double *Gt = G[1 - f], *Ct = C[1 - f];
			double tr = 0;
			for (size_t i = 0; i < uR; i++)
				tr += Gt[i * uR + i];
			if (!(tr > 0) || ridge_solve(Gt, Ct, R, P, alphas[ai] * tr / R, a, M[f])) {
				err = INFINITY;
				break;
			}
			err += heldout_error(G[f], C[f], Eyy[f], M[f], R, P, tmp);
		}
		if (err < best) {
			best = err;
			alpha = alphas[ai];
		}
	}
	*alpha_out = alpha;
	/* The cross-fitted residuals: each fold's tokens less the prediction
	 * of the map fitted on the other fold, by the coder's own step. */
	for (int f = 0; f < 2; f++) {
		const double *Gt = G[1 - f], *Ct = C[1 - f];
		double tr = 0;
		for (size_t i = 0; i < uR; i++)
			tr += Gt[i * uR + i];
		if (!(tr > 0) || ridge_solve(Gt, Ct, R, P, alpha * tr / R, a, M[f]))
			memset(M[f], 0, sizeof(double) * nC);
		for (size_t i = 0; i < nC; i++)
			mf[i] = (float)M[f][i];
		for (int w = 0; w < nw; w++)
			for (int t = 0; t < ws[w]->T; t++) {
				if (fold_of(ws[w], t) != f)
					continue;
				const float *lat = ws[w]->latent + ((size_t)l * ws[w]->T + t) * uR;
				float *r = res[w] + ((size_t)l * rws[w]->T + t) * uP;
				wzc_pred_token(mf, mean, lat, R, P, pred);
				for (size_t j = 0; j < uP; j++)
					r[j] -= pred[j];
			}
	}
	/* The map itself, on every token. */
	double tr = 0;
	for (size_t i = 0; i < uR; i++)
		tr += Gall[i * uR + i];
	if (!(tr > 0) || ridge_solve(Gall, Call, R, P, alpha * tr / R, a, M[0]))
		memset(M[0], 0, sizeof(double) * nC);
	for (size_t i = 0; i < nC; i++)
		map[i] = (float)M[0][i];
	rc = 0;
done:
	free(Gall);
	free(Call);
	free(a);
	free(tmp);
	free(x);
	free(mf);
	free(pred);
	for (int f = 0; f < 2; f++) {
		free(G[f]);
		free(C[f]);
		free(M[f]);
	}
	return rc;
}
