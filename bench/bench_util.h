/* Timing, medians and synthetic windows shared by the bench/ programs. */
#ifndef WZ_BENCH_UTIL_H
#define WZ_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codec/profile/profile.h"
#include "codec/profile/rope.h"
#include "traces/synth_cache.h"

/* CPU time of this thread: a one-core figure even on a shared machine. */
static inline double bench_thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int bench_by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0..n) (sorted in place; the mean of the middle two when n
 * is even). */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, bench_by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One synthetic layer of T tokens without queries, of FAMILY with the
 * model seed SEED; NULL on failure, with a message on stderr naming WHO. */
static inline wzt_cache_trace *bench_window(const char *who, wzt_family family, uint64_t seed,
					    const char *split, uint64_t wseed, int T)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = family;
	p.seed = seed;
	p.L = 1;
	p.T = T;
	p.Q = 0;
	p.H = 0;
	p.window_seed = wseed;
	p.split = split;
	wzt_cache_trace *t = NULL;
	wz_diag d;
	if (wzt_synth_cache(&p, &t, &d))
		fprintf(stderr, "%s: %s\n", who, d.msg);
	return t;
}

/* The wz profile of one calibration window of one layer, by o (NULL: the
 * defaults); NULL on failure, with a message on stderr naming WHO. */
static inline wzc_profile *bench_prepare_with(const char *who, const wzt_cache_trace *cal, const wzc_prepare_opts *o)
{
	wzc_window cw = { .L = 1, .T = cal->T, .R = cal->R, .P = cal->P, .latent = cal->latent,
			  .rope = cal->rope, .positions = cal->positions, .split = "calibration" };
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wz_diag d;
	if (wzc_prepare(&cp, 1, o, &prof, &d)) {
		fprintf(stderr, "%s: %s\n", who, d.msg);
		return NULL;
	}
	return prof;
}

static inline wzc_profile *bench_prepare_window(const char *who, const wzt_cache_trace *cal)
{
	return bench_prepare_with(who, cal, NULL);
}

/* The same with RoPE (base 10000) undone in the layer and the position
 * part predicted from the latent (predict: 0 off, 1 where it gains, 2
 * always). */
static inline wzc_profile *bench_prepare_rope(const char *who, const wzt_cache_trace *cal, int predict)
{
	double f[512];
	wzc_rope_freqs(cal->P, 10000, 1, 1, 32, 1, f);
	wzc_prepare_opts o;
	wzc_prepare_opts_default(&o);
	o.rope_freq = f;
	o.rope_pairs = cal->P / 2;
	o.predict = predict;
	return bench_prepare_with(who, cal, &o);
}

/* A profile of L layers, each a copy of one's first: set-up and decode
 * per layer do not depend on which layer it is, and preparing 61 layers
 * of 512 + 64 would take minutes.  NULL when out of memory. */
static inline wzc_profile *bench_repeat_profile(const wzc_profile *one, int L)
{
	wzc_profile *p = wzc_profile_alloc(L, one->R, one->P);
	if (!p)
		return NULL;
	memcpy(p->model, one->model, sizeof p->model);
	p->query_weighted = one->query_weighted;
	p->ntokens = one->ntokens;
	for (int l = 0; l < L; l++) {
		for (int part = 0; part < 2; part++) {
			wzc_part_profile *to = part ? &p->rope[l] : &p->latent[l];
			const wzc_part_profile *from = part ? &one->rope[0] : &one->latent[0];
			size_t n = (size_t)from->n;
			memcpy(to->mean, from->mean, sizeof(float) * n);
			memcpy(to->basis, from->basis, sizeof(float) * n * n);
			memcpy(to->var, from->var, sizeof(float) * n);
			memcpy(to->sigma, from->sigma, sizeof(float) * n);
			memcpy(to->weight, from->weight, sizeof(float) * n);
			memcpy(to->anchor, from->anchor, sizeof(float) * n);
			memcpy(to->hist, from->hist, sizeof(float) * WZC_HIST_BINS);
			to->scale_ref = from->scale_ref;
		}
		p->pos_cap[l] = one->pos_cap[0];
	}
	return p;
}

/* A profile of L layers prepared from a calibration window's first layer
 * (bench_repeat_profile); *one gets that one-layer profile, which the
 * caller frees with the result.  NULL after a message naming `who`. */
static inline wzc_profile *bench_layered_profile(const char *who, const wzt_cache_trace *cal, int L,
						 wzc_profile **one /* OUT */)
{
	wzc_window cw = { .L = 1, .T = cal->T, .R = cal->R, .P = cal->P, .latent = cal->latent,
			  .rope = cal->rope, .positions = cal->positions, .split = "calibration" };
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wz_diag d;
	*one = NULL;
	if (wzc_prepare(&cp, 1, NULL, one, &d))
		fprintf(stderr, "%s: %s\n", who, d.msg);
	else if (!(prof = bench_repeat_profile(*one, L)))
		fprintf(stderr, "%s: out of memory\n", who);
	return prof;
}

#endif
