/* The predicted position part (profile version 7; docs/wz-format.md,
 * "Predicted position part"): the prediction step's two forms agree bit
 * for bit and with double precision; prepare predicts on mla-p (a position
 * part the latent predicts) and not on mla-a, whose profile stays the
 * version 6 one byte for byte; the file round-trips, and a damaged map or
 * flag is refused naming the layer; coding with it lowers the error and
 * the attention KL at equal bits on mla-p; the fast coders give the
 * reference's records, and a layer decoded whole the values of its tokens
 * decoded alone; the token at position 0 is coded by its own plan; the
 * trellis and wzx formats refuse such a profile; and the golden files
 * (tiny-v7.wzp, tiny-v7.rec, tiny-v7.dec) still read, encode and decode to
 * their bytes. */
#include "tests/tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/codec_internal.h"
#include "codec/cuda/pred_step.h"
#include "codec/formats/format.h"
#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"
#include "codec/profile/rope.h"
#include "codec/wz/wz_flat.h"
#include "codec/profile/predict.h"
#include "codec/wz/wz_predict.h"
#include "common/wz_io.h"
#include "tests/codec/window.h"

enum { R = 128, P = 32, L = 2 };

static wzt_cache_trace *make(wzt_family fam, const char *split, uint64_t ws, int T, int r, int p,
			     int layers)
{
	wzt_synth_params sp;
	wzt_synth_params_default(&sp);
	sp.family = fam;
	sp.seed = 43;
	sp.L = layers;
	sp.T = T;
	sp.R = r;
	sp.P = p;
	sp.Q = 32;
	sp.H = 8;
	sp.window_seed = ws;
	sp.split = split;
	return synth_with(&sp);
}

static wzc_profile *prepared(const wzt_cache_trace *cal, int predict)
{
	return prepare_rope(cal, predict);
}

static wzc_codec *codec_of(const char *name, const wzc_profile *p, wz_diag *d)
{
	wzc_format fmt;
	wzc_codec *c = NULL;
	if (wzc_format_parse(name, &fmt, d) || wzc_codec_new(&fmt, p->L, p->R, p->P, p, &c, d))
		return NULL;
	return c;
}

static void measure_of(const wzc_window *w, wzc_codec *c, double *nmse, double *kl)
{
	wzc_errors *e = NULL;
	wz_diag d;
	*nmse = *kl = NAN;
	if (!c || wzc_measure(w, c, &e, &d))
		return;
	*nmse = wzc_metric_ci(e, WZC_M_NMSE, 0, 1).value;
	*kl = wzc_metric_ci(e, WZC_M_KL, 0, 1).value;
	wzc_errors_free(e);
}

static void step(void)
{
	enum { r = 64, p = 16 };
	float map[r * p], mean[r], lat[r], a[p];
	uint64_t s = 7;
	for (int i = 0; i < r * p; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		map[i] = (float)((double)(s >> 11) / 9007199254740992.0 - 0.5);
	}
	for (int k = 0; k < r; k++) {
		mean[k] = 0.01f * (float)k;
		lat[k] = (float)sin(k * 0.7) * 3;
	}
	wzc_pred_token(map, mean, lat, r, p, a);
	int same = 1;
	double worst = 0;
	for (int i = 0; i < p; i++) {
		same &= wzc_pred_value(map, mean, lat, r, p, i) == a[i];
		double x = 0;
		for (int k = 0; k < r; k++)
			x += (double)map[k * p + i] * ((double)lat[k] - mean[k]);
		worst = fmax(worst, fabs(x - a[i]));
	}
	ok(same, "the prediction step, all outputs at once and one output alone (a kernel's "
	   "thread): the same floats");
	/* the vectorized clone the encoder and decoder call, on 3 tokens */
	float lat3[3 * r], b3[3 * p], a3[3 * p];
	for (int k = 0; k < 3 * r; k++)
		lat3[k] = (float)cos(k * 0.37) * 2;
	wzc_pred_tokens(map, mean, lat3, r, p, 3, b3);
	for (int t = 0; t < 3; t++)
		wzc_pred_token(map, mean, lat3 + t * r, r, p, a3 + t * p);
	ok(!memcmp(a3, b3, sizeof a3), "the fast path's clone (this CPU's widest) gives the step's "
	   "floats, bit for bit");
	ok(worst < 1e-4, "and within %.2g of double precision", worst);
}

