/* wze-<bits> (docs/wze-format.md): the step codes' gains exact; error
 * falling with the rate; at equal bytes, attention KL and squared error
 * below wz's on a broad-spectrum family; damaged records decoding to
 * finite values without reading past the record; a profile that predicts
 * its position part (version 7) lowering the error where the latent
 * predicts it; and the records of fixed values pinned by their hash, so
 * that a change of the format shows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "codec/codec.h"
#include "codec/formats/format.h"
#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"
#include "codec/wze/wze.h"
#include "tests/codec/window.h"
#include "tests/tap.h"

enum { L = 2, R = 128, P = 32, Q = 32, H = 8 };

static wzt_cache_trace *make(wzt_family fam, const char *split, uint64_t ws, int T)
{
	wzt_synth_params sp = synth_params(fam, L, T, 0, ws, split);
	sp.R = R;
	sp.P = P;
	sp.Q = Q;
	sp.H = H;
	return synth_with(&sp);
}

static wzc_profile *prepared(const wzt_cache_trace *cal)
{
	wzc_window w = window_of(cal);
	const wzc_window *ws[1] = { &w };
	wzc_prepare_opts o;
	wzc_prepare_opts_default(&o);
	o.threads = 1;
	wzc_profile *p = NULL;
	wz_diag d;
	if (wzc_prepare(ws, 1, &o, &p, &d))
		printf("# prepare: %s\n", d.msg);
	return p;
}

static wzc_codec *codec_of(const char *name, const wzc_profile *p, wz_diag *d)
{
	wzc_format fmt;
	wzc_codec *c = NULL;
	if (wzc_format_parse(name, &fmt, d) || wzc_codec_new(&fmt, p->L, p->R, p->P, p, &c, d))
		return NULL;
	return c;
}

/* nmse and mean attention KL of a format on a window. */
static int measured(const char *name, const wzc_profile *p, const wzt_cache_trace *t,
		    double *nmse, double *kl)
{
	wz_diag d;
	wzc_codec *c = codec_of(name, p, &d);
	wzc_window w = window_of(t);
	wzc_errors *e = NULL;
	if (!c || wzc_measure(&w, c, &e, &d)) {
		printf("# %s: %s\n", name, d.msg);
		wzc_codec_free(c);
		return -1;
	}
	double err = 0, en = 0, k = 0;
	for (int i = 0; i < e->T; i++)
		for (int part = 0; part < 2; part++) {
			err += e->err[part][i];
			en += e->energy[part][i];
		}
	for (int q = 0; q < e->Q; q++)
		k += e->kl[q];
	*nmse = err / en;
	*kl = k / e->Q;
	wzc_errors_free(e);
	wzc_codec_free(c);
	return 0;
}

static void gains(void)
{
	int exact = 1;
	for (int s = 0; s + 32 < WZE_SMAX; s++)
		exact &= wze_gain(s + 32) == 2 * wze_gain(s);
	ok(wze_gain(WZE_S0) == 1.0f && exact,
	   "g(S0) = 1 and g(s + 32) = 2 g(s) exactly over the step codes");
	ok(wze_class(0, WZE_S0, 128) == 0 && wze_class(1, WZE_S0, 128) == 1 &&
	   wze_class(-1, WZE_S0, 128) == 0 && wze_class(-2, WZE_S0, 128) == -1 &&
	   wze_class(0, WZE_S0 + 2, 128) == 1 && wze_class(0, WZE_S0, 127) == 1,
	   "classes: 1/32 octave codes to the nearest 1/16 class, halves up; a scale code "
	   "one step down is one class up");
	ok(wze_low_bits(WZE_JLO) == 0 && wze_low_bits(WZE_JLO - 1) == 1 &&
	   wze_low_bits(WZE_JLO - 16) == 1 && wze_low_bits(WZE_JLO - 17) == 2,
	   "classes below the tables code 1 low bit per 16 classes short");
}

/* Damaged records: decoded, every value finite; none read past the
 * record (the sanitizer build of this test checks that too). */
