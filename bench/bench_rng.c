/* The cost of a standard exponential draw: the library's log of a uniform
 * (the simulator's draw before the ziggurat) against the ziggurat
 * (wz_rng_exp1, common/wz_rng.h), and a bare uniform as the floor, in the
 * same run.  Thread CPU ns per draw, the median of several runs of 10
 * million draws each, the draws summed so that none is optimized away.
 *
 *   bench_rng [REPEATS]   default 7 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/bench_util.h"
#include "common/wz_rng.h"

enum { DRAWS = 10000000 };

static double draw_uniform(wz_rng *r) { return wz_rng_uniform(r); }
static double draw_log(wz_rng *r) { return -log(wz_rng_uniform(r)); }
static double draw_ziggurat(wz_rng *r) { return wz_rng_exp1(r); }

/* ns per draw of one run; the loop is inlined per kind so that it times
 * the draw, not a call through a pointer. */
#define TIME_DRAWS(fn, sum_out)                                                \
	do {                                                                   \
		wz_rng g_;                                                     \
		wz_rng_seed(&g_, 12345);                                       \
		double s_ = 0, t0_ = bench_thread_cpu_s();                     \
		for (int i_ = 0; i_ < DRAWS; i_++)                             \
			s_ += fn(&g_);                                         \
		t_ = (bench_thread_cpu_s() - t0_) * 1e9 / DRAWS;               \
		sum_out += s_;                                                 \
	} while (0)

int main(int argc, char **argv)
{
	int repeats = argc > 1 ? atoi(argv[1]) : 7;
	if (repeats < 1 || repeats > 99) {
		fprintf(stderr, "usage: bench_rng [REPEATS]\n");
		return 2;
	}
	double tu[99], tl[99], tz[99], t_, sums = 0;
	for (int r = 0; r < repeats; r++) {
		TIME_DRAWS(draw_uniform, sums);
		tu[r] = t_;
		TIME_DRAWS(draw_log, sums);
		tl[r] = t_;
		TIME_DRAWS(draw_ziggurat, sums);
		tz[r] = t_;
	}
	double u = bench_median(tu, repeats), l = bench_median(tl, repeats);
	double z = bench_median(tz, repeats);
	printf("bench_rng: ns per draw, median of %d runs of %d draws (checksum %.6g)\n", repeats,
	       DRAWS, sums / (3.0 * repeats * DRAWS));
	printf("%-22s %8.2f\n", "uniform", u);
	printf("%-22s %8.2f\n", "-log(uniform)", l);
	printf("%-22s %8.2f\n", "ziggurat (wz_rng_exp1)", z);
	printf("%-22s %8.2f\n", "log / ziggurat", l / z);
	return 0;
}
