/* The exponential ziggurat's slow path (wz_rng.h): wedges, the top layer
 * and the base layer's tail, 2.2% of draws (half of them rejected and
 * drawn again); the tables are in wz_rng_table.c. */
#include "common/wz_rng.h"

#include <math.h>

double wz_rng_exp1_slow(wz_rng *r, uint64_t u)
{
	for (;;) {
		unsigned layer = (unsigned)(u & (WZ_RNG_EXP_LAYERS - 1));
		uint64_t j = u >> 11;
		double x = (double)j * wz_rng_exp_w[layer];
		if (j < wz_rng_exp_k[layer])
			return x; /* a redrawn u inside its layer's core */
		if (layer == 0)
			/* Past r in the base layer: the exponential is memoryless,
			 * so r plus a fresh one (rare: 1 draw in 2,200). */
			return WZ_RNG_EXP_R - log(wz_rng_uniform(r));
		/* A wedge (or the top layer, all wedge): x stands if a height
		 * uniform over the layer's lies under the curve. */
		double below = wz_rng_exp_f[layer - 1], above = wz_rng_exp_f[layer];
		if (below + wz_rng_uniform(r) * (above - below) < exp(-x))
			return x;
		u = wz_rng_next(r);
	}
}
