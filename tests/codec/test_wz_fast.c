/* The fast wz paths against their scalar references: the matrix products
 * bit for bit (every kernel this CPU runs for the integer one), the input
 * integers, the group fields' division, the grid quantizer index for
 * index, and the fast encoder's record bytes on all three synthetic
 * families at several rates, outlying tokens included. */
#include "tests/tap.h"

#include <stdint.h>

#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/profile/profile.h"
#include "codec/wz/wz_gemm.h"
#include "codec/wz/wz_plan.h"
#include "tests/codec/window.h"

static uint64_t rng = 88172645463325252ull;

static float uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (float)((rng >> 40) * (1.0 / (1 << 24))) * 2 - 1;
}

static void test_gemm(void)
{
	static const int toks[] = { 1, 5, 8, 13, 64 }, kdims[] = { 1, 7, 64, 512 },
			 cols[] = { 1, 15, 16, 17, 47, 48, 49, 100, 512 };
	int same = 1, cases = 0;
	for (size_t a = 0; a < sizeof toks / sizeof *toks; a++)
		for (size_t b = 0; b < sizeof kdims / sizeof *kdims; b++)
			for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
				int nt = toks[a], kd = kdims[b], nc = cols[c];
				size_t ldb = (size_t)nc + 3, ldx = (size_t)kd + 1, ldy = (size_t)nc + 5;
				float *B = malloc(sizeof(float) * kd * ldb);
				float *X = malloc(sizeof(float) * nt * ldx);
				float *Y1 = malloc(sizeof(float) * nt * ldy);
				float *Y2 = malloc(sizeof(float) * nt * ldy);
				/* wide magnitudes and cancellation: a separate multiply and add
				 * or another summation order would show */
				for (size_t i = 0; i < kd * ldb; i++)
					B[i] = uniform() * (i % 3 ? 1.0f : 1e4f);
				for (size_t i = 0; i < nt * ldx; i++)
					X[i] = uniform() * (i % 5 ? 1.0f : 3e3f);
				for (size_t i = 0; i < nt * ldy; i++)
					Y1[i] = Y2[i] = 7.0f;
				wzc_gemm_ref(nt, kd, nc, B, ldb, X, ldx, 1, Y1, ldy);
				wzc_gemm(nt, kd, nc, B, ldb, X, ldx, 1, Y2, ldy);
				same &= !memcmp(Y1, Y2, sizeof(float) * nt * ldy);
				/* X transposed: X(t, r) at r * nt + t */
				float *XT = malloc(sizeof(float) * nt * kd);
				for (int t = 0; t < nt; t++)
					for (int r = 0; r < kd; r++)
						XT[(size_t)r * nt + t] = X[t * ldx + r];
				wzc_gemm(nt, kd, nc, B, ldb, XT, 1, (size_t)nt, Y2, ldy);
				same &= !memcmp(Y1, Y2, sizeof(float) * nt * ldy);
				free(XT);
				cases++;
				free(B);
				free(X);
				free(Y1);
				free(Y2);
			}
	ok(same, "gemm: the %s kernel equals the reference bit for bit (%d shapes)",
	   wzc_gemm_kernel(), cases);
}

/* The integer products against their reference on every 16-bit value,
 * the extremes included (the sums may wrap: both must wrap alike). */
