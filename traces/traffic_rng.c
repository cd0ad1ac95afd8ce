/* The distributions behind synthetic arrivals and sampled lengths, drawn
 * from wzplan's seeded generator (common/wz_rng.h). */
#include <math.h>

#include "traces/traffic_import.h"

double wzt_rng_normal(wzt_rng *rng)
{
	/* Box-Muller; one of the pair is dropped so the stream does not
	 * depend on hidden state. */
	double u = wzt_rng_uniform(rng), v = wzt_rng_uniform(rng);
	return sqrt(-2.0 * log(u)) * cos(2.0 * 3.14159265358979323846 * v);
}

double wzt_rng_gamma(wzt_rng *rng, double shape, double scale)
{
	if (shape < 1.0) {
		/* Boost: Gamma(a) = Gamma(a + 1) * U^(1/a). */
		double u = wzt_rng_uniform(rng);
		return wzt_rng_gamma(rng, shape + 1.0, scale) * pow(u, 1.0 / shape);
	}
	double d = shape - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
	for (;;) {
		double x = wzt_rng_normal(rng);
		double v = 1.0 + c * x;
		if (v <= 0)
			continue;
		v = v * v * v;
		double u = wzt_rng_uniform(rng);
		if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
			return d * v * scale;
	}
}

double wzt_rng_weibull(wzt_rng *rng, double shape, double scale)
{
	return scale * pow(-log(wzt_rng_uniform(rng)), 1.0 / shape);
}
