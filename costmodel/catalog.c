/* Catalog loading and look-ups (catalog.h). */
#include "costmodel/catalog.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/wz_csv.h"
#include "common/wz_io.h"
#include "common/wz_name.h"
#include "common/wz_str.h"
#include "data/embedded.h"

/* How a CSV column maps onto a struct field. */
typedef enum { F_TEXT, F_NAME, F_NUMBER, F_WHOLE } field_kind;

typedef struct {
	const char *column;
	field_kind kind;  /* NUMBER and WHOLE: double (NaN when empty) in [lo, hi] */
	int required;     /* the cell must not be empty */
	size_t offset;
	double lo, hi;    /* lo_open: lo itself is outside */
	int lo_open;
	int optional;     /* the column may be absent: every cell then reads empty */
} field_spec;

/* Ranges wide enough for any real model or GPU, narrow enough that no
 * product or conversion downstream overflows or divides by zero.  Bits
 * per weight start at 1: no served checkpoint stores less (ternary
 * weights take 1.58), and 0.5 would halve a model's memory for nothing. */
#define WHOLE(T, f, lo, hi) { #f, F_WHOLE, 0, offsetof(T, f), lo, hi, 0, 0 }
#define POS(T, f, hi) { #f, F_NUMBER, 0, offsetof(T, f), 0, hi, 1, 0 }
#define NONNEG(T, f, hi) { #f, F_NUMBER, 0, offsetof(T, f), 0, hi, 0, 0 }
#define AT_LEAST(T, f, lo, hi) { #f, F_NUMBER, 0, offsetof(T, f), lo, hi, 0, 0 }
#define TEXT(T, f, req) { #f, F_TEXT, req, offsetof(T, f), 0, 0, 0, 0 }
#define NAME(T, f) { #f, F_NAME, 1, offsetof(T, f), 0, 0, 0, 0 }
#define OPT_WHOLE(T, f, lo, hi) { #f, F_WHOLE, 0, offsetof(T, f), lo, hi, 0, 1 }
#define OPT_AT_LEAST(T, f, lo, hi) { #f, F_NUMBER, 0, offsetof(T, f), lo, hi, 0, 1 }

#define NUMERIC(spec) ((spec).kind == F_NUMBER || (spec).kind == F_WHOLE)

static const field_spec model_fields[] = {
	NAME(wzm_model, name), TEXT(wzm_model, attention, 0), WHOLE(wzm_model, layers, 1, 1000),
	WHOLE(wzm_model, kv_lora_rank, 1, 65536), WHOLE(wzm_model, rope_dim, 0, 65536),
	WHOLE(wzm_model, kv_heads, 1, 65536), WHOLE(wzm_model, head_dim, 1, 65536),
	WHOLE(wzm_model, hidden_size, 1, 1048576), POS(wzm_model, params_total_b, 1e5),
	POS(wzm_model, params_active_b, 1e5), AT_LEAST(wzm_model, weight_bits, 1, 64),
	WHOLE(wzm_model, max_context, 1, 1e9),
	/* the simulator's scenario keys of the same names bound them the same way */
	OPT_WHOLE(wzm_model, moe_layers, 1, 10000), OPT_WHOLE(wzm_model, moe_top_k, 1, 1024),
	OPT_WHOLE(wzm_model, moe_routed_experts, 1, 100000),
	OPT_WHOLE(wzm_model, moe_shared_experts, 0, 1024),
	OPT_WHOLE(wzm_model, moe_intermediate_size, 1, 1000000),
	OPT_WHOLE(wzm_model, moe_n_group, 1, 1024), OPT_WHOLE(wzm_model, moe_topk_group, 1, 1024),
	OPT_WHOLE(wzm_model, index_head_dim, 1, 65536), OPT_WHOLE(wzm_model, index_n_heads, 1, 65536),
	OPT_WHOLE(wzm_model, index_topk, 1, 1e9),
	OPT_WHOLE(wzm_model, num_attention_heads, 1, 4096),
	OPT_WHOLE(wzm_model, qk_nope_head_dim, 1, 65536), OPT_WHOLE(wzm_model, v_head_dim, 1, 65536),
	OPT_AT_LEAST(wzm_model, expert_bits, 1, 64),
	{ "source_url", F_TEXT, 0, offsetof(wzm_model, source), 0, 0, 0, 0 },
};

