/* The shipped 4-bit MLA baselines (codec/formats/baseline_fp4.c): records built by
 * hand from the layouts of docs/baselines-fp4.md for known inputs, the
 * per-element rules of each stack (vLLM's rounded-up scale, SGLang's ties
 * away from zero and power-of-two scales, TensorRT-LLM's nearest scale),
 * bits/value from the written bytes, round trips and refused shapes. */
#include "tests/tap.h"

#include <stdint.h>

#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/formats/fp4conv.h"
#include "codec/formats/fpconv.h"
#include "codec/measure/metrics.h"
#include "codec/measure/paired.h"
#include "codec/formats/records.h"
#include "tests/codec/window.h"

static wzc_codec *codec_for(const char *name, int L, int R, int P)
{
	wzc_format f;
	wzc_codec *c = NULL;
	wz_diag d;
	if (wzc_format_parse(name, &f, &d) || wzc_codec_new(&f, L, R, P, NULL, &c, &d))
		printf("# %s: %s\n", name, d.msg);
	return c;
}

/* One token: latent tiles 0 and 1 and the first position group carry the
 * hand-picked values below, everything else is zero. */
static void known_token(float *lat, float *rope)
{
	memset(lat, 0, 512 * sizeof *lat);
	memset(rope, 0, 64 * sizeof *rope);
	/* tile 0: absmax 6, so an NVFP4 scale of exactly 1 */
	lat[0] = 6;
	lat[1] = -3;
	lat[2] = 1.5f;
	lat[3] = 0.5f;
	lat[4] = 0.25f;  /* an e2m1 midpoint at scale 1 */
	lat[5] = 1.25f;  /* another one */
	/* tile 1: absmax 7, so amax/6 = 1.1667 lies between e4m3 1.125 and 1.25 */
	lat[16] = 7;
	lat[17] = -0.5f;
	rope[0] = 3;
	rope[1] = -448;
	rope[2] = 1000;
	rope[3] = 1.00390625f; /* a bf16 tie: rounds to even 1.0 */
}

static int encode_known(const char *name, uint8_t *rec, size_t want_bytes)
{
	float lat[512], rope[64];
	known_token(lat, rope);
	wzc_codec *c = codec_for(name, 1, 512, 64);
	if (!c)
		return 0;
	int ok_size = wzc_codec_record_bytes(c) == want_bytes;
	memset(rec, 0xAA, 1152);
	wzc_encode_layer(c, 0, 1, lat, rope, rec, NULL);
	wzc_codec_free(c);
	return ok_size;
}

static void test_ds_mla_record(void)
{
	uint8_t rec[1152];
	ok(encode_known("nvfp4-ds-mla", rec, 352), "nvfp4-ds-mla: 352-byte record");
	/* tile 0 at scale 1: 6 -> 7, -3 -> 8|5, 1.5 -> 3, 0.5 -> 1, 0.25 -> 0
	 * (the tie goes to even), 1.25 -> 2 (to even) */
	is_long(rec[0], 0xD7, "nvfp4-ds-mla: byte 0 = codes of 6 (low) and -3 (high)");
	is_long(rec[1], 0x13, "nvfp4-ds-mla: byte 1 = codes of 1.5 and 0.5");
	is_long(rec[2], 0x20, "nvfp4-ds-mla: byte 2 = 0.25 and 1.25 round to even (0, 1.0)");
	/* scale of tile 0 at byte 320 + 8*(0&3) + (0>>2) = 320: e4m3 1.0 */
	is_long(rec[320], 0x38, "nvfp4-ds-mla: tile 0's scale e4m3(1.0) at byte 320");
	/* tile 1: 7/6 rounds to e4m3 1.125, below 7/6, so it is bumped to 1.25
	 * (0x3A) and stored at byte 320 + 8 = 328; 7 * 0.8 = 5.6 -> 6 (code 7),
	 * -0.5 * 0.8 = -0.4 -> -0.5 (code 9) */
	is_long(rec[328], 0x3A, "nvfp4-ds-mla: tile 1's scale rounded up to 1.25, at byte 328");
	is_long(rec[8], 0x97, "nvfp4-ds-mla: tile 1's first byte");
	/* all-zero tile 4: scale floor 2^-9 (code 0x01) at byte 320 + 1 */
	is_long(rec[321], 0x01, "nvfp4-ds-mla: an all-zero tile gets the 2^-9 floor, tile 4 at byte 321");
	is_long(rec[320 + 31], 0x01, "nvfp4-ds-mla: tile 31 at byte 351");
	/* position part e4m3 without a scale at byte 256 */
	is_long(rec[256], 0x44, "nvfp4-ds-mla: position 3.0 as e4m3 0x44");
	is_long(rec[257], 0xFE, "nvfp4-ds-mla: position -448 as e4m3 0xFE");
	is_long(rec[258], 0x7E, "nvfp4-ds-mla: position 1000 saturates to 448");
	is_long(rec[352], 0xAA, "nvfp4-ds-mla: nothing written past the record");

	wzc_codec *c = codec_for("nvfp4-ds-mla", 1, 512, 64);
	float lat[512], rope[64];
	ok(!wzc_decode_token(c, 0, rec, lat, rope) && lat[0] == 6 && lat[1] == -3 && lat[4] == 0 &&
	   lat[5] == 1 && lat[16] == 7.5f && lat[17] == -0.625f && rope[0] == 3 && rope[2] == 448,
	   "nvfp4-ds-mla: the record decodes to code x scale");
	wzc_codec_free(c);
}

