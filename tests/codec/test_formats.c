/* Codec unit tests: the OCP e4m3/e2m1 conversions on every code, fp16 and
 * bf16, every baseline's layout byte for byte and bits/value from written
 * bytes, wz round trips and rates, determinism, profile file checks. */
#include "tests/tap.h"

#include <stdint.h>

#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/formats/fpconv.h"
#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"
#include "codec/formats/records.h"
#include "codec/wz/wz_flat.h"
#include "tests/codec/window.h"

/* Nearest e4m3 value by brute force, ties to the even code, saturating. */
static uint8_t e4m3_reference(float x)
{
	float a = fabsf(x);
	int best = 0;
	float bestd = INFINITY;
	for (int c = 0; c <= 0x7e; c++) {
		float d = fabsf(wzc_e4m3_to_f32((uint8_t)c) - a);
		if (d < bestd || (d == bestd && !(c & 1))) {
			bestd = d;
			best = c;
		}
	}
	return (uint8_t)((signbit(x) ? 0x80 : 0) | best);
}

static void test_e4m3(void)
{
	int roundtrip = 1, refmatch = 1, nan_ok = 1;
	for (int c = 0; c < 256; c++) {
		float v = wzc_e4m3_to_f32((uint8_t)c);
		if ((c & 0x7f) == 0x7f) {
			nan_ok &= isnan(v) && wzc_e4m3_from_f32(v) == (uint8_t)c;
			continue;
		}
		if (wzc_e4m3_from_f32(v) != c) {
			roundtrip = 0;
			printf("#   code 0x%02x -> %g -> 0x%02x\n", c, v, wzc_e4m3_from_f32(v));
		}
	}
	ok(roundtrip, "e4m3: all 254 finite codes decode and re-encode to themselves");
	ok(nan_ok, "e4m3: both NaN codes decode to NaN and keep their sign");
	is_double(wzc_e4m3_to_f32(0x7e), 448.0, 0, "e4m3: largest is 448");
	is_double(wzc_e4m3_to_f32(0x01), 0.001953125, 0, "e4m3: smallest subnormal is 2^-9");
	is_double(wzc_e4m3_to_f32(0x08), 0.015625, 0, "e4m3: smallest normal is 2^-6");
	/* Midpoints between neighbours and points around them, all codes. */
	for (int c = 0; c < 0x7e; c++) {
		float lo = wzc_e4m3_to_f32((uint8_t)c), hi = wzc_e4m3_to_f32((uint8_t)(c + 1));
		float pts[3] = { 0.5f * (lo + hi), nextafterf(0.5f * (lo + hi), 0),
				 nextafterf(0.5f * (lo + hi), INFINITY) };
		for (int i = 0; i < 3; i++)
			for (int s = 0; s < 2; s++) {
				float x = s ? -pts[i] : pts[i];
				if (wzc_e4m3_from_f32(x) != e4m3_reference(x)) {
					refmatch = 0;
					printf("#   %.9g -> 0x%02x, want 0x%02x\n", x, wzc_e4m3_from_f32(x),
					       e4m3_reference(x));
				}
			}
	}
	ok(refmatch, "e4m3: ties to even and nearest elsewhere, between every pair of codes");
	is_long(wzc_e4m3_from_f32(464.0f), 0x7e, "e4m3: 464 saturates to 448");
	is_long(wzc_e4m3_from_f32(1e9f), 0x7e, "e4m3: large values saturate");
	is_long(wzc_e4m3_from_f32(-INFINITY), 0xfe, "e4m3: -inf saturates to -448");
	is_long(wzc_e4m3_from_f32(0.0009765625f), 0x00, "e4m3: 2^-10 (a tie) rounds to zero");
	is_long(wzc_e4m3_from_f32(0.0029296875f), 0x02, "e4m3: 1.5 * 2^-9 (a tie) rounds to even 2");
}

