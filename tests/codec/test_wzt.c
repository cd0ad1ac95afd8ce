/* The trellis-coded fixed-rate format wzt (docs/wz-format.md, "Trellis-coded
 * records"): the Viterbi search against an exhaustive one written here
 * (every digit of every state, no subsets), the decoder against a walk of
 * the record written here from the specification (mixed-radix groups,
 * the trellis from wzt_next, not the plan's table), each token decoded
 * alone as in a layer, the round trip's error below wz's at the same
 * record size, arbitrary bytes decoding to finite values, and bad rates
 * and shapes refused. */
#include "tests/tap.h"

#include <stdint.h>

#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/formats/format.h"
#include "codec/profile/profile.h"
#include "codec/wz/wz_plan.h"
#include "codec/wz/wzt_trellis.h"
#include "tests/codec/window.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (rng >> 11) * 0x1.0p-53;
}

static wzt_cache_trace *small_window(wzt_family fam, uint64_t window_seed, const char *split, int T)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = fam;
	p.seed = 5;
	p.L = 2;
	p.T = T;
	p.R = 64;
	p.P = 16;
	p.Q = 8;
	p.H = 2;
	p.window_seed = window_seed;
	p.split = split;
	return synth_with(&p);
}

/* Exhaustive Viterbi: from each state every digit 0..N-1 (level
 * 2d + union), the next state by wzt_next; the least metric over end
 * states.  Returns the metric; digits of the trellis components in dig. */
static double viterbi_full(const wzc_wzt_plan *tp, const layer_plan *lp, int layer,
			   const float *zl, uint32_t *dig)
{
	const wzc_wzt_layer *tl = &tp->layers[layer];
	int nord = lp->gstart[lp->ngroups], S = 1 << tp->nu, ns = tl->nsteps;
	double *m = malloc(sizeof(double) * S), *nm = malloc(sizeof(double) * S);
	int *from = malloc(sizeof(int) * (size_t)ns * S);
	uint32_t *dd = malloc(sizeof(uint32_t) * (size_t)ns * S);
	for (int s = 0; s < S; s++)
		m[s] = s ? INFINITY : 0;
	int t = 0;
	for (int i = 0; i < nord; i++) {
		if (!tl->cb[i])
			continue;
		int c = lp->order[i], jl = lp->order_c[i];
		for (int s = 0; s < S; s++)
			nm[s] = INFINITY;
		for (int s = 0; s < S; s++) {
			if (!(m[s] < INFINITY))
				continue;
			for (uint32_t d = 0; d < lp->nlev[c]; d++) {
				double e = (double)zl[jl] - tl->cb[i][2 * d + (s & 1)];
				double cand = m[s] + lp->ew_c[jl] * (e * e);
				int to = (int)wzt_next(tp->nu, (uint32_t)s, d & 1);
				if (cand < nm[to]) {
					nm[to] = cand;
					from[(size_t)t * S + to] = s;
					dd[(size_t)t * S + to] = d;
				}
			}
		}
		memcpy(m, nm, sizeof(double) * S);
		t++;
	}
	int s = 0;
	for (int k = 1; k < S; k++)
		if (m[k] < m[s])
			s = k;
	double best = m[s];
	for (int i = nord - 1; i >= 0; i--) {
		if (!tl->cb[i])
			continue;
		t--;
		dig[lp->order[i]] = dd[(size_t)t * S + s];
		s = from[(size_t)t * S + s];
	}
	free(m);
	free(nm);
	free(from);
	free(dd);
	return best;
}

/* The metric of the digits dig along the trellis from state 0. */
static double path_metric(const wzc_wzt_plan *tp, const layer_plan *lp, int layer,
			  const float *zl, const uint32_t *dig)
{
	const wzc_wzt_layer *tl = &tp->layers[layer];
	uint32_t s = 0;
	double sum = 0;
	for (int i = 0; i < lp->gstart[lp->ngroups]; i++) {
		if (!tl->cb[i])
			continue;
		int c = lp->order[i], jl = lp->order_c[i];
		double e = (double)zl[jl] - tl->cb[i][2 * dig[c] + (s & 1)];
		sum += lp->ew_c[jl] * (e * e);
		s = wzt_next(tp->nu, s, dig[c] & 1);
	}
	return sum;
}

