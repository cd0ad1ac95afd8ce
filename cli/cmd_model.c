/* `wzplan model`: the catalog's models and one model's cache anatomy per
 * layer kind (costmodel/layers.h; docs/cache-anatomy.md). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "codec/formats/format.h"
#include "common/wz_str.h"
#include "costmodel/capacity.h"
#include "costmodel/layers.h"

#define MAX_FORMATS 16

static void help(void)
{
	printf("Usage: wzplan model list [options]\n"
	       "       wzplan model show NAME --context TOKENS [--formats F,...] [options]\n"
	       "\n"
	       "list: the catalog's models, with their layer kinds.\n"
	       "show: a model's cache anatomy per layer kind at TOKENS tokens: layers,\n"
	       "entry shape (values without and with position), entries kept, bytes per\n"
	       "entry in each format, the indexer's bytes per key, and the cache per\n"
	       "sequence in each format.\n"
	       "\n"
	       "Options:\n"
	       "  --context TOKENS       tokens in the sequence (show; 1048576, 100k)\n"
	       "  --formats LIST         cache formats (show; default bf16,fp8-mix): codec\n"
	       "                         formats (wzplan codec formats) or the stacks'\n"
	       "                         published entries fp8-model1, nvfp4-v4; FORMAT+IDX\n"
	       "                         sets the indexer keys' format (bf16, fp8, mxfp4;\n"
	       "                         default bf16 for bf16, else fp8)\n"
	       "  --catalog DIR          use the catalog files found in DIR\n"
	       "  --format F             text (default), md, csv or json\n"
	       "  -o, --output FILE      write there instead of standard output\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Examples:\n"
	       "  wzplan model list\n"
	       "  wzplan model show DeepSeek-V4-Pro --context 1048576 --formats bf16,fp8-model1\n"
	       "  wzplan model show DeepSeek-V3.2-Exp --context 128k --formats fp8-ds-mla --format csv\n");
}

/* One format column: the main entry's bytes per kind and the indexer's. */
typedef struct {
	char name[64];
	char index_name[16];
	double entry_bytes[WZM_MAX_KINDS];
	double index_bytes[WZM_MAX_KINDS];
} model_format;

/* "fp8-model1", "bf16+bf16", "wz-5.44+mxfp4": the bytes of each kind's
 * entry and indexer key, or exit 2 naming the kind's row and fields. */
static int resolve_format(const char *spec, const wzm_model *m, const wzm_layer_kind *kinds,
			  int nkinds, model_format *out)
{
	memset(out, 0, sizeof *out);
	const char *plus = strchr(spec, '+');
	size_t len = plus ? (size_t)(plus - spec) : strlen(spec);
	if (len == 0 || len >= sizeof out->name)
		return wz_cli_usage("model", "--formats: '%s' is not a format", spec);
	memcpy(out->name, spec, len);
	const char *idx = plus ? plus + 1 : wz_name_eq(out->name, "bf16") ? "bf16" : "fp8";
	if (strlen(idx) >= sizeof out->index_name)
		return wz_cli_usage("model", "--formats: '%s': indexer format '%s': use bf16, fp8 "
				    "or mxfp4", spec, idx);
	snprintf(out->index_name, sizeof out->index_name, "%s", idx);
	wz_diag diag;
	for (int k = 0; k < nkinds; k++) {
		int nope = (int)kinds[k].entry_nope, rope = (int)kinds[k].entry_rope;
		long published = wzm_published_entry_bytes(out->name, nope, rope, NULL);
		double bytes = (double)published;
		if (published < 0) {
			wzc_format fmt;
			if (wzc_format_parse(out->name, &fmt, &diag))
				return wz_cli_usage("model", "--formats: %s", diag.msg);
			if (fmt.keeps)
				return wz_cli_usage("model",
						    "--formats: '%s' keeps tokens in bf16, so its bytes "
						    "depend on each sequence: measure it with codec measure",
						    out->name);
			snprintf(out->name, sizeof out->name, "%s", fmt.name);
			bytes = (double)wzc_record_bytes(&fmt, nope, rope);
		}
		if (!(bytes > 0)) {
			/* the kinds come from model-layers.csv, or models.csv's row */
			wz_diag_set(&diag, WZ_ERR_INPUT,
				    "%s:%d: fields %s: format '%s' cannot code %s's %d + %d-value "
				    "entry",
				    kinds[k].origin, kinds[k].line,
				    m->nkinds ? "entry_nope, entry_rope" : "kv_lora_rank, rope_dim",
				    out->name, m->name, nope, rope);
			return wz_cli_fail("model", &diag);
		}
		out->entry_bytes[k] = bytes;
		if (isnan(kinds[k].index_head_dim))
			continue;
		wz_err err = wzm_index_entry_bytes(out->index_name, kinds[k].index_head_dim,
						   &out->index_bytes[k], &diag);
		if (err == WZ_ERR_NOT_FOUND)
			return wz_cli_usage("model", "--formats: '%s': %s", spec, diag.msg);
		if (err) {
			wz_diag at;
			wz_diag_set(&at, WZ_ERR_INPUT, "%s:%d: field index_head_dim: %s", kinds[k].origin,
				    kinds[k].line, diag.msg);
			return wz_cli_fail("model", &at);
		}
	}
	return 0;
}

