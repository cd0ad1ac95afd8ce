/* The seeded random numbers behind synthetic arrivals and sampled lengths:
 * our own generator, so a seed gives the same trace on every platform
 * (rand() and random() differ between C libraries). */
#include <math.h>

#include "traces/traffic_import.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void wzt_rng_seed(wzt_rng *rng, uint64_t seed)
{
	/* splitmix64 spreads any seed (0 included) over the whole state;
	 * xoshiro must not start from all zeros. */
	for (int i = 0; i < 4; i++)
		rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** (Blackman and Vigna). */
uint64_t wzt_rng_next(wzt_rng *rng)
{
	uint64_t *s = rng->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double wzt_rng_uniform(wzt_rng *rng)
{
	/* 53 random bits, shifted by half a step so 0 never comes out. */
	return ((double)(wzt_rng_next(rng) >> 11) + 0.5) * 0x1.0p-53;
}

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