/* Standardized values for one trial of the fast search: Gaussian, some
 * far past the tables, or inputs that make ties: all zero, every value on
 * a level, halfway between two levels of a union codebook, or some or all
 * at +-1e20, where the four subsets' distances are the same double, so
 * that many paths have exactly the same metric and the tie rule decides. */
static void trial_values(const wzc_wzt_layer *tl, const layer_plan *lp, int trial, float *zl)
{
	int nc = lp->ncod[0] + lp->ncod[1], nord = lp->gstart[lp->ngroups];
	zl[nc] = zl[nc + 1] = 0;
	for (int j = 0; j < nc; j++) {
		double u1 = uniform() + 1e-12, u2 = uniform();
		zl[j] = (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2) *
				(trial % 8 == 7 ? 6 : 1));
	}
	int kind = trial % 7;
	/* (the anchor flags' places, past the coefficients, are not written) */
	for (int i = 0; kind >= 5 && i < nord; i++)
		if (tl->cb[i] && (kind == 6 || uniform() < 0.3))
			zl[lp->order_c[i]] = uniform() < 0.5 ? 1e20f : -1e20f;
	for (int i = 0; kind >= 2 && kind < 5 && i < nord; i++) {
		const float *cb = tl->cb[i];
		int jl = lp->order_c[i];
		uint32_t n2 = 2 * lp->nlev[lp->order[i]];
		if (!cb)
			continue;
		uint32_t k = (uint32_t)(uniform() * (n2 - 1));
		zl[jl] = kind == 2 ? 0.0f : kind == 3 ? cb[k] : (cb[k] + cb[k + 1]) / 2;
	}
}

/* The fast search against the reference's digits, on every trellis of
 * the table (4 to 256 states), by each kernel this machine runs (the
 * widest vectors, AVX2, portable; simd forces each), one token alone
 * and eight tokens side by side (each lane's digits its own token's),
 * among them a token with a coefficient that is not finite (the
 * reference's loop then runs for that lane). */
