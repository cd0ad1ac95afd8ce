/* What tests/sim/test_moe.c and tests/sim/test_moe_rates.c share: a
 * DeepSeek-V3 replica of H100s under attention data parallelism, with or
 * without expert parallelism, dual-batch overlap, an imbalance and an
 * all-to-all bandwidth.  Each includes it once, after
 * tests/sim/sim_fixture.h. */
#ifndef WZ_TESTS_SIM_MOE_FIXTURE_H
#define WZ_TESTS_SIM_MOE_FIXTURE_H

#include "sim/replica.h"

/* 0, or -1 where the replica cannot be built (diag says why). */
static inline int model(int ep, int gpus, int overlap, double imbalance, double gbps,
			wzs_params *p, wzs_replica_model *m, wz_diag *diag)
{
	wzm_memory_params mem;
	wzm_memory_params_default(&mem);
	mem.gpus_per_replica = gpus;
	mem.par = WZM_PAR_ATTN_DP;
	wzs_params_default(p);
	p->warmup_s = 0;
	p->expert_parallel = ep;
	p->dual_batch_overlap = overlap;
	p->ep_imbalance = imbalance;
	p->ep_dispatch_gbps = p->ep_combine_gbps = gbps;
	double rec = fixture_record("fp8-mix");
	return wzs_replica_model_build(dsv3, h100, &mem, 32000, rec, rec, 1, p, m, diag) ? -1 : 0;
}

#endif
