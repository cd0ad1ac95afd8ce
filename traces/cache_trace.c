/* Reading cache-trace files: the safetensors container checked field by
 * field against the bytes given, then the trace's own rules
 * (docs/cache-trace.md, "What the reader checks"). */
#include "traces/cache_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/wz_name.h"
#include "common/wz_str.h"
#include "traces/float16.h"

/* The safetensors reference implementation refuses larger headers too. */
#define HEADER_MAX 100000000u
/* Dimensions of tensors we only skip over; ours have at most 4. */
#define NDIM_MAX 8

/* How a dtype's values are read: the four a trace uses, and the rest. */
typedef enum {
	WZT_STORED_F32,
	WZT_STORED_F16,
	WZT_STORED_BF16,
	WZT_STORED_I64,
	WZT_STORED_OTHER,
} wzt_stored;

typedef struct {
	const char *name;
	int dtype; /* index into dtypes[] */
	int ndim;
	uint64_t shape[NDIM_MAX];
	uint64_t count;
	uint64_t begin, end;
} tensor_desc;

/* Every safetensors dtype, so that a file with extra tensors of other types
 * can still be checked for its layout. */
static const struct {
	const char *name;
	unsigned size;
	wzt_stored kind;
} dtypes[] = {
	{ "F32", 4, WZT_STORED_F32 }, { "F16", 2, WZT_STORED_F16 },
	{ "BF16", 2, WZT_STORED_BF16 }, { "I64", 8, WZT_STORED_I64 },
	{ "F64", 8, WZT_STORED_OTHER }, { "I32", 4, WZT_STORED_OTHER },
	{ "U32", 4, WZT_STORED_OTHER }, { "I16", 2, WZT_STORED_OTHER },
	{ "U16", 2, WZT_STORED_OTHER }, { "I8", 1, WZT_STORED_OTHER },
	{ "U8", 1, WZT_STORED_OTHER }, { "U64", 8, WZT_STORED_OTHER },
	{ "BOOL", 1, WZT_STORED_OTHER }, { "F8_E4M3", 1, WZT_STORED_OTHER },
	{ "F8_E5M2", 1, WZT_STORED_OTHER },
};
#define NDTYPES ((int)(sizeof dtypes / sizeof dtypes[0]))

static uint64_t load_le64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static wz_err parse_desc(const char *origin, const char *name, json_t *entry,
			 tensor_desc *d, wz_diag *diag)
{
	memset(d, 0, sizeof *d);
	d->name = name;
	if (!json_is_object(entry))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: tensor '%s': not a JSON object", origin, name);
	json_t *dtype = json_object_get(entry, "dtype");
	json_t *shape = json_object_get(entry, "shape");
	json_t *offsets = json_object_get(entry, "data_offsets");
	if (!json_is_string(dtype))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: tensor '%s': no \"dtype\" string", origin, name);
	d->dtype = -1;
	for (int i = 0; i < NDTYPES; i++)
		if (!strcmp(json_string_value(dtype), dtypes[i].name))
			d->dtype = i;
	if (d->dtype < 0)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: tensor '%s': unknown dtype '%.40s'", origin,
				   name, json_string_value(dtype));
	if (!json_is_array(shape))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: tensor '%s': no \"shape\" array", origin, name);
	if (json_array_size(shape) > NDIM_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: tensor '%s': %zu dimensions (at most %d)",
				   origin, name, json_array_size(shape), NDIM_MAX);
	d->ndim = (int)json_array_size(shape);
	d->count = 1;
	for (int i = 0; i < d->ndim; i++) {
		json_t *dim = json_array_get(shape, (size_t)i);
		if (!json_is_integer(dim) || json_integer_value(dim) < 0)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: tensor '%s': shape[%d] is not a non-negative integer",
					   origin, name, i);
		d->shape[i] = (uint64_t)json_integer_value(dim);
		/* No file holds 2^62 bytes; the bound keeps count x size exact. */
		if (d->shape[i] && d->count > (UINT64_C(1) << 59) / d->shape[i])
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s: tensor '%s': shape too large",
					   origin, name);
		d->count *= d->shape[i];
	}
	if (!json_is_array(offsets) || json_array_size(offsets) != 2 ||
	    !json_is_integer(json_array_get(offsets, 0)) || !json_is_integer(json_array_get(offsets, 1)) ||
	    json_integer_value(json_array_get(offsets, 0)) < 0 ||
	    json_integer_value(json_array_get(offsets, 1)) < 0)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: tensor '%s': \"data_offsets\" is not two non-negative integers",
				   origin, name);
	d->begin = (uint64_t)json_integer_value(json_array_get(offsets, 0));
	d->end = (uint64_t)json_integer_value(json_array_get(offsets, 1));
	return WZ_OK;
}