static void test_mx16_record(void)
{
	uint8_t rec[1152];
	ok(encode_known("mxfp4-sgl-mla", rec, 324), "mxfp4-sgl-mla: 324-byte record");
	/* tile 0: 6/6 = 1 = 2^0, scale code 127; ties go up: 0.25 -> 0.5
	 * (code 1), 1.25 -> 1.5 (code 3) */
	is_long(rec[0], 0xD7, "mxfp4-sgl-mla: byte 0 = codes of 6 and -3");
	is_long(rec[2], 0x31, "mxfp4-sgl-mla: byte 2 = ties 0.25 and 1.25 round away from zero");
	is_long(rec[288], 127, "mxfp4-sgl-mla: tile 0's E8M0 scale 2^0 at byte 288");
	/* tile 1: 7/6 -> ceil(log2) = 1, code 128, scale 2: 3.5 -> 4 (code 6),
	 * -0.25 -> -0.5 (code 9) */
	is_long(rec[289], 128, "mxfp4-sgl-mla: tile 1's scale 2^1");
	is_long(rec[8], 0x96, "mxfp4-sgl-mla: tile 1's first byte (3.5 -> 4, -0.25 -> -0.5)");
	/* zero tile: max(0, 1e-10) -> ceil(log2 1e-10) = -33, code 94 */
	is_long(rec[290], 94, "mxfp4-sgl-mla: an all-zero tile's scale is 2^-33");
	/* position part: its own data after the latent's (byte 256) and its own
	 * scales after the latent's (byte 288 + 32); group 0 absmax 1000:
	 * 1000/6 -> 2^8 (code 135); 3/256, -448/256 = -1.75 -> -2 (tie up),
	 * 1000/256 = 3.9 -> 4 */
	is_long(rec[320], 135, "mxfp4-sgl-mla: position group 0's scale 2^8 at byte 320");
	is_long(rec[256], 0xC0, "mxfp4-sgl-mla: position bytes at 256 (3 -> 0, -448 -> -2)");
	is_long(rec[257] & 15, 6, "mxfp4-sgl-mla: 1000 -> 4 x 2^8");
	is_long(rec[324], 0xAA, "mxfp4-sgl-mla: nothing written past the record");

	wzc_codec *c = codec_for("mxfp4-sgl-mla", 1, 512, 64);
	float lat[512], rope[64];
	ok(!wzc_decode_token(c, 0, rec, lat, rope) && lat[0] == 6 && lat[4] == 0.5f &&
	   lat[5] == 1.5f && lat[16] == 8 && lat[17] == -1 && rope[1] == -512 && rope[2] == 1024,
	   "mxfp4-sgl-mla: the record decodes to code x 2^e");
	wzc_codec_free(c);
}