static void test_e2m1(void)
{
	static const float values[8] = { 0, 0.5f, 1, 1.5f, 2, 3, 4, 6 };
	int all = 1;
	for (int c = 0; c < 16; c++) {
		float v = wzc_e2m1_to_f32((uint8_t)c);
		float want = (c & 8) ? -values[c & 7] : values[c & 7];
		all &= v == want && wzc_e2m1_from_f32(v) == c;
	}
	ok(all, "e2m1: all 16 codes decode to the OCP values and re-encode to themselves");
	static const float ties[7] = { 0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f };
	static const uint8_t want[7] = { 0, 2, 2, 4, 4, 6, 6 };
	int tie_ok = 1;
	for (int i = 0; i < 7; i++)
		tie_ok &= wzc_e2m1_from_f32(ties[i]) == want[i] &&
			  wzc_e2m1_from_f32(-ties[i]) == (want[i] | 8);
	ok(tie_ok, "e2m1: every midpoint rounds to the even code");
	is_long(wzc_e2m1_from_f32(100.0f), 7, "e2m1: saturates at 6");
}

static void test_half(void)
{
	int ok16 = 1, okbf = 1;
	for (uint32_t h = 0; h < 0x7c00; h++) {
		float v = wzc_f16_to_f32((uint16_t)h);
		ok16 &= wzc_f16_from_f32(v) == h && wzc_f16_from_f32(-v) == (h | 0x8000);
	}
	ok(ok16, "fp16: every finite code round-trips");
	is_long(wzc_f16_from_f32(65520.0f), 0x7c00, "fp16: 65520 overflows to inf");
	is_long(wzc_f16_from_f32(1.0f + 1.0f / 2048), 0x3c00, "fp16: a tie rounds to even");
	for (uint32_t h = 0; h < 0x7f80; h += 7)
		okbf &= wzc_bf16_from_f32(wzc_bf16_to_f32((uint16_t)h)) == h;
	ok(okbf, "bf16: codes round-trip");
	is_long(wzc_bf16_from_f32(1.00390625f), 0x3f80, "bf16: a tie rounds to even");
}

static wzc_codec *codec_for(const char *name, int L, int R, int P, const wzc_profile *prof)
{
	wzc_format f;
	wzc_codec *c = NULL;
	wz_diag d;
	if (wzc_format_parse(name, &f, &d) || wzc_codec_new(&f, L, R, P, prof, &c, &d))
		printf("# %s: %s\n", name, d.msg);
	return c;
}

/* Bits/value from the bytes wzc_measure counted, and round-trip error. */
static void test_baselines(const wzc_window *w)
{
	static const struct {
		const char *name;
		double bits, max_nmse;
	} want[] = {
		{ "bf16", 16.00, 1e-5 },	  { "fp8-mix", 8.06, 2e-3 },  { "fp8-bf16rope", 8.92, 2e-3 },
		{ "fp8-ds-mla", 9.11, 2e-3 }, { "fp8-flat", 8.00, 1.0 },  { "int4-g64", 4.92, 5e-2 },
		{ "nvfp4", 4.92, 5e-2 },
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		wzc_codec *c = codec_for(want[i].name, w->L, w->R, w->P, NULL);
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
		ok(n <= want[i].max_nmse, "%s: round trip nmse %.3g <= %g", want[i].name, n,
		   want[i].max_nmse);
		wzc_errors_free(e);
		wzc_codec_free(c);
	}
}

