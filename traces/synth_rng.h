/* The synthetic generators' random numbers, drawn from wzplan's seeded
 * generator (common/wz_rng.h), whose integer stream is fixed by its
 * published algorithm on every platform.  Normals use Marsaglia's polar method, whose only libm call is
 * log() (sqrt is exactly rounded by IEEE 754), so the values can differ at
 * most in the last bit of a log between C libraries. */
#ifndef WZT_SYNTH_RNG_H
#define WZT_SYNTH_RNG_H

#include <math.h>
#include <stdint.h>

#include "common/wz_rng.h"

typedef struct {
	wz_rng core;
	double spare; /* the polar method's second normal */
	int has_spare;
} wzt_synth_rng;

/* A stream named by up to four numbers (seed, purpose, layer, window):
 * each is folded through splitmix64, so nearby seeds give unrelated
 * streams. */
static inline void wzt_rng_init(wzt_synth_rng *r, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t key = a;
	key = wz_splitmix64(&key) ^ b;
	key = wz_splitmix64(&key) ^ c;
	key = wz_splitmix64(&key) ^ d;
	wz_rng_seed(&r->core, key);
	r->has_spare = 0;
	r->spare = 0;
}

/* Uniform in (0, 1), never exactly 0 (it feeds log()). */
static inline double wzt_rng_uniform(wzt_synth_rng *r)
{
	return wz_rng_uniform(&r->core);
}

static inline double wzt_rng_normal(wzt_synth_rng *r)
{
	if (r->has_spare) {
		r->has_spare = 0;
		return r->spare;
	}
	double u, v, s;
	do {
		u = 2.0 * wzt_rng_uniform(r) - 1.0;
		v = 2.0 * wzt_rng_uniform(r) - 1.0;
		s = u * u + v * v;
	} while (s >= 1.0 || s == 0.0);
	double f = sqrt(-2.0 * log(s) / s);
	r->spare = v * f;
	r->has_spare = 1;
	return u * f;
}

/* Student-t with an even number nu of degrees of freedom, scaled to unit
 * variance (nu > 2).  A chi-square with even nu is -2 ln of a product of
 * nu/2 uniforms: one log instead of nu squared normals. */
static inline double wzt_rng_student_unit(wzt_synth_rng *r, int nu)
{
	double prod = 1.0;
	for (int i = 0; i < nu / 2; i++)
		prod *= wzt_rng_uniform(r);
	double chi2 = -2.0 * log(prod);
	return wzt_rng_normal(r) * sqrt((nu - 2) / chi2);
}

#endif
