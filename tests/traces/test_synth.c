/* Tests that the synthetic families follow their written model
 * (docs/synthetic-cache.md): eigenvalue decay, tails, per-layer scales, RoPE,
 * the attention sink, queries; and that a seed gives the same bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/tap.h"
#include "tests/traces/linalg.h"
#include "traces/cache_trace.h"
#include "traces/synth_cache.h"

static wzt_cache_trace *synth(wzt_family family, int L, int T, int R, int Q, int H,
			      uint64_t window_seed)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = family;
	p.seed = 42;
	p.L = L;
	p.T = T;
	p.R = R;
	p.Q = Q;
	p.H = H;
	p.window_seed = window_seed;
	wzt_cache_trace *t = NULL;
	wz_diag diag;
	if (wzt_synth_cache(&p, &t, &diag)) {
		printf("# synth failed: %s\n", diag.msg);
		exit(1);
	}
	return t;
}

/* Tokens 1..T-1 of one layer (the sink left out), channels standardized
 * so per-channel gains do not bend the spectrum. */
static float *layer_rows(const float *v, int T, int n, int layer, int standardize)
{
	float *x = malloc(sizeof *x * (size_t)(T - 1) * n);
	memcpy(x, v + ((size_t)layer * T + 1) * n, sizeof *x * (size_t)(T - 1) * n);
	if (!standardize)
		return x;
	for (int i = 0; i < n; i++) {
		double ss = 0;
		for (int t = 0; t < T - 1; t++)
			ss += (double)x[(size_t)t * n + i] * x[(size_t)t * n + i];
		double sd = sqrt(ss / (T - 1));
		for (int t = 0; t < T - 1; t++)
			x[(size_t)t * n + i] = (float)(x[(size_t)t * n + i] / sd);
	}
	return x;
}

static double spectrum_slope(const float *rows, int m, int n, int k0, int k1)
{
	double *cov = malloc(sizeof *cov * (size_t)n * n), *eig = malloc(sizeof *eig * (size_t)n);
	sample_cov(rows, m, n, cov);
	sym_eigen(cov, n, eig, NULL);
	double slope = loglog_slope(eig, k0, k1);
	free(cov);
	free(eig);
	return slope;
}

/* Mean excess kurtosis of the data projected on its principal directions
 * k0..k1-1: the model's Student-t components show there (each channel
 * mixes all components, which hides the tails in the channels). */
static double principal_kurtosis(const float *rows, int m, int n, int k0, int k1)
{
	double *cov = malloc(sizeof *cov * (size_t)n * n), *eig = malloc(sizeof *eig * (size_t)n);
	double *vec = malloc(sizeof *vec * (size_t)n * n);
	sample_cov(rows, m, n, cov);
	sym_eigen(cov, n, eig, vec);
	double sum = 0;
	for (int k = k0; k < k1; k++) {
		double m2 = 0, m4 = 0;
		for (int t = 0; t < m; t++) {
			double p = 0;
			for (int i = 0; i < n; i++)
				p += vec[(size_t)k * n + i] * rows[(size_t)t * n + i];
			m2 += p * p;
			m4 += p * p * p * p;
		}
		m2 /= m;
		m4 /= m;
		sum += m4 / (m2 * m2) - 3;
	}
	free(cov);
	free(eig);
	free(vec);
	return sum / (k1 - k0);
}

static double rms(const float *v, size_t n)
{
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (double)v[i] * v[i];
	return sqrt(ss / n);
}

