/* The deployment search's fixture, shared by tests/sim/test_deploy and
 * bench/bench_deploy_bound: 1,500 users on DeepSeek-V3 and H100s in
 * replicas of 16 GPUs, 300 s simulated, TPOT target 0.2 s, sessions
 * starting at 32,000 tokens (TTFT target 30 s) or at 60,000 (5 s plus
 * 0.1 s per 1,000 new tokens). */
#ifndef WZ_TESTS_SIM_DEPLOY_FIXTURE_H
#define WZ_TESTS_SIM_DEPLOY_FIXTURE_H

#include <string.h>

#include "sim/deploy/deploy.h"

/* The fixture starting at 32,000 tokens for MODEL on GPU, each
 * token-layer record `record` bytes (fp8-mix's in the tests). */
static inline void deploy_fixture_base(wzd_base *b, const wzm_model *model, const wzm_gpu *gpu,
				       double record)
{
	memset(b, 0, sizeof *b);
	b->model = model;
	b->gpu = gpu;
	wzm_memory_params_default(&b->mem);
	b->mem.gpus_per_replica = 16;
	b->mem.par = WZM_PAR_ATTN_DP;
	wzs_params_default(&b->params);
	b->params.duration_s = 300;
	b->params.warmup_s = 60;
	b->params.ttft_p99_s = 30;
	b->params.tpot_p99_s = 0.2;
	b->context = 32000;
	b->record_per_layer = b->offload_per_layer = record;
	b->decode_cost = 1;
	b->run.users = 1500;
	b->run.initial_context = 32000;
	b->usd_per_gpu_year = 2.35 * 8760;
}

/* The same fixture's sessions starting at 60,000 tokens, TTFT 5 s plus
 * 0.1 s per 1,000 new tokens. */
static inline void deploy_fixture_long(wzd_base *b)
{
	b->params.ttft_p99_s = 5;
	b->params.ttft_per_1k_tokens_s = 0.1;
	b->run.initial_context = b->context = 60000;
}

#endif
