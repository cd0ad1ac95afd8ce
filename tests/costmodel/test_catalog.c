/* Catalog parsing tests: the embedded catalogs, look-ups, and malformed rows
 * reported with file:line and field. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/catalog.h"
#include "tests/tap.h"

static void expect_error(const char *kind, const char *text, wz_err code, const char *where,
			 const char *name)
{
	wzm_catalog *cat = calloc(1, sizeof *cat);
	wz_diag diag = { 0 };
	wz_err err = wzm_catalog_parse(cat, kind, text, "my.csv", &diag);
	ok(err == code, "%s: error code", name);
	has_str(diag.msg, where, name);
	wzm_catalog_free(cat);
}

/* Every GPU the embedded catalog lists can be sized and priced: each spec is
 * filled, and the default price set ("catalog") prices it with a source. */
static void test_every_gpu_complete(const wzm_catalog *cat)
{
	static const char *const needed[] = { "H100 SXM", "H200", "H800", "B200",
					      "B300", "GB200", "GB300", "MI300X" };
	for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++)
		ok(wzm_find_gpu(cat, needed[i], NULL) != NULL, "the catalog lists %s", needed[i]);
	for (int i = 0; i < cat->ngpus; i++) {
		const wzm_gpu *g = &cat->gpus[i];
		ok(!isnan(g->hbm_gib) && !isnan(g->hbm_tbps) && !isnan(g->bf16_tflops) &&
			   !isnan(g->fp8_tflops) && !isnan(g->nvlink_gbps) && !isnan(g->pcie_gbps),
		   "%s: every spec is filled", g->name);
		wzm_rates rates;
		wz_diag diag;
		ok(wzm_find_rates(cat, "catalog", g, &rates, &diag) == WZ_OK &&
			   rates.reserved_usd_h > 0 && rates.ondemand_usd_h > 0,
		   "%s: the default price set prices it", g->name);
		ok(g->price_source && strlen(g->price_source) > 20 && g->price_date &&
			   *g->price_date,
		   "%s: its prices and specs cite a source and a date", g->name);
	}
}

/* Blackwell rows: an FP4 peak above the FP8 one, and the NVLink domain
 * that tells an HGX board (8) from an NVL72 rack (72). */
static void test_blackwell(const wzm_catalog *cat)
{
	struct {
		const char *name;
		double domain, nic;
	} bw[] = { { "B200", 8, 50 }, { "B300", 8, 100 }, { "GB200", 72, 50 }, { "GB300", 72, 100 } };
	for (size_t i = 0; i < sizeof bw / sizeof bw[0]; i++) {
		const wzm_gpu *g = wzm_find_gpu(cat, bw[i].name, NULL);
		ok(g && g->fp4_tflops > g->fp8_tflops && g->fp8_tflops > g->bf16_tflops,
		   "%s: dense FP4 > FP8 > BF16 peaks", bw[i].name);
		ok(g && g->nvlink_domain == bw[i].domain && g->nic_gbps == bw[i].nic,
		   "%s: NVLink domain %g, NIC %g GB/s", bw[i].name, bw[i].domain, bw[i].nic);
	}
	const wzm_gpu *h = wzm_find_gpu(cat, "H100 SXM", NULL);
	ok(h && isnan(h->fp4_tflops) && h->nvlink_domain == 8, "H100: no FP4 peak, 8 on NVLink");
}