/* The generic byte layout agrees with the shared record structs. */
static void test_layouts(const wzc_window *w)
{
	/* token 5, in bf16 as every format's codec path rounds it
	 * (wzc_encode_layer_at) */
	float lat[512], rope[64];
	for (int i = 0; i < 512; i++)
		lat[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(w->latent[(size_t)5 * w->R + i]));
	for (int i = 0; i < 64; i++)
		rope[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(w->rope[(size_t)5 * w->P + i]));
	uint8_t rec[1152];
	wzc_codec *c = codec_for("fp8-mix", 1, 512, 64, NULL);
	wzc_encode_layer(c, 0, 1, lat, rope, rec, NULL);
	wzc_rec_fp8_mix m;
	memcpy(&m, rec, sizeof m);
	float amax = 0, rmax = 0;
	for (int i = 0; i < 512; i++)
		amax = fmaxf(amax, fabsf(lat[i]));
	for (int i = 0; i < 64; i++)
		rmax = fmaxf(rmax, fabsf(rope[i]));
	is_long(m.latent_scale, wzc_f16_from_f32(amax / 448), "fp8-mix: latent scale = fp16(absmax/448)");
	is_long(m.rope_scale, wzc_f16_from_f32(rmax / 127), "fp8-mix: rope scale = fp16(absmax/127)");
	int codes = 1;
	float s = wzc_f16_to_f32(m.latent_scale);
	for (int i = 0; i < 512; i++)
		codes &= m.latent[i] == wzc_e4m3_from_f32(lat[i] * (1.0f / s));
	ok(codes, "fp8-mix: latent codes are e4m3(x / scale) in order");
	wzc_codec_free(c);

	c = codec_for("int4-g64", 1, 512, 64, NULL);
	wzc_encode_layer(c, 0, 1, lat, rope, rec, NULL);
	wzc_rec_int4_g64 q;
	memcpy(&q, rec, sizeof q);
	float lo = lat[64], hi = lat[64];
	for (int i = 64; i < 128; i++) {
		lo = fminf(lo, lat[i]);
		hi = fmaxf(hi, lat[i]);
	}
	is_long(q.group[1].zero, wzc_f16_from_f32(lo), "int4-g64: group zero = fp16(min)");
	is_long(q.group[1].scale, wzc_f16_from_f32((hi - lo) / 15), "int4-g64: group scale = fp16((max-min)/15)");
	wzc_codec_free(c);

	c = codec_for("fp8-ds-mla", 1, 512, 64, NULL);
	wzc_encode_layer(c, 0, 1, lat, rope, rec, NULL);
	wzc_rec_fp8_ds_mla ds;
	memcpy(&ds, rec, sizeof ds);
	amax = 0;
	for (int i = 128; i < 256; i++)
		amax = fmaxf(amax, fabsf(lat[i]));
	is_double(ds.scale[1], amax / 448, 0, "fp8-ds-mla: fp32 scale per 128 = absmax/448");
	is_long(ds.rope[3], wzc_bf16_from_f32(rope[3]), "fp8-ds-mla: position part bf16");
	wzc_codec_free(c);

	c = codec_for("nvfp4", 1, 512, 64, NULL);
	wzc_encode_layer(c, 0, 1, lat, rope, rec, NULL);
	wzc_rec_nvfp4 nv;
	memcpy(&nv, rec, sizeof nv);
	amax = 0;
	for (int i = 32; i < 48; i++)
		amax = fmaxf(amax, fabsf(lat[i]));
	is_long(nv.scale[2], wzc_e4m3_from_f32(amax / 6), "nvfp4: e4m3 scale per 16 = absmax/6");
	wzc_codec_free(c);
}

