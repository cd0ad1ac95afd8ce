/* The cache trace's header: the safetensors JSON checked field by field
 * against the size of the data it describes, the trace's tensors and
 * metadata, and the conversion of stored values, shared by the whole-file
 * reader and the block reader (docs/cache-trace.md, "What the reader
 * checks"). */
#include "traces/cache_trace_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/wz_name.h"
#include "common/wz_str.h"
#include "traces/float16.h"

/* How a dtype's values are read: the four a trace uses, and the rest. */
typedef enum {
	WZT_STORED_F32,
	WZT_STORED_F16,
	WZT_STORED_BF16,
	WZT_STORED_I64,
	WZT_STORED_OTHER,
} wzt_stored;

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
			 wzt_tensor_desc *d, wz_diag *diag)
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
	if (json_array_size(shape) > WZT_NDIM_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: tensor '%s': %zu dimensions (at most %d)",
				   origin, name, json_array_size(shape), WZT_NDIM_MAX);
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
	const wzt_tensor_desc *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Each tensor's byte range must match its shape, and together they must tile
 * the data buffer: no overlap (two tensors aliasing would make one a view of
 * another), no holes, nothing after the last. */
static wz_err check_layout(const char *origin, wzt_tensor_desc *descs, int n, uint64_t data_size,
			   wz_diag *diag)
{
	for (int i = 0; i < n; i++) {
		wzt_tensor_desc *d = &descs[i];
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

static const wzt_tensor_desc *find(const wzt_tensor_desc *descs, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(descs[i].name, name))
			return &descs[i];
	return NULL;
}

/* Checks that tensor d has `ndim` dims matching want[] (0 in want: any
 * value, which is then stored there) and a dtype of the right kind. */
static wz_err check_shape(const char *origin, const wzt_tensor_desc *d, int ndim, uint64_t *want,
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

static wz_err meta_string(const char *origin, json_t *meta, const char *key, int required,
			  const char **out, wz_diag *diag)
{
	json_t *v = meta ? json_object_get(meta, key) : NULL;
	*out = v ? json_string_value(v) : NULL;
	if (!*out && required)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: __metadata__: no \"%s\"", origin, key);
	return WZ_OK;
}

/* rope_theta and rope_yarn (docs/cache-trace.md): how the model rotated
 * the position part, both optional. */
static wz_err meta_rope(const char *origin, json_t *meta, wzt_cache_trace *t, wz_diag *diag)
{
	const char *theta = NULL, *yarn = NULL;
	meta_string(origin, meta, "rope_theta", 0, &theta, diag);
	meta_string(origin, meta, "rope_yarn", 0, &yarn, diag);
	t->rope_theta = 0;
	memset(t->rope_yarn, 0, sizeof t->rope_yarn);
	if (theta && (wz_parse_double(theta, &t->rope_theta) || !(t->rope_theta > 1) ||
		      !(t->rope_theta <= 1e12)))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: __metadata__: rope_theta \"%.40s\" is not a number above 1 (up "
				   "to 1e12)",
				   origin, theta);
	if (!yarn)
		return WZ_OK;
	if (!theta)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: __metadata__: rope_yarn without rope_theta", origin);
	char buf[128], *save = NULL;
	snprintf(buf, sizeof buf, "%s", yarn);
	int n = 0, bad = strlen(yarn) >= sizeof buf;
	for (char *tok = strtok_r(buf, ",", &save); tok && !bad; tok = strtok_r(NULL, ",", &save))
		bad = n >= 4 || wz_parse_double(tok, &t->rope_yarn[n++]);
	bad = bad || n != 4 || !(t->rope_yarn[0] > 1 && t->rope_yarn[0] <= 1e6) ||
	      !(t->rope_yarn[1] >= 1 && t->rope_yarn[1] <= 1e9) ||
	      !(t->rope_yarn[3] > 0 && t->rope_yarn[2] > t->rope_yarn[3] && t->rope_yarn[2] <= 1e6);
	if (bad) {
		memset(t->rope_yarn, 0, sizeof t->rope_yarn);
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: __metadata__: rope_yarn \"%.40s\" is not FACTOR,ORIGINAL,BETA_FAST,"
				   "BETA_SLOW (factor above 1, beta_fast above beta_slow above 0)",
				   origin, yarn);
	}
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
	if ((err = meta_rope(origin, meta, t, diag)))
		return err;
	t->split = strdup(split);
	t->model = strdup(model ? model : "");
	t->window = strdup(window ? window : "");
	t->source = strdup(source ? source : "");
	if (!t->split || !t->model || !t->window || !t->source)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", origin);
	return WZ_OK;
}

