/* KVTC (codec/kvtc/kvtc.c): its Gaussian quantizer table against the
 * closed forms, its fit refusing test windows, the bits it spends and the
 * error it reaches as the rate grows, and kvtc-<bits> through the codec
 * as codec measure runs it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/kvtc/kvtc.h"
#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"
#include "tests/codec/window.h"
#include "tests/tap.h"

static double nmse(const wzc_window *w, int l, const float *lat, const float *rope)
{
	double se = 0, en = 0;
	size_t nl = (size_t)w->T * w->R, np = (size_t)w->T * w->P;
	const float *x = w->latent + (size_t)l * nl, *r = w->rope + (size_t)l * np;
	for (size_t i = 0; i < nl; i++)
		se += (x[i] - lat[i]) * (double)(x[i] - lat[i]), en += x[i] * (double)x[i];
	for (size_t i = 0; i < np; i++)
		se += (r[i] - rope[i]) * (double)(r[i] - rope[i]), en += r[i] * (double)r[i];
	return se / en;
}

int main(void)
{
	/* 1 bit: levels +-sqrt(2/pi), error 1 - 2/pi (the optimal 1-bit
	 * quantizer of a Gaussian is uniform) */
	is_double(wzc_kvtc_gauss_error(1), 1 - 2 / M_PI, 1e-9, "1 bit: error 1 - 2/pi");
	is_double(wzc_kvtc_gauss_step(1), 2 * sqrt(2 / M_PI), 1e-6, "1 bit: step 2 sqrt(2/pi)");
	/* Max (1960), the uniform 4-level quantizer: step 0.9957, error 0.1188 */
	is_double(wzc_kvtc_gauss_step(2), 0.9957, 1e-3, "2 bits: step 0.9957 (Max 1960)");
	is_double(wzc_kvtc_gauss_error(2), 0.1188, 1e-3, "2 bits: error 0.1188 (Max 1960)");
	int dec = 1;
	for (int b = 1; b <= WZC_KVTC_MAX_BITS; b++)
		dec &= wzc_kvtc_gauss_error(b) < wzc_kvtc_gauss_error(b - 1) / 2.5;
	ok(dec, "each bit divides the error by more than 2.5");

	/* more calibration tokens than values a token, so that the covariance
	 * has full rank */
	wzt_cache_trace *cal = synth(WZT_FAMILY_MLA_B, 2, 2048, 0, 0, 0, 1, "calibration");
	wzt_cache_trace *test = synth(WZT_FAMILY_MLA_B, 2, 300, 0, 0, 0, 2, "test");
	if (!ok(cal && test, "synthetic windows"))
		return tap_done();
	wzc_window cw = window_of(cal), tw = window_of(test);
	const wzc_window *cp = &cw, *tp = &tw;
	wzc_kvtc *k = NULL;
	wz_diag d;
	ok(wzc_kvtc_fit(&tp, 1, NULL, &k, &d) == WZ_ERR_INPUT && strstr(d.msg, "test"),
	   "a test window is refused: %s", d.msg);
	if (!ok(!wzc_kvtc_fit(&cp, 1, NULL, &k, &d), "fitted on the calibration window"))
		return tap_done();
	int n = tw.R + tw.P;
	float *lat = malloc(sizeof *lat * tw.T * tw.R), *rope = malloc(sizeof *rope * tw.T * tw.P);
	double last = INFINITY;
	long lastbits = -1;
	static const double rates[] = { 1.0, 2.0, 3.0, 4.5, 6.0 };
	for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
		size_t bytes = 0;
		if (!ok(!wzc_kvtc_roundtrip(k, rates[r], 0, tw.T, tw.latent, tw.rope, NULL, lat, rope, &bytes, &d),
			"kvtc-%g: layer 0 coded", rates[r]))
			continue;
		double bpv = 8.0 * bytes / ((double)tw.T * n), e = nmse(&tw, 0, lat, rope);
		const uint8_t *a = wzc_kvtc_alloc(k, rates[r], 0);
		long sum = 0;
		for (int i = 0; i < n; i++)
			sum += a[i];
		/* the rate is met on the calibration sample; a test window is
		 * close to it */
		ok(bpv > 0.6 * rates[r] && bpv < 1.25 * rates[r],
		   "kvtc-%g: %.3f bits/value written on the test window", rates[r], bpv);
		ok(e < last && sum > lastbits,
		   "kvtc-%g: nmse %.4g below the lower rate's, %ld bits a token before coding", rates[r],
		   e, sum);
		last = e;
		lastbits = sum;
	}
	ok(last < 1e-3, "kvtc-6: nmse %.4g under 0.1%% (the sinks kept)", last);

	/* through the codec, as codec measure runs it */
	wzc_profile *prof = NULL;
	wzc_format f;
	wzc_codec *c = NULL;
	wzc_errors *er = NULL;
	if (ok(!wzc_prepare(&cp, 1, NULL, &prof, &d) && !wzc_format_parse("kvtc-4.5", &f, &d),
	       "a profile to carry it, and kvtc-4.5 parsed")) {
		ok(wzc_codec_new(&f, tw.L, tw.R, tw.P, prof, &c, &d) == WZ_ERR_MISSING,
		   "without its transforms: refused (%s)", d.msg);
		prof->kvtc = k;
		if (ok(!wzc_codec_new(&f, tw.L, tw.R, tw.P, prof, &c, &d) && !wzc_measure(&tw, c, &er, &d),
		       "kvtc-4.5 measured on the test window")) {
			ok(er->bits_per_value > 3 && er->bits_per_value < 5.6 && er->payload_bytes > 0,
			   "kvtc-4.5: %.3f bits/value from the bytes written", er->bits_per_value);
		}
		wzc_errors_free(er);
		wzc_codec_free(c);
	}
	wzc_profile_free(prof);
	free(lat);
	free(rope);
	wzc_kvtc_free(k);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	return tap_done();
}