static void test_wz(const wzc_window *cal, const wzc_window *test)
{
	const wzc_window *cp[1] = { cal };
	wzc_profile *prof = NULL, *prof2 = NULL;
	wz_diag d;
	ok(wzc_prepare(cp, 1, NULL, &prof, &d) == WZ_OK, "wz: prepare");
	ok(wzc_prepare(cp, 1, NULL, &prof2, &d) == WZ_OK, "wz: prepare again");
	if (!prof || !prof2)
		return;
	uint8_t *b1, *b2;
	size_t n1, n2;
	wzc_profile_serialize(prof, &b1, &n1, NULL);
	wzc_profile_serialize(prof2, &b2, &n2, NULL);
	ok(n1 == n2 && !memcmp(b1, b2, n1), "wz: same windows, same profile bytes");
	wzc_profile *back = NULL;
	if (!ok(wzc_profile_parse(b1, n1, "mem", &back, &d) == WZ_OK, "profile: parses its own bytes"))
		printf("#   %s\n", d.msg);
	uint8_t *b3;
	size_t n3;
	if (back) {
		wzc_profile_serialize(back, &b3, &n3, NULL);
		ok(n3 == n1 && !memcmp(b1, b3, n1), "profile: parse + serialize is the identity");
		free(b3);
	}
	wzc_profile_free(back);
	b1[n1 / 2] ^= 0x10;
	is_long(wzc_profile_parse(b1, n1, "mem", &back, &d), WZ_ERR_CORRUPT, "profile: a flipped bit is a checksum error");
	has_str(d.msg, "checksum", "profile: the message says checksum");
	b1[n1 / 2] ^= 0x10;
	ok(wzc_profile_parse(b1, n1 - 9, "mem", &back, &d) != WZ_OK, "profile: truncated is refused");
	b1[0] = 'X';
	is_long(wzc_profile_parse(b1, n1, "mem", &back, &d), WZ_ERR_INPUT, "profile: bad magic");
	b1[0] = 0x89;
	b1[8] = WZC_PROFILE_VERSION + 1;
	is_long(wzc_profile_parse(b1, n1, "mem", &back, &d), WZ_ERR_VERSION, "profile: newer version");
	b1[8] = 0;
	is_long(wzc_profile_parse(b1, n1, "mem", &back, &d), WZ_ERR_VERSION, "profile: version 0");
	free(b1);
	free(b2);

	/* test windows refused by prepare */
	const wzc_window *tp[1] = { test };
	is_long(wzc_prepare(tp, 1, NULL, &back, &d), WZ_ERR_REFUSED, "prepare refuses a test window");

	static const double rates[] = { 1.5, 3.0, 4.97, 5.44, 6.31, 8.0, 12.0 };
	double prev = INFINITY;
	for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
		char name[32];
		snprintf(name, sizeof name, "wz-%g", rates[i]);
		wzc_codec *c = codec_for(name, test->L, test->R, test->P, prof);
		wzc_errors *e = NULL;
		if (!c || wzc_measure(test, c, &e, NULL)) {
			ok(0, "%s: measure", name);
			wzc_codec_free(c);
			continue;
		}
		double n = wzc_metric_ci(e, WZC_M_NMSE, 0, 1).value;
		ok(e->bits_per_value <= rates[i] && e->bits_per_value > rates[i] - 8.0 / 576,
		   "%s: %.4f bits/value from the written bytes, <= %g", name, e->bits_per_value,
		   rates[i]);
		ok(n < prev, "%s: nmse %.3g falls with the rate", name, n);
		prev = n;
		wzc_errors_free(e);
		wzc_codec_free(c);
	}

	/* Random access, determinism and the transformed domain at 5.44. */
	wzc_codec *c = codec_for("wz-5.44", test->L, test->R, test->P, prof);
	int T = test->T, R = test->R, P = test->P;
	size_t rb = wzc_codec_record_bytes(c);
	uint8_t *r1 = malloc(rb * T), *r2 = malloc(rb * T);
	float *lat = malloc(sizeof(float) * T * R), *rope = malloc(sizeof(float) * T * P);
	float one[512 + 64], yl[512], yr[64];
	wzc_encode_layer(c, 1, T, test->latent + (size_t)T * R, test->rope + (size_t)T * P, r1, NULL);
	wzc_encode_layer(c, 1, T, test->latent + (size_t)T * R, test->rope + (size_t)T * P, r2, NULL);
	ok(!memcmp(r1, r2, rb * T), "wz: encoding is deterministic");
	if (wzc_decode_layer(c, 1, T, r1, lat, rope))
		ok(0, "layer %d decoded (out of memory?)", 1);
	wz_err alone = wzc_decode_token(c, 1, r1 + 17 * rb, one, one + R);
	ok(!alone && !memcmp(one, lat + 17 * R, sizeof(float) * R) &&
		   !memcmp(one + R, rope + 17 * P, sizeof(float) * P),
	   "wz: a token decodes alone to the same values");
	wzc_wz_decode_token_transformed(c, 1, r1 + 17 * rb, yl, yr);
	const wzc_part_profile *pl = &prof->latent[1];
	double maxd = 0, scale = 0;
	for (int i = 0; i < R; i++) {
		double x = pl->mean[i];
		for (int k = 0; k < R; k++)
			x += (double)yl[k] * pl->basis[(size_t)k * R + i];
		maxd = fmax(maxd, fabs(x - lat[17 * R + i]));
		scale = fmax(scale, fabs(lat[17 * R + i]));
	}
	ok(maxd <= 1e-4 * scale, "wz: mean + basis' y of the transformed decode is the decode (%.2g)", maxd / scale);
	/* The flat plan and the shared per-group steps (what the CUDA kernel
	 * runs) give exactly the reference's transformed decode. */
	wzc_wz_flat *flat = NULL;
	int same = wzc_wz_flatten(c, 1, &flat, NULL) == WZ_OK;
	for (int t = 0; same && t < T; t++) {
		const uint8_t *rec = r1 + (size_t)t * rb;
		float y[576], s[2] = { wzc_wz_scale(flat, rec, 0), wzc_wz_scale(flat, rec, 1) };
		uint32_t flags[2] = { 0, 0 };
		for (int i = 0; i < flat->nones; i++)
			y[flat->ones[i]] = flat->ones_lev[i] * flat->ones_sigma[i] * s[flat->ones[i] >= R];
		for (int g = 0; g < flat->ngroups; g++)
			wzc_wz_decode_group(flat, rec, g, s, y, flags);
		wzc_wz_decode_token_transformed(c, 1, rec, yl, yr);
		for (int k = 0; k < R + P; k++)
			same &= wzc_wz_transformed(flat, y, flags, k) == (k < R ? yl[k] : yr[k - R]);
	}
	ok(same, "wz: the flat plan's shared decode steps match the reference bit for bit");
	wzc_wz_flat_free(flat);
	/* any bytes decode without fault */
	for (size_t i = 0; i < rb; i++)
		r1[i] = (uint8_t)(i * 37 + 11);
	ok(!wzc_decode_token(c, 1, r1, one, one + R), "wz: arbitrary record bytes decode");
	free(r1);
	free(r2);
	free(lat);
	free(rope);
	wzc_codec_free(c);
	wzc_profile_free(prof);
	wzc_profile_free(prof2);
}