static int by_offset(const void *a, const void *b)
{
	const tensor_desc *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Each tensor's byte range must match its shape, and together they must tile
 * the data buffer: no overlap (two tensors aliasing would make one a view of
 * another), no holes, nothing after the last. */
static wz_err check_layout(const char *origin, tensor_desc *descs, int n, uint64_t data_size,
			   wz_diag *diag)
{
	for (int i = 0; i < n; i++) {
		tensor_desc *d = &descs[i];
		if (d->begin > d->end || d->end > data_size)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: tensor '%s': data_offsets [%llu, %llu] outside the data "
					   "(%llu bytes after the header%s)",
					   origin, d->name, (unsigned long long)d->begin,
					   (unsigned long long)d->end, (unsigned long long)data_size,
					   d->begin <= d->end ? "; file truncated?" : "");
		uint64_t want = d->count * dtypes[d->dtype].size;
		if (d->end - d->begin != want)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, but "
					   "its shape and dtype %s need %llu",
					   origin, d->name, (unsigned long long)d->begin,
					   (unsigned long long)d->end,
					   (unsigned long long)(d->end - d->begin), dtypes[d->dtype].name,
					   (unsigned long long)want);
	}
	qsort(descs, (size_t)n, sizeof *descs, by_offset);
	uint64_t at = 0;
	for (int i = 0; i < n; i++) {
		if (descs[i].begin < at)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s: tensors '%s' and '%s' overlap", origin,
					   descs[i - 1].name, descs[i].name);
		if (descs[i].begin > at)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: tensor '%s': a hole of %llu bytes before it in the data",
					   origin, descs[i].name, (unsigned long long)(descs[i].begin - at));
		at = descs[i].end;
	}
	if (at != data_size)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: %llu bytes after the last tensor (the file is %llu bytes "
				   "longer than its header says)",
				   origin, (unsigned long long)(data_size - at),
				   (unsigned long long)(data_size - at));
	return WZ_OK;
}

static const tensor_desc *find(const tensor_desc *descs, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(descs[i].name, name))
			return &descs[i];
	return NULL;
}

/* Checks that tensor d has `ndim` dims matching want[] (0 in want: any
 * value, which is then stored there) and a dtype of the right kind. */
static wz_err check_shape(const char *origin, const tensor_desc *d, int ndim, uint64_t *want,
			  const char *dims_text, int want_int, wz_diag *diag)
{
	wzt_stored kind = dtypes[d->dtype].kind;
	if (want_int ? kind != WZT_STORED_I64
		     : !(kind == WZT_STORED_F32 || kind == WZT_STORED_F16 || kind == WZT_STORED_BF16))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: tensor '%s': dtype %s not allowed (%s)",
				   origin, d->name, dtypes[d->dtype].name,
				   want_int ? "must be I64" : "must be F32, F16 or BF16");
	if (d->ndim != ndim)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: tensor '%s': %d dimensions, want %d %s",
				   origin, d->name, d->ndim, ndim, dims_text);
	for (int i = 0; i < ndim; i++) {
		if (d->shape[i] == 0 || d->shape[i] > INT_MAX)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: tensor '%s': dimension %d of %s is %llu (must be 1..%d)",
					   origin, d->name, i, dims_text, (unsigned long long)d->shape[i],
					   INT_MAX);
		if (want[i] && want[i] != d->shape[i])
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: tensor '%s': dimension %d of %s is %llu, but other tensors "
					   "say %llu",
					   origin, d->name, i, dims_text, (unsigned long long)d->shape[i],
					   (unsigned long long)want[i]);
		want[i] = d->shape[i];
	}
	return WZ_OK;
}