static void roundtrip(const wzc_profile *p)
{
	uint8_t *b = NULL, *b2 = NULL;
	size_t n = 0, n2 = 0;
	wz_diag d;
	wzc_profile *q = NULL;
	if (!ok(!wzc_profile_serialize(p, &b, &n, &d) && b[8] == 7, "a predicting profile is version 7"))
		return;
	ok(!wzc_profile_parse(b, n, "v7", &q, &d) && q->version == 7 && wzc_profile_predicts(q, 1) &&
	   !memcmp(q->pred_map[1], p->pred_map[1], sizeof(float) * R * P) &&
	   !memcmp(q->rope_plain[1].basis, p->rope_plain[1].basis, sizeof(float) * P * P) &&
	   !wzc_profile_serialize(q, &b2, &n2, &d) && n2 == n && !memcmp(b, b2, n),
	   "it reads back as written, map and anchored statistics, and writes the same bytes");
	wzc_profile_free(q);
	/* the last layer's map: at its end in the file (before the trailer) */
	size_t map_at = n - 8 - sizeof(float) * R * P;
	struct {
		float v;
		const char *what;
	} bad[] = { { NAN, "NaN" }, { 1e30f, "oversized" }, { INFINITY, "infinite" } };
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		uint8_t *c = malloc(n);
		memcpy(c, b, n);
		uint32_t u;
		memcpy(&u, &bad[k].v, 4);
		size_t at = map_at + 4 * (size_t)(5 * P + 3);
		for (int i = 0; i < 4; i++)
			c[at + i] = (uint8_t)(u >> (8 * i));
		wzc_profile_reseal(c, n);
		q = NULL;
		wz_err e = wzc_profile_parse(c, n, "bad", &q, &d);
		ok(e == WZ_ERR_CORRUPT && strstr(d.msg, "layer 1") && strstr(d.msg, "map entry (5, 3)"),
		   "a %s map entry is corrupt, naming layer and entry: %s", bad[k].what,
		   e ? d.msg : "read");
		wzc_profile_free(q);
		free(c);
	}
	/* the flag, 2; and a file one map short */
	uint8_t *c = malloc(n);
	memcpy(c, b, n);
	size_t flag_at = map_at - (4 * (1 + (size_t)P * P + 5 * P + WZC_HIST_BINS)) - 4;
	c[flag_at] = 2;
	wzc_profile_reseal(c, n);
	q = NULL;
	wz_err e = wzc_profile_parse(c, n, "bad", &q, &d);
	ok(e == WZ_ERR_CORRUPT && strstr(d.msg, "prediction flag"), "a flag of 2 is corrupt: %s",
	   e ? d.msg : "read");
	wzc_profile_free(q);
	q = NULL;
	e = wzc_profile_parse(b, n - 4 * R * P, "short", &q, &d);
	ok(e == WZ_ERR_CORRUPT, "a file a map short is refused: %s", e ? d.msg : "read");
	wzc_profile_free(q);
	free(c);
	free(b);
	free(b2);
}

/* The fast coders against the reference: the records of the reference
 * encoder and the fast one through the same prediction, and a layer decoded
 * whole against its tokens decoded alone. */