static void test_spectrum(void)
{
	const struct { wzt_family family; double alpha; } cases[] = {
		{ WZT_FAMILY_IID, 0.0 }, { WZT_FAMILY_MLA_A, 0.7 }, { WZT_FAMILY_MLA_B, 1.0 } };
	double slopes[3], kurts[3];
	for (int c = 0; c < 3; c++) {
		int T = 4096, R = 128, P = 64;
		wzt_cache_trace *t = synth(cases[c].family, 2, T, R, 0, 0, 0);
		const char *name = wzt_family_name(cases[c].family);
		/* The model's power law is that of x before RMSNorm and the
		 * gains; the norm shrinks tokens whose largest components are
		 * large, so the fit skips the two largest and allows the latent
		 * to be up to 0.15 flatter than x (R = 128: measured about 0.06
		 * flatter for mla-a, 0.12 for mla-b). */
		float *x = layer_rows(t->latent, T, R, 1, 1);
		double slope = slopes[c] = spectrum_slope(x, T - 1, R, 2, 34);
		ok(slope > -cases[c].alpha - 0.1 && slope < -cases[c].alpha + 0.15,
		   "%s: latent eigenvalues decay as k^-%.1f (measured slope %.3f over k = 3..34)",
		   name, cases[c].alpha, slope);
		/* Sample eigenvectors mix neighbouring components and the gains
		 * mix channels, both of which pull kurtosis toward the Gaussian's;
		 * the estimate's own noise is about 0.03. */
		double kurt = kurts[c] = principal_kurtosis(x, T - 1, R, 2, 12);
		if (cases[c].family == WZT_FAMILY_IID)
			ok(fabs(kurt) < 0.25, "iid: Gaussian along principal directions (excess "
					     "kurtosis %.2f)", kurt);
		else
			ok(kurt > 0.4, "%s: heavy tails along principal directions (excess kurtosis "
				       "%.2f; Student-t nu = %d)",
			   name, kurt, cases[c].family == WZT_FAMILY_MLA_A ? 6 : 4);
		free(x);
		/* RoPE undone with the documented rotation gives back the
		 * position part's own spectrum; pair norms are unchanged. */
		float *y = layer_rows(t->rope, T, P, 1, 0);
		double norm_err = 0;
		for (int tok = 0; tok < T - 1 && cases[c].family != WZT_FAMILY_IID; tok++) {
			float *v = &y[(size_t)tok * P], before[64];
			memcpy(before, v, sizeof before);
			wzt_rope_rotate(v, P, t->positions[tok + 1], 10000.0, 1);
			for (int i = 0; i < P / 2; i++) {
				double a = hypot(before[2 * i], before[2 * i + 1]);
				double b = hypot(v[2 * i], v[2 * i + 1]);
				if (fabs(a - b) > norm_err)
					norm_err = fabs(a - b) / (a + 1e-30);
			}
		}
		double rslope = spectrum_slope(y, T - 1, P, 0, 16);
		ok(fabs(rslope + cases[c].alpha) < 0.15,
		   "%s: position part before RoPE decays as k^-%.1f (measured %.3f)", name,
		   cases[c].alpha, rslope);
		if (cases[c].family != WZT_FAMILY_IID) {
			float *rotated = layer_rows(t->rope, T, P, 1, 0);
			double rot_slope = spectrum_slope(rotated, T - 1, P, 0, 16);
			ok(rot_slope > rslope + 0.1,
			   "%s: after RoPE the spectrum is flatter (%.3f vs %.3f): the rotation "
			   "really depends on position",
			   name, rot_slope, rslope);
			ok(norm_err < 1e-5, "%s: RoPE keeps every pair's norm (relative error %.2g)",
			   name, norm_err);
			free(rotated);
		}
		free(y);
		wzt_cache_trace_free(t);
	}
	ok(slopes[0] > slopes[1] && slopes[1] > slopes[2],
	   "decay steepens from iid to mla-a to mla-b");
	ok(kurts[0] < kurts[1] && kurts[1] < kurts[2], "tails grow from iid to mla-a to mla-b");
}

