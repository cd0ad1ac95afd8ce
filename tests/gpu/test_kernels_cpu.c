/* The GPU codec kernels' per-thread logic on the CPU (tests/gpu/emulate.h)
 * against the C reference: batched encode into 64-token paged slots writes
 * the reference's bytes, and decode of any set of slots gives its floats
 * bit for bit, for every GPU-tier format (bf16, fp8-mix, fp8-ds-mla,
 * int4-g64, nvfp4 and wz-R), on the three synthetic families and on
 * adversarial tokens: zeros, signed zeros, subnormals, huge values, NaN and
 * infinities (the formats saturate; docs/gpu-kernels.md, "Special values").
 * Runs with no GPU and no nvcc. */
#include "tests/tap.h"

#include <float.h>
#include <stdint.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "tests/codec/window.h"
#include "tests/gpu/emulate.h"
#include "tests/gpu/inputs.h"

static const struct {
	const char *name;
	int id, wzk;
} baselines[] = {
	{ "bf16", WZC_FMT_BF16, WZK_BF16 },
	{ "fp8-mix", WZC_FMT_FP8_MIX, WZK_FP8_MIX },
	{ "fp8-ds-mla", WZC_FMT_FP8_DS_MLA, WZK_FP8_DS_MLA },
	{ "int4-g64", WZC_FMT_INT4_G64, WZK_INT4_G64 },
	{ "nvfp4", WZC_FMT_NVFP4, WZK_NVFP4 },
};
#define NBASE (sizeof baselines / sizeof baselines[0])

/* Encode n tokens with the reference and the emulated kernel (both thread
 * orders), decode them back both ways; 1 when every byte and every float
 * agrees.  what names the data in the TAP line. */
static int check_baseline(int b, int R, int P, int n, const float *lat, const float *rope,
			  const char *what)
{
	wzc_format fmt;
	wzc_codec *c = NULL;
	if (wzc_format_parse(baselines[b].name, &fmt, NULL) ||
	    wzc_codec_new(&fmt, 1, R, P, NULL, &c, NULL))
		return ok(0, "%s: codec for %s", baselines[b].name, what);
	size_t rb = wzc_codec_record_bytes(c);
	wzk_layout l = wzk_layout_of(baselines[b].wzk, R, P);
	int same = (size_t)l.rb == rb;
	int npages = (n + WZK_PAGE_TOKENS - 1) / WZK_PAGE_TOKENS + 1;
	int64_t *slots = shuffled_slots(n, npages);
	uint8_t *ref = malloc(rb * (size_t)n);
	size_t poolb = rb * (size_t)npages * WZK_PAGE_TOKENS;
	uint8_t *pool[2] = { malloc(poolb), malloc(poolb) };
	float *rl = malloc(sizeof(float) * (size_t)n * R), *rr = malloc(sizeof(float) * (size_t)n * (P + 1));
	float *gl = malloc(sizeof(float) * (size_t)n * R), *gr = malloc(sizeof(float) * (size_t)n * (P + 1));
	wzc_encode_layer(c, 0, n, lat, rope, ref, NULL);
	if (wzc_decode_layer(c, 0, n, ref, rl, rr))
		ok(0, "layer %d decoded (out of memory?)", 0);
	for (int order = 0; order < 2 && same; order++) {
		memset(pool[order], 0xa5, poolb);
		emu_reverse = order;
		wzk_enc_args ea = { l, n, lat, rope, slots, pool[order] };
		same &= emu_encode(&ea) == 0;
		for (int i = 0; i < n && same; i++)
			same &= !memcmp(pool[order] + (size_t)slots[i] * rb, ref + (size_t)i * rb, rb);
		wzk_dec_args da = { l, n, slots, pool[order], gl, gr };
		emu_decode(&da);
		same &= !memcmp(gl, rl, sizeof(float) * (size_t)n * R) &&
			!memcmp(gr, rr, sizeof(float) * (size_t)n * P);
	}
	/* slots the batch does not name stay untouched */
	same &= !memcmp(pool[0], pool[1], poolb);
	emu_reverse = 0;
	ok(same, "%s: emulated paged encode = reference bytes, decode = reference floats (%s)",
	   baselines[b].name, what);
	free(slots);
	free(ref);
	free(pool[0]);
	free(pool[1]);
	free(rl);
	free(rr);
	free(gl);
	free(gr);
	wzc_codec_free(c);
	return same;
}

