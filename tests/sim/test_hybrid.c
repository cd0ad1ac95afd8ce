/* A hybrid cache in the simulator (sim/replica_hybrid.c): DeepSeek-V4-Pro's
 * windows, top-k selections, indexer keys and 1/128 entries in the
 * sparse-attention terms, against the reads docs/cache-anatomy.md works
 * out by hand (costmodel/layers.h). */
#include <math.h>
#include <string.h>

#include "costmodel/capacity.h"
#include "costmodel/layers.h"
#include "sim/replica.h"
#include "sim/weights.h"
#include "tests/tap.h"

static wzm_catalog *cat;

static wz_err build(const char *model, double rec, long context, wzs_replica_model *m)
{
	const wzm_model *md = wzm_find_model(cat, model, NULL);
	const wzm_gpu *g = wzm_find_gpu(cat, "GB300", NULL);
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	wzs_params p;
	wzs_params_default(&p);
	wz_diag diag;
	wz_err err = wzs_replica_model_build(md, g, &mem, context, rec, rec, 1, &p, m, &diag);
	if (err)
		printf("# %s\n", diag.msg);
	return err;
}

int main(void)
{
	wz_diag diag;
	if (wzm_catalog_load(NULL, &cat, &diag)) {
		printf("Bail out! %s\n", diag.msg);
		return 1;
	}
	const double S = 1048576;
	const wzm_model *pro = wzm_find_model(cat, "DeepSeek-V4-Pro", NULL);
	wzs_replica_model fp8, wz;
	ok(build("DeepSeek-V4-Pro", 578, (long)S, &fp8) == WZ_OK &&
		   build("DeepSeek-V4-Pro", 348, (long)S, &wz) == WZ_OK,
	   "V4-Pro on 16 x GB300 builds at 2^20 tokens");
	is_double(fp8.dsa_topk, 4096, 0, "the fixed reads stop growing at 1,024 x 4 tokens");
	/* what one decode query at 2^20 tokens reads, by hand */
	double want = 30 * ((128 + 1024) * 578.0 + 262144 * 132.0) + 31 * (128 + 8192) * 578.0;
	is_double(fp8.dsa_topk * fp8.record_token_bytes + S * fp8.side_token_bytes, want, 1e-3,
		  "selected x record + context x side: the query's reads");
	is_double(fp8.token_bytes, wzm_token_bytes(pro, 578, (long)S), 0,
		  "blocks take the cache per sequence over the context");
	is_double(fp8.token_bytes * S, 30 * ((128 + 262144) * 578.0 + 262144 * 132.0) +
					       31 * (128 + 8192) * 578.0,
		  1e-3, "... 30 c4a and 31 c128a layers at 2^20");
	/* a step of one request past the cap: memory-bound, the formats'
	 * difference is their reads' over the HBM bandwidth */
	int cb_fp8, cb_wz;
	double t_fp8 = wzs_step_time_dsa(&fp8, 1, S, fp8.dsa_topk, &cb_fp8, NULL);
	double t_wz = wzs_step_time_dsa(&wz, 1, S, wz.dsa_topk, &cb_wz, NULL);
	double read_wz = 30 * ((128 + 1024) * 348.0 + 262144 * 132.0) + 31 * (128 + 8192) * 348.0;
	ok(!cb_fp8 && !cb_wz, "one request's step is memory-bound");
	is_double(t_fp8 - t_wz, (want - read_wz) / fp8.hbm_bps, 1e-9,
		  "the step shortens by the bytes wz spares over the HBM bandwidth");
	/* prefill: one token after 2^20 cached meets the window and top-k of
	 * its fixed pairs and every indexer key and 1/128 entry */
	double pairs = wzs_model_prefill_pairs(&fp8, S, 1);
	is_double(pairs, fp8.dsa_topk + (S + 1) * fp8.idx_prefill_ratio, 1e-6,
		  "a prefilled token's pairs: the cap, and the context at the indexer's ratio");
	/* a model of full layers keeps its dense or DSA terms */
	wzs_replica_model v3;
	const wzm_model *dsv3 = wzm_find_model(cat, "DeepSeek-V3", NULL);
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	wzs_params p;
	wzs_params_default(&p);
	ok(wzs_replica_model_build(dsv3, wzm_find_gpu(cat, "GB300", NULL), &mem, 100000, 656, 656,
				   1, &p, &v3, &diag) == WZ_OK &&
		   v3.dsa_topk == 0 && v3.token_bytes == 656 * 61.0,
	   "DeepSeek-V3: no sparse terms, 656 x 61 bytes a token");
	wzm_catalog_free(cat);
	return tap_done();
}
