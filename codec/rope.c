/* RoPE undone (docs/wz-format.md): the models' inverse frequencies, and
 * what undoing RoPE gains a profile's position part. */
#include <math.h>
#include <stdlib.h>

#include "codec/profile.h"

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
	const wzc_part_profile *q = &p->rope[l];
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