/* Converts a float tensor to float32, refusing the first non-finite value
 * with its coordinates (labels name the dimensions after the first). */
static wz_err load_floats(const char *origin, const unsigned char *data, const tensor_desc *d,
			  float *out, const char *const *labels, wz_diag *diag)
{
	const unsigned char *p = data + d->begin;
	wzt_stored kind = dtypes[d->dtype].kind;
	for (uint64_t i = 0; i < d->count; i++) {
		float v;
		if (kind == WZT_STORED_F32) {
			uint32_t u = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
				     (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
			memcpy(&v, &u, sizeof v);
		} else {
			uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
			v = kind == WZT_STORED_F16 ? wzt_f16_to_f32(h) : wzt_bf16_to_f32(h);
		}
		if (!isfinite(v)) {
			uint64_t idx[NDIM_MAX], rest = i;
			for (int k = d->ndim - 1; k >= 0; k--) {
				idx[k] = rest % d->shape[k];
				rest /= d->shape[k];
			}
			char where[256];
			size_t len = 0;
			for (int k = 0; k < d->ndim && len < sizeof where; k++)
				len += (size_t)snprintf(where + len, sizeof where - len, "%s%s %llu",
							k ? ", " : "", labels[k],
							(unsigned long long)idx[k]);
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: tensor '%s': %s at %s (non-finite values are refused: "
					   "see docs/cache-trace.md)",
					   origin, d->name, isnan(v) ? "NaN" : "infinity", where);
		}
		out[i] = v;
	}
	return WZ_OK;
}

static void load_i64(const unsigned char *data, const tensor_desc *d, int64_t *out)
{
	for (uint64_t i = 0; i < d->count; i++)
		out[i] = (int64_t)load_le64(data + d->begin + 8 * i);
}

static wz_err meta_string(const char *origin, json_t *meta, const char *key, int required,
			  const char **out, wz_diag *diag)
{
	json_t *v = meta ? json_object_get(meta, key) : NULL;
	*out = v ? json_string_value(v) : NULL;
	if (!*out && required)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: __metadata__: no \"%s\"", origin, key);
	return WZ_OK;
}

static wz_err check_metadata(const char *origin, json_t *meta, int has_queries,
			     wzt_cache_trace *t, wz_diag *diag)
{
	if (meta && !json_is_object(meta))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: __metadata__ is not a JSON object", origin);
	const char *key;
	json_t *value;
	json_object_foreach(meta, key, value) {
		if (!json_is_string(value))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: __metadata__: \"%s\" is not a string", origin, key);
	}
	const char *format, *version, *split, *model, *scale, *window, *source;
	wz_err err;
	if ((err = meta_string(origin, meta, "format", 1, &format, diag)) ||
	    (err = meta_string(origin, meta, "version", 1, &version, diag)) ||
	    (err = meta_string(origin, meta, "split", 1, &split, diag)) ||
	    (err = meta_string(origin, meta, "softmax_scale", has_queries, &scale, diag)))
		return err;
	meta_string(origin, meta, "model", 0, &model, diag);
	meta_string(origin, meta, "window", 0, &window, diag);
	meta_string(origin, meta, "source", 0, &source, diag);
	if (strcmp(format, "wz-cache-trace"))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: __metadata__: format \"%.40s\" is not \"wz-cache-trace\"", origin,
				   format);
	if (strcmp(version, "1"))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: __metadata__: version \"%.40s\" (this program reads version 1)",
				   origin, version);
	if (strcmp(split, "calibration") && strcmp(split, "test"))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: __metadata__: split \"%.40s\" is not \"calibration\" or \"test\"",
				   origin, split);
	/* Names reach file names, tables and chart titles: checked here, once. */
	if (model && *model && (err = wz_name_check(model, origin, 0, "__metadata__: model", diag)))
		return err;
	if (window && *window &&
	    (err = wz_name_check(window, origin, 0, "__metadata__: window", diag)))
		return err;
	t->softmax_scale = 0;
	if (scale) {
		if (wz_parse_double(scale, &t->softmax_scale) || t->softmax_scale <= 0)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: __metadata__: softmax_scale \"%.40s\" is not a positive number",
					   origin, scale);
	}
	t->split = strdup(split);
	t->model = strdup(model ? model : "");
	t->window = strdup(window ? window : "");
	t->source = strdup(source ? source : "");
	if (!t->split || !t->model || !t->window || !t->source)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", origin);
	return WZ_OK;
}

