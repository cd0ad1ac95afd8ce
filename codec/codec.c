/* The codec context: one per (format, shape, profile), dispatching records
 * to the format's coders through the traits table (codec/registry.c). */
#include "codec/codec.h"

#include <stdlib.h>
#include <string.h>

#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/fpconv.h"
#include "codec/profile/profile.h"
#include "codec/profile/profile_cache.h"
#include "codec/profile/rope.h"
#include "codec/wz/wz_plan.h"
#include "codec/wz/wz_predict.h"
#include "codec/wz/wzt_trellis.h"
#include "codec/wze/wze.h"

static void plan_free(void *plan)
{
	wzc_wz_plan_free(plan);
}

/* The profile's plan for this record size: planned once and shared by
 * every codec of that grid (a plan is read-only once built). */
static wz_err shared_plan(wzc_codec *c, const wzc_profile *profile, wz_diag *diag)
{
	c->profile = profile;
	c->wz = wzc_profile_shared_get(profile, WZC_CACHE_PLAN, c->record_bytes);
	if (c->wz) {
		c->wz_shared = 1;
		return WZ_OK;
	}
	wz_err e = wzc_wz_plan_new(profile, c->fmt.rate_bits, c->record_bytes, &c->wz, diag);
	if (e)
		return e;
	void *obj = c->wz;
	c->wz_shared = wzc_profile_shared_put(profile, WZC_CACHE_PLAN, c->record_bytes, &obj, plan_free);
	c->wz = obj;
	return WZ_OK;
}

/* Profile version 7 (docs/wz-format.md, "Predicted position part"): the
 * codec of the tokens at position 0, over the plan of the position part's
 * own statistics.
 * The trellis formats choose the latent's digits with the position part's
 * (one path through both), so a latent coded before the prediction would
 * not be the one decoded; wzx's records leave through paths that do not
 * predict yet: both refuse such a profile. */
static wz_err anchored_codec(wzc_codec *c, const wzc_format_info *info, wz_diag *diag)
{
	if (c->wzt || info->profile_record_bytes)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "format %s cannot code with a profile that predicts the position "
				   "part (version 7): use wz-<bits> or wzs-<bits>, or a profile "
				   "prepared without --predict",
				   c->fmt.name);
	c->anchored = malloc(sizeof *c->anchored);
	if (!c->anchored)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	*c->anchored = *c;
	c->anchored->wz = c->wz->anchored;
	c->anchored->wz_shared = 1;
	c->anchored->anchored = NULL;
	return WZ_OK;
}

/* wze's tables (docs/wze-format.md); it predicts the position part
 * itself where the profile says (version 7), inside its step search. */
static wz_err wze_plan(wzc_codec *c, const wzc_profile *profile, wz_diag *diag)
{
	return wzc_wze_plan_new(profile, c->record_bytes, &c->wze, diag);
}

wz_err wzc_codec_new(const wzc_format *fmt, int L, int R, int P, const wzc_profile *profile,
		     wzc_codec **out, wz_diag *diag)
{
	*out = NULL;
	if (L <= 0 || R <= 0 || P < 0)
		return wz_diag_set(diag, WZ_ERR_RANGE, "bad cache shape %d x (%d + %d)", L, R, P);
	if (fmt->keeps)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "format %s keeps some tokens of a window in bf16, so it has no "
				   "record per token: measure it on a window (codec measure)",
				   fmt->name);
	size_t bytes = wzc_record_bytes(fmt, R, P);
	if (!bytes)
		return wz_diag_set(diag, WZ_ERR_RANGE,
				   "format %s cannot hold a latent of %d values (group size)",
				   fmt->name, R);
	wzc_codec *c = calloc(1, sizeof *c);
	if (!c)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	c->fmt = *fmt;
	c->L = L;
	c->R = R;
	c->P = P;
	c->record_bytes = bytes;
	c->tensor_scale = calloc((size_t)L, sizeof *c->tensor_scale);
	if (!c->tensor_scale) {
		wzc_codec_free(c);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	if (wzc_format_needs_profile(fmt->id)) {
		if (!profile) {
			wzc_codec_free(c);
			return wz_diag_set(diag, WZ_ERR_MISSING, "format %s needs a profile",
					   fmt->name);
		}
		if (profile->L != L || profile->R != R || profile->P != P) {
			wzc_codec_free(c);
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "the profile is for %d layers x (%d + %d), the cache is %d x (%d + %d)",
					   profile->L, profile->R, profile->P, L, R, P);
		}
		/* wzx entropy-codes the records of a wz grid (docs/wzx-format.md):
		 * the codec is that grid's, records and all. */
		const wzc_format_info *info = wzc_format_info_of(fmt->id);
		wz_err e = info->profile_record_bytes
				   ? info->profile_record_bytes(profile, fmt, &c->record_bytes, diag)
				   : WZ_OK;
		c->profile = profile;
		if (!e && info->wz_plan)
			e = shared_plan(c, profile, diag);
		if (!e && wzc_format_trellis_nu(fmt->id))
			e = wzc_wzt_plan_new(c->wz, wzc_format_trellis_nu(fmt->id), &c->wzt, diag);
		if (!e && c->wz && c->wz->anchored)
			e = anchored_codec(c, info, diag);
		if (!e && fmt->id == WZC_FMT_WZE)
			e = wze_plan(c, profile, diag);
		if (e) {
			wzc_codec_free(c);
			return e;
		}
	}
	*out = c;
	return WZ_OK;
}

