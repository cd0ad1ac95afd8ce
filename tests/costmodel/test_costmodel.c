/* Cost model tests: the product page's table (scaling), memory accounting
 * worked out by hand, rounding and annual cost arithmetic. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runs/setup.h"
#include "costmodel/capacity.h"
#include "costmodel/compare.h"
#include "costmodel/fleet.h"
#include "tests/tap.h"

static wzm_catalog *cat;

static int run(wzm_scenario *s, wzm_compare *c)
{
	const wzm_model *m = wzm_find_model(cat, s->model, NULL);
	wzm_format_size sizes[16];
	wz_diag diag;
	if (!m || wz_resolve_formats(s->formats, s->nformats, s->baseline_format,
					 (int)m->kv_lora_rank, (int)m->rope_dim, sizes, &diag))
		return -1;
	if (wzm_compare_run(s, cat, sizes, s->nformats, c, &diag)) {
		printf("# %s\n", diag.msg);
		return -1;
	}
	return 0;
}

static void test_rounding(void)
{
	is_long(wzm_round_gpus(704.2, 1, WZM_ROUND_NEAREST), 704, "nearest 704.2");
	is_long(wzm_round_gpus(704.2, 1, WZM_ROUND_UP), 705, "up 704.2");
	is_long(wzm_round_gpus(1000.0, 1, WZM_ROUND_UP), 1000, "up keeps whole numbers");
	is_long(wzm_round_gpus(675.7, 16, WZM_ROUND_UP), 688, "up to whole 16-GPU replicas");
	is_long(wzm_round_gpus(0.2, 8, WZM_ROUND_NEAREST), 8, "at least one replica");
}

/* The product page: 1,000 H100s with fp8-mix for 10,000 users at 100k;
 * formats at 1.42x and 1.48x fewer bits need 1000/1.42 = 704.2 and
 * 1000/1.48 = 675.7 GPUs, i.e. 704 and 676 to the nearest GPU.  At $2.00 an
 * hour a GPU costs 2.00 x 8,760 = $17,520 a year: 1,000 -> $17.52M,
 * 704 -> $12,334,080, 676 -> $11,843,520; savings $5,185,920 and $5,676,480.
 * On demand $3.61 x 8,760 = $31,623.60 a GPU-year: savings 296 x that =
 * $9,360,585.60 and 324 x that = $10,246,046.40. */
static void test_product_page(void)
{
	wzm_scenario *s;
	wz_diag diag;
	ok(wzm_scenario_load(NULL, &s, &diag) == WZ_OK, "embedded scenario loads");
	wzm_compare c;
	if (!ok(run(s, &c) == 0, "product page comparison runs"))
		return;
	int fp8 = -1, iso142 = -1, iso148 = -1;
	for (int i = 0; i < c.nrows; i++) {
		if (!strcmp(c.rows[i].fmt.name, "fp8-mix"))
			fp8 = i;
		if (!strcmp(c.rows[i].fmt.name, "iso:1.42"))
			iso142 = i;
		if (!strcmp(c.rows[i].fmt.name, "iso:1.48"))
			iso148 = i;
	}
	ok(fp8 >= 0 && iso142 >= 0 && iso148 >= 0, "the page's formats are in the scenario");
	is_double(c.rows[fp8].fmt.bits_per_value, 8.0556, 0.0001, "fp8-mix 580 B = 8.06 bits/value");
	is_long(c.rows[fp8].scaling.gpus, 1000, "baseline 1,000 GPUs");
	is_long(c.rows[iso142].scaling.gpus, 704, "1.42x fewer bits: 704 GPUs (nearest)");
	is_long(c.rows[iso142].scaling.gpus_up, 705, "1.42x fewer bits: 705 GPUs rounded up");
	is_long(c.rows[iso148].scaling.gpus, 676, "1.48x fewer bits: 676 GPUs");
	is_long(c.rows[iso148].scaling.gpus_up, 676, "1.48x: both rules agree");
	is_double(c.rows[fp8].scaling.reserved_usd_year, 17520000, 0.01, "fp8-mix $17.52M reserved");
	is_double(c.rows[iso142].scaling.reserved_usd_year, 12334080, 0.01, "704 GPUs $12.33M");
	is_double(c.rows[iso148].scaling.reserved_usd_year, 11843520, 0.01, "676 GPUs $11.84M");
	is_double(c.rows[iso142].scaling.saving_reserved, 5185920, 0.01, "saving $5.2M reserved");
	is_double(c.rows[iso148].scaling.saving_reserved, 5676480, 0.01, "saving $5.7M reserved");
	is_double(c.rows[iso142].scaling.saving_ondemand, 9360585.6, 0.01, "saving $9.4M on demand");
	is_double(c.rows[iso148].scaling.saving_ondemand, 10246046.4, 0.01,
		  "saving $10.2M on demand");
	wzm_compare_free(&c);
	wzm_scenario_free(s);
}