static void test_igemm_kernel(void)
{
	static const int toks[] = { 1, 2, 5, 8, 13, 64 }, kps[] = { 1, 4, 7, 64, 129, 256 },
			 cols[] = { 1, 15, 16, 17, 47, 48, 49, 100, 512 };
	int same = 1, dsame = 1, cases = 0;
	for (size_t a = 0; a < sizeof toks / sizeof *toks; a++)
		for (size_t b = 0; b < sizeof kps / sizeof *kps; b++)
			for (size_t c = 0; c < sizeof cols / sizeof *cols; c++) {
				int nt = toks[a], kp = kps[b], nc = cols[c];
				size_t ldb = (size_t)nc + 3, ldx = (size_t)nt + 2, ldy = (size_t)nc + 5;
				uint32_t *B = malloc(sizeof(uint32_t) * kp * ldb);
				uint32_t *X = malloc(sizeof(uint32_t) * kp * ldx);
				int32_t *Y1 = malloc(sizeof(int32_t) * nt * ldy);
				int32_t *Y2 = malloc(sizeof(int32_t) * nt * ldy);
				for (size_t i = 0; i < kp * ldb; i++) {
					(void)uniform();
					B[i] = (uint32_t)(rng >> 11);
					if (i % 7 == 0)
						B[i] = wzc_pair16(-32768, 32767);
				}
				for (size_t i = 0; i < kp * ldx; i++) {
					(void)uniform();
					X[i] = (uint32_t)(rng >> 13);
					if (i % 5 == 0)
						X[i] = wzc_pair16(-32768, -32768);
				}
				for (size_t i = 0; i < nt * ldy; i++)
					Y1[i] = Y2[i] = 7;
				wzc_igemm_ref(nt, kp, nc, B, ldb, X, ldx, Y1, ldy);
				wzc_igemm(nt, kp, nc, B, ldb, X, ldx, Y2, ldy);
				same &= !memcmp(Y1, Y2, sizeof(int32_t) * nt * ldy);
				/* the dot form of the same operands: B's columns and
				 * X's tokens as rows (leading dimensions past kp),
				 * against the pair-major reference */
				size_t ldbt = (size_t)kp + 1, ldxt = (size_t)kp + 9;
				uint32_t *Bt = malloc(sizeof(uint32_t) * nc * ldbt);
				uint32_t *Xt = malloc(sizeof(uint32_t) * nt * ldxt);
				for (int q = 0; q < kp; q++) {
					for (int j = 0; j < nc; j++)
						Bt[(size_t)j * ldbt + q] = B[(size_t)q * ldb + j];
					for (int t = 0; t < nt; t++)
						Xt[(size_t)t * ldxt + q] = X[(size_t)q * ldx + t];
				}
				for (size_t i = 0; i < nt * ldy; i++)
					Y2[i] = 7;
				wzc_igemm_dot(nt, kp, nc, Bt, ldbt, Xt, ldxt, Y2, ldy);
				dsame &= !memcmp(Y1, Y2, sizeof(int32_t) * nt * ldy);
				for (size_t i = 0; i < nt * ldy; i++)
					Y2[i] = 7;
				wzc_igemm_dot_ref(nt, kp, nc, Bt, ldbt, Xt, ldxt, Y2, ldy);
				dsame &= !memcmp(Y1, Y2, sizeof(int32_t) * nt * ldy);
				free(Bt);
				free(Xt);
				cases++;
				free(B);
				free(X);
				free(Y1);
				free(Y2);
			}
	ok(same, "igemm: the %s kernel equals the reference (%d shapes)", wzc_igemm_kernel(), cases);
	ok(dsame, "igemm: the dot form with the %s kernel chosen and its reference equal the "
	   "pair-major reference (%d shapes)", wzc_igemm_kernel(), cases);
}

/* Every integer kernel this CPU runs, then the one it chooses. */
static void test_igemm(void)
{
	const char *chosen = wzc_igemm_kernel();
	static const char *const kernels[] = { "portable", "avx2", "avx512bw", "avx512vnni" };
	for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
		if (wzc_gemm_force(kernels[k])) {
			ok(1, "# SKIP igemm: this CPU does not run the %s kernel", kernels[k]);
			continue;
		}
		test_igemm_kernel();
	}
	ok(wzc_gemm_force(chosen) == 0 && !strcmp(wzc_igemm_kernel(), chosen),
	   "igemm: back to the %s kernel", chosen);
	/* the reference is the plain sum of products */
	uint32_t bp[3] = { wzc_pair16(3, -4), wzc_pair16(-32767, 2), wzc_pair16(7, 0) };
	uint32_t xp[3] = { wzc_pair16(5, 6), wzc_pair16(2, -1), wzc_pair16(-3, 9) };
	int32_t y;
	wzc_igemm_ref(1, 3, 1, bp, 1, xp, 1, &y, 1);
	ok(y == 3 * 5 - 4 * 6 - 32767 * 2 + 2 * -1 + 7 * -3, "igemm: a small product by hand (%d)", (int)y);
}

