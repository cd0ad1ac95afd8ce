/* libwzplan's public API (codec/wzplan.h): thin, checked wrappers over the
 * codec module, so programs and the Python binding use the same code as the
 * wzplan program. */
#include "codec/wzplan.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/formats/format.h"
#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "config.h"

/* A profile is freed when its last holder lets go: the caller's
 * wz_profile_free and every codec made with it (codecs keep plans in the
 * profile's cache), so a language binding may free them in any order. */
struct wz_profile {
	wzc_profile *p;
	atomic_int holders;
};

struct wz_codec {
	wzc_codec *c;
	wz_profile *owner;
	const wzc_profile *profile;
	int L, R, P;
};

static void profile_let_go(wz_profile *p)
{
	if (p && atomic_fetch_sub(&p->holders, 1) == 1) {
		wzc_profile_free(p->p);
		free(p);
	}
}

const char *wz_version(void)
{
	return PACKAGE_STRING;
}

int wz_api_version(void)
{
	return WZ_API_VERSION;
}

int wz_format_count(void)
{
	return wzc_format_count();
}

const char *wz_format_name(int i)
{
	const wzc_format_info *f = i >= 0 && i < wzc_format_count() ? wzc_format_info_at(i) : NULL;
	return f ? f->name : NULL;
}

int wz_format_parametric(int i)
{
	const wzc_format_info *f = i >= 0 && i < wzc_format_count() ? wzc_format_info_at(i) : NULL;
	return f ? f->parametric : 0;
}

const char *wz_format_description(int i)
{
	const wzc_format_info *f = i >= 0 && i < wzc_format_count() ? wzc_format_info_at(i) : NULL;
	return f ? f->description : NULL;
}

wz_err wz_format_canonical(const char *name, char *out, size_t cap, wz_diag *diag)
{
	wzc_format fmt;
	if (!name)
		return wz_diag_set(diag, WZ_ERR_USAGE, "no format name");
	wz_err e = wzc_format_parse(name, &fmt, diag);
	if (e)
		return e;
	if (!out || cap <= strlen(fmt.name))
		return wz_diag_set(diag, WZ_ERR_RANGE, "a buffer of %zu bytes cannot hold '%s'", cap,
				   fmt.name);
	memcpy(out, fmt.name, strlen(fmt.name) + 1);
	return WZ_OK;
}

size_t wz_format_record_bytes(const char *name, int R, int P)
{
	wzc_format fmt;
	if (!name || R <= 0 || P < 0 || wzc_format_parse(name, &fmt, NULL))
		return 0;
	return wzc_record_bytes(&fmt, R, P);
}

static void window_of(const wz_window *in, wzc_window *out)
{
	*out = (wzc_window){
		.L = in->L, .T = in->T, .R = in->R, .P = in->P, .Q = in->Q, .H = in->H,
		.latent = in->latent, .rope = in->rope, .q_latent = in->q_latent,
		.q_rope = in->q_rope, .q_index = in->q_index, .positions = in->positions,
		.softmax_scale = in->softmax_scale, .model = in->model, .split = in->split,
		.name = in->name,
	};
}

/* The checks a window from a caller gets before the codec reads it. */
static wz_err check_window(const wz_window *w, int i, wz_diag *diag)
{
	const char *name = w->name ? w->name : "(unnamed)";
	if (w->L <= 0 || w->T <= 0 || w->R <= 0 || w->P < 0 || !w->latent || (w->P && !w->rope))
		return wz_diag_set(diag, WZ_ERR_INPUT, "window %d (%s): bad shape %d x %d x (%d + %d)", i,
				   name, w->L, w->T, w->R, w->P);
	if (w->Q < 0 || w->H < 0 || (w->Q > 0 && (!w->q_latent || !w->q_index || w->H <= 0 ||
						   (w->P && !w->q_rope))))
		return wz_diag_set(diag, WZ_ERR_INPUT, "window %d (%s): queries without their arrays", i,
				   name);
	for (int q = 0; q < w->Q; q++)
		if (w->q_index[q] < 0 || w->q_index[q] >= w->T)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "window %d (%s): query %d attends to token %lld of %d", i,
					   name, q, (long long)w->q_index[q], w->T);
	return WZ_OK;
}

wz_err wz_profile_load(const char *path, wz_profile **out, wz_diag *diag)
{
	*out = NULL;
	wz_profile *p = calloc(1, sizeof *p);
	if (!p)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	atomic_init(&p->holders, 1);
	wz_err e = wzc_profile_read(path, &p->p, diag);
	if (e) {
		free(p);
		return e;
	}
	*out = p;
	return WZ_OK;
}

