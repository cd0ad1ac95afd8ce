/* wze's fast coder against its scalar reference, beside wz-5.0 in the same
 * run: encode and decode GB/s on one core (thread CPU time), medians of
 * alternated runs, on a synthetic mla-p layer with the profile undoing
 * RoPE (version 6) and the same predicting its position part (version 7).
 * Every fast record and value is checked against the reference's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "codec/codec.h"
#include "codec/formats/format.h"
#include "codec/formats/fpconv.h"
#include "codec/profile/profile.h"
#include "codec/profile/rope.h"
#include "traces/synth_cache.h"

static wzc_codec *codec_of(const char *name, const wzc_profile *p)
{
	wzc_format fmt;
	wzc_codec *c = NULL;
	wz_diag d;
	if (wzc_format_parse(name, &fmt, &d) || wzc_codec_new(&fmt, 1, p->R, p->P, p, &c, &d)) {
		fprintf(stderr, "bench_wze: %s: %s\n", name, d.msg);
		return NULL;
	}
	return c;
}

/* The codec's input as wzc_encode_layer_at makes it: rounded to bf16, the
 * position part turned back where the profile undoes RoPE. */
static void codec_input(const wzc_codec *c, const wzt_cache_trace *t, float *lat, float *rope)
{
	size_t nl = (size_t)t->T * t->R, np = (size_t)t->T * t->P;
	for (size_t i = 0; i < nl; i++)
		lat[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(t->latent[i]));
	for (size_t i = 0; i < np; i++)
		rope[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(t->rope[i]));
	const double *f = wzc_codec_rope_freq(c, 0);
	for (int i = 0; f && i < t->T; i++)
		wzc_rope_turn(rope + (size_t)i * t->P, t->P, t->positions ? t->positions[i] : i, f,
			      -1);
}

enum { ENC_REF, ENC_FAST, DEC_REF, DEC_FAST, NCOL };

