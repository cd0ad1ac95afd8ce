/* How much a wz record's scale code leaves on the table: per layer, each
 * token's latent error (squared error over the token's squared norm, in
 * the transformed domain, which the orthonormal basis makes the cache's)
 * at the code the encoder wrote, at the best code offset shared by the
 * layer's tokens, and at each token's own best code within 24 steps of
 * the written one (1.5 octaves of scale), the digits of each code being
 * the nearest levels, as the decoder reads them.  A measurement for
 * choosing an encoder rule, not one: the decoder reads any code, so a
 * search over codes is the encoder's to make.  Also the worst token's
 * share of its error in its one largest coefficient error: what an
 * escape for a single component could take back.  And per layer what a
 * search within +-k codes would take back, and step 6's descent (the wzs
 * formats' rule, wzc_search_descent) on the same errors, with the codes
 * it tries per token.
 *
 *   bench_scale_codes                      synthetic iid and mla-b layers
 *   bench_scale_codes PROFILE TRACE [FMT]  a prepared profile and a trace
 *                                          (default format wz-5.44)
 *
 * The coefficients are computed in double precision from the profile's
 * basis, not with the encoder's integers (docs/wz-format.md,
 * "Arithmetic"): an estimate within the integers' 2^-10 of the format's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench_util.h"
#include "codec/codec.h"
#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/profile/profile.h"
#include "codec/wz/wz_gemm.h"
#include "codec/wz/wz_plan.h"
#include "traces/cache_trace.h"

/* Code offsets searched: -SPAN..SPAN around the written code. */
#define SPAN 24
#define NOFF (2 * SPAN + 1)

/* Squared error of the latent coefficients y at scale code c: each
 * component's nearest level (one-level components their level); *top,
 * when not NULL, the largest component's. */
static double error_at(const layer_plan *lp, const float *mult, double ref, const double *y,
		       int R, int c, double *top)
{
	double s = mult[c] * ref, e = 0, most = 0;
	for (int k = 0; k < R; k++) {
		uint32_t d = 0;
		if (lp->nlev[k] > 1) {
			float z = (float)(y[k] / (s * lp->sigma[k]));
			d = wzc_quantize_ref(lp->thr[k], lp->nlev[k] - 1, z);
		}
		double q = y[k] - (double)lp->lev[k][d] * lp->sigma[k] * s;
		e += q * q;
		most = q * q > most ? q * q : most;
	}
	if (top)
		*top = most;
	return e;
}

/* A token's latent coefficients y = B (v - base), the base the encoder
 * takes (the nearer of mean and anchor, where the plan codes the flag);
 * returns the token's squared norm (1 for a zero token). */
static double coefficients(const wzc_part_profile *pp, int can_flag, const float *v, int R,
			   double *y)
{
	double dm = 0, da = 0, nx = 0;
	for (int i = 0; i < R; i++) {
		double a = (double)v[i] - pp->mean[i], b = (double)v[i] - pp->anchor[i];
		dm += a * a;
		da += b * b;
		nx += (double)v[i] * v[i];
	}
	const float *base = can_flag && da < dm ? pp->anchor : pp->mean;
	for (int k = 0; k < R; k++) {
		double a = 0;
		for (int i = 0; i < R; i++)
			a += (double)pp->basis[(size_t)k * R + i] * ((double)v[i] - base[i]);
		y[k] = a;
	}
	return nx > 0 ? nx : 1;
}

static double mean_of(const double *v, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += v[i];
	return s / n;
}

static double median_of(const double *v, int n, double *scratch)
{
	memcpy(scratch, v, sizeof(double) * (size_t)n);
	return bench_median(scratch, n);
}

/* A token's error at each offset (row[o + SPAN]) as step 6's cost, the
 * calls counted: the descent of wzc_search_descent on the plain error. */
typedef struct {
	const double *row;
	int c0, calls;
} row_cost_ctx;

