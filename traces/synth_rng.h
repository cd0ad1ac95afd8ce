/* The synthetic generators' random numbers: xoshiro256** seeded through
 * splitmix64.  Our own rather than rand()/random(), because those differ
 * between C libraries and a seed must give the same trace everywhere: the
 * integer stream here is fixed by its published algorithm on every
 * platform.  Normals use Marsaglia's polar method, whose only libm call is
 * log() (sqrt is exactly rounded by IEEE 754), so the values can differ at
 * most in the last bit of a log between C libraries. */
#ifndef WZT_SYNTH_RNG_H
#define WZT_SYNTH_RNG_H

#include <math.h>
#include <stdint.h>

typedef struct {
	uint64_t s[4];
	double spare; /* the polar method's second normal */
	int has_spare;
} wzt_rng;

/* splitmix64 step: also used to mix seeds into independent stream keys. */
static inline uint64_t wzt_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* A stream named by up to four numbers (seed, purpose, layer, window):
 * each is folded through splitmix64, so nearby seeds give unrelated
 * streams. */
static inline void wzt_rng_init(wzt_rng *r, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t key = a;
	key = wzt_splitmix64(&key) ^ b;
	key = wzt_splitmix64(&key) ^ c;
	key = wzt_splitmix64(&key) ^ d;
	for (int i = 0; i < 4; i++)
		r->s[i] = wzt_splitmix64(&key);
	r->has_spare = 0;
	r->spare = 0;
}

static inline uint64_t wzt_rng_next(wzt_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5;
	uint64_t result = ((x << 7) | (x >> 57)) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return result;
}

/* Uniform in (0, 1): 53 random bits, never exactly 0 (it feeds log()). */
static inline double wzt_rng_uniform(wzt_rng *r)
{
	return ((double)(wzt_rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static inline double wzt_rng_normal(wzt_rng *r)
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
static inline double wzt_rng_student_unit(wzt_rng *r, int nu)
{
	double prod = 1.0;
	for (int i = 0; i < nu / 2; i++)
		prod *= wzt_rng_uniform(r);
	double chi2 = -2.0 * log(prod);
	return wzt_rng_normal(r) * sqrt((nu - 2) / chi2);
}

#endif
