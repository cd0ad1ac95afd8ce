/* The one random-number generator of wzplan: xoshiro256** (Blackman and
 * Vigna) seeded through splitmix64.  Our own rather than rand()/random():
 * those differ between C libraries and keep one global state, while a seed
 * must give the same bytes on every platform and every user of randomness
 * needs independent streams.  Distributions built on it live with their
 * users (synthetic caches, traffic samplers, the simulator). */
#ifndef WZ_RNG_H
#define WZ_RNG_H

#include <stdint.h>

typedef struct {
	uint64_t s[4];
} wz_rng;

/* One splitmix64 step; also mixes seeds into independent stream keys. */
static inline uint64_t wz_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Seeds the state from a key; splitmix64 spreads any key (0 included) over
 * the whole state, which xoshiro needs to be nonzero. */
static inline void wz_rng_seed(wz_rng *r, uint64_t key)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = wz_splitmix64(&key);
}

static inline uint64_t wz_rng_next(wz_rng *r)
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

/* Uniform in (0, 1): 53 random bits shifted by half a step, so never 0 and
 * logarithms stay finite. */
static inline double wz_rng_uniform(wz_rng *r)
{
	return ((double)(wz_rng_next(r) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

#endif
