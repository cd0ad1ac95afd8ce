/* wze's fast decoder (docs/wze-format.md, "Speed"): the reference's
 * values bit for bit, from the shared per-record body with the layer's
 * slot tables in place of the binary search, and the latent's inverse
 * transform taken over blocks of tokens, each basis row read once a
 * block and each output's sum in the reference's order. */
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/profile/predict.h"
#include "codec/wze/wze.h"

/* Tokens a block: their accumulators (DEC_BLOCK x R floats) stay in the
 * first-level cache while the basis streams past once. */
#define DEC_BLOCK 16

/* x[t] = mean + basis^T y[t] for nt tokens of one part (coefficients a
 * row of ystride floats), each output the reference's chain: the
 * products yk * b[i] added in component order from 0, components at zero
 * skipped, the mean added last. */
WZ_HOT WZ_VEC_CLONES static void inverse_block(const wzc_part_profile *pp, int nt,
					       const float *y, size_t ystride, float *x,
					       size_t xstride, float *acc)
{
	int n = pp->n;
	for (int t = 0; t < nt; t++)
		for (int i = 0; i < n; i++)
			acc[(size_t)t * n + i] = 0;
	for (int k = 0; k < n; k++) {
		const float *b = pp->basis + (size_t)k * n;
		for (int t = 0; t < nt; t++) {
			float yk = y[(size_t)t * ystride + k];
			if (yk == 0)
				continue;
			float *a = acc + (size_t)t * n;
			for (int i = 0; i < n; i++)
				a[i] += yk * b[i];
		}
	}
	for (int t = 0; t < nt; t++)
		for (int i = 0; i < n; i++)
			x[(size_t)t * xstride + i] = acc[(size_t)t * n + i] + pp->mean[i];
}

/* The predicted position part's prediction, added (predict.h's step,
 * its fused multiply-adds in hardware where the clone has them). */
WZ_HOT WZ_VEC_CLONES static void add_prediction(const float *map, const float *mean,
						const float *lat, int R, int P, float *pred,
						float *rope)
{
	wzc_pred_token(map, mean, lat, R, P, pred);
	for (int i = 0; i < P; i++)
		rope[i] += pred[i];
}

wz_err wzc_wze_decode_layer_fast(const wzc_wze_plan *pl, int layer, int n,
				 const uint8_t *records, float *latent, float *rope)
{
	const wzc_profile *pr = pl->profile;
	const wzc_wze_layer *ly = &pl->layers[layer];
	int R = pl->R, P = pl->P, W = R > P ? R : P, N = R + P;
	float *y = malloc(sizeof(float) * (size_t)DEC_BLOCK * N);
	float *acc = malloc(sizeof(float) * (size_t)DEC_BLOCK * W);
	float *pred = malloc(sizeof(float) * (size_t)P + 1);
	wz_err e = WZ_OK;
	if (!y || !acc || !pred || !ly->ready) {
		/* the reference, which says why it cannot decode a layer
		 * without tables (and may cope without these blocks) */
		e = wzc_wze_decode_layer(pl, layer, n, records, latent, rope);
		goto done;
	}
	wze_layer_view v = wzc_wze_view(pl, layer);
	uint32_t bytes = (uint32_t)pl->record_bytes;
	int flags[DEC_BLOCK];
	for (int t0 = 0; t0 < n; t0 += DEC_BLOCK) {
		int nt = n - t0 < DEC_BLOCK ? n - t0 : DEC_BLOCK;
		for (int t = 0; t < nt; t++)
			flags[t] = wze_decode_coeffs_lut(&v, ly->lut,
							 records + (size_t)(t0 + t) * pl->record_bytes,
							 bytes, y + (size_t)t * N);
		float *lat = latent + (size_t)t0 * R;
		inverse_block(&pr->latent[layer], nt, y, (size_t)N, lat, (size_t)R, acc);
		for (int t = 0; P && t < nt; t++) {
			int pset = wze_pos_set(&v, flags[t]);
			float *rp = rope + (size_t)(t0 + t) * P;
			inverse_block(pset == 2 ? &pr->rope_plain[layer] : &pr->rope[layer], 1,
				      y + (size_t)t * N + R, (size_t)N, rp, (size_t)P, acc);
			if (ly->predicts && pset == 1 && !(flags[t] & 4))
				add_prediction(pr->pred_map[layer], pr->latent[layer].mean,
					       lat + (size_t)t * R, R, P, pred, rp);
		}
	}
done:
	free(y);
	free(acc);
	free(pred);
	return e;
}