/* "compressed 1/4, top-1024 + window 128" */
static void kind_label(const wzm_layer_kind *k, char *buf, size_t n)
{
	char extra[96] = "";
	if (k->kind == WZM_KIND_COMPRESSED)
		snprintf(extra, sizeof extra, " 1/%g", k->ratio);
	if (!isnan(k->topk))
		snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " top-%g", k->topk);
	if (!isnan(k->window) && k->kind != WZM_KIND_WINDOW)
		snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " + window %g",
			 k->window);
	if (k->kind == WZM_KIND_WINDOW)
		snprintf(extra, sizeof extra, " %g", k->window);
	snprintf(buf, n, "%s%s", wzm_kind_name(k->kind), extra);
}

static wzp_table *show_table(const wzm_model *m, const wzm_layer_kind *kinds, int nkinds,
			     const model_format *f, int nf, long context)
{
	wzp_table *t = wzp_table_new("cache anatomy");
	if (!t)
		return NULL;
	static const struct {
		const char *key, *label;
		int right;
	} cols[] = {
		{ "format", "Format", 0 },         { "kind", "Layer kind", 0 },
		{ "layers", "Layers", 1 },         { "entry", "Entry", 1 },
		{ "window_entries", "Window", 1 }, { "entries", "Entries", 1 },
		{ "entry_bytes", "B/entry", 1 },   { "index_format", "Index", 0 },
		{ "index_bytes", "B/key", 1 },     { "read_entries", "Read/query", 1 },
		{ "bytes", "Bytes", 1 },           { "gib", "GiB", 1 },
	};
	for (size_t c = 0; c < sizeof cols / sizeof cols[0]; c++)
		wzp_table_column(t, cols[c].key, cols[c].label, cols[c].right);
	for (int i = 0; i < nf; i++) {
		wzm_cache_anatomy a;
		wzm_cache_anatomy_compute(kinds, nkinds, f[i].entry_bytes, f[i].index_bytes,
					  (double)context, &a);
		for (int k = 0; k < nkinds; k++) {
			const wzm_kind_cache *c = &a.kind[k];
			char label[128], shape[48];
			kind_label(&kinds[k], label, sizeof label);
			snprintf(shape, sizeof shape, "%g+%g", kinds[k].entry_nope, kinds[k].entry_rope);
			wzp_table_row(t);
			wzp_table_str(t, f[i].name);
			wzp_table_str(t, label);
			wzp_table_numf(t, kinds[k].layers, 0);
			wzp_table_str(t, shape);
			wzp_table_numf(t, c->window_entries, 0);
			wzp_table_numf(t, c->entries, 0);
			wzp_table_numf(t, c->entry_bytes, 0);
			if (c->index_bytes > 0) {
				wzp_table_str(t, f[i].index_name);
				wzp_table_numf(t, c->index_bytes, 0);
			} else {
				wzp_table_empty(t);
				wzp_table_empty(t);
			}
			wzp_table_numf(t, c->read_entries, 0);
			wzp_table_numf(t, c->bytes, 0);
			wzp_table_numf(t, c->bytes / WZM_GIB, 3);
		}
		wzp_table_row(t);
		wzp_table_str(t, f[i].name);
		wzp_table_str(t, "all");
		wzp_table_numf(t, m->layers, 0);
		for (int c = 0; c < 7; c++)
			wzp_table_empty(t);
		wzp_table_numf(t, a.bytes, 0);
		wzp_table_numf(t, a.bytes / WZM_GIB, 3);
	}
	wzp_table_note(t, "%s at %ld tokens (%s:%d). Window: entries of the uncompressed window "
		       "a layer keeps; Entries: its compressed (or, for full layers, per-token) "
		       "entries, floor(tokens / ratio); Bytes: the kind's layers' cache, (Window + "
		       "Entries) x B/entry + Entries x B/key; Read/query: entries one decode query "
		       "reads a layer (the window, then the top-k its indexer selects or all).",
		       m->name, context, m->origin, m->line);
	return t;
}