static double row_cost(void *ctx, int code)
{
	row_cost_ctx *x = (row_cost_ctx *)ctx;
	int o = code - x->c0;
	x->calls++;
	return o < -SPAN || o > SPAN ? INFINITY : x->row[o + SPAN];
}

/* What a search within +-k of the written code takes back, for k = 1, 2,
 * 4, 8, 24, and what step 6's descent does, with the codes it tries per
 * token: the layer's mean error over the mean at the written codes, in dB. */
static void print_searches(int T, const double *e0, const double *eo, const uint8_t *codes)
{
	static const int ks[] = { 1, 2, 4, 8, 24 };
	double m0 = 0;
	for (int t = 0; t < T; t++)
		m0 += e0[t];
	printf("      gain within +-k codes:");
	for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
		double mk = 0;
		for (int t = 0; t < T; t++) {
			double b = e0[t];
			for (int o = -ks[i]; o <= ks[i]; o++)
				b = eo[(size_t)t * NOFF + o + SPAN] < b ? eo[(size_t)t * NOFF + o + SPAN] : b;
			mk += b;
		}
		printf(" %d: %.2f dB", ks[i], 10 * log10(m0 / mk));
	}
	double md = 0, calls = 0;
	for (int t = 0; t < T; t++) {
		row_cost_ctx x = { eo + (size_t)t * NOFF, codes[t], 0 };
		int c = codes[t] >= 1 ? wzc_search_descent(codes[t], &x, row_cost) : codes[t];
		md += c == codes[t] ? e0[t] : x.row[c - codes[t] + SPAN];
		calls += x.calls;
	}
	printf("; descent (step 6): %.2f dB, %.1f codes tried\n", 10 * log10(m0 / md), calls / T);
}

