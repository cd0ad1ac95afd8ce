/* The one random-number generator of wzplan: xoshiro256** (Blackman and
 * Vigna) seeded through splitmix64.  Our own rather than rand()/random():
 * those differ between C libraries and keep one global state, while a seed
 * must give the same bytes on every platform and every user of randomness
 * needs independent streams.  The standard exponential is here (any user
 * may need one fast); other distributions built on it live with their
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

/* Standard exponential (mean 1) by Marsaglia and Tsang's ziggurat ("The
 * Ziggurat Method for Generating Random Variables", J. Stat. Software
 * 5(8), 2000), 256 layers of equal area under exp(-x).  Our own rather
 * than -log(uniform): the simulator draws three exponentials a turn and
 * tens per user at start-up, and with glibc's log a draw took 4.9 ns
 * here, the ziggurat's 1.9 (a bare uniform 1.0; bench/bench_rng, and
 * docs/validation.md, "Simulator speed").  The draw is exact in
 * distribution, not an approximation of the logarithm.  The tables are
 * constants (wz_rng_table.c), so the fast path's draws are the same bytes
 * on every platform; the 2.2% that reach a wedge or the tail call the
 * library's exp or log, and are the same where those are.
 *
 * Layer i spans x in [0, x_i) (x_0 the base layer's width, x_1 = r the
 * tail's start, x_256 = 0).  One 64-bit draw gives the layer (its low 8
 * bits) and a 53-bit integer j (its top 53); x = j x_i / 2^53 lies under
 * the curve for sure when x < x_{i+1}, that is j below the layer's
 * threshold, and is returned: 97.8% of draws, one integer compare and
 * one multiply.  The rest (a wedge, the top layer, the base layer's
 * tail) take wz_rng_exp1_slow. */
#define WZ_RNG_EXP_LAYERS 256
/* Where the base layer's tail starts (the paper's r for 256 layers). */
#define WZ_RNG_EXP_R 7.69711747013104972
/* x_i / 2^53 per layer, so that x = j * wz_rng_exp_w[i]. */
extern const double wz_rng_exp_w[WZ_RNG_EXP_LAYERS];
/* j below it lies inside the curve: floor(x_{i+1} / wz_rng_exp_w[i]),
 * the base layer's floor(r / wz_rng_exp_w[0]); 0 for the top layer. */
extern const uint64_t wz_rng_exp_k[WZ_RNG_EXP_LAYERS];
/* exp(-x_{i+1}): layer i's top edge (1 for the top layer), and layer
 * i + 1's bottom edge. */
extern const double wz_rng_exp_f[WZ_RNG_EXP_LAYERS];

/* The rest of the draw whose first 64 bits u missed its layer's fast
 * test: a wedge's test, the tail, and if rejected, new draws. */
double wz_rng_exp1_slow(wz_rng *r, uint64_t u);

static inline double wz_rng_exp1(wz_rng *r)
{
	uint64_t u = wz_rng_next(r);
	unsigned layer = (unsigned)(u & (WZ_RNG_EXP_LAYERS - 1));
	uint64_t j = u >> 11;
	if (j < wz_rng_exp_k[layer])
		return (double)j * wz_rng_exp_w[layer];
	return wz_rng_exp1_slow(r, u);
}

#endif
