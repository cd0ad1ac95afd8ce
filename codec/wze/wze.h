/* wze-<bits>: fixed-size GPU-tier records whose coefficients are
 * entropy-coded (docs/wze-format.md): per token and layer a step code
 * chosen so that the rANS-coded indices of a uniform quantizer fill the
 * record, over the wz profile's transform and statistics. */
#ifndef WZC_WZE_H
#define WZC_WZE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/profile/profile.h"
#include "codec/wze/wze_core.h"

/* The least record: the coder's state and the step code. */
#define WZE_MIN_BYTES 6
#include "common/wz_error.h"

/* One layer's plan: the tables of both parts (what wze_layer_view points
 * into) and what the encoder needs besides. */
typedef struct {
	int ready;            /* 0 for a layer the profile does not hold */
	uint32_t tab_off[3 * WZE_NCLASS], rec_off[3 * WZE_NCLASS];
	uint16_t tab_k[3 * WZE_NCLASS];
	/* the least and the greatest cost of a symbol of each table: bounds
	 * on the estimate that the fast encoder's search decides by where
	 * they can (wze_fast_enc.c) */
	uint16_t cost_min[3 * WZE_NCLASS], cost_max[3 * WZE_NCLASS];
	uint32_t *cum;        /* cumulative frequencies, 2K + 2 a table */
	float *recon;         /* reconstruction points in cells, 2K + 1 a table */
	uint16_t *cost;       /* -log2 of each symbol's probability, 1/256 bit, as recon */
	uint16_t *lut;        /* the slot tables (wze_dec_symbol_lut), WZE_LUT_N + 1 a table,
			       * table set * WZE_NCLASS + class - WZE_JLO */
	float *cstep;         /* [R + P], R + 2P where the layer predicts */
	int16_t *cls;         /* the same */
	int32_t *order;       /* the same: each table set's entries (from the set's first) by
			       * class, the fast encoder's order (wze_fast_enc.c) */
	float *delta;         /* the same */
	float *wgt;           /* the same: the profile's distortion weights (the anchor choice) */
	/* profile version 7, a layer that predicts its position part: 1, and
	 * the map taken through the latent's basis, mp = basis * map (R x P:
	 * row k, what coefficient k adds to the prediction), with which the
	 * encoder's step search predicts from the coefficients it would code */
	int predicts;
	float *mp;
	size_t ncum, nrec, nent; /* the sizes of cum, recon and the per-component arrays */
	float dref;           /* the layer's weighted RMS */
	float scale_ref[3];   /* the table sets' reference scales (the profile's) */
} wzc_wze_layer;

typedef struct wzc_wze_plan {
	const wzc_profile *profile;
	int L, R, P;
	size_t record_bytes;
	wzc_wze_layer *layers; /* [L] */
} wzc_wze_plan;

/* The plan of every layer the profile holds, for records of record_bytes
 * (at least WZE_MIN_BYTES).  The caller frees it with wzc_wze_plan_free. */
wz_err wzc_wze_plan_new(const wzc_profile *profile, size_t record_bytes,
			wzc_wze_plan **out /* OUT */, wz_diag *diag);
void wzc_wze_plan_free(wzc_wze_plan *plan);
/* The decoder's view of layer l (its arrays stay the plan's), and the
 * sizes of its arrays (for a copy to the GPU: codec/cuda/wze_kernels.h). */
wze_layer_view wzc_wze_view(const wzc_wze_plan *plan, int l);
void wzc_wze_view_sizes(const wzc_wze_plan *plan, int l, size_t *ncum, size_t *nrec,
			size_t *nent);

/* n tokens of layer l (values as the codec gives them: bf16-rounded, RoPE
 * undone where the profile says) to records of plan->record_bytes each. */
void wzc_wze_encode_layer(const wzc_wze_plan *plan, int layer, int n, const float *latent,
			  const float *rope, uint8_t *records);
/* Records back to values: into the cache's domain, or (transformed 1) the
 * coefficients relative to the mean, as wz's decoder gives them.
 * WZ_ERR_USAGE for a layer the profile does not hold (read in part),
 * WZ_ERR_NOMEM when the scratch of a wide shape (R + P over 1024, P over
 * 256) cannot be had: the values are then zeros. */
wz_err wzc_wze_decode_token(const wzc_wze_plan *plan, int layer, const uint8_t *record,
			    float *latent, float *rope, int transformed);
wz_err wzc_wze_decode_layer(const wzc_wze_plan *plan, int layer, int n, const uint8_t *records,
			    float *latent, float *rope);

/* The fast paths (docs/wze-format.md, "Speed"): the same records and the
 * same values, bit for bit, as the reference coder above
 * (wzc_wze_encode_layer, wzc_wze_decode_layer), which tests hold them to. */
void wzc_wze_encode_layer_fast(const wzc_wze_plan *plan, int layer, int n, const float *latent,
			       const float *rope, uint8_t *records);
wz_err wzc_wze_decode_layer_fast(const wzc_wze_plan *plan, int layer, int n,
				 const uint8_t *records, float *latent, float *rope);

/* The step code a record was coded at (WZE_SMAX: none), for tests and
 * measurements. */
int wzc_wze_record_code(const uint8_t *rec, size_t record_bytes);

#endif
