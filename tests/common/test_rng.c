/* Tests of the exponential ziggurat (common/wz_rng.h): its committed
 * tables against the recurrence they come from, its draws against the
 * exponential distribution, and the same draws from the same seed.
 *
 *   test_rng            the TAP checks
 *   test_rng --print    writes the tables' source, common/wz_rng_table.c */
#include <float.h>
#include <inttypes.h>
#include <stdint.h>

#include "common/wz_rng.h"
#include "tests/tap.h"

/* Marsaglia and Tsang's constants for 256 layers: where the tail starts,
 * and the area of each layer (the base layer's with its tail). */
static const long double zig_r = 7.69711747013104972L;
static const long double zig_v = 0.0039496598225815571993L;

typedef struct {
	double w[WZ_RNG_EXP_LAYERS], f[WZ_RNG_EXP_LAYERS];
	uint64_t k[WZ_RNG_EXP_LAYERS];
	double top; /* x_256 as the recurrence ends it: 0 if r and v agree */
} zig_tables;

/* The tables from the recurrence, in long double, each rounded to double
 * once: x_0 = v / exp(-r) (the base layer's width, its tail's area
 * included), x_1 = r, x_{i+1} = -log(v / x_i + exp(-x_i)), x_256 = 0. */
static void zig_compute(zig_tables *t)
{
	long double x[WZ_RNG_EXP_LAYERS + 1];
	x[0] = zig_v / expl(-zig_r);
	x[1] = zig_r;
	for (int i = 1; i < WZ_RNG_EXP_LAYERS; i++)
		x[i + 1] = -logl(zig_v / x[i] + expl(-x[i]));
	t->top = (double)x[WZ_RNG_EXP_LAYERS];
	x[WZ_RNG_EXP_LAYERS] = 0;
	for (int i = 0; i < WZ_RNG_EXP_LAYERS; i++) {
		t->w[i] = ldexp((double)x[i], -53);
		/* The core's edge: r in the base layer, x_{i+1} above it. */
		double edge = (double)(i == 0 ? zig_r : x[i + 1]);
		t->k[i] = (uint64_t)floorl((long double)edge / t->w[i]);
		t->f[i] = (double)expl(-x[i + 1]);
	}
}

static void print_doubles(const char *name, const double *v)
{
	printf("\nconst double %s[WZ_RNG_EXP_LAYERS] = {\n", name);
	for (int i = 0; i < WZ_RNG_EXP_LAYERS; i++)
		printf("%s%a,%s", i % 3 ? " " : "\t", v[i], i % 3 == 2 || i == 255 ? "\n" : "");
	printf("};\n");
}

static void print_tables(const zig_tables *t)
{
	printf("/* The exponential ziggurat's tables (common/wz_rng.h), written by\n"
	       " * `tests/common/test_rng --print > common/wz_rng_table.c`: do not edit.\n"
	       " * Marsaglia and Tsang's r = 7.69711747013104972 and v =\n"
	       " * 0.0039496598225815571993; x_0 = v / exp(-r), x_1 = r,\n"
	       " * x_{i+1} = -log(v / x_i + exp(-x_i)) in long double (x86-64, glibc),\n"
	       " * x_256 = 0, each rounded to double once.  Constants, written as hex\n"
	       " * floats, rather than computed at start-up, so that every platform\n"
	       " * draws with the same bytes whatever its libm; test_rng recomputes them\n"
	       " * and checks these against the recurrence. */\n"
	       "#include \"common/wz_rng.h\"\n");
	printf("\n/* x_i / 2^53 */");
	print_doubles("wz_rng_exp_w", t->w);
	printf("\n/* floor(x_{i+1} / w_i); floor(r / w_0) */\n");
	printf("const uint64_t wz_rng_exp_k[WZ_RNG_EXP_LAYERS] = {\n");
	for (int i = 0; i < WZ_RNG_EXP_LAYERS; i++)
		printf("%sUINT64_C(0x%014" PRIx64 "),%s", i % 3 ? " " : "\t", t->k[i],
		       i % 3 == 2 || i == 255 ? "\n" : "");
	printf("};\n");
	printf("\n/* exp(-x_{i+1}) */");
	print_doubles("wz_rng_exp_f", t->f);
}

