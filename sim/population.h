/* The synthetic closed population: what each user does next (turn lengths,
 * think times, how many turns a session lasts), drawn from the user's own
 * random stream. */
#ifndef WZS_POPULATION_H
#define WZS_POPULATION_H

#include <math.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/params.h"

/* Turns in a new session: geometric with mean p->turns (at least 1), or
 * exactly round(p->turns) with fixed lengths. */
int32_t wzs_pop_session_turns(const wzs_params *p, wzs_rng *rng);
/* The same draw with wzs_pop_session_scale(p) given, so that a run takes
 * its logarithm once rather than once a session. */
int32_t wzs_pop_session_turns_at(const wzs_params *p, wzs_rng *rng, double scale);
double wzs_pop_session_scale(const wzs_params *p);
/* A turn's new prompt and output tokens (each at least 1). */
void wzs_pop_turn(const wzs_params *p, wzs_rng *rng, int64_t *prompt /* OUT */,
		  int64_t *output /* OUT */);
/* Think time before the next turn. */
double wzs_pop_think(const wzs_params *p, wzs_rng *rng);
/* A user met at a random moment of its sessions, so that a run starts in
 * the steady state: draws the turns its session has taken (growing *ctx
 * from the initial context by their lengths) and the turns left; scale is
 * wzs_pop_session_scale(p), taken once a run. */
void wzs_pop_steady_start(const wzs_params *p, double scale, wzs_rng *rng,
			  int64_t *ctx /* IN/OUT */, int32_t *turns_left /* OUT */);

/* llround(v) (halves away from zero) without the library call, for the
 * token draws: exact where v - trunc(v) is (0 <= v < 2^52), llround
 * elsewhere. */
static inline long long wzs_llround(double v)
{
	if (v >= 0 && v < 0x1p52) {
		double t = (double)(long long)v;
		return (long long)t + (v - t >= 0.5);
	}
	return llround(v);
}

/* The first turn's delay from the start: users start out of step, at a
 * uniform phase of their think time, so the run begins near steady state. */
double wzs_pop_first_delay(const wzs_params *p, wzs_rng *rng);

#endif
