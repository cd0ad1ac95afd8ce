/* What any coder can reach at a rate, family by family: the Gaussian
 * rate-distortion bound (reverse water-filling over each layer's joint
 * latent + position covariance spectrum) of the calibration window, at
 * BITS bits/value, beside fp8-mix's nmse measured on the test window of
 * the same family, and the rate at which the bound comes down to it.
 * Where the bound at BITS is above fp8-mix's nmse, no coder at BITS
 * bits/value can match fp8-mix's error on that family (for a Gaussian
 * source; a heavier-tailed one of the same covariance is cheaper to code,
 * so the bound is an upper bound of the least error there).
 * Usage: bench_rd5 BITS CAL TEST [CAL TEST ...] (cache traces). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/formats/format.h"
#include "codec/measure/metrics.h"
#include "runs/measure.h"
#include "traces/cache_trace.h"

/* fp8-mix's nmse on the window (both parts) */
static double fp8_nmse(const wzc_window *w, wz_diag *d)
{
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzc_errors *e = NULL;
	double v = NAN;
	if (!wzc_format_parse("fp8-mix", &fmt, d) &&
	    !wzc_codec_new(&fmt, w->L, w->R, w->P, NULL, &c, d) && !wzc_measure(w, c, &e, d))
		v = wzc_metric_ci(e, WZC_M_NMSE, 0, 1).value;
	wzc_errors_free(e);
	wzc_codec_free(c);
	return v;
}

/* the rate at which the bound comes down to nmse: bisection, the bound
 * falling with the rate */
static double rate_for(const wzc_spectrum *sp, double nmse)
{
	double lo = 0, hi = 32;
	for (int it = 0; it < 60; it++) {
		double mid = 0.5 * (lo + hi);
		if (wzc_spectrum_bound_nmse(sp, mid) > nmse)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

int main(int argc, char **argv)
{
	if (argc < 4 || (argc - 2) % 2) {
		fprintf(stderr, "usage: bench_rd5 BITS CAL TEST [CAL TEST ...]\n");
		return 2;
	}
	double bits = atof(argv[1]);
	printf("%-16s %12s %12s %12s %10s %12s  %s\n", "family (test)", "bound(cal)", "bound(test)",
	       "fp8-mix", "bound/fp8", "b/v to fp8", "at this rate");
	for (int i = 2; i + 1 < argc; i += 2) {
		wzt_cache_trace *cal = NULL, *test = NULL;
		wz_diag d;
		if (wzt_cache_trace_read(argv[i], &cal, &d) || wzt_cache_trace_read(argv[i + 1], &test, &d)) {
			fprintf(stderr, "bench_rd5: %s\n", d.msg);
			wzt_cache_trace_free(cal);
			return 2;
		}
		wzc_window cw = wz_codec_window(cal, NULL), tw = wz_codec_window(test, NULL);
		wzc_spectrum *sc = NULL, *st = NULL;
		if (wzc_spectrum_of(&cw, &sc, &d) || wzc_spectrum_of(&tw, &st, &d)) {
			fprintf(stderr, "bench_rd5: %s\n", d.msg);
			return 2;
		}
		double bc = wzc_spectrum_bound_nmse(sc, bits), bt = wzc_spectrum_bound_nmse(st, bits);
		double f = fp8_nmse(&tw, &d);
		printf("%-16s %12.3e %12.3e %12.3e %10.3f %12.2f  %s\n", test->window ? test->window : argv[i + 1],
		       bc, bt, f, bc / f, rate_for(sc, f),
		       bc > f ? "no coder matches fp8-mix's nmse" : "a coder can match fp8-mix");
		wzc_spectrum_free(sc);
		wzc_spectrum_free(st);
		wzt_cache_trace_free(cal);
		wzt_cache_trace_free(test);
	}
	return 0;
}
