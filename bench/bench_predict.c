/* What the predicted position part (profile version 7) costs in speed:
 * wz (and wze) encode and decode, one core (thread CPU time), medians of several
 * runs, on a synthetic mla-p layer of 4,096 tokens, with the profile that
 * undoes RoPE (version 6) and the same with the prediction in the layer
 * (version 7), the two alternated in one run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "codec/profile/rope.h"
#include "traces/synth_cache.h"

#define RUNS 9
#define TOKENS 4096

int main(void)
{
	wzt_cache_trace *cal = bench_window("bench_predict", WZT_FAMILY_MLA_P, 11, "calibration", 1,
					  TOKENS);
	wzt_cache_trace *test = bench_window("bench_predict", WZT_FAMILY_MLA_P, 11, "test", 2,
					   TOKENS);
	if (!cal || !test)
		return 1;
	wzc_profile *prof[2] = { bench_prepare_rope("bench_predict", cal, 0), bench_prepare_rope("bench_predict", cal, 2) };
	if (!prof[0] || !prof[1] || prof[1]->version != 7)
		return 1;
	int R = test->R, P = test->P, T = test->T;
	double gb = (double)T * (R + P) * 2 / 1e9;
	float *lat = malloc(sizeof(float) * (size_t)T * R), *rope = malloc(sizeof(float) * (size_t)T * P);
	uint8_t *rec = malloc((size_t)T * 1152);
	printf("wz with the position part predicted (version 7) and not (version 6, RoPE undone):\n"
	       "one core (thread CPU time), median of %d alternated runs, %d tokens x 576 values of\n"
	       "a synthetic mla-p layer; GB/s of bf16-equivalent cache\n\n", RUNS, T);
	printf("%-10s %14s %14s %14s %14s %10s %10s\n", "format", "encode v6", "encode v7",
	       "decode v6", "decode v7", "enc v7/v6", "dec v7/v6");
	static const char *const names[] = { "wz-4.97", "wz-5.0", "wz-5.44", "wzs-5.0", "wze-5.0" };
	for (size_t f = 0; f < sizeof names / sizeof *names; f++) {
		wzc_codec *c[2];
		wzc_format fmt;
		wz_diag d;
		for (int k = 0; k < 2; k++)
			if (wzc_format_parse(names[f], &fmt, &d) ||
			    wzc_codec_new(&fmt, 1, R, P, prof[k], &c[k], &d)) {
				fprintf(stderr, "bench_predict: %s\n", d.msg);
				return 1;
			}
		double enc[2][RUNS], dec[2][RUNS];
		for (int r = 0; r < RUNS; r++)
			for (int k = 0; k < 2; k++) {
				double t0 = bench_thread_cpu_s();
				wzc_encode_layer_at(c[k], 0, T, test->latent, test->rope, test->positions,
						    rec, NULL);
				double t1 = bench_thread_cpu_s();
				if (wzc_decode_layer_at(c[k], 0, T, rec, test->positions, lat, rope))
					fprintf(stderr, "decoding failed (out of memory)\n"), exit(1);
				double t2 = bench_thread_cpu_s();
				enc[k][r] = gb / (t1 - t0);
				dec[k][r] = gb / (t2 - t1);
			}
		double e0 = bench_median(enc[0], RUNS), e1 = bench_median(enc[1], RUNS);
		double d0 = bench_median(dec[0], RUNS), d1 = bench_median(dec[1], RUNS);
		printf("%-10s %14.3g %14.3g %14.3g %14.3g %10.2f %10.2f\n", names[f], e0, e1, d0, d1,
		       e1 / e0, d1 / d0);
		wzc_codec_free(c[0]);
		wzc_codec_free(c[1]);
	}
	free(lat);
	free(rope);
	free(rec);
	wzc_profile_free(prof[0]);
	wzc_profile_free(prof[1]);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	return 0;
}
