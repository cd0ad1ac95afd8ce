/* Building, freeing and writing cache traces: the safetensors file laid out
 * as docs/cache-trace.md ("Writer") says, checked so that the reader never
 * refuses what the writer wrote. */
#include "traces/cache_trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "common/wz_io.h"
#include "traces/float16.h"

/* n1 x n2 x ... elements, or 0 when a product overflows what we can
 * allocate (so callers refuse instead of wrapping). */
static size_t elements(size_t a, size_t b, size_t c, size_t d)
{
	size_t dims[4] = { a, b, c, d }, n = 1;
	for (int i = 0; i < 4; i++) {
		if (dims[i] && n > (SIZE_MAX / 8) / dims[i])
			return 0;
		n *= dims[i];
	}
	return n;
}

wzt_cache_trace *wzt_cache_trace_new(int L, int T, int R, int P, int Q, int H)
{
	if (L <= 0 || T <= 0 || R <= 0 || P <= 0 || Q < 0 || H < 0 || (Q == 0) != (H == 0))
		return NULL;
	size_t ncache = elements((size_t)L, (size_t)T, (size_t)R, 1);
	size_t nrope = elements((size_t)L, (size_t)T, (size_t)P, 1);
	size_t nq = elements((size_t)L, (size_t)Q, (size_t)H, (size_t)R);
	size_t nqr = elements((size_t)L, (size_t)Q, (size_t)H, (size_t)P);
	if (!ncache || !nrope || (Q && (!nq || !nqr)))
		return NULL;
	wzt_cache_trace *t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->L = L;
	t->T = T;
	t->R = R;
	t->P = P;
	t->Q = Q;
	t->H = H;
	t->latent = calloc(ncache, sizeof *t->latent);
	t->rope = calloc(nrope, sizeof *t->rope);
	t->positions = calloc((size_t)T, sizeof *t->positions);
	int ok = t->latent && t->rope && t->positions;
	if (Q) {
		t->q_latent = calloc(nq, sizeof *t->q_latent);
		t->q_rope = calloc(nqr, sizeof *t->q_rope);
		t->q_index = calloc((size_t)Q, sizeof *t->q_index);
		ok = ok && t->q_latent && t->q_rope && t->q_index;
	}
	if (!ok) {
		wzt_cache_trace_free(t);
		return NULL;
	}
	for (int i = 0; i < T; i++)
		t->positions[i] = i;
	return t;
}

void wzt_cache_trace_free(wzt_cache_trace *t)
{
	if (!t)
		return;
	free(t->latent);
	free(t->rope);
	free(t->positions);
	free(t->q_latent);
	free(t->q_rope);
	free(t->q_index);
	free(t->model);
	free(t->split);
	free(t->window);
	free(t->source);
	free(t);
}

const char *wzt_dtype_name(wzt_dtype dtype)
{
	switch (dtype) {
	case WZT_DTYPE_F32: return "F32";
	case WZT_DTYPE_F16: return "F16";
	case WZT_DTYPE_BF16: return "BF16";
	}
	return "?";
}