/* A GPU's memory, bandwidths and peaks divide step times and sizes: a value
 * just above zero (1e-300 TB/s) would make every step last for ever and a
 * simulation complete nothing.  The lower bounds sit a factor of ten or more
 * under the smallest GPU that serves models today, NVIDIA's T4 (16 GB,
 * 0.32 TB/s, 65 FP16 TFLOPS, PCIe 3.0 x16 at 16 GB/s;
 * https://www.nvidia.com/en-us/data-center/tesla-t4/), so no real GPU is
 * refused.  The FP4 peak, the NVLink domain and the NIC are optional
 * columns (a catalog of one's own without them reads as not catalogued). */
static const field_spec gpu_fields[] = {
	NAME(wzm_gpu, name), AT_LEAST(wzm_gpu, hbm_gib, 1, 1e5),
	AT_LEAST(wzm_gpu, hbm_tbps, 0.01, 1e4), AT_LEAST(wzm_gpu, bf16_tflops, 1, 1e6),
	AT_LEAST(wzm_gpu, fp8_tflops, 1, 1e6), OPT_AT_LEAST(wzm_gpu, fp4_tflops, 1, 1e6),
	AT_LEAST(wzm_gpu, nvlink_gbps, 0.1, 1e6), OPT_WHOLE(wzm_gpu, nvlink_domain, 1, 100000),
	OPT_AT_LEAST(wzm_gpu, nic_gbps, 0.1, 1e6), AT_LEAST(wzm_gpu, pcie_gbps, 0.1, 1e6),
	{ "price_reserved_usd_h", F_NUMBER, 0, offsetof(wzm_gpu, price_reserved_usd_h), 0, 1e4, 0, 0 },
	{ "price_ondemand_usd_h", F_NUMBER, 0, offsetof(wzm_gpu, price_ondemand_usd_h), 0, 1e4, 0, 0 },
	TEXT(wzm_gpu, price_source, 0), TEXT(wzm_gpu, price_date, 0),
};

/* A row of model-layers.csv before it joins its model's kinds. */
typedef struct {
	char *model;
	char *kind;
	double layers, window, ratio, topk, entry_nope, entry_rope, index_head_dim;
	char *source;
	const char *origin;
	int line;
} layer_row;

static const field_spec layer_fields[] = {
	NAME(layer_row, model), NAME(layer_row, kind), WHOLE(layer_row, layers, 1, 1000),
	WHOLE(layer_row, window, 1, 1e9), WHOLE(layer_row, ratio, 1, 1e6),
	WHOLE(layer_row, topk, 1, 1e9), WHOLE(layer_row, entry_nope, 1, 65536),
	WHOLE(layer_row, entry_rope, 0, 65536), WHOLE(layer_row, index_head_dim, 1, 65536),
	TEXT(layer_row, source, 1),
};

static const field_spec price_fields[] = {
	NAME(wzm_price, set), NAME(wzm_price, gpu), NONNEG(wzm_price, reserved_usd_h, 1e4),
	NONNEG(wzm_price, ondemand_usd_h, 1e4), TEXT(wzm_price, source, 1), TEXT(wzm_price, date, 0),
};

#define NFIELDS(a) ((int)(sizeof a / sizeof a[0]))

static void free_strings(void *row, const field_spec *spec, int n)
{
	for (int i = 0; i < n; i++)
		if (!NUMERIC(spec[i]))
			free(*(char **)((char *)row + spec[i].offset));
}

void wzm_catalog_free(wzm_catalog *cat)
{
	if (!cat)
		return;
	for (int i = 0; i < cat->nmodels; i++)
		free_strings(&cat->models[i], model_fields, NFIELDS(model_fields));
	for (int i = 0; i < cat->ngpus; i++)
		free_strings(&cat->gpus[i], gpu_fields, NFIELDS(gpu_fields));
	for (int i = 0; i < cat->nprices; i++)
		free_strings(&cat->prices[i], price_fields, NFIELDS(price_fields));
	free(cat->models);
	free(cat->gpus);
	free(cat->prices);
	free(cat->origin_layers);
	free(cat->origin_models);
	free(cat->origin_gpus);
	free(cat->origin_prices);
	free(cat);
}

