/* Cache per layer kind (layers.h). */
#include "costmodel/layers.h"

#include <math.h>
#include <string.h>

#include "common/wz_str.h"
#include "costmodel/capacity.h"

const char *wzm_kind_name(wzm_kind_id kind)
{
	return kind == WZM_KIND_WINDOW ? "window" : kind == WZM_KIND_COMPRESSED ? "compressed" : "full";
}

int wzm_model_hybrid(const wzm_model *model)
{
	for (int k = 0; k < model->nkinds; k++)
		if (model->kinds[k].kind != WZM_KIND_FULL)
			return 1;
	return 0;
}

wz_err wzm_model_kinds(const wzm_model *model, wzm_layer_kind *kinds, int *n, wz_diag *diag)
{
	*n = 0;
	if (model->nkinds > 0) {
		memcpy(kinds, model->kinds, sizeof *kinds * (size_t)model->nkinds);
		*n = model->nkinds;
		return WZ_OK;
	}
	wz_err err = wzm_need(model->layers, model->name, "layers", model->origin, model->line, diag);
	if (err)
		return err;
	wzm_layer_kind k = { WZM_KIND_FULL, model->layers, NAN, 1, NAN, NAN, 0, NAN,
			     model->origin, model->line };
	if (!isnan(model->kv_lora_rank)) {
		if ((err = wzm_need(model->rope_dim, model->name, "rope_dim", model->origin,
				    model->line, diag)))
			return err;
		k.entry_nope = model->kv_lora_rank;
		k.entry_rope = model->rope_dim;
	} else if (!isnan(model->kv_heads) && !isnan(model->head_dim)) {
		k.entry_nope = 2 * model->kv_heads * model->head_dim;
	} else {
		return wzm_need(model->kv_lora_rank, model->name, "kv_lora_rank", model->origin,
				model->line, diag);
	}
	if (model->index_topk > 0 && model->index_head_dim > 0) {
		k.topk = model->index_topk;
		k.index_head_dim = model->index_head_dim;
	}
	kinds[0] = k;
	*n = 1;
	return WZ_OK;
}

void wzm_kind_entries(const wzm_layer_kind *k, double tokens, double *window, double *entries)
{
	*window = isnan(k->window) ? 0 : (tokens < k->window ? tokens : k->window);
	*entries = k->kind == WZM_KIND_WINDOW ? 0 : floor(tokens / k->ratio);
}

long wzm_published_entry_bytes(const char *format, int nope, int rope, const char **source)
{
	static const struct {
		const char *name;
		int nope, rope;
		long bytes;
		const char *source;
	} layouts[] = {
		/* 448 + 64*2 + (448/64)*1 + 1 */
		{ "fp8-model1", 448, 64, 448 + 64 * 2 + 448 / 64 + 1,
		  "FlashMLA csrc/api/sparse_decode.h (MODEL1 FP8 sparse bytes_per_token) and "
		  "tests/quant.py (MODEL1_FP8Sparse: 448 fp8, 64 bf16, 7 scales of 64)" },
		/* 448/2 + 64*2 + (448/16 + 4) */
		{ "nvfp4-v4", 448, 64, 448 / 2 + 64 * 2 + 448 / 16 + 4,
		  "FlashInfer flashinfer/mla/_sparse_mla_nvfp4_sm120.py (352 data bytes, 32 "
		  "scale bytes a token)" },
	};
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
		if (!wz_name_eq(format, layouts[i].name))
			continue;
		if (source)
			*source = layouts[i].source;
		return nope == layouts[i].nope && rope == layouts[i].rope ? layouts[i].bytes : 0;
	}
	return -1;
}

