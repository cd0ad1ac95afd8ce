/* Out of memory at every allocation, area by area: a profile read from its
 * file, a codec made for it, every layer encoded and decoded; records
 * decoded alone, whole layers or a token at a time, by a codec that has
 * not planned their layers; a wzx container packed to memory and to a
 * file, opened, read and restored every way; kvtc fitted and coded; a
 * profile prepared from a calibration window; a profile of version 7 that
 * predicts a position part over 64 wide (the prediction decoded in
 * scratch), each layer encoded and decoded whole, then a token at a time
 * by a codec that has not planned them.  Each pass refuses the k-th
 * allocation (tests/codec/oom.c, the allocator wrapped at link time) for
 * k = 0, 1, 2, ... and must end in WZ_ERR_NOMEM or in the output of a
 * pass with memory (a fallback that copes is fine), and free everything
 * it allocated.  Passes of many allocations (the wzx container, kvtc,
 * prepare) refuse every k below a limit, then a fixed sample of the rest
 * (the same k every run), so that the test stays under a minute;
 * OOM_ALL=1 refuses every k.  Each area's line is its row of the table:
 * allocations, passes, out of memory, coped, wrong, leaked.
 * OOM_AREA=AREA runs one area (by the name oom_check is given: wz-5.0,
 * "wz-5.0 decode by token", wzx, kvtc, prepare, predict, ...); OOM_DEBUG=1
 * prints each pass that ends otherwise; OOM_TRACE=AREA also prints the
 * stack of its first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "tests/codec/oom.h"
#include "tests/codec/oom_areas.h"
#include "tests/codec/window.h"
#include "tests/tap.h"

enum { L = 2, T = 96, TX = 150, R = 64, P = 16 };
/* the predicting profile's shape: a position part over 64 wide, whose
 * prediction the decoder computes in scratch it allocates, and more
 * tokens than the 64 it predicts at once; small, as each pass plans */
enum { PRED_L = 1, PRED_T = 66, PRED_R = 16, PRED_P = 66 };

/* The profile read from path and a codec of format name made for it,
 * as each pass begins (*p and *c NULL where not made). */
static wz_err open_codec(const char *path, const char *name, wzc_profile **p, wzc_codec **c, wz_diag *d)
{
	wzc_format fmt;
	wz_err e = wzc_profile_read(path, p, d);
	if (!e)
		e = wzc_format_parse(name, &fmt, d);
	if (!e)
		e = wzc_codec_new(&fmt, L, R, P, *p, c, d);
	return e;
}

/* A codec pass: the profile read, the codec of a format made, each layer
 * encoded and decoded. */
typedef struct {
	const char *path, *name;
	const wzc_window *w;
} codec_pass;

static wz_err pass_codec(void *vctx, uint8_t *out, size_t cap, size_t *n)
{
	const codec_pass *cp = vctx;
	const wzc_window *w = cp->w;
	wz_diag d;
	wzc_profile *p = NULL;
	wzc_codec *c = NULL;
	wz_err e = open_codec(cp->path, cp->name, &p, &c, &d);
	size_t B = c ? wzc_codec_record_bytes(c) : 0, nval = (size_t)T * (R + P);
	size_t per = B * T + sizeof(float) * nval;
	if (!e && per * L > cap)
		e = WZ_ERR_RANGE;
	for (int l = 0; !e && l < L; l++) {
		size_t o = (size_t)l * T;
		uint8_t *rec = out + per * l;
		float *val = (float *)(rec + B * T);
		e = wzc_encode_layer(c, l, T, w->latent + o * R, w->rope + o * P, rec, &d);
		if (!e)
			e = wzc_decode_layer(c, l, T, rec, val, val + (size_t)T * R);
	}
	*n = e ? 0 : per * L;
	wzc_codec_free(c);
	wzc_profile_free(p);
	return e;
}

/* A decode-only pass: the profile read and a codec made for records a
 * pass with memory encoded (rec, [L][T][B]), each layer decoded by a
 * codec that has not planned it (the decode plans it): whole, or (tokens
 * 1) a token at a time at its position, which gives the same values. */