static wz_err parse_number(const field_spec *spec, const char *value, const char *origin,
			   int line, double *v /* OUT */, wz_diag *diag)
{
	if (wz_parse_double(value, v))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field %s: '%.40s' is not a decimal number",
				   origin, line, spec->column, value);
	int below = spec->lo_open ? *v <= spec->lo : *v < spec->lo;
	if (below || *v > spec->hi || (spec->kind == F_WHOLE && *v != floor(*v)))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field %s: %s is not %s in %c%g, %g]",
				   origin, line, spec->column, value,
				   spec->kind == F_WHOLE ? "a whole number" : "a number",
				   spec->lo_open ? '(' : '[', spec->lo, spec->hi);
	return WZ_OK;
}

/* Parses rows of a CSV into an array of structs described by spec. */
static wz_err parse_rows(const char *text, size_t text_len, const char *origin, const field_spec *spec,
			 int nspec, size_t row_size, size_t origin_off, size_t line_off,
			 void **rows_out, int *n_out, wz_diag *diag)
{
	wz_csv *csv;
	if (nspec > 64)
		return wz_diag_set(diag, WZ_ERR_INTERNAL, "%s: more than 64 catalog columns", origin);
	wz_err err = wz_csv_parse(text, text_len, origin, &csv, diag);
	if (err)
		return err;
	if (csv->nrows == 0) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: empty file (a header row is needed)",
				   origin);
	}
	int col[64];
	for (int i = 0; i < nspec; i++) {
		col[i] = wz_csv_column(csv, spec[i].column);
		if (col[i] < 0 && !spec[i].optional) {
			err = wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: missing column '%s'", origin,
					  csv->rows[0].line, spec[i].column);
			wz_csv_free(csv);
			return err;
		}
	}
	int ncols = csv->rows[0].nfields;
	char *rows = calloc((size_t)csv->nrows, row_size);
	if (!rows) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	int n = 0;
	for (int r = 1; r < csv->nrows; r++) {
		const wz_csv_row *in = &csv->rows[r];
		char *row = rows + (size_t)n * row_size;
		if (in->nfields != ncols) {
			err = wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: %d fields, the header has %d",
					  origin, in->line, in->nfields, ncols);
			break;
		}
		n++;
		*(const char **)(row + origin_off) = origin;
		*(int *)(row + line_off) = in->line;
		for (int i = 0; i < nspec && !err; i++) {
			const char *raw = col[i] < 0 ? "" : wz_csv_field(in, col[i]);
			char *value = wz_strdup_trim(raw);
			if (!value) {
				err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
				break;
			}
			if (spec[i].required && !*value)
				err = wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field %s: empty", origin,
						  in->line, spec[i].column);
			/* No catalog cell spans lines: one that does opened a quote
			 * it never closed, and swallowed the rows after it. */
			if (!err && strchr(value, '\n'))
				err = wz_diag_set(diag, WZ_ERR_INPUT,
						  "%s:%d: field %s: a line break inside the field (a quote "
						  "opened here and closed on a later line swallows the rows "
						  "between)",
						  origin, in->line, spec[i].column);
			if (!err && NUMERIC(spec[i])) {
				double v = NAN;
				if (*value)
					err = parse_number(&spec[i], value, origin, in->line, &v, diag);
				*(double *)(row + spec[i].offset) = v;
				free(value);
			} else if (NUMERIC(spec[i])) {
				free(value);
			} else {
				if (!err && spec[i].kind == F_NAME)
					err = wz_name_check(value, origin, in->line, spec[i].column, diag);
				*(char **)(row + spec[i].offset) = value;
			}
		}
		if (err)
			break;
	}
	wz_csv_free(csv);
	if (err) {
		for (int i = 0; i < n; i++)
			free_strings(rows + (size_t)i * row_size, spec, nspec);
		free(rows);
		return err;
	}
	*rows_out = rows;
	*n_out = n;
	return WZ_OK;
}

