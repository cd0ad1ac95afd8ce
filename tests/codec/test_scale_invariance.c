/* A layer's scale does not change its quality (issue 10, item 3).  Real
 * caches differ by two orders of magnitude from layer to layer; scaling a
 * layer's latent by c and its absorbed queries by 1/c leaves the logits
 * unchanged, so a profile prepared on the scaled layer must plan the same
 * bits and reach the same attention KL against fp8-mix.  The previous
 * weighting divided the plain-error term by the layer's summed latent and
 * position energy, so a small latent lost its bits to the position part.
 * Layers are planned one by one, so one layer shows it: the window has
 * one, scaled by 2^-7 and 2^7. */
#include "tests/tap.h"

#include <stdint.h>

#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/formats/format.h"
#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"
#include "codec/wz/wz_plan.h"
#include "tests/codec/window.h"

static wzt_cache_trace *make(const char *split, uint64_t window_seed, int T, double c)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = WZT_FAMILY_MLA_B;
	p.seed = 11;
	p.L = 1;
	p.T = T;
	p.R = 128;
	p.P = 32;
	p.Q = 64;
	p.H = 8;
	p.window_seed = window_seed;
	p.split = split;
	wzt_cache_trace *t = synth_with(&p);
	if (!t)
		return NULL;
	for (size_t i = 0; i < (size_t)t->T * t->R; i++)
		t->latent[i] = (float)(t->latent[i] * c);
	for (size_t i = 0; i < (size_t)t->Q * t->H * t->R; i++)
		t->q_latent[i] = (float)(t->q_latent[i] / c);
	return t;
}

typedef struct {
	wzc_ci ratio[2];     /* attention KL against fp8-mix at the two rates */
	uint32_t *nlev[2];   /* the plans' level counts */
	int n;
} outcome;

static const double rates[2] = { 4.97, 5.44 };

static int run(double c, outcome *o)
{
	memset(o, 0, sizeof *o);
	wzt_cache_trace *cal = make("calibration", 0, 4096, c);
	wzt_cache_trace *test = make("test", UINT64_C(1) << 32, 2048, c);
	wz_diag d;
	wzc_profile *prof = NULL;
	int good = 0;
	if (!cal || !test)
		goto out;
	wzc_window cw = window_of(cal), tw = window_of(test);
	const wzc_window *cp = &cw;
	if (wzc_prepare(&cp, 1, NULL, &prof, &d)) {
		printf("# prepare: %s\n", d.msg);
		goto out;
	}
	wzc_format fp8;
	wzc_errors *ref = NULL;
	wzc_codec *cf = NULL;
	if (wzc_format_parse("fp8-mix", &fp8, &d) || wzc_codec_new(&fp8, 1, tw.R, tw.P, NULL, &cf, &d) ||
	    wzc_measure(&tw, cf, &ref, &d)) {
		printf("# fp8-mix: %s\n", d.msg);
		wzc_codec_free(cf);
		goto out;
	}
	wzc_codec_free(cf);
	good = 1;
	for (int r = 0; r < 2 && good; r++) {
		wzc_format f = { .id = WZC_FMT_WZ, .rate_bits = rates[r] };
		snprintf(f.name, sizeof f.name, "wz-%.2f", rates[r]);
		wzc_codec *cw2 = NULL;
		wzc_errors *e = NULL;
		if (wzc_codec_new(&f, 1, tw.R, tw.P, prof, &cw2, &d) || wzc_measure(&tw, cw2, &e, &d)) {
			printf("# %s: %s\n", f.name, d.msg);
			good = 0;
		} else {
			o->ratio[r] = wzc_ratio_ci(e, ref, WZC_M_KL, WZC_BOOT_DEFAULT, 1);
			const layer_plan *lp = wzc_wz_plan_layer(cw2->wz, 0);
			o->n = lp->n;
			o->nlev[r] = malloc(sizeof(uint32_t) * (size_t)lp->n);
			if (o->nlev[r])
				memcpy(o->nlev[r], lp->nlev, sizeof(uint32_t) * (size_t)lp->n);
		}
		wzc_errors_free(e);
		wzc_codec_free(cw2);
	}
	wzc_errors_free(ref);
out:
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	return good;
}

int main(void)
{
	outcome base, scaled;
	if (!ok(run(1, &base), "unscaled: prepare and measure"))
		return tap_done();
	for (int r = 0; r < 2; r++)
		printf("# unscaled, wz-%.2f: attention KL %.3f [%.3f, %.3f] of fp8-mix's\n", rates[r],
		       base.ratio[r].value, base.ratio[r].lo, base.ratio[r].hi);
	/* powers of two: the codec codes the cache rounded to bf16
	 * (wzc_encode_layer_at), and only a power of two scales a bf16 cache
	 * exactly (scaled by 100, the rounding's own realization moved the
	 * KL ratio by up to 12%) */
	static const double scales[] = { 1.0 / 128, 128 };
	for (size_t s = 0; s < 2; s++) {
		double c = scales[s];
		if (!ok(run(c, &scaled), "latent x %g: prepare and measure", c))
			continue;
		for (int r = 0; r < 2; r++) {
			int same = 0;
			for (int k = 0; base.nlev[r] && scaled.nlev[r] && k < base.n; k++)
				same += base.nlev[r][k] == scaled.nlev[r][k];
			printf("# latent x %g, wz-%.2f: attention KL %.3f [%.3f, %.3f] of fp8-mix's;"
			       " %d of %d level counts as unscaled\n",
			       c, rates[r], scaled.ratio[r].value, scaled.ratio[r].lo, scaled.ratio[r].hi,
			       same, base.n);
			/* rounding in the eigenvectors of a scaled covariance may
			 * move a count by one step here and there, no more */
			ok(same >= base.n * 95 / 100, "latent x %g, wz-%.2f: the plan is the unscaled one"
			   " (%d of %d counts)", c, rates[r], same, base.n);
			ok(scaled.ratio[r].value >= base.ratio[r].lo &&
				   scaled.ratio[r].value <= base.ratio[r].hi,
			   "latent x %g, wz-%.2f: KL ratio %.3f within the unscaled one's interval"
			   " [%.3f, %.3f]", c, rates[r], scaled.ratio[r].value, base.ratio[r].lo,
			   base.ratio[r].hi);
			free(scaled.nlev[r]);
		}
	}
	free(base.nlev[0]);
	free(base.nlev[1]);
	return tap_done();
}