void wz_rope_freqs(int P, double base, const double *yarn, double *freq)
{
	if (yarn)
		wzc_rope_freqs(P, base, yarn[0], yarn[1], yarn[2], yarn[3], freq);
	else
		wzc_rope_freqs(P, base, 1, 1, 32, 1, freq);
}

wz_err wz_profile_prepare(const wz_window *windows, int nwindows, double query_weight,
			  wz_profile **out, wz_diag *diag)
{
	return wz_profile_prepare_rope(windows, nwindows, query_weight, NULL, 0, NULL, out, diag);
}

wz_err wz_profile_prepare_rope(const wz_window *windows, int nwindows, double query_weight,
			       const double *rope_freq, int rope_pairs,
			       const unsigned char *rope_layers, wz_profile **out, wz_diag *diag)
{
	*out = NULL;
	if (nwindows <= 0 || !windows)
		return wz_diag_set(diag, WZ_ERR_USAGE, "no calibration windows");
	for (int i = 0; i < nwindows; i++)
		if (windows[i].split && strcmp(windows[i].split, "test") == 0)
			return wz_diag_set(diag, WZ_ERR_REFUSED,
					   "window %d (%s) is a test window: prepare reads calibration windows only",
					   i, windows[i].name ? windows[i].name : "(unnamed)");
	for (int i = 0; i < nwindows; i++) {
		wz_err e = check_window(&windows[i], i, diag);
		if (e)
			return e;
	}
	wzc_prepare_opts opts;
	wzc_prepare_opts_default(&opts);
	if (query_weight >= 0) {
		if (query_weight > 1)
			return wz_diag_set(diag, WZ_ERR_RANGE, "query weight %g is outside 0..1",
					   query_weight);
		opts.query_weight = query_weight;
	}
	opts.rope_freq = rope_freq;
	opts.rope_pairs = rope_pairs;
	opts.rope_layers = rope_layers;
	wzc_window *ws = calloc((size_t)nwindows, sizeof *ws);
	const wzc_window **ptrs = calloc((size_t)nwindows, sizeof *ptrs);
	wz_profile *p = calloc(1, sizeof *p);
	wz_err e = WZ_OK;
	if (p)
		atomic_init(&p->holders, 1);
	if (!ws || !ptrs || !p)
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	for (int i = 0; !e && i < nwindows; i++) {
		window_of(&windows[i], &ws[i]);
		ptrs[i] = &ws[i];
	}
	if (!e)
		e = wzc_prepare(ptrs, nwindows, &opts, &p->p, diag);
	free(ws);
	free(ptrs);
	if (e) {
		free(p);
		return e;
	}
	*out = p;
	return WZ_OK;
}

wz_err wz_profile_save(const wz_profile *p, const char *path, wz_diag *diag)
{
	if (!p || !path)
		return wz_diag_set(diag, WZ_ERR_USAGE, "no profile or no path");
	return wzc_profile_write(path, p->p, diag);
}

void wz_profile_free(wz_profile *p)
{
	profile_let_go(p);
}

void wz_profile_shape(const wz_profile *p, int *L, int *R, int *P)
{
	if (L)
		*L = p ? p->p->L : 0;
	if (R)
		*R = p ? p->p->R : 0;
	if (P)
		*P = p ? p->p->P : 0;
}

const char *wz_profile_model(const wz_profile *p)
{
	return p ? p->p->model : NULL;
}

wz_err wz_codec_new(const char *format, int L, int R, int P, const wz_profile *profile,
		    wz_codec **out, wz_diag *diag)
{
	*out = NULL;
	wzc_format fmt;
	if (!format)
		return wz_diag_set(diag, WZ_ERR_USAGE, "no format name");
	wz_err e = wzc_format_parse(format, &fmt, diag);
	if (e)
		return e;
	wz_codec *c = calloc(1, sizeof *c);
	if (!c)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	c->profile = profile ? profile->p : NULL;
	c->L = L;
	c->R = R;
	c->P = P;
	e = wzc_codec_new(&fmt, L, R, P, c->profile, &c->c, diag);
	if (e) {
		free(c);
		return e;
	}
	if (profile) {
		c->owner = (wz_profile *)profile; /* the count is not the profile's content */
		atomic_fetch_add(&c->owner->holders, 1);
	}
	*out = c;
	return WZ_OK;
}

void wz_codec_free(wz_codec *c)
{
	if (!c)
		return;
	wzc_codec_free(c->c);
	profile_let_go(c->owner);
	free(c);
}

