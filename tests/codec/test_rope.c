/* The position part coded after undoing RoPE (profile version 6;
 * docs/wz-format.md, "RoPE undone"): the rotation; the models' inverse
 * frequencies, plain and YaRN, against the formula worked by hand; a
 * profile prepared with frequencies gains on the synthetic mla-b family
 * (RoPE over a structured pre-RoPE part) and not on iid (no RoPE); its
 * file round-trips and damage to a frequency is found; coding with it
 * lowers the error at equal bits, holds at positions 30,000 tokens past
 * the calibration, and decodes wrong at the wrong position; the
 * position-less functions are the positioned ones at 0..n-1; the GPU
 * flattening refuses it; a wzx container restores its bf16 the same by
 * both paths, the reference's values. */
#include "tests/tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/formats/format.h"
#include "codec/formats/fpconv.h"
#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"
#include "codec/profile/rope.h"
#include "codec/wz/wz_flat.h"
#include "codec/wzx/wzx.h"
#include "tests/codec/window.h"

/* Counts prepare's progress calls: [0] calls, [1] those that were the next
 * count, [2] the total they gave. */
static void count_progress(void *ud, int done, int layers)
{
	int *seen = ud;
	seen[0]++;
	seen[1] += done == seen[0];
	seen[2] = layers;
}

enum { R = 128, P = 32, L = 2 };

static wzt_cache_trace *make(wzt_family fam, const char *split, uint64_t ws, int T, int64_t start)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = fam;
	p.seed = 21;
	p.L = L;
	p.T = T;
	p.R = R;
	p.P = P;
	p.Q = 32;
	p.H = 8;
	p.start_position = start;
	p.window_seed = ws;
	p.split = split;
	return synth_with(&p);
}

static void rotation(void)
{
	double f[4] = { 1, 0.1, 0, 1e-4 };
	float v[8] = { 1, 2, -3, 0.5f, 7, -1, 0.25f, 4 }, w[8];
	memcpy(w, v, sizeof w);
	wzc_rope_turn(w, 8, 0, f, 1);
	ok(!memcmp(v, w, sizeof v), "position 0 turns nothing");
	wzc_rope_turn(w, 8, 123457, f, 1);
	ok(w[4] == v[4] && w[5] == v[5], "a pair of frequency 0 is left bit for bit");
	double n0 = 0, n1 = 0;
	for (int i = 0; i < 8; i++) {
		n0 += (double)v[i] * v[i];
		n1 += (double)w[i] * w[i];
	}
	ok(fabs(n1 - n0) < 1e-5 * n0, "the rotation keeps the norm (%.9g, %.9g)", n0, n1);
	float x = 1, y = 0, pr[2] = { 1, 0 };
	wzc_rope_turn(pr, 2, 3, f, 1);
	ok(fabs(pr[0] - cosf(3)) < 1e-6 && fabs(pr[1] - sinf(3)) < 1e-6,
	   "(1, 0) at position 3 of frequency 1 is (cos 3, sin 3), as DeepSeek rotates");
	(void)x;
	(void)y;
	wzc_rope_turn(w, 8, 123457, f, -1);
	double dmax = 0;
	for (int i = 0; i < 8; i++)
		dmax = fmax(dmax, fabs(w[i] - v[i]));
	ok(dmax < 1e-5, "back by the same angle undoes it (%.2g)", dmax);
}

static void frequencies(void)
{
	double plain[32], yarn[32];
	wzc_rope_freqs(64, 10000, 1, 1, 32, 1, plain);
	int good = 1;
	for (int i = 0; i < 32; i++)
		good &= plain[i] == (double)(float)pow(10000, -2.0 * i / 64);
	ok(good && plain[0] == 1, "plain RoPE: 10000^(-2i/64) in float32");
	/* YaRN, factor 32 on 1,024 positions, betas 32 and 1 (the project's
	 * model): low = floor(64 ln(1024 / (32 2 pi)) / (2 ln 10000)) = 5,
	 * high = ceil(64 ln(1024 / (2 pi)) / (2 ln 10000)) = 18 */
	wzc_rope_freqs(64, 10000, 32, 1024, 32, 1, yarn);
	good = 1;
	for (int i = 0; i < 5; i++)
		good &= yarn[i] == plain[i];
	for (int i = 18; i < 32; i++)
		good &= yarn[i] == (double)(float)(pow(10000, -2.0 * i / 64) / 32);
	double ramp = (11 - 5) / 13.0, f = pow(10000, -22.0 / 64);
	good &= yarn[11] == (double)(float)(f / 32 * ramp + f * (1 - ramp));
	ok(good, "YaRN 32 on 1,024: unscaled below pair 5, / 32 from pair 18, the ramp between");
}