/* Memory accounting, DeepSeek-V3 with FP8 weights on 16 x H100 (80 GiB),
 * every weight split evenly (replicated_params_b 0), 90% of HBM, 4 GiB
 * reserve, 100,000 tokens per user:
 *   usable  = 80 x 2^30 x 0.90          = 77,309,411,328 B
 *   weights = 671e9 params x 1 B / 16    = 41,937,500,000 B per GPU
 *   reserve = 4 x 2^30                   =  4,294,967,296 B
 *   cache   = 77,309,411,328 - 41,937,500,000 - 4,294,967,296
 *           = 31,076,944,032 B per GPU
 *   fp8-mix record: 512 + 2 + 64 + 2 = 580 B; x 61 layers = 35,380 B/token;
 *     x 64 = 2,264,320 B per block; 31,076,944,032 / 2,264,320 = 13,724.6
 *     -> 13,724 blocks; a user needs ceil(100,000 / 64) = 1,563 blocks;
 *     13,724 / 1,563 = 8.78 -> 8 users per GPU, 128 per replica;
 *     10,000 / 128 = 78.1 -> 79 replicas = 1,264 GPUs.
 *   wz-5.44 record: floor(5.44 x 576 / 8) = 391 B; x 61 = 23,851 B/token;
 *     block 1,526,464 B -> 20,358 blocks -> 13 users per GPU, 208 per
 *     replica -> 49 replicas = 784 GPUs. */