static void fast_vs_ref(wzc_codec *c, const wzt_cache_trace *t)
{
	int T = t->T;
	size_t B = wzc_codec_record_bytes(c);
	uint8_t *rf = malloc(B * T), *rr = malloc(B * T);
	float *lat = malloc(sizeof(float) * (size_t)T * R), *rope = malloc(sizeof(float) * (size_t)T * P);
	float *u = malloc(sizeof(float) * (size_t)T * (R + P));
	wz_diag d;
	if (!rf || !rr || !lat || !rope || !u)
		return;
	const wzc_format_info *info = wzc_format_info_of(wzc_codec_format(c)->id);
	/* layer 1's input as the codec path gives it: bf16, rotated back */
	float *ul = u, *ur = u + (size_t)T * R;
	for (size_t i = 0; i < (size_t)T * R; i++)
		ul[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(t->latent[(size_t)T * R + i]));
	for (size_t i = 0; i < (size_t)T * P; i++)
		ur[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(t->rope[(size_t)T * P + i]));
	const double *f = wzc_codec_rope_freq(c, 1);
	for (int k = 0; f && k < T; k++)
		wzc_rope_turn(ur + (size_t)k * P, P, t->positions[k], f, -1);
	int e1 = wzc_pred_encode_layer(c, c->anchored, c->profile, B, info->encode_layer_ref,
				       info->decode_layer, 1, T, ul, ur, t->positions, rr, &d);
	int e2 = wzc_encode_layer_at(c, 1, T, t->latent + (size_t)T * R, t->rope + (size_t)T * P,
				     t->positions, rf, &d);
	ok(!e1 && !e2 && !memcmp(rf, rr, B * T), "%s: the fast encoder's records are the reference's "
	   "(%d tokens)", wzc_codec_format(c)->name, T);
	if (wzc_decode_layer_at(c, 1, T, rf, t->positions, lat, rope))
		ok(0, "layer %d decoded (out of memory?)", 1);
	int same = 1;
	for (int k = 0; k < T; k++) {
		float ol[R], orp[P];
		same &= !wzc_decode_token_at(c, 1, rf + B * k, t->positions[k], ol, orp) &&
			!memcmp(ol, lat + (size_t)k * R, sizeof ol) &&
			!memcmp(orp, rope + (size_t)k * P, sizeof orp);
	}
	ok(same, "%s: a layer decoded whole gives each token's values decoded alone",
	   wzc_codec_format(c)->name);
	/* the CUDA kernel's per-thread step, emulated (every index, forwards
	 * and backwards: no thread reads what another writes): the residuals
	 * of the layer's own plan plus the step give the CPU decoder's values
	 * in the coded domain */
	float *el = malloc(sizeof(float) * (size_t)T * R), *er = malloc(sizeof(float) * (size_t)T * P);
	float *cr = malloc(sizeof(float) * (size_t)T * P);
	if (el && er && cr) {
		int agree = !wzc_pred_decode_layer(c, c->anchored, c->profile, B, info->decode_layer, 1, T,
					       rf, t->positions, el, cr);
		for (int rev = 0; rev < 2; rev++) {
			agree &= !info->decode_layer(c, 1, T, rf, el, er);
			wzk_pred_args a = { c->profile->pred_map[1], c->profile->latent[1].mean, el, er,
					    t->positions, R, P, T };
			long total = (long)T * P;
			for (long i = 0; i < total; i++)
				wzk_pred_add_value(&a, rev ? total - 1 - i : i);
			for (int k = 0; k < T; k++)
				if (t->positions[k] != 0)
					agree &= !memcmp(er + (size_t)k * P, cr + (size_t)k * P,
							 sizeof(float) * P);
		}
		ok(agree, "%s: the GPU kernel's step (emulated, threads in both orders) gives the CPU "
		   "decoder's position parts, bit for bit", wzc_codec_format(c)->name);
	}
	free(el);
	free(er);
	free(cr);
	free(rf);
	free(rr);
	free(lat);
	free(rope);
	free(u);
}

/* Golden files (WZ_PREDICT_GOLDEN_WRITE=DIR writes them again): a small
 * version 7 profile, the records of a window at wz-5.0 and their decoded
 * values.  The profile writes its own bytes back; encoding the window
 * (regenerated from its seed) gives the records, and decoding them the
 * values, bit for bit. */
