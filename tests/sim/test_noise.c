/* The p99's 95% interval (metrics.h) and what the search makes of it: the
 * interval holds the true p99 about 95% of the time, narrows with the run,
 * and a search whose deciding run has a target inside it says so. */
#include "tests/tap.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/metrics.h"
#include "sim/search.h"

static uint64_t state = 88172645463325252ull;

static double uniform(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return ((double)(state >> 11) + 0.5) / 9007199254740992.0;
}

/* Exponential samples of mean 1 s: the true p99 is ln 100 s. */
static void fill(wzs_hist *h, int n)
{
	memset(h, 0, sizeof *h);
	for (int i = 0; i < n; i++)
		wzs_hist_add(h, -log(uniform()));
}

int main(void)
{
	wzs_hist *h = malloc(sizeof *h);
	if (!h)
		return 1;
	const double truth = log(100.0);
	int trials = 400, covered = 0;
	wzs_summary s;
	for (int t = 0; t < trials; t++) {
		fill(h, 1300); /* the tail of a short run: 13 requests above the p99 */
		wzs_hist_summary(h, &s);
		covered += s.p99_lo <= truth && truth <= s.p99_hi;
	}
	ok(covered >= 0.92 * trials && covered <= trials,
	   "the 95%% interval of a 1,300-sample p99 holds the true p99 in %d of %d runs", covered,
	   trials);
	fill(h, 1300);
	wzs_hist_summary(h, &s);
	double narrow_short = s.p99_hi - s.p99_lo;
	ok(s.p99_lo <= s.p99 && s.p99 <= s.p99_hi, "the p99 lies in its interval (%.3f <= %.3f <= %.3f)",
	   s.p99_lo, s.p99, s.p99_hi);
	fill(h, 130000);
	wzs_hist_summary(h, &s);
	double narrow_long = s.p99_hi - s.p99_lo;
	ok(narrow_long < narrow_short / 5,
	   "a hundred times the samples: an interval about ten times narrower (%.4f s, %.4f s)",
	   narrow_short, narrow_long);
	memset(h, 0, sizeof *h);
	wzs_hist_summary(h, &s);
	ok(s.p99_lo == 0 && s.p99_hi == 0, "no samples: no interval");

	/* The quantiles in one walk against one walk each: random
	 * histograms with values at or below the lowest bin, random and
	 * repeated probabilities in any order, 1 and ones below 1/n. */
	int same = 1, asked = 0;
	for (int t = 0; t < 300; t++) {
		memset(h, 0, sizeof *h);
		int n = t % 7 == 0 ? t % 3 : 1 + (int)(uniform() * 5000);
		for (int i = 0; i < n; i++) {
			double u = uniform();
			wzs_hist_add(h, u < 0.1 ? 0 : u < 0.2 ? 1e-9 : -log(uniform()) * (1 + t % 5));
		}
		double p[WZS_HIST_MAX_QUANTILES], q[WZS_HIST_MAX_QUANTILES];
		int np = 1 + t % WZS_HIST_MAX_QUANTILES;
		for (int i = 0; i < np; i++) {
			double u = uniform();
			p[i] = u < 0.1 ? 1.0 : u < 0.2 ? 1e-6 : u < 0.3 && i > 0 ? p[i - 1] : uniform();
		}
		wzs_hist_quantiles(h, p, np, q);
		for (int i = 0; i < np; i++)
			same &= q[i] == wzs_hist_quantile(h, p[i]);
		asked += np;
	}
	ok(same, "%d quantiles of 300 random histograms in one walk: each one's own walk's", asked);

	wzs_params p;
	wzs_params_default(&p);
	wzs_result r;
	memset(&r, 0, sizeof r);
	r.completed = 1000;
	r.ttft.p99 = 1;
	r.ttft.p99_lo = 0.8;
	r.ttft.p99_hi = 1.2;
	r.tpot.n = 1000;
	r.tpot.p99 = 0.09;
	r.tpot.p99_lo = 0.08;
	r.tpot.p99_hi = 0.095;
	ok(!wzs_within_noise(&p, &r), "targets outside both intervals: a clear verdict");
	r.tpot.p99_hi = 0.12;
	ok(wzs_within_noise(&p, &r), "the TPOT target inside its interval: within noise");
	r.refused = 1;
	ok(!wzs_within_noise(&p, &r), "a refusal is no p99 noise");
	free(h);
	return tap_done();
}
