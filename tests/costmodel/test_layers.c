/* The cache per layer kind (costmodel/layers.h): DeepSeek-V4's hybrid
 * cache against the figures its stacks publish, worked out by hand in
 * docs/cache-anatomy.md; layer patterns and entry shapes refused with file,
 * row and field; mixed-precision weights. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/capacity.h"
#include "costmodel/layers.h"
#include "tests/tap.h"

static wzm_catalog *cat;

/* A model's cache per sequence with every kind's entry at `entry` bytes
 * and its indexer keys in `index_fmt`. */
static double cache_bytes(const char *model, double entry, const char *index_fmt, double tokens)
{
	const wzm_model *m = wzm_find_model(cat, model, NULL);
	wzm_layer_kind kinds[WZM_MAX_KINDS];
	int n;
	if (!m || wzm_model_kinds(m, kinds, &n, NULL))
		return NAN;
	double eb[WZM_MAX_KINDS], ib[WZM_MAX_KINDS];
	for (int k = 0; k < n; k++) {
		eb[k] = entry;
		ib[k] = 0;
		if (!isnan(kinds[k].index_head_dim) &&
		    wzm_index_entry_bytes(index_fmt, kinds[k].index_head_dim, &ib[k], NULL))
			return NAN;
	}
	wzm_cache_anatomy a;
	wzm_cache_anatomy_compute(kinds, n, eb, ib, tokens, &a);
	return a.bytes;
}

static void test_v4_kinds(void)
{
	const wzm_model *pro = wzm_find_model(cat, "DeepSeek-V4-Pro", NULL);
	const wzm_model *flash = wzm_find_model(cat, "DeepSeek-V4-Flash", NULL);
	ok(pro && pro->nkinds == 2 && pro->kinds[0].kind == WZM_KIND_COMPRESSED &&
		   pro->kinds[0].layers == 30 && pro->kinds[0].ratio == 4 &&
		   pro->kinds[0].topk == 1024 && pro->kinds[0].index_head_dim == 128 &&
		   pro->kinds[1].layers == 31 && pro->kinds[1].ratio == 128 &&
		   isnan(pro->kinds[1].topk) && pro->kinds[1].window == 128,
	   "V4-Pro: 30 layers 1/4 with a top-1024 indexer, 31 layers 1/128, windows of 128");
	ok(flash && flash->nkinds == 3 && flash->kinds[0].topk == 512 &&
		   flash->kinds[2].kind == WZM_KIND_WINDOW && flash->kinds[2].layers == 2,
	   "V4-Flash: top-512, and 2 window-only layers");
	ok(pro && wzm_model_hybrid(pro) && !wzm_model_hybrid(wzm_find_model(cat, "DeepSeek-V3", NULL)),
	   "hybrid: V4 yes, V3 no");
	wzm_layer_kind k[WZM_MAX_KINDS];
	int n;
	const wzm_model *v32 = wzm_find_model(cat, "DeepSeek-V3.2-Exp", NULL);
	ok(v32 && !wzm_model_kinds(v32, k, &n, NULL) && n == 1 && k[0].kind == WZM_KIND_FULL &&
		   k[0].layers == 61 && k[0].entry_nope == 512 && k[0].entry_rope == 64 &&
		   k[0].topk == 2048 && k[0].index_head_dim == 128,
	   "V3.2-Exp derived from models.csv: 61 full layers, 512 + 64, DSA top-2048");
	double w, e;
	wzm_kind_entries(&pro->kinds[0], 100, &w, &e);
	ok(w == 100 && e == 25, "100 tokens: the window holds 100, 25 entries of 4");
	wzm_kind_entries(&pro->kinds[1], 1000, &w, &e);
	ok(w == 128 && e == 7, "1,000 tokens: a window of 128, floor(1000/128) = 7 entries");
}

