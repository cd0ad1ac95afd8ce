/* A hybrid cache's decode and prefill terms (replica.h,
 * wzs_replica_hybrid; docs/cache-anatomy.md, "In the simulator"). */
#include <math.h>

#include "costmodel/layers.h"
#include "sim/replica.h"

void wzs_replica_hybrid(const wzm_model *model, double record_per_layer, double offload_per_layer,
			long context, wzs_replica_model *m)
{
	if (!wzm_model_hybrid(model))
		return;
	double eb[WZM_MAX_KINDS], ib[WZM_MAX_KINDS];
	for (int k = 0; k < model->nkinds; k++) {
		eb[k] = record_per_layer;
		ib[k] = 0;
		/* the catalog admits only whole fp8 blocks (catalog.c) */
		if (!isnan(model->kinds[k].index_head_dim))
			wzm_index_entry_bytes("fp8", model->kinds[k].index_head_dim, &ib[k], NULL);
	}
	wzm_decode_terms d;
	wzm_decode_terms_compute(model->kinds, model->nkinds, eb, ib, &d);
	/* FLOPs of one query against one entry in one layer, as the dense
	 * model counts them (absorbed in decode, un-absorbed in prefill) */
	double per_entry = m->attn_flops_pair / model->layers;
	double per_entry_prefill = m->prefill_flops_pair / model->layers;
	/* Sparse attention's terms (wzs_step_time_dsa): a request's reads
	 * that stop growing (windows, top-k selections) saturate at
	 * cap_tokens, as DSA's selection does at its top-k; those that grow
	 * (indexer keys, compressed entries read whole) go per cached token. */
	m->dsa_topk = d.cap_tokens;
	m->record_token_bytes = d.fixed_bytes / d.cap_tokens;
	m->side_token_bytes = d.per_token_bytes;
	m->attn_flops_pair = d.fixed_pairs / d.cap_tokens * per_entry;
	m->prefill_flops_pair = d.fixed_pairs / d.cap_tokens * per_entry_prefill;
	if (!(m->idx_flops > 0))
		m->idx_flops = m->attn_flops;
	double key_flops = model->index_n_heads > 0 && model->index_head_dim > 0
				   ? model->index_n_heads * 2.0 * model->index_head_dim
				   : 0;
	/* compressed entries read whole run at the attention's rate: put in
	 * the indexer's time at its rate */
	m->idx_flops_pair = d.per_token_index_keys * key_flops +
			    d.per_token_pairs * per_entry * m->idx_flops / m->attn_flops;
	m->idx_prefill_ratio = (m->idx_flops_pair / m->idx_flops) /
			       (m->prefill_flops_pair / m->attn_flops);
	m->offload_token_bytes = wzm_token_bytes(model, offload_per_layer, context);
}
