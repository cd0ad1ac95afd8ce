/* RoPE undone (docs/wz-format.md): the models' inverse frequencies, and
 * what undoing RoPE gains a profile's position part. */
#include <math.h>
#include <stdlib.h>

#include "codec/profile/profile.h"

void wzc_rope_freqs(int P, double base, double yarn_factor, double yarn_original,
		    double beta_fast, double beta_slow, double *freq)
{
	int half = P / 2;
	/* transformers' _compute_yarn_parameters (find_correction_range with
	 * truncate, linear_ramp_factor); dim is P */
	double low = 0, high = 0;
	if (yarn_factor > 1) {
		low = floor(P * log(yarn_original / (beta_fast * 2 * 3.14159265358979323846)) / (2 * log(base)));
		high = ceil(P * log(yarn_original / (beta_slow * 2 * 3.14159265358979323846)) / (2 * log(base)));
		low = low < 0 ? 0 : low;
		high = high > P - 1 ? P - 1 : high;
		if (low == high)
			high += 0.001;
	}
	for (int i = 0; i < half; i++) {
		double extra = 1 / pow(base, 2.0 * i / P), f = extra;
		if (yarn_factor > 1) {
			double ramp = (i - low) / (high - low);
			ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
			double keep = 1 - ramp; /* the share of the unscaled frequency */
			f = extra / yarn_factor * (1 - keep) + extra * keep;
		}
		/* the models hold their inverse frequencies in float32 */
		freq[i] = (double)(float)f;
	}
}

int wzc_profile_undoes_rope(const wzc_profile *p, int l)
{
	if (!p->rope_freq || l < 0 || l >= p->L)
		return 0;
	for (int i = 0; i < p->P / 2; i++)
		if (p->rope_freq[(size_t)l * (p->P / 2) + i] != 0)
			return 1;
	return 0;
}

double wzc_profile_rope_gain_db(const wzc_profile *p, int l)
{
	if (!wzc_profile_undoes_rope(p, l) || !wzc_profile_has_layer(p, l))
		return 0;
	/* a layer that predicts keeps the part's own statistics for the
	 * anchored tokens: the gain is of undoing RoPE alone */
	const wzc_part_profile *q = wzc_profile_predicts(p, l) ? &p->rope_plain[l] : &p->rope[l];
	int n = q->n;
	double *cached = calloc((size_t)n, sizeof *cached), mean_var = 0;
	if (!cached)
		return NAN;
	/* channel i's variance in the rotated-back domain, with its squared
	 * mean: what RoPE spreads over the pair at other positions */
	for (int i = 0; i < n; i++) {
		double v = (double)q->mean[i] * q->mean[i];
		for (int k = 0; k < n; k++)
			v += (double)q->basis[(size_t)k * n + i] * q->basis[(size_t)k * n + i] * q->var[k];
		cached[i] = v;
		mean_var += v / n;
	}
	const double *f = p->rope_freq + (size_t)l * (p->P / 2);
	for (int i = 0; i + 1 < n; i += 2)
		if (f[i / 2] != 0)
			cached[i] = cached[i + 1] = 0.5 * (cached[i] + cached[i + 1]);
	/* a floor far below any coded error, so that an empty component does
	 * not make the gain infinite */
	double floor_v = 1e-12 * mean_var, lg = 0;
	for (int i = 0; i < n; i++)
		lg += log10(fmax(cached[i], floor_v)) - log10(fmax((double)q->var[i], floor_v));
	free(cached);
	return n > 0 ? 10 * lg / n : 0;
}

/* G(w) = the mean of e^(i w p) over p = 0 .. n-1: (1/n) sin(n w/2) /
 * sin(w/2) e^(i w (n-1)/2), 1 where w is a multiple of 2 pi. */
static void mean_phase(double w, double n, double *re, double *im)
{
	double s = sin(0.5 * w);
	if (fabs(s) < 1e-15) {
		*re = 1;
		*im = 0;
		return;
	}
	double a = sin(0.5 * n * w) / (n * s), ph = 0.5 * w * (n - 1);
	*re = a * cos(ph);
	*im = a * sin(ph);
}

void wzc_rope_key_phases(int P, const double *freq, double keys, double *G)
{
	int np = P / 2;
	for (int i = 0; i < np; i++)
		for (int j = 0; j < np; j++) {
			double *g = G + 4 * ((size_t)i * np + j);
			mean_phase(freq[j] - freq[i], keys, &g[0], &g[1]);
			mean_phase(-(freq[i] + freq[j]), keys, &g[2], &g[3]);
		}
}

void wzc_rope_query_moment_add(const float *qv, int P, const double *G, double *M)
{
	int np = P / 2;
	size_t un = (size_t)P;
	for (int i = 0; i < np; i++)
		for (int j = 0; j < np; j++) {
			const double *g = G + 4 * ((size_t)i * np + j);
			double xi = qv[2 * i], yi = qv[2 * i + 1];
			double xj = qv[2 * j], yj = qv[2 * j + 1];
			/* z_i conj(z_j) G(f_j - f_i) and z_i z_j G(-(f_i + f_j)) */
			double cr = xi * xj + yi * yj, ci = yi * xj - xi * yj;
			double pr = xi * xj - yi * yj, pi = xi * yj + yi * xj;
			double ar = cr * g[0] - ci * g[1], ai = cr * g[1] + ci * g[0];
			double br = pr * g[2] - pi * g[3], bi = pr * g[3] + pi * g[2];
			double *m0 = M + (size_t)(2 * i) * un + 2 * j, *m1 = m0 + un;
			m0[0] += 0.5 * (ar + br);
			m0[1] += 0.5 * (bi - ai);
			m1[0] += 0.5 * (bi + ai);
			m1[1] += 0.5 * (ar - br);
		}
}