int main(int argc, char **argv)
{
	int T = argc > 1 ? atoi(argv[1]) : 4096, runs = argc > 2 ? atoi(argv[2]) : 5;
	const char *only = argc > 3 ? argv[3] : NULL; /* "v6" or "v7": one profile (perf) */
	if (T < 1 || runs < 1 || runs > 99) {
		fprintf(stderr, "usage: bench_wze [TOKENS [RUNS [v6|v7]]]\n");
		return 2;
	}
	wzt_cache_trace *cal = bench_window("bench_wze", WZT_FAMILY_MLA_P, 11, "calibration", 1, 4096);
	wzt_cache_trace *test = bench_window("bench_wze", WZT_FAMILY_MLA_P, 11, "test", 2, T);
	if (!cal || !test)
		return 1;
	int R = test->R, P = test->P;
	double gb = (double)T * (R + P) * 2 / 1e9;
	float *in = malloc(sizeof(float) * (size_t)T * (R + P));
	float *lat[2], *rope[2];
	uint8_t *rec[2];
	for (int k = 0; k < 2; k++) {
		lat[k] = malloc(sizeof(float) * (size_t)T * R);
		rope[k] = malloc(sizeof(float) * (size_t)T * P + 1);
		rec[k] = malloc((size_t)T * 1152);
		if (!lat[k] || !rope[k] || !rec[k])
			return 1;
	}
	if (!in)
		return 1;
	printf("wze-5.0: the fast coder and the scalar reference, wz-5.0 beside them; one core\n"
	       "(thread CPU time), median of %d alternated runs, %d tokens x %d values of a\n"
	       "synthetic mla-p layer (RoPE undone: v6; position part predicted: v7);\n"
	       "GB/s of bf16-equivalent cache\n\n",
	       runs, T, R + P);
	printf("%-8s %-8s %12s %12s %12s %12s %9s %9s %s\n", "profile", "format", "enc ref",
	       "enc fast", "dec ref", "dec fast", "enc x", "dec x", "same");
	for (int v = 0; v < 2; v++) {
		if (only && strcmp(only, v ? "v7" : "v6"))
			continue;
		wzc_profile *prof = bench_prepare_rope("bench_wze", cal, v ? 2 : 0);
		wzc_codec *ce = prof ? codec_of("wze-5.0", prof) : NULL;
		wzc_codec *cz = prof ? codec_of("wz-5.0", prof) : NULL;
		if (!ce || !cz || (v && prof->version != 7))
			return 1;
		const wzc_format_info *info = wzc_format_info_of(WZC_FMT_WZE);
		size_t B = wzc_codec_record_bytes(ce);
		double t[NCOL][99], z[2][99];
		int same = 1;
		for (int r = 0; r < runs; r++) {
			/* the reference, the fast path, then wz: each sees the
			 * same input, made inside its timing */
			double t0 = bench_thread_cpu_s();
			codec_input(ce, test, in, in + (size_t)T * R);
			info->encode_layer_ref(ce, 0, T, in, in + (size_t)T * R, rec[0], NULL);
			double t1 = bench_thread_cpu_s();
			wzc_encode_layer_at(ce, 0, T, test->latent, test->rope, test->positions,
					    rec[1], NULL);
			double t2 = bench_thread_cpu_s();
			for (int i = 0; i < T; i++)
				if (wzc_decode_token_at(ce, 0, rec[0] + (size_t)i * B,
							test->positions ? test->positions[i] : i,
							lat[0] + (size_t)i * R, rope[0] + (size_t)i * P))
					fprintf(stderr, "decoding failed (out of memory)\n"), exit(1);
			double t3 = bench_thread_cpu_s();
			if (wzc_decode_layer_at(ce, 0, T, rec[0], test->positions, lat[1], rope[1]))
				fprintf(stderr, "decoding failed (out of memory)\n"), exit(1);
			double t4 = bench_thread_cpu_s();
			same &= !memcmp(rec[0], rec[1], B * T) &&
				!memcmp(lat[0], lat[1], sizeof(float) * (size_t)T * R) &&
				!memcmp(rope[0], rope[1], sizeof(float) * (size_t)T * P);
			uint8_t *zr = rec[1];
			double u0 = bench_thread_cpu_s();
			wzc_encode_layer_at(cz, 0, T, test->latent, test->rope, test->positions, zr,
					    NULL);
			double u1 = bench_thread_cpu_s();
			if (wzc_decode_layer_at(cz, 0, T, zr, test->positions, lat[1], rope[1]))
				fprintf(stderr, "decoding failed (out of memory)\n"), exit(1);
			double u2 = bench_thread_cpu_s();
			t[ENC_REF][r] = gb / (t1 - t0);
			t[ENC_FAST][r] = gb / (t2 - t1);
			t[DEC_REF][r] = gb / (t3 - t2);
			t[DEC_FAST][r] = gb / (t4 - t3);
			z[0][r] = gb / (u1 - u0);
			z[1][r] = gb / (u2 - u1);
		}
		double m[NCOL];
		for (int k = 0; k < NCOL; k++)
			m[k] = bench_median(t[k], runs);
		printf("%-8s %-8s %12.4g %12.4g %12.4g %12.4g %9.1f %9.1f %s\n", v ? "v7" : "v6",
		       "wze-5.0", m[ENC_REF], m[ENC_FAST], m[DEC_REF], m[DEC_FAST],
		       m[ENC_FAST] / m[ENC_REF], m[DEC_FAST] / m[DEC_REF],
		       same ? "records and values equal" : "DIFFER");
		printf("%-8s %-8s %12s %12.4g %12s %12.4g\n", v ? "v7" : "v6", "wz-5.0", "",
		       bench_median(z[0], runs), "", bench_median(z[1], runs));
		wzc_codec_free(ce);
		wzc_codec_free(cz);
		wzc_profile_free(prof);
		if (!same)
			return 1;
	}
	free(in);
	for (int k = 0; k < 2; k++) {
		free(lat[k]);
		free(rope[k]);
		free(rec[k]);
	}
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	return 0;
}