int main(void)
{
	wzm_catalog *cat;
	wz_diag diag;
	ok(wzm_catalog_load(NULL, &cat, &diag) == WZ_OK, "embedded catalogs load");
	ok(cat->nmodels >= 20 && cat->ngpus >= 5, "all rows read");
	test_every_gpu_complete(cat);
	test_blackwell(cat);
	const wzm_model *v3 = wzm_find_model(cat, "deepseek-v3", &diag);
	ok(v3 && v3->layers == 61 && v3->kv_lora_rank == 512 && v3->rope_dim == 64,
	   "DeepSeek-V3 architecture");
	ok(v3 && strstr(v3->source, "config_671B.json") != NULL, "every row keeps its source");
	ok(isnan(wzm_find_model(cat, "Llama-3.1-70B-Instruct", &diag)->kv_lora_rank), "empty cells stay empty");
	/* the MoE shapes, as the models' configs give them */
	struct {
		const char *model;
		double layers, top_k, routed, shared, inter;
	} moe[] = {
		{ "DeepSeek-V3", 58, 8, 256, 1, 2048 },   { "DeepSeek-V2", 59, 6, 160, 2, 1536 },
		{ "DeepSeek-V2-Lite", 26, 6, 64, 2, 1408 }, { "Kimi-K2-Instruct", 60, 8, 384, 1, 2048 },
		{ "Moonlight-16B-A3B", 26, 6, 64, 2, 1408 }, { "Qwen3-235B-A22B", 94, 8, 128, 0, 1536 },
		{ "MiniMax-M2", 62, 8, 256, 0, 1536 },     { "GLM-5 (FP8)", 75, 8, 256, 1, 2048 },
		{ "GLM-4.7-Flash", 46, 4, 64, 1, 1536 },  { "GLM-4.7", 89, 8, 160, 1, 1536 },
		{ "Kimi-VL-A3B (text model)", 26, 6, 64, 2, 1408 },
	};
	for (size_t i = 0; i < sizeof moe / sizeof moe[0]; i++) {
		const wzm_model *m = wzm_find_model(cat, moe[i].model, &diag);
		ok(m && m->moe_layers == moe[i].layers && m->moe_top_k == moe[i].top_k &&
			   m->moe_routed_experts == moe[i].routed &&
			   m->moe_shared_experts == moe[i].shared &&
			   m->moe_intermediate_size == moe[i].inter,
		   "%s: its MoE shape (%g layers, %g of %g experts, %g shared, %g wide)", moe[i].model,
		   moe[i].layers, moe[i].top_k, moe[i].routed, moe[i].shared, moe[i].inter);
	}
	/* LongCat-Flash's decoder layers hold two MLA modules each, each with
	 * its own cache: 28 layers cache 56 entries a token (the Lite model's
	 * 14, 28) */
	const wzm_model *lc = wzm_find_model(cat, "LongCat-Flash-Chat", &diag);
	const wzm_model *lcl = wzm_find_model(cat, "LongCat-Flash-Lite", &diag);
	ok(lc && lc->layers == 56 && lc->params_total_b == 560 && lc->params_active_b == 27 &&
		   strstr(lc->source, "num_hidden_layers 56"),
	   "LongCat-Flash-Chat: 56 cache layers (two MLA modules in each of 28), 560B, 27B on average");
	ok(lcl && lcl->layers == 28 && isnan(lcl->moe_top_k),
	   "LongCat-Flash-Lite: 28 cache layers; no MoE shape (zero-computation experts)");
	ok(lc && isnan(lc->moe_layers) && isnan(lc->moe_top_k) && isnan(lc->moe_routed_experts) &&
		   isnan(lc->moe_shared_experts) && isnan(lc->moe_intermediate_size),
	   "LongCat-Flash-Chat: no MoE shape (zero-computation experts, docs/validation.md)");
	ok(isnan(wzm_find_model(cat, "Llama-3.1-70B-Instruct", &diag)->moe_top_k),
	   "a dense model has no MoE shape");
	ok(wzm_find_gpu(cat, "H100 SXM", &diag) != NULL, "GPU by unique prefix");
	ok(wzm_find_gpu(cat, "H", &diag) == NULL, "ambiguous prefix refused");
	has_str(diag.msg, "ambiguous", "ambiguity is said");
	has_str(diag.msg, "H200 SXM 141GB, ", "an ambiguous GPU lists the known ones");
	ok(wzm_find_gpu(cat, "TPU", &diag) == NULL, "unknown GPU");
	has_str(diag.msg, "B200 (HGX)", "the known GPUs are listed");
	ok(wzm_find_model(cat, "GPT-9", &diag) == NULL, "unknown model");
	has_str(diag.msg, "DeepSeek-V2-Lite", "the known models are listed");
	wzm_rates rates;
	ok(wzm_find_rates(cat, "product-page", wzm_find_gpu(cat, "H100 SXM", NULL), &rates, &diag) ==
		   WZ_OK && rates.reserved_usd_h == 2.00 && rates.ondemand_usd_h == 3.61,
	   "product-page price set");
	ok(wzm_find_rates(cat, "nope", wzm_find_gpu(cat, "H100 SXM", NULL), &rates, &diag) ==
		   WZ_ERR_NOT_FOUND,
	   "unknown price set");
	wzm_catalog_free(cat);

	const char *hdr = "name,hbm_gib,hbm_tbps,bf16_tflops,fp8_tflops,nvlink_gbps,pcie_gbps,"
			  "price_reserved_usd_h,price_ondemand_usd_h,price_source,price_date\n";
	char text[1024];
	snprintf(text, sizeof text, "%sX,80,3.35,,,,,,,,\nY,eighty,3,,,,,,,,\n", hdr);
	expect_error("gpus", text, WZ_ERR_INPUT, "my.csv:3: field hbm_gib", "non-number names line and field");
	snprintf(text, sizeof text, "%sX,80,3.35,,,,\n", hdr);
	expect_error("gpus", text, WZ_ERR_INPUT, "my.csv:2: 7 fields", "short row");
	snprintf(text, sizeof text, "%s,80,3.35,,,,,,,,\n", hdr);
	expect_error("gpus", text, WZ_ERR_INPUT, "my.csv:2: field name: empty", "empty name");
	snprintf(text, sizeof text, "%sX,-80,3.35,,,,,,,,\n", hdr);
	expect_error("gpus", text, WZ_ERR_INPUT, "field hbm_gib", "negative value");
	expect_error("gpus", "name,hbm_gib\nX,80\n", WZ_ERR_INPUT, "missing column 'hbm_tbps'",
		     "missing column");
	snprintf(text, sizeof text, "%sX,80,,,,,,,,,\nx,81,,,,,,,,,\n", hdr);
	expect_error("gpus", text, WZ_ERR_INPUT, "my.csv:3: field name: 'x' repeats line 2",
		     "duplicate names");
	expect_error("models", "", WZ_ERR_INPUT, "empty file", "empty file");
	/* the MoE columns are optional: a catalog of one's own without them
	 * reads, its shapes not catalogued; a bad cell names line and field */
	{
		const char *mh = "name,attention,layers,kv_lora_rank,rope_dim,kv_heads,head_dim,"
				 "hidden_size,params_total_b,params_active_b,weight_bits,max_context,"
				 "source_url";
		wzm_catalog *mine = calloc(1, sizeof *mine);
		snprintf(text, sizeof text, "%s\nM,MLA,61,512,64,,,7168,671,37,8,,x\n", mh);
		ok(wzm_catalog_parse(mine, "models", text, "my.csv", &diag) == WZ_OK &&
			   mine->nmodels == 1 && isnan(mine->models[0].moe_layers) &&
			   isnan(mine->models[0].moe_intermediate_size),
		   "a models.csv without the moe_* columns reads, its shapes empty");
		wzm_catalog_free(mine);
		snprintf(text, sizeof text, "%s,moe_top_k\nM,MLA,61,512,64,,,7168,671,37,8,,x,2.5\n", mh);
		expect_error("models", text, WZ_ERR_INPUT, "my.csv:2: field moe_top_k",
			     "a fractional moe_top_k");
		snprintf(text, sizeof text, "%s,moe_routed_experts\nM,MLA,61,512,64,,,7168,671,37,8,,x,0\n",
			 mh);
		expect_error("models", text, WZ_ERR_INPUT, "my.csv:2: field moe_routed_experts",
			     "no routed experts");
	}
	expect_error("prices", "set,gpu,reserved_usd_h,ondemand_usd_h,source,date\np,H100,2,3,\"open\n",
		     WZ_ERR_INPUT, "my.csv", "unterminated quote");

	/* Values no real row holds, which used to print inf, nan or zero
	 * latencies further on: refused here with line and field. */
	struct {
		const char *row, *where, *name;
	} bad_gpus[] = {
		{ "X,80,3.35,,,,,1e308,,,", "my.csv:2: field price_reserved_usd_h", "a price of 1e308" },
		{ "X,80,0,,,,,,,,", "my.csv:2: field hbm_tbps", "zero bandwidth" },
		{ "X,80,3.35,0,,,,,,,", "my.csv:2: field bf16_tflops", "zero BF16 throughput" },
		{ "X,80,3.35,,0,,,,,,", "my.csv:2: field fp8_tflops", "zero FP8 throughput" },
		/* just above zero: steps that last for ever, a run that completes
		 * nothing; the lower bounds sit well under any serving GPU */
		{ "X,80,1e-300,,,,,,,,", "my.csv:2: field hbm_tbps: 1e-300 is not a number in [0.01",
		  "a bandwidth of 1e-300 TB/s" },
		{ "X,0.001,3.35,,,,,,,,", "my.csv:2: field hbm_gib", "a thousandth of a GiB" },
		{ "X,80,3.35,1e-9,,,,,,,", "my.csv:2: field bf16_tflops", "a BF16 peak of 1e-9" },
		{ "X,80,3.35,,1e-9,,,,,,", "my.csv:2: field fp8_tflops", "an FP8 peak of 1e-9" },
		{ "X,80,3.35,,,1e-9,,,,,", "my.csv:2: field nvlink_gbps", "NVLink at 1e-9 GB/s" },
		{ "X,80,3.35,,,,1e-9,,,,", "my.csv:2: field pcie_gbps", "PCIe at 1e-9 GB/s" },
		{ "X,0x50,3.35,,,,,,,,", "my.csv:2: field hbm_gib: '0x50' is not a decimal number", "hex" },
		{ "X,80,inf,,,,,,,,", "field hbm_tbps: 'inf' is not a decimal", "infinity" },
		{ "X`touch owned`,80,3.35,,,,,,,,", "my.csv:2: field name: a name must", "a backquote in a name" },
		{ "\"X\nY\",80,3.35,,,,,,,,", "my.csv:2: field name:", "a newline in a name" },
		{ "\"X\x01\",80,3.35,,,,,,,,", "this one has a control character", "a control byte in a name" },
	};
	for (size_t i = 0; i < sizeof bad_gpus / sizeof bad_gpus[0]; i++) {
		snprintf(text, sizeof text, "%s%s\n", hdr, bad_gpus[i].row);
		expect_error("gpus", text, WZ_ERR_INPUT, bad_gpus[i].where, bad_gpus[i].name);
	}
	/* the optional Blackwell columns, bounded as the others */
	struct {
		const char *cells, *where, *name;
	} bad_new[] = {
		{ "1e-9,,", "my.csv:2: field fp4_tflops", "an FP4 peak of 1e-9" },
		{ ",0,", "my.csv:2: field nvlink_domain", "an NVLink domain of 0" },
		{ ",7.5,", "my.csv:2: field nvlink_domain", "7.5 GPUs on NVLink" },
		{ ",,1e-300", "my.csv:2: field nic_gbps", "a NIC at 1e-300 GB/s" },
	};
	for (size_t i = 0; i < sizeof bad_new / sizeof bad_new[0]; i++) {
		snprintf(text, sizeof text,
			 "name,hbm_gib,hbm_tbps,bf16_tflops,fp8_tflops,nvlink_gbps,pcie_gbps,"
			 "price_reserved_usd_h,price_ondemand_usd_h,price_source,price_date,"
			 "fp4_tflops,nvlink_domain,nic_gbps\nX,80,3.35,,,,,,,,,%s\n",
			 bad_new[i].cells);
		expect_error("gpus", text, WZ_ERR_INPUT, bad_new[i].where, bad_new[i].name);
	}
	const char *mhdr = "name,attention,layers,kv_lora_rank,rope_dim,kv_heads,head_dim,hidden_size,"
			   "params_total_b,params_active_b,weight_bits,max_context,source_url\n";
	struct {
		const char *row, *where, *name;
	} bad_models[] = {
		{ "M,MLA,61,1e308,64,,,7168,671,37,8,163840,s", "my.csv:2: field kv_lora_rank", "kv_lora_rank 1e308" },
		{ "M,MLA,61,0,64,,,7168,671,37,8,163840,s", "my.csv:2: field kv_lora_rank", "kv_lora_rank 0" },
		{ "M,MLA,61,512.5,64,,,7168,671,37,8,163840,s", "a whole number", "a fractional rank" },
		{ "M,MLA,61,512,64,,,7168,671,37,0,163840,s", "my.csv:2: field weight_bits", "zero weight bits" },
		{ "M,MLA,61,512,64,,,7168,671,37,0.5,163840,s", "my.csv:2: field weight_bits: 0.5 is not",
		  "half a bit a weight" },
		{ "M,MLA,61,512,64,,,7168,30,37,8,163840,s",
		  "my.csv:2: field params_total_b: 30 billion is below params_active_b 37",
		  "fewer parameters than the active ones" },
		{ "M,MLA,61,512,64,,,7168,671,37,8,163840,\"open\nN,MLA,61,512,64,,,7168,671,37,8,163840,\"s\"",
		  "my.csv:2: field source_url: a line break inside the field",
		  "an unterminated quote swallowing the next row" },
		{ "M,MLA,0x10,512,64,,,7168,671,37,8,163840,s", "my.csv:2: field layers", "hex layers" },
	};
	for (size_t i = 0; i < sizeof bad_models / sizeof bad_models[0]; i++) {
		snprintf(text, sizeof text, "%s%s\n", mhdr, bad_models[i].row);
		expect_error("models", text, WZ_ERR_INPUT, bad_models[i].where, bad_models[i].name);
	}
	expect_error("prices",
		     "set,gpu,reserved_usd_h,ondemand_usd_h,source,date\np,H100,2,3,s,\np,h100,2.5,3,s,\n",
		     WZ_ERR_INPUT, "my.csv:3: fields set, gpu: 'p', 'h100' repeats line 2",
		     "a price set's GPU twice");
	return tap_done();
}