static void test_scales_and_sink(void)
{
	for (int f = 0; f < 3; f++) {
		wzt_family family = (wzt_family)f;
		const char *name = wzt_family_name(family);
		int L = 4, T = 512, R = 512, P = 64;
		wzt_cache_trace *t = synth(family, L, T, R, 8, 4, 0);
		double lo = INFINITY, hi = 0;
		for (int l = 0; l < L; l++) {
			double r = rms(&t->latent[(size_t)l * T * R], (size_t)T * R);
			lo = fmin(lo, r);
			hi = fmax(hi, r);
		}
		if (family == WZT_FAMILY_IID) {
			ok(hi / lo < 1.05 && fabs(lo - 1) < 0.05,
			   "iid: every layer has variance 1 (RMS %.3f..%.3f)", lo, hi);
		} else {
			ok(hi / lo > 30 && hi / lo < 300,
			   "%s: latent RMS spans about two decades across layers (%.1fx)", name,
			   hi / lo);
			/* The sink: position part several times larger than the others',
			 * latent the same in every window (a fixed direction). */
			double others = rms(&t->rope[(size_t)1 * P], (size_t)(T - 1) * P);
			double sink = rms(&t->rope[0], (size_t)P);
			ok(sink > 2.5 * others, "%s: sink position part %.1fx the others'", name,
			   sink / others);
			wzt_cache_trace *w2 = synth(family, L, T, R, 8, 4, 99);
			ok(!memcmp(t->latent, w2->latent, sizeof(float) * R),
			   "%s: the sink's latent is the same in another window", name);
			ok(memcmp(&t->latent[R], &w2->latent[R], sizeof(float) * R),
			   "%s: other tokens differ between windows", name);
			wzt_cache_trace_free(w2);
		}
		/* Attention: the sink gets far more than a uniform share. */
		double share = 0, lsd = 0;
		int n = 0;
		for (int q = 0; q < t->Q; q++)
			for (int h = 0; h < t->H; h++) {
				const float *ql = &t->q_latent[(((size_t)1 * t->Q + q) * t->H + h) * R];
				const float *qr = &t->q_rope[(((size_t)1 * t->Q + q) * t->H + h) * P];
				int ctx = (int)t->q_index[q] + 1;
				double *logit = malloc(sizeof *logit * (size_t)ctx), mx = -INFINITY, z = 0;
				double s1 = 0, s2 = 0;
				for (int k = 0; k < ctx; k++) {
					const float *c = &t->latent[((size_t)1 * T + k) * R];
					const float *y = &t->rope[((size_t)1 * T + k) * P];
					double lat = 0, pos = 0;
					for (int i = 0; i < R; i++)
						lat += (double)ql[i] * c[i];
					for (int i = 0; i < P; i++)
						pos += (double)qr[i] * y[i];
					logit[k] = t->softmax_scale * (lat + pos);
					if (k > 0) {
						s1 += t->softmax_scale * lat;
						s2 += pow(t->softmax_scale * lat, 2);
					}
					mx = fmax(mx, logit[k]);
				}
				for (int k = 0; k < ctx; k++)
					z += exp(logit[k] - mx);
				share += exp(logit[0] - mx) / z * ctx; /* 1 = uniform */
				lsd += sqrt(fmax(s2 / (ctx - 1) - pow(s1 / (ctx - 1), 2), 0));
				n++;
				free(logit);
			}
		share /= n;
		lsd /= n;
		if (family == WZT_FAMILY_IID) {
			ok(share < 3, "iid: no sink (its attention %.2f x uniform)", share);
		} else {
			ok(share > 10, "%s: the sink gets %.0f x a uniform share of attention", name,
			   share);
		}
		ok(lsd > 1.5 && lsd < 2.5,
		   "%s: latent part of the logits has standard deviation %.2f (target 2)", name, lsd);
		ok(t->q_index[t->Q - 1] == T - 1 && t->q_index[0] == T / t->Q - 1,
		   "%s: queries spread over the window, the last at its end", name);
		is_double(t->softmax_scale, 1.874 / sqrt(192.0), 1e-4,
			  "softmax_scale is DeepSeek-V3's 1.874/sqrt(192)");
		ok(!strncmp(t->source, "synthetic:", 10) && strstr(t->source, name),
		   "%s: labelled synthetic in the source metadata", name);
		wzt_cache_trace_free(t);
	}
}

static void test_determinism(void)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	wzt_cache_trace *a = synth(WZT_FAMILY_MLA_A, 4, 1024, 512, 32, 16, 3);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	/* Speed is bench/'s business, not a test's: a loaded machine must not
	 * fail the suite.  The time is printed for the log. */
	printf("# a 4-layer x 1024-token window with 32 x 16 queries in %.2f s\n", secs);
	wzt_cache_trace *b = synth(WZT_FAMILY_MLA_A, 4, 1024, 512, 32, 16, 3);
	unsigned char *ba, *bb;
	size_t na, nb;
	wzt_cache_trace_encode(a, WZT_DTYPE_BF16, &ba, &na, NULL);
	wzt_cache_trace_encode(b, WZT_DTYPE_BF16, &bb, &nb, NULL);
	ok(na == nb && !memcmp(ba, bb, na), "same seed, same window: the same %zu bytes", na);
	/* A fingerprint of the bytes, so a change of the generator shows up
	 * here (and must bump its version in the source metadata). */
	uint64_t h = 1469598103934665603u;
	for (size_t i = 0; i < na; i++)
		h = (h ^ ba[i]) * 1099511628211u;
	printf("# FNV-1a of the mla-a window: %016llx\n", (unsigned long long)h);
	free(ba);
	free(bb);
	wzt_cache_trace *c = synth(WZT_FAMILY_MLA_A, 4, 1024, 512, 32, 16, 4);
	ok(memcmp(a->latent + 512, c->latent + 512, sizeof(float) * 512 * 100),
	   "another window seed gives other tokens");
	wzt_cache_trace_free(a);
	wzt_cache_trace_free(b);
	wzt_cache_trace_free(c);

	wzt_synth_params p;
	wzt_synth_params_default(&p);
	wz_diag diag;
	wzt_cache_trace *t = NULL;
	p.Q = 5;
	p.H = 0;
	ok(wzt_synth_cache(&p, &t, &diag) == WZ_ERR_USAGE && !t, "queries without heads refused");
	wzt_synth_params_default(&p);
	p.P = 63;
	ok(wzt_synth_cache(&p, &t, &diag) == WZ_ERR_USAGE && !t, "an odd position part refused");
	wzt_family f;
	ok(wzt_family_parse("mla-c", &f, &diag) == WZ_ERR_USAGE && strstr(diag.msg, "mla-c"),
	   "an unknown family is named");
}