wz_err wzt_dtype_parse(const char *name, wzt_dtype *out, wz_diag *diag)
{
	static const struct { const char *name; wzt_dtype dtype; } names[] = {
		{ "f32", WZT_DTYPE_F32 }, { "float32", WZT_DTYPE_F32 },
		{ "f16", WZT_DTYPE_F16 }, { "float16", WZT_DTYPE_F16 },
		{ "bf16", WZT_DTYPE_BF16 }, { "bfloat16", WZT_DTYPE_BF16 },
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (name && !strcasecmp(name, names[i].name)) {
			*out = names[i].dtype;
			return WZ_OK;
		}
	return wz_diag_set(diag, WZ_ERR_USAGE, "dtype '%s' is not one of bf16, f16, f32",
			   name ? name : "");
}

static unsigned dtype_size(wzt_dtype dtype)
{
	return dtype == WZT_DTYPE_F32 ? 4 : 2;
}

/* Refuses what the reader would: non-finite values, and in F16 values that
 * would round to infinity.  labels name the dimensions. */
static wz_err check_values(const char *name, const float *v, size_t n, const int *shape, int ndim,
			   const char *const *labels, wzt_dtype dtype, wz_diag *diag)
{
	for (size_t i = 0; i < n; i++) {
		int fits = dtype == WZT_DTYPE_F16 ? wzt_f16_fits(v[i]) : isfinite(v[i]);
		if (fits && dtype == WZT_DTYPE_BF16)
			fits = isfinite(wzt_bf16_to_f32(wzt_f32_to_bf16(v[i])));
		if (fits)
			continue;
		size_t idx[4], rest = i;
		for (int k = ndim - 1; k >= 0; k--) {
			idx[k] = rest % (size_t)shape[k];
			rest /= (size_t)shape[k];
		}
		char where[160];
		size_t len = 0;
		for (int k = 0; k < ndim && len < sizeof where; k++)
			len += (size_t)snprintf(where + len, sizeof where - len, "%s%s %zu",
						k ? ", " : "", labels[k], idx[k]);
		return wz_diag_set(diag, isfinite(v[i]) ? WZ_ERR_RANGE : WZ_ERR_INPUT,
				   "tensor '%s': %g at %s %s", name, (double)v[i], where,
				   isfinite(v[i]) ? "does not fit the dtype" : "is not finite");
	}
	return WZ_OK;
}

static wz_err check_trace(const wzt_cache_trace *t, wzt_dtype dtype, wz_diag *diag)
{
	if (!t || t->L <= 0 || t->T <= 0 || t->R <= 0 || t->P <= 0 || !t->latent || !t->rope ||
	    !t->positions)
		return wz_diag_set(diag, WZ_ERR_INTERNAL, "cache trace without its cache tensors");
	if (t->Q < 0 || t->H < 0 || (t->Q > 0) != (t->H > 0) ||
	    (t->Q && (!t->q_latent || !t->q_rope || !t->q_index)))
		return wz_diag_set(diag, WZ_ERR_INTERNAL, "cache trace with incomplete queries");
	if (!t->split || (strcmp(t->split, "calibration") && strcmp(t->split, "test")))
		return wz_diag_set(diag, WZ_ERR_INPUT, "split '%s' is not calibration or test",
				   t->split ? t->split : "(none)");
	if (t->Q && !(t->softmax_scale > 0 && isfinite(t->softmax_scale)))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "a trace with queries needs a positive softmax_scale");
	for (int i = 0; i < t->T; i++)
		if (t->positions[i] < 0)
			return wz_diag_set(diag, WZ_ERR_INPUT, "token %d has position %lld", i,
					   (long long)t->positions[i]);
	for (int q = 0; q < t->Q; q++)
		if (t->q_index[q] < 0 || t->q_index[q] >= t->T)
			return wz_diag_set(diag, WZ_ERR_INPUT, "query %d points at token %lld", q,
					   (long long)t->q_index[q]);
	static const char *const cache_dims[] = { "layer", "token", "channel" };
	static const char *const query_dims[] = { "layer", "query", "head", "channel" };
	int sl[3] = { t->L, t->T, t->R }, sr[3] = { t->L, t->T, t->P };
	int ql[4] = { t->L, t->Q, t->H, t->R }, qr[4] = { t->L, t->Q, t->H, t->P };
	wz_err err;
	if ((err = check_values("latent", t->latent, (size_t)t->L * t->T * t->R, sl, 3, cache_dims,
				dtype, diag)) ||
	    (err = check_values("rope", t->rope, (size_t)t->L * t->T * t->P, sr, 3, cache_dims,
				dtype, diag)))
		return err;
	if (t->Q &&
	    ((err = check_values("q_latent", t->q_latent, (size_t)t->L * t->Q * t->H * t->R, ql, 4,
				 query_dims, dtype, diag)) ||
	     (err = check_values("q_rope", t->q_rope, (size_t)t->L * t->Q * t->H * t->P, qr, 4,
				 query_dims, dtype, diag))))
		return err;
	return WZ_OK;
}

/* Shortest decimal that reads back as the same double, so the metadata
 * stays readable ("0.13524...", not 17 digits of noise when fewer do). */
static void format_double(double v, char *out, size_t n)
{
	for (int digits = 6; digits <= 17; digits++) {
		snprintf(out, n, "%.*g", digits, v);
		if (strtod(out, NULL) == v)
			return;
	}
}

typedef struct {
	const char *name;
	const void *values; /* float32 or int64 */
	int is_int;
	size_t count;
	int shape[4];
	int ndim;
} out_tensor;

static void store_values(const out_tensor *o, wzt_dtype dtype, unsigned char *p)
{
	if (o->is_int) {
		const int64_t *v = o->values;
		for (size_t i = 0; i < o->count; i++) {
			uint64_t u = (uint64_t)v[i];
			for (int b = 0; b < 8; b++)
				p[8 * i + (size_t)b] = (unsigned char)(u >> (8 * b));
		}
		return;
	}
	const float *v = o->values;
	for (size_t i = 0; i < o->count; i++) {
		if (dtype == WZT_DTYPE_F32) {
			uint32_t u;
			memcpy(&u, &v[i], sizeof u);
			for (int b = 0; b < 4; b++)
				p[4 * i + (size_t)b] = (unsigned char)(u >> (8 * b));
		} else {
			uint16_t h = dtype == WZT_DTYPE_F16 ? wzt_f32_to_f16(v[i]) : wzt_f32_to_bf16(v[i]);
			p[2 * i] = (unsigned char)(h & 0xff);
			p[2 * i + 1] = (unsigned char)(h >> 8);
		}
	}
}

static int set_meta(json_t *meta, const char *key, const char *value)
{
	return json_object_set_new(meta, key, json_string(value ? value : ""));
}