static void damaged(const wzc_profile *p)
{
	wz_diag d;
	wzc_codec *c = codec_of("wze-3.0", p, &d);
	if (!ok(c != NULL, "wze-3.0 codec")) {
		printf("# %s\n", d.msg);
		return;
	}
	size_t B = wzc_codec_record_bytes(c);
	enum { N = 3000 };
	uint8_t *rec = malloc(B * N);
	float *lat = malloc(sizeof(float) * R * N), *rope = malloc(sizeof(float) * P * N);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (size_t i = 0; rec && i < B * N; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		rec[i] = (uint8_t)x;
	}
	/* a record of zeros, one of 0xff, and random ones */
	if (rec) {
		memset(rec, 0, B);
		memset(rec + B, 0xff, B);
	}
	int finite = rec && lat && rope;
	for (int l = 0; finite && l < L; l++) {
		if (wzc_decode_layer(c, l, N, rec, lat, rope))
			ok(0, "layer %d decoded (out of memory?)", l);
		for (size_t i = 0; i < (size_t)R * N; i++)
			finite &= isfinite(lat[i]);
		for (size_t i = 0; i < (size_t)P * N; i++)
			finite &= isfinite(rope[i]);
	}
	ok(finite, "%d damaged records of %zu bytes decode to finite values in every layer", N, B);
	free(rec);
	free(lat);
	free(rope);
	wzc_codec_free(c);
}

/* The records of fixed values at wze-5.0 through the stored profile
 * tests/codec/golden/tiny.wzp, and the values they decode to, by their
 * hashes, written down with the format: another hash is another format.
 * The values come from integer arithmetic alone (an xorshift over a
 * power-of-two scale per component), so they are the same on every
 * machine. */
#define PIN_RECORDS 0xf75f6cf0d06c3238ull
#define PIN_VALUES 0x7b0ea2e849ab722bull
static void pinned(const char *dir)
{
	char path[600];
	snprintf(path, sizeof path, "%s/tiny.wzp", dir);
	wz_diag d;
	wzc_profile *p = NULL;
	if (!ok(!wzc_profile_read(path, &p, &d), "%s reads", path))
		return;
	wzc_codec *c = codec_of("wze-5.0", p, &d);
	enum { T = 64 };
	size_t B = c ? wzc_codec_record_bytes(c) : 0;
	int r = p->R, pp = p->P;
	uint8_t *rec = malloc(B * T + 1);
	float *in = malloc(sizeof(float) * (size_t)(r + pp) * T);
	float *lat = malloc(sizeof(float) * (size_t)r * T), *rope = malloc(sizeof(float) * (size_t)pp * T + 1);
	XXH64_state_t *hr = XXH64_createState(), *hd = XXH64_createState();
	XXH64_reset(hr, 0);
	XXH64_reset(hd, 0);
	int done = c && rec && in && lat && rope;
	uint64_t x = 88172645463325252ull;
	for (int l = 0; done && l < p->L; l++) {
		for (size_t i = 0; i < (size_t)(r + pp) * T; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* a signed 16-bit draw over 2^(8 + i % 5) */
			in[i] = (float)(int16_t)(x >> 48) / (float)(1 << (8 + i % 5));
		}
		done = !wzc_encode_layer(c, l, T, in, in + (size_t)r * T, rec, &d);
		if (wzc_decode_layer(c, l, T, rec, lat, rope))
			ok(0, "layer %d decoded (out of memory?)", l);
		XXH64_update(hr, rec, B * T);
		XXH64_update(hd, lat, sizeof(float) * (size_t)r * T);
		XXH64_update(hd, rope, sizeof(float) * (size_t)pp * T);
	}
	unsigned long long hrec = XXH64_digest(hr), hval = XXH64_digest(hd);
	printf("# wze-5.0 on tiny.wzp: records %016llx, decoded %016llx\n", hrec, hval);
	ok(done && hrec == PIN_RECORDS && hval == PIN_VALUES,
	   "fixed values through tiny.wzp: the format's records and decoded values (%zu bytes "
	   "a record)", B);
	XXH64_freeState(hr);
	XXH64_freeState(hd);
	free(rec);
	free(in);
	free(lat);
	free(rope);
	wzc_codec_free(c);
	wzc_profile_free(p);
}

