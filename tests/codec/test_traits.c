/* Every format of the traits table (codec/registry.c) against its own
 * reference, table-driven as ggml's tests/test-backend-ops.cpp runs every
 * backend against the CPU: for each entry, the codec's records against the
 * entry's scalar reference byte for byte, on each SIMD kernel the entry
 * lists that this processor runs, and the decoded values against one
 * token's reference decode bit for bit; wzx's records back out of its real
 * container; the table's facts (ids unique, names parse back to their
 * entry, record sizes the codec's).  A format added to the table is
 * tested here without a line of this file changing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/formats/format.h"
#include "codec/formats/fpconv.h"
#include "codec/kvtc/kvtc.h"
#include "codec/profile/profile.h"
#include "tests/codec/window.h"
#include "tests/tap.h"

/* The rate a parametric entry is tested at, and the layer the tests code. */
#define RATE 5.44

static int same_floats(const float *a, const float *b, size_t n)
{
	return memcmp(a, b, n * sizeof *a) == 0;
}

/* The codec's layer (its fast path) against one token at a time through
 * the entry's baseline coders, the reference. */
static void check_baseline(const wzc_format_info *info, const wzc_format *f, const wzc_window *w,
			   int layer)
{
	wzc_codec *c = NULL;
	wz_diag d;
	if (!ok(!wzc_codec_new(f, w->L, w->R, w->P, NULL, &c, &d), "%s: codec", f->name)) {
		printf("#   %s\n", d.msg);
		return;
	}
	int T = w->T, R = w->R, P = w->P;
	size_t B = wzc_codec_record_bytes(c);
	const float *lat = w->latent + (size_t)layer * T * R, *rope = w->rope + (size_t)layer * T * P;
	uint8_t *fast = malloc(B * T), *ref = malloc(B * T);
	float *xl = malloc(sizeof *xl * T * R), *xr = malloc(sizeof *xr * T * P + 1);
	float *yl = malloc(sizeof *yl * R), *yr = malloc(sizeof *yr * P + 1);
	int bytes_ok = 1, values_ok = 1;
	if (fast && ref && xl && xr && yl && yr &&
	    ok(!wzc_encode_layer(c, layer, T, lat, rope, fast, &d), "%s: encoded", f->name)) {
		wzc_rec_ctx rc = { f->id, R, P, wzc_codec_tensor_scale(c, layer) };
		if (wzc_decode_layer(c, layer, T, fast, xl, xr))
			ok(0, "layer %d decoded (out of memory?)", layer);
		for (int t = 0; t < T; t++) {
			info->encode(&rc, lat + (size_t)t * R, rope + (size_t)t * P, ref + (size_t)t * B);
			info->decode(&rc, ref + (size_t)t * B, yl, yr);
			values_ok &= same_floats(yl, xl + (size_t)t * R, R) &&
				     same_floats(yr, xr + (size_t)t * P, P);
		}
		bytes_ok = memcmp(fast, ref, B * T) == 0;
		ok(bytes_ok, "%s: the codec's records are the reference's, %d tokens", f->name, T);
		ok(values_ok, "%s: decoded values are the reference's bit for bit", f->name);
	}
	free(fast);
	free(ref);
	free(xl);
	free(xr);
	free(yl);
	free(yr);
	wzc_codec_free(c);
}

/* The fast path on each kernel the entry lists against the scalar
 * reference encoder, and the layer decode against one token's. */
static void check_profiled(const wzc_format_info *info, const wzc_format *f, const wzc_window *w,
			   const wzc_profile *prof, int layer)
{
	wzc_codec *c = NULL;
	wz_diag d;
	if (!ok(!wzc_codec_new(f, w->L, w->R, w->P, prof, &c, &d), "%s: codec", f->name)) {
		printf("#   %s\n", d.msg);
		return;
	}
	int T = w->T, R = w->R, P = w->P;
	size_t B = wzc_codec_record_bytes(c);
	const float *lat = w->latent + (size_t)layer * T * R, *rope = w->rope + (size_t)layer * T * P;
	uint8_t *fast = malloc(B * T), *ref = malloc(B * T);
	float *xl = malloc(sizeof *xl * T * R), *xr = malloc(sizeof *xr * T * P + 1);
	float *yl = malloc(sizeof *yl * R), *yr = malloc(sizeof *yr * P + 1);
	if (!fast || !ref || !xl || !xr || !yl || !yr) {
		ok(0, "%s: memory", f->name);
		goto done;
	}
	/* the codec plans the layer on its first encode */
	if (!ok(!wzc_encode_layer(c, layer, T, lat, rope, fast, &d), "%s: encoded", f->name))
		goto done;
	info->encode_layer_ref(c, layer, T, lat, rope, ref, &d);
	int kernels = 0;
	for (int k = 0; info->kernels && info->kernels[k]; k++) {
		if (info->force(info->kernels[k])) {
			printf("# %s: kernel %s not on this processor\n", f->name, info->kernels[k]);
			continue;
		}
		kernels++;
		memset(fast, 0xa5, B * T);
		info->encode_layer(c, layer, T, lat, rope, fast, &d);
		ok(memcmp(fast, ref, B * T) == 0, "%s: kernel %s gives the reference's records", f->name,
		   info->kernels[k]);
	}
	if (info->kernels)
		ok(kernels > 0 && !info->force(NULL), "%s: %d kernels run, the widest chosen again",
		   f->name, kernels);
	info->encode_layer(c, layer, T, lat, rope, fast, &d);
	ok(memcmp(fast, ref, B * T) == 0, "%s: the fast path gives the reference's records", f->name);
	int values_ok = !info->decode_layer(c, layer, T, ref, xl, xr);
	for (int t = 0; t < T; t++) {
		values_ok &= !info->decode_token(c, layer, ref + (size_t)t * B, yl, yr, 0) &&
			     same_floats(yl, xl + (size_t)t * R, R) &&
			     same_floats(yr, xr + (size_t)t * P, P);
	}
	ok(values_ok, "%s: the layer decode gives one token's values bit for bit", f->name);
	if (info->window_records) {
		uint8_t *back = NULL;
		size_t bytes = 0, payload = 0;
		if (ok(!info->window_records(c, w, &back, &bytes, &payload, &d),
		       "%s: the window through its container", f->name)) {
			ok(!memcmp(back + (size_t)layer * T * B, ref, B * T) && payload > 0 &&
				   bytes > payload,
			   "%s: the container gives back the records (%zu bytes, %zu payload)", f->name,
			   bytes, payload);
		}
		free(back);
	}
done:
	free(fast);
	free(ref);
	free(xl);
	free(xr);
	free(yl);
	free(yr);
	wzc_codec_free(c);
}

