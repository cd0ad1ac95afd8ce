/* Passes of tests/codec/test_oom beyond the codec (tests/codec/oom_areas.h):
 * a wzx container packed to memory and to a file, opened, read and
 * restored; kvtc fitted and attached as codec measure attaches it; a
 * profile prepared from a calibration window; a profile that predicts
 * the position part, coded and decoded. */
#include "tests/codec/oom_areas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/formats/format.h"
#include "codec/kvtc/kvtc.h"
#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_files.h"

/* Output appended to the pass's buffer; WZ_ERR_RANGE when it is full. */
typedef struct {
	uint8_t *b;
	size_t n, cap;
} sink;

static wz_err put(sink *s, const void *p, size_t n)
{
	if (n > s->cap - s->n)
		return WZ_ERR_RANGE;
	memcpy(s->b + s->n, p, n);
	s->n += n;
	return WZ_OK;
}

/* A file's bytes appended (read with the C library, not counted). */
static wz_err put_file(sink *s, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return WZ_ERR_IO;
	size_t got = fread(s->b + s->n, 1, s->cap - s->n, f);
	int more = fgetc(f) != EOF;
	fclose(f);
	s->n += got;
	return more ? WZ_ERR_RANGE : WZ_OK;
}

size_t oom_area_cap(const oom_inputs *in)
{
	const wzc_window *w = in->test;
	size_t vals = (size_t)w->L * w->T * (w->R + w->P);
	/* records at most 4 bytes a value; containers, restores at 4 floats
	 * a value; a profile of the calibration window */
	return 64 * vals * sizeof(float) + (size_t)in->cal->L * 64 * (in->cal->R + in->cal->P) *
						   (in->cal->R + in->cal->P) * sizeof(double) + (1 << 20);
}

static wz_err from_window(void *ctx, int layer, int t0, int n, float *lat, float *rope,
			  wz_diag *diag)
{
	(void)diag;
	const wzc_window *w = ctx;
	memcpy(lat, w->latent + ((size_t)layer * w->T + t0) * w->R, sizeof(float) * (size_t)n * w->R);
	memcpy(rope, w->rope + ((size_t)layer * w->T + t0) * w->P, sizeof(float) * (size_t)n * w->P);
	return WZ_OK;
}

/* The container from reader r read every way into s: blocks to records
 * and to the transformed domain one at a time, in groups, all of them,
 * restored as each kind on one thread and on a restorer of two. */
static wz_err read_every_way(const wzc_wzx_reader *r, const wzc_wzx *x, sink *s, wz_diag *d)
{
	const wzc_wzx_info *in = wzc_wzx_reader_info(r);
	size_t B = in->record_bytes, W = (size_t)in->R + in->P;
	size_t room = (size_t)in->L * in->T * (W * 4 * sizeof(float) > B ? W * 4 * sizeof(float) : B);
	uint8_t *buf = malloc(room);
	wzc_wzx_restorer *pool = NULL;
	if (!buf)
		return wz_diag_set(d, WZ_ERR_NOMEM, "out of memory");
	int ntok = 0, ndone = 0, last = in->blocks_per_layer - 1;
	wz_err e = wzc_wzx_read_block(r, x, in->L - 1, last, buf, &ntok, d);
	if (!e)
		e = put(s, buf, (size_t)ntok * B);
	if (!e)
		e = wzc_wzx_read_block_transformed(r, x, 0, 0, (float *)buf,
						   (float *)buf + WZC_WZX_BLOCK_TOKENS * (size_t)in->R, &ntok,
						   d);
	if (!e)
		e = put(s, buf, (size_t)ntok * W * sizeof(float));
	if (!e)
		e = wzc_wzx_read_blocks_rows(r, x, 0, 0, in->blocks_per_layer, (float *)buf, &ndone, d);
	if (!e)
		e = put(s, buf, (size_t)in->T * W * sizeof(float));
	if (!e)
		e = wzc_wzx_read_blocks_records(r, x, in->L - 1, 0, in->blocks_per_layer, buf, &ndone, d);
	if (!e)
		e = put(s, buf, (size_t)in->T * B);
	if (!e)
		e = wzc_wzx_read_all(r, x, buf, d);
	if (!e)
		e = put(s, buf, (size_t)in->L * in->T * B);
	for (int k = WZC_RESTORE_RECORDS; !e && k <= WZC_RESTORE_BF16_RECORDS; k++) {
		size_t bytes = (size_t)in->L * in->T * wzc_wzx_restore_token_bytes(in, (wzc_restore_kind)k);
		e = wzc_wzx_restore(r, x, (wzc_restore_kind)k, 0, in->nblocks, 1, buf, d);
		if (!e)
			e = put(s, buf, bytes);
	}
	if (!e)
		e = wzc_wzx_restorer_new(r, x, WZC_RESTORE_BF16, 2, &pool, d);
	if (!e)
		e = wzc_wzx_restorer_run(pool, 0, in->nblocks, buf, d);
	if (!e)
		e = put(s, buf, (size_t)in->L * in->T * wzc_wzx_restore_token_bytes(in, WZC_RESTORE_BF16));
	wzc_wzx_restorer_free(pool);
	free(buf);
	return e;
}