static double rel_diff(double a, double b)
{
	return a == b ? 0 : fabs(a - b) / fmax(fabs(a), fabs(b));
}

/* The committed tables against the recurrence, and against what they
 * stand for: layers of equal area v, thresholds at the cores' edges, a
 * fast path of 97.8% of draws. */
static void test_tables(void)
{
	zig_tables t;
	zig_compute(&t);
	/* 255 steps of the recurrence in double lose some 3e-14 at the top;
	 * long double keeps the rounding of the committed values. */
	double tol = LDBL_MANT_DIG > DBL_MANT_DIG ? 1e-14 : 1e-13, worst = 0;
	for (int i = 0; i < WZ_RNG_EXP_LAYERS; i++) {
		worst = fmax(worst, rel_diff(t.w[i], wz_rng_exp_w[i]));
		worst = fmax(worst, rel_diff(t.f[i], wz_rng_exp_f[i]));
		worst = fmax(worst, rel_diff((double)t.k[i], (double)wz_rng_exp_k[i]));
	}
	ok(worst <= tol, "the tables are the recurrence's within %g (worst %.3g)", tol, worst);
	ok(fabs(t.top) < 1e-12, "the recurrence closes at the top: x_256 = %.3g", t.top);
	ok((double)zig_r == WZ_RNG_EXP_R, "the tail starts at the tables' r");

	double two53 = 0x1p53, area_worst = 0, fast = 0;
	area_worst = rel_diff(wz_rng_exp_w[0] * two53 * wz_rng_exp_f[0], (double)zig_v);
	for (int i = 1; i < WZ_RNG_EXP_LAYERS; i++) {
		double area = wz_rng_exp_w[i] * two53 * (wz_rng_exp_f[i] - wz_rng_exp_f[i - 1]);
		area_worst = fmax(area_worst, rel_diff(area, (double)zig_v));
	}
	ok(area_worst < 1e-12, "every layer's area is v within %.3g", area_worst);
	int cores_inside = 1;
	for (int i = 0; i < WZ_RNG_EXP_LAYERS; i++) {
		fast += (double)wz_rng_exp_k[i] / two53 / WZ_RNG_EXP_LAYERS;
		/* The last j of the core stays below its edge. */
		double edge = i == 0 ? WZ_RNG_EXP_R : i == 255 ? 0 : wz_rng_exp_w[i + 1] * two53;
		if (wz_rng_exp_k[i])
			cores_inside &= (double)(wz_rng_exp_k[i] - 1) * wz_rng_exp_w[i] < edge;
		cores_inside &= (double)(wz_rng_exp_k[i] + 1) * wz_rng_exp_w[i] >= edge;
	}
	ok(cores_inside, "each layer's threshold is its core's edge");
	/* The paper's 98.9% is the share of 64-bit draws that give a
	 * variate (1 / (256 v)), wedge tests included; the fast path's is
	 * smaller. */
	ok(fast > 0.977 && fast < 0.979, "the fast path takes %.4f of draws", fast);
	double yield = 1 / (WZ_RNG_EXP_LAYERS * (double)zig_v);
	ok(yield > 0.9888 && yield < 0.9892, "%.4f of 64-bit draws give a variate", yield);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Draws against the exponential: Kolmogorov-Smirnov, the mean and the
 * variance, the tail's share and each layer's x-range's share. */
static void test_distribution(void)
{
	enum { N = 2000000, BINS = WZ_RNG_EXP_LAYERS };
	double *d = malloc(N * sizeof *d);
	if (!ok(d != NULL, "room for %d draws", N))
		return;
	wz_rng g;
	wz_rng_seed(&g, 20001);
	int sane = 1;
	double sum = 0;
	for (int i = 0; i < N; i++) {
		d[i] = wz_rng_exp1(&g);
		sane &= isfinite(d[i]) && d[i] >= 0;
		sum += d[i];
	}
	ok(sane, "no draw negative or not finite");
	double mean = sum / N, ss = 0;
	for (int i = 0; i < N; i++)
		ss += (d[i] - mean) * (d[i] - mean);
	double var = ss / (N - 1);
	/* Standard errors: sd 1 / sqrt(n) for the mean; the variance's from
	 * the fourth central moment, 9 for the exponential. */
	ok(fabs(mean - 1) < 4 / sqrt(N), "mean %.6f within 4 standard errors of 1", mean);
	ok(fabs(var - 1) < 4 * sqrt(8.0 / N), "variance %.6f within 4 standard errors of 1", var);

	/* Bin b < 255 holds x in [x_{b+2}, x_{b+1}) (x_256 = 0), layer
	 * b + 1's part outside the layers above; bin 255 is the tail. */
	double lo[BINS], hi[BINS];
	for (int b = 0; b < BINS - 1; b++) {
		hi[b] = wz_rng_exp_w[b + 1] * 0x1p53;
		lo[b] = b + 2 < BINS ? wz_rng_exp_w[b + 2] * 0x1p53 : 0;
	}
	lo[BINS - 1] = WZ_RNG_EXP_R, hi[BINS - 1] = INFINITY;

	qsort(d, N, sizeof *d, by_value);
	double ks = 0;
	for (int i = 0; i < N; i++) {
		double F = -expm1(-d[i]);
		ks = fmax(ks, fmax(fabs(F - (double)i / N), fabs(F - (double)(i + 1) / N)));
	}
	double ks_crit = 1.95 / sqrt(N);
	ok(ks < ks_crit, "Kolmogorov-Smirnov D = %.3g below the 0.1%% critical value %.3g", ks,
	   ks_crit);

	/* The sorted draws counted into the bins, in ascending order of x:
	 * the top layer's range first. */
	long count[BINS] = { 0 };
	int b = BINS - 2, i = 0;
	while (i < N) {
		if (d[i] < hi[b] || b == BINS - 1) {
			count[b]++;
			i++;
		} else {
			b = b == 0 ? BINS - 1 : b - 1;
		}
	}
	/* Past r the draws are r plus an exponential: their excess's mean 1,
	 * standard error 1 / sqrt(count). */
	double excess = 0;
	for (i = N - (int)count[BINS - 1]; i < N; i++)
		excess += d[i] - WZ_RNG_EXP_R;
	excess /= count[BINS - 1] ? (double)count[BINS - 1] : 1;
	ok(fabs(excess - 1) < 4 / sqrt((double)count[BINS - 1] + 1),
	   "the tail's excess over r has mean %.3f, within 4 standard errors of 1", excess);
	double chi2 = 0, worst_z = 0;
	int worst_bin = 0;
	for (b = 0; b < BINS; b++) {
		double p = exp(-lo[b]) - (b == BINS - 1 ? 0 : exp(-hi[b]));
		double want = N * p, z = (count[b] - want) / sqrt(want * (1 - p));
		chi2 += (count[b] - want) * (count[b] - want) / want;
		if (fabs(z) > fabs(worst_z))
			worst_z = z, worst_bin = b;
		if (b == BINS - 1)
			ok(fabs(z) < 4, "%ld draws past r, %.1f expected (%.2f sd)", count[b], want, z);
	}
	ok(fabs(worst_z) < 5, "each layer's x-range within 5 sd of its share (worst %.2f sd, "
	   "bin %d)", worst_z, worst_bin);
	/* The chi-square's 0.1% point for 255 degrees of freedom
	 * (Wilson-Hilferty). */
	double df = BINS - 1, c = 2 / (9 * df);
	double chi2_crit = df * pow(1 - c + 3.0902 * sqrt(c), 3);
	ok(chi2 < chi2_crit, "chi-square over the %d ranges %.1f below its 0.1%% point %.1f", BINS,
	   chi2, chi2_crit);
	free(d);
}

static void test_determinism(void)
{
	wz_rng a, b, c;
	wz_rng_seed(&a, 7);
	wz_rng_seed(&b, 7);
	wz_rng_seed(&c, 8);
	int same = 1, differ = 0;
	for (int i = 0; i < 100000; i++) {
		double x = wz_rng_exp1(&a), y = wz_rng_exp1(&b);
		same &= memcmp(&x, &y, sizeof x) == 0;
		differ += x != wz_rng_exp1(&c);
	}
	ok(same && !memcmp(&a, &b, sizeof a), "the same seed draws the same 100,000 exponentials");
	ok(differ > 99000, "another seed draws others (%d of 100,000 differ)", differ);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--print")) {
		zig_tables t;
		zig_compute(&t);
		print_tables(&t);
		return 0;
	}
	test_tables();
	test_distribution();
	test_determinism();
	return tap_done();
}