static void check_fast_digits(const wzc_wz_plan *plan, size_t B)
{
	const layer_plan *lp = &plan->layers[0];
	int nc = lp->ncod[0] + lp->ncod[1], n = lp->n, nord = lp->gstart[lp->ngroups];
	/* per lane nc + 2 places: the anchor flags have places nc and nc + 1
	 * (order_c, codec/wz/wz_plan.h) */
	float *zl = malloc(sizeof(float) * (size_t)(nc + 2) * WZT_LANES);
	uint32_t *a = calloc((size_t)n, sizeof *a);
	uint32_t *b = calloc((size_t)(nc + 2) * WZT_LANES, sizeof *b);
	for (int nu = 8; nu >= 2; nu--) {
		wzc_wzt_plan *tp = NULL;
		wz_diag d;
		if (!ok(wzc_wzt_plan_new(plan, nu, &tp, &d) == WZ_OK, "nu=%d: trellis", nu))
			continue;
		int ran[3] = { 0, 0, 0 };
		for (int simd = 2; simd >= 0; simd--) {
			wzc_wzt_work *w = wzc_wzt_work_new(tp, 0, simd);
			int differ = 0, trials = nu >= 7 ? 24 : 48, kernel = w ? wzc_wzt_work_simd(w) : -1;
			if (kernel >= 0 && ran[kernel]++)
				goto next; /* this CPU lacks the wider kernel: done already */
			for (int trial = 0; w && trial < trials; trial++) {
				int nl = trial % 3 == 0 ? 1 : 1 + trial % WZT_LANES;
				const float *zp[WZT_LANES];
				uint32_t *dp[WZT_LANES];
				for (int l = 0; l < nl; l++) {
					zp[l] = zl + (size_t)l * (nc + 2);
					dp[l] = b + (size_t)l * (nc + 2);
					trial_values(&tp->layers[0], lp, trial * WZT_LANES + l, zl + (size_t)l * (nc + 2));
					if (trial % 5 == 4 && l == nl - 1 && nc > 0)
						zl[(size_t)l * (nc + 2) + (size_t)(trial % nc)] = trial % 2 ? NAN : INFINITY;
				}
				memset(b, 0, sizeof *b * (size_t)(nc + 2) * WZT_LANES);
				if (nl == 1)
					wzc_wzt_digits_fast(tp, w, lp, 0, zp[0], dp[0]);
				else
					wzc_wzt_digits_lanes(tp, w, lp, 0, nl, zp, dp);
				for (int l = 0; l < nl; l++) {
					memset(a, 0, sizeof *a * (size_t)n);
					wzc_wzt_digits(tp, lp, 0, zp[l], a);
					int bad = 0;
					for (int i = 0; i < nord; i++)
						if (tp->layers[0].cb[i])
							bad |= a[lp->order[i]] != dp[l][lp->order_c[i]];
					differ += bad;
				}
			}
			ok(w && differ == 0, "%zu bytes, nu=%d, %s kernel: the fast search's digits are "
			   "the reference's for every token (%d differ; 1 to 8 lanes, zeros, levels, "
			   "midpoints, exact ties, a coefficient not finite)", B, nu,
			   kernel == 2 ? "AVX-512" : kernel == 1 ? "AVX2" : "portable", differ);
		next:
			wzc_wzt_work_free(w);
		}
		/* without the grids (a codebook too uneven for one): the
		 * bisection finds the same levels */
		for (int i = 0; i < tp->layers[0].nsteps; i++)
			tp->layers[0].steps[i].start = NULL;
		wzc_wzt_work *w = wzc_wzt_work_new(tp, 0, 2);
		int differ = 0;
		for (int trial = 0; w && trial < 16; trial++) {
			trial_values(&tp->layers[0], lp, trial, zl);
			memset(a, 0, sizeof *a * (size_t)n);
			memset(b, 0, sizeof *b * (size_t)(nc + 2));
			wzc_wzt_digits(tp, lp, 0, zl, a);
			wzc_wzt_digits_fast(tp, w, lp, 0, zl, b);
			for (int i = 0; i < nord; i++)
				if (tp->layers[0].cb[i])
					differ += a[lp->order[i]] != b[lp->order_c[i]];
		}
		ok(w && differ == 0, "%zu bytes, nu=%d, no grids: the same digits (%d differ)", B, nu,
		   differ);
		wzc_wzt_work_free(w);
		wzc_wzt_plan_free(tp);
	}
	free(zl);
	free(a);
	free(b);
}

static void check_viterbi(const wzc_profile *prof, size_t B, int nu, int fast)
{
	wzc_wz_plan *plan = NULL;
	wzc_wzt_plan *tp = NULL;
	wz_diag d;
	if (!ok(wzc_wz_plan_new(prof, 0, B, &plan, &d) == WZ_OK &&
		wzc_wzt_plan_new(plan, nu, &tp, &d) == WZ_OK, "plan of %zu bytes", B)) {
		wzc_wz_plan_free(plan);
		return;
	}
	const layer_plan *lp = &plan->layers[0];
	int nc = lp->ncod[0] + lp->ncod[1], n = lp->n, worse = 0, differ = 0, trials = 40;
	/* the anchor flags have places nc and nc + 1 (order_c, codec/wz/wz_plan.h) */
	float *zl = malloc(sizeof(float) * (size_t)(nc + 2));
	uint32_t *a = calloc((size_t)n, sizeof *a), *b = calloc((size_t)n, sizeof *b);
	for (int trial = 0; trial < trials; trial++) {
		/* standardized values, some far past the tables */
		for (int j = 0; j < nc; j++) {
			double u1 = uniform() + 1e-12, u2 = uniform();
			zl[j] = (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2) *
					(trial % 8 == 7 ? 6 : 1));
		}
		memset(a, 0, sizeof *a * (size_t)n);
		memset(b, 0, sizeof *b * (size_t)n);
		wzc_wzt_digits(tp, lp, 0, zl, a);
		double best = viterbi_full(tp, lp, 0, zl, b);
		double got = path_metric(tp, lp, 0, zl, a);
		worse += !(got <= best * (1 + 1e-12) + 1e-300);
		differ += memcmp(a, b, sizeof *a * (size_t)n) != 0;
	}
	ok(worse == 0, "%zu bytes, nu=%d (%d trellis steps of %d coded): the search's path is the "
	   "exhaustive search's least metric in %d of %d trials", B, nu, tp->layers[0].nsteps, nc,
	   trials - worse, trials);
	ok(differ == 0, "%zu bytes, nu=%d: and its digits are the exhaustive search's (%d differ)", B,
	   nu, differ);
	if (fast)
		check_fast_digits(plan, B);
	free(zl);
	free(a);
	free(b);
	wzc_wzt_plan_free(tp);
	wzc_wz_plan_free(plan);
}