static void test_memory_mode(void)
{
	wzm_scenario *s;
	wz_diag diag;
	ok(wzm_scenario_load(NULL, &s, &diag) == WZ_OK, "embedded scenario loads");
	s->mode = WZM_MODE_MEMORY;
	wzm_scenario_set_formats(s, "fp8-mix, wz-5.44", &diag);
	wzm_compare c;
	if (!ok(run(s, &c) == 0, "memory comparison runs"))
		return;
	const wzm_memory *m = &c.rows[0].memory;
	is_double(m->usable, 77309411328.0, 0.5, "usable HBM");
	is_double(m->weights, 41937500000.0, 0.5, "weights per GPU");
	is_double(m->reserve, 4294967296.0, 0.5, "reserve");
	is_double(m->cache, 31076944032.0, 0.5, "cache per GPU");
	is_double(m->per_token, 35380, 1e-9, "fp8-mix bytes per token");
	is_long(m->blocks_per_gpu, 13724, "fp8-mix blocks per GPU");
	is_long(m->blocks_per_user, 1563, "blocks per user");
	is_long(m->users_per_gpu, 8, "fp8-mix users per GPU");
	is_long(m->users_per_replica, 128, "fp8-mix users per replica");
	is_long(c.rows[0].by_memory.replicas, 79, "fp8-mix replicas");
	is_long(c.rows[0].by_memory.gpus, 1264, "fp8-mix GPUs");
	is_long(c.rows[1].memory.blocks_per_gpu, 20358, "wz-5.44 blocks per GPU");
	is_long(c.rows[1].memory.users_per_gpu, 13, "wz-5.44 users per GPU");
	is_long(c.rows[1].by_memory.gpus, 784, "wz-5.44 GPUs");
	is_double(c.rows[1].by_memory.saving_reserved, (1264 - 784) * 17520.0, 0.01,
		  "wz-5.44 saving at reserved rates");
	wzm_compare_free(&c);

	/* Attention data parallelism holds 17,091,229,184 parameters whole on
	 * every GPU (671e9 less 58 x 256 x 3 x 7168 x 2048 = 653,908,770,816
	 * routed-expert parameters, sim/weights.h) and 1/16 of the routed:
	 *   weights = 17,091,229,184 + 653,908,770,816 / 16 = 57,960,527,360 B
	 *   cache   = 77,309,411,328 - 57,960,527,360 - 4,294,967,296
	 *           = 15,053,916,672 B per GPU
	 *   fp8-mix: 15,053,916,672 / 2,264,320 = 6,648 blocks -> 4 users per
	 *     GPU, 64 per replica -> 157 replicas = 2,512 GPUs;
	 *   wz-5.44: / 1,526,464 = 9,861 blocks -> 6 users per GPU, 96 per
	 *     replica -> 105 replicas = 1,680 GPUs. */
	s->mem.replicated_params_b = 17.091229184;
	if (!ok(run(s, &c) == 0, "comparison with replicated weights runs"))
		return;
	m = &c.rows[0].memory;
	is_double(m->weights, 57960527360.0, 0.5, "weights per GPU, replicated part whole");
	is_double(m->weights_replicated, 17091229184.0, 0.5, "of them held whole");
	is_double(m->cache, 15053916672.0, 0.5, "cache per GPU");
	is_long(m->blocks_per_gpu, 6648, "fp8-mix blocks per GPU");
	is_long(m->users_per_gpu, 4, "fp8-mix users per GPU");
	is_long(c.rows[0].by_memory.gpus, 2512, "fp8-mix GPUs");
	is_long(c.rows[1].memory.blocks_per_gpu, 9861, "wz-5.44 blocks per GPU");
	is_long(c.rows[1].memory.users_per_gpu, 6, "wz-5.44 users per GPU");
	is_long(c.rows[1].by_memory.gpus, 1680, "wz-5.44 GPUs");
	wzm_compare_free(&c);
	s->mem.replicated_params_b = 0;

	/* Tensor parallel: every rank holds every user's full latent. */
	s->mem.par = WZM_PAR_TP;
	ok(run(s, &c) == 0, "tensor-parallel comparison runs");
	is_long(c.rows[0].memory.users_per_replica, 8, "TP: a replica holds one GPU's users");
	is_long(c.rows[0].by_memory.gpus, 1250 * 16, "TP: 1,250 replicas of 16");
	wzm_compare_free(&c);

	/* Too few GPUs for the weights. */
	s->mem.par = WZM_PAR_ATTN_DP;
	s->mem.gpus_per_replica = 8;
	ok(run(s, &c) != 0, "8 H100s cannot hold DeepSeek-V3's weights and a cache");
	wzm_scenario_free(s);
}

/* DeepSeek Sparse Attention keeps an indexer key beside the attention
 * cache in every layer: 128 fp8 values and one fp32 scale, 132 bytes a
 * token, whatever the record's format.  So a format's saving is on its
 * record, not on the whole. */