/* docs/cache-anatomy.md: the figures of the issue and of vLLM's post. */
static void test_v4_figures(void)
{
	double S = 1048576, gib = WZM_GIB;
	double bf16 = cache_bytes("DeepSeek-V4-Pro", 1024, "bf16", S);
	is_double(bf16, 10334371840.0, 0, "V4-Pro at 2^20 tokens, BF16 entry and indexer: 10,334,371,840 B");
	ok(fabs(bf16 / gib / 9.62 - 1) < 0.02, "... within 2%% of 9.62 GiB (%.4f)", bf16 / gib);
	double v32 = cache_bytes("DeepSeek-V3.2-Exp", 1152, "bf16", S);
	is_double(v32, 90060095488.0, 0, "V3.2-style cache at 2^20: 61 x 2^20 x 1408 B");
	ok(fabs(v32 / gib / 83.9 - 1) < 0.02, "... within 2%% of 83.9 GiB (%.3f)", v32 / gib);
	long fp8 = wzm_published_entry_bytes("fp8-model1", 448, 64, NULL);
	is_long(fp8, 584, "FlashMLA's V4 FP8 entry: 448 + 128 + 7 + 1 = 584 B");
	is_long(wzm_published_entry_bytes("nvfp4-v4", 448, 64, NULL), 384,
		"FlashInfer's V4 NVFP4 entry: 224 + 128 + 32 = 384 B");
	is_long(wzm_published_entry_bytes("fp8-model1", 512, 64, NULL), 0,
		"fp8-model1 cannot code a 512 + 64 entry");
	is_long(wzm_published_entry_bytes("fp8-mix", 448, 64, NULL), -1, "fp8-mix is the codec's");
	is_double(cache_bytes("DeepSeek-V4-Pro", 584, "fp8", S), 5783720960.0, 0,
		  "V4-Pro FP8 584 + indexer FP8 132");
	is_double(cache_bytes("DeepSeek-V4-Pro", 384, "mxfp4", S), 3655188480.0, 0,
		  "V4-Pro NVFP4 384 + indexer MXFP4 68");
	is_double(cache_bytes("DeepSeek-V4-Flash", 1024, "bf16", S), 7219838976.0, 0,
		  "V4-Flash BF16: 21 c4a + 20 c128a + 2 windows");
	double b;
	ok(!wzm_index_entry_bytes("fp8", 128, &b, NULL) && b == 132, "fp8 indexer key 132 B");
	ok(!wzm_index_entry_bytes("mxfp4", 128, &b, NULL) && b == 68, "mxfp4 indexer key 68 B");
	ok(wzm_index_entry_bytes("fp8", 100, &b, NULL) == WZ_ERR_UNSUPPORTED,
	   "a 100-value key is no whole fp8 block");
	/* a decode query reads the window, the top-k and every indexer key
	 * of a 1/4 layer, the window and every entry of a 1/128 one */
	const wzm_model *pro = wzm_find_model(cat, "DeepSeek-V4-Pro", NULL);
	double eb[2] = { 584, 584 }, ib[2] = { 132, 0 };
	wzm_cache_anatomy a;
	wzm_cache_anatomy_compute(pro->kinds, 2, eb, ib, S, &a);
	is_double(a.read_bytes, 30 * ((128 + 1024) * 584.0 + 262144 * 132.0) + 31 * (128 + 8192) * 584.0,
		  0, "bytes a decode query reads at 2^20");
	wzm_decode_terms d;
	wzm_decode_terms_compute(pro->kinds, 2, eb, ib, &d);
	is_double(d.fixed_bytes + S * d.per_token_bytes, a.read_bytes, 1,
		  "the simulator's split adds up to the same reads past its cap");
	is_double(d.cap_tokens, 4096, 0, "the fixed reads stop growing at top-k x ratio = 4,096 tokens");
	/* memory accounting: the cache per token at a context, fp8 indexer */
	is_double(wzm_token_bytes(pro, 584, 1048576) * 1048576, 5783720960.0, 1,
		  "wzm_token_bytes: the sequence's cache over its tokens");
	const wzm_model *v3 = wzm_find_model(cat, "DeepSeek-V3", NULL);
	is_double(wzm_token_bytes(v3, 656, 1000), 656 * 61.0, 0, "a full-layer model: record x layers");
}

