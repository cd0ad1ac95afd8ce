/* Which of a model's weights every GPU of a replica holds whole and which
 * are split over its GPUs: the per-GPU weight bytes that the memory mode
 * (`wzplan cost`, `wzplan propose`) and the simulator (`wzplan size`,
 * `wzplan sim`) both take their cache pools from. */
#ifndef WZS_WEIGHTS_H
#define WZS_WEIGHTS_H

#include "common/wz_error.h"
#include "costmodel/capacity.h"
#include "costmodel/catalog.h"
#include "costmodel/scenario.h"
#include "sim/params.h"

/* A mixture of experts' shape: MoE layers, routed experts per token,
 * routed and shared experts per layer, each expert's intermediate width. */
typedef struct {
	long layers, top_k, routed_experts, shared_experts, intermediate;
	long n_group, topk_group; /* group-limited routing; topk_group == n_group: none */
} wzs_moe_shape;

/* The shape a simulation uses: each scenario key that is set (moe_layers,
 * moe_top_k, moe_routed_experts, moe_shared_experts,
 * moe_intermediate_size), else the model's catalog column of the same
 * name; fails naming the catalog row, the column and the key when neither
 * says.  Checked against the model's active and total parameters: fails
 * naming them when its experts outnumber them.  Writes the routed
 * experts' parameters (all of them) to *routed_all. */
wz_err wzs_moe_shape_check(const wzm_model *model, const wzs_params *p,
			   wzs_moe_shape *shape /* OUT */, double *routed_all /* OUT */,
			   wz_diag *diag);

/* Billions of parameters every GPU of a replica holds whole under the
 * given parallelism.  Tensor parallel: none (every weight is split).
 * Attention data parallel: all but the routed experts, with or without
 * expert parallelism, since each rank runs attention, the dense layers,
 * the shared experts and the LM head for its own requests, and only the
 * routed experts are split (by expert under expert parallelism, by
 * tensor slices over all ranks without); a dense model (active
 * parameters = total) is held whole.  Fails naming the catalog field or
 * the scenario keys it needs. */
wz_err wzs_replicated_params_b(const wzm_model *model, const wzs_params *p, wzm_parallelism par,
			       double *out /* OUT */, wz_diag *diag);

/* Sets mem->replicated_params_b for mem->par (wzs_replicated_params_b). */
wz_err wzs_memory_params_weights(const wzm_model *model, const wzs_params *p,
				 wzm_memory_params *mem /* IN/OUT */, wz_diag *diag);

/* The same for a scenario: reads its simulation keys, finds its model in
 * the catalog and sets s->mem.replicated_params_b, so that a memory-mode
 * comparison holds the weights as the simulator does. */
wz_err wzs_scenario_weights(wzm_scenario *s, const wzm_catalog *cat, wz_diag *diag);

#endif