typedef struct {
	const char *path, *name;
	const uint8_t *rec;
	int tokens;
} decode_pass;

static wz_err pass_decode(void *vctx, uint8_t *out, size_t cap, size_t *n)
{
	const decode_pass *dp = vctx;
	wz_diag d;
	wzc_profile *p = NULL;
	wzc_codec *c = NULL;
	wz_err e = open_codec(dp->path, dp->name, &p, &c, &d);
	size_t B = c ? wzc_codec_record_bytes(c) : 0, per = sizeof(float) * T * (R + P);
	if (!e && per * L > cap)
		e = WZ_ERR_RANGE;
	for (int l = 0; !e && l < L; l++) {
		float *val = (float *)(out + per * l), *rope = val + (size_t)T * R;
		const uint8_t *rec = dp->rec + B * T * l;
		if (!dp->tokens)
			e = wzc_decode_layer(c, l, T, rec, val, rope);
		for (int t = 0; dp->tokens && !e && t < T; t++)
			e = wzc_decode_token_at(c, l, rec + B * t, t, val + (size_t)t * R,
						rope + (size_t)t * P);
	}
	*n = e ? 0 : per * L;
	wzc_codec_free(c);
	wzc_profile_free(p);
	return e;
}

/* One area's line, and its row of the table. */
static void report(const char *area, oom_table tb)
{
	ok(tb.setup_ok && tb.passes >= tb.full && tb.wrong == 0 && tb.leaked == 0,
	   "%s: %ld allocations, %ld passes (each k below %ld, then a sample): %ld out of memory, "
	   "%ld coped with the same output, %ld otherwise (first at %ld), %ld leaked (first at %ld)",
	   area, tb.allocs, tb.passes, tb.full, tb.nomem, tb.coped, tb.wrong, tb.wrong_at, tb.leaked,
	   tb.leak_at);
}

/* The predict area: a version 7 profile of a calibration window whose
 * position part the latent predicts (every layer predicting), written to
 * a file of its own, and a test window of its shape. */
static void predict_area(const char *fa, const char *fb)
{
	wzt_cache_trace *cal = synth_shape(WZT_FAMILY_MLA_P, PRED_L, 256, PRED_R, PRED_P, 0, 1,
					   "calibration");
	wzt_cache_trace *t = synth_shape(WZT_FAMILY_MLA_P, PRED_L, PRED_T, PRED_R, PRED_P, 0, 2,
					 "test");
	wzc_profile *prof = cal ? prepare_rope(cal, 2) : NULL;
	char path[] = "test_oom-XXXXXX";
	int fd = mkstemp(path), every = prof != NULL;
	wz_diag d;
	for (int l = 0; prof && l < PRED_L; l++)
		every &= wzc_profile_predicts(prof, l);
	if (fd >= 0)
		close(fd);
	if (prof && fd >= 0 && wzc_profile_write(path, prof, &d))
		printf("# %s\n", d.msg);
	if (ok(t && every && prof->version == 7 && fd >= 0,
	       "a version 7 profile of %d layer%s x (%d + %d), each predicting its position part, "
	       "written", PRED_L, PRED_L == 1 ? "" : "s", PRED_R, PRED_P)) {
		wzc_window cw = window_of(cal), w = window_of(t);
		oom_inputs in = { path, &cw, &w, fa, fb };
		report("predict", oom_check("predict", oom_predict_pass, &in, oom_area_cap(&in),
					    100000, 1));
	}
	if (fd >= 0)
		unlink(path);
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(t);
}

