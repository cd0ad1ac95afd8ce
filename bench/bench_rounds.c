/* Encode and decode throughput of the named formats on bench_codec's
 * window (mla-b, seed 11, 4,096 tokens, one layer), in rounds: the
 * profile is prepared once, then each round times every format's encode
 * and decode (thread CPU time, median of RUNS each) before the next
 * round starts, so that a change in the machine's load reaches every
 * format alike.  Prints one line per round and format, then each
 * format's median over the rounds.  It calls only the codec's public
 * interface and needs no other bench/ file, so the same source builds
 * against an earlier commit of the library for a side-by-side figure
 * (bench/bench_vs.sh). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "traces/synth_cache.h"

#define RUNS 7
#define TOKENS 4096
#define MAXF 16

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static wzt_cache_trace *window(const char *split, uint64_t wseed)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = WZT_FAMILY_MLA_B;
	p.seed = 11;
	p.L = 1;
	p.T = TOKENS;
	p.Q = 0;
	p.H = 0;
	p.window_seed = wseed;
	p.split = split;
	wzt_cache_trace *t = NULL;
	wz_diag d;
	if (wzt_synth_cache(&p, &t, &d))
		fprintf(stderr, "bench_rounds: %s\n", d.msg);
	return t;
}

/* bench_rounds ROUNDS FORMAT... */
int main(int argc, char **argv)
{
	if (argc < 3 || atoi(argv[1]) < 1 || argc - 2 > MAXF) {
		fprintf(stderr, "usage: bench_rounds ROUNDS FORMAT... (at most %d formats)\n", MAXF);
		return 2;
	}
	int rounds = atoi(argv[1]), nf = argc - 2;
	wzt_cache_trace *cal = window("calibration", 1), *test = window("test", 2);
	if (!cal || !test)
		return 1;
	wzc_window cw = { .L = 1, .T = cal->T, .R = cal->R, .P = cal->P, .latent = cal->latent,
			  .rope = cal->rope, .positions = cal->positions, .split = "calibration" };
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wz_diag d;
	if (wzc_prepare(&cp, 1, NULL, &prof, &d)) {
		fprintf(stderr, "bench_rounds: %s\n", d.msg);
		return 1;
	}
	int R = test->R, P = test->P, T = test->T;
	double gb = (double)T * (R + P) * 2 / 1e9;
	wzc_codec *c[MAXF];
	for (int f = 0; f < nf; f++) {
		wzc_format fmt;
		if (wzc_format_parse(argv[2 + f], &fmt, &d) ||
		    wzc_codec_new(&fmt, 1, R, P, prof, &c[f], &d)) {
			fprintf(stderr, "bench_rounds: %s: %s\n", argv[2 + f], d.msg);
			return 2;
		}
	}
	float *lat = malloc(sizeof(float) * (size_t)T * R), *rope = malloc(sizeof(float) * (size_t)T * P);
	uint8_t *rec = malloc((size_t)T * 1152);
	double *enc = malloc(sizeof(double) * (size_t)rounds * nf);
	double *dec = malloc(sizeof(double) * (size_t)rounds * nf);
	if (!lat || !rope || !rec || !enc || !dec) {
		fprintf(stderr, "bench_rounds: out of memory\n");
		return 1;
	}
	printf("# GB/s of bf16-equivalent cache per core (thread CPU time), median of %d runs,\n"
	       "# %d tokens x %d values, synthetic mla-b layer\n", RUNS, T, R + P);
	for (int r = 0; r < rounds; r++)
		for (int f = 0; f < nf; f++) {
			double e[RUNS], dd[RUNS];
			for (int k = 0; k < RUNS; k++) {
				double t0 = thread_cpu_s();
				wzc_encode_layer(c[f], 0, T, test->latent, test->rope, rec, NULL);
				double t1 = thread_cpu_s();
				if (wzc_decode_layer(c[f], 0, T, rec, lat, rope))
					fprintf(stderr, "decoding failed (out of memory)\n"), exit(1);
				double t2 = thread_cpu_s();
				e[k] = gb / (t1 - t0);
				dd[k] = gb / (t2 - t1);
			}
			enc[(size_t)f * rounds + r] = median(e, RUNS);
			dec[(size_t)f * rounds + r] = median(dd, RUNS);
			printf("round %d %-12s encode %.4f decode %.4f\n", r, argv[2 + f],
			       enc[(size_t)f * rounds + r], dec[(size_t)f * rounds + r]);
		}
	for (int f = 0; f < nf; f++)
		printf("median %-12s encode %.4f decode %.4f\n", argv[2 + f],
		       median(enc + (size_t)f * rounds, rounds), median(dec + (size_t)f * rounds, rounds));
	for (int f = 0; f < nf; f++)
		wzc_codec_free(c[f]);
	free(lat);
	free(rope);
	free(rec);
	free(enc);
	free(dec);
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	return 0;
}