const char *const wzt_cache_dims[3] = { "layer", "token", "channel" };
const char *const wzt_query_dims[4] = { "layer", "query", "head", "channel" };

unsigned wzt_desc_size(const wzt_tensor_desc *d)
{
	return dtypes[d->dtype].size;
}

wz_err wzt_header_len_check(const char *origin, uint64_t header_len, uint64_t file_size,
			    wz_diag *diag)
{
	if (header_len == 0)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: header length is zero", origin);
	if (header_len > file_size - 8)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: header length %llu goes past the end of the file (%llu bytes)",
				   origin, (unsigned long long)header_len, (unsigned long long)file_size);
	if (header_len > WZT_HEADER_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: header length %llu is over the 100 MB limit", origin,
				   (unsigned long long)header_len);
	return WZ_OK;
}

/* The trace's tensors among the descriptors, and their shapes. */
static wz_err find_tensors(const char *origin, wzt_layout *lay, wz_diag *diag)
{
	const wzt_tensor_desc *descs = lay->descs;
	int n = lay->ndesc;
	const wzt_tensor_desc *latent = find(descs, n, "latent"), *rope = find(descs, n, "rope"),
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
	lay->latent = latent;
	lay->rope = rope;
	lay->positions = positions;
	lay->q_latent = q_latent;
	lay->q_rope = q_rope;
	lay->q_index = q_index;
	lay->L = (int)ltr[0];
	lay->T = (int)ltr[1];
	lay->R = (int)ltr[2];
	lay->P = (int)ltp[2];
	lay->Q = nq ? (int)lqhr[1] : 0;
	lay->H = nq ? (int)lqhr[2] : 0;
	return WZ_OK;
}

wz_err wzt_layout_parse(const char *origin, const unsigned char *header, uint64_t header_len,
			uint64_t data_size, wzt_layout *lay, wz_diag *diag)
{
	memset(lay, 0, sizeof *lay);
	json_error_t jerr;
	json_t *root = json_loadb((const char *)header, (size_t)header_len, JSON_REJECT_DUPLICATES,
				  &jerr);
	if (!root)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: header is not valid JSON: %s (byte %d)",
				   origin, jerr.text, jerr.position);
	lay->root = root;
	if (!json_is_object(root))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: header is not a JSON object", origin);
	lay->descs = calloc(json_object_size(root) + 1, sizeof *lay->descs);
	if (!lay->descs)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", origin);
	const char *key;
	json_t *value;
	wz_err err;
	json_object_foreach(root, key, value) {
		if (!strcmp(key, "__metadata__")) {
			lay->meta = value;
			continue;
		}
		if ((err = parse_desc(origin, key, value, &lay->descs[lay->ndesc++], diag)))
			return err;
	}
	if ((err = check_layout(origin, lay->descs, lay->ndesc, data_size, diag)))
		return err;
	if (!lay->meta)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: no __metadata__ (a cache trace says format, version and split)",
				   origin);
	return find_tensors(origin, lay, diag);
}

void wzt_layout_free(wzt_layout *lay)
{
	if (!lay)
		return;
	free(lay->descs);
	json_decref(lay->root);
	memset(lay, 0, sizeof *lay);
}

wz_err wzt_layout_metadata(const char *origin, const wzt_layout *lay, wzt_cache_trace *t,
			   wz_diag *diag)
{
	return check_metadata(origin, lay->meta, lay->Q != 0, t, diag);
}

wz_err wzt_convert_floats(const char *origin, const wzt_tensor_desc *d, const unsigned char *p,
			  uint64_t first, uint64_t count, float *out, const char *const *labels,
			  wz_diag *diag)
{
	wzt_stored kind = dtypes[d->dtype].kind;
	for (uint64_t i = 0; i < count; i++) {
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
			uint64_t idx[WZT_NDIM_MAX], rest = first + i;
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

wz_err wzt_convert_indices(const char *origin, const wzt_tensor_desc *d, const unsigned char *p,
			   uint64_t first, uint64_t count, int T, int64_t *out, wz_diag *diag)
{
	int is_position = !strcmp(d->name, "positions");
	for (uint64_t i = 0; i < count; i++) {
		int64_t v = (int64_t)load_le64(p + 8 * i);
		if (is_position && v < 0)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: tensor 'positions': token %llu has position %lld "
					   "(must be >= 0)",
					   origin, (unsigned long long)(first + i), (long long)v);
		if (!is_position && (v < 0 || v >= T))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: tensor 'q_index': query %llu points at token %lld, "
					   "outside 0..%d",
					   origin, (unsigned long long)(first + i), (long long)v, T - 1);
		if (out)
			out[i] = v;
	}
	return WZ_OK;
}