wz_err oom_wzx_pass(void *vin, uint8_t *out, size_t cap, size_t *n)
{
	const oom_inputs *in = vin;
	const wzc_window *w = in->test;
	sink s = { out, 0, cap };
	wz_diag d;
	wzc_profile *p = NULL;
	wzc_codec *c = NULL;
	wzc_wzx *x = NULL, *xr = NULL;
	wzc_wzx_reader *r = NULL;
	wzc_format fmt;
	uint8_t *rec = NULL, *box = NULL;
	size_t B = 0, nbox = 0, bound = 0;
	wz_err e = wzc_profile_read(in->profile_path, &p, &d);
	if (!e)
		e = wzc_format_parse("wz-5.0", &fmt, &d);
	if (!e)
		e = wzc_codec_new(&fmt, w->L, w->R, w->P, p, &c, &d);
	if (!e)
		e = wzc_wzx_of_codec(c, &x, &d);
	if (!e) {
		B = wzc_wzx_record_bytes(x);
		bound = wzc_wzx_bound(w->L, w->T, w->R, w->P, B, 64);
		rec = malloc(B * w->T * w->L);
		box = malloc(bound);
		if (!rec || !box)
			e = wz_diag_set(&d, WZ_ERR_NOMEM, "out of memory");
	}
	for (int l = 0; !e && l < w->L; l++)
		e = wzc_encode_layer(c, l, w->T, w->latent + (size_t)l * w->T * w->R,
				     w->rope + (size_t)l * w->T * w->P, rec + B * w->T * l, &d);
	/* to memory, opened there, read every way */
	if (!e)
		e = wzc_wzx_write(x, w->T, rec, box, bound, &nbox, NULL, &d);
	if (!e)
		e = put(&s, box, nbox);
	if (!e)
		e = wzc_wzx_open(box, nbox, "memory", &r, &d);
	if (!e)
		e = wzc_wzx_coder_for(r, p, &xr, &d);
	if (!e)
		e = read_every_way(r, xr, &s, &d);
	/* to a file on two threads, restored from it on two */
	if (!e)
		e = wzc_wzx_pack_file(p, &fmt, w, from_window, (void *)w, 2, in->file_a, NULL, &d);
	if (!e)
		e = put_file(&s, in->file_a);
	if (!e)
		e = wzc_wzx_unpack_file(in->file_a, p, WZC_RESTORE_TRANSFORMED, -1, -1, 2, in->file_b,
					NULL, &d);
	if (!e)
		e = put_file(&s, in->file_b);
	if (!e)
		e = wzc_wzx_unpack_path(in->file_a, in->profile_path, WZC_RESTORE_BF16, 1, 1, 1,
					in->file_b, NULL, &d);
	if (!e)
		e = put_file(&s, in->file_b);
	wzc_wzx_reader_free(r);
	wzc_wzx_free(xr);
	wzc_wzx_free(x);
	wzc_codec_free(c);
	wzc_profile_free(p);
	free(rec);
	free(box);
	*n = s.n;
	return e;
}

/* kvtc fitted on the calibration window and attached to the profile, as
 * `codec measure` does (runs/measure.c), then kvtc-4.0 through the codec:
 * each layer encoded and decoded, and the window through its container. */
wz_err oom_kvtc_pass(void *vin, uint8_t *out, size_t cap, size_t *n)
{
	const oom_inputs *in = vin;
	const wzc_window *w = in->test, *cal = in->cal;
	sink s = { out, 0, cap };
	wz_diag d;
	wzc_profile *p = NULL;
	wzc_kvtc *k = NULL;
	wzc_codec *c = NULL;
	wzc_format fmt;
	uint8_t *rec = NULL, *wrec = NULL;
	float *val = NULL;
	size_t B = 0, bytes = 0, payload = 0;
	wz_err e = wzc_profile_read(in->profile_path, &p, &d);
	if (!e)
		e = wzc_kvtc_fit(&cal, 1, p->rope_freq, &k, &d);
	if (!e) {
		p->kvtc = k;
		e = wzc_format_parse("kvtc-4.0", &fmt, &d);
	}
	if (!e)
		e = wzc_codec_new(&fmt, w->L, w->R, w->P, p, &c, &d);
	if (!e) {
		B = wzc_codec_record_bytes(c);
		rec = malloc(B * w->T);
		val = malloc(sizeof *val * w->T * (w->R + w->P));
		if (!rec || !val)
			e = wz_diag_set(&d, WZ_ERR_NOMEM, "out of memory");
	}
	for (int l = 0; !e && l < w->L; l++) {
		e = wzc_encode_layer(c, l, w->T, w->latent + (size_t)l * w->T * w->R,
				     w->rope + (size_t)l * w->T * w->P, rec, &d);
		if (!e)
			e = put(&s, rec, B * w->T);
		if (!e)
			e = wzc_decode_layer(c, l, w->T, rec, val, val + (size_t)w->T * w->R);
		if (!e)
			e = put(&s, val, sizeof *val * w->T * (w->R + w->P));
	}
	const wzc_format_info *info = wzc_format_info_of(fmt.id);
	if (!e)
		e = info->window_records(c, w, &wrec, &bytes, &payload, &d);
	if (!e)
		e = put(&s, wrec, B * w->T * w->L);
	if (!e)
		e = put(&s, &bytes, sizeof bytes);
	free(wrec);
	free(rec);
	free(val);
	wzc_codec_free(c);
	wzc_profile_free(p);
	wzc_kvtc_free(k);
	*n = s.n;
	return e;
}