/* The closed form of a query's second moment over its keys against the
 * mean of the rotated queries' outer products, key by key. */
static void query_moment(void)
{
	enum { PP = 8, NK = 300 };
	double f[PP / 2] = { 1, 0.3, 0.01, 0 }, G[4 * (PP / 2) * (PP / 2)], M[PP * PP] = { 0 };
	double B[PP * PP] = { 0 };
	float q[PP] = { 0.7f, -1.2f, 0.4f, 2.0f, -0.3f, 0.9f, 1.5f, -0.8f };
	wzc_rope_key_phases(PP, f, NK, G);
	wzc_rope_query_moment_add(q, PP, G, M);
	for (int p = 0; p < NK; p++) {
		float v[PP];
		memcpy(v, q, sizeof v);
		wzc_rope_turn(v, PP, p, f, -1);
		for (int a = 0; a < PP; a++)
			for (int b = 0; b < PP; b++)
				B[a * PP + b] += (double)v[a] * v[b] / NK;
	}
	double dmax = 0, scale = 0;
	for (int i = 0; i < PP * PP; i++) {
		dmax = fmax(dmax, fabs(M[i] - B[i]));
		scale = fmax(scale, fabs(B[i]));
	}
	ok(dmax < 1e-6 * scale, "a query's second moment over 300 key positions, in closed form, is the "
	   "mean over the keys (largest difference %.2g of %.3g)", dmax, scale);
}

static wzc_profile *prepared(const wzt_cache_trace *cal, int undo)
{
	wzc_window w = window_of(cal);
	const wzc_window *ws[1] = { &w };
	double f[P / 2];
	wzc_rope_freqs(P, 10000, 1, 1, 32, 1, f);
	wzc_prepare_opts o;
	wzc_prepare_opts_default(&o);
	if (undo) {
		o.rope_freq = f;
		o.rope_pairs = P / 2;
	}
	wzc_profile *p = NULL;
	wz_diag d;
	if (wzc_prepare(ws, 1, &o, &p, &d))
		printf("# prepare: %s\n", d.msg);
	return p;
}

static wzc_codec *codec_of(const char *name, const wzc_profile *p)
{
	wzc_format fmt;
	wzc_codec *c = NULL;
	wz_diag d;
	if (wzc_format_parse(name, &fmt, &d) || wzc_codec_new(&fmt, L, R, P, p, &c, &d))
		printf("# codec %s: %s\n", name, d.msg);
	return c;
}

/* nmse; the position part's and the attention KL into rope_nmse, kl */
static double nmse_of(const wzc_window *w, wzc_codec *c, double *rope_nmse, double *kl)
{
	wzc_errors *e = NULL;
	wz_diag d;
	if (!c || wzc_measure(w, c, &e, &d))
		return NAN;
	double v = wzc_metric_ci(e, WZC_M_NMSE, 0, 1).value;
	*rope_nmse = wzc_metric_ci(e, WZC_M_NMSE_ROPE, 0, 1).value;
	*kl = wzc_metric_ci(e, WZC_M_KL, 0, 1).value;
	wzc_errors_free(e);
	return v;
}

static void file_roundtrip(const wzc_profile *p, const wzc_profile *plain)
{
	uint8_t *b = NULL, *b0 = NULL;
	size_t n = 0, n0 = 0;
	wz_diag d;
	wzc_profile *q = NULL;
	int made = !wzc_profile_serialize(p, &b, &n, &d) && !wzc_profile_serialize(plain, &b0, &n0, &d);
	ok(made && p->version == 6 && plain->version == 5 && b[8] == 6 && b0[8] == 5,
	   "a profile that undoes RoPE is version 6; one that does not stays version 5");
	ok(made && n == n0 + 8 * (size_t)L * (P / 2), "version 6 adds 8 bytes a pair a layer (%zu, %zu)",
	   n, n0);
	int same = made && !wzc_profile_parse(b, n, "v6", &q, &d) && q->version == 6 && q->rope_freq &&
		   !memcmp(q->rope_freq, p->rope_freq, sizeof(double) * L * (P / 2)) &&
		   wzc_profile_undoes_rope(q, 1);
	ok(same, "the frequencies read back as written");
	wzc_profile_free(q);
	q = NULL;
	if (made) {
		/* the last layer's last frequency, made negative */
		uint8_t *bad = malloc(n);
		memcpy(bad, b, n);
		size_t at = n - 8 - 8;
		double neg = -0.5;
		uint64_t u;
		memcpy(&u, &neg, 8);
		for (int i = 0; i < 8; i++)
			bad[at + i] = (uint8_t)(u >> (8 * i));
		wzc_profile_reseal(bad, n);
		wz_err e = wzc_profile_parse(bad, n, "bad", &q, &d);
		ok(e == WZ_ERR_CORRUPT && strstr(d.msg, "layer 1") && strstr(d.msg, "RoPE frequency 15"),
		   "a negative frequency is corrupt, naming layer and pair: %s", e ? d.msg : "read");
		wzc_profile_free(q);
		free(bad);
	}
	free(b);
	free(b0);
}

