/* wzt's trellis by its number of states: on an iid window of 4,096 test
 * tokens (one layer, 512 + 64 values, profile from a 4,096-token
 * calibration window), the nmse and the gap in dB to the Gaussian
 * rate-distortion bound of wz and of wzt with 4 to 256 states at 4.97,
 * 5.44 and 6.31 bits/value, and each one's encode and decode time per
 * core (thread CPU time, median of 3 runs), also as GB/s of
 * bf16-equivalent cache (1,152 bytes per token and layer, as bench_codec
 * counts): wzt by its fast encoder (eight tokens a vector, the widest
 * kernel this CPU runs), the 256-state format's reference encoder, and
 * wz's fast and reference encoders beside them, and wzs (wz's record,
 * each token's scale codes searched; docs/wz-format.md, step 6).  8, 32 and 256 states
 * are formats (wzt8, wzt32, wzt); the others are measured for the
 * choice among them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"
#include "codec/wz/wz_plan.h"
#include "codec/wz/wzt_trellis.h"
#include "traces/synth_cache.h"

#define RUNS 3

static double nmse_of(const wzt_cache_trace *w, const float *lat, const float *rope)
{
	double e = 0, x = 0;
	for (size_t i = 0; i < (size_t)w->T * w->R; i++) {
		double d = (double)w->latent[i] - lat[i];
		e += d * d;
		x += (double)w->latent[i] * w->latent[i];
	}
	for (size_t i = 0; i < (size_t)w->T * w->P; i++) {
		double d = (double)w->rope[i] - rope[i];
		e += d * d;
		x += (double)w->rope[i] * w->rope[i];
	}
	return e / x;
}

int main(void)
{
	int T = 4096;
	const char *env = getenv("WZ_BENCH_TOKENS");
	if (env && atoi(env) > 0)
		T = atoi(env);
	wzt_cache_trace *cal = bench_window("bench_trellis", WZT_FAMILY_IID, 1,
					  "calibration", 0, T);
	wzt_cache_trace *test = bench_window("bench_trellis", WZT_FAMILY_IID, 1,
					  "test", UINT64_C(1) << 32, T);
	if (!cal || !test)
		return 1;
	wzc_window cw = { .L = 1, .T = cal->T, .R = cal->R, .P = cal->P, .latent = cal->latent,
			  .rope = cal->rope, .positions = cal->positions, .split = "calibration" };
	wzc_window tw = cw;
	tw.T = test->T, tw.latent = test->latent, tw.rope = test->rope, tw.split = "test";
	tw.positions = test->positions;
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wzc_spectrum *sp = NULL;
	wz_diag d;
	if (wzc_prepare(&cp, 1, NULL, &prof, &d) || wzc_spectrum_of(&tw, &sp, &d)) {
		fprintf(stderr, "bench_trellis: %s\n", d.msg);
		return 1;
	}
	int R = test->R, P = test->P;
	float *lat = malloc(sizeof(float) * (size_t)T * R), *rope = malloc(sizeof(float) * (size_t)T * P);
	uint8_t *rec = malloc((size_t)T * 1152);
	printf("wz and wzt on iid, %d test tokens x (%d + %d), one layer; thread CPU time per core,\n"
	       "median of %d runs; ms per 1,000 tokens\n\n", T, R, P, RUNS);
	printf("%-6s %-26s %6s %9s %8s %9s %9s %8s %8s\n", "rate", "coder", "bytes", "nmse",
	       "dB bound", "enc ms", "dec ms", "enc GB/s", "dec GB/s");
	static const double rates[] = { 4.97, 5.44, 6.31 };
	for (size_t r = 0; r < sizeof rates / sizeof *rates; r++) {
		wzc_format f = { .id = WZC_FMT_WZ, .rate_bits = rates[r] };
		snprintf(f.name, sizeof f.name, "wz-%.2f", rates[r]);
		wzc_codec *c;
		if (wzc_codec_new(&f, 1, R, P, prof, &c, &d)) {
			fprintf(stderr, "bench_trellis: %s\n", d.msg);
			return 1;
		}
		size_t rb = wzc_codec_record_bytes(c);
		double bits = (double)rb * 8 / (R + P), bound = wzc_spectrum_bound_nmse(sp, bits);
		/* k = 0: wz's fast encoder, 1: wz's reference encoder, 2..8 wzt's
		 * fast encoder with 2^k states, 9: wzt's reference encoder, 10:
		 * wzs's fast encoder (wz's record, scale codes searched) */
		for (int k = 0; k <= 10; k++) {
			int nu = k == 9 ? WZT_NU : k <= 8 ? k : 0;
			wzc_wzt_plan *tp = NULL;
			if (nu >= 2 && wzc_wzt_plan_new(c->wz, nu, &tp, &d)) {
				fprintf(stderr, "bench_trellis: %s\n", d.msg);
				return 1;
			}
			double enc[RUNS], dec[RUNS];
			for (int run = 0; run < RUNS; run++) {
				double t0 = bench_thread_cpu_s();
				if (k == 0)
					wzc_wz_encode_layer(c->wz, 0, T, test->latent, test->rope, rec, rb);
				else if (k == 10)
					wzc_wzs_encode_layer(c->wz, 0, T, test->latent, test->rope, rec, rb);
				else if (k == 1 || k == 9)
					wzc_wz_encode_layer_trellis(c->wz, tp, 0, T, test->latent, test->rope,
								    rec, rb);
				else
					wzc_wzt_encode_layer(c->wz, tp, 0, T, test->latent, test->rope, rec,
							     rb);
				double t1 = bench_thread_cpu_s();
				if (wzc_wz_decode_layer_trellis(c->wz, tp, 0, T, rec, lat, rope))
					fprintf(stderr, "decoding failed (out of memory)\n"), exit(1);
				double t2 = bench_thread_cpu_s();
				enc[run] = (t1 - t0) * 1e6 / T;
				dec[run] = (t2 - t1) * 1e6 / T;
			}
			double e = nmse_of(test, lat, rope);
			char name[40];
			if (k == 0)
				snprintf(name, sizeof name, "wz (fast encoder)");
			else if (k == 1)
				snprintf(name, sizeof name, "wz (reference encoder)");
			else if (k == 9)
				snprintf(name, sizeof name, "wzt, 256 st. (reference)");
			else if (k == 10)
				snprintf(name, sizeof name, "wzs (fast encoder)");
			else
				snprintf(name, sizeof name, "wzt, %d states%s", 1 << nu,
					 nu == 8 ? " (wzt)" : nu == 5 ? " (wzt32)" : nu == 3 ? " (wzt8)" : "");
			double me = bench_median(enc, RUNS), md = bench_median(dec, RUNS);
			/* ms per 1,000 tokens of 1,152 bytes: GB/s = 1.152 / ms */
			printf("%-6.2f %-26s %6zu %9.6f %8.2f %9.1f %9.1f %8.3f %8.3f\n", rates[r], name, rb,
			       e, 10 * log10(e / bound), me, md, 1.152 / me, 1.152 / md);
			wzc_wzt_plan_free(tp);
		}
		wzc_codec_free(c);
	}
	free(lat);
	free(rope);
	free(rec);
	wzc_spectrum_free(sp);
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	return 0;
}