static void golden(const char *dir)
{
	enum { gr = 32, gp = 16, gt = 64 };
	const char *wdir = getenv("WZ_PREDICT_GOLDEN_WRITE");
	char pp[600], pr[600], pd[600];
	snprintf(pp, sizeof pp, "%s/tiny-v7.wzp", wdir ? wdir : dir);
	snprintf(pr, sizeof pr, "%s/tiny-v7.rec", wdir ? wdir : dir);
	snprintf(pd, sizeof pd, "%s/tiny-v7.dec", wdir ? wdir : dir);
	wz_diag d;
	wzt_cache_trace *test = make(WZT_FAMILY_MLA_P, "test", 2, gt, gr, gp, 1);
	if (wdir) {
		wzt_cache_trace *cal = make(WZT_FAMILY_MLA_P, "calibration", 1, 1024, gr, gp, 1);
		wzc_profile *p = cal ? prepared(cal, 2) : NULL;
		uint8_t *b = NULL;
		size_t n = 0;
		ok(p && p->version == 7 && !wzc_profile_serialize(p, &b, &n, &d) &&
		   !wz_write_file_atomic(pp, b, n, &d), "golden: %s written", pp);
		free(b);
		wzc_profile_free(p);
		wzt_cache_trace_free(cal);
	}
	wzc_profile *p = NULL;
	char *g = NULL;
	size_t ng = 0;
	if (!ok(test && !wzc_profile_read(pp, &p, &d) && p->version == 7 && wzc_profile_predicts(p, 0),
		"golden: tiny-v7.wzp reads, version 7, its layer predicting")) {
		wzt_cache_trace_free(test);
		wzc_profile_free(p);
		return;
	}
	uint8_t *b = NULL;
	size_t n = 0;
	int back = !wzc_profile_serialize(p, &b, &n, &d) && !wz_read_file(pp, 1 << 26, &g, &ng, &d) &&
		   ng == n && !memcmp(g, b, n);
	ok(back, "golden: it writes its own bytes back (%zu)", n);
	free(b);
	free(g);
	g = NULL;
	wzc_codec *c = codec_of("wz-5.0", p, &d);
	size_t B = c ? wzc_codec_record_bytes(c) : 0;
	uint8_t *rec = malloc(B * gt + 1);
	float *dec = malloc(sizeof(float) * gt * (gr + gp));
	if (c && rec && dec && !wzc_encode_layer_at(c, 0, gt, test->latent, test->rope, test->positions, rec, &d)) {
		if (wzc_decode_layer_at(c, 0, gt, rec, test->positions, dec, dec + gt * gr))
			ok(0, "layer %d decoded (out of memory?)", 0);
		if (wdir) {
			ok(!wz_write_file_atomic(pr, rec, B * gt, &d) &&
			   !wz_write_file_atomic(pd, dec, sizeof(float) * gt * (gr + gp), &d),
			   "golden: %s and %s written", pr, pd);
		}
		ok(!wz_read_file(pr, 1 << 26, &g, &ng, &d) && ng == B * gt && !memcmp(g, rec, ng),
		   "golden: the window's records at wz-5.0 are tiny-v7.rec's (%zu bytes)", B * gt);
		free(g);
		g = NULL;
		/* the golden records decoded: the golden values */
		char *gr_ = NULL;
		size_t ngr = 0;
		float *dec2 = malloc(sizeof(float) * gt * (gr + gp));
		int read = !wz_read_file(pr, 1 << 26, &gr_, &ngr, &d) && ngr == B * gt;
		if (read && dec2)
			if (wzc_decode_layer_at(c, 0, gt, (const uint8_t *)gr_, test->positions, dec2,
						    dec2 + gt * gr))
				ok(0, "layer %d decoded (out of memory?)", 0);
		ok(read && dec2 && !wz_read_file(pd, 1 << 26, &g, &ng, &d) &&
		   ng == sizeof(float) * gt * (gr + gp) && !memcmp(g, dec2, ng),
		   "golden: tiny-v7.rec decodes to tiny-v7.dec's values, bit for bit");
		free(gr_);
		free(dec2);
		free(g);
	} else {
		ok(0, "golden: encoded: %s", d.msg);
	}
	free(rec);
	free(dec);
	wzc_codec_free(c);
	wzc_profile_free(p);
	wzt_cache_trace_free(test);
}

/* For predict_cli.sh: the version 7 profile at in, its last layer's map
 * entry 7 from the end made 1e30 and the checksums made right again,
 * written to path; the CLI must refuse it with exit status 2. */