/* The inputs' integers: the smallest exponent that meets both bounds. */
static void test_input_q(void)
{
	enum { M = 512 };
	float x[M];
	int16_t xq[M], xq2[M];
	int ok_all = 1, cases = 0;
	for (int c = 0; c < 8; c++, cases++) {
		for (int i = 0; i < M; i++)
			x[i] = uniform() * 1.7f;
		if (c == 1)
			x[7] = 31.99f; /* in range at e = 0 */
		if (c == 2)
			x[7] = 40.0f; /* 40960 > 32767: e = 1 */
		if (c == 3)
			for (int i = 0; i < M; i++)
				x[i] *= 60.0f; /* norm far past 2^16 / 2^10 */
		if (c == 4)
			x[3] = NAN, x[9] = INFINITY, x[11] = -INFINITY;
		if (c == 5)
			x[0] = 3e38f;
		if (c == 6)
			for (int i = 0; i < M; i++)
				x[i] = 0;
		if (c == 7)
			x[100] = -32.0f - 1.0f / 4096; /* -32768.5: past the bound, not onto -32768 */
		int e = wzc_input_q(M, x, xq);
		/* every bound met at e, and not at e - 1 */
		int meets[2] = { 1, 1 };
		for (int k = 0; k < 2 && e - k >= 0; k++) {
			float mult = ldexpf(1.0f, WZC_XQ_SHIFT - (e - k));
			uint64_t ss = 0;
			for (int i = 0; i < M; i++) {
				float v = isfinite(x[i]) ? x[i] * mult : 0.0f;
				if (!(fabsf(v) < WZC_XQ_MAX + 0.5f)) {
					meets[k] = 0;
					break;
				}
				long q = lrintf(v);
				if (k == 0)
					xq2[i] = (int16_t)q;
				ss += (uint64_t)(q * q);
			}
			meets[k] &= ss <= WZC_XQ_SUMSQ_MAX;
		}
		ok_all &= meets[0] && (e == 0 || !meets[1]) && !memcmp(xq, xq2, sizeof xq);
		if (c == 0 || c == 1 || c == 4 || c == 6)
			ok_all &= e == 0;
		if (c == 2)
			ok_all &= e == 1 && xq[7] == 20480;
		if (c == 4)
			ok_all &= xq[3] == 0 && xq[9] == 0 && xq[11] == 0;
		if (c == 3 || c == 5 || c == 7)
			ok_all &= e > 0;
	}
	ok(ok_all, "input integers: the smallest exponent within both bounds (%d vectors)", cases);
}

/* Group fields: the division by multiplication against 128-bit division. */
static void test_field_word(void)
{
	int same = 1, n = 0;
	for (int kb = 1; kb <= 64; kb++)
		for (int rep = 0; rep < 400; rep++, n++) {
			(void)uniform();
			uint64_t top = kb == 64 ? UINT64_MAX : ((uint64_t)1 << kb);
			uint64_t M = rep == 0 ? top : rep == 1 ? 2 : 2 + rng % (top - 1);
			if (M > top)
				M = top;
			if (M < 2)
				M = 2;
			(void)uniform();
			uint64_t V = rep % 3 == 0 ? M - 1 : rep % 3 == 1 ? 0 : rng % M;
			unsigned __int128 num = ((unsigned __int128)V << kb) + (M - 1);
			wzc_divisor q = wzc_divisor_of(M);
			same &= wzc_field_word(V, kb, &q) == (uint64_t)(num / M);
		}
	ok(same, "group fields: division by multiplication is exact (%d cases)", n);
}