int main(void)
{
	gains();
	wzt_cache_trace *cal = make(WZT_FAMILY_MLA_A, "calibration", 1, 2048);
	wzt_cache_trace *test = make(WZT_FAMILY_MLA_A, "test", 2, 1024);
	wzc_profile *p = cal ? prepared(cal) : NULL;
	if (!ok(test && p, "mla-a windows and profile"))
		return tap_done();
	trace_bf16(test);

	/* error falls with the rate */
	const char *rates[] = { "wze-2.0", "wze-3.0", "wze-4.0", "wze-5.0", "wze-6.0", "wze-8.0" };
	double prev = INFINITY, nm, kl;
	int falls = 1;
	for (int i = 0; i < 6; i++) {
		if (measured(rates[i], p, test, &nm, &kl)) {
			falls = 0;
			break;
		}
		printf("# %s: nmse %.4g, attention KL %.4g\n", rates[i], nm, kl);
		falls &= nm < prev;
		prev = nm;
	}
	ok(falls, "nmse falls at every step from wze-2.0 to wze-8.0");

	/* against wz at the same bytes */
	double nw, kw, ne, ke;
	if (!measured("wz-5.0", p, test, &nw, &kw) && !measured("wze-5.0", p, test, &ne, &ke)) {
		ok(ke < kw, "mla-a at 5.0 bits/value: wze's attention KL %.4g below wz's %.4g", ke, kw);
		ok(ne < nw, "and its nmse %.4g below wz's %.4g", ne, nw);
	} else {
		ok(0, "wz-5.0 and wze-5.0 measured");
	}
	damaged(p);
	const char *src = getenv("srcdir");
	char dir[512], path[600];
	snprintf(dir, sizeof dir, "%s/tests/codec/golden", src ? src : ".");
	pinned(dir);

	/* a profile that predicts its position part (version 7): its
	 * golden file codes and decodes, and on mla-p (a position part the
	 * latent predicts) the prediction lowers wze-5.0's error */
	snprintf(path, sizeof path, "%s/tiny-v7.wzp", dir);
	wzc_profile *v7 = NULL;
	wz_diag d;
	wzc_codec *c = NULL;
	ok(!wzc_profile_read(path, &v7, &d) && (c = codec_of("wze-5.0", v7, &d)) != NULL,
	   "wze codes with tiny-v7.wzp, whose layer predicts its position part");
	wzc_codec_free(c);
	wzc_profile_free(v7);
	wzt_cache_trace *pcal = make(WZT_FAMILY_MLA_P, "calibration", 3, 2048);
	wzt_cache_trace *ptest = make(WZT_FAMILY_MLA_P, "test", 4, 1024);
	wzc_profile *pp = pcal ? prepare_rope(pcal, 2) : NULL, *pu = pcal ? prepare_rope(pcal, 0) : NULL;
	double n1, k1, n0, k0;
	if (ok(ptest && pp && pu && pp->version == 7 && wzc_profile_predicts(pp, 0),
	       "mla-p: a profile predicting in every layer, and one undoing RoPE alone")) {
		trace_bf16(ptest);
		if (!measured("wze-5.0", pp, ptest, &n1, &k1) && !measured("wze-5.0", pu, ptest, &n0, &k0))
			ok(n1 < n0 && k1 < k0,
			   "mla-p at wze-5.0: predicted, nmse %.4g and attention KL %.4g, below %.4g and "
			   "%.4g without", n1, k1, n0, k0);
		else
			ok(0, "mla-p measured at wze-5.0");
	}
	wzc_profile_free(pp);
	wzc_profile_free(pu);
	wzt_cache_trace_free(pcal);
	wzt_cache_trace_free(ptest);
	wzc_profile_free(p);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	return tap_done();
}
