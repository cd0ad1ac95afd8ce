/* The quality must-shows of the wz GPU format (issue 3) on synthetic test
 * windows never read by prepare: against fp8-mix and int4-g64 on mla-a and
 * mla-b, and the distance to the Gaussian rate-distortion bound on iid.
 * Numbers are printed as TAP comments whether or not a check passes. */
#include "tests/tap.h"

#include <string.h>

#include "codec/measure/metrics.h"
#include "codec/profile/profile.h"
#include "tests/codec/window.h"

#define NCAL 2
#define NTEST 2
#define NBOOT 200

static const char *const formats[] = { "fp8-mix", "int4-g64", "wz-4.97", "wz-5.44", "wz-6.31" };
#define NF 5

static wzc_errors *measure(const wzc_window *w, const wzc_profile *prof, const char *name)
{
	wzc_format f;
	wzc_codec *c;
	wzc_errors *e = NULL;
	wz_diag d;
	if (wzc_format_parse(name, &f, &d) || wzc_codec_new(&f, w->L, w->R, w->P, prof, &c, &d)) {
		printf("# %s: %s\n", name, d.msg);
		return NULL;
	}
	if (wzc_measure(w, c, &e, &d))
		printf("# measure %s: %s\n", name, d.msg);
	wzc_codec_free(c);
	return e;
}

static int same_doubles(const double *a, const double *b, size_t n)
{
	return (!a && !b) || (a && b && !memcmp(a, b, sizeof(double) * n));
}

/* The exact attention held for some layers (wzc_exact, as `codec measure`
 * holds it for the formats of a window) gives the same errors, bit for
 * bit, as each format computing it: layer 0 held, the others computed. */
static void exact_held(const wzc_window *w, const wzc_profile *prof, const char *fname, int i,
		       const char *name, const wzc_errors *alone)
{
	wzc_exact *x = wzc_exact_new(w);
	if (!w->Q) {
		ok(!x, "%s test%d: no queries, no exact attention to hold", fname, i);
		return;
	}
	wz_diag d;
	wzc_format f;
	wzc_codec *c = NULL;
	wzc_errors *e = NULL;
	if (!ok(x && wzc_exact_layer(x, w, 0, &d) == WZ_OK && wzc_format_parse(name, &f, &d) == WZ_OK &&
		    wzc_codec_new(&f, w->L, w->R, w->P, prof, &c, &d) == WZ_OK &&
		    wzc_measure_exact(w, c, x, 0, 0, 0, 1, &e, &d) == WZ_OK,
		"%s test%d %s: measured with layer 0's exact attention held", fname, i, name))
		printf("#   %s\n", d.msg);
	else
		ok(e->bytes == alone->bytes && e->L == w->L &&
			   same_doubles(e->err[0], alone->err[0], (size_t)w->T) &&
			   same_doubles(e->err[1], alone->err[1], (size_t)w->T) &&
			   same_doubles(e->energy[0], alone->energy[0], (size_t)w->T) &&
			   same_doubles(e->kl, alone->kl, (size_t)w->Q) &&
			   same_doubles(e->out_err, alone->out_err, (size_t)w->Q),
		   "%s test%d %s: the same errors, bit for bit, as computing it", fname, i, name);
	/* each query's probabilities over the tokens it sees, and its outputs */
	size_t want = 0;
	for (int q = 0; q < w->Q; q++) {
		int64_t n = w->q_index[q] < 0 ? 0 : w->q_index[q] >= w->T ? w->T : w->q_index[q] + 1;
		want += (size_t)w->H * ((size_t)n + (size_t)w->R);
	}
	ok(wzc_exact_layer_bytes(x) == sizeof(double) * want, "%s test%d: a held layer is %zu bytes",
	   fname, i, sizeof(double) * want);
	wzc_errors_free(e);
	wzc_codec_free(c);
	wzc_exact_free(x);
}