static void test_indexer_cache(void)
{
	const wzm_model *v32 = wzm_find_model(cat, "DeepSeek-V3.2-Exp", NULL);
	const wzm_model *v3 = wzm_find_model(cat, "DeepSeek-V3", NULL);
	const wzm_gpu *h100 = wzm_find_gpu(cat, "H100 SXM", NULL);
	if (!ok(v32 && v3 && h100, "DeepSeek-V3.2-Exp, V3 and H100 in the catalog"))
		return;
	is_double(wzm_side_cache_per_layer(v32), 132, 0, "V3.2-Exp: 132 indexer bytes a layer");
	is_double(wzm_side_cache_per_layer(v3), 0, 0, "V3: no indexer");
	wzm_memory_params mp;
	wzm_memory_params_default(&mp);
	mp.gpus_per_replica = 16;
	wzm_memory m;
	wz_diag diag;
	ok(wzm_memory_compute(v32, h100, &mp, 656, 100000, &m, &diag) == WZ_OK,
	   "V3.2-Exp memory at 656-byte records");
	is_double(m.per_token, (656 + 132) * 61.0, 1e-9, "V3.2-Exp bytes per token: (656 + 132) x 61");
	is_double(m.side_per_layer, 132, 0, "the breakdown says the indexer's share");
	ok(wzm_memory_compute(v3, h100, &mp, 656, 100000, &m, &diag) == WZ_OK &&
		   m.per_token == 656 * 61.0 && m.side_per_layer == 0,
	   "V3: records alone");
	/* the scaling rule: GPUs in proportion to all the bytes a token keeps */
	wzm_scenario *s;
	wzm_compare c;
	if (wzm_scenario_load(NULL, &s, &diag))
		return;
	wzm_scenario_set_string(&s->model, "DeepSeek-V3.2-Exp", &diag);
	s->mode = WZM_MODE_SCALING;
	wzm_scenario_set_formats(s, "fp8-mix, wz-5.44", &diag);
	if (ok(run(s, &c) == 0, "V3.2-Exp scaling comparison runs")) {
		double want = 1000.0 * (391 + 132) / (580 + 132);
		is_double(c.rows[1].scaling.gpus_exact, want, 1e-9,
			  "wz-5.44 against fp8-mix on V3.2-Exp: 1000 x (391 + 132) / (580 + 132) GPUs");
		wzm_compare_free(&c);
	}
	wzm_scenario_free(s);
}

static void test_missing_value(void)
{
	/* A user's catalog with an unpriced GPU (the embedded one prices them all). */
	wzm_catalog *mine;
	wz_diag diag;
	wzm_catalog_load(NULL, &mine, &diag);
	const char *gpus = "name,hbm_gib,hbm_tbps,bf16_tflops,fp8_tflops,nvlink_gbps,pcie_gbps,"
			   "price_reserved_usd_h,price_ondemand_usd_h,price_source,price_date\n"
			   "H100 SXM 80GB,80,3.35,989.4,1978.9,900,128,2.35,6.88,test,2026\n"
			   "Unpriced 94GB,94,3.9,989.4,1978.9,900,128,,,,\n";
	ok(wzm_catalog_parse(mine, "gpus", gpus, "my-gpus.csv", &diag) == WZ_OK,
	   "a catalog with an unpriced GPU parses");
	wzm_scenario *s;
	wzm_scenario_load(NULL, &s, &diag);
	wzm_scenario_set_string(&s->gpu, "Unpriced 94GB", &diag);
	wzm_scenario_set_string(&s->price_set, "catalog", &diag);
	wzm_compare c;
	const wzm_model *m = wzm_find_model(mine, s->model, NULL);
	wzm_format_size sizes[16];
	wz_resolve_formats(s->formats, s->nformats, s->baseline_format, (int)m->kv_lora_rank,
			       (int)m->rope_dim, sizes, &diag);
	ok(wzm_compare_run(s, mine, sizes, s->nformats, &c, &diag) == WZ_ERR_MISSING,
	   "an empty price cell is reported as missing");
	has_str(diag.msg, "price_reserved_usd_h", "the message names the field");
	has_str(diag.msg, "my-gpus.csv:3", "the message names the catalog row");
	wzm_scenario_free(s);
	wzm_catalog_free(mine);
}

int main(void)
{
	wz_diag diag;
	if (wzm_catalog_load(NULL, &cat, &diag)) {
		printf("Bail out! %s\n", diag.msg);
		return 1;
	}
	test_rounding();
	test_product_page();
	test_memory_mode();
	test_indexer_cache();
	test_missing_value();
	wzm_catalog_free(cat);
	return tap_done();
}