static void test_baselines(void)
{
	ok(WZK_BF16 == WZC_FMT_BF16 && WZK_FP8_MIX == WZC_FMT_FP8_MIX &&
	   WZK_FP8_DS_MLA == WZC_FMT_FP8_DS_MLA && WZK_INT4_G64 == WZC_FMT_INT4_G64 &&
	   WZK_NVFP4 == WZC_FMT_NVFP4 && WZK_FMT_WZ == WZC_FMT_WZ,
	   "kernel format ids equal the registry's");
	static const wzt_family fams[] = { WZT_FAMILY_IID, WZT_FAMILY_MLA_A, WZT_FAMILY_MLA_B };
	for (int f = 0; f < 3; f++) {
		/* 203 tokens: a partial block of the encoder and a partial page */
		wzt_cache_trace *t = synth(fams[f], 2, 203, 0, 0, 100, 5, "test");
		if (!ok(t != NULL, "synthetic %s window", wzt_family_name(fams[f])))
			continue;
		for (size_t b = 0; b < NBASE; b++)
			for (int layer = 0; layer < 2; layer++) {
				char what[64];
				snprintf(what, sizeof what, "synthetic %s layer %d",
					 wzt_family_name(fams[f]), layer);
				check_baseline((int)b, t->R, t->P, t->T,
					       t->latent + (size_t)layer * t->T * t->R,
					       t->rope + (size_t)layer * t->T * t->P, what);
			}
		wzt_cache_trace_free(t);
	}
	const int R = 512, P = 64, n = 8 * 21 * 3;
	float *lat = malloc(sizeof(float) * n * R), *rope = malloc(sizeof(float) * n * P);
	adversarial(R, P, n, lat, rope);
	for (size_t b = 0; b < NBASE; b++)
		check_baseline((int)b, R, P, n, lat, rope, "zeros, subnormals, huge, NaN, Inf");
	/* other shapes the formats allow, and no position part */
	for (size_t b = 0; b < NBASE; b++) {
		check_baseline((int)b, 256, 32, 70, lat, rope, "R 256, P 32");
		check_baseline((int)b, 128, 0, 70, lat, rope, "R 128, no position part");
	}
	free(lat);
	free(rope);
	ok(wzk_layout_of(WZK_FP8_DS_MLA, 64, 64).rb == 0 && wzk_layout_of(WZK_INT4_G64, 32, 64).rb == 0 &&
	   wzk_layout_of(WZK_FP8_MIX, 520, 64).rb == 0 && wzk_layout_of(99, 512, 64).rb == 0,
	   "shapes a format cannot hold, and unknown formats, have no layout");
}

/* A test window of the family at shape R + P (DeepSeek's 512 + 64 when
 * R is 0). */
static wzt_cache_trace *test_window(wzt_family fam, int R, int P)
{
	return R ? synth_shape(fam, 1, 150, R, P, 4096, 2, "test")
		 : synth(fam, 1, 150, 0, 0, 4096, 2, "test");
}

/* wz-R (and the trellis-coded formats): the emulated paged decode against
 * the reference's transformed decode, on encoded tokens and on random
 * record bytes; R = 0 for DeepSeek's shape, else R + P. */