static void test_quantize(void)
{
	static const uint32_t counts[] = { 2, 3, 4, 7, 16, 64, 1000, 65536 };
	int same = 1, tried = 0;
	for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
		uint32_t n = counts[c] - 1;
		float *thr = malloc(sizeof(float) * n);
		/* denser in the middle, with a run of equal thresholds */
		for (uint32_t i = 0; i < n; i++) {
			double u = (i + 0.5) / n * 2 - 1;
			thr[i] = (float)(4 * u * u * u + 0.5 * u);
		}
		if (n > 8)
			thr[n / 2 + 1] = thr[n / 2 + 2] = thr[n / 2];
		wzc_qlut q;
		if (wzc_qlut_init(&q, thr, n)) {
			ok(0, "qlut: memory");
			free(thr);
			return;
		}
		for (uint32_t i = 0; i < n; i++) {
			float z[3] = { thr[i], nextafterf(thr[i], -INFINITY), nextafterf(thr[i], INFINITY) };
			for (int k = 0; k < 3; k++, tried++)
				same &= wzc_quantize(&q, z[k]) == wzc_quantize_ref(thr, n, z[k]);
		}
		for (int i = 0; i < 20000; i++, tried++) {
			float z = uniform() * 6;
			same &= wzc_quantize(&q, z) == wzc_quantize_ref(thr, n, z);
		}
		float odd[] = { NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e30f, -1e30f };
		for (size_t i = 0; i < sizeof odd / sizeof *odd; i++, tried++)
			same &= wzc_quantize(&q, odd[i]) == wzc_quantize_ref(thr, n, odd[i]);
		wzc_qlut_free(&q);
		free(thr);
	}
	ok(same, "quantize: the grid gives the binary search's index (%d values)", tried);
}

/* The batch quantizer on tables of every kind side by side, including one
 * with three equal thresholds (no exact grid: its lanes search). */
static void test_quantize_batch(void)
{
	enum { NT = 5, NC = 37 };
	static const uint32_t counts[NT] = { 2, 5, 64, 300, 40 };
	float *pool = malloc(sizeof(float) * 512);
	wzc_qlut q[NT];
	uint32_t used = 0, ncells = 0;
	int exact_seen = 0, inexact_seen = 0;
	for (int k = 0; k < NT; k++) {
		uint32_t n = counts[k] - 1;
		float *thr = pool + used;
		used += n;
		for (uint32_t i = 0; i < n; i++) {
			double u = (i + 0.5) / n * 2 - 1;
			thr[i] = (float)(3 * u * u * u + 0.3 * u);
		}
		if (k == NT - 1)
			thr[20] = thr[21] = thr[22] = thr[19];
		if (wzc_qlut_init(&q[k], thr, n)) {
			ok(0, "qlut: memory");
			return;
		}
		exact_seen |= q[k].exact;
		inexact_seen |= !q[k].exact;
		ncells += (uint32_t)q[k].G;
	}
	uint32_t *starts = malloc(sizeof(uint32_t) * ncells), cell0[NT], at = 0;
	uint64_t *pairs = malloc(sizeof(uint64_t) * ncells);
	for (int k = 0; k < NT; k++) {
		cell0[k] = at;
		wzc_qlut_pairs(&q[k], pairs + at);
		for (int c = 0; c < q[k].G; c++)
			starts[at++] = q[k].start[c];
	}
	const wzc_qlut *qs[NC];
	float t0[NC], inv_w[NC], gmax[NC], z[NC];
	int32_t start_off[NC], exact[NC];
	for (int j = 0; j < NC; j++) {
		int k = (j * 7) % NT;
		qs[j] = &q[k];
		t0[j] = q[k].t0;
		inv_w[j] = q[k].inv_w;
		gmax[j] = (float)(q[k].G - 1);
		start_off[j] = (int32_t)cell0[k];
		exact[j] = q[k].exact;
	}
	wzc_qbatch b = { .n = NC, .q = qs, .t0 = t0, .inv_w = inv_w, .gmax = gmax,
			 .start_off = start_off, .exact = exact, .starts = starts, .pairs = pairs };
	uint32_t d1[NC], d2[NC];
	int same = 1;
	for (int rep = 0; rep < 4000; rep++) {
		for (int j = 0; j < NC; j++) {
			const wzc_qlut *qj = qs[j];
			float e = qj->thr[rng % qj->nthr];
			(void)uniform();
			z[j] = rep % 5 == 0 ? e : rep % 5 == 1 ? nextafterf(e, -INFINITY)
			     : rep % 5 == 2 ? uniform() * 5 : rep % 5 == 3 ? nextafterf(e, INFINITY)
			     : (rep & 1 ? NAN : INFINITY);
		}
		wzc_quantize_batch_ref(&b, z, d1);
		wzc_quantize_batch(&b, z, d2);
		for (int j = 0; j < NC; j++)
			same &= d1[j] == d2[j] && d1[j] == wzc_quantize_ref(qs[j]->thr, qs[j]->nthr, z[j]);
	}
	ok(exact_seen && inexact_seen, "quantize batch: tables with and without an exact grid");
	ok(same, "quantize batch: the %s kernel gives the binary search's indices", wzc_gemm_kernel());
	for (int k = 0; k < NT; k++)
		wzc_qlut_free(&q[k]);
	free(starts);
	free(pairs);
	free(pool);
}