/* Rows are structs of row_size bytes with a name and a line member. */
static wz_err check_unique(const char *origin, const void *rows, size_t row_size,
			   size_t name_off, size_t line_off, int n, wz_diag *diag)
{
	const char *base = rows;
#define ROW_NAME(i) (*(char *const *)(base + (size_t)(i) * row_size + name_off))
#define ROW_LINE(i) (*(const int *)(base + (size_t)(i) * row_size + line_off))
	for (int i = 0; i < n; i++)
		for (int j = 0; j < i; j++)
			if (wz_name_eq(ROW_NAME(i), ROW_NAME(j)))
				return wz_diag_set(diag, WZ_ERR_INPUT,
						   "%s:%d: field name: '%s' repeats line %d", origin,
						   ROW_LINE(i), ROW_NAME(i), ROW_LINE(j));
#undef ROW_NAME
#undef ROW_LINE
	return WZ_OK;
}

/* One rate per GPU in a price set, as models and GPUs have one row each. */
static wz_err check_unique_prices(const wzm_catalog *cat, wz_diag *diag)
{
	for (int i = 0; i < cat->nprices; i++)
		for (int j = 0; j < i; j++)
			if (wz_name_eq(cat->prices[i].set, cat->prices[j].set) &&
			    wz_name_eq(cat->prices[i].gpu, cat->prices[j].gpu))
				return wz_diag_set(diag, WZ_ERR_INPUT,
						   "%s:%d: fields set, gpu: '%s', '%s' repeats line %d",
						   cat->origin_prices, cat->prices[i].line,
						   cat->prices[i].set, cat->prices[i].gpu,
						   cat->prices[j].line);
	return WZ_OK;
}

/* A model's total parameters include its active ones. */
static wz_err check_params(const wzm_catalog *cat, wz_diag *diag)
{
	for (int i = 0; i < cat->nmodels; i++) {
		const wzm_model *m = &cat->models[i];
		if (m->params_total_b < m->params_active_b)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: field params_total_b: %g billion is below "
					   "params_active_b %g (the parameters a token uses are among "
					   "the model's)",
					   m->origin, m->line, m->params_total_b, m->params_active_b);
	}
	return WZ_OK;
}

static wz_err layer_kind_check(const layer_row *r, wzm_layer_kind *k, wz_diag *diag)
{
	static const char *const names[] = { "full", "window", "compressed" };
	int id = -1;
	for (int i = 0; i < 3; i++)
		if (wz_name_eq(r->kind, names[i]))
			id = i;
	if (id < 0)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field kind: '%s' is not full, window or compressed", r->origin,
				   r->line, r->kind);
	const char *bad = NULL, *why = NULL;
	if (id == WZM_KIND_FULL && !isnan(r->window))
		bad = "window", why = "a full layer keeps every token; a window is for window or compressed layers";
	else if (id == WZM_KIND_FULL && !isnan(r->ratio) && r->ratio != 1)
		bad = "ratio", why = "a full layer keeps one entry per token (ratio 1 or empty)";
	else if (id == WZM_KIND_WINDOW && isnan(r->window))
		bad = "window", why = "a window layer needs its window in tokens";
	else if (id == WZM_KIND_WINDOW && !isnan(r->ratio))
		bad = "ratio", why = "a window layer compresses nothing";
	else if (id == WZM_KIND_WINDOW && (!isnan(r->topk) || !isnan(r->index_head_dim)))
		bad = isnan(r->topk) ? "index_head_dim" : "topk", why = "a window layer has no indexer";
	else if (id == WZM_KIND_COMPRESSED && !(r->ratio >= 2))
		bad = "ratio", why = "a compressed layer needs 2 or more tokens an entry";
	else if (isnan(r->topk) != isnan(r->index_head_dim))
		bad = isnan(r->topk) ? "topk" : "index_head_dim",
		why = "an indexer (index_head_dim) is what selects the top-k entries: give both or neither";
	else if (!isnan(r->index_head_dim) && fmod(r->index_head_dim, 128) != 0)
		bad = "index_head_dim",
		why = "indexer keys are priced in fp8 blocks of 128 values: a multiple of 128";
	if (bad)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field %s: %s", r->origin, r->line, bad,
				   why);
	*k = (wzm_layer_kind){ (wzm_kind_id)id, r->layers, r->window,
			       id == WZM_KIND_COMPRESSED ? r->ratio : 1, r->topk,
			       r->entry_nope, r->entry_rope, r->index_head_dim, r->origin, r->line };
	return WZ_OK;
}

