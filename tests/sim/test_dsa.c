/* DeepSeek Sparse Attention (DeepSeek-V3.2-Exp's catalog row): the indexer
 * keeps 132 bytes a token a layer beside the record and scores every cached
 * token in FP8; the attention reads and scores at most index_topk (2,048)
 * tokens a query, in decode and in prefill.  Checked against sums written
 * out here, and a dense model against the dense formulas bit for bit.
 * And a model's attention shape (heads, prefill widths) from its row. */
#include "tests/tap.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "tests/sim/sim_fixture.h"

static wzm_memory_params mem;

static int model(const wzm_model *mdl, const char *format, wzs_params *p, wzs_replica_model *m)
{
	double rec = fixture_record(format);
	wzs_params_default(p);
	p->warmup_s = 0;
	return wzs_replica_model_build(mdl, h100, &mem, 200000, rec, rec, 1, p, m, NULL) ? -1 : 0;
}

/* The pairs of a prefill chunk, one new token at a time. */
static double pairs_by_hand(const wzs_replica_model *m, double prefix, double n)
{
	double sparse = 0, dense = 0;
	for (double j = 1; j <= n; j++) {
		double keys = prefix + j;
		dense += keys;
		sparse += keys < m->dsa_topk ? keys : m->dsa_topk;
	}
	return sparse + dense * m->idx_prefill_ratio;
}

static void test_terms(const wzs_replica_model *m, const wzs_replica_model *v3)
{
	ok(m->dsa_topk == 2048 && m->idx_flops_pair == 61.0 * 64 * 2 * 128 &&
		   m->side_token_bytes == 132.0 * 61 && m->record_token_bytes == 656.0 * 61,
	   "V3.2-Exp: top 2048, the indexer's 64 heads of 128 over 61 layers, 132 + 656 bytes a layer");
	ok(v3->dsa_topk == 0 && v3->side_token_bytes == 0, "V3: dense attention, no indexer");
	static const double cases[][2] = { { 0, 1000 }, { 0, 5000 }, { 1500, 1000 }, { 2048, 64 },
					   { 100000, 500 }, { 3, 1 } };
	int same = 1;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double got = wzs_model_prefill_pairs(m, cases[i][0], cases[i][1]);
		double want = pairs_by_hand(m, cases[i][0], cases[i][1]);
		same &= fabs(got - want) <= 1e-12 * want;
		same &= wzs_model_prefill_pairs(v3, cases[i][0], cases[i][1]) ==
			wzs_prefill_pairs(cases[i][0], cases[i][1]);
	}
	ok(same, "prefill pairs: each new token's attention takes min(keys, 2048), its indexer every "
	   "key at %.4f of a pair's time (one token at a time); dense: the dense formula", m->idx_prefill_ratio);
	/* a step at 100k cached tokens, 2,048 of them read by the attention */
	double tokens = 100000, sel = 2048;
	double weights = m->weight_bytes_gpu * wzs_weights_touched(m, 1);
	double mem_s = (weights + sel * m->record_token_bytes * m->decode_cost +
			tokens * m->side_token_bytes) / m->hbm_bps;
	double comp_s = 2.0 * m->active_params / m->gpus * m->moe.compute_factor / m->weight_flops +
			sel * m->attn_flops_pair / m->attn_flops + tokens * m->idx_flops_pair / m->idx_flops;
	int cb, nb;
	double t = wzs_step_time_dsa(m, 1, tokens, sel, &cb, &nb);
	double roof = mem_s > comp_s ? mem_s : comp_s;
	double comm = wzs_moe_comm_time(&m->moe, 1.0 / m->gpus, m->moe.decode_dests,
					m->moe.decode_dispatch_bps, m->moe.decode_combine_bps);
	double want = m->overhead_s + wzs_moe_combine(&m->moe, roof, comm);
	ok(fabs(t - want) <= 1e-12 * want && cb == (comp_s > mem_s),
	   "a step over 100k cached tokens: indexer over all, attention over 2048: %.6f s (by hand %.6f)",
	   t, want);
	ok(t < wzs_step_time(v3, 1, tokens),
	   "and shorter than dense MLA's over all 100k (%.6f s against %.6f)", t,
	   wzs_step_time(v3, 1, tokens));
	/* the epoch's busiest rank: ranks of 1 x 100k and 40 x 1k tokens; the
	 * second reads 40 x 1,000 selected tokens against the first's 2,048 */
	double tok_a[2] = { 100000, 40000 };
	int64_t tok_n[2] = { 1, 40 };
	double t0, t1;
	wzs_epoch_ends_dsa(m, tok_a, tok_n, 2, 0, 9, 1, 41, &t0, &t1, &cb, &nb);
	double r0 = wzs_step_time_dsa(m, 41, 100000, 2048, NULL, NULL);
	double r1 = wzs_step_time_dsa(m, 41, 40000, 40000, NULL, NULL);
	double r1_end = wzs_step_time_dsa(m, 41, 40360, 40360, NULL, NULL);
	double r0_end = wzs_step_time_dsa(m, 41, 100009, 2048, NULL, NULL);
	ok(t0 == fmax(r0, r1) && t1 == fmax(r0_end, r1_end) && r1 > r0,
	   "an epoch's ends: the busiest rank is the one whose attention reads more (%.6f s against "
	   "%.6f), not the one holding more tokens", r1, r0);
}