/* The parsed header, descriptors sorted by offset after check_layout. */
static wz_err build_trace(const char *origin, const unsigned char *data, tensor_desc *descs,
			  int n, json_t *meta, wzt_cache_trace **out, wz_diag *diag)
{
	const tensor_desc *latent = find(descs, n, "latent"), *rope = find(descs, n, "rope"),
			  *positions = find(descs, n, "positions"),
			  *q_latent = find(descs, n, "q_latent"), *q_rope = find(descs, n, "q_rope"),
			  *q_index = find(descs, n, "q_index");
	if (!latent || !rope)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: missing tensor%s %s%s%s", origin,
				   !latent && !rope ? "s" : "", latent ? "" : "'latent'",
				   !latent && !rope ? " and " : "", rope ? "" : "'rope'");
	int nq = !!q_latent + !!q_rope + !!q_index;
	if (nq != 0 && nq != 3)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: queries need all of q_latent, q_rope and q_index; missing%s%s%s",
				   origin, q_latent ? "" : " 'q_latent'", q_rope ? "" : " 'q_rope'",
				   q_index ? "" : " 'q_index'");
	/* L, T, R, P, Q, H as the tensors fix them (0: not yet known). */
	uint64_t ltr[3] = { 0 }, ltp[3] = { 0 };
	wz_err err;
	if ((err = check_shape(origin, latent, 3, ltr, "[L, T, R]", 0, diag)))
		return err;
	ltp[0] = ltr[0];
	ltp[1] = ltr[1];
	if ((err = check_shape(origin, rope, 3, ltp, "[L, T, P]", 0, diag)))
		return err;
	uint64_t t_only[1] = { ltr[1] };
	if (positions && (err = check_shape(origin, positions, 1, t_only, "[T]", 1, diag)))
		return err;
	uint64_t lqhr[4] = { ltr[0], 0, 0, ltr[2] }, lqhp[4] = { ltr[0], 0, 0, ltp[2] };
	if (nq) {
		if ((err = check_shape(origin, q_latent, 4, lqhr, "[L, Q, H, R]", 0, diag)))
			return err;
		lqhp[1] = lqhr[1];
		lqhp[2] = lqhr[2];
		uint64_t q_only[1] = { lqhr[1] };
		if ((err = check_shape(origin, q_rope, 4, lqhp, "[L, Q, H, P]", 0, diag)) ||
		    (err = check_shape(origin, q_index, 1, q_only, "[Q]", 1, diag)))
			return err;
	}
	wzt_cache_trace *t = wzt_cache_trace_new((int)ltr[0], (int)ltr[1], (int)ltr[2], (int)ltp[2],
						 nq ? (int)lqhr[1] : 0, nq ? (int)lqhr[2] : 0);
	if (!t)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory for the trace", origin);
	static const char *const cache_dims[] = { "layer", "token", "channel" };
	static const char *const query_dims[] = { "layer", "query", "head", "channel" };
	err = load_floats(origin, data, latent, t->latent, cache_dims, diag);
	if (!err)
		err = load_floats(origin, data, rope, t->rope, cache_dims, diag);
	if (!err && nq) {
		err = load_floats(origin, data, q_latent, t->q_latent, query_dims, diag);
		if (!err)
			err = load_floats(origin, data, q_rope, t->q_rope, query_dims, diag);
	}
	if (!err && positions) {
		load_i64(data, positions, t->positions);
		for (int i = 0; i < t->T && !err; i++)
			if (t->positions[i] < 0)
				err = wz_diag_set(diag, WZ_ERR_INPUT,
						  "%s: tensor 'positions': token %d has position %lld "
						  "(must be >= 0)",
						  origin, i, (long long)t->positions[i]);
	}
	if (!err && nq) {
		load_i64(data, q_index, t->q_index);
		for (int q = 0; q < t->Q && !err; q++)
			if (t->q_index[q] < 0 || t->q_index[q] >= t->T)
				err = wz_diag_set(diag, WZ_ERR_INPUT,
						  "%s: tensor 'q_index': query %d points at token %lld, "
						  "outside 0..%d",
						  origin, q, (long long)t->q_index[q], t->T - 1);
	}
	if (!err)
		err = check_metadata(origin, meta, nq != 0, t, diag);
	if (err) {
		wzt_cache_trace_free(t);
		return err;
	}
	*out = t;
	return WZ_OK;
}