int main(void)
{
	wzt_cache_trace *cal = synth(WZT_FAMILY_MLA_B, 2, 512, 0, 0, 0, 1, "calibration");
	wzt_cache_trace *test = synth(WZT_FAMILY_MLA_B, 2, 96, 0, 0, 0, 2, "test");
	if (!ok(cal && test, "synthetic windows"))
		return tap_done();
	/* the test window in bf16, as every format's codec path rounds it
	 * (wzc_encode_layer_at), so that the entries' own coders, which take
	 * values as given, see the same input */
	trace_bf16(test);
	/* a baseline only DeepSeek-V4's 448 + 64 entry fits (fp8-ds-mla-v4)
	 * runs on a window of that shape */
	wzt_cache_trace *test4 = synth_shape(WZT_FAMILY_V4_C4, 2, 96, 448, 64, 0, 2, "test");
	if (!ok(test4 != NULL, "a V4-shaped window"))
		return tap_done();
	trace_bf16(test4);
	wzc_window cw = window_of(cal), tw = window_of(test), tw4 = window_of(test4);
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wzc_kvtc *kvtc = NULL;
	wz_diag d;
	if (!ok(wzc_prepare(&cp, 1, NULL, &prof, &d) == WZ_OK, "prepare") ||
	    !ok(wzc_kvtc_fit(&cp, 1, NULL, &kvtc, &d) == WZ_OK, "kvtc's transforms fitted"))
		return tap_done();
	prof->kvtc = kvtc;
	int n = wzc_format_count();
	ok(n >= 17, "the table has %d formats", n);
	for (int i = 0; i < n; i++) {
		const wzc_format_info *info = wzc_format_info_at(i);
		for (int j = 0; j < i; j++)
			if (wzc_format_info_at(j)->id == info->id || !strcmp(wzc_format_info_at(j)->name, info->name))
				ok(0, "%s: id %d and name unique", info->name, (int)info->id);
		char name[64];
		snprintf(name, sizeof name, info->parametric ? "%s-%g" : "%s", info->name, RATE);
		wzc_format f;
		if (!ok(!wzc_format_parse(name, &f, &d) && f.id == info->id &&
				wzc_format_info_of(f.id) == info,
			"%s: parses back to its entry (id %d)", name, (int)info->id))
			continue;
		ok(info->record_bytes && (info->encode != NULL) == !info->needs_profile &&
			   (info->encode != NULL) == (info->decode != NULL) &&
			   (info->encode_layer != NULL) == info->needs_profile &&
			   (!info->encode_layer ||
			    (info->encode_layer_ref && info->decode_layer && info->decode_token)) &&
			   (!info->kernels || info->force),
		   "%s: a baseline's coders or a profiled format's, each with its reference", name);
		const wzc_window *bw = wzc_record_bytes(&f, tw.R, tw.P) ? &tw : &tw4;
		if (!info->needs_profile &&
		    !ok(wzc_record_bytes(&f, bw->R, bw->P) > 0, "%s: codes 512 + 64 or 448 + 64", name))
			continue;
		for (int layer = 0; layer < tw.L; layer++) {
			if (info->needs_profile)
				check_profiled(info, &f, &tw, prof, layer);
			else
				check_baseline(info, &f, bw, layer);
		}
	}
	wzc_profile_free(prof);
	wzc_kvtc_free(kvtc);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	wzt_cache_trace_free(test4);
	return tap_done();
}