/* A profile prepared from the calibration window on one thread and on
 * two, serialized. */
wz_err oom_prepare_pass(void *vin, uint8_t *out, size_t cap, size_t *n)
{
	const oom_inputs *in = vin;
	sink s = { out, 0, cap };
	wz_diag d;
	wz_err e = WZ_OK;
	for (int th = 1; !e && th <= 2; th++) {
		wzc_prepare_opts o;
		wzc_prepare_opts_default(&o);
		o.threads = th;
		wzc_profile *p = NULL;
		uint8_t *bytes = NULL;
		size_t nb = 0;
		e = wzc_prepare(&in->cal, 1, &o, &p, &d);
		if (!e)
			e = wzc_profile_serialize(p, &bytes, &nb, &d);
		if (!e)
			e = put(&s, bytes, nb);
		free(bytes);
		wzc_profile_free(p);
	}
	*n = s.n;
	return e;
}

/* The profile read from path and a codec of wz-5.0 made for it. */
static wz_err open_wz(const oom_inputs *in, wzc_profile **p, wzc_codec **c, wz_diag *d)
{
	const wzc_window *w = in->test;
	wzc_format fmt;
	wz_err e = wzc_profile_read(in->profile_path, p, d);
	if (!e)
		e = wzc_format_parse("wz-5.0", &fmt, d);
	if (!e)
		e = wzc_codec_new(&fmt, w->L, w->R, w->P, *p, c, d);
	return e;
}

/* A profile that predicts a position part over 64 wide (version 7; the
 * decode's prediction then needs scratch), and a window at positions 0,
 * 1, ...: wz-5.0 encodes each layer at the window's positions and decodes
 * it whole, at them and without them (the same positions); a codec that
 * has not planned the layers then decodes them a token at a time at their
 * positions, the token at position 0 by wzc_decode_token. */
wz_err oom_predict_pass(void *vin, uint8_t *out, size_t cap, size_t *n)
{
	const oom_inputs *in = vin;
	const wzc_window *w = in->test;
	const int64_t *pos = w->positions;
	sink s = { out, 0, cap };
	wz_diag d;
	wzc_profile *p = NULL;
	wzc_codec *c = NULL;
	size_t B = 0, per = (size_t)w->T * (w->R + w->P);
	uint8_t *rec = NULL;
	float *val = malloc(sizeof *val * per), *vrope = val + (size_t)w->T * w->R;
	wz_err e = val ? open_wz(in, &p, &c, &d) : WZ_ERR_NOMEM;
	if (!e) {
		B = wzc_codec_record_bytes(c);
		if (!(rec = malloc(B * w->T * w->L)))
			e = WZ_ERR_NOMEM;
	}
	for (int l = 0; !e && l < w->L; l++) {
		uint8_t *lrec = rec + B * w->T * l;
		e = wzc_encode_layer_at(c, l, w->T, w->latent + (size_t)l * w->T * w->R,
					w->rope + (size_t)l * w->T * w->P, pos, lrec, &d);
		if (!e)
			e = put(&s, lrec, B * w->T);
		if (!e)
			e = wzc_decode_layer_at(c, l, w->T, lrec, pos, val, vrope);
		if (!e)
			e = put(&s, val, sizeof *val * per);
		if (!e)
			e = wzc_decode_layer(c, l, w->T, lrec, val, vrope);
		if (!e)
			e = put(&s, val, sizeof *val * per);
	}
	wzc_codec_free(c);
	wzc_profile_free(p);
	c = NULL;
	p = NULL;
	if (!e)
		e = open_wz(in, &p, &c, &d);
	for (int l = 0; !e && l < w->L; l++) {
		const uint8_t *lrec = rec + B * w->T * l;
		for (int t = 0; !e && t < w->T; t++) {
			int64_t at = pos ? pos[t] : t;
			float *lat = val + (size_t)t * w->R, *rope = vrope + (size_t)t * w->P;
			e = at ? wzc_decode_token_at(c, l, lrec + B * t, at, lat, rope)
			       : wzc_decode_token(c, l, lrec + B * t, lat, rope);
		}
		if (!e)
			e = put(&s, val, sizeof *val * per);
	}
	wzc_codec_free(c);
	wzc_profile_free(p);
	free(rec);
	free(val);
	*n = s.n;
	return e;
}