static void test_trt_records(void)
{
	uint8_t rec[1152];
	ok(encode_known("nvfp4-trt-cold", rec, 324), "nvfp4-trt-cold: 324-byte record");
	is_long(rec[0], 0xD7, "nvfp4-trt-cold: byte 0 = codes of 6 and -3");
	is_long(rec[2], 0x20, "nvfp4-trt-cold: e2m1 ties to even");
	is_long(rec[288], 0x38, "nvfp4-trt-cold: group 0's scale e4m3(1.0) at byte 288");
	/* 7/6 rounds to nearest, 1.125 (0x39), not up: 7/1.125 saturates to 6 */
	is_long(rec[289], 0x39, "nvfp4-trt-cold: group 1's scale rounds to nearest (1.125)");
	is_long(rec[8] & 15, 7, "nvfp4-trt-cold: 7 saturates to 6 x 1.125");
	is_long(rec[290], 0x00, "nvfp4-trt-cold: an all-zero group's scale is 0");
	/* the position part is the row's values 512..575: group 32, data byte
	 * 256, scale byte 288 + 32; absmax 1000 -> 166.7 -> e4m3 160 (0x72) */
	is_long(rec[320], 0x72, "nvfp4-trt-cold: position group's scale at byte 320");
	is_long(rec[257] & 15, 7, "nvfp4-trt-cold: 1000 -> 6 x 160");
	is_long(rec[324], 0xAA, "nvfp4-trt-cold: nothing written past the record");

	ok(encode_known("nvfp4-trt-cold-bf16rope", rec, 416), "nvfp4-trt-cold-bf16rope: 416 bytes");
	is_long(rec[256], 0x38, "nvfp4-trt-cold-bf16rope: latent scales right after the codes");
	is_long(rec[288] | rec[289] << 8, 0x4040, "nvfp4-trt-cold-bf16rope: position 3.0 as bf16 at 288");
	is_long(rec[294] | rec[295] << 8, 0x3F80, "nvfp4-trt-cold-bf16rope: a bf16 tie rounds to even");
	is_long(rec[416], 0xAA, "nvfp4-trt-cold-bf16rope: nothing written past the record");
}

/* vLLM's scale is the smallest e4m3 value at or above max(amax/6, 2^-9):
 * checked against a search over all codes. */
static void test_scale_rules(void)
{
	int up_ok = 1, near_ok = 1, mx_ok = 1;
	for (int k = 0; k < 4000; k++) {
		float amax = ldexpf(1.0f + (float)(k % 97) / 97.0f, k / 97 - 20);
		float want = fmaxf(amax / 6.0f, 0.001953125f);
		int best = 0x7e;
		for (int c = 0x7e; c >= 0; c--)
			if (wzc_e4m3_to_f32((uint8_t)c) >= want)
				best = c;
		up_ok &= wzc_vllm_fp4_scale(amax) == best;
		float t = wzc_e4m3_to_f32(wzc_trt_fp4_scale(amax));
		float lo = 0, hi = 448;
		for (int c = 0; c <= 0x7e; c++) {
			float v = wzc_e4m3_to_f32((uint8_t)c);
			if (v <= amax / 6.0f)
				lo = v;
			else if (v < hi)
				hi = v;
		}
		near_ok &= amax / 6.0f >= 448 ? t == 448 : (t == lo || t == hi);
		float s = wzc_e8m0_to_f32(wzc_mx16_scale_code(amax));
		float v = fmaxf(amax / 6.0f, 1e-10f);
		mx_ok &= s >= v && s / 2 < v;
	}
	ok(up_ok, "vLLM scale: the smallest e4m3 value >= max(amax/6, 2^-9), 4000 cases");
	ok(near_ok, "TensorRT-LLM scale: a neighbouring e4m3 value of amax/6");
	ok(mx_ok, "SGLang scale: the power of two with v <= 2^e < 2v");
	is_long(wzc_mx16_scale_code(6.0f * 0.25f), 125, "SGLang scale: an exact power of two is kept");
	int perm = 1, seen[32] = { 0 };
	for (int s = 0; s < 32; s++)
		seen[wzc_vllm_fp4_scale_slot(s)]++;
	for (int p = 0; p < 32; p++)
		perm &= seen[p] == 1;
	ok(perm, "vLLM scale slots: a permutation of the 32 bytes");
	static const float ties[7] = { 0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f };
	int tie_ok = 1;
	for (int i = 0; i < 7; i++)
		tie_ok &= wzc_e2m1_from_f32_tie_up(ties[i]) == i + 1 &&
			  wzc_e2m1_from_f32_tie_up(-ties[i]) == (8 | (i + 1)) &&
			  wzc_e2m1_from_f32_tie_up(nextafterf(ties[i], 0)) == i;
	ok(tie_ok, "SGLang e2m1: every midpoint rounds away from zero, just below it down");
}