wz_err wzm_index_entry_bytes(const char *format, double dim, double *bytes, wz_diag *diag)
{
	double d = dim;
	if (wz_name_eq(format, "bf16")) {
		*bytes = 2 * d;
		return WZ_OK;
	}
	int fp8 = wz_name_eq(format, "fp8"), fp4 = wz_name_eq(format, "mxfp4");
	if (!fp8 && !fp4)
		return wz_diag_set(diag, WZ_ERR_NOT_FOUND,
				   "indexer format '%s': use bf16, fp8 or mxfp4", format);
	double block = fp8 ? 128 : 32;
	if (fmod(d, block) != 0)
		return wz_diag_set(diag, WZ_ERR_UNSUPPORTED,
				   "indexer format %s cannot code a %g-value key (blocks of %g)", format,
				   d, block);
	*bytes = fp8 ? d + 4 * (d / 128) : d / 2 + d / 32;
	return WZ_OK;
}

void wzm_cache_anatomy_compute(const wzm_layer_kind *kinds, int nkinds, const double *entry_bytes,
			       const double *index_bytes, double tokens, wzm_cache_anatomy *out)
{
	memset(out, 0, sizeof *out);
	out->nkinds = nkinds;
	for (int i = 0; i < nkinds; i++) {
		const wzm_layer_kind *k = &kinds[i];
		wzm_kind_cache *c = &out->kind[i];
		wzm_kind_entries(k, tokens, &c->window_entries, &c->entries);
		c->entry_bytes = entry_bytes[i];
		c->index_bytes = isnan(k->index_head_dim) ? 0 : index_bytes[i];
		c->layer_bytes = (c->window_entries + c->entries) * c->entry_bytes +
				 c->entries * c->index_bytes;
		c->bytes = c->layer_bytes * k->layers;
		double chosen = isnan(k->topk) || c->entries < k->topk ? c->entries : k->topk;
		c->read_entries = c->window_entries + chosen;
		c->read_index_keys = c->index_bytes > 0 ? c->entries : 0;
		out->bytes += c->bytes;
		out->read_bytes += k->layers * (c->read_entries * c->entry_bytes +
						c->read_index_keys * c->index_bytes);
	}
}

void wzm_decode_terms_compute(const wzm_layer_kind *kinds, int nkinds, const double *entry_bytes,
			      const double *index_bytes, wzm_decode_terms *out)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; i < nkinds; i++) {
		const wzm_layer_kind *k = &kinds[i];
		double L = k->layers;
		if (!isnan(k->window)) {
			out->fixed_bytes += L * k->window * entry_bytes[i];
			out->fixed_pairs += L * k->window;
			if (k->window > out->cap_tokens)
				out->cap_tokens = k->window;
		}
		if (k->kind == WZM_KIND_WINDOW)
			continue;
		if (isnan(k->topk)) {
			out->per_token_bytes += L * entry_bytes[i] / k->ratio;
			out->per_token_pairs += L / k->ratio;
			continue;
		}
		out->fixed_bytes += L * k->topk * entry_bytes[i];
		out->fixed_pairs += L * k->topk;
		out->per_token_bytes += L * index_bytes[i] / k->ratio;
		out->per_token_index_keys += L / k->ratio;
		if (k->topk * k->ratio > out->cap_tokens)
			out->cap_tokens = k->topk * k->ratio;
	}
}

double wzm_token_bytes(const wzm_model *model, double entry_bytes, long context)
{
	if (!wzm_model_hybrid(model))
		return (entry_bytes + wzm_side_cache_per_layer(model)) * model->layers;
	double eb[WZM_MAX_KINDS], ib[WZM_MAX_KINDS];
	for (int k = 0; k < model->nkinds; k++) {
		eb[k] = entry_bytes;
		ib[k] = 0;
		if (!isnan(model->kinds[k].index_head_dim))
			wzm_index_entry_bytes("fp8", model->kinds[k].index_head_dim, &ib[k], NULL);
	}
	wzm_cache_anatomy a;
	wzm_cache_anatomy_compute(model->kinds, model->nkinds, eb, ib, (double)context, &a);
	return a.bytes / (double)context;
}