void wzc_codec_free(wzc_codec *c)
{
	if (!c)
		return;
	if (c->wz_shared)
		wzc_profile_shared_release(c->profile, WZC_CACHE_PLAN, c->record_bytes);
	else
		wzc_wz_plan_free(c->wz);
	wzc_wzt_plan_free(c->wzt);
	wzc_wze_plan_free(c->wze);
	free(c->tensor_scale);
	free(c->anchored); /* a shallow copy: its arrays are this codec's */
	free(c);
}

const wzc_format *wzc_codec_format(const wzc_codec *c)
{
	return &c->fmt;
}

size_t wzc_codec_record_bytes(const wzc_codec *c)
{
	return c->record_bytes;
}

float wzc_codec_tensor_scale(const wzc_codec *c, int layer)
{
	return layer >= 0 && layer < c->L ? c->tensor_scale[layer] : 0;
}

const double *wzc_codec_rope_freq(const wzc_codec *c, int layer)
{
	if ((!c->wz && !c->wze) || !c->profile || !wzc_profile_undoes_rope(c->profile, layer))
		return NULL;
	return c->profile->rope_freq + (size_t)layer * (c->P / 2);
}

static wz_err encode_layer(wzc_codec *c, int layer, int n, const float *latent,
			   const float *rope, const int64_t *positions, uint8_t *records,
			   wz_diag *diag);

/* 1 when the codec's layer predicts its position part (a version 7
 * profile, the layer's flag set; the codec made its anchored codec). */
static int pred_layer(const wzc_codec *c, int layer)
{
	return c->anchored && c->profile && wzc_profile_predicts(c->profile, layer);
}

/* A serving stack's cache holds bf16 values, and every format there
 * quantizes those: so every format here, baselines and ours alike, codes
 * the window's values rounded to bf16 (round to nearest even), and all
 * see the same input.  The error is measured against the window as given. */
static void round_bf16(float *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(x[i]));
}

wz_err wzc_encode_layer_at(wzc_codec *c, int layer, int n, const float *latent,
			   const float *rope, const int64_t *positions, uint8_t *records,
			   wz_diag *diag)
{
	if (layer < 0 || layer >= c->L || n < 0)
		return wz_diag_set(diag, WZ_ERR_RANGE, "layer %d of %d, %d tokens", layer, c->L, n);
	if (n == 0)
		return WZ_OK;
	size_t nl = (size_t)n * (size_t)c->R, np = (size_t)n * (size_t)c->P;
	float *in = malloc(sizeof *in * (nl + np + 1));
	if (!in)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (%d tokens)", n);
	memcpy(in, latent, sizeof *in * nl);
	memcpy(in + nl, rope, sizeof *in * np);
	round_bf16(in, nl + np);
	/* where the profile undoes RoPE, the position part rotated back, then
	 * coded as any other */
	const double *f = wzc_codec_rope_freq(c, layer);
	for (int t = 0; f && t < n; t++)
		wzc_rope_turn(in + nl + (size_t)t * c->P, c->P, positions ? positions[t] : t, f, -1);
	wz_err e = encode_layer(c, layer, n, in, in + nl, positions, records, diag);
	free(in);
	return e;
}

wz_err wzc_encode_layer(wzc_codec *c, int layer, int n, const float *latent, const float *rope,
			uint8_t *records, wz_diag *diag)
{
	return wzc_encode_layer_at(c, layer, n, latent, rope, NULL, records, diag);
}