static int write_bad_map(const char *pp, const char *path)
{
	wz_diag d;
	char *g = NULL;
	size_t n = 0;
	if (wz_read_file(pp, 1 << 26, &g, &n, &d))
		return fprintf(stderr, "%s\n", d.msg), 1;
	float big = 1e30f;
	uint32_t u;
	memcpy(&u, &big, 4);
	for (int i = 0; i < 4; i++)
		((uint8_t *)g)[n - 8 - 4 * 7 + i] = (uint8_t)(u >> (8 * i));
	wzc_profile_reseal((uint8_t *)g, n);
	int rc = wz_write_file_atomic(path, g, n, &d) ? 1 : 0;
	free(g);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--bad-map"))
		return write_bad_map(argv[2], argv[3]);
	step();
	wzt_cache_trace *cal = make(WZT_FAMILY_MLA_P, "calibration", 1, 2048, R, P, L);
	wzt_cache_trace *test = make(WZT_FAMILY_MLA_P, "test", 2, 1024, R, P, L);
	wzt_cache_trace *acal = make(WZT_FAMILY_MLA_A, "calibration", 1, 2048, R, P, L);
	if (!cal || !test || !acal)
		return ok(0, "synthetic windows"), tap_done();
	wzc_profile *pred = prepared(cal, 1), *plain = prepared(cal, 0);
	wzc_profile *apred = prepared(acal, 1), *aplain = prepared(acal, 0);
	if (!pred || !plain || !apred || !aplain)
		return ok(0, "prepared"), tap_done();
	double g0 = wzc_profile_pred_gain_db(pred, 0), g1 = wzc_profile_pred_gain_db(pred, 1);
	ok(pred->version == 7 && wzc_profile_predicts(pred, 0) && wzc_profile_predicts(pred, 1) &&
	   g0 > 3 && g1 > 3, "mla-p: every layer predicts (auto), gains %.2f and %.2f dB", g0, g1);
	uint8_t *ba = NULL, *bp = NULL;
	size_t na = 0, np = 0;
	wz_diag d;
	ok(apred->version == 6 && !wzc_profile_predicts(apred, 0) && !wzc_profile_predicts(apred, 1) &&
	   !wzc_profile_serialize(apred, &ba, &na, &d) && !wzc_profile_serialize(aplain, &bp, &np, &d) &&
	   na == np && !memcmp(ba, bp, na),
	   "mla-a (a position part the latent does not predict): no layer predicts, and the profile "
	   "is the one prepared without, byte for byte");
	free(ba);
	free(bp);
	ok(!memcmp(pred->latent[1].basis, plain->latent[1].basis, sizeof(float) * R * R) &&
	   !memcmp(pred->rope_plain[1].var, plain->rope[1].var, sizeof(float) * P),
	   "the latent, and the anchored tokens' position part, are the profile's without prediction");
	roundtrip(pred);

	wzc_window tw = window_of(test);
	wzc_codec *cp = codec_of("wz-5.0", pred, &d), *c0 = codec_of("wz-5.0", plain, &d);
	double n1, k1, n0, k0;
	measure_of(&tw, cp, &n1, &k1);
	measure_of(&tw, c0, &n0, &k0);
	ok(n1 < n0 && k1 < k0, "wz-5.0 on an mla-p test window, predicting and not: nmse %.4g, %.4g; "
	   "attention KL %.4g, %.4g", n1, n0, k1, k0);
	if (cp)
		fast_vs_ref(cp, test);
	wzc_codec *cs = codec_of("wzs-5.0", pred, &d);
	ok(cs != NULL, "wzs codes with it too");
	if (cs)
		fast_vs_ref(cs, test);
	wzc_codec_free(cs);

	/* the token at position 0 is coded by the plan of the part's own
	 * statistics, unpredicted: its record is that plan's alone */
	if (cp) {
		enum { T = 4 };
		size_t B = wzc_codec_record_bytes(cp);
		uint8_t *r0 = malloc(B * T), *ra = malloc(B);
		int64_t from0[T] = { 0, 1, 2, 3 };
		if (r0 && ra) {
			wzc_encode_layer_at(cp, 1, T, test->latent + (size_t)test->T * R,
					    test->rope + (size_t)test->T * P, from0, r0, &d);
			wzc_encode_layer_at(cp->anchored, 1, 1, test->latent + (size_t)test->T * R,
					    test->rope + (size_t)test->T * P, from0, ra, &d);
			float l0[R], p0[P], la[R], pa[P];
			wz_err e0 = wzc_decode_token_at(cp, 1, r0, 0, l0, p0);
			wz_err ea = wzc_decode_token_at(cp->anchored, 1, ra, 0, la, pa);
			ok(!e0 && !ea && !memcmp(r0, ra, B) && !memcmp(l0, la, sizeof l0) &&
				   !memcmp(p0, pa, sizeof p0),
			   "the token at position 0: the record and values of the plan of the part's own "
			   "statistics, unpredicted");
		}
		free(r0);
		free(ra);
	}
	wzc_codec *ct = codec_of("wzt8-5.0", pred, &d);
	ok(!ct && strstr(d.msg, "predicts"), "wzt8 refuses it: %s", d.msg);
	wzc_codec_free(ct);
	wzc_codec *cx = codec_of("wzx-5.4", pred, &d);
	ok(!cx && strstr(d.msg, "predicts"), "wzx refuses it: %s", d.msg);
	wzc_codec_free(cx);
	wzc_wz_flat *flat = NULL;
	ok(cp && wzc_wz_flatten(cp, 1, &flat, &d) == WZ_ERR_INPUT && strstr(d.msg, "version 7"),
	   "the GPU's flat plan refuses a predicting layer: %s", d.msg);
	wzc_wz_flat_free(flat);
	wzc_codec_free(cp);
	wzc_codec_free(c0);

	const char *src = getenv("srcdir");
	char path[512];
	snprintf(path, sizeof path, "%s/tests/codec/golden", src ? src : ".");
	golden(path);

	wzc_profile_free(pred);
	wzc_profile_free(plain);
	wzc_profile_free(apred);
	wzc_profile_free(aplain);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	wzt_cache_trace_free(acal);
	return tap_done();
}