/* Gives the models their kinds from model-layers.csv's rows.  strict: a
 * row naming no model is an error (else it is left out: the embedded rows
 * beside a models.csv of one's own). */
static wz_err apply_layers(wzm_catalog *cat, const layer_row *rows, int n, int strict,
			   wz_diag *diag)
{
	for (int i = 0; i < cat->nmodels; i++)
		cat->models[i].nkinds = 0;
	for (int r = 0; r < n; r++) {
		wzm_model *m = NULL;
		for (int i = 0; i < cat->nmodels && !m; i++)
			if (wz_name_eq(rows[r].model, cat->models[i].name))
				m = &cat->models[i];
		if (!m && !strict)
			continue;
		if (!m)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field model: no model '%s' in %s",
					   rows[r].origin, rows[r].line, rows[r].model,
					   cat->origin_models ? cat->origin_models : "models.csv");
		if (m->nkinds == WZM_MAX_KINDS)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: field model: more than %d rows for '%s'",
					   rows[r].origin, rows[r].line, WZM_MAX_KINDS, m->name);
		wz_err err = layer_kind_check(&rows[r], &m->kinds[m->nkinds], diag);
		if (err)
			return err;
		m->nkinds++;
	}
	for (int i = 0; i < cat->nmodels; i++) {
		const wzm_model *m = &cat->models[i];
		if (!m->nkinds)
			continue;
		double sum = 0;
		for (int k = 0; k < m->nkinds; k++)
			sum += m->kinds[k].layers;
		if (sum != m->layers)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: field layers: %s's rows add up to %g layers, its "
					   "models.csv row (%s:%d) has %g",
					   m->kinds[m->nkinds - 1].origin, m->kinds[m->nkinds - 1].line,
					   m->name, sum, m->origin, m->line, m->layers);
	}
	return WZ_OK;
}

static wz_err parse_layers(wzm_catalog *cat, const char *text, char *origin_copy, int strict,
			   wz_diag *diag)
{
	void *rows = NULL;
	int n = 0;
	wz_err err = parse_rows(text, strlen(text), origin_copy, layer_fields, NFIELDS(layer_fields),
				sizeof(layer_row), offsetof(layer_row, origin),
				offsetof(layer_row, line), &rows, &n, diag);
	if (err) {
		free(origin_copy);
		return err;
	}
	/* the kinds point at the file's name: keep it before they do */
	free(cat->origin_layers);
	cat->origin_layers = origin_copy;
	err = apply_layers(cat, rows, n, strict, diag);
	for (int i = 0; i < n; i++)
		free_strings((layer_row *)rows + i, layer_fields, NFIELDS(layer_fields));
	free(rows);
	if (err)
		for (int i = 0; i < cat->nmodels; i++)
			cat->models[i].nkinds = 0;
	return err;
}

