/* Restoring parked sessions from wzx on the CPU: the set-up of opening a
 * DeepSeek-V3-shaped profile (61 layers x (512 + 64)) and a container and
 * restoring one block, as this build does it (a version 5 profile, its
 * header and the block's layer alone read and checked, that layer alone
 * planned and built, tables cached) beside the same work on a version 4
 * profile read whole, and that with every table computed afresh and with
 * every layer planned and built on opening (the references, measured in
 * the same run); decode throughput per core (versions 1 to 4) beside
 * zstd -3 on fp8-mix's bytes of the same tokens; the restore over threads.
 * Medians of several runs.  Synthetic mla-b statistics, labelled so: one
 * prepared layer repeated in every layer.  The throughput part:
 * bench/bench_restore_speed.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench_restore.h"
#include "bench/bench_util.h"
#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "codec/profile/profile_cache.h"
#include "codec/wzx/wzx.h"
#include "traces/synth_cache.h"


#define RUNS 3
/* layers of the profile; WZ_BENCH_LAYERS sets another count (a quick run) */
int br_layers = 61;
#define CAL_TOKENS 1024
#define TOKENS 256

double br_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
/* The layer repeated L times (the cost of set-up and decoding per layer
 * does not depend on which layer it is; preparing 61 layers would take
 * minutes of the benchmark's time for nothing). */
static float *repeat(const float *x, size_t n, int L)
{
	float *y = malloc(sizeof *y * n * (size_t)L);
	for (int l = 0; y && l < L; l++)
		memcpy(y + n * (size_t)l, x, sizeof *y * n);
	return y;
}

wzc_window br_view(const wzt_cache_trace *t, const char *split, int L, float **lat,
		       float **rope)
{
	*lat = repeat(t->latent, (size_t)t->T * t->R, L);
	*rope = repeat(t->rope, (size_t)t->T * t->P, L);
	return (wzc_window){ .L = L, .T = t->T, .R = t->R, .P = t->P, .latent = *lat,
			     .rope = *rope, .positions = t->positions, .split = split };
}

/* How restore_one works: as this build does (a version 5 profile, the
 * block's layer alone read and checked); a version 4 profile read whole
 * (as the build before version 5 did); that, with the profile's cache
 * dropped first (every table computed afresh); that, with every layer
 * planned and built on opening (as the build before per-layer building
 * did). */
enum { SETUP_THIS, SETUP_V4_WHOLE, SETUP_AFRESH, SETUP_ALL_LAYERS, NSETUP };

/* Reads the profile file, opens the container, makes its coder and
 * restores one block: what a server does to bring back one block of a
 * parked session. */
static int restore_one(const char *profile_path, const uint8_t *cont, size_t n, int how,
		       uint8_t *rec)
{
	wz_diag d;
	wzc_profile *p;
	wzc_wzx_reader *r = NULL;
	wzc_wzx *x = NULL;
	int ntok = 0;
	unsigned char want[4096] = { 0 }; /* br_layers <= 4096 */
	want[br_layers / 2] = 1;
	if (how == SETUP_THIS ? wzc_profile_read_layers(profile_path, want, br_layers / 2 + 1, &p, &d)
			      : wzc_profile_read(profile_path, &p, &d))
		goto fail;
	if (how == SETUP_AFRESH) {
		wzc_profile_cache_free(p->cache);
		p->cache = NULL;
	}
	if (wzc_wzx_open(cont, n, "bench", &r, &d) || wzc_wzx_coder_for(r, p, &x, &d))
		goto fail;
	/* the estimate needs every layer: it plans and builds them all */
	if (how == SETUP_ALL_LAYERS && !(wzc_wzx_expected_bits(x) > 0)) {
		snprintf(d.msg, sizeof d.msg, "building every layer failed");
		goto fail;
	}
	if (wzc_wzx_read_block(r, x, br_layers / 2, 1, rec, &ntok, &d))
		goto fail;
	wzc_wzx_free(x);
	wzc_wzx_reader_free(r);
	wzc_profile_free(p);
	return ntok;
fail:
	fprintf(stderr, "bench_restore: %s\n", d.msg);
	return -1;
}


