/* wze's fast paths against its reference (docs/wze-format.md, "Speed"): on
 * every synthetic family and every rate wze-2 to wze-8, the fast decoder
 * gives the reference decoder's values bit for bit on records the encoder
 * made, on the same records with a byte flipped and on random ones, and
 * the fast encoder gives the reference encoder's records byte for byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/formats/format.h"
#include "codec/profile/profile.h"
#include "codec/wze/wze.h"
#include "tests/codec/window.h"
#include "tests/tap.h"

enum { L = 2, R = 128, P = 32, Q = 8, H = 4, TCAL = 1024, TENC = 48, NRAND = 400 };

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static wzt_cache_trace *make(wzt_family fam, const char *split, uint64_t ws, int T)
{
	wzt_synth_params sp = synth_params(fam, L, T, 0, ws, split);
	sp.R = R;
	sp.P = P;
	sp.Q = Q;
	sp.H = H;
	return synth_with(&sp);
}

/* The bytes of a wze record at `rate` bits a value, from a codec. */
static size_t record_bytes(const wzc_profile *p, double rate)
{
	char name[32];
	snprintf(name, sizeof name, "wze-%g", rate);
	wzc_format fmt;
	wzc_codec *c = NULL;
	wz_diag d;
	if (wzc_format_parse(name, &fmt, &d) || wzc_codec_new(&fmt, p->L, p->R, p->P, p, &c, &d)) {
		printf("# %s: %s\n", name, d.msg);
		return 0;
	}
	size_t b = wzc_codec_record_bytes(c);
	wzc_codec_free(c);
	return b;
}

/* Both decoders on n records of a layer: 1 where every value is the same
 * bit for bit (the outputs start from different garbage). */
static int same_decode(const wzc_wze_plan *pl, int layer, int n, const uint8_t *rec,
		       float *buf /* 2 n (R + P) floats */)
{
	size_t nl = (size_t)n * R, np = (size_t)n * P;
	float *l0 = buf, *r0 = l0 + nl, *l1 = r0 + np, *r1 = l1 + nl;
	memset(buf, 0x5a, sizeof(float) * (nl + np));
	memset(l1, 0xa5, sizeof(float) * (nl + np));
	wz_err e0 = wzc_wze_decode_layer(pl, layer, n, rec, l0, r0);
	wz_err e1 = wzc_wze_decode_layer_fast(pl, layer, n, rec, l1, r1);
	return !e0 && !e1 && !memcmp(l0, l1, sizeof(float) * nl) &&
	       !memcmp(r0, r1, sizeof(float) * np);
}

/* One family's profile at every rate; what the checks counted goes to
 * the totals. */