/* FP4 experts beside FP8 attention: the routed experts at expert_bits. */
static void test_mixed_weights(void)
{
	const wzm_model *pro = wzm_find_model(cat, "DeepSeek-V4-Pro", NULL);
	double routed = 61.0 * 384 * 3 * 7168 * 3072;
	is_double(wzm_routed_params(pro), routed, 0, "V4-Pro routed experts: 61 x 384 x 3 x 7168 x 3072");
	double w;
	ok(!wzm_weight_bytes(pro, NAN, &w, NULL), "weights at the catalog's bits");
	is_double(w, (1600e9 - routed) * 8 / 8 + routed * 4.25 / 8, 1,
		  "FP8 for the rest, 4.25 bits (MXFP4) for the experts");
	ok(!wzm_weight_bytes(pro, 16, &w, NULL) && w == 1600e9 * 2, "--weight-bits 16 sets every weight");
	const wzm_model *v3 = wzm_find_model(cat, "DeepSeek-V3", NULL);
	ok(!wzm_weight_bytes(v3, NAN, &w, NULL) && w == 671e9, "V3: one width, 8 bits");
}

static void expect(const char *models, const char *layers, const char *where, const char *name)
{
	wzm_catalog *c = calloc(1, sizeof *c);
	wz_diag diag = { 0 };
	wz_err err = wzm_catalog_parse(c, "models", models, "m.csv", &diag);
	if (!err)
		err = wzm_catalog_parse(c, "layers", layers, "l.csv", &diag);
	ok(err == WZ_ERR_INPUT, "%s: refused", name);
	has_str(diag.msg, where, name);
	wzm_catalog_free(c);
}

static void test_bad_patterns(void)
{
	const char *mh = "name,attention,layers,kv_lora_rank,rope_dim,kv_heads,head_dim,hidden_size,"
			 "params_total_b,params_active_b,weight_bits,max_context,source_url\n"
			 "V,MLA,61,448,64,,,7168,1600,49,8,1048576,s\n";
	const char *lh = "model,kind,layers,window,ratio,topk,entry_nope,entry_rope,index_head_dim,source\n";
	char l[1024];
	snprintf(l, sizeof l, "%sV,compressed,30,128,4,1024,448,64,128,s\nV,compressed,30,128,128,,448,64,,s\n", lh);
	expect(mh, l, "l.csv:3: field layers: V's rows add up to 60 layers, its models.csv row (m.csv:2) has 61",
	       "a pattern one layer short");
	snprintf(l, sizeof l, "%sV,sparse,61,128,4,1024,448,64,128,s\n", lh);
	expect(mh, l, "l.csv:2: field kind", "an unknown kind");
	snprintf(l, sizeof l, "%sV,compressed,61,128,1,,448,64,,s\n", lh);
	expect(mh, l, "l.csv:2: field ratio", "a compressed layer of ratio 1");
	snprintf(l, sizeof l, "%sV,window,61,,,,448,64,,s\n", lh);
	expect(mh, l, "l.csv:2: field window", "a window layer without its window");
	snprintf(l, sizeof l, "%sV,full,61,,,2048,512,64,,s\n", lh);
	expect(mh, l, "l.csv:2: field index_head_dim", "a top-k without an indexer");
	snprintf(l, sizeof l, "%sV,full,61,,,2048,512,64,100,s\n", lh);
	expect(mh, l, "l.csv:2: field index_head_dim", "an indexer key of 100 values");
	snprintf(l, sizeof l, "%sW,full,61,,,,512,64,,s\n", lh);
	expect(mh, l, "l.csv:2: field model: no model 'W'", "a row for no model");
	snprintf(l, sizeof l, "%sV,full,61,,,,512,64,,\n", lh);
	expect(mh, l, "l.csv:2: field source: empty", "a row without its source");
	/* the same rows adding up are read */
	wzm_catalog *c = calloc(1, sizeof *c);
	wz_diag diag;
	snprintf(l, sizeof l, "%sV,compressed,30,128,4,1024,448,64,128,s\nV,compressed,31,128,128,,448,64,,s\n", lh);
	ok(!wzm_catalog_parse(c, "models", mh, "m.csv", &diag) &&
		   !wzm_catalog_parse(c, "layers", l, "l.csv", &diag) && c->models[0].nkinds == 2,
	   "30 + 31 = 61 layers read");
	wzm_catalog_free(c);
}

int main(void)
{
	wz_diag diag;
	if (wzm_catalog_load(NULL, &cat, &diag)) {
		printf("Bail out! %s\n", diag.msg);
		return 1;
	}
	test_v4_kinds();
	test_v4_figures();
	test_mixed_weights();
	test_bad_patterns();
	wzm_catalog_free(cat);
	return tap_done();
}