static uint64_t read_bits(const uint8_t *rec, int off, int k)
{
	uint64_t v = 0;
	for (int i = 0; i < k; i++)
		v |= (uint64_t)((rec[(off + i) >> 3] >> ((off + i) & 7)) & 1) << i;
	return v;
}

/* The transformed-domain values of one record, from the specification. */
static void decode_spec(const wzc_codec *c, int layer, const uint8_t *rec, float *y)
{
	const wzc_wz_plan *plan = c->wz;
	const layer_plan *lp = &plan->layers[layer];
	const wzc_wzt_layer *tl = &c->wzt->layers[layer];
	const wzc_profile *pr = plan->profile;
	const wzc_part_profile *parts[2] = { &pr->latent[layer], &pr->rope[layer] };
	int R = plan->R, P = plan->P, nv = R + P;
	float s[2] = { plan->scale_mult[0][rec[0]] * parts[0]->scale_ref,
		       P ? plan->scale_mult[1][rec[1]] * parts[1]->scale_ref : 0 };
	for (int k = 0; k < nv; k++)
		y[k] = lp->nlev[k] == 1 ? lp->lev[k][0] * lp->sigma[k] * s[k >= R] : 0;
	uint32_t flag[2] = { 0, 0 }, state = 0;
	int off = 8 * plan->scale_bytes;
	for (int g = 0; g < lp->ngroups; g++) {
		int kb = lp->gbits[g];
		uint64_t x = read_bits(rec, off, kb) << (64 - kb);
		off += kb;
		for (int i = lp->gstart[g]; i < lp->gstart[g + 1]; i++) {
			int k = lp->order[i];
			unsigned __int128 prod = (unsigned __int128)x * lp->nlev[k];
			uint32_t digit = (uint32_t)(prod >> 64);
			x = (uint64_t)prod;
			if (k >= nv) {
				flag[k - nv] = digit;
			} else if (tl->cb[i]) {
				y[k] = tl->cb[i][2 * digit + (state & 1)] * lp->sigma[k] * s[k >= R];
				state = wzt_next(c->wzt->nu, state, digit & 1);
			} else {
				y[k] = lp->lev[k][digit] * lp->sigma[k] * s[k >= R];
			}
		}
	}
	for (int k = 0; k < nv; k++)
		if (flag[k >= R])
			y[k] += lp->delta[k >= R][k >= R ? k - R : k];
}

static double sq_error(const float *a, const float *b, size_t n, double *energy)
{
	double e = 0;
	for (size_t i = 0; i < n; i++) {
		double d = (double)a[i] - b[i];
		e += d * d;
		*energy += (double)a[i] * a[i];
	}
	return e;
}

/* The plan's weighted squared error of a token in the transformed domain,
 * sum_k weight_k (y_k - yhat_k)^2 with y = B (v - mean): what wz's
 * allocation and wzt's search minimize. */