/* Bits/value from the bytes wzc_measure counted, and round-trip error. */
static void test_measured(const wzc_window *w)
{
	static const struct {
		const char *name;
		double bits, max_nmse;
	} want[] = {
		{ "nvfp4-ds-mla", 4.89, 5e-2 },
		{ "mxfp4-sgl-mla", 4.50, 8e-2 },
		{ "nvfp4-trt-cold", 4.50, 5e-2 },
		{ "nvfp4-trt-cold-bf16rope", 5.78, 5e-2 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		wzc_codec *c = codec_for(want[i].name, w->L, w->R, w->P);
		wzc_errors *e = NULL;
		if (!c || wzc_measure(w, c, &e, NULL)) {
			ok(0, "%s: measure", want[i].name);
			wzc_codec_free(c);
			continue;
		}
		char label[80];
		snprintf(label, sizeof label, "%s: %.2f bits/value from the written bytes",
			 want[i].name, want[i].bits);
		is_double(floor(e->bits_per_value * 100 + 0.5) / 100, want[i].bits, 1e-9, label);
		double n = wzc_metric_ci(e, WZC_M_NMSE, 0, 1).value;
		ok(n > 0 && n <= want[i].max_nmse, "%s: round trip nmse %.3g <= %g", want[i].name, n,
		   want[i].max_nmse);
		wzc_errors_free(e);
		wzc_codec_free(c);
	}
}

/* Shapes a layout cannot hold are refused at codec creation, and any bytes
 * decode without fault. */
static void test_shapes_and_bytes(void)
{
	wzc_format f;
	wzc_codec *c = NULL;
	wz_diag d;
	wzc_format_parse("nvfp4-ds-mla", &f, &d);
	is_long(wzc_codec_new(&f, 1, 256, 64, NULL, &c, &d), WZ_ERR_RANGE,
		"nvfp4-ds-mla: a 256-value latent is refused (vLLM requires 512 + 64)");
	has_str(d.msg, "nvfp4-ds-mla", "the message names the format");
	wzc_format_parse("mxfp4-sgl-mla", &f, &d);
	is_long(wzc_record_bytes(&f, 512, 60), 0, "mxfp4-sgl-mla: a 60-value position part has no record");
	wzc_format_parse("nvfp4-trt-cold", &f, &d);
	is_long(wzc_record_bytes(&f, 504, 56), 315, "nvfp4-trt-cold: one run of 560 values (280 + 35 bytes)");
	static const char *const names[] = { "nvfp4-ds-mla", "mxfp4-sgl-mla", "nvfp4-trt-cold",
					     "nvfp4-trt-cold-bf16rope" };
	for (int k = 0; k < 4; k++) {
		c = codec_for(names[k], 1, 512, 64);
		if (!c)
			continue;
		uint8_t rec[1152];
		float lat[512], rope[64];
		uint32_t x = 99;
		int finite_or_nan = 1;
		for (int t = 0; t < 100; t++) {
			for (size_t i = 0; i < sizeof rec; i++) {
				x = x * 1664525u + 1013904223u;
				rec[i] = (uint8_t)(x >> 24);
			}
			finite_or_nan &= !wzc_decode_token(c, 0, rec, lat, rope);
			for (int i = 0; i < 512; i++)
				/* E8M0's top scales times 6 overflow float, as they
				 * overflow SGLang's bf16: infinity is the true value. */
				finite_or_nan &= isnan(lat[i]) || !isinf(lat[i]) || k == 1;
		}
		ok(finite_or_nan, "%s: 100 random records decode without fault", names[k]);
		wzc_codec_free(c);
	}
}

/* The paired comparison: a format against itself is a ratio of 1 with no
 * token strictly better; bf16 against fp8-mix wins on (nearly) every one. */
static void test_paired(const wzc_window *w)
{
	wzc_format a, b;
	wz_diag d;
	wzc_errors *ea = NULL, *eb = NULL, *ec = NULL;
	wzc_format_parse("bf16", &a, &d);
	wzc_format_parse("nvfp4-ds-mla", &b, &d);
	if (!ok(!wzc_measure_format(w, &a, NULL, &ea, &d) && !wzc_measure_format(w, &b, NULL, &eb, &d) &&
		    !wzc_measure_format(w, &b, NULL, &ec, &d),
		"paired: measure bf16 and nvfp4-ds-mla twice")) {
		printf("#   %s\n", d.msg);
		return;
	}
	wzc_pair_result r;
	wzc_compare_errors(eb, ec, 50, 1, &r);
	is_double(r.nmse_ratio.value, 1.0, 1e-12, "paired: a format against itself has ratio 1");
	is_double(r.tokens_better, 0.0, 0, "paired: and no token strictly better");
	wzc_compare_errors(ea, eb, 50, 1, &r);
	ok(r.nmse_ratio.hi < 0.01 && r.tokens_better > 0.99, "paired: bf16 beats nvfp4-ds-mla (%.3g, %.0f%%)",
	   r.nmse_ratio.value, 100 * r.tokens_better);
	ok(r.has_kl && r.kl_ratio.value < 1 && r.queries_better > 0.5,
	   "paired: and on attention KL (queries better %.0f%%)", 100 * r.queries_better);
	is_double(r.bits_b, 352 * 8.0 / 576, 1e-12, "paired: the reference's bits/value from its bytes");
	wzc_errors_free(ea);
	wzc_errors_free(eb);
	wzc_errors_free(ec);
}

/* TensorRT-LLM's kept tokens ("-keep<F>-<L>"): names, refusals, and on a
 * window at positions 50000.. the bytes counted token by token, kept tokens
 * at bf16's error and every other token at the record's. */
static void test_kept(const wzc_window *w)
{
	wzc_format f, u;
	wz_diag d;
	ok(!wzc_format_parse("NVFP4-TRT-COLD-Keep4-64", &f, &d) && f.keeps && f.keep_first == 4 &&
		   f.keep_last == 64 && f.id == WZC_FMT_NVFP4_TRT_COLD,
	   "kept: -keep4-64 parses on nvfp4-trt-cold, in any case");
	is_str(f.name, "nvfp4-trt-cold-keep4-64", "kept: the canonical name");
	u = wzc_format_unkept(&f);
	is_str(u.name, "nvfp4-trt-cold", "kept: without them, the cold-page record");
	ok(!u.keeps && wzc_record_bytes(&u, 512, 64) == 324, "kept: whose record is 324 bytes");
	ok(!wzc_format_parse("nvfp4-trt-cold-bf16rope-keep0-1000000", &f, &d) &&
		   f.id == WZC_FMT_NVFP4_TRT_COLD_BF16ROPE && f.keep_last == 1000000,
	   "kept: on the bf16rope record too, up to a million");
	is_long(wzc_record_bytes(&f, 512, 64), 0, "kept: no record size of its own");
	wzc_codec *c = NULL;
	is_long(wzc_codec_new(&f, 1, 512, 64, NULL, &c, &d), WZ_ERR_INPUT,
		"kept: a per-token codec is refused");
	has_str(d.msg, "codec measure", "kept: and the message says where it is measured");
	static const char *const bad[] = { "fp8-mix-keep1-1", "wz-5.44-keep1-1", "nvfp4-trt-cold-keep1",
					   "nvfp4-trt-cold-keep1-x", "nvfp4-trt-cold-keep-1-2",
					   "nvfp4-trt-cold-keep1000001-0", "nvfp4-trt-cold-keep1-2-keep3-4",
					   "nvfp4-trt-cold-keep12345678-1", "nvfp9-keep1-1" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ok(wzc_format_parse(bad[i], &f, &d) != WZ_OK, "kept: '%s' is refused (%s)", bad[i], d.msg);
	wzc_format_parse("fp8-mix-keep1-1", &f, &d);
	has_str(d.msg, "TensorRT-LLM", "kept: a format without the option is told whose it is");

	/* Positions 50000.., so F = 50003 keeps the first 3 and L = 10 the last 10. */
	int T = w->T, L = w->L, width = w->R + w->P;
	ok(w->positions && w->positions[0] == 50000, "kept: the window starts at position 50000");
	wzc_format plain, k, none, all;
	wzc_format_parse("nvfp4-trt-cold", &plain, &d);
	wzc_format_parse("nvfp4-trt-cold-keep50003-10", &k, &d);
	wzc_format_parse("nvfp4-trt-cold-keep0-0", &none, &d);
	wzc_format_parse("nvfp4-trt-cold-keep1000000-0", &all, &d);
	wzc_errors *ep = NULL, *ek = NULL, *en = NULL, *ea = NULL;
	if (!ok(!wzc_measure_format(w, &plain, NULL, &ep, &d) && !wzc_measure_format(w, &k, NULL, &ek, &d) &&
		    !wzc_measure_format(w, &none, NULL, &en, &d) &&
		    !wzc_measure_format(w, &all, NULL, &ea, &d),
		"kept: measured in four ways")) {
		printf("#   %s\n", d.msg);
		return;
	}
	size_t want = (size_t)L * (324 * (size_t)(T - 13) + 1152 * 13);
	is_long((long)ek->bytes, (long)want, "kept: 13 tokens a layer at 1,152 bytes, the rest at 324");
	is_double(ek->bits_per_value, 8.0 * (double)want / ((double)L * T * width), 1e-12,
		  "kept: bits/value from those bytes");
	int same = 1, bf16 = 1, n_bf16 = 0;
	for (int t = 0; t < T; t++) {
		int is_kept = t < 3 || t >= T - 10;
		for (int p = 0; p < 2; p++) {
			if (!is_kept) {
				same &= ek->err[p][t] == ep->err[p][t];
				continue;
			}
			const float *x = p ? w->rope : w->latent;
			int n = p ? w->P : w->R;
			double se = 0;
			for (int l = 0; l < L; l++)
				for (int i = 0; i < n; i++) {
					float v = x[((size_t)l * T + t) * n + i];
					double e = (double)v - wzc_bf16_to_f32(wzc_bf16_from_f32(v));
					se += e * e;
				}
			bf16 &= fabs(ek->err[p][t] - se) <= 1e-12 * (se + 1e-30);
			n_bf16 += se > 0;
		}
	}
	ok(same, "kept: every other token's error is the record's");
	ok(bf16 && n_bf16 > 0, "kept: a kept token's error is bf16's (%d nonzero)", n_bf16);
	ok(en->bytes == ep->bytes && en->err[0][5] == ep->err[0][5], "kept: -keep0-0 is the record");
	is_double(ea->bits_per_value, 16.0, 0, "kept: every token kept is 16 bits/value");
	ok(ek->kl && ep->kl, "kept: attention KL measured on both");
	wzc_errors_free(ep);
	wzc_errors_free(ek);
	wzc_errors_free(en);
	wzc_errors_free(ea);
}

int main(void)
{
	test_ds_mla_record();
	test_mx16_record();
	test_trt_records();
	test_scale_rules();
	test_shapes_and_bytes();
	wzt_cache_trace *test = synth(WZT_FAMILY_MLA_A, 2, 256, 4, 4, 50000, 2, "test");
	if (!test)
		return ok(0, "synthetic window"), tap_done();
	wzc_window tw = window_of(test);
	test_measured(&tw);
	test_paired(&tw);
	test_kept(&tw);
	wzt_cache_trace_free(test);
	return tap_done();
}
