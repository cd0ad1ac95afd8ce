/* The wze coder, CPU reference (docs/wze-format.md): each token's
 * coefficients on the profile's transform, quantized uniformly with
 * steps by the distortion weights, rANS-coded under the plan's tables at
 * the finest step code whose code fits the record; the decoder shares its
 * per-record body with the GPU (wze_core.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/profile/predict.h"
#include "codec/wze/wze.h"
#include "codec/wze/wze_enc.h"

/* The reference's symbol of component entry k at step code s. */
static wze_sym quantize(const wzc_wze_layer *ly, int k, int set, int s, int c0, float y)
{
	return wze_quantize(ly, k, set, s, wze_gain(s), c0, y);
}

static float dequantize(const wzc_wze_layer *ly, int k, int set, int s, wze_sym o)
{
	return wze_dequantize(ly, k, set, wze_gain(s), o);
}

/* The refinement bits of a token at code s (wze_core.h's rule): the
 * first WZE_NREF refinable coded components in order (a table symbol
 * other than the outermost two, or any class below the tables), each
 * the half of its cell its value lies in.  With lat, the latent's
 * coefficients among them set to their refined values, as the decoder
 * gives them (n = R: the latent alone). */
static uint32_t refinement(const wzc_wze_layer *ly, int n, int R, int P, int pset, int s,
			   const uint8_t *code, const float *y, float *lat)
{
	uint32_t v = 0;
	int nref = 0;
	for (int k = 0; k < n && nref < WZE_NREF; k++) {
		int set, kk, h;
		float val;
		wze_place(k, R, P, pset, &set, &kk);
		wze_sym o = quantize(ly, kk, set, s, code[k >= R], y[k]);
		if (!o.coded || !wze_refine(ly, kk, set, wze_gain(s), o, y[k], &h, &val))
			continue;
		v |= (uint32_t)h << nref;
		if (lat && k < R)
			lat[k] = val;
		nref++;
	}
	return v;
}

/* The estimated code length of a token at code s, 1/256 bits: the
 * symbols' costs, the low bits, the step code and the state's flush. */
static uint64_t estimate(const wzc_wze_layer *ly, int n, int R, int P, int pset, int s,
			 const uint8_t *code, const float *y)
{
	uint64_t bits = WZE_EST_FIXED;
	for (int k = 0; k < n; k++) {
		int set, kk;
		wze_place(k, R, P, pset, &set, &kk);
		wze_sym o = quantize(ly, kk, set, s, code[k >= R], y[k]);
		if (o.coded)
			bits += ly->cost[ly->rec_off[set * WZE_NCLASS + o.jt] + o.sym] +
				256u * (unsigned)o.b;
	}
	return bits;
}

/* The stream of a token at code s (WZE_SMAX: none) with the anchor flags,
 * into the last cap bytes of tmp; returns its length, or -1 when it does
 * not fit.  Symbols go in backwards: the decoder reads the step code, the
 * flags, then the components in order. */
static long encode_at(const wzc_wze_layer *ly, int n, int R, int P, int s, int flags,
		      const uint8_t *code, const float *y, uint8_t *tmp, size_t cap)
{
	int pset = ly->predicts && (flags & 1) ? 2 : 1;
	/* the refinement bits ride in the initial state */
	uint32_t v = s != WZE_SMAX ? refinement(ly, n, R, P, pset, s, code, y, NULL) : 0;
	wze_enc e = { WZE_RANS_L + v, tmp, tmp + cap, 0 };
	for (int k = n - 1; k >= 0 && !e.over && s != WZE_SMAX; k--) {
		int set, kk;
		wze_place(k, R, P, pset, &set, &kk);
		wze_sym o = quantize(ly, kk, set, s, code[k >= R], y[k]);
		if (o.coded)
			wze_enc_component(&e, ly, set, o);
	}
	return wze_enc_finish(&e, s, flags, code, cap);
}

static void forward(const wzc_part_profile *pp, const float *x, float *y, double *scratch)
{
	wze_forward(pp, x, y, (float *)scratch); /* n floats fit in n doubles */
}

static void inverse(const wzc_part_profile *pp, const float *y, float *x, double *scratch)
{
	wze_inverse(pp, y, x, (float *)scratch);
}

typedef wze_tok tok;

/* A predicted token's position coefficients at step code s, from the
 * latent it would code there: the prediction through mp (the map through
 * the latent's basis) of the dequantized coefficients, subtracted from
 * the position part, then its basis.  What the search weighs; the
 * record's residual is then made exact (encode_token). */