/* DeepSeek-V4's compressed entries: V4's shape, entries at every 4th or
 * 128th position, the same spectrum as mla-b, and lighter tails (a sum of
 * draws), lightest for 128 tokens an entry. */
static void test_v4_entries(void)
{
	int R, P;
	wzt_family_shape(WZT_FAMILY_V4_C4, &R, &P);
	ok(R == 448 && P == 64, "v4-c4: V4's 448 + 64-value entry");
	wzt_family_shape(WZT_FAMILY_MLA_B, &R, &P);
	ok(R == 512 && P == 64, "mla-b: DeepSeek-V3's 512 + 64");
	const wzt_family fams[] = { WZT_FAMILY_MLA_B, WZT_FAMILY_V4_C4, WZT_FAMILY_V4_C128 };
	const int stride[] = { 1, 4, 128 };
	double kurt[3];
	for (int c = 0; c < 3; c++) {
		int T = 4096, n = 128;
		wzt_cache_trace *t = synth(fams[c], 2, T, n, 0, 0, 0);
		const char *name = wzt_family_name(fams[c]);
		ok(t->positions[1] == stride[c] && t->positions[T - 1] == (int64_t)stride[c] * (T - 1),
		   "%s: entry i at position %d i", name, stride[c]);
		ok(strstr(t->source, "synthetic:") == t->source, "%s: labelled synthetic", name);
		float *x = layer_rows(t->latent, T, n, 1, 1);
		double slope = spectrum_slope(x, T - 1, n, 2, 34);
		ok(slope > -1.1 && slope < -0.85, "%s: eigenvalues decay as mla-b's (slope %.3f)",
		   name, slope);
		kurt[c] = principal_kurtosis(x, T - 1, n, 2, 12);
		free(x);
		wzt_cache_trace_free(t);
	}
	ok(kurt[1] < kurt[0] && kurt[2] < kurt[1] && fabs(kurt[2]) < 0.25,
	   "tails: mla-b tokens %.2f > v4-c4 entries %.2f > v4-c128 entries %.2f (near "
	   "Gaussian)",
	   kurt[0], kurt[1], kurt[2]);
	wzt_family f;
	wz_diag diag;
	ok(wzt_family_parse("v4-c128", &f, &diag) == WZ_OK && f == WZT_FAMILY_V4_C128,
	   "v4-c128 parses");
}

/* Share of the rotated-back position part's power (about its mean) that a
 * least-squares map from the latent, fitted on tokens [1, T/2), explains
 * on tokens [T/2, T): held out, so an independent part scores about 0 or
 * below (a fit of R regressors to noise), never R / (T/2). */
