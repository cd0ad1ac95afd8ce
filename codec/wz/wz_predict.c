/* Profile version 7's predicted position part around a wz coder
 * (docs/wz-format.md, "Predicted position part"): in a layer that
 * predicts, the encoder codes the latent, predicts the position part from
 * the decoded latent and codes the residual; the token at position 0 (the
 * anchor's: the attention sink, which the map does not predict) is coded
 * by the plan of the part's own statistics, unpredicted.  The same steps
 * for the reference and the fast coders: only the layer coder differs. */
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/profile/predict.h"
#include "codec/wz/wz_predict.h"

/* The prediction of n tokens (wz_predict.h's step, token by token): an
 * AVX2 and an AVX-512 clone where the processor has them, in which the
 * step's fused multiply-adds are instructions and the loop over the P
 * outputs is vectorized; the same chain per output, so the same floats as
 * the step called alone (test_predict compares them). */
WZ_VEC_CLONES WZ_HOT void wzc_pred_tokens(const float *map, const float *mean, const float *lat,
					  int R, int P, int n, float *pred)
{
	for (int t = 0; t < n; t++)
		wzc_pred_token(map, mean, lat + (size_t)t * R, R, P, pred + (size_t)t * P);
}

static int anchored_at(const int64_t *positions, int t)
{
	return (positions ? positions[t] : t) == 0;
}

wz_err wzc_pred_encode_layer(const wzc_codec *c, const wzc_codec *anchored,
			     const wzc_profile *pr, size_t record_bytes, wzc_layer_coder enc, wzc_layer_decoder dec,
			     int layer, int n, const float *latent, const float *rope,
			     const int64_t *positions, uint8_t *records, wz_diag *diag)
{
	int R = pr->R, P = pr->P;
	size_t B = record_bytes;
	float *lhat = malloc(sizeof *lhat * ((size_t)n * (size_t)(R + P) + 1));
	if (!lhat)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (%d tokens)", n);
	float *res = lhat + (size_t)n * R;
	/* 1. the latent as it will be coded: its digits and scale do not
	 * depend on the position part (each part is quantized alone) */
	wz_err e = enc(c, layer, n, latent, rope, records, diag);
	if (e) {
		free(lhat);
		return e;
	}
	if ((e = dec(c, layer, n, records, lhat, res))) {
		free(lhat);
		return wz_diag_set(diag, e, "layer %d: its latent could not be decoded to predict from",
				   layer);
	}
	/* 2. every token's residual from its decoded latent */
	const float *map = pr->pred_map[layer], *mean = pr->latent[layer].mean;
	wzc_pred_tokens(map, mean, lhat, R, P, n, res);
	for (size_t i = 0; i < (size_t)n * P; i++)
		res[i] = rope[i] - res[i];
	/* 3. the records of the residuals; the anchored tokens' (a window
	 * holds at most a few) by their own plan, unpredicted */
	e = enc(c, layer, n, latent, res, records, diag);
	for (int t = 0; !e && t < n; t++)
		if (anchored_at(positions, t))
			e = enc(anchored, layer, 1, latent + (size_t)t * R, rope + (size_t)t * P,
				records + (size_t)t * B, diag);
	free(lhat);
	return e;
}

wz_err wzc_pred_decode_layer(const wzc_codec *c, const wzc_codec *anchored, const wzc_profile *pr,
			     size_t record_bytes, wzc_layer_decoder dec, int layer, int n,
			     const uint8_t *records, const int64_t *positions, float *latent, float *rope)
{
	int R = pr->R, P = pr->P;
	size_t B = record_bytes;
	wz_err e = dec(c, layer, n, records, latent, rope);
	if (e)
		return e;
	const float *map = pr->pred_map[layer], *mean = pr->latent[layer].mean;
	enum { BLOCK = 64 };
	float pbuf[BLOCK * 64];
	float *pred = P <= 64 ? pbuf : malloc(sizeof *pred * (size_t)BLOCK * P);
	if (!pred)
		return WZ_ERR_NOMEM;
	for (int t0 = 0; !e && t0 < n; t0 += BLOCK) {
		int nb = n - t0 < BLOCK ? n - t0 : BLOCK;
		wzc_pred_tokens(map, mean, latent + (size_t)t0 * R, R, P, nb, pred);
		for (int t = t0; !e && t < t0 + nb; t++) {
			float *rt = rope + (size_t)t * P;
			if (anchored_at(positions, t)) {
				e = dec(anchored, layer, 1, records + (size_t)t * B,
					latent + (size_t)t * R, rt);
				continue;
			}
			const float *pt = pred + (size_t)(t - t0) * P;
			for (int i = 0; i < P; i++)
				rt[i] += pt[i];
		}
	}
	if (pred != pbuf)
		free(pred);
	return e;
}
