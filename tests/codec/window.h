/* Test helpers: a codec window viewing a cache trace, and synthetic windows
 * from the traces module's generator. */
#ifndef WZ_TEST_CODEC_WINDOW_H
#define WZ_TEST_CODEC_WINDOW_H

#include <stdio.h>

#include "codec/codec.h"
#include "codec/formats/fpconv.h"
#include "codec/profile/profile.h"
#include "traces/cache_trace.h"
#include "traces/synth_cache.h"

static inline wzc_window window_of(const wzt_cache_trace *t)
{
	wzc_window w = {
		.L = t->L, .T = t->T, .R = t->R, .P = t->P, .Q = t->Q, .H = t->H,
		.latent = t->latent, .rope = t->rope, .q_latent = t->q_latent,
		.q_rope = t->q_rope, .q_index = t->q_index, .positions = t->positions,
		.softmax_scale = t->softmax_scale,
		.model = t->model, .split = t->split, .name = t->window,
	};
	return w;
}

/* A trace's cache values rounded to bf16 in place, as every format's codec
 * path rounds them (wzc_encode_layer_at): a test that compares the codec
 * with a coder called directly gives both the same input. */
static inline void trace_bf16(wzt_cache_trace *t)
{
	for (size_t i = 0; i < (size_t)t->L * t->T * t->R; i++)
		t->latent[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(t->latent[i]));
	for (size_t i = 0; i < (size_t)t->L * t->T * t->P; i++)
		t->rope[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(t->rope[i]));
}

/* The window P describes; NULL on failure (printed as a TAP comment). */
static inline wzt_cache_trace *synth_with(const wzt_synth_params *p)
{
	wzt_cache_trace *t = NULL;
	wz_diag d;
	if (wzt_synth_cache(p, &t, &d)) {
		printf("# synth: %s\n", d.msg);
		return NULL;
	}
	return t;
}

/* The tests' synthetic model (seed 7) for one window: the family, L
 * layers of T tokens from position `start`, the window's own seed. */
static inline wzt_synth_params synth_params(wzt_family family, int L, int T, int64_t start,
					    uint64_t window_seed, const char *split)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = family;
	p.seed = 7;
	p.L = L;
	p.T = T;
	p.start_position = start;
	p.window_seed = window_seed;
	p.split = split;
	return p;
}

/* One synthetic window of R latent and P position values, with the
 * synthetic model's default queries; NULL on failure. */
static inline wzt_cache_trace *synth_shape(wzt_family family, int L, int T, int R, int P,
					   int64_t start, uint64_t window_seed, const char *split)
{
	wzt_synth_params p = synth_params(family, L, T, start, window_seed, split);
	p.R = R;
	p.P = P;
	return synth_with(&p);
}

/* One synthetic window of DeepSeek's 512 + 64 shape, with Q query vectors
 * of H heads; NULL on failure. */
static inline wzt_cache_trace *synth(wzt_family family, int L, int T, int Q, int H,
				     int64_t start, uint64_t window_seed, const char *split)
{
	wzt_synth_params p = synth_params(family, L, T, start, window_seed, split);
	p.Q = Q;
	p.H = H;
	return synth_with(&p);
}

/* A profile of one calibration window undoing RoPE (base 10000) in every
 * layer, with the position part predicted from the latent (predict: 0
 * off, 1 where it gains, 2 in every layer), on one thread; NULL on
 * failure (printed as a TAP comment). */
static inline wzc_profile *prepare_rope(const wzt_cache_trace *cal, int predict)
{
	wzc_window w = window_of(cal);
	const wzc_window *ws[1] = { &w };
	double f[512];
	wzc_rope_freqs(cal->P, 10000, 1, 1, 32, 1, f);
	wzc_prepare_opts o;
	wzc_prepare_opts_default(&o);
	o.rope_freq = f;
	o.rope_pairs = cal->P / 2;
	o.predict = predict;
	o.threads = 1;
	wzc_profile *p = NULL;
	wz_diag d;
	if (wzc_prepare(ws, 1, &o, &p, &d))
		printf("# prepare: %s\n", d.msg);
	return p;
}

#endif