static wz_err encode_layer(wzc_codec *c, int layer, int n, const float *latent,
			   const float *rope, const int64_t *positions, uint8_t *records,
			   wz_diag *diag)
{
	const wzc_format_info *info = wzc_format_info_of(c->fmt.id);
	if (info->encode_layer) {
		/* The layer's plan, made on first use (wzt's trellis plan rests on it). */
		const layer_plan *lp;
		wz_err e = c->wz ? wzc_wz_plan_layer_get(c->wz, layer, &lp, diag) : WZ_OK;
		if (!e && pred_layer(c, layer))
			e = wzc_wz_plan_layer_get(c->anchored->wz, layer, &lp, diag);
		if (e)
			return e;
		if (pred_layer(c, layer))
			return wzc_pred_encode_layer(c, c->anchored, c->profile, c->record_bytes,
						     info->encode_layer,
						     info->decode_layer, layer, n, latent, rope,
						     positions, records, diag);
		return info->encode_layer(c, layer, n, latent, rope, records, diag);
	}
	if (c->fmt.id == WZC_FMT_FP8_FLAT)
		c->tensor_scale[layer] = wzc_flat_scale(n, c->R, c->P, latent, rope);
	wzc_rec_ctx rc = { c->fmt.id, c->R, c->P, c->tensor_scale[layer] };
	for (int t = 0; t < n; t++)
		info->encode(&rc, latent + (size_t)t * c->R, rope + (size_t)t * c->P,
			     records + (size_t)t * c->record_bytes);
	return WZ_OK;
}

wz_err wzc_decode_token_at(const wzc_codec *c, int layer, const uint8_t *record,
			   int64_t position, float *latent, float *rope)
{
	if (layer < 0 || layer >= c->L)
		return WZ_OK;
	const wzc_format_info *info = wzc_format_info_of(c->fmt.id);
	if (!info->decode_token) {
		wzc_rec_ctx rc = { c->fmt.id, c->R, c->P, c->tensor_scale[layer] };
		info->decode(&rc, record, latent, rope);
		return WZ_OK;
	}
	/* the layer's plans are made by the decoders where no encode made them */
	wz_err e = pred_layer(c, layer)
			   ? wzc_pred_decode_layer(c, c->anchored, c->profile, c->record_bytes,
						   info->decode_layer, layer, 1, record, &position,
						   latent, rope)
			   : info->decode_token(c, layer, record, latent, rope, 0);
	const double *f = wzc_codec_rope_freq(c, layer);
	if (!e && f)
		wzc_rope_turn(rope, c->P, position, f, 1);
	return e;
}

wz_err wzc_decode_token(const wzc_codec *c, int layer, const uint8_t *record, float *latent,
			float *rope)
{
	return wzc_decode_token_at(c, layer, record, 0, latent, rope);
}

/* The layer's plans, made now where no encode made them. */
static wz_err decode_plans(const wzc_codec *c, int layer)
{
	const layer_plan *lp;
	wz_diag d;
	wz_err e = c->wz ? wzc_wz_plan_layer_get(c->wz, layer, &lp, &d) : WZ_OK;
	if (!e && pred_layer(c, layer))
		e = wzc_wz_plan_layer_get(c->anchored->wz, layer, &lp, &d);
	return e;
}

wz_err wzc_decode_layer_at(const wzc_codec *c, int layer, int n, const uint8_t *records,
			   const int64_t *positions, float *latent, float *rope)
{
	const wzc_format_info *info = wzc_format_info_of(c->fmt.id);
	if (info->decode_layer && layer >= 0 && layer < c->L) {
		wz_err e = n > 0 ? decode_plans(c, layer) : WZ_OK;
		if (e)
			return e;
		if (pred_layer(c, layer))
			e = wzc_pred_decode_layer(c, c->anchored, c->profile, c->record_bytes,
						  info->decode_layer, layer, n, records, positions,
						  latent, rope);
		else
			e = info->decode_layer(c, layer, n, records, latent, rope);
		const double *f = wzc_codec_rope_freq(c, layer);
		for (int t = 0; !e && f && t < n; t++)
			wzc_rope_turn(rope + (size_t)t * c->P, c->P, positions ? positions[t] : t, f, 1);
		return e;
	}
	wz_err e = WZ_OK;
	for (int t = 0; !e && t < n; t++)
		e = wzc_decode_token(c, layer, records + (size_t)t * c->record_bytes,
				     latent + (size_t)t * c->R, rope + (size_t)t * c->P);
	return e;
}

wz_err wzc_decode_layer(const wzc_codec *c, int layer, int n, const uint8_t *records,
			float *latent, float *rope)
{
	return wzc_decode_layer_at(c, layer, n, records, NULL, latent, rope);
}

int wzc_wz_decode_token_transformed(const wzc_codec *c, int layer, const uint8_t *record,
				    float *y_latent, float *y_rope)
{
	/* a predicted position part has no transformed domain of its own:
	 * its values need the decoded latent */
	if (!c->wz || layer < 0 || layer >= c->L || pred_layer(c, layer))
		return -1;
	return wzc_format_info_of(c->fmt.id)->decode_token(c, layer, record, y_latent, y_rope, 1)
		       ? -1
		       : 0;
}