wz_err wzm_catalog_parse(wzm_catalog *cat, const char *kind, const char *text,
			 const char *origin, wz_diag *diag)
{
	wz_err err;
	void *rows = NULL;
	int n = 0;
	size_t text_len = strlen(text);
	char *origin_copy = strdup(origin);
	if (!origin_copy)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (!strcmp(kind, "models")) {
		err = parse_rows(text, text_len, origin_copy, model_fields, NFIELDS(model_fields),
				 sizeof(wzm_model), offsetof(wzm_model, origin),
				 offsetof(wzm_model, line), &rows, &n, diag);
		if (!err) {
			for (int i = 0; i < cat->nmodels; i++)
				free_strings(&cat->models[i], model_fields, NFIELDS(model_fields));
			free(cat->models);
			free(cat->origin_models);
			cat->models = rows;
			cat->nmodels = n;
			cat->origin_models = origin_copy;
			err = check_unique(origin_copy, cat->models, sizeof(wzm_model),
					   offsetof(wzm_model, name), offsetof(wzm_model, line), n, diag);
			return err ? err : check_params(cat, diag);
		}
	} else if (!strcmp(kind, "gpus")) {
		err = parse_rows(text, text_len, origin_copy, gpu_fields, NFIELDS(gpu_fields), sizeof(wzm_gpu),
				 offsetof(wzm_gpu, origin), offsetof(wzm_gpu, line), &rows, &n, diag);
		if (!err) {
			for (int i = 0; i < cat->ngpus; i++)
				free_strings(&cat->gpus[i], gpu_fields, NFIELDS(gpu_fields));
			free(cat->gpus);
			free(cat->origin_gpus);
			cat->gpus = rows;
			cat->ngpus = n;
			cat->origin_gpus = origin_copy;
			return check_unique(origin_copy, cat->gpus, sizeof(wzm_gpu),
					    offsetof(wzm_gpu, name), offsetof(wzm_gpu, line), n, diag);
		}
	} else if (!strcmp(kind, "prices")) {
		err = parse_rows(text, text_len, origin_copy, price_fields, NFIELDS(price_fields),
				 sizeof(wzm_price), offsetof(wzm_price, origin),
				 offsetof(wzm_price, line), &rows, &n, diag);
		if (!err) {
			for (int i = 0; i < cat->nprices; i++)
				free_strings(&cat->prices[i], price_fields, NFIELDS(price_fields));
			free(cat->prices);
			free(cat->origin_prices);
			cat->prices = rows;
			cat->nprices = n;
			cat->origin_prices = origin_copy;
			return check_unique_prices(cat, diag);
		}
	} else if (!strcmp(kind, "layers")) {
		return parse_layers(cat, text, origin_copy, 1, diag);
	} else {
		err = wz_diag_set(diag, WZ_ERR_INTERNAL, "unknown catalog kind '%s'", kind);
	}
	free(origin_copy);
	return err;
}

static int file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

wz_err wzm_catalog_load(const char *dir, wzm_catalog **out, wz_diag *diag)
{
	static const char *const kinds[] = { "models", "gpus", "prices", "layers" };
	static const char *const files[] = { "models.csv", "gpus.csv", "prices.csv",
					      "model-layers.csv" };
	int own_models = 0;
	*out = NULL;
	wzm_catalog *cat = calloc(1, sizeof *cat);
	if (!cat)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (dir) {
		struct stat st;
		if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
			free(cat);
			return wz_diag_set(diag, WZ_ERR_INPUT, "--catalog %s: not a folder", dir);
		}
	}
	for (int k = 0; k < 4; k++) {
		const char *file = files[k];
		char *path = dir ? wz_path_join(dir, file) : NULL;
		wz_err err;
		if (path && file_exists(path)) {
			char *text;
			size_t size;
			err = wz_read_file(path, 16 << 20, &text, &size, diag);
			if (!err && (err = wz_text_check(text, size, path, diag)))
				free(text);
			else if (!err) {
				err = wzm_catalog_parse(cat, kinds[k], text, path, diag);
				free(text);
			}
			own_models |= k == 0;
		} else {
			char origin[64];
			snprintf(origin, sizeof origin, "embedded:%s", file);
			const char *text = wz_embedded_file(file, NULL);
			char *copy = k == 3 && text ? strdup(origin) : NULL;
			if (k == 3 && text && !copy)
				err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
			else if (k == 3 && text)
				err = parse_layers(cat, text, copy, !own_models, diag);
			else
				err = text ? wzm_catalog_parse(cat, kinds[k], text, origin, diag)
					   : wz_diag_set(diag, WZ_ERR_INTERNAL, "no embedded %s", file);
		}
		free(path);
		if (err) {
			wzm_catalog_free(cat);
			return err;
		}
	}
	*out = cat;
	return WZ_OK;
}

/* Appends the i-th name of a "known: a, b, c" list, cut at the buffer's
 * end.  The names go straight from the rows: a copy of the pointers on the
 * stack would be as long as a catalog someone else wrote. */
static void append_name(char *out, size_t n, int i, const char *name)
{
	strncat(out, i ? ", " : "", n - strlen(out) - 1);
	strncat(out, name, n - strlen(out) - 1);
}