const char *wz_codec_format(const wz_codec *c)
{
	return wzc_codec_format(c->c)->name;
}

size_t wz_codec_record_bytes(const wz_codec *c)
{
	return wzc_codec_record_bytes(c->c);
}

static wz_err check_layer(const wz_codec *c, int layer, int n, wz_diag *diag)
{
	if (layer < 0 || layer >= c->L)
		return wz_diag_set(diag, WZ_ERR_RANGE, "layer %d: the codec has layers 0..%d", layer,
				   c->L - 1);
	if (n < 0)
		return wz_diag_set(diag, WZ_ERR_RANGE, "%d tokens", n);
	return WZ_OK;
}

wz_err wz_encode_layer_at(wz_codec *c, int layer, int n, const float *latent, const float *rope,
			  const int64_t *positions, uint8_t *records, wz_diag *diag)
{
	wz_err e = check_layer(c, layer, n, diag);
	return e ? e : wzc_encode_layer_at(c->c, layer, n, latent, rope, positions, records, diag);
}

wz_err wz_encode_layer(wz_codec *c, int layer, int n, const float *latent, const float *rope,
		       uint8_t *records, wz_diag *diag)
{
	return wz_encode_layer_at(c, layer, n, latent, rope, NULL, records, diag);
}

/* A decode's error with what it means for the caller. */
static wz_err decoded(wz_err e, int layer, wz_diag *diag)
{
	if (e == WZ_ERR_NOMEM)
		return wz_diag_set(diag, e, "layer %d: out of memory for its plan or the decode's scratch",
				   layer);
	if (e)
		return wz_diag_set(diag, e, "layer %d: not read from the profile", layer);
	return WZ_OK;
}

wz_err wz_decode_layer_at(const wz_codec *c, int layer, int n, const uint8_t *records,
			  const int64_t *positions, float *latent, float *rope, wz_diag *diag)
{
	wz_err e = check_layer(c, layer, n, diag);
	if (!e)
		e = decoded(wzc_decode_layer_at(c->c, layer, n, records, positions, latent, rope), layer,
			    diag);
	return e;
}

wz_err wz_decode_layer(const wz_codec *c, int layer, int n, const uint8_t *records,
		       float *latent, float *rope, wz_diag *diag)
{
	return wz_decode_layer_at(c, layer, n, records, NULL, latent, rope, diag);
}

wz_err wz_roundtrip_layer(wz_codec *c, int layer, int n, const float *latent, const float *rope,
			  float *latent_out, float *rope_out, wz_diag *diag)
{
	return wz_roundtrip_layer_at(c, layer, n, latent, rope, NULL, latent_out, rope_out, diag);
}

wz_err wz_roundtrip_layer_at(wz_codec *c, int layer, int n, const float *latent,
			     const float *rope, const int64_t *positions, float *latent_out,
			     float *rope_out, wz_diag *diag)
{
	wz_err e = check_layer(c, layer, n, diag);
	if (e || n == 0)
		return e;
	size_t rb = wzc_codec_record_bytes(c->c);
	uint8_t *records = malloc((size_t)n * rb);
	if (!records)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory for %d records", n);
	e = wzc_encode_layer_at(c->c, layer, n, latent, rope, positions, records, diag);
	if (!e)
		e = decoded(wzc_decode_layer_at(c->c, layer, n, records, positions, latent_out, rope_out),
			    layer, diag);
	free(records);
	return e;
}

wz_err wz_window_bytes(wz_codec *c, const wz_window *w, uint64_t *bytes, wz_diag *diag)
{
	*bytes = 0;
	wz_err e = check_window(w, 0, diag);
	if (e)
		return e;
	if (w->L != c->L || w->R != c->R || w->P != c->P)
		return wz_diag_set(diag, WZ_ERR_INPUT, "the window is %d x (%d + %d), the codec %d x (%d + %d)",
				   w->L, w->R, w->P, c->L, c->R, c->P);
	if (wzc_codec_format(c->c)->id != WZC_FMT_WZX) {
		*bytes = (uint64_t)w->L * (uint64_t)w->T * wzc_codec_record_bytes(c->c);
		return WZ_OK;
	}
	wzc_window cw;
	window_of(w, &cw);
	uint8_t *records = NULL;
	wzc_wzx_stats stats;
	e = wzc_wzx_roundtrip(c->c, &cw, &records, &stats, diag);
	free(records);
	if (!e)
		*bytes = stats.total;
	return e;
}