static void family(wzt_family fam, int L, int T, int Q, int H)
{
	const char *fname = wzt_family_name(fam);
	wzt_cache_trace *cal[NCAL], *test[NTEST];
	wzc_window cw[NCAL];
	const wzc_window *cp[NCAL];
	for (int i = 0; i < NCAL; i++) {
		cal[i] = synth(fam, L, T, Q, H, 4096 * i, 100 + i, "calibration");
		if (!cal[i])
			return;
		cw[i] = window_of(cal[i]);
		cp[i] = &cw[i];
	}
	wzc_profile *prof = NULL;
	wz_diag d;
	if (!ok(wzc_prepare(cp, NCAL, NULL, &prof, &d) == WZ_OK, "%s: prepare", fname)) {
		printf("#   %s\n", d.msg);
		return;
	}
	for (int i = 0; i < NTEST; i++) {
		/* One test window at the start of a sequence (with the sink), one
		 * far from the calibration positions (100k context). */
		test[i] = synth(fam, L, T, Q, H, 100000 * i, 200 + i, "test");
		if (!test[i])
			return;
		wzc_window w = window_of(test[i]);
		wzc_errors *e[NF];
		for (int f = 0; f < NF; f++)
			e[f] = measure(&w, prof, formats[f]);
		if (!e[0] || !e[1] || !e[2] || !e[3] || !e[4])
			return;
		exact_held(&w, prof, fname, i, formats[0], e[0]);
		exact_held(&w, prof, fname, i, formats[3], e[3]);
		for (int f = 0; f < NF; f++) {
			wzc_ci n = wzc_metric_ci(e[f], WZC_M_NMSE, NBOOT, 1);
			wzc_ci k = wzc_metric_ci(e[f], WZC_M_KL, NBOOT, 1);
			wzc_ci r = wzc_ratio_ci(e[f], e[0], WZC_M_NMSE, NBOOT, 1);
			wzc_ci rk = wzc_ratio_ci(e[f], e[0], WZC_M_KL, NBOOT, 1);
			printf("# %s test%d %-9s %.2f b/v  nmse %.3g [%.3g, %.3g] (%.1f dB, latent %.3g, rope %.3g)"
			       "  kl %.3g [%.3g, %.3g]  vs fp8-mix: nmse %.3fx [%.3f, %.3f], kl %.3fx [%.3f, %.3f]"
			       ", tokens better %.0f%%\n",
			       fname, i, formats[f], e[f]->bits_per_value, n.value, n.lo, n.hi,
			       wzc_sqnr_db(n.value), wzc_metric_ci(e[f], WZC_M_NMSE_LATENT, 0, 1).value,
			       wzc_metric_ci(e[f], WZC_M_NMSE_ROPE, 0, 1).value, k.value, k.lo, k.hi,
			       r.value, r.lo, r.hi, rk.value, rk.lo, rk.hi,
			       100 * wzc_share_better(e[f], e[0], WZC_M_NMSE));
		}
		double b544;
		if (!wzc_rd_bound_nmse(&w, e[3]->bits_per_value, &b544, &d)) {
			double gap = 10 * log10(wzc_metric_ci(e[3], WZC_M_NMSE, 0, 1).value / b544);
			printf("# %s test%d wz-5.44: %.2f dB from the Gaussian bound at %.3f b/v\n", fname,
			       i, gap, e[3]->bits_per_value);
			if (fam == WZT_FAMILY_IID)
				ok(gap <= 5.0, "iid test%d: wz-5.44 within 5.0 dB of the bound (%.2f dB)", i,
				   gap);
		}
		double n_fp8 = wzc_metric_ci(e[0], WZC_M_NMSE, 0, 1).value;
		double n_int4 = wzc_metric_ci(e[1], WZC_M_NMSE, 0, 1).value;
		double k_fp8 = wzc_metric_ci(e[0], WZC_M_KL, 0, 1).value;
		double k_int4 = wzc_metric_ci(e[1], WZC_M_KL, 0, 1).value;
		double n497 = wzc_metric_ci(e[2], WZC_M_NMSE, 0, 1).value;
		double n544 = wzc_metric_ci(e[3], WZC_M_NMSE, 0, 1).value;
		double n631 = wzc_metric_ci(e[4], WZC_M_NMSE, 0, 1).value;
		double k497 = wzc_metric_ci(e[2], WZC_M_KL, 0, 1).value;
		double k544 = wzc_metric_ci(e[3], WZC_M_KL, 0, 1).value;
		double k631 = wzc_metric_ci(e[4], WZC_M_KL, 0, 1).value;
		if (fam == WZT_FAMILY_MLA_B) {
			ok(n544 <= n_fp8, "mla-b test%d: wz-5.44 nmse <= fp8-mix (%.3fx)", i, n544 / n_fp8);
			ok(k544 <= k_fp8, "mla-b test%d: wz-5.44 KL <= fp8-mix (%.3fx)", i, k544 / k_fp8);
			ok(n631 <= 0.5 * n_fp8, "mla-b test%d: wz-6.31 nmse <= fp8-mix / 2 (%.3fx)", i,
			   n631 / n_fp8);
			ok(k631 <= 0.5 * k_fp8, "mla-b test%d: wz-6.31 KL <= fp8-mix / 2 (%.3fx)", i,
			   k631 / k_fp8);
		}
		if (fam != WZT_FAMILY_IID) {
			ok(n497 <= n_int4 / 3, "%s test%d: wz-4.97 nmse <= int4-g64 / 3 (%.3fx)", fname, i,
			   n497 / n_int4);
			ok(k497 <= k_int4 / 3, "%s test%d: wz-4.97 KL <= int4-g64 / 3 (%.3fx)", fname, i,
			   k497 / k_int4);
		}
		for (int f = 0; f < NF; f++)
			wzc_errors_free(e[f]);
		wzt_cache_trace_free(test[i]);
	}
	wzc_profile_free(prof);
	for (int i = 0; i < NCAL; i++)
		wzt_cache_trace_free(cal[i]);
}