const wzm_model *wzm_find_model(const wzm_catalog *cat, const char *name, wz_diag *diag)
{
	for (int i = 0; i < cat->nmodels; i++)
		if (wz_name_eq(name, cat->models[i].name))
			return &cat->models[i];
	char known[4096] = "";
	for (int i = 0; i < cat->nmodels; i++)
		append_name(known, sizeof known, i, cat->models[i].name);
	wz_diag_set(diag, WZ_ERR_NOT_FOUND, "unknown model '%s' in %s (known: %s)", name,
		    cat->origin_models, known);
	return NULL;
}

const wzm_gpu *wzm_find_gpu(const wzm_catalog *cat, const char *name, wz_diag *diag)
{
	for (int i = 0; i < cat->ngpus; i++)
		if (wz_name_eq(name, cat->gpus[i].name))
			return &cat->gpus[i];
	const wzm_gpu *match = NULL;
	int nmatch = 0;
	for (int i = 0; i < cat->ngpus; i++)
		if (wz_name_prefix(name, cat->gpus[i].name)) {
			match = &cat->gpus[i];
			nmatch++;
		}
	if (nmatch == 1)
		return match;
	char known[4096] = "";
	for (int i = 0; i < cat->ngpus; i++)
		append_name(known, sizeof known, i, cat->gpus[i].name);
	wz_diag_set(diag, WZ_ERR_NOT_FOUND, "%s GPU '%s' in %s (known: %s)",
		    nmatch > 1 ? "ambiguous" : "unknown", name, cat->origin_gpus, known);
	return NULL;
}

wz_err wzm_need(double value, const char *what, const char *field, const char *origin,
		int line, wz_diag *diag)
{
	if (!isnan(value))
		return WZ_OK;
	return wz_diag_set(diag, WZ_ERR_MISSING,
			   "%s:%d: field %s is empty for %s, and this calculation needs it "
			   "(fill it in a catalog of your own and pass --catalog DIR)",
			   origin, line, field, what);
}

wz_err wzm_find_rates(const wzm_catalog *cat, const char *set, const wzm_gpu *gpu,
		      wzm_rates *out, wz_diag *diag)
{
	memset(out, 0, sizeof *out);
	if (!strcmp(set, "catalog")) {
		wz_err err = wzm_need(gpu->price_reserved_usd_h, gpu->name, "price_reserved_usd_h",
				      gpu->origin, gpu->line, diag);
		if (!err)
			err = wzm_need(gpu->price_ondemand_usd_h, gpu->name, "price_ondemand_usd_h",
				       gpu->origin, gpu->line, diag);
		if (err)
			return err;
		*out = (wzm_rates){ gpu->price_reserved_usd_h, gpu->price_ondemand_usd_h,
				    gpu->price_source, gpu->price_date, gpu->origin, gpu->line };
		return WZ_OK;
	}
	int set_known = 0;
	for (int i = 0; i < cat->nprices; i++) {
		const wzm_price *p = &cat->prices[i];
		if (strcmp(p->set, set) != 0)
			continue;
		set_known = 1;
		if (!wz_name_eq(p->gpu, gpu->name))
			continue;
		wz_err err = wzm_need(p->reserved_usd_h, gpu->name, "reserved_usd_h", p->origin,
				      p->line, diag);
		if (!err)
			err = wzm_need(p->ondemand_usd_h, gpu->name, "ondemand_usd_h", p->origin,
				       p->line, diag);
		if (err)
			return err;
		*out = (wzm_rates){ p->reserved_usd_h, p->ondemand_usd_h, p->source, p->date,
				    p->origin, p->line };
		return WZ_OK;
	}
	if (!set_known) {
		char known[2048] = "catalog";
		for (int i = 0; i < cat->nprices; i++) {
			int seen = 0;
			for (int j = 0; j < i; j++)
				seen |= !strcmp(cat->prices[j].set, cat->prices[i].set);
			if (!seen) {
				strncat(known, ", ", sizeof known - strlen(known) - 1);
				strncat(known, cat->prices[i].set, sizeof known - strlen(known) - 1);
			}
		}
		return wz_diag_set(diag, WZ_ERR_NOT_FOUND, "unknown price set '%s' in %s (known: %s)",
				   set, cat->origin_prices, known);
	}
	return wz_diag_set(diag, WZ_ERR_NOT_FOUND, "price set '%s' in %s has no row for GPU '%s'",
			   set, cat->origin_prices, gpu->name);
}
