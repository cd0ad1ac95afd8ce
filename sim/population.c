/* Draws for the synthetic closed population (population.h). */
#include "sim/population.h"

#include <math.h>

/* Geometric on 1, 2, ...: a session ends after each turn with probability
 * 1 / mean, so P(n > k) = q^k with q = 1 - 1 / mean, and n = 1 + floor(E /
 * -log q) for E a standard exponential (the inversion of a uniform, with
 * the ziggurat's E in place of its -log).  The scale is -log q. */
double wzs_pop_session_scale(const wzs_params *p)
{
	if (p->length_dist == WZS_DIST_FIXED || p->turns <= 1)
		return 0;
	double q = 1.0 - 1.0 / p->turns;
	return -log(q);
}

int32_t wzs_pop_session_turns_at(const wzs_params *p, wzs_rng *rng, double scale)
{
	if (p->length_dist == WZS_DIST_FIXED || p->turns <= 1)
		return p->turns <= 1 ? 1 : (int32_t)llround(p->turns);
	double n = 1.0 + floor(wz_rng_exp1(rng) / scale);
	return n > 1e9 ? 1000000000 : (int32_t)n;
}

int32_t wzs_pop_session_turns(const wzs_params *p, wzs_rng *rng)
{
	return wzs_pop_session_turns_at(p, rng, wzs_pop_session_scale(p));
}

/* A drawn length as a whole count of tokens, at least 1. */
static inline int64_t count_of(double v)
{
	int64_t n = (int64_t)wzs_llround(v);
	return n < 1 ? 1 : n;
}

static int64_t draw_tokens(const wzs_params *p, wzs_rng *rng, double mean)
{
	return count_of(p->length_dist == WZS_DIST_FIXED ? mean : wzs_rng_exp(rng, mean));
}

void wzs_pop_turn(const wzs_params *p, wzs_rng *rng, int64_t *prompt, int64_t *output)
{
	*prompt = draw_tokens(p, rng, p->prompt_tokens);
	*output = draw_tokens(p, rng, p->output_tokens);
}

double wzs_pop_think(const wzs_params *p, wzs_rng *rng)
{
	return p->length_dist == WZS_DIST_FIXED ? p->think_s : wzs_rng_exp(rng, p->think_s);
}

void wzs_pop_steady_start(const wzs_params *p, double scale, wzs_rng *rng, int64_t *ctx,
			  int32_t *turns_left)
{
	int32_t taken;
	if (p->length_dist == WZS_DIST_FIXED || p->turns <= 1) {
		/* Fixed lengths: uniformly placed in a session of exactly T turns. */
		int32_t total = wzs_pop_session_turns_at(p, rng, scale);
		taken = (int32_t)(wzs_rng_uniform(rng) * total);
		*turns_left = total - taken;
	} else {
		/* Geometric sessions are memoryless: the turns taken and the turns
		 * left are independent geometric counts. */
		taken = wzs_pop_session_turns_at(p, rng, scale) - 1;
		*turns_left = wzs_pop_session_turns_at(p, rng, scale);
	}
	if (p->length_dist == WZS_DIST_FIXED) {
		for (int32_t i = 0; i < taken; i++) {
			int64_t prompt, output;
			wzs_pop_turn(p, rng, &prompt, &output);
			*ctx += prompt + output;
		}
		return;
	}
	/* wzs_pop_turn's draws, with the stream and the sum in locals that
	 * can live in registers: a user's set-up draws tens of turns, and
	 * through the pointers each draw waited on the stores of the one
	 * before. */
	wzs_rng r = *rng;
	int64_t sum = *ctx;
	for (int32_t i = 0; i < taken; i++) {
		sum += count_of(wzs_rng_exp(&r, p->prompt_tokens)); /* the prompt first */
		sum += count_of(wzs_rng_exp(&r, p->output_tokens));
	}
	*rng = r;
	*ctx = sum;
}

double wzs_pop_first_delay(const wzs_params *p, wzs_rng *rng)
{
	return p->think_s * wzs_rng_uniform(rng);
}