static void check_wz_shape(wzt_family fam, const wzc_profile *prof, const char *rate, int R0,
			   int P0)
{
	wzt_cache_trace *tst = test_window(fam, R0, P0);
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzc_wz_flat *flat = NULL;
	if (!tst || !prof || wzc_format_parse(rate, &fmt, NULL) ||
	    wzc_codec_new(&fmt, 1, tst->R, tst->P, prof, &c, NULL) ||
	    wzc_wz_flatten(c, 0, &flat, NULL)) {
		ok(0, "%s %s: window, codec and flat plan", wzt_family_name(fam), rate);
		return;
	}
	int R = tst->R, P = tst->P, nv = R + P, n = tst->T, nrand = 64, ntot = n + nrand;
	size_t rb = wzc_codec_record_bytes(c);
	int npages = (ntot + WZK_PAGE_TOKENS - 1) / WZK_PAGE_TOKENS + 1;
	int64_t *slots = shuffled_slots(ntot, npages);
	uint8_t *rec = malloc(rb * (size_t)ntot);
	uint8_t *pool = calloc((size_t)npages * WZK_PAGE_TOKENS, rb);
	float *want = malloc(sizeof(float) * (size_t)ntot * nv), *got = malloc(sizeof(float) * (size_t)ntot * nv);
	wzc_encode_layer(c, 0, n, tst->latent, tst->rope, rec, NULL);
	for (size_t i = rb * (size_t)n; i < rb * (size_t)ntot; i++)
		rec[i] = (uint8_t)next_u64();
	for (int i = 0; i < ntot; i++) {
		memcpy(pool + (size_t)slots[i] * rb, rec + (size_t)i * rb, rb);
		wzc_wz_decode_token_transformed(c, 0, rec + (size_t)i * rb, want + (size_t)i * nv,
						want + (size_t)i * nv + R);
	}
	int same = flat->record_bytes == (int)rb;
	/* a trellis walk split over 16 walkers (the kernel's 64 threads), and
	 * over 1, 3 and 7 */
	static const int threads[] = { 64, 1, 3, 7 };
	int nthreads = flat->nu ? 4 : 1;
	for (int k = 0; k < nthreads; k++)
		for (int order = 0; order < 2 && same; order++) {
			emu_reverse = order;
			emu_wz_threads = threads[k];
			memset(got, 0xff, sizeof(float) * (size_t)ntot * nv);
			wzk_wz_dec_args a = { *flat, ntot, slots, pool, got, NULL };
			same &= emu_wz_decode(&a) == 0 &&
				!memcmp(got, want, sizeof(float) * (size_t)ntot * nv);
		}
	emu_reverse = 0;
	emu_wz_threads = 64;
	ok(same, "%s on synthetic %s (R %d, P %d): emulated paged decode = reference transformed "
		 "decode, encoded and random records%s", rate, wzt_family_name(fam), R, P,
	   flat->nu ? ", the trellis walked by 16, 1, 3 and 7 threads" : "");
	free(slots);
	free(rec);
	free(pool);
	free(want);
	free(got);
	wzc_wz_flat_free(flat);
	wzc_codec_free(c);
	wzt_cache_trace_free(tst);
}

static void check_wz(wzt_family fam, const wzc_profile *prof, const char *rate)
{
	check_wz_shape(fam, prof, rate, 0, 0);
}

/* A one-layer profile of the family at shape R + P from a calibration
 * window. */
static wzc_profile *profile_shape(wzt_family fam, int R, int P)
{
	wzt_cache_trace *cal = synth_shape(fam, 1, 512, R, P, 0, 1, "calibration");
	wzc_profile *prof = NULL;
	if (cal) {
		wzc_window w = window_of(cal);
		const wzc_window *wp = &w;
		if (wzc_prepare(&wp, 1, NULL, &prof, NULL))
			prof = NULL;
	}
	wzt_cache_trace_free(cal);
	return prof;
}

/* A one-layer profile of the family from a calibration window; with
 * undo, one that undoes RoPE (base 10000, the synthetic families'). */
static wzc_profile *profile_of_rope(wzt_family fam, int undo)
{
	wzt_cache_trace *cal = synth(fam, 1, 512, 0, 0, 0, 1, "calibration");
	wzc_profile *prof = NULL;
	if (cal) {
		wzc_window w = window_of(cal);
		const wzc_window *wp = &w;
		double f[WZK_ATT_MAXP / 2];
		wzc_prepare_opts o;
		wzc_prepare_opts_default(&o);
		if (undo) {
			wzc_rope_freqs(cal->P, 10000, 1, 1, 32, 1, f);
			o.rope_freq = f;
			o.rope_pairs = cal->P / 2;
		}
		if (wzc_prepare(&wp, 1, &o, &prof, NULL))
			prof = NULL;
	}
	wzt_cache_trace_free(cal);
	return prof;
}