/* bf16 of a decoded layer */
static void to_bf16(const float *lat, const float *rope, int T, uint16_t *o)
{
	for (int t = 0; t < T; t++) {
		for (int k = 0; k < R; k++)
			o[(size_t)t * (R + P) + k] = wzc_bf16_from_f32(lat[(size_t)t * R + k]);
		for (int k = 0; k < P; k++)
			o[(size_t)t * (R + P) + R + k] = wzc_bf16_from_f32(rope[(size_t)t * P + k]);
	}
}

static void container(wzc_codec *c, const wzc_window *w)
{
	wzc_wzx *x = NULL;
	wz_diag d;
	if (wzc_wzx_of_codec(c, &x, &d)) {
		ok(0, "wzx of the codec: %s", d.msg);
		return;
	}
	int T = w->T;
	size_t B = wzc_wzx_record_bytes(x), per = (size_t)T * B, n = 0;
	size_t cap = wzc_wzx_bound(L, T, R, P, B, WZC_MODEL_MAX), vals = (size_t)L * T * (R + P);
	uint8_t *rec = malloc(per * L), *buf = malloc(cap);
	uint16_t *ref = malloc(2 * vals), *fast = malloc(2 * vals), *slow = malloc(2 * vals);
	float *lat = malloc(sizeof(float) * (size_t)T * R), *rope = malloc(sizeof(float) * (size_t)T * P);
	int64_t *pos = malloc(sizeof *pos * (size_t)T);
	wzc_wzx_reader *r = NULL;
	int good = rec && buf && ref && fast && slow && lat && rope && pos;
	for (int t = 0; good && t < T; t++)
		pos[t] = t;
	for (int l = 0; good && l < L; l++) {
		good = !wzc_encode_layer_at(c, l, T, w->latent + (size_t)l * T * R,
					    w->rope + (size_t)l * T * P, pos, rec + per * l, &d);
		if (wzc_decode_layer_at(c, l, T, rec + per * l, pos, lat, rope))
			ok(0, "layer %d decoded (out of memory?)", l);
		to_bf16(lat, rope, T, ref + (size_t)l * T * (R + P));
	}
	good = good && !wzc_wzx_write(x, T, rec, buf, cap, &n, NULL, &d) &&
	       !wzc_wzx_open(buf, n, "rope", &r, &d);
	long blocks = good ? (long)L * wzc_wzx_reader_info(r)->blocks_per_layer : 0;
	good = good && !wzc_wzx_restore(r, x, WZC_RESTORE_BF16, 0, blocks, 2, fast, &d) &&
	       !wzc_wzx_restore(r, x, WZC_RESTORE_BF16_RECORDS, 0, blocks, 1, slow, &d);
	ok(good && !memcmp(fast, slow, 2 * vals) && !memcmp(fast, ref, 2 * vals),
	   "a container restores the same bf16 by both paths, the records decoded at positions 0..T-1%s%s",
	   good ? "" : ": ", good ? "" : d.msg);
	wzc_wzx_reader_free(r);
	free(rec);
	free(buf);
	free(ref);
	free(fast);
	free(slow);
	free(lat);
	free(rope);
	free(pos);
	wzc_wzx_free(x);
}