/* A layer encoder of codec/wz/wz_plan.h. */
typedef void (*layer_encoder)(const wzc_wz_plan *plan, int layer, int n, const float *latent,
			      const float *rope, uint8_t *records, size_t record_bytes);

/* 1 when the fast encoder writes the reference's bytes for layer 0's T
 * tokens on every integer kernel this CPU runs (fast, ref: scratch). */
static int same_every_kernel(const wzc_codec *c, layer_encoder fast_fn, layer_encoder ref_fn,
			     int T, const float *lat, const float *rope, uint8_t *fast,
			     uint8_t *ref)
{
	static const char *const kernels[] = { "portable", "avx2", "avx512bw", "avx512vnni" };
	const char *chosen = wzc_igemm_kernel();
	size_t rb = wzc_codec_record_bytes(c);
	ref_fn(c->wz, 0, T, lat, rope, ref, rb);
	int same = 1;
	for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
		if (wzc_gemm_force(kernels[k]))
			continue;
		memset(fast, 0xa5, rb * T);
		fast_fn(c->wz, 0, T, lat, rope, fast, rb);
		same &= !memcmp(fast, ref, rb * T);
	}
	wzc_gemm_force(chosen);
	return same;
}

/* wzs's searched codes on layer l's tokens against wz's (srec, and wz's
 * records written into wzrec): E (step 6) at the searched code is no
 * more than at wz's, and no more than at either neighbour unless the
 * descent stopped at its span. */