static double weighted_error(const wzc_codec *c, int l, const uint8_t *rec, const float *x,
			     const float *xr, float *yl, float *yr)
{
	const wzc_profile *pr = c->wz->profile;
	const wzc_part_profile *parts[2] = { &pr->latent[l], &pr->rope[l] };
	const float *v[2] = { x, xr };
	float *yh[2] = { yl, yr };
	wzc_wz_decode_token_transformed(c, l, rec, yl, yr);
	double sum = 0;
	for (int p = 0; p < 2; p++) {
		int m = parts[p]->n;
		for (int k = 0; k < m; k++) {
			double y = 0;
			for (int i = 0; i < m; i++)
				y += (double)parts[p]->basis[(size_t)k * m + i] * (v[p][i] - parts[p]->mean[i]);
			double e = y - yh[p][k];
			sum += parts[p]->weight[k] * e * e;
		}
	}
	return sum;
}

/* The format named prefix-<bits> (wzt, wzt8 or wzt32) on 2^nu states. */
static void round_trip(wzt_family fam, const char *prefix, int nu)
{
	const char *fname = wzt_family_name(fam);
	wzt_cache_trace *cal = small_window(fam, 0, "calibration", 512);
	wzt_cache_trace *test = small_window(fam, UINT64_C(1) << 32, "test", 256);
	if (!ok(cal && test, "%s: windows", fname))
		return;
	trace_bf16(test); /* the codec codes bf16 */
	wzc_window cw = window_of(cal), tw = window_of(test);
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wz_diag d;
	if (!ok(wzc_prepare(&cp, 1, NULL, &prof, &d) == WZ_OK, "%s: prepare", fname))
		return;
	int R = tw.R, P = tw.P, T = tw.T, L = tw.L, nv = R + P;
	const double rates[] = { 2.0, 4.97, 5.44, 6.31 };
	for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
		wzc_format fz, ft;
		char nz[32], nt[32];
		snprintf(nz, sizeof nz, "wz-%.2f", rates[r]);
		snprintf(nt, sizeof nt, "%s-%.2f", prefix, rates[r]);
		wzc_codec *cz = NULL, *ct = NULL;
		if (!ok(wzc_format_parse(nz, &fz, &d) == WZ_OK && wzc_format_parse(nt, &ft, &d) == WZ_OK &&
			wzc_codec_new(&fz, L, R, P, prof, &cz, &d) == WZ_OK &&
			wzc_codec_new(&ft, L, R, P, prof, &ct, &d) == WZ_OK, "%s %s: codecs", fname, nt)) {
			wzc_codec_free(cz);
			continue;
		}
		size_t B = wzc_codec_record_bytes(ct);
		ok(B == wzc_codec_record_bytes(cz), "%s %s: wz's record size (%zu bytes)", fname, nt, B);
		uint8_t *rec = malloc(B * T);
		float *lat = malloc(sizeof(float) * T * R), *rope = malloc(sizeof(float) * T * P);
		float *l1 = malloc(sizeof(float) * R), *r1 = malloc(sizeof(float) * (P + 1));
		float *y = malloc(sizeof(float) * nv), *yl = malloc(sizeof(float) * R),
		      *yr = malloc(sizeof(float) * (P + 1));
		double err[2] = { 0, 0 }, werr[2] = { 0, 0 }, energy = 0;
		int alone = 0, spec = 0;
		for (int l = 0; l < L; l++) {
			const float *x = tw.latent + (size_t)l * T * R, *xr = tw.rope + (size_t)l * T * P;
			for (int f = 0; f < 2; f++) {
				wzc_codec *c = f ? ct : cz;
				wzc_encode_layer(c, l, T, x, xr, rec, &d);
				if (wzc_decode_layer(c, l, T, rec, lat, rope))
					ok(0, "layer %d decoded (out of memory?)", l);
				double en = 0;
				err[f] += sq_error(x, lat, (size_t)T * R, &en) + sq_error(xr, rope, (size_t)T * P, &en);
				if (f)
					energy += en;
				for (int t = 0; t < T; t++)
					werr[f] += weighted_error(c, l, rec + (size_t)t * B, x + (size_t)t * R,
								  xr + (size_t)t * P, yl, yr);
			}
			for (int t = 0; t < T; t++) {
				const uint8_t *rt = rec + (size_t)t * B;
				alone += wzc_decode_token(ct, l, rt, l1, r1) != WZ_OK ||
					 memcmp(l1, lat + (size_t)t * R, sizeof(float) * R) != 0 ||
					 memcmp(r1, rope + (size_t)t * P, sizeof(float) * P) != 0;
				decode_spec(ct, l, rt, y);
				wzc_wz_decode_token_transformed(ct, l, rt, yl, yr);
				spec += memcmp(y, yl, sizeof(float) * R) != 0 ||
					memcmp(y + R, yr, sizeof(float) * P) != 0;
			}
		}
		/* the fast encoder writes the reference's bytes, on the window
		 * and on tokens that make ties: the mean, the anchor, the mean
		 * plus a few equal offsets, a copy of another token */
		{
			uint8_t *ref = malloc(B * T), *fast = malloc(B * T);
			float *xl = malloc(sizeof(float) * T * R), *xp = malloc(sizeof(float) * T * P);
			int differ = 0;
			const wzc_profile *pr = ct->wz->profile;
			for (int l = 0; l < L; l++) {
				memcpy(xl, tw.latent + (size_t)l * T * R, sizeof(float) * T * R);
				memcpy(xp, tw.rope + (size_t)l * T * P, sizeof(float) * T * P);
				const wzc_part_profile *pl = &pr->latent[l], *pp = &pr->rope[l];
				for (int t = 0; t < T; t += 4) {
					float *tl = xl + (size_t)t * R, *tr = xp + (size_t)t * P;
					int kind = (t / 4) % 4;
					if (kind == 3 && t >= 8) {
						memcpy(tl, tl - (size_t)8 * R, sizeof(float) * R);
						memcpy(tr, tr - (size_t)8 * P, sizeof(float) * P);
						continue;
					}
					for (int i = 0; i < R; i++)
						tl[i] = kind == 0 ? pl->mean[i] : kind == 1 ? pl->anchor[i]
							: pl->mean[i] + (i % 7 == 0 ? 0.5f : 0.0f);
					for (int i = 0; i < P; i++)
						tr[i] = kind == 0 ? pp->mean[i] : kind == 1 ? pp->anchor[i]
							: pp->mean[i] + (i % 5 == 0 ? -0.25f : 0.0f);
				}
				/* in bf16, as the codec codes them */
				for (size_t i = 0; i < (size_t)T * R; i++)
					xl[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(xl[i]));
				for (size_t i = 0; i < (size_t)T * P; i++)
					xp[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(xp[i]));
				wzc_wz_encode_layer_trellis(ct->wz, ct->wzt, l, T, xl, xp, ref, B);
				wzc_encode_layer(ct, l, T, xl, xp, fast, &d);
				for (int t = 0; t < T; t++)
					differ += memcmp(ref + (size_t)t * B, fast + (size_t)t * B, B) != 0;
			}
			ok(differ == 0, "%s %s: the fast encoder writes the reference encoder's bytes "
			   "(%d of %d records differ; ties among the tokens)", fname, nt, differ, T * L);
			free(ref);
			free(fast);
			free(xl);
			free(xp);
		}
		ok(alone == 0, "%s %s: every token decodes alone to its values in the layer (%d differ)",
		   fname, nt, alone);
		ok(spec == 0, "%s %s: the decoder walks the trellis as specified (%d tokens differ)",
		   fname, nt, spec);
		/* the search minimizes the weighted error, which is what must
		 * fall; plain nmse is reported (at low rates on query-weighted
		 * profiles it can rise) */
		ok(werr[1] < werr[0], "%s %s: weighted error %.4g below wz's %.4g (%.2f dB; nmse %.5f, "
		   "wz %.5f)", fname, nt, werr[1], werr[0], 10 * log10(werr[0] / werr[1]),
		   err[1] / energy, err[0] / energy);
		/* arbitrary bytes decode without fault, to finite values */
		int finite = 1;
		for (int t = 0; t < 64; t++) {
			for (size_t i = 0; i < B; i++)
				rec[i] = (uint8_t)(uniform() * 256);
			rec[0] = (uint8_t)(1 + uniform() * 200);
			if (P)
				rec[1] = (uint8_t)(1 + uniform() * 200);
			finite &= !wzc_decode_token(ct, 0, rec, l1, r1);
			for (int i = 0; i < R; i++)
				finite &= isfinite(l1[i]);
			for (int i = 0; i < P; i++)
				finite &= isfinite(r1[i]);
		}
		ok(finite, "%s %s: random records decode to finite values", fname, nt);
		ok(ct->wzt && ct->wzt->nu == nu, "%s %s: %d states", fname, nt, 1 << nu);
		if (r == 2)
			check_viterbi(prof, B, nu, nu == 8);
		free(rec);
		free(lat);
		free(rope);
		free(l1);
		free(r1);
		free(y);
		free(yl);
		free(yr);
		wzc_codec_free(cz);
		wzc_codec_free(ct);
	}
	/* refused: a rate out of range, a bad name, a profile of another shape, no profile */
	wzc_format f;
	ok(wzc_format_parse("wzt-0.5", &f, &d) == WZ_ERR_RANGE, "%s: wzt-0.5 refused: %s", fname, d.msg);
	ok(wzc_format_parse("wzt-x", &f, &d) != WZ_OK, "%s: wzt-x refused", fname);
	wzc_codec *c = NULL;
	wzc_format_parse("wzt-5.44", &f, &d);
	ok(wzc_codec_new(&f, L, R + 16, P, prof, &c, &d) == WZ_ERR_INPUT,
	   "%s: a profile of another shape is refused: %s", fname, d.msg);
	ok(wzc_codec_new(&f, L, R, P, NULL, &c, &d) == WZ_ERR_MISSING, "%s: no profile is refused: %s",
	   fname, d.msg);
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
}