wz_err wzt_cache_trace_encode(const wzt_cache_trace *t, wzt_dtype dtype, unsigned char **bytes,
			      size_t *n, wz_diag *diag)
{
	*bytes = NULL;
	*n = 0;
	wz_err err = check_trace(t, dtype, diag);
	if (err)
		return err;
	/* I64 first, so every tensor starts 8-byte aligned after the padded
	 * header whatever T and Q are. */
	out_tensor ts[6] = {
		{ "positions", t->positions, 1, (size_t)t->T, { t->T }, 1 },
		{ "q_index", t->q_index, 1, (size_t)t->Q, { t->Q }, 1 },
		{ "latent", t->latent, 0, (size_t)t->L * t->T * t->R, { t->L, t->T, t->R }, 3 },
		{ "rope", t->rope, 0, (size_t)t->L * t->T * t->P, { t->L, t->T, t->P }, 3 },
		{ "q_latent", t->q_latent, 0, (size_t)t->L * t->Q * t->H * t->R,
		  { t->L, t->Q, t->H, t->R }, 4 },
		{ "q_rope", t->q_rope, 0, (size_t)t->L * t->Q * t->H * t->P,
		  { t->L, t->Q, t->H, t->P }, 4 },
	};
	int nt = t->Q ? 6 : 4;
	if (!t->Q) { /* no queries: positions, latent, rope */
		ts[1] = ts[2];
		ts[2] = ts[3];
		nt = 3;
	}
	json_t *root = json_object(), *meta = json_object();
	char scale[32];
	format_double(t->softmax_scale, scale, sizeof scale);
	int bad = !root || !meta;
	bad |= set_meta(meta, "format", "wz-cache-trace");
	bad |= set_meta(meta, "version", "1");
	bad |= set_meta(meta, "model", t->model);
	if (t->softmax_scale > 0)
		bad |= set_meta(meta, "softmax_scale", scale);
	bad |= set_meta(meta, "split", t->split);
	bad |= set_meta(meta, "window", t->window);
	bad |= set_meta(meta, "source", t->source);
	if (t->rope_theta > 0) {
		char theta[32], yarn[4][32], all[140];
		format_double(t->rope_theta, theta, sizeof theta);
		bad |= set_meta(meta, "rope_theta", theta);
		if (t->rope_yarn[0] > 0) {
			for (int i = 0; i < 4; i++)
				format_double(t->rope_yarn[i], yarn[i], sizeof yarn[i]);
			snprintf(all, sizeof all, "%s,%s,%s,%s", yarn[0], yarn[1], yarn[2], yarn[3]);
			bad |= set_meta(meta, "rope_yarn", all);
		}
	}
	bad |= json_object_set_new(root, "__metadata__", meta);
	size_t offset = 0;
	for (int i = 0; i < nt; i++) {
		size_t size = ts[i].count * (ts[i].is_int ? 8 : dtype_size(dtype));
		json_t *shape = json_array();
		for (int k = 0; k < ts[i].ndim; k++)
			bad |= json_array_append_new(shape, json_integer(ts[i].shape[k]));
		json_t *entry = json_pack("{s:s, s:o, s:[I, I]}", "dtype",
					  ts[i].is_int ? "I64" : wzt_dtype_name(dtype), "shape", shape,
					  "data_offsets", (json_int_t)offset, (json_int_t)(offset + size));
		bad |= !entry || json_object_set_new(root, ts[i].name, entry);
		offset += size;
	}
	char *header = bad ? NULL : json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!header)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory building the header");
	size_t hlen = strlen(header);
	size_t padded = (hlen + 8 + 7) / 8 * 8 - 8;
	size_t total = 8 + padded + offset;
	unsigned char *buf = malloc(total);
	if (!buf) {
		free(header);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory for a %zu-byte trace", total);
	}
	for (int b = 0; b < 8; b++)
		buf[b] = (unsigned char)((uint64_t)padded >> (8 * b));
	memcpy(buf + 8, header, hlen);
	memset(buf + 8 + hlen, ' ', padded - hlen);
	free(header);
	unsigned char *data = buf + 8 + padded;
	for (int i = 0; i < nt; i++) {
		store_values(&ts[i], dtype, data);
		data += ts[i].count * (ts[i].is_int ? 8 : dtype_size(dtype));
	}
	*bytes = buf;
	*n = total;
	return WZ_OK;
}

wz_err wzt_cache_trace_write(const char *path, const wzt_cache_trace *t, wzt_dtype dtype,
			     wz_diag *diag)
{
	unsigned char *bytes;
	size_t n;
	wz_err err = wzt_cache_trace_encode(t, dtype, &bytes, &n, diag);
	if (err) {
		/* The checks' messages lack the file: add it. */
		char msg[sizeof diag->msg];
		if (diag) {
			snprintf(msg, sizeof msg, "%s", diag->msg);
			wz_diag_set(diag, err, "%s: %s", path, msg);
		}
		return err;
	}
	err = wz_write_file_atomic(path, bytes, n, diag);
	free(bytes);
	return err;
}