static void residual_at(tok *t, int s)
{
	const wzc_wze_plan *pl = t->pl;
	const wzc_wze_layer *ly = t->ly;
	const wzc_part_profile *pp = &pl->profile->rope[t->layer];
	int R = pl->R, P = pl->P;
	for (int i = 0; i < P; i++)
		t->acc[i] = 0;
	for (int k = 0; k < R; k++) {
		float v = dequantize(ly, k, 0, s, quantize(ly, k, 0, s, t->code[0], t->y[k]));
		if (v == 0)
			continue;
		const float *m = ly->mp + (size_t)k * P;
		for (int i = 0; i < P; i++)
			t->acc[i] += (double)v * m[i];
	}
	for (int i = 0; i < P; i++)
		t->r[i] = (float)((double)t->xpos[i] - t->acc[i]);
	forward(pp, t->r, t->y + R, t->acc);
}

/* The residual as the decoder will see it at code s: the latent decoded
 * from the coefficients coded there, predicted by the shared step. */
static void residual_exact(tok *t, int s)
{
	const wzc_wze_plan *pl = t->pl;
	const wzc_wze_layer *ly = t->ly;
	const wzc_profile *pr = pl->profile;
	int R = pl->R, P = pl->P;
	for (int k = 0; k < R; k++)
		t->lhat[k] = dequantize(ly, k, 0, s, quantize(ly, k, 0, s, t->code[0], t->y[k]));
	refinement(ly, R, R, P, 1, s, t->code, t->y, t->lhat);
	float *coef = t->lhat + R; /* R more floats */
	memcpy(coef, t->lhat, sizeof(float) * (size_t)R);
	inverse(&pr->latent[t->layer], coef, t->lhat, t->acc);
	wzc_pred_token(pr->pred_map[t->layer], pr->latent[t->layer].mean, t->lhat, R, P, t->r);
	for (int i = 0; i < P; i++)
		t->r[i] = t->xpos[i] - t->r[i];
	forward(&pr->rope[t->layer], t->r, t->y + R, t->acc);
}

static uint64_t estimate_tok(tok *t, int s)
{
	const wzc_wze_plan *pl = t->pl;
	if (t->predicted)
		residual_at(t, s);
	return estimate(t->ly, pl->R + pl->P, pl->R, pl->P, 1 + (t->ly->predicts && (t->flags & 1)),
			s, t->code, t->y);
}

static long encode_tok(tok *t, int s, uint8_t *tmp, int exact)
{
	const wzc_wze_plan *pl = t->pl;
	if (t->predicted && s != WZE_SMAX)
		(exact ? residual_exact : residual_at)(t, s);
	return encode_at(t->ly, pl->R + pl->P, pl->R, pl->P, s, t->flags, t->code, t->y, tmp,
			 pl->record_bytes);
}

/* One token: t->y holds the latent's coefficients relative to its mean. */
static void encode_token(tok *t, uint8_t *rec, uint8_t *tmp)
{
	const wzc_wze_plan *pl = t->pl;
	size_t cap = pl->record_bytes;
	wze_prepare_token(t);
	/* the finest code whose estimate fits, by bisection (the estimate
	 * falls as the step grows), then the exact length decides: up until
	 * it fits, then down while it still does */
	uint64_t target = (uint64_t)cap * 8 * 256;
	int lo = -1, hi = WZE_SMAX - 1;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (estimate_tok(t, mid) <= target)
			hi = mid;
		else
			lo = mid;
	}
	int s = hi;
	long len = encode_tok(t, s, tmp, 1);
	while (len < 0 && s < WZE_SMAX - 1)
		len = encode_tok(t, ++s, tmp, 1);
	for (int down = 0; len >= 0 && s > 0 && down < 4; down++) {
		if (encode_tok(t, s - 1, tmp, 1) < 0)
			break;
		s--;
	}
	if (len < 0)
		s = WZE_SMAX;
	len = encode_tok(t, s, tmp, 1);
	memset(rec, 0, cap);
	memcpy(rec, tmp + cap - len, (size_t)len);
}

int wzc_wze_record_code(const uint8_t *rec, size_t record_bytes)
{
	wze_dec d;
	wze_dec_init(&d, rec, (uint32_t)record_bytes);
	int s = (int)wze_dec_raw(&d, 8) << (WZE_SBITS - 8);
	return s | (int)wze_dec_raw(&d, WZE_SBITS - 8);
}