static void search_checks(const wzc_codec *c, int l, int T, const float *lat, const float *rope,
			  const uint8_t *srec, uint8_t *wzrec, int *smin, int *moved, int *better)
{
	size_t rb = wzc_codec_record_bytes(c);
	const layer_plan *lp = wzc_wz_plan_layer(c->wz, l);
	int R = c->R, P = c->P, nc = lp->ncod[0] + lp->ncod[1];
	wzc_wz_encode_layer_ref(c->wz, l, T, lat, rope, wzrec, rb);
	float *z = malloc(sizeof(float) * (size_t)(nc + 1));
	uint8_t c0[2];
	for (int t = 0; t < T; t++) {
		wz_diag d;
		if (wzc_wz_coefficients(c->wz, l, lat + (size_t)t * R, rope + (size_t)t * P, z, c0, &d)) {
			*smin = 0;
			break;
		}
		for (int p = 0, j0 = 0; p < 2; j0 += lp->ncod[p], p++) {
			if ((p && !P) || !lp->ncod[p] || !c0[p])
				continue;
			const float *mult = c->wz->scale_mult[p];
			int cw = wzrec[(size_t)t * rb + p], cs = srec[(size_t)t * rb + p];
			double es = wzc_search_error(lp, j0, lp->ncod[p], z + j0, mult, c0[p], cs);
			double ew = wzc_search_error(lp, j0, lp->ncod[p], z + j0, mult, c0[p], cw);
			*better &= es <= ew;
			*moved += cs != cw;
			int span = (cs > cw ? cs - cw : cw - cs) >= WZC_SEARCH_SPAN - 1;
			if (!span && cs >= 2)
				*smin &= es <= wzc_search_error(lp, j0, lp->ncod[p], z + j0, mult, c0[p],
								cs - 1);
			if (!span && cs <= 254)
				*smin &= es <= wzc_search_error(lp, j0, lp->ncod[p], z + j0, mult, c0[p],
								cs + 1);
		}
	}
	free(z);
}