/* Iso-quality interpolation on hand-made errors: log-linear in the rate. */
static wzc_errors *fake(int T, double nmse)
{
	wzc_errors *e = calloc(1, sizeof *e);
	e->T = T;
	for (int p = 0; p < 2; p++) {
		e->err[p] = calloc((size_t)T, sizeof(double));
		e->energy[p] = calloc((size_t)T, sizeof(double));
	}
	for (int t = 0; t < T; t++) {
		e->energy[0][t] = 1;
		e->err[0][t] = nmse;
	}
	return e;
}

static void test_iso(void)
{
	double rates[3] = { 4, 5, 6 };
	wzc_errors *sweep[3] = { fake(8, 4e-3), fake(8, 1e-3), fake(8, 2.5e-4) };
	wzc_errors *ref = fake(8, 5e-4), *easy = fake(8, 1e-2), *hard = fake(8, 1e-5);
	int censored;
	wzc_ci ci = wzc_iso_bits(rates, sweep, 3, ref, WZC_M_NMSE, 50, 1, &censored);
	is_double(ci.value, 5.5, 1e-9, "iso bits: log-linear interpolation between sweep rates");
	ok(ci.lo <= 5.5 && ci.hi >= 5.5 && !censored, "iso bits: the interval holds the value");
	ci = wzc_iso_bits(rates, sweep, 3, easy, WZC_M_NMSE, 10, 1, &censored);
	ok(ci.value == 4 && censored, "iso bits: beaten at the lowest rate is flagged censored");
	ci = wzc_iso_bits(rates, sweep, 3, hard, WZC_M_NMSE, 10, 1, &censored);
	ok(isnan(ci.value), "iso bits: out of the sweep's reach is NaN");
	wzc_ci r = wzc_ratio_ci(sweep[1], ref, WZC_M_NMSE, 20, 1);
	is_double(r.value, 2.0, 1e-12, "ratio to a reference");
	is_double(wzc_share_better(sweep[2], ref, WZC_M_NMSE), 1.0, 0, "share of tokens better");
	for (int i = 0; i < 3; i++)
		wzc_errors_free(sweep[i]);
	wzc_errors_free(ref);
	wzc_errors_free(easy);
	wzc_errors_free(hard);
}