FILE *br_rates;

void br_rate(const char *key, double value, const char *unit, const char *what)
{
	if (br_rates)
		fprintf(br_rates, "%s\t%.6g\t%s\t%s\n", key, value, unit, what);
}

/* The profile files (version 5, and the same profile as version 4),
 * removed however the benchmark ends. */
static char path[] = "bench-restore-XXXXXX", path4[] = "bench-restore4-XXXXXX";
static int have_path, have_path4;

static void remove_profile(void)
{
	if (have_path)
		unlink(path);
	if (have_path4)
		unlink(path4);
	have_path = have_path4 = 0;
}

/* The records in a container for the profile written to at as version. */
static int write_container(const wzc_profile *one, const wzc_format *fmt, int version, const char *at,
			   const uint8_t *rec, uint8_t *cont, size_t cap, size_t *n)
{
	wz_diag d;
	wzc_profile *p = bench_repeat_profile(one, br_layers);
	wzc_codec *codec = NULL;
	wzc_wzx *x = NULL;
	int bad = !p;
	if (p)
		p->version = version;
	if (bad || wzc_profile_write(at, p, &d) || wzc_codec_new(fmt, br_layers, p->R, p->P, p, &codec, &d) ||
	    wzc_wzx_of_codec(codec, &x, &d) || wzc_wzx_write(x, TOKENS, rec, cont, cap, n, NULL, &d)) {
		fprintf(stderr, "bench_restore: %s\n", bad ? "out of memory" : d.msg);
		bad = 1;
	}
	wzc_wzx_free(x);
	wzc_codec_free(codec);
	wzc_profile_free(p);
	return bad ? -1 : 0;
}

