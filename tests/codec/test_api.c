/* libwzplan's public API (codec/wzplan.h) as a program outside the project
 * sees it: only the installed header, through the library. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/wzplan.h"
#include "tests/tap.h"

static float frand(unsigned *s)
{
	*s = *s * 1664525u + 1013904223u;
	return ((float)(*s >> 8) / 16777216.0f - 0.5f) * 4.0f;
}

int main(void)
{
	enum { L = 2, T = 128, R = 64, P = 16 };
	wz_diag d;
	char name[32];
	ok(wz_api_version() == WZ_API_VERSION, "the library's API version is the header's");
	ok(strncmp(wz_version(), "wzplan ", 7) == 0, "wz_version names the package");
	int found = 0;
	for (int i = 0; i < wz_format_count(); i++)
		found += !strcmp(wz_format_name(i), "fp8-mix") + !strcmp(wz_format_name(i), "wz");
	ok(found == 2 && wz_format_name(wz_format_count()) == NULL, "the registry lists fp8-mix and wz");
	ok(wz_format_canonical("WZ-5.440", name, sizeof name, &d) == WZ_OK && !strcmp(name, "wz-5.440"),
	   "canonical names (%s)", name);
	ok(wz_format_canonical("fp9", name, sizeof name, &d) == WZ_ERR_NOT_FOUND && strstr(d.msg, "fp9"),
	   "an unknown format is refused by name");
	ok(wz_format_canonical("fp8-mix", name, 4, &d) == WZ_ERR_RANGE, "a short buffer is refused");
	ok(wz_format_record_bytes("fp8-mix", 512, 64) == 580, "fp8-mix records are 580 bytes");

	float *lat = malloc(sizeof(float) * L * T * R), *rope = malloc(sizeof(float) * L * T * P);
	float *lo = malloc(sizeof(float) * T * R), *ro = malloc(sizeof(float) * T * P);
	unsigned s = 1;
	for (int i = 0; i < L * T * R; i++)
		lat[i] = frand(&s);
	for (int i = 0; i < L * T * P; i++)
		rope[i] = frand(&s);
	wz_codec *c = NULL;
	ok(wz_codec_new("wz-5.44", L, R, P, NULL, &c, &d) == WZ_ERR_MISSING && c == NULL,
	   "wz without a profile is refused");
	ok(wz_format_canonical("NVFP4-TRT-COLD-KEEP4-64", name, sizeof name, &d) == WZ_OK &&
		   !strcmp(name, "nvfp4-trt-cold-keep4-64"),
	   "kept tokens: the canonical name (%s)", name);
	ok(wz_format_record_bytes("nvfp4-trt-cold-keep4-64", 512, 64) == 0 &&
		   wz_format_record_bytes("nvfp4-trt-cold", 512, 64) == 324,
	   "kept tokens: no record size per token; without them, 324 bytes");
	ok(wz_codec_new("nvfp4-trt-cold-keep4-64", L, R, P, NULL, &c, &d) == WZ_ERR_INPUT && c == NULL &&
		   strstr(d.msg, "codec measure"),
	   "kept tokens: no per-token codec, and the message says where they are measured");
	wz_window w = { .L = L, .T = T, .R = R, .P = P, .latent = lat, .rope = rope, .model = "api-test",
			.split = "calibration", .name = "w" };
	wz_profile *p = NULL;
	wz_window wt = w;
	wt.split = "test";
	ok(wz_profile_prepare(&wt, 1, -1, &p, &d) == WZ_ERR_REFUSED && p == NULL,
	   "prepare refuses a test window");
	ok(wz_profile_prepare(&w, 1, -1, &p, &d) == WZ_OK, "prepare from a calibration window");
	int pl = 0, pr = 0, pp = 0;
	wz_profile_shape(p, &pl, &pr, &pp);
	ok(pl == L && pr == R && pp == P && !strcmp(wz_profile_model(p), "api-test"), "profile shape and model");
	ok(wz_codec_new("wz-6.31", L, R, P, p, &c, &d) == WZ_OK, "a wz codec");
	ok(wz_roundtrip_layer(c, 1, T, lat + T * R, rope + T * P, lo, ro, &d) == WZ_OK, "round trip");
	double num = 0, den = 0;
	for (int i = 0; i < T * R; i++) {
		num += (lo[i] - lat[T * R + i]) * (lo[i] - lat[T * R + i]);
		den += lat[T * R + i] * lat[T * R + i];
	}
	ok(num / den > 0 && num / den < 0.05, "wz-6.31 nmse %.3g", num / den);
	ok(wz_roundtrip_layer(c, L, T, lat, rope, lo, ro, &d) == WZ_ERR_RANGE, "a layer past the last is refused");
	uint64_t bytes = 0;
	ok(wz_window_bytes(c, &w, &bytes, &d) == WZ_OK && bytes == (uint64_t)L * T * wz_codec_record_bytes(c),
	   "fixed-rate window bytes are L x T records");
	wz_codec_free(c);
	ok(wz_codec_new("wzx-5.43", L, R, P, p, &c, &d) == WZ_OK, "a wzx codec");
	ok(wz_window_bytes(c, &w, &bytes, &d) == WZ_OK && bytes > 0 &&
		   bytes < (uint64_t)L * T * wz_codec_record_bytes(c) + 4096,
	   "wzx window bytes from the written container (%llu)", (unsigned long long)bytes);
	wz_window bad = w;
	bad.R = 32;
	ok(wz_window_bytes(c, &bad, &bytes, &d) == WZ_ERR_INPUT, "a window of another shape is refused");
	wz_codec_free(c);
	/* The codec holds its profile: freeing the profile first (as a
	 * binding's garbage collector may) leaves the codec working, with the
	 * same output as before. */
	float *lo2 = malloc(sizeof(float) * T * R), *ro2 = malloc(sizeof(float) * T * P);
	wz_codec *c2 = NULL;
	ok(wz_codec_new("wz-6.31", L, R, P, p, &c, &d) == WZ_OK &&
		   wz_codec_new("wzx-5.43", L, R, P, p, &c2, &d) == WZ_OK &&
		   wz_roundtrip_layer(c, 1, T, lat + T * R, rope + T * P, lo, ro, &d) == WZ_OK,
	   "two codecs of one profile");
	wz_profile_free(p);
	ok(wz_roundtrip_layer(c, 1, T, lat + T * R, rope + T * P, lo2, ro2, &d) == WZ_OK &&
		   !memcmp(lo, lo2, sizeof(float) * T * R) && !memcmp(ro, ro2, sizeof(float) * T * P) &&
		   wz_window_bytes(c2, &w, &bytes, &d) == WZ_OK,
	   "the codecs work on after wz_profile_free, with the same output");
	wz_codec_free(c);
	wz_codec_free(c2);
	free(lo2);
	free(ro2);
	wz_profile_free(NULL);
	wz_codec_free(NULL);
	free(lat);
	free(rope);
	free(lo);
	free(ro);
	return tap_done();
}