static wzp_table *list_table(const wzm_catalog *cat)
{
	wzp_table *t = wzp_table_new("models");
	if (!t)
		return NULL;
	wzp_table_column(t, "name", "Model", 0);
	wzp_table_column(t, "attention", "Attention", 0);
	wzp_table_column(t, "layers", "Layers", 1);
	wzp_table_column(t, "kinds", "Layer kinds", 0);
	wzp_table_column(t, "params_total_b", "Params (B)", 1);
	wzp_table_column(t, "params_active_b", "Active (B)", 1);
	wzp_table_column(t, "max_context", "Context", 1);
	for (int i = 0; i < cat->nmodels; i++) {
		const wzm_model *m = &cat->models[i];
		wzm_layer_kind kinds[WZM_MAX_KINDS];
		int n = 0;
		char desc[512] = "";
		if (wzm_model_kinds(m, kinds, &n, NULL) == WZ_OK) {
			for (int k = 0; k < n; k++) {
				char label[128];
				kind_label(&kinds[k], label, sizeof label);
				snprintf(desc + strlen(desc), sizeof desc - strlen(desc), "%s%g %s %g+%g",
					 k ? "; " : "", kinds[k].layers, label, kinds[k].entry_nope,
					 kinds[k].entry_rope);
			}
		}
		wzp_table_row(t);
		wzp_table_str(t, m->name);
		wzp_table_str(t, m->attention ? m->attention : "");
		if (isnan(m->layers))
			wzp_table_empty(t);
		else
			wzp_table_numf(t, m->layers, 0);
		if (*desc)
			wzp_table_str(t, desc);
		else
			wzp_table_empty(t);
		double v[] = { m->params_total_b, m->params_active_b, m->max_context };
		for (int c = 0; c < 3; c++) {
			if (isnan(v[c]))
				wzp_table_empty(t);
			else
				wzp_table_numf(t, v[c], v[c] == floor(v[c]) ? 0 : 1);
		}
	}
	wzp_table_note(t, "Catalog: %s; layer kinds: %s (a model without rows there keeps one "
		       "entry per token in every layer).",
		       cat->origin_models, cat->origin_layers ? cat->origin_layers : "none");
	return t;
}

int wz_cmd_model(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "context", required_argument, NULL, 'c' },
		{ "formats", required_argument, NULL, 'F' },
		{ "catalog", required_argument, NULL, 'C' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *context_arg = NULL, *formats_arg = "bf16,fp8-mix", *catalog = NULL,
		   *output = NULL;
	wzp_output how = WZP_TEXT;
	wz_diag diag;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': context_arg = optarg; break;
		case 'F': formats_arg = optarg; break;
		case 'C': catalog = optarg; break;
		case 'f':
			if (wzp_output_parse(optarg, &how, &diag))
				return wz_cli_usage("model", "%s", diag.msg);
			break;
		case 'o': output = optarg; break;
		case 'h': help(); return 0;
		case ':': return wz_cli_bad_option("model", ':', argv);
		case '?': return wz_cli_bad_option("model", '?', argv);
		default: return wz_cli_usage("model", "unknown option");
		}
	}
	if (optind >= argc)
		return wz_cli_usage("model", "say list or show NAME");
	const char *sub = argv[optind];
	int show = !strcmp(sub, "show");
	if (!show && strcmp(sub, "list"))
		return wz_cli_usage("model", "'%s': say list or show NAME", sub);
	if (show && optind + 1 >= argc)
		return wz_cli_usage("model", "show needs a model name (wzplan model list)");
	if (optind + 1 + show < argc)
		return wz_cli_usage("model", "unexpected argument '%s'", argv[optind + 1 + show]);
	long context = 0;
	if (show && !context_arg)
		return wz_cli_usage("model", "show needs --context TOKENS");
	if (!show && context_arg)
		return wz_cli_usage("model", "--context is for show");
	if (show && wz_cli_long("model", "--context", context_arg, 1, 1000000000L, &context))
		return 2;

	wzm_catalog *cat;
	if (wzm_catalog_load(catalog, &cat, &diag))
		return wz_cli_fail("model", &diag);
	wzp_table *t = NULL;
	int rc = 0;
	if (!show) {
		t = list_table(cat);
	} else {
		const wzm_model *m = wzm_find_model(cat, argv[optind + 1], &diag);
		wzm_layer_kind kinds[WZM_MAX_KINDS];
		int nkinds = 0;
		if (!m || wzm_model_kinds(m, kinds, &nkinds, &diag)) {
			rc = wz_cli_fail("model", &diag);
		} else {
			model_format f[MAX_FORMATS];
			int nf = 0;
			char *list = strdup(formats_arg);
			char *save = NULL;
			for (char *tok = list ? strtok_r(list, ",", &save) : NULL; tok && !rc;
			     tok = strtok_r(NULL, ",", &save)) {
				char *spec = wz_strdup_trim(tok);
				if (!spec || !*spec)
					rc = wz_cli_usage("model", "--formats: an empty format in '%s'",
							  formats_arg);
				else if (nf == MAX_FORMATS)
					rc = wz_cli_usage("model", "--formats: more than %d formats",
							  MAX_FORMATS);
				else
					rc = resolve_format(spec, m, kinds, nkinds, &f[nf++]);
				free(spec);
			}
			if (!list)
				rc = wz_cli_fail("model", &(wz_diag){ WZ_ERR_NOMEM, "out of memory" });
			else if (!rc && nf == 0)
				rc = wz_cli_usage("model", "--formats: the format list is empty");
			free(list);
			if (!rc)
				t = show_table(m, kinds, nkinds, f, nf, context);
		}
	}
	if (!rc) {
		wz_buf out = { 0 };
		if (!t || wzp_table_render(t, how, &out)) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_cli_fail("model", &diag);
		} else {
			rc = wz_cli_emit("model", output, wz_buf_str(&out));
		}
		wz_buf_free(&out);
	}
	wzp_table_free(t);
	wzm_catalog_free(cat);
	return rc;
}