/* One request alone, against its prefill chunks and decode steps summed. */
static void test_alone(const wzs_replica_model *m, wzs_params *p)
{
	const int64_t prompt = 20000, output = 300;
	wzt_request rows[1] = { { 0, 0, 0.0, prompt, output, 0, 0, 0 } };
	wzs_result r;
	if (fixture_run1(p, (wzs_replica_model *)m, rows, 1, &r, NULL)) {
		ok(0, "run");
		return;
	}
	double want = 0;
	for (int64_t done = 0; done < prompt; done += p->prefill_chunk_tokens) {
		double take = (double)(prompt - done < p->prefill_chunk_tokens ? prompt - done
									  : p->prefill_chunk_tokens);
		double pairs = pairs_by_hand(m, (double)done, take);
		want += wzs_prefill_time(m, take, pairs, pairs);
	}
	for (int64_t i = 0; i < output - 1; i++) {
		double tokens = (double)prompt + 1 + (double)i;
		want += wzs_step_time_dsa(m, 1, tokens, tokens < 2048 ? tokens : 2048, NULL, NULL);
	}
	ok(r.completed == 1 && fabs(r.e2e.mean - want) <= 1e-6 * want,
	   "a 20,000-token prompt and 300 tokens alone: %.6f s, chunk by chunk and step by step %.6f s",
	   r.e2e.mean, want);
	wzs_result_free(&r);
}

/* A model's own attention shape from its catalog row, unless the
 * scenario gives it: Kimi-K2's 64 heads, GLM-5's 64 heads of 192 + 64 key
 * and 256 value widths; DeepSeek-V3's row is the old defaults'. */
static void test_model_shape(void)
{
	const wzm_model *k2 = wzm_find_model(fixture_cat, "Kimi-K2-Instruct", NULL);
	const wzm_model *glm5 = wzm_find_model(fixture_cat, "GLM-5 (FP8)", NULL);
	wzs_params p, d;
	wzs_params_default(&d);
	p = d;
	wzs_params_model_defaults(&p, NULL, dsv3);
	ok(p.attention_heads == d.attention_heads && p.prefill_pair_dims == d.prefill_pair_dims &&
		   d.attention_heads == 128 && d.prefill_pair_dims == 320,
	   "DeepSeek-V3's row gives the defaults: 128 heads, 128 + 64 + 128 prefill dimensions");
	p = d;
	wzs_params_model_defaults(&p, NULL, k2);
	ok(k2 && p.attention_heads == 64 && p.prefill_pair_dims == 128 + 64 + 128,
	   "Kimi-K2: 64 heads, 128 + 64 + 128 prefill dimensions from its row");
	p = d;
	wzs_params_model_defaults(&p, NULL, glm5);
	ok(glm5 && p.attention_heads == 64 && p.prefill_pair_dims == 192 + 64 + 256,
	   "GLM-5: 64 heads, 192 + 64 + 256 prefill dimensions");
	wz_kv *kv = NULL;
	if (wz_kv_parse("attention_heads = 96\nprefill_pair_dims = 300\n", "test", &kv, NULL) == WZ_OK) {
		p = d;
		wzs_params_from_kv(kv, &p, NULL);
		wzs_params_model_defaults(&p, kv, glm5);
		ok(p.attention_heads == 96 && p.prefill_pair_dims == 300,
		   "a scenario's attention_heads and prefill_pair_dims stand over the row's");
		wz_kv_free(kv);
	} else {
		ok(0, "scenario text");
	}
	/* and the replica model's attention FLOPs follow the heads and widths */
	wzs_replica_model m;
	p = d;
	wzs_params_model_defaults(&p, NULL, glm5);
	double rec = fixture_record("fp8-mix");
	wzm_memory_params mem32 = mem;
	mem32.gpus_per_replica = 32;
	wz_diag diag;
	if (glm5 && !wzs_replica_model_build(glm5, h100, &mem32, 100000, rec, rec, 1, &p, &m, &diag))
		ok(m.attn_flops_pair == 78.0 * 64 * 2 * (2 * 512 + 64) &&
			   m.prefill_flops_pair == 78.0 * 64 * 2 * 512,
		   "GLM-5's attention: 78 layers x 64 heads x 2 x 1,088 FLOPs a decode pair, x 512 a "
		   "prefill pair");
	else
		ok(0, "GLM-5's replica model: %s", glm5 ? diag.msg : "not found");
}

int main(void)
{
	if (fixture_open())
		return tap_done();
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = 16;
	mem.par = WZM_PAR_ATTN_DP;
	const wzm_model *v32 = wzm_find_model(fixture_cat, "DeepSeek-V3.2-Exp", NULL);
	wzs_params p, pv3;
	wzs_replica_model m, v3;
	if (ok(v32 && !model(v32, "fp8-ds-mla", &p, &m) && !model(dsv3, "fp8-ds-mla", &pv3, &v3),
	       "DeepSeek-V3.2-Exp and V3 on 16 H100, fp8-ds-mla")) {
		test_terms(&m, &v3);
		test_alone(&m, &p);
	}
	test_model_shape();
	fixture_close();
	return tap_done();
}