static void test_records(wzt_family family, const char *name)
{
	wzt_cache_trace *cal = synth(family, 2, 512, 0, 0, 0, 1, "calibration");
	wzt_cache_trace *test = synth(family, 2, 200, 0, 0, 0, 2, "test");
	if (!cal || !test) {
		ok(0, "%s: synthetic windows", name);
		return;
	}
	wzc_window cw = window_of(cal);
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wz_diag d;
	if (!ok(wzc_prepare(&cp, 1, NULL, &prof, &d) == WZ_OK, "%s: prepare", name))
		return;
	static const double rates[] = { 1.2, 2.5, 4.97, 5.44, 6.31, 8.0, 11.0 };
	static const char *const kernels[] = { "portable", "avx2", "avx512bw", "avx512vnni" };
	const char *chosen = wzc_igemm_kernel();
	int T = test->T, R = test->R, P = test->P;
	for (size_t i = 0; i < sizeof rates / sizeof *rates; i++) {
		char fname[32];
		snprintf(fname, sizeof fname, "wz-%g", rates[i]);
		wzc_format f;
		wzc_codec *c = NULL;
		if (wzc_format_parse(fname, &f, &d) || wzc_codec_new(&f, 2, R, P, prof, &c, &d)) {
			ok(0, "%s %s: codec (%s)", name, fname, d.msg);
			continue;
		}
		size_t rb = wzc_codec_record_bytes(c);
		uint8_t *fast = malloc(rb * T), *ref = malloc(rb * T);
		/* wz, and wzs (step 6) on the same plan: fast against reference
		 * on every kernel, and each searched code a local minimum of E */
		int same = 1, ssame = 1, smin = 1, moved = 0, wzs_better = 1;
		char ran[64] = "";
		uint8_t *wzrec = malloc(rb * T);
		for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
			if (wzc_gemm_force(kernels[k]))
				continue;
			snprintf(ran + strlen(ran), sizeof ran - strlen(ran), " %s", kernels[k]);
			for (int l = 0; l < 2; l++) {
				const float *lat = test->latent + (size_t)l * T * R;
				const float *rope = test->rope + (size_t)l * T * P;
				for (int search = 0; search < 2; search++) {
					memset(fast, 0xa5, rb * T);
					memset(ref, 0x5a, rb * T);
					(search ? wzc_wzs_encode_layer : wzc_wz_encode_layer)(c->wz, l, T, lat,
											   rope, fast, rb);
					(search ? wzc_wzs_encode_layer_ref
						: wzc_wz_encode_layer_ref)(c->wz, l, T, lat, rope, ref, rb);
					*(search ? &ssame : &same) &= !memcmp(fast, ref, rb * T);
				}
				if (k == 0)
					search_checks(c, l, T, lat, rope, ref, wzrec, &smin, &moved,
						      &wzs_better);
			}
		}
		wzc_gemm_force(chosen);
		ok(same, "%s %s: the fast encoder writes the reference's bytes (integer kernels%s)", name,
		   fname, ran);
		free(wzrec);
		ok(ssame, "%s wzs-%g: the fast encoder writes the reference's bytes (integer kernels%s)",
		   name, rates[i], ran);
		ok(smin && moved > 0,
		   "%s wzs-%g: every searched code is a local minimum of E within the span (%d parts "
		   "moved)",
		   name, rates[i], moved);
		ok(wzs_better, "%s wzs-%g: no part's weighted error above wz's", name, rates[i]);
		/* tokens the lanes hand to the reference: a scale past the
		 * code's range, one value far out, zeros, NaN and infinity */
		float *lat = malloc(sizeof(float) * (size_t)T * R);
		float *rope = malloc(sizeof(float) * (size_t)T * P + 1);
		memcpy(lat, test->latent, sizeof(float) * (size_t)T * R);
		memcpy(rope, test->rope, sizeof(float) * (size_t)T * P);
		for (int k = 0; k < R; k++) {
			lat[3 * R + k] *= 1e7f;
			lat[70 * R + k] = 0;
		}
		for (int k = 0; k < P; k++)
			rope[5 * P + k] *= 3e6f;
		lat[11 * R + 17] = 1e4f;
		lat[13 * R + 2] = NAN;
		lat[130 * R + 9] = INFINITY;
		if (P)
			rope[140 * P + 1] = -INFINITY;
		ok(same_every_kernel(c, wzc_wz_encode_layer, wzc_wz_encode_layer_ref, T, lat, rope,
				     fast, ref),
		   "%s %s: the same bytes with outlying tokens (every integer kernel)", name, fname);
		ok(same_every_kernel(c, wzc_wzs_encode_layer, wzc_wzs_encode_layer_ref, T, lat, rope,
				     fast, ref),
		   "%s wzs-%g: the same bytes with outlying tokens (every integer kernel)", name,
		   rates[i]);
		free(lat);
		free(rope);
		/* the batch quantizer on the plan's own grids, edges included */
		const wzc_qbatch *qb = &wzc_wz_plan_layer(c->wz, 0)->qb;
		float *z = malloc(sizeof(float) * (qb->n + 1));
		uint32_t *d1 = malloc(sizeof(uint32_t) * (qb->n + 1)), *d2 = malloc(sizeof(uint32_t) * (qb->n + 1));
		int qsame = 1;
		for (int rep = 0; rep < 200; rep++) {
			for (int j = 0; j < qb->n; j++) {
				const wzc_qlut *q = qb->q[j];
				uint32_t at = (uint32_t)(rng % q->nthr);
				float e = q->thr[at];
				z[j] = rep % 4 == 0 ? e : rep % 4 == 1 ? nextafterf(e, INFINITY)
				     : rep % 4 == 2 ? uniform() * 8 : (rep & 8 ? NAN : -INFINITY);
				(void)uniform();
			}
			wzc_quantize_batch_ref(qb, z, d1);
			wzc_quantize_batch(qb, z, d2);
			qsame &= !memcmp(d1, d2, sizeof(uint32_t) * qb->n);
		}
		ok(qsame, "%s %s: the batch quantizer equals the scalar one", name, fname);
		free(z);
		free(d1);
		free(d2);
		free(fast);
		free(ref);
		wzc_codec_free(c);
	}
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
}

int main(void)
{
	test_gemm();
	test_igemm();
	test_input_q();
	test_field_word();
	test_quantize();
	test_quantize_batch();
	test_records(WZT_FAMILY_IID, "iid");
	test_records(WZT_FAMILY_MLA_A, "mla-a");
	test_records(WZT_FAMILY_MLA_B, "mla-b");
	return tap_done();
}