int main(void)
{
	wzt_cache_trace *cal = synth_shape(WZT_FAMILY_MLA_A, L, 256, R, P, 0, 1, "calibration");
	wzt_cache_trace *t = synth_shape(WZT_FAMILY_MLA_A, L, T, R, P, 0, 2, "test");
	wzt_cache_trace *tx = synth_shape(WZT_FAMILY_MLA_A, L, TX, R, P, 0, 3, "test");
	char path[] = "test_oom-XXXXXX", fa[] = "test_oom-XXXXXX", fb[] = "test_oom-XXXXXX";
	int fd = mkstemp(path), fda = mkstemp(fa), fdb = mkstemp(fb);
	wzc_profile *prof = NULL;
	wz_diag d;
	wzc_window cw = { 0 }, w = { 0 }, wx = { 0 };
	if (cal && fd >= 0) {
		cw = window_of(cal);
		const wzc_window *ws[1] = { &cw };
		wzc_prepare_opts o;
		wzc_prepare_opts_default(&o);
		o.threads = 1;
		if (wzc_prepare(ws, 1, &o, &prof, &d) || wzc_profile_write(path, prof, &d))
			printf("# %s\n", d.msg);
	}
	if (!ok(prof && t && tx && fda >= 0 && fdb >= 0, "a profile of %d layers x (%d + %d), written",
		L, R, P))
		goto done;
	close(fd);
	close(fda);
	close(fdb);
	w = window_of(t);
	wx = window_of(tx);
	size_t cap = (size_t)L * T * (4 * (R + P) + sizeof(float) * (R + P)) + 64;
	static const char *const names[] = { "wz-5.0", "wze-5.0", "wzt-5.0", "wzs-5.0", "fp8-mix", "int4-g64" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		codec_pass cp = { path, names[i], &w };
		report(names[i], oom_check(names[i], pass_codec, &cp, cap, 100000, 1));
	}
	/* decoding alone, from records encoded with memory */
	static const char *const decoders[] = { "wz-5.0", "wzt-5.0", "wze-5.0" };
	uint8_t *rec = malloc(cap);
	for (size_t i = 0; rec && i < sizeof decoders / sizeof *decoders; i++) {
		codec_pass cp = { path, decoders[i], &w };
		size_t nrec = 0;
		if (!ok(!pass_codec(&cp, rec, cap, &nrec), "%s: records encoded", decoders[i]))
			continue;
		/* pass_codec's layers are records then values; the records alone */
		wzc_profile *p = NULL;
		wzc_codec *c = NULL;
		wzc_format fmt;
		uint8_t *recs = NULL;
		if (!wzc_profile_read(path, &p, &d) && !wzc_format_parse(decoders[i], &fmt, &d) &&
		    !wzc_codec_new(&fmt, L, R, P, p, &c, &d)) {
			size_t B = wzc_codec_record_bytes(c), per = B * T + sizeof(float) * T * (R + P);
			if ((recs = malloc(B * T * L)))
				for (int l = 0; l < L; l++)
					memcpy(recs + B * T * l, rec + per * l, B * T);
		}
		wzc_codec_free(c);
		wzc_profile_free(p);
		for (int tokens = 0; recs && tokens < 2; tokens++) {
			char name[64];
			snprintf(name, sizeof name, "%s decode%s", decoders[i],
				 tokens ? " by token" : "");
			decode_pass dp = { path, decoders[i], recs, tokens };
			report(name, oom_check(name, pass_decode, &dp, cap, 100000, 1));
		}
		free(recs);
	}
	free(rec);
	oom_inputs in = { path, &cw, &wx, fa, fb };
	size_t acap = oom_area_cap(&in);
	report("wzx container", oom_check("wzx", oom_wzx_pass, &in, acap, 400, 200));
	oom_inputs kin = { path, &cw, &w, fa, fb };
	report("kvtc", oom_check("kvtc", oom_kvtc_pass, &kin, acap, 400, 200));
	report("prepare", oom_check("prepare", oom_prepare_pass, &in, acap, 400, 200));
	predict_area(fa, fb);
done:
	if (fd >= 0)
		unlink(path);
	if (fda >= 0)
		unlink(fa);
	if (fdb >= 0)
		unlink(fb);
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(t);
	wzt_cache_trace_free(tx);
	return tap_done();
}
