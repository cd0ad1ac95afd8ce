/* Helpers shared by the GPU test (tests/gpu/test_wz_gpu.cu) and the GPU
 * benchmark (bench/gpu/bench_gpu.cu): synthetic windows and profiles,
 * device copies, and the rows of the GPU results file
 * (docs/gpu-results.md).  CUDA C++, host side. */
#ifndef WZ_TEST_GPU_CHECK_H
#define WZ_TEST_GPU_CHECK_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "traces/synth_cache.h"
}
#include "codec/cuda/wz_kernels.h"

/* One synthetic window (NULL on failure, with a message on stderr). */
static inline wzt_cache_trace *gpu_synth(wzt_family family, int L, int T, int Q, int H,
				  int64_t start, uint64_t window_seed, const char *split)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = family;
	p.seed = 7;
	p.L = L;
	p.T = T;
	p.Q = Q;
	p.H = H;
	p.start_position = start;
	p.window_seed = window_seed;
	p.split = split;
	wzt_cache_trace *t = NULL;
	wz_diag d;
	if (wzt_synth_cache(&p, &t, &d)) {
		fprintf(stderr, "synth: %s\n", d.msg);
		return NULL;
	}
	return t;
}

static inline wzc_window gpu_window(const wzt_cache_trace *t)
{
	wzc_window w;
	memset(&w, 0, sizeof w);
	w.L = t->L;
	w.T = t->T;
	w.R = t->R;
	w.P = t->P;
	w.Q = t->Q;
	w.H = t->H;
	w.latent = t->latent;
	w.rope = t->rope;
	w.q_latent = t->q_latent;
	w.q_rope = t->q_rope;
	w.q_index = t->q_index;
	w.positions = t->positions;
	w.softmax_scale = t->softmax_scale;
	w.model = t->model;
	w.split = t->split;
	w.name = t->window;
	return w;
}

/* A one-layer profile prepared from a calibration window of the family;
 * NULL on failure.  The caller frees it with wzc_profile_free. */
/* With undo, a profile that undoes RoPE (base 10000, the synthetic
 * families'). */
static inline wzc_profile *gpu_profile_rope(wzt_family family, int undo)
{
	wzt_cache_trace *cal = gpu_synth(family, 1, 1024, 0, 0, 0, 1, "calibration");
	if (!cal)
		return NULL;
	wzc_window w = gpu_window(cal);
	const wzc_window *wp = &w;
	wzc_profile *prof = NULL;
	wz_diag d;
	double f[64];
	wzc_prepare_opts o;
	wzc_prepare_opts_default(&o);
	if (undo && cal->P <= 128) {
		wzc_rope_freqs(cal->P, 10000, 1, 1, 32, 1, f);
		o.rope_freq = f;
		o.rope_pairs = cal->P / 2;
	}
	if (wzc_prepare(&wp, 1, &o, &prof, &d))
		fprintf(stderr, "prepare: %s\n", d.msg);
	wzt_cache_trace_free(cal);
	return prof;
}

static inline wzc_profile *gpu_profile(wzt_family family)
{
	return gpu_profile_rope(family, 0);
}

/* A device copy of n host elements, or NULL. */
template <typename T> static T *dev_copy(const T *host, size_t n)
{
	T *d = NULL;
	if (cudaMalloc((void **)&d, sizeof(T) * (n ? n : 1)) != cudaSuccess)
		return NULL;
	if (n && cudaMemcpy(d, host, sizeof(T) * n, cudaMemcpyHostToDevice) != cudaSuccess) {
		cudaFree(d);
		return NULL;
	}
	return d;
}

template <typename T> static T *dev_alloc(size_t n)
{
	T *d = NULL;
	return cudaMalloc((void **)&d, sizeof(T) * (n ? n : 1)) == cudaSuccess ? d : NULL;
}

static inline int host_copy(void *host, const void *dev, size_t bytes)
{
	return cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost) != cudaSuccess;
}

/* One row of the results file: kind,format,op,batch,context,heads,value,unit,note
 * (empty fields for what does not apply; notes have no commas). */
static inline void gpu_row(FILE *f, const char *kind, const char *format, const char *op, long batch,
		    long context, long heads, double value, const char *unit, const char *note)
{
	if (!f)
		return;
	char b[24] = "", c[24] = "", h[24] = "";
	if (batch >= 0)
		snprintf(b, sizeof b, "%ld", batch);
	if (context >= 0)
		snprintf(c, sizeof c, "%ld", context);
	if (heads >= 0)
		snprintf(h, sizeof h, "%ld", heads);
	fprintf(f, "%s,%s,%s,%s,%s,%s,%.6g,%s,", kind, format, op, b, c, h, value, unit);
	for (const char *p = note; p && *p; p++)
		fputc(*p == ',' || *p == '\n' ? ';' : *p, f);
	fputc('\n', f);
	fflush(f);
}

/* The results file named by $WZ_GPU_RESULTS (appended), or NULL. */
static inline FILE *gpu_results(void)
{
	const char *path = getenv("WZ_GPU_RESULTS");
	return path && *path ? fopen(path, "a") : NULL;
}

#endif