/* One trace's layers; returns 0, or 1 with a message on stderr. */
static int measure(const char *label, const wzc_profile *prof, const wzt_cache_trace *tr,
		   const char *fmtname)
{
	wz_diag d;
	wzc_format f;
	wzc_codec *c = NULL;
	int L = tr->L, T = tr->T, R = tr->R, P = tr->P;
	if (wzc_format_parse(fmtname, &f, &d) || wzc_codec_new(&f, L, R, P, prof, &c, &d)) {
		fprintf(stderr, "bench_scale_codes: %s\n", d.msg);
		return 1;
	}
	if (f.id != WZC_FMT_WZ) {
		fprintf(stderr, "bench_scale_codes: %s is not a wz format\n", fmtname);
		wzc_codec_free(c);
		return 1;
	}
	size_t rb = wzc_codec_record_bytes(c);
	uint8_t *rec = malloc(rb * (size_t)T);
	double *y = malloc(sizeof(double) * (size_t)R);
	double *e0 = malloc(sizeof(double) * (size_t)T), *eb = malloc(sizeof(double) * (size_t)T);
	double *eo = malloc(sizeof(double) * (size_t)T * NOFF);
	double *col = malloc(sizeof(double) * (size_t)T), *tmp = malloc(sizeof(double) * (size_t)T);
	uint8_t *written = malloc((size_t)T);
	if (!rec || !y || !e0 || !eb || !eo || !col || !tmp || !written) {
		fprintf(stderr, "bench_scale_codes: out of memory\n");
		return 1;
	}
	printf("%s, %s, %d tokens: latent error / squared norm per token\n", label, fmtname, T);
	printf("%5s %12s %12s %6s %12s %12s %12s %12s %9s\n", "layer", "written:med", "mean",
	       "shift", "shared:med", "mean", "own:med", "mean", "top1/err");
	for (int l = 0; l < L; l++) {
		const float *xl = tr->latent + (size_t)l * T * R, *xr = tr->rope + (size_t)l * T * P;
		if (wzc_encode_layer(c, l, T, xl, xr, rec, &d)) {
			fprintf(stderr, "bench_scale_codes: %s\n", d.msg);
			return 1;
		}
		const layer_plan *lp = wzc_wz_plan_layer(c->wz, l);
		const wzc_part_profile *pp = &prof->latent[l];
		const float *mult = c->wz->scale_mult[0];
		int can_flag = lp->nlev[R + P] == 2, worst = 0;
		for (int t = 0; t < T; t++) {
			double nx = coefficients(pp, can_flag, xl + (size_t)t * R, R, y);
			int c0 = rec[(size_t)t * rb];
			e0[t] = error_at(lp, mult, pp->scale_ref, y, R, c0, NULL) / nx;
			eb[t] = e0[t];
			for (int o = -SPAN; o <= SPAN; o++) {
				int cc = c0 + o;
				double e = cc >= 1 && cc <= 255
						   ? error_at(lp, mult, pp->scale_ref, y, R, cc, NULL) / nx
						   : INFINITY;
				eo[(size_t)t * NOFF + o + SPAN] = e;
				eb[t] = e < eb[t] ? e : eb[t];
			}
			worst = e0[t] > e0[worst] ? t : worst;
		}
		/* the offset shared by the layer's tokens of least mean error */
		int best = 0;
		double bmean = INFINITY;
		for (int o = 0; o < NOFF; o++) {
			for (int t = 0; t < T; t++)
				col[t] = eo[(size_t)t * NOFF + o];
			double m = mean_of(col, T);
			if (m < bmean) {
				bmean = m;
				best = o;
			}
		}
		for (int t = 0; t < T; t++)
			col[t] = eo[(size_t)t * NOFF + best];
		/* the worst token's largest single coefficient error, as a share */
		double top, tot;
		coefficients(pp, can_flag, xl + (size_t)worst * R, R, y);
		tot = error_at(lp, mult, pp->scale_ref, y, R, rec[(size_t)worst * rb], &top);
		printf("%5d %12.4g %12.4g %+6d %12.4g %12.4g %12.4g %12.4g %9.2f\n", l,
		       median_of(e0, T, tmp), mean_of(e0, T), best - SPAN, median_of(col, T, tmp),
		       mean_of(col, T), median_of(eb, T, tmp), mean_of(eb, T), tot > 0 ? top / tot : 0);
		for (int t = 0; t < T; t++)
			written[t] = rec[(size_t)t * rb];
		print_searches(T, e0, eo, written);
	}
	printf("\n");
	free(rec);
	free(y);
	free(e0);
	free(eb);
	free(eo);
	free(col);
	free(tmp);
	free(written);
	wzc_codec_free(c);
	return 0;
}

/* A synthetic layer of FAMILY, its profile from a calibration window. */
static int synthetic(const char *label, wzt_family family)
{
	wzt_cache_trace *cal = bench_window("bench_scale_codes", family, 3, "calibration", 1, 2048);
	wzt_cache_trace *test = bench_window("bench_scale_codes", family, 3, "test", 2, 2048);
	if (!cal || !test)
		return 1;
	wzc_profile *prof = bench_prepare_window("bench_scale_codes", cal);
	if (!prof)
		return 1;
	int rc = measure(label, prof, test, "wz-5.44");
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: bench_scale_codes [PROFILE TRACE [FORMAT]]\n");
		return 0;
	}
	if (argc == 1)
		return synthetic("synthetic iid", WZT_FAMILY_IID) ||
		       synthetic("synthetic mla-b", WZT_FAMILY_MLA_B);
	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: bench_scale_codes [PROFILE TRACE [FORMAT]]\n");
		return 2;
	}
	wz_diag d;
	wzc_profile *prof = NULL;
	wzt_cache_trace *tr = NULL;
	if (wzc_profile_read(argv[1], &prof, &d) || wzt_cache_trace_read(argv[2], &tr, &d)) {
		fprintf(stderr, "bench_scale_codes: %s\n", d.msg);
		wzc_profile_free(prof);
		return 2;
	}
	int rc = measure(argv[2], prof, tr, argc > 3 ? argv[3] : "wz-5.44");
	wzc_profile_free(prof);
	wzt_cache_trace_free(tr);
	return rc;
}