static wzc_profile *profile_of(wzt_family fam)
{
	return profile_of_rope(fam, 0);
}

/* wz-R with RoPE undone: the emulated paged decode at each token's
 * position gives the reference's transformed latent and its position part
 * decoded at that position (wzc_decode_token_at), bit for bit, on encoded
 * tokens at positions from 70,000 on and on random records at random
 * positions below 2^40; and the positions matter: decoded at 0..n-1
 * instead, the position part differs. */
static void check_wz_rope(wzt_family fam, const char *rate)
{
	wzc_profile *prof = profile_of_rope(fam, 1);
	wzt_cache_trace *tst = synth(fam, 1, 150, 0, 0, 70000, 2, "test");
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzc_wz_flat *flat = NULL;
	if (!tst || !prof || wzc_format_parse(rate, &fmt, NULL) ||
	    wzc_codec_new(&fmt, 1, tst->R, tst->P, prof, &c, NULL) ||
	    wzc_wz_flatten(c, 0, &flat, NULL) || !flat->rope_undone) {
		ok(0, "%s %s, RoPE undone: profile, window, codec and flat plan", wzt_family_name(fam),
		   rate);
		goto out;
	}
	int R = tst->R, P = tst->P, nv = R + P, n = tst->T, nrand = 64, ntot = n + nrand;
	size_t rb = wzc_codec_record_bytes(c);
	int npages = (ntot + WZK_PAGE_TOKENS - 1) / WZK_PAGE_TOKENS + 1;
	int64_t *slots = shuffled_slots(ntot, npages), *pos = malloc(sizeof(int64_t) * ntot);
	uint8_t *rec = malloc(rb * (size_t)ntot);
	uint8_t *pool = calloc((size_t)npages * WZK_PAGE_TOKENS, rb);
	float *want = malloc(sizeof(float) * (size_t)ntot * nv), *got = malloc(sizeof(float) * (size_t)ntot * nv);
	float *lat = malloc(sizeof(float) * R);
	for (int i = 0; i < ntot; i++)
		pos[i] = i < n ? tst->positions[i] : (int64_t)(next_u64() >> 24);
	wzc_encode_layer_at(c, 0, n, tst->latent, tst->rope, pos, rec, NULL);
	for (size_t i = rb * (size_t)n; i < rb * (size_t)ntot; i++)
		rec[i] = (uint8_t)next_u64();
	int decoded = 1;
	for (int i = 0; i < ntot; i++) {
		float yr[WZK_ATT_MAXP];
		memcpy(pool + (size_t)slots[i] * rb, rec + (size_t)i * rb, rb);
		decoded &= !wzc_wz_decode_token_transformed(c, 0, rec + (size_t)i * rb,
							    want + (size_t)i * nv, yr) &&
			   !wzc_decode_token_at(c, 0, rec + (size_t)i * rb, pos[i], lat,
						want + (size_t)i * nv + R);
	}
	int same = decoded && flat->record_bytes == (int)rb && pos[0] == 70000;
	for (int order = 0; order < 2 && same; order++) {
		emu_reverse = order;
		memset(got, 0xff, sizeof(float) * (size_t)ntot * nv);
		wzk_wz_dec_args a = { *flat, ntot, slots, pool, got, pos };
		same &= emu_wz_decode(&a) == 0 &&
			!memcmp(got, want, sizeof(float) * (size_t)ntot * nv);
	}
	emu_reverse = 0;
	ok(same, "%s on synthetic %s, RoPE undone: emulated paged decode at each token's position = "
		 "reference (latent transformed, position part as cached), encoded and random records",
	   rate, wzt_family_name(fam));
	/* the same records decoded as if at positions 0..ntot-1 */
	wzk_wz_dec_args z = { *flat, ntot, slots, pool, got, NULL };
	int latent_same = emu_wz_decode(&z) == 0, rope_differs = 0;
	for (int i = 0; i < ntot; i++) {
		latent_same &= !memcmp(got + (size_t)i * nv, want + (size_t)i * nv, sizeof(float) * R);
		rope_differs += memcmp(got + (size_t)i * nv + R, want + (size_t)i * nv + R,
				       sizeof(float) * P) != 0;
	}
	ok(latent_same && rope_differs == ntot,
	   "%s on synthetic %s, RoPE undone: at the wrong positions the latent is the same and every "
	   "token's position part differs (%d of %d): the comparison can fail",
	   rate, wzt_family_name(fam), rope_differs, ntot);
	free(slots);
	free(pos);
	free(rec);
	free(pool);
	free(want);
	free(got);
	free(lat);
out:
	wzc_wz_flat_free(flat);
	wzc_codec_free(c);
	wzc_profile_free(prof);
	wzt_cache_trace_free(tst);
}