wz_err wzt_cache_trace_parse(const void *bytes, size_t n, const char *origin,
			     wzt_cache_trace **out, wz_diag *diag)
{
	const unsigned char *p = bytes;
	*out = NULL;
	if (!origin)
		origin = "(memory)";
	if (n < 8)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: %zu bytes, too short for a safetensors file (8-byte header "
				   "length first)",
				   origin, n);
	uint64_t header_len = load_le64(p);
	if (header_len == 0)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: header length is zero", origin);
	if (header_len > n - 8)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: header length %llu goes past the end of the file (%zu bytes)",
				   origin, (unsigned long long)header_len, n);
	if (header_len > HEADER_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: header length %llu is over the 100 MB limit", origin,
				   (unsigned long long)header_len);
	json_error_t jerr;
	json_t *root = json_loadb((const char *)p + 8, (size_t)header_len,
				  JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: header is not valid JSON: %s (byte %d)",
				   origin, jerr.text, jerr.position);
	wz_err err = WZ_OK;
	tensor_desc *descs = NULL;
	int ndesc = 0;
	json_t *meta = NULL;
	if (!json_is_object(root)) {
		err = wz_diag_set(diag, WZ_ERR_INPUT, "%s: header is not a JSON object", origin);
		goto done;
	}
	descs = calloc(json_object_size(root) + 1, sizeof *descs);
	if (!descs) {
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", origin);
		goto done;
	}
	const char *key;
	json_t *value;
	json_object_foreach(root, key, value) {
		if (!strcmp(key, "__metadata__")) {
			meta = value;
			continue;
		}
		if ((err = parse_desc(origin, key, value, &descs[ndesc++], diag)))
			goto done;
	}
	if ((err = check_layout(origin, descs, ndesc, (uint64_t)(n - 8 - header_len), diag)))
		goto done;
	if (!meta) {
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s: no __metadata__ (a cache trace says format, version and split)",
				  origin);
		goto done;
	}
	err = build_trace(origin, p + 8 + header_len, descs, ndesc, meta, out, diag);
done:
	free(descs);
	json_decref(root);
	return err;
}

wz_err wzt_cache_trace_read(const char *path, wzt_cache_trace **out, wz_diag *diag)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return wz_diag_set(diag, errno == ENOENT ? WZ_ERR_INPUT : WZ_ERR_IO, "%s: %s", path,
				   strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return wzt_cache_trace_parse("", 0, path, out, diag);
	}
	/* Read, not mapped: a mapped file truncated by someone else while we
	 * convert it would kill the process with SIGBUS.  A read that comes up
	 * short says so instead. */
	if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2) {
		close(fd);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: too large for this machine", path);
	}
	size_t size = (size_t)st.st_size, got = 0;
	unsigned char *bytes = malloc(size);
	if (!bytes) {
		close(fd);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory for %zu bytes", path, size);
	}
	while (got < size) {
		ssize_t r = pread(fd, bytes + got, size - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int saved = errno;
			close(fd);
			free(bytes);
			if (r == 0)
				return wz_diag_set(diag, WZ_ERR_INPUT,
						   "%s: the file shrank while it was read (%zu of %zu "
						   "bytes); was it being written?",
						   path, got, size);
			return wz_diag_set(diag, WZ_ERR_IO, "%s: read error: %s", path, strerror(saved));
		}
		got += (size_t)r;
	}
	close(fd);
	wz_err err = wzt_cache_trace_parse(bytes, size, path, out, diag);
	free(bytes);
	return err;
}