/* With an argument, the rates go to that file too (docs/restore.md). */
int main(int argc, char **argv)
{
	const char *nl = getenv("WZ_BENCH_LAYERS");
	if (nl && atoi(nl) >= 1 && atoi(nl) <= 4096)
		br_layers = atoi(nl);
	if (argc > 2 || (argc > 1 && argv[1][0] == '-')) {
		/* an option is not a file name: `--help` used to write the rates
		 * to a file of that name */
		fprintf(stderr, "usage: bench_restore [RATES_FILE]   (WZ_BENCH_LAYERS=N: N layers, "
				"a quicker run)\n");
		return strcmp(argv[1], "--help") && strcmp(argv[1], "-h") ? 2 : 0;
	}
	if (argc > 1 && !(br_rates = fopen(argv[1], "w"))) {
		perror(argv[1]);
		return 1;
	}
	if (br_rates)
		fprintf(br_rates, "# wzx restore rates (docs/restore.md): key, value, unit, what; "
			       "bench/bench_restore, synthetic mla-b, %d layers x (512 + 64)\n", br_layers);
	wzt_cache_trace *cal = bench_window("bench_restore", WZT_FAMILY_MLA_B, 11,
					  "calibration", 1, CAL_TOKENS);
	wzt_cache_trace *test = bench_window("bench_restore", WZT_FAMILY_MLA_B, 11,
					  "test", 2, TOKENS);
	if (!cal || !test)
		return 1;
	float *cl, *cr, *tl, *trp;
	wzc_window cw = br_view(cal, "calibration", 1, &cl, &cr), tw = br_view(test, "test", br_layers, &tl, &trp);
	const wzc_window *cp = &cw;
	wzc_profile *one = NULL, *prof = NULL;
	wz_diag d;
	int fd = mkstemp(path), fd4 = mkstemp(path4);
	have_path = fd >= 0;
	have_path4 = fd4 >= 0;
	atexit(remove_profile);
	if (fd < 0 || fd4 < 0 || wzc_prepare(&cp, 1, NULL, &one, &d) ||
	    !(prof = bench_repeat_profile(one, br_layers))) {
		fprintf(stderr, "bench_restore: %s\n", fd < 0 || fd4 < 0 ? "no temporary file" : d.msg);
		return 1;
	}
	close(fd);
	close(fd4);
	wzc_format fmt;
	wzc_codec *codec;
	uint8_t *cont = NULL, *rec = NULL;
	size_t n = 0;
	/* the wz-5.44 tier's grid: opening a container plans only its own grid
	 * (the grid search of wzx-<bits> is pack's cost, not restore's) */
	if (wzc_format_parse("wz-5.44", &fmt, &d) ||
	    wzc_codec_new(&fmt, br_layers, tw.R, tw.P, prof, &codec, &d)) {
		fprintf(stderr, "bench_restore: %s\n", d.msg);
		return 1;
	}
	wzc_wzx_stats st;
	if (wzc_wzx_roundtrip(codec, &tw, &rec, &st, &d)) {
		fprintf(stderr, "bench_restore: %s\n", d.msg);
		return 1;
	}
	/* the same records in two containers: for the profile as version 5
	 * and as version 4 (each records its profile's hash) */
	size_t B = wzc_codec_record_bytes(codec), n4 = 0;
	size_t cap = wzc_wzx_bound(br_layers, TOKENS, tw.R, tw.P, B, strlen(prof->model));
	uint8_t *cont4 = malloc(cap);
	cont = malloc(cap);
	if (!cont || !cont4 || write_container(one, &fmt, WZC_PROFILE_VERSION, path, rec, cont, cap, &n) ||
	    write_container(one, &fmt, 4, path4, rec, cont4, cap, &n4))
		return 1;
	printf("wzx restore set-up, synthetic mla-b (one layer repeated), %d layers x (%d + %d),\n"
	       "grid of wz-5.44 (%zu B), "
	       "thread CPU time, median of %d runs: read the profile file, open the container, make its\n"
	       "coder, restore block 1 of layer %d\n\n",
	       br_layers, tw.R, tw.P, B, RUNS, br_layers / 2);
	double t[NSETUP][RUNS];
	for (int r = 0; r < RUNS; r++)
		for (int how = 0; how < NSETUP; how++) {
			double t0 = bench_thread_cpu_s();
			int v5 = how == SETUP_THIS;
			if (restore_one(v5 ? path : path4, v5 ? cont : cont4, v5 ? n : n4, how, rec) != 64)
				return 1;
			t[how][r] = bench_thread_cpu_s() - t0;
		}
	printf("%-72s %10s\n", "", "ms");
	printf("%-72s %10.1f\n", "this build (v5: the block's layer alone read and built, tables cached)",
	       1e3 * bench_median(t[SETUP_THIS], RUNS));
	printf("%-72s %10.1f\n", "reference: v4 profile, read whole (the block's layer alone built)",
	       1e3 * bench_median(t[SETUP_V4_WHOLE], RUNS));
	printf("%-72s %10.1f\n", "reference: v4 read whole, every table computed afresh",
	       1e3 * bench_median(t[SETUP_AFRESH], RUNS));
	printf("%-72s %10.1f\n", "reference: v4 read whole, every layer planned and built on opening",
	       1e3 * bench_median(t[SETUP_ALL_LAYERS], RUNS));
	br_rate("setup_one_block_ms", 1e3 * bench_median(t[SETUP_THIS], RUNS), "ms",
	     "open the profile (layers: the header line) and a container, restore one block");
	br_rate("setup_one_block_v4_whole_ms", 1e3 * bench_median(t[SETUP_V4_WHOLE], RUNS), "ms",
	     "the same with a version 4 profile, read whole (the reference)");
	remove_profile();
	if (bench_restore_speed(one, &fmt)) {
		fprintf(stderr, "bench_restore: the throughput runs failed\n");
		return 1;
	}
	free(cont);
	free(cont4);
	free(rec);
	wzc_codec_free(codec);
	wzc_profile_free(prof);
	wzc_profile_free(one);
	free(cl);
	free(cr);
	free(tl);
	free(trp);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	if (br_rates && fclose(br_rates)) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