int main(void)
{
	rotation();
	frequencies();
	query_moment();
	wzt_cache_trace *cal = make(WZT_FAMILY_MLA_B, "calibration", 1, 2048, 0);
	wzt_cache_trace *test = make(WZT_FAMILY_MLA_B, "test", 2, 1024, 0);
	wzt_cache_trace *far = make(WZT_FAMILY_MLA_B, "test", 3, 1024, 30000);
	wzt_cache_trace *ical = make(WZT_FAMILY_IID, "calibration", 1, 2048, 0);
	if (!cal || !test || !far || !ical)
		return ok(0, "synthetic windows"), tap_done();
	wzc_profile *undo = prepared(cal, 1), *plain = prepared(cal, 0), *iid = prepared(ical, 1);
	if (!undo || !plain || !iid)
		return ok(0, "prepared"), tap_done();
	double g0 = wzc_profile_rope_gain_db(undo, 0), g1 = wzc_profile_rope_gain_db(undo, 1);
	double gi = fmax(fabs(wzc_profile_rope_gain_db(iid, 0)), fabs(wzc_profile_rope_gain_db(iid, 1)));
	ok(g0 > 1.5 && g1 > 1.5, "mla-b gains from undoing RoPE: %.2f and %.2f dB", g0, g1);
	ok(gi < 0.3, "iid (no RoPE, no structure) gains next to nothing: %.3f dB", gi);
	ok(wzc_profile_rope_gain_db(plain, 0) == 0 && !wzc_profile_undoes_rope(plain, 0),
	   "a profile without frequencies undoes nothing");
	double fbad[P / 2];
	for (int i = 0; i < P / 2; i++)
		fbad[i] = i == 3 ? -1 : 0.1;
	wzc_prepare_opts o;
	wzc_prepare_opts_default(&o);
	o.rope_freq = fbad;
	o.rope_pairs = P / 2;
	wzc_window cw = window_of(cal);
	const wzc_window *cws[1] = { &cw };
	wzc_profile *none = NULL;
	wz_diag d;
	ok(wzc_prepare(cws, 1, &o, &none, &d) == WZ_ERR_USAGE && strstr(d.msg, "frequency 3"),
	   "a negative frequency is refused: %s", d.msg);
	o.rope_pairs = P;
	ok(wzc_prepare(cws, 1, &o, &none, &d) == WZ_ERR_USAGE, "as are too many: %s", d.msg);

	file_roundtrip(undo, plain);

	/* only layer 1 undoes RoPE: layer 0 is the plain profile's, bit for bit */
	unsigned char only1[L] = { 0, 1 };
	double f1[P / 2];
	wzc_rope_freqs(P, 10000, 1, 1, 32, 1, f1);
	wzc_prepare_opts_default(&o);
	o.rope_freq = f1;
	o.rope_pairs = P / 2;
	o.rope_layers = only1;
	wzc_profile *part = NULL;
	ok(!wzc_prepare(cws, 1, &o, &part, &d) && part->version == 6 &&
	   !wzc_profile_undoes_rope(part, 0) && wzc_profile_undoes_rope(part, 1) &&
	   !memcmp(part->rope[0].basis, plain->rope[0].basis, sizeof(float) * P * P) &&
	   !memcmp(part->rope[0].var, plain->rope[0].var, sizeof(float) * P) &&
	   !memcmp(part->rope[1].basis, undo->rope[1].basis, sizeof(float) * P * P),
	   "a layer left out of rope_layers keeps the position part as cached (layer 0 the plain "
	   "profile's, layer 1 the undone one's)");
	wzc_profile_free(part);

	/* layers fitted on one thread and on several: the same bytes; the
	 * progress calls count every layer once, in order */
	uint8_t *bytes[2] = { NULL, NULL };
	size_t nbytes[2] = { 0, 0 };
	int seen[3] = { 0, 0, 0 }; /* calls, calls in order, last total */
	for (int k = 0; k < 2; k++) {
		wzc_prepare_opts_default(&o);
		o.rope_freq = f1;
		o.rope_pairs = P / 2;
		o.threads = k ? 3 : 1;
		o.progress = k ? count_progress : NULL;
		o.progress_ud = seen;
		wzc_profile *pk = NULL;
		if (!wzc_prepare(cws, 1, &o, &pk, &d))
			wzc_profile_serialize(pk, &bytes[k], &nbytes[k], &d);
		wzc_profile_free(pk);
	}
	ok(bytes[0] && bytes[1] && nbytes[0] == nbytes[1] && !memcmp(bytes[0], bytes[1], nbytes[0]),
	   "the profile fitted on 1 thread and on 3 is the same, byte for byte (%zu bytes)", nbytes[0]);
	ok(seen[0] == L && seen[1] == L && seen[2] == L,
	   "progress: %d calls, %d in order, of %d layers", seen[0], seen[1], seen[2]);
	free(bytes[0]);
	free(bytes[1]);

	wzc_window tw = window_of(test), fw = window_of(far);
	wzc_codec *cu = codec_of("wz-5.44", undo), *cp = codec_of("wz-5.44", plain);
	double ru, rp, rf, ku, kp, kf;
	double nu = nmse_of(&tw, cu, &ru, &ku), np = nmse_of(&tw, cp, &rp, &kp);
	double nf = nmse_of(&fw, cu, &rf, &kf);
	/* what undoing RoPE saves on the position part the plan spends where
	 * the weights say: the position part, the KL and the nmse all fall
	 * (docs/wz-format.md has the figures at DeepSeek's shape) */
	ok(ru < rp && ku < kp && nu < np,
	   "wz-5.44 on an mla-b test window, undoing RoPE and not: position part %.4g, %.4g; "
	   "attention KL %.4g, %.4g; nmse %.4g, %.4g", ru, rp, ku, kp, nu, np);
	ok(nf < 1.2 * nu && rf < 1.5 * ru,
	   "30,000 positions past the calibration, the same quality (nmse %.4g, position part %.4g; "
	   "at 0: %.4g, %.4g)", nf, rf, nu, ru);

	/* the records of tokens at 30,000.. decoded at the wrong positions */
	int T = far->T;
	size_t B = wzc_codec_record_bytes(cu);
	uint8_t *rec = malloc(B * T), *rec0 = malloc(B * T), *rec1 = malloc(B * T);
	float *lat = malloc(sizeof(float) * (size_t)T * R), *rope = malloc(sizeof(float) * (size_t)T * P);
	int64_t *shifted = malloc(sizeof *shifted * (size_t)T), *zero = malloc(sizeof *zero * (size_t)T);
	if (rec && rec0 && rec1 && lat && rope && shifted && zero) {
		for (int t = 0; t < T; t++) {
			shifted[t] = far->positions[t] + 1;
			zero[t] = t;
		}
		double err[2] = { 0, 0 }, en = 0;
		wzc_encode_layer_at(cu, 1, T, far->latent + (size_t)T * R, far->rope + (size_t)T * P,
				    far->positions, rec, &d);
		for (int k = 0; k < 2; k++) {
			if (wzc_decode_layer_at(cu, 1, T, rec, k ? shifted : far->positions, lat, rope))
				ok(0, "layer %d decoded (out of memory?)", 1);
			for (size_t i = 0; i < (size_t)T * P; i++) {
				double e = rope[i] - far->rope[(size_t)T * P + i];
				err[k] += e * e;
				en += k ? 0 : (double)far->rope[(size_t)T * P + i] * far->rope[(size_t)T * P + i];
			}
		}
		ok(err[1] > 100 * err[0], "decoded one position off, the position part is wrong "
		   "(nmse %.3g against %.3g)", err[1] / en, err[0] / en);
		wzc_encode_layer(cu, 0, T, far->latent, far->rope, rec0, &d);
		wzc_encode_layer_at(cu, 0, T, far->latent, far->rope, zero, rec1, &d);
		ok(!memcmp(rec0, rec1, B * T), "wzc_encode_layer is wzc_encode_layer_at at 0..n-1");
		float *lat2 = malloc(sizeof(float) * (size_t)T * R), *rope2 = malloc(sizeof(float) * (size_t)T * P);
		if (lat2 && rope2) {
			if (wzc_decode_layer(cu, 0, T, rec0, lat, rope))
				ok(0, "layer %d decoded (out of memory?)", 0);
			if (wzc_decode_layer_at(cu, 0, T, rec0, zero, lat2, rope2))
				ok(0, "layer %d decoded (out of memory?)", 0);
			float one_l[R], one_r[P];
			wz_err alone = wzc_decode_token(cu, 0, rec0, one_l, one_r);
			ok(!memcmp(lat, lat2, sizeof(float) * T * R) && !memcmp(rope, rope2, sizeof(float) * T * P) &&
			   !alone && !memcmp(one_r, rope, sizeof one_r),
			   "and so are the decoders (a token alone: position 0)");
		}
		free(lat2);
		free(rope2);
	}
	free(rec);
	free(rec0);
	free(rec1);
	free(lat);
	free(rope);
	free(shifted);
	free(zero);

	wzc_wz_flat *flat = NULL, *flat0 = NULL;
	wzc_codec *cp0 = codec_of("wz-5.44", plain);
	ok(!wzc_wz_flatten(cu, 0, &flat, &d) && flat->rope_undone == 1 && cp0 &&
	   !wzc_wz_flatten(cp0, 0, &flat0, &d) && flat0->rope_undone == 0,
	   "the flat plan says when it decodes the position part rotated back (the GPU upload "
	   "refuses those)");
	wzc_wz_flat_free(flat);
	wzc_wz_flat_free(flat0);
	wzc_codec_free(cp0);
	wzc_codec *cx = codec_of("wzx-5.4", undo);
	if (cx)
		container(cx, &tw);
	wzc_codec_free(cx);

	wzc_codec_free(cu);
	wzc_codec_free(cp);
	wzc_profile_free(undo);
	wzc_profile_free(plain);
	wzc_profile_free(iid);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	wzt_cache_trace_free(far);
	wzt_cache_trace_free(ical);
	return tap_done();
}