/* The decoders' lookup tables give the conversions' very floats: every
 * code bit for bit, and whole fp8-mix and nvfp4 records of random bytes
 * decoded as the conversion decodes them. */
static void test_value_tables(void)
{
	const float *e4 = wzc_e4m3_values(), *e2 = wzc_e2m1_values();
	int same = 1;
	for (int c = 0; c < 256; c++) {
		float v = wzc_e4m3_to_f32((uint8_t)c);
		same &= !memcmp(&v, &e4[c], sizeof v);
	}
	for (int c = 0; c < 16; c++) {
		float v = wzc_e2m1_to_f32((uint8_t)c);
		same &= !memcmp(&v, &e2[c], sizeof v);
	}
	ok(same, "value tables: all 256 e4m3 and 16 e2m1 codes equal the conversions bit for bit");
	static const char *const names[] = { "fp8-mix", "nvfp4" };
	for (int f = 0; f < 2; f++) {
		wzc_format fmt;
		wzc_codec *c;
		wz_diag d;
		if (!ok(!wzc_format_parse(names[f], &fmt, &d) &&
			!wzc_codec_new(&fmt, 1, 512, 64, NULL, &c, &d), "%s codec", names[f]))
			continue;
		size_t B = wzc_codec_record_bytes(c);
		uint8_t rec[1200];
		float lat[512], rope[64], want[512];
		uint32_t x = 12345;
		int match = 1;
		for (int t = 0; t < 200; t++) {
			for (size_t i = 0; i < B; i++) {
				x = x * 1664525u + 1013904223u;
				rec[i] = (uint8_t)(x >> 24);
			}
			match &= !wzc_decode_token(c, 0, rec, lat, rope);
			if (f == 0) {
				float s = wzc_f16_to_f32((uint16_t)(rec[512] | rec[513] << 8));
				for (int i = 0; i < 512; i++)
					want[i] = wzc_e4m3_to_f32(rec[i]) * s;
			} else {
				for (int g = 0; g < 32; g++) {
					float s = wzc_e4m3_to_f32(rec[256 + g]);
					for (int i = 0; i < 16; i += 2) {
						uint8_t b = rec[8 * g + i / 2];
						want[16 * g + i] = wzc_e2m1_to_f32(b & 15) * s;
						want[16 * g + i + 1] = wzc_e2m1_to_f32(b >> 4) * s;
					}
				}
			}
			match &= !memcmp(lat, want, sizeof want);
		}
		ok(match, "%s: 200 random records decode through the tables as through the conversions",
		   names[f]);
		wzc_codec_free(c);
	}
}

int main(void)
{
	test_iso();
	test_value_tables();
	test_e4m3();
	test_e2m1();
	test_half();
	wzt_cache_trace *cal = synth(WZT_FAMILY_MLA_A, 2, 512, 4, 4, 0, 1, "calibration");
	wzt_cache_trace *test = synth(WZT_FAMILY_MLA_A, 2, 256, 4, 4, 50000, 2, "test");
	if (!cal || !test)
		return ok(0, "synthetic windows"), tap_done();
	wzc_window cw = window_of(cal), tw = window_of(test);
	test_baselines(&tw);
	test_layouts(&tw);
	test_wz(&cw, &tw);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	return tap_done();
}