/* At DeepSeek's shape (512 + 64 values), where codebooks reach
 * hundreds of levels (companded past 64): the fast encoder, by each
 * kernel this machine runs (forced), writes the reference encoder's
 * bytes for every trellis of the family, at 4.97 to 14 bits a value. */
static void full_shape(void)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = WZT_FAMILY_MLA_B;
	p.seed = 7;
	p.L = 1;
	p.R = 512;
	p.P = 64;
	p.Q = 8;
	p.H = 2;
	p.T = 1024;
	p.window_seed = 0;
	p.split = "calibration";
	wzt_cache_trace *cal = synth_with(&p);
	p.T = 48;
	p.window_seed = UINT64_C(1) << 32;
	p.split = "test";
	wzt_cache_trace *test = synth_with(&p);
	if (!ok(cal && test, "512+64: windows"))
		return;
	trace_bf16(test); /* the codec codes bf16 */
	wzc_window cw = window_of(cal), tw = window_of(test);
	const wzc_window *cp = &cw;
	wzc_profile *prof = NULL;
	wz_diag d;
	if (!ok(wzc_prepare(&cp, 1, NULL, &prof, &d) == WZ_OK, "512+64: prepare"))
		return;
	static const char *const names[] = { "wzt8-4.97", "wzt8-5.44", "wzt8-9", "wzt8-14",
					     "wzt32-5.44", "wzt32-9", "wzt-5.44" };
	for (size_t f = 0; f < sizeof names / sizeof *names; f++) {
		wzc_format fmt;
		wzc_codec *c = NULL;
		if (!ok(wzc_format_parse(names[f], &fmt, &d) == WZ_OK &&
			wzc_codec_new(&fmt, 1, tw.R, tw.P, prof, &c, &d) == WZ_OK, "512+64 %s: codec",
			names[f]))
			continue;
		size_t B = wzc_codec_record_bytes(c);
		int T = tw.T;
		uint8_t *ref = malloc(B * T), *fast = malloc(B * T);
		wzc_wz_encode_layer_trellis(c->wz, c->wzt, 0, T, tw.latent, tw.rope, ref, B);
		uint32_t most = 0;
		for (int i = 0; i < c->wzt->layers[0].nsteps; i++)
			most = c->wzt->layers[0].steps[i].n2 > most ? c->wzt->layers[0].steps[i].n2 : most;
		for (int simd = 2; simd >= 0; simd--) {
			wzc_wzt_force_simd(simd);
			wzc_wzt_work *w = wzc_wzt_work_new(c->wzt, 0, 2);
			int kernel = w ? wzc_wzt_work_simd(w) : -1;
			wzc_wzt_work_free(w);
			if (kernel != simd)
				continue; /* not on this CPU */
			wzc_encode_layer(c, 0, T, tw.latent, tw.rope, fast, &d);
			int differ = 0;
			for (int t = 0; t < T; t++)
				differ += memcmp(ref + (size_t)t * B, fast + (size_t)t * B, B) != 0;
			ok(differ == 0, "512+64 %s (%zu bytes, codebooks up to %u levels), %s kernel: the "
			   "fast encoder writes the reference's bytes (%d of %d records differ)",
			   names[f], B, most, simd == 2 ? "AVX-512" : simd ? "AVX2" : "portable", differ,
			   T);
		}
		wzc_wzt_force_simd(2);
		free(ref);
		free(fast);
		wzc_codec_free(c);
	}
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
}

