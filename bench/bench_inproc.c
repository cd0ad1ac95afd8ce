/* An earlier build's codec and this one's in one process, timed
 * interleaved (bench/bench_inproc.sh links the earlier library with its
 * symbols renamed old_*): every round encodes and decodes bench_codec's
 * window (mla-b, seed 11, 4,096 tokens, one layer) with each named
 * codec in turn, so that the machine's load reaches all alike; prints
 * each one's median over the rounds (thread CPU time, GB/s of
 * bf16-equivalent cache) and its ratio to the first.
 *   bench_inproc ROUNDS "old wz-5.44" "new wzt8-5.44" ... */
#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "traces/synth_cache.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The earlier library's calls (their shape since 2e04ef9); its profile,
 * format and codec are only passed back to it. */
wz_err old_wzc_prepare(const wzc_window *const *w, int n, const void *opts, void **out, void *d);
wz_err old_wzc_format_parse(const char *name, void *out, void *d);
wz_err old_wzc_codec_new(const void *fmt, int L, int R, int P, const void *prof, void **out,
			 void *d);
wz_err old_wzc_encode_layer(void *c, int layer, int n, const float *lat, const float *rope,
			    uint8_t *rec, void *d);
void old_wzc_decode_layer(const void *c, int layer, int n, const uint8_t *rec, float *lat,
			  float *rope);
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}
static double med(double *v, int n)
{
	qsort(v, n, 8, cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
static wzt_cache_trace *window(const char *split, uint64_t wseed)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = WZT_FAMILY_MLA_B;
	p.seed = 11;
	p.L = 1;
	p.T = 4096;
	p.Q = 0;
	p.H = 0;
	p.window_seed = wseed;
	p.split = split;
	wzt_cache_trace *t = NULL;
	wz_diag d;
	if (wzt_synth_cache(&p, &t, &d))
		fprintf(stderr, "%s\n", d.msg);
	return t;
}
int main(int argc, char **argv)
{
	if (argc < 3 || argc > 10 || atoi(argv[1]) < 1) {
		fprintf(stderr, "usage: bench_inproc ROUNDS \"old|new FORMAT\"... (at most 8)\n");
		return 2;
	}
	int it = atoi(argv[1]);
	wzt_cache_trace *cal = window("calibration", 1), *test = window("test", 2);
	wzc_window cw = {.L = 1,
			 .T = cal->T,
			 .R = cal->R,
			 .P = cal->P,
			 .latent = cal->latent,
			 .rope = cal->rope,
			 .positions = cal->positions,
			 .split = "calibration"};
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wz_diag d;
	static char od[8192] __attribute__((aligned(64)));
	void *oprof = NULL;
	if (wzc_prepare(&cp, 1, NULL, &prof, &d)) {
		fprintf(stderr, "%s\n", d.msg);
		return 1;
	}
	if (old_wzc_prepare(&cp, 1, NULL, &oprof, od)) {
		fprintf(stderr, "old prepare\n");
		return 1;
	}

	int R = test->R, P = test->P, T = test->T;
	double gb = (double)T * (R + P) * 2 / 1e9;
	const char *names[8];
	int nf = argc - 2;
	for (int f = 0; f < nf; f++)
		names[f] = argv[2 + f];
	void *c[8];
	int tree[8];
	for (int f = 0; f < nf; f++) {
		const char *nm = strchr(names[f], ' ') + 1;
		tree[f] = names[f][0] == 'o' ? 0 : 2;
		if (names[f][0] == 'o') {
			static char ofmt[8][256] __attribute__((aligned(64)));
			if (old_wzc_format_parse(nm, ofmt[f], od) ||
			    old_wzc_codec_new(ofmt[f], 1, R, P, oprof, &c[f], od)) {
				fprintf(stderr, "old %s\n", nm);
				return 1;
			}
		} else {
			wzc_format fmt;
			wzc_codec *cc;
			if (wzc_format_parse(nm, &fmt, &d) ||
			    wzc_codec_new(&fmt, 1, R, P, prof, &cc, &d)) {
				fprintf(stderr, "%s\n", d.msg);
				return 1;
			}
			c[f] = cc;
		}
	}
	float *lat = malloc(4 * (size_t)T * R), *rope = malloc(4 * (size_t)T * P);
	uint8_t *rec = malloc((size_t)T * 1152);
	double *e = malloc(8 * it * nf), *dd = malloc(8 * it * nf);
	for (int k = 0; k < it; k++)
		for (int f = 0; f < nf; f++) {
			int o = tree[f];
			double t0 = now();
			if (o == 0)
				old_wzc_encode_layer(c[f], 0, T, test->latent, test->rope, rec, od);
			else
				wzc_encode_layer(c[f], 0, T, test->latent, test->rope, rec, NULL);
			double t1 = now();
			if (o == 0)
				old_wzc_decode_layer(c[f], 0, T, rec, lat, rope);
			else
				if (wzc_decode_layer(c[f], 0, T, rec, lat, rope))
					fprintf(stderr, "decoding failed (out of memory)\n"), exit(1);
			double t2 = now();
			e[f * it + k] = gb / (t1 - t0);
			dd[f * it + k] = gb / (t2 - t1);
		}
	double re = 0, rd = 0;
	printf("%-16s %10s %10s %7s %7s   (medians of %d interleaved rounds)\n", "build format",
	       "enc GB/s", "dec GB/s", "enc x", "dec x", it);
	for (int f = 0; f < nf; f++) {
		double me = med(e + f * it, it), md = med(dd + f * it, it);
		if (f == 0) {
			re = me;
			rd = md;
		}
		printf("%-16s %10.4f %10.4f %7.2f %7.2f\n", names[f], me, md, me / re, md / rd);
	}
	return 0;
}