static void family(const char *label, const wzc_profile *p, const wzt_cache_trace *test,
		   uint64_t *seed, int *bad_enc, int *bad_dec, long *nrec)
{
	for (int rate = 2; rate <= 8; rate++) {
		size_t B = record_bytes(p, rate);
		wzc_wze_plan *pl = NULL;
		wz_diag d;
		if (!B || wzc_wze_plan_new(p, B, &pl, &d)) {
			ok(0, "%s wze-%d: plan (%s)", label, rate, B ? d.msg : "no codec");
			continue;
		}
		int nmax = TENC > NRAND ? TENC : NRAND;
		uint8_t *ref = malloc(B * TENC), *fast = malloc(B * TENC), *rnd = malloc(B * nmax);
		float *buf = malloc(sizeof(float) * 2 * (size_t)nmax * (R + P));
		int enc_ok = 1, dec_ok = 1;
		for (int l = 0; ref && fast && rnd && buf && l < L; l++) {
			const float *lat = test->latent + (size_t)l * test->T * R;
			const float *rope = test->rope + (size_t)l * test->T * P;
			memset(fast, 0xa5, B * TENC);
			wzc_wze_encode_layer(pl, l, TENC, lat, rope, ref);
			wzc_wze_encode_layer_fast(pl, l, TENC, lat, rope, fast);
			enc_ok &= !memcmp(ref, fast, B * TENC);
			/* the encoder's records, then each with one byte flipped */
			dec_ok &= same_decode(pl, l, TENC, ref, buf);
			for (int t = 0; t < TENC; t++)
				ref[(size_t)t * B + next(seed) % B] ^= (uint8_t)(1 + next(seed) % 255);
			dec_ok &= same_decode(pl, l, TENC, ref, buf);
			/* random records, the first all zeros and the second all ones */
			for (size_t i = 0; i < B * NRAND; i++)
				rnd[i] = (uint8_t)(next(seed) >> 32);
			memset(rnd, 0, B);
			memset(rnd + B, 0xff, B);
			dec_ok &= same_decode(pl, l, NRAND, rnd, buf);
			*nrec += 2 * TENC + NRAND;
		}
		if (!ref || !fast || !rnd || !buf)
			enc_ok = dec_ok = 0;
		if (!enc_ok)
			printf("# %s wze-%d: the fast encoder's records differ\n", label, rate);
		if (!dec_ok)
			printf("# %s wze-%d: the fast decoder's values differ\n", label, rate);
		*bad_enc += !enc_ok;
		*bad_dec += !dec_ok;
		free(ref);
		free(fast);
		free(rnd);
		free(buf);
		wzc_wze_plan_free(pl);
	}
}

int main(void)
{
	static const struct {
		wzt_family fam;
		const char *name;
		int rope; /* -1: no RoPE undone; else prepare_rope's predict */
	} fams[] = {
		{ WZT_FAMILY_IID, "iid", -1 },        { WZT_FAMILY_MLA_A, "mla-a", -1 },
		{ WZT_FAMILY_MLA_B, "mla-b", -1 },    { WZT_FAMILY_V4_C4, "v4-c4", -1 },
		{ WZT_FAMILY_V4_C128, "v4-c128", -1 }, { WZT_FAMILY_MLA_P, "mla-p", 0 },
		{ WZT_FAMILY_MLA_P, "mla-p predicted", 2 },
	};
	uint64_t seed = 0x2545F4914F6CDD1Dull;
	for (size_t f = 0; f < sizeof fams / sizeof fams[0]; f++) {
		wzt_cache_trace *cal = make(fams[f].fam, "calibration", 10 + f, TCAL);
		wzt_cache_trace *test = make(fams[f].fam, "test", 20 + f, TENC);
		wzc_profile *p = NULL;
		if (cal && fams[f].rope >= 0) {
			p = prepare_rope(cal, fams[f].rope);
		} else if (cal) {
			wzc_window w = window_of(cal);
			const wzc_window *ws[1] = { &w };
			wzc_prepare_opts o;
			wzc_prepare_opts_default(&o);
			o.threads = 1;
			wz_diag d;
			if (wzc_prepare(ws, 1, &o, &p, &d))
				printf("# prepare: %s\n", d.msg);
		}
		if (ok(test && p && (fams[f].rope != 2 || wzc_profile_predicts(p, 0)),
		       "%s: windows and profile", fams[f].name)) {
			trace_bf16(test);
			int bad_enc = 0, bad_dec = 0;
			long nrec = 0;
			family(fams[f].name, p, test, &seed, &bad_enc, &bad_dec, &nrec);
			ok(bad_dec == 0,
			   "%s: the fast decoder's values are the reference's bit for bit at wze-2 to "
			   "wze-8 (%ld records: coded, damaged, random)",
			   fams[f].name, nrec);
			ok(bad_enc == 0,
			   "%s: the fast encoder's records are the reference's at wze-2 to wze-8 (%d "
			   "tokens a layer)",
			   fams[f].name, TENC);
		}
		wzc_profile_free(p);
		wzt_cache_trace_free(cal);
		wzt_cache_trace_free(test);
	}
	return tap_done();
}