static double held_out_predictable(const wzt_cache_trace *t, int l)
{
	int T = t->T, R = t->R, P = t->P, h = T / 2;
	double *xtx = calloc((size_t)(R + 1) * (R + 1), sizeof *xtx);
	double *xty = calloc((size_t)(R + 1) * P, sizeof *xty);
	double z[R + 1], y[P];
	for (int tok = 1; tok < T; tok++) {
		const float *c = &t->latent[((size_t)l * T + tok) * R];
		float v[P];
		memcpy(v, &t->rope[((size_t)l * T + tok) * P], sizeof v);
		wzt_rope_rotate(v, P, t->positions[tok], 10000.0, 1);
		for (int i = 0; i < R; i++)
			z[i] = c[i];
		z[R] = 1; /* the intercept */
		for (int j = 0; j < P; j++)
			y[j] = v[j];
		if (tok < h) {
			for (int i = 0; i <= R; i++) {
				for (int k = 0; k <= i; k++)
					xtx[(size_t)i * (R + 1) + k] += z[i] * z[k];
				for (int j = 0; j < P; j++)
					xty[(size_t)i * P + j] += z[i] * y[j];
			}
			continue;
		}
		if (tok == h) { /* solve once: Cholesky of the lower triangle */
			int n = R + 1;
			for (int i = 0; i < n; i++)
				for (int k = 0; k <= i; k++) {
					double sum = xtx[(size_t)i * n + k];
					for (int m = 0; m < k; m++)
						sum -= xtx[(size_t)i * n + m] * xtx[(size_t)k * n + m];
					xtx[(size_t)i * n + k] = i == k ? sqrt(fmax(sum, 1e-300)) : sum / xtx[(size_t)k * n + k];
				}
			for (int j = 0; j < P; j++) {
				for (int i = 0; i < n; i++) { /* L w = b */
					double sum = xty[(size_t)i * P + j];
					for (int m = 0; m < i; m++)
						sum -= xtx[(size_t)i * n + m] * xty[(size_t)m * P + j];
					xty[(size_t)i * P + j] = sum / xtx[(size_t)i * n + i];
				}
				for (int i = n - 1; i >= 0; i--) { /* L^T a = w */
					double sum = xty[(size_t)i * P + j];
					for (int m = i + 1; m < n; m++)
						sum -= xtx[(size_t)m * n + i] * xty[(size_t)m * P + j];
					xty[(size_t)i * P + j] = sum / xtx[(size_t)i * n + i];
				}
			}
		}
	}
	/* the held-out half: residual and power about its own mean */
	double mean[P], res = 0, pow2 = 0;
	memset(mean, 0, sizeof mean);
	for (int pass = 0; pass < 2; pass++)
		for (int tok = h; tok < T; tok++) {
			const float *c = &t->latent[((size_t)l * T + tok) * R];
			float v[P];
			memcpy(v, &t->rope[((size_t)l * T + tok) * P], sizeof v);
			wzt_rope_rotate(v, P, t->positions[tok], 10000.0, 1);
			for (int j = 0; j < P; j++) {
				if (pass == 0) {
					mean[j] += v[j] / (T - h);
					continue;
				}
				double pred = xty[(size_t)R * P + j];
				for (int i = 0; i < R; i++)
					pred += xty[(size_t)i * P + j] * c[i];
				res += (v[j] - pred) * (v[j] - pred);
				pow2 += (v[j] - mean[j]) * (v[j] - mean[j]);
			}
		}
	free(xtx);
	free(xty);
	return 1 - res / pow2;
}

/* mla-p: the position part is 95% a linear map of the latent's
 * coefficients, which RMSNorm and the gains turn into the cached latent
 * up to a per-token factor, so a linear fit on the latent explains a
 * little less; mla-a's is independent of the latent. */
static void test_predictable(void)
{
	int T = 4096, R = 128;
	wzt_cache_trace *p = synth(WZT_FAMILY_MLA_P, 2, T, R, 0, 0, 0);
	wzt_cache_trace *a = synth(WZT_FAMILY_MLA_A, 2, T, R, 0, 0, 0);
	double sp = held_out_predictable(p, 1), sa = held_out_predictable(a, 1);
	ok(sp > 0.85 && sp < 0.96,
	   "mla-p: %.3f of the rotated-back position part is predictable from the latent "
	   "(held out; model 0.95)",
	   sp);
	ok(sa < 0.02, "mla-a: %.3f of it (held out; independent: none)", sa);
	float *x = layer_rows(p->latent, T, R, 1, 1);
	double slope = spectrum_slope(x, T - 1, R, 2, 34);
	ok(slope > -0.8 && slope < -0.55, "mla-p: the latent is mla-a's (slope %.3f)", slope);
	free(x);
	ok(!strncmp(p->source, "synthetic:mla-p ", 16), "mla-p: labelled synthetic");
	wzt_family f;
	wz_diag diag;
	ok(wzt_family_parse("mla-p", &f, &diag) == WZ_OK && f == WZT_FAMILY_MLA_P, "mla-p parses");
	wzt_cache_trace_free(p);
	wzt_cache_trace_free(a);
}

int main(void)
{
	test_spectrum();
	test_predictable();
	test_v4_entries();
	test_scales_and_sink();
	test_determinism();
	return tap_done();
}