/* The emulation must be able to fail: a record with one flipped bit in
 * its scale decodes to different floats than the reference's of the
 * original record. */
static void test_emulation_fails(void)
{
	const int R = 512, P = 64, n = 8;
	float lat[8 * 512], rope[8 * 64];
	for (int i = 0; i < n * R; i++)
		lat[i] = (float)(i % 13) - 6.0f;
	for (int i = 0; i < n * P; i++)
		rope[i] = (float)(i % 5) - 2.0f;
	wzk_layout l = wzk_layout_of(WZK_FP8_MIX, R, P);
	int64_t slots[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	uint8_t pool[8 * 580];
	float gl[8 * 512], gr[8 * 64], wl[8 * 512], wr[8 * 64];
	wzk_enc_args ea = { l, n, lat, rope, slots, pool };
	emu_encode(&ea);
	wzk_dec_args da = { l, n, slots, pool, wl, wr };
	emu_decode(&da);
	pool[3 * 580 + R] ^= 4;
	da.latent = gl;
	da.rope = gr;
	emu_decode(&da);
	ok(memcmp(gl, wl, sizeof gl) != 0 && !memcmp(gr, wr, sizeof gr),
	   "a flipped scale bit changes that token's latent and nothing else: the comparison can fail");
}

int main(void)
{
	test_baselines();
	static const wzt_family fams[] = { WZT_FAMILY_IID, WZT_FAMILY_MLA_A, WZT_FAMILY_MLA_B };
	static const char *rates[] = { "wz-4.97", "wz-5.44", "wz-6.31" };
	for (int f = 0; f < 3; f++) {
		wzc_profile *prof = profile_of(fams[f]);
		for (int r = 0; r < 3; r++)
			check_wz(fams[f], prof, rates[r]);
		wzc_profile_free(prof);
	}
	/* the trellis-coded formats: 8, 32 and 256 states */
	static const char *trellis[] = { "wzt8-4.97", "wzt8-5.44", "wzt32-5.44", "wzt-5.44" };
	for (int f = 0; f < 3; f++) {
		wzc_profile *prof = profile_of(fams[f]);
		for (int r = 0; r < 4; r++)
			check_wz(fams[f], prof, trellis[r]);
		wzc_profile_free(prof);
	}
	/* other shapes: MiniCPM3's 256 + 32, and a smaller one (the
	 * generator makes no window without a position part) */
	static const int shapes[][2] = { { 256, 32 }, { 128, 16 } };
	for (int k = 0; k < 2; k++) {
		wzc_profile *prof = profile_shape(WZT_FAMILY_MLA_B, shapes[k][0], shapes[k][1]);
		check_wz_shape(WZT_FAMILY_MLA_B, prof, "wz-5.44", shapes[k][0], shapes[k][1]);
		check_wz_shape(WZT_FAMILY_MLA_B, prof, "wzt8-5.44", shapes[k][0], shapes[k][1]);
		wzc_profile_free(prof);
	}
	check_wz_rope(WZT_FAMILY_MLA_A, "wz-4.97");
	check_wz_rope(WZT_FAMILY_MLA_B, "wz-5.44");
	test_emulation_fails();
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}