int main(void)
{
	/* the trellis as specified: from each state two branches of one union,
	 * into each state branches of one union, every state reachable */
	for (int nu = 2; nu <= 8; nu++) {
		int S = 1 << nu, bad = 0, seen[256] = { 0 };
		for (int s = 0; s < S; s++)
			for (uint32_t b = 0; b < 2; b++) {
				uint32_t to = wzt_next(nu, (uint32_t)s, b);
				bad += to >= (uint32_t)S || (to >> (nu - 1)) != wzt_union((uint32_t)s);
				seen[to]++;
			}
		int twice = 1;
		for (int s = 0; s < S; s++)
			twice &= seen[s] == 2;
		ok(bad == 0 && twice, "trellis nu=%d: unions consistent, two branches into every state", nu);
	}
	/* the decoder's one-word table (up to 8 states) moves as wzt_next */
	for (int nu = 2; nu <= WZT_NU_IN_WORD; nu++) {
		uint64_t table = wzt_next_table(nu);
		int bad = 0;
		for (uint32_t s = 0; s < (1u << nu); s++)
			for (uint32_t b = 0; b < 2; b++)
				bad += wzt_next_in(table, s, b) != wzt_next(nu, s, b);
		ok(bad == 0, "trellis nu=%d: the one-word table gives wzt_next's states", nu);
	}
	round_trip(WZT_FAMILY_IID, "wzt", 8);
	round_trip(WZT_FAMILY_MLA_A, "wzt", 8);
	round_trip(WZT_FAMILY_MLA_B, "wzt", 8);
	round_trip(WZT_FAMILY_IID, "wzt8", 3);
	round_trip(WZT_FAMILY_MLA_B, "wzt8", 3);
	round_trip(WZT_FAMILY_IID, "wzt32", 5);
	round_trip(WZT_FAMILY_MLA_B, "wzt32", 5);
	full_shape();
	/* the ids and names of the family, never renumbered */
	wzc_format f;
	wz_diag d;
	ok(wzc_format_parse("wzt8-5.44", &f, &d) == WZ_OK && f.id == 19 &&
	   wzc_format_trellis_nu(f.id) == 3 && !strcmp(f.name, "wzt8-5.44"), "wzt8-5.44: id 19, 8 states");
	ok(wzc_format_parse("wzt32-5.44", &f, &d) == WZ_OK && f.id == 20 &&
	   wzc_format_trellis_nu(f.id) == 5, "wzt32-5.44: id 20, 32 states");
	ok(wzc_format_parse("wzt-5.44", &f, &d) == WZ_OK && f.id == 18 &&
	   wzc_format_trellis_nu(f.id) == 8, "wzt-5.44: id 18, 256 states");
	ok(wzc_format_parse("wzt16-5.44", &f, &d) == WZ_ERR_NOT_FOUND, "wzt16-5.44 is no format: %s",
	   d.msg);
	return tap_done();
}