void wzc_wze_encode_layer(const wzc_wze_plan *pl, int layer, int n, const float *latent,
			  const float *rope, uint8_t *records)
{
	const wzc_profile *pr = pl->profile;
	const wzc_wze_layer *ly = &pl->layers[layer];
	int R = pl->R, P = pl->P, W = R > P ? R : P;
	tok t = { pl, ly, layer, 0, 0, { 0, 0 }, NULL, NULL, NULL, NULL, NULL };
	t.y = malloc(sizeof(float) * (size_t)(R + P));
	t.r = malloc(sizeof(float) * (size_t)P + 1);
	t.lhat = malloc(sizeof(float) * 2 * (size_t)R);
	t.acc = malloc(sizeof(double) * (size_t)W + 1);
	uint8_t *tmp = malloc(pl->record_bytes);
	for (int i = 0; i < n; i++) {
		uint8_t *rec = records + (size_t)i * pl->record_bytes;
		if (!t.y || !t.r || !t.lhat || !t.acc || !tmp || !ly->ready) {
			/* nothing to code with: the record of no coefficient */
			uint8_t *scratch = tmp ? tmp : rec;
			long len = encode_at(ly, 0, 0, 0, WZE_SMAX, 0, NULL, NULL, scratch,
					     pl->record_bytes);
			memmove(rec, scratch + pl->record_bytes - len, (size_t)len);
			memset(rec + len, 0, pl->record_bytes - (size_t)len);
			continue;
		}
		forward(&pr->latent[layer], latent + (size_t)i * R, t.y, t.acc);
		t.xpos = (float *)rope + (size_t)i * P;
		encode_token(&t, rec, tmp);
	}
	free(t.y);
	free(t.r);
	free(t.lhat);
	free(t.acc);
	free(tmp);
}

wz_err wzc_wze_decode_token(const wzc_wze_plan *pl, int layer, const uint8_t *rec,
			    float *latent, float *rope, int transformed)
{
	const wzc_profile *pr = pl->profile;
	const wzc_wze_layer *ly = &pl->layers[layer];
	int R = pl->R, P = pl->P;
	float ybuf[1024], pbuf[256];
	double abuf[1024];
	float *y = R + P <= 1024 ? ybuf : malloc(sizeof(float) * (size_t)(R + P));
	double *acc = R + P <= 1024 ? abuf : malloc(sizeof(double) * (size_t)(R + P));
	float *pred = P <= 256 ? pbuf : malloc(sizeof(float) * (size_t)P);
	wz_err e = !ly->ready ? WZ_ERR_USAGE : !y || !acc || !pred ? WZ_ERR_NOMEM : WZ_OK;
	if (e) {
		memset(latent, 0, sizeof(float) * (size_t)R);
		memset(rope, 0, sizeof(float) * (size_t)P);
	} else {
		wze_layer_view v = wzc_wze_view(pl, layer);
		int flags = wze_decode_coeffs(&v, rec, (uint32_t)pl->record_bytes, y);
		int pset = wze_pos_set(&v, flags);
		if (transformed) {
			memcpy(latent, y, sizeof(float) * (size_t)R);
			memcpy(rope, y + R, sizeof(float) * (size_t)P);
		} else {
			inverse(&pr->latent[layer], y, latent, acc);
			if (P)
				inverse(pset == 2 ? &pr->rope_plain[layer] : &pr->rope[layer], y + R,
					rope, acc);
			/* a predicted position part: the residual plus the
			 * prediction from the decoded latent (the shared step) */
			if (P && ly->predicts && pset == 1 && !(flags & 4)) {
				wzc_pred_token(pr->pred_map[layer], pr->latent[layer].mean, latent, R,
					       P, pred);
				for (int i = 0; i < P; i++)
					rope[i] += pred[i];
			}
		}
	}
	if (y != ybuf)
		free(y);
	if (acc != abuf)
		free(acc);
	if (pred != pbuf)
		free(pred);
	return e;
}

wz_err wzc_wze_decode_layer(const wzc_wze_plan *pl, int layer, int n, const uint8_t *records,
			    float *latent, float *rope)
{
	wz_err e = WZ_OK;
	for (int t = 0; !e && t < n; t++)
		e = wzc_wze_decode_token(pl, layer, records + (size_t)t * pl->record_bytes,
					 latent + (size_t)t * pl->R, rope + (size_t)t * pl->P, 0);
	return e;
}