/* The bound under a position cap on a spectrum worked by hand: 4 latent
 * and 2 position values of unit variance, 2 bits a value (12 bits a
 * token).  Unconstrained, every value gets 2 bits and loses 2^-4 (0.375 a
 * token).  Held at 2^-6 each, the position part takes 6 bits and the
 * latent the other 6 (1.5 bits a value, 2^-3 each): 4/8 + 2/64 =
 * 0.53125.  Held at 2^-14 each it would need 14 bits, more than there
 * are: it gets all 12 (2^-12 each) and the latent keeps its variance,
 * 4 + 2/4096. */
static void capped_bound(void)
{
	double lam[6] = { 1, 1, 1, 1, 1, 1 }, ll[4] = { 1, 1, 1, 1 }, lp[2] = { 1, 1 }, le[1] = { 6 };
	wzc_spectrum sp = { .L = 1, .n = 6, .T = 1, .R = 4, .P = 2, .lam = lam, .lam_latent = ll,
			    .lam_rope = lp, .energy = 6, .layer_energy = le };
	float none[1] = { 0 }, loose[1] = { 2.0f / 16 }, mid[1] = { 2.0f / 64 }, tight[1] = { 2.0f / 16384 };
	double joint = wzc_spectrum_bound_nmse(&sp, 2);
	is_double(joint, 0.375 / 6, 1e-9, "the joint bound: 2^-4 a value");
	is_double(wzc_spectrum_capped_bound_nmse(&sp, -1, 2, none), joint, 1e-12, "no cap: the joint bound");
	is_double(wzc_spectrum_capped_bound_nmse(&sp, -1, 2, loose), joint, 1e-9,
		  "a cap at the unconstrained loss does not bind");
	is_double(wzc_spectrum_capped_bound_nmse(&sp, -1, 2, mid), 0.53125 / 6, 1e-9,
		  "held at 2^-6 a value: the latent gets 1.5 bits (0.53125 a token)");
	is_double(wzc_spectrum_capped_bound_nmse(&sp, 0, 2, mid), 0.53125 / 6, 1e-9, "the same for layer 0");
	is_double(wzc_spectrum_capped_bound_nmse(&sp, -1, 2, tight), (4 + 2.0 / 4096) / 6, 1e-9,
		  "a cap beyond the rate: every bit to the position part");
	wzc_spectrum joint_only = sp;
	joint_only.lam_latent = joint_only.lam_rope = NULL;
	is_double(wzc_spectrum_capped_bound_nmse(&joint_only, -1, 2, mid), joint, 1e-12,
		  "without the parts' spectra: the joint bound");
}

/* Twelve heads: a block of eight and one of four, so the held layers'
 * rows of heads past the first block are read too. */
static void twelve_heads(void)
{
	wzt_cache_trace *t = synth(WZT_FAMILY_MLA_A, 2, 512, 4, 12, 0, 300, "test");
	if (!t)
		return;
	wzc_window w = window_of(t);
	wzc_errors *e = measure(&w, NULL, "int4-g64");
	if (ok(e != NULL, "twelve heads: int4-g64 measured"))
		exact_held(&w, NULL, "mla-a", 9, "int4-g64", e);
	/* a holder is for the window it was made for */
	wzc_exact *x = wzc_exact_new(&w);
	wzc_window other = w;
	other.H = 8;
	wz_diag d;
	ok(x && wzc_exact_layer(x, &other, 0, &d) == WZ_ERR_USAGE,
	   "twelve heads: a holder refuses a window of another shape");
	wzc_exact_free(x);
	wzc_errors_free(e);
	wzt_cache_trace_free(t);
}

int main(void)
{
	capped_bound();
	twelve_heads();
	family(WZT_FAMILY_MLA_B, 2, 1024, 16, 8);
	family(WZT_FAMILY_MLA_A, 2, 1024, 16, 8);
	/* iid: one layer of many tokens, so the window's measured covariance
	 * (which the bound uses) is close to the true one. */
	family(WZT_FAMILY_IID, 1, 4096, 0, 0);
	return tap_done();
}
