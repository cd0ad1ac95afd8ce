/* `prepare`: the wz profile from calibration windows.  Per layer and part
 * it estimates mean and covariance, takes the covariance's eigenbasis (KLT)
 * as the orthogonal transform, weights components by the query statistics
 * when the windows hold queries, and records the per-token scale and the
 * distribution of standardized values that the level tables are fitted to. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/formats/baseline.h"
#include "codec/formats/fpconv.h"
#include "codec/profile/scale_code.h"
#include "codec/first_fail.h"
#include "codec/hot.h"
#include "codec/profile/linalg.h"
#include "codec/cores.h"
#include "codec/profile/predict_fit.h"
#include "codec/profile/profile_internal.h"
#include "codec/profile/profile.h"
#include "codec/profile/rope.h"

static const float *row(const wzc_window *w, int pos, int l, int t);
static int is_sink(const wzc_window *w, int t);
static int rope_query_moments(const wzc_window *const *ws, int nw, int l,
			      const wzc_part_profile *q, const double *freq, double *qstat,
			      double *q4, double *nq_out);

void wzc_prepare_opts_default(wzc_prepare_opts *o)
{
	/* All of the weight on the attention-score error, the error the
	 * quality metrics (attention KL, live next-token KL) measure.  It gave
	 * 2-6x lower live next-token KL than 0.5 on the project's own model's
	 * held-out 32k-token windows (1,024 query vectors a layer;
	 * docs/real-model.md), and lower attention KL and attention-output
	 * error on every synthetic family with queries, from 512 query vectors
	 * a layer and from as few as 16 (a 256-token calibration window):
	 * docs/wz-format.md, "Query weight".  What it costs is plain squared
	 * error (nmse), which it does not aim at: 0 plans by that alone. */
	o->query_weight = 1;
	/* Off by default: on unstructured (iid) caches the cap costs 1.5 dB
	 * of overall distortion (wzt8-5.44: 3.37 -> 4.90 dB from the bound)
	 * and 1.4x attention KL; on the real model's caches it never binds
	 * (their position part is already ~0.01x the int8 part's error). */
	o->position_cap = 0;
	o->rope_freq = NULL;
	o->rope_pairs = 0;
	o->rope_layers = NULL;
	o->predict = 0;
	o->threads = 0;
	o->progress = NULL;
	o->progress_ud = NULL;
}

/* The position cap of layer l (docs/wz-format.md, "Model"): the int8
 * position coder's mean squared error per calibration token, the sink
 * excluded as in the statistics.  -1 when out of memory. */
static double position_cap(const wzc_window *const *ws, int nw, int l)
{
	int P = ws[0]->P;
	uint8_t *code = malloc((size_t)P + 2);
	float *y = malloc(sizeof *y * (size_t)(P ? P : 1));
	double sum = 0, N = 0;
	if (!code || !y) {
		free(code);
		free(y);
		return -1;
	}
	for (int w = 0; w < nw; w++)
		for (int t = 0; t < ws[w]->T; t++) {
			if (is_sink(ws[w], t))
				continue;
			sum += wzc_int8_sq_error(row(ws[w], 1, l, t), P, code, y);
			N++;
		}
	free(code);
	free(y);
	return N > 0 ? sum / N : 0;
}

/* Row t of part `pos` (0 latent, 1 position) of layer l of window w. */
static const float *row(const wzc_window *w, int pos, int l, int t)
{
	return pos == 0 ? w->latent + ((size_t)l * w->T + t) * w->R
			: w->rope + ((size_t)l * w->T + t) * w->P;
}

/* The token at position 0 (the attention sink: the same token at the same
 * position in every sequence, so the same cache) is kept out of the
 * statistics and stored whole as the part's anchor. */
static int is_sink(const wzc_window *w, int t)
{
	return w->positions ? w->positions[t] == 0 : t == 0;
}

static void fit_anchor(const wzc_window *const *ws, int nw, int l, int pos, wzc_part_profile *q)
{
	int n = q->n, count = 0;
	double *acc = calloc((size_t)(n ? n : 1), sizeof *acc);
	for (int w = 0; acc && w < nw; w++)
		for (int t = 0; t < ws[w]->T; t++)
			if (is_sink(ws[w], t)) {
				const float *v = row(ws[w], pos, l, t);
				for (int i = 0; i < n; i++)
					acc[i] += v[i];
				count++;
			}
	for (int i = 0; i < n; i++)
		q->anchor[i] = acc && count ? (float)(acc[i] / count) : q->mean[i];
	free(acc);
}

/* The position part is rotated by RoPE at each token's position, so its
 * statistics at calibration positions say little about other positions:
 * averaged over positions, the mean is zero, pairs of channels rotated
 * together have equal variance and different pairs are uncorrelated.  So
 * its transform is the identity and its variances and weights are averaged
 * over each rotated pair (DeepSeek's interleaved pairs 2i, 2i+1), which
 * holds at any position, including 100k tokens past the calibration.
 * Given the model's frequencies, the profile undoes RoPE instead
 * (rotated_windows) and fits the position part as the latent. */
static void pair_average(float *v, int n)
{
	for (int i = 0; i + 1 < n; i += 2)
		v[i] = v[i + 1] = 0.5f * (v[i] + v[i + 1]);
}

static void pair_average_d(double *v, int n)
{
	for (int i = 0; i + 1 < n; i += 2)
		v[i] = v[i + 1] = 0.5 * (v[i] + v[i + 1]);
}

/* Sample eigenvalues of a few thousand tokens in hundreds of dimensions
 * spread far more than the true ones (Marchenko-Pastur), and a bit
 * allocation that follows the noise loses on every other window.  The
 * Ledoit-Wolf estimate of the shrinkage towards the mean eigenvalue (from
 * the same tokens, no constant to tune) corrects variances and sigmas
 * alike; on strongly structured caches it is close to zero.  `lw` is the
 * sum over the N tokens of ||x||^4 - 2 x'Sx. */
static void shrink(wzc_part_profile *q, const double *eig, double lw, double N)
{
	int n = q->n;
	if (N < 2 || n < 2)
		return;
	double mu = 0, s2 = 0, smu = 0;
	for (int k = 0; k < n; k++) {
		mu += eig[k];
		s2 += eig[k] * eig[k];
		smu += q->sigma[k];
	}
	mu /= n;
	smu /= n;
	double d2 = 0;
	for (int k = 0; k < n; k++)
		d2 += (eig[k] - mu) * (eig[k] - mu);
	double b2 = (lw + N * s2) / (N * N);
	double rho = d2 > 0 ? b2 / d2 : 1;
	rho = rho < 0 ? 0 : rho > 1 ? 1 : rho;
	for (int k = 0; k < n; k++) {
		q->var[k] = (float)((1 - rho) * q->var[k] + rho * mu);
		q->sigma[k] = (float)((1 - rho) * q->sigma[k] + rho * smu);
	}
}

/* klt: the part's mean, covariance eigenbasis and shrinkage (the latent,
 * and a position part with RoPE undone); else the position part as
 * cached: no mean, the identity, statistics averaged over each pair. */
static WZ_VEC_CLONES WZ_HOT wz_err fit_part(const wzc_window *const *ws, int nw, int l, int pos, int klt,
		       const double *freq /* RoPE undone: its frequencies, else NULL */,
		       wzc_part_profile *q,
		       double *qstat /* [n] query energy per component, OUT, or NULL */,
		       wz_diag *diag)
{
	int n = q->n;
	size_t un = (size_t)n;
	if (n == 0) {
		q->scale_ref = 1;
		q->hist[WZC_HIST_BINS / 2] = 1;
		return WZ_OK;
	}
	double *mean = calloc(un, sizeof *mean), *cov = calloc(un * un, sizeof *cov);
	double *eig = calloc(un, sizeof *eig), *x = calloc(un, sizeof *x);
	if (!mean || !cov || !eig || !x) {
		free(mean);
		free(cov);
		free(eig);
		free(x);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	double N = 0;
	for (int w = 0; w < nw; w++)
		for (int t = 0; t < ws[w]->T; t++) {
			if (is_sink(ws[w], t))
				continue;
			const float *v = row(ws[w], pos, l, t);
			for (int i = 0; i < n; i++)
				mean[i] += v[i];
			N++;
		}
	for (int i = 0; i < n; i++)
		mean[i] = klt && N > 0 ? mean[i] / N : 0;
	/* Lower triangle of the covariance, then mirrored. */
	for (int w = 0; w < nw; w++)
		for (int t = 0; t < ws[w]->T; t++) {
			if (is_sink(ws[w], t))
				continue;
			const float *v = row(ws[w], pos, l, t);
			for (int i = 0; i < n; i++)
				x[i] = v[i] - mean[i];
			for (int i = 0; i < n; i++) {
				double xi = x[i], *ci = cov + (size_t)i * un;
				for (int j = 0; j <= i; j++)
					ci[j] += xi * x[j];
			}
		}
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= i; j++) {
			cov[(size_t)i * un + j] /= N;
			cov[(size_t)j * un + i] = cov[(size_t)i * un + j];
		}
	if (!klt) {
		for (int i = 0; i < n; i++) {
			eig[i] = cov[(size_t)i * un + i];
			for (int j = 0; j < n; j++)
				cov[(size_t)i * un + j] = i == j;
		}
		pair_average_d(eig, n);
	} else if (wzc_sym_eigen(cov, n, eig)) {
		free(mean);
		free(cov);
		free(eig);
		free(x);
		return wz_diag_set(diag, WZ_ERR_INTERNAL,
				   "layer %d: the eigendecomposition did not converge", l);
	}
	for (int i = 0; i < n; i++) {
		q->mean[i] = (float)mean[i];
		q->var[i] = (float)fmax(eig[i], 0);
	}
	for (size_t i = 0; i < un * un; i++)
		q->basis[i] = (float)cov[i];

	/* Query energy along each component: E[(q . u_k)^2] over queries and
	 * heads, the expected squared score error per unit of error in u_k.
	 * From a few queries the per-component means are noisy, and weights
	 * that follow the noise starve components the test queries use (a
	 * 256-token window with 16 query vectors gave 3x fp8-mix's error at
	 * wz-5.44 with the weight on the scores alone).  Each is shrunk
	 * towards the part's mean energy by the James-Stein / Ledoit-Wolf
	 * intensity: the sum of the estimates' sampling variances over the
	 * sum of their squared spread, from the same queries (no constant to
	 * tune; near 0 with many queries, near 1 with few). */
	if (qstat) {
		double nq = 0;
		double *q4 = calloc((size_t)n + 1, sizeof *q4);
		if (!q4) {
			free(mean);
			free(cov);
			free(eig);
			free(x);
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		}
		for (int k = 0; k < n; k++)
			qstat[k] = 0;
		if (freq && rope_query_moments(ws, nw, l, q, freq, qstat, q4, &nq)) {
			free(q4);
			free(mean);
			free(cov);
			free(eig);
			free(x);
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		}
		for (int w = 0; !freq && w < nw; w++) {
			const wzc_window *win = ws[w];
			for (int qi = 0; qi < win->Q; qi++)
				for (int h = 0; h < win->H; h++) {
					size_t off = (((size_t)l * win->Q + qi) * win->H + h);
					const float *qv = pos == 0 ? win->q_latent + off * win->R
								   : win->q_rope + off * win->P;
					for (int k = 0; k < n; k++) {
						const float *u = q->basis + (size_t)k * un;
						double d = 0;
						for (int i = 0; i < n; i++)
							d += (double)u[i] * qv[i];
						qstat[k] += d * d;
						q4[k] += d * d * d * d;
					}
					nq++;
				}
		}
		double qbar = 0, spread = 0, noise = 0;
		for (int k = 0; k < n; k++) {
			qstat[k] = nq > 0 ? qstat[k] / nq : 0;
			qbar += qstat[k] / n;
		}
		for (int k = 0; nq > 1 && k < n; k++) {
			double m4 = q4[k] / nq;
			noise += fmax(m4 - qstat[k] * qstat[k], 0) / nq;
			spread += (qstat[k] - qbar) * (qstat[k] - qbar);
		}
		double rho = nq > 1 && spread > 0 ? fmin(noise / spread, 1) : 1;
		for (int k = 0; k < n; k++)
			qstat[k] = (1 - rho) * qstat[k] + rho * qbar;
		free(q4);
		if (!klt)
			pair_average_d(qstat, n);
	}

	/* Per-token scale s = RMS of the centered token (an orthogonal transform
	 * keeps it); sigma_k = RMS of component k over s; then the histogram of
	 * standardized values y_k / (s sigma_k). */
	double *ssum = calloc(un, sizeof *ssum);
	float *yrow = malloc(sizeof *yrow * un);
	float *bt = malloc(sizeof *bt * un * un); /* the basis transposed */
	double logs = 0, nlogs = 0, lw = 0;
	if (!ssum || !yrow || !bt) {
		free(ssum);
		free(yrow);
		free(bt);
		free(mean);
		free(cov);
		free(eig);
		free(x);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	/* The reference scale first, so the passes below can quantize each
	 * token's scale exactly as the encoder will. */
	for (int w = 0; w < nw; w++)
		for (int t = 0; t < ws[w]->T; t++) {
			if (is_sink(ws[w], t))
				continue;
			const float *v = row(ws[w], pos, l, t);
			double ss = 0;
			for (int i = 0; i < n; i++)
				ss += (v[i] - mean[i]) * (v[i] - mean[i]);
			if (ss > 0) {
				logs += 0.5 * log(ss / n);
				nlogs++;
			}
		}
	for (size_t k = 0; k < un; k++)
		for (size_t i = 0; i < un; i++)
			bt[i * un + k] = q->basis[k * un + i];
	q->scale_ref = nlogs > 0 ? (float)exp(logs / nlogs) : 1;
	if (!(q->scale_ref > 0) || !isfinite(q->scale_ref))
		q->scale_ref = 1;
	nlogs = 0;
	double *hist = calloc(WZC_HIST_BINS, sizeof *hist);
	for (int pass = 0; pass < 2 && hist; pass++) {
		for (int w = 0; w < nw; w++)
			for (int t = 0; t < ws[w]->T; t++) {
				if (is_sink(ws[w], t))
				continue;
			const float *v = row(ws[w], pos, l, t);
				double ss = 0;
				for (int i = 0; i < n; i++) {
					x[i] = v[i] - mean[i];
					ss += x[i] * x[i];
				}
				double s = wzc_scale_mult(wzc_scale_code(sqrt(ss / n), q->scale_ref)) *
					   (double)q->scale_ref;
				if (s <= 0)
					continue;
				for (int k = 0; k < n; k++)
					yrow[k] = 0;
				/* column i of the basis is row i of bt: the same sums in
				 * the same order, read along rows */
				for (int i = 0; i < n; i++) {
					float xi = (float)(x[i] / s);
					const float *u = bt + (size_t)i * un;
					for (int k = 0; k < n; k++)
						yrow[k] += u[k] * xi;
				}
				if (pass == 0) {
					nlogs++;
					double y2 = 0, ly2 = 0;
					for (int k = 0; k < n; k++) {
						double v2 = (double)yrow[k] * yrow[k];
						ssum[k] += v2;
						y2 += v2;
						ly2 += eig[k] * v2;
					}
					/* Ledoit-Wolf: sum over tokens of ||x x^T - S||_F^2
					 * without the constant ||S||_F^2 term. */
					lw += s * s * s * s * y2 * y2 - 2 * s * s * ly2;
					continue;
				}
				for (int k = 0; k < n; k++) {
					if (q->sigma[k] <= 0)
						continue;
					double z = yrow[k] / q->sigma[k];
					int b = (int)floor((z + WZC_HIST_RANGE) * WZC_HIST_BINS /
							   (2 * WZC_HIST_RANGE));
					b = b < 0 ? 0 : b >= WZC_HIST_BINS ? WZC_HIST_BINS - 1 : b;
					hist[b]++;
				}
			}
		if (pass == 0) {
			for (int k = 0; k < n; k++)
				q->sigma[k] = nlogs > 0 ? (float)(ssum[k] / nlogs) : 0;
			if (!klt)
				pair_average(q->sigma, n);
			else
				shrink(q, eig, lw, nlogs);
			for (int k = 0; k < n; k++)
				q->sigma[k] = sqrtf(q->sigma[k]);
		}
	}
	double total = 0;
	for (int b = 0; hist && b < WZC_HIST_BINS; b++)
		total += hist[b];
	for (int b = 0; hist && b < WZC_HIST_BINS; b++)
		q->hist[b] = total > 0 ? (float)(hist[b] / total) : 0;
	if (!(total > 0))
		q->hist[WZC_HIST_BINS / 2] = 1;
	int nomem = !hist;
	free(hist);
	free(ssum);
	free(yrow);
	free(bt);
	free(mean);
	free(cov);
	free(eig);
	free(x);
	if (!nomem)
		fit_anchor(ws, nw, l, pos, q);
	return nomem ? wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory") : WZ_OK;
}

/* Copies of the windows with every token's position part rotated back by
 * its own position: what a profile that undoes RoPE is fitted to.  The
 * queries stay as cached (rope_query_moments turns them per key).  The
 * position arrays are one allocation each, freed by free_rotated. */
static void free_rotated(wzc_window *rw, int nw)
{
	for (int w = 0; rw && w < nw; w++)
		free((float *)rw[w].rope);
	free(rw);
}

/* The windows' cache values rounded to bf16, as every format codes them
 * (wzc_encode_layer_at): a serving stack's calibration cache is bf16 too,
 * and a profile fitted on the same values wz codes keeps, among others,
 * the attention sink's anchor equal to the sink wz meets. */
static void free_bf16(wzc_window *bw, int nw)
{
	for (int w = 0; bw && w < nw; w++) {
		free((float *)bw[w].latent);
		free((float *)bw[w].rope);
	}
	free(bw);
}

static wzc_window *bf16_windows(const wzc_window *const *ws, int nw)
{
	wzc_window *bw = calloc((size_t)nw, sizeof *bw);
	for (int w = 0; bw && w < nw; w++) {
		const wzc_window *s = ws[w];
		bw[w] = *s;
		size_t nl = (size_t)s->L * s->T * s->R, nr = (size_t)s->L * s->T * s->P;
		float *l = malloc(sizeof *l * (nl ? nl : 1)), *r = malloc(sizeof *r * (nr ? nr : 1));
		bw[w].latent = l;
		bw[w].rope = r;
		if (!l || !r) {
			free_bf16(bw, w + 1);
			return NULL;
		}
		for (size_t i = 0; i < nl; i++)
			l[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(s->latent[i]));
		for (size_t i = 0; i < nr; i++)
			r[i] = wzc_bf16_to_f32(wzc_bf16_from_f32(s->rope[i]));
	}
	return bw;
}

static wzc_window *rotated_windows(const wzc_window *const *ws, int nw, const double *freq)
{
	wzc_window *rw = calloc((size_t)nw, sizeof *rw);
	for (int w = 0; rw && w < nw; w++) {
		const wzc_window *s = ws[w];
		rw[w] = *s;
		size_t nr = (size_t)s->L * s->T * s->P;
		float *r = malloc(sizeof *r * (nr ? nr : 1));
		rw[w].rope = r;
		if (!r) {
			free_rotated(rw, w + 1);
			return NULL;
		}
		memcpy(r, s->rope, sizeof *r * nr);
		for (int l = 0; l < s->L; l++)
			for (int t = 0; t < s->T; t++)
				wzc_rope_turn(r + ((size_t)l * s->T + t) * s->P, s->P,
					      s->positions ? s->positions[t] : t, freq, -1);
	}
	return rw;
}

/* The query moments of a position part coded after undoing RoPE.  A
 * query q (as cached, at position p_q) meets the rotated-back error e' of
 * the key at position p as q . R(p f) e' = (R(-p f) q) . e': its energy
 * along component u is the mean of (u . R(-p f) q)^2 over the keys it
 * attends to, here every position 0 .. p_q, as a cache in service holds
 * them (not the calibration window's few).  That mean is u' M_q u with M_q
 * = mean_p R(-p f) q q' R(-p f)', whose 2 x 2 block (i, j), with z_i the
 * pair as a complex number, is made of z_i conj(z_j) G(f_j - f_i) and
 * z_i z_j G(-(f_i + f_j)) (wzc_rope_key_phases, wzc_rope_query_moment_add):
 * exact, no key sampled.  So
 * qstat[k] gets the sum over queries of u_k' M_q u_k (through their mean
 * M), and q4[k], for the shrinkage's sampling variance, nq times the mean
 * of (u_k' M_q u_k)^2 over up to QUERY_SAMPLE query-heads spread over
 * them (each costs P^3).  P is even (the caller checks). */
#define QUERY_SAMPLE 64

/* u' M u, M [n][n] */
static double quad_form(const double *M, const float *u, int n)
{
	double e = 0;
	for (int a = 0; a < n; a++) {
		double r = 0;
		for (int b = 0; b < n; b++)
			r += M[(size_t)a * n + b] * u[b];
		e += u[a] * r;
	}
	return e;
}

static int rope_query_moments(const wzc_window *const *ws, int nw, int l,
			      const wzc_part_profile *q, const double *freq, double *qstat,
			      double *q4, double *nq_out)
{
	int n = q->n, np = n / 2;
	size_t un = (size_t)n;
	double total = 0;
	for (int w = 0; w < nw; w++)
		total += (double)ws[w]->Q * ws[w]->H;
	double *M = calloc(un * un, sizeof *M), *Mq = calloc(un * un, sizeof *Mq);
	double *G = malloc(sizeof *G * 4 * (size_t)np * (size_t)np), *e2 = calloc(un, sizeof *e2);
	if (!M || !Mq || !G || !e2) {
		free(M);
		free(Mq);
		free(G);
		free(e2);
		return -1;
	}
	double nq = 0, nsub = 0;
	long seen = 0, every = total > QUERY_SAMPLE ? (long)ceil(total / QUERY_SAMPLE) : 1;
	for (int w = 0; w < nw; w++) {
		const wzc_window *win = ws[w];
		for (int qi = 0; qi < win->Q; qi++) {
			int64_t at = win->q_index ? win->q_index[qi] : win->T - 1;
			at = at < 0 ? 0 : at >= win->T ? win->T - 1 : at;
			double keys = (double)(win->positions ? win->positions[at] : at) + 1;
			wzc_rope_key_phases(n, freq, keys, G);
			for (int h = 0; h < win->H; h++, seen++) {
				size_t off = (((size_t)l * win->Q + qi) * win->H + h);
				const float *qv = win->q_rope + off * win->P;
				int sample = seen % every == 0;
				double *dst = sample ? Mq : M;
				if (sample)
					memset(Mq, 0, sizeof *Mq * un * un);
				wzc_rope_query_moment_add(qv, n, G, dst);
				if (sample) {
					for (int k = 0; k < n; k++) {
						double e = quad_form(Mq, q->basis + (size_t)k * un, n);
						e2[k] += e * e;
					}
					for (size_t i = 0; i < un * un; i++)
						M[i] += Mq[i];
					nsub++;
				}
				nq++;
			}
		}
	}
	for (int k = 0; k < n; k++) {
		qstat[k] = quad_form(M, q->basis + (size_t)k * un, n);
		q4[k] = nsub > 0 ? e2[k] * nq / nsub : 0;
	}
	*nq_out = nq;
	free(M);
	free(Mq);
	free(G);
	free(e2);
	return 0;
}

/* What every layer's fit reads (read only) and the profile it writes
 * (layer l's arrays only), for prepare_layer on several threads. */
typedef struct {
	const wzc_window *const *ws, *const *rws;
	/* version 7: the rotated-back position parts, each layer's replaced
	 * by its cross-fitted residuals as it is fitted (pws[w].rope is
	 * res[w]) */
	const wzc_window *const *pws;
	float *const *res;
	int nw, queries;
	const wzc_prepare_opts *opts;
	wzc_profile *p;
	int next;              /* the next layer to take (atomic) */
	wzc_first_fail fail;   /* the lowest failing layer */
	int done;              /* layers fitted, under fail.lock, for opts->progress */
} layer_job;

static void layer_weights(wzc_profile *p, const wzc_prepare_opts *opts, int l, const double *qlat,
			  wzc_part_profile *pr, const double *qrope);

/* Version 7: layer l's prediction (docs/wz-format.md, "Predicted position
 * part").  The position part just fitted (rope[l], its query energies in
 * qrope) is what the anchored tokens' becomes; the map is fitted and the
 * position part fitted again, to the cross-fitted residuals.  The layer
 * predicts when asked for every layer (predict 2), or (predict 1) when
 * the residual is cheaper to code than the part on the calibration
 * tokens (wzc_pred_gain_of > 0: the geometric mean of its variances
 * lower); otherwise it stays as it was.  qrope gets the residual's query
 * energies when it predicts. */
static wz_err prepare_prediction(const layer_job *j, int l, double *qlat, double *qrope,
				 wz_diag *diag)
{
	wzc_profile *p = j->p;
	int R = p->R, P = p->P;
	float *map = malloc(sizeof *map * (size_t)R * (size_t)P);
	double *qres = malloc(sizeof *qres * (size_t)(P + 1)), alpha;
	wzc_part_profile res = { 0 };
	if (!map || !qres || wzc_part_alloc(&res, P) ||
	    wzc_pred_fit(j->ws, j->rws, j->nw, l, p->latent[l].mean, map, j->res, &alpha)) {
		free(map);
		free(qres);
		wzc_part_free(&res);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	wz_err e = fit_part(j->pws, j->nw, l, 1, 1, j->opts->rope_freq, &res,
			    j->queries ? qres : NULL, diag);
	double gain = e ? 0 : wzc_pred_gain_of(p->rope[l].var, res.var, P);
	if (e || !(j->opts->predict == 2 || (j->opts->predict == 1 && gain > 0))) {
		free(map);
		free(qres);
		wzc_part_free(&res);
		return e;
	}
	p->rope_plain[l] = p->rope[l];
	p->rope[l] = res;
	p->pred_map[l] = map;
	p->predicts[l] = 1;
	/* the anchored tokens' weights, with the latent's, from their own
	 * statistics; the layer's own (the latent's and the residual's)
	 * follow in prepare_layer */
	layer_weights(p, j->opts, l, qlat, &p->rope_plain[l], qrope);
	if (j->queries)
		memcpy(qrope, qres, sizeof *qres * (size_t)P);
	free(qres);
	return WZ_OK;
}

/* Layer l of the profile: both parts' statistics, the position cap, the
 * distortion weights.  qlat [R] and qrope [P + 1] are the caller's
 * scratch. */
static wz_err prepare_layer(const layer_job *j, int l, double *qlat, double *qrope, wz_diag *diag)
{
	const wzc_window *const *ws = j->ws, *const *rws = j->rws;
	int nw = j->nw, queries = j->queries;
	const wzc_prepare_opts *opts = j->opts;
	wzc_profile *p = j->p;
	wz_err e = fit_part(ws, nw, l, 0, 1, NULL, &p->latent[l], queries ? qlat : NULL, diag);
	int undo_l = wzc_profile_undoes_rope(p, l);
	if (!e)
		e = fit_part(undo_l ? rws : ws, nw, l, 1, undo_l, undo_l ? opts->rope_freq : NULL,
			     &p->rope[l], queries && p->P ? qrope : NULL, diag);
	if (!e && p->predicts && undo_l && p->P > 0)
		e = prepare_prediction(j, l, qlat, qrope, diag);
	if (e)
		return e;
	if (opts->position_cap && p->P > 0) {
		double cap = position_cap(ws, nw, l);
		if (cap < 0)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		p->pos_cap[l] = (float)cap;
	}
	/* Weights blend two relative objectives: a plain squared error and
	 * the expected squared attention-score error over the score
	 * variance (weight q_k^2 / sum q^2 var, unit-free).  Each part's
	 * plain error counts relative to that part's energy, and the parts
	 * are weighted by their shares of the score variance: so scaling a
	 * layer's latent (with its queries scaled back, the logits the
	 * same) leaves every weight * variance, hence the plan, unchanged
	 * (issue 10: with one energy over both parts, a latent 50x smaller
	 * than usual lost its bits to the position part).  Without queries
	 * there are no shares to use, and the plain term is the layer's
	 * squared error over its energy.  Scaled to mean 1 (only ratios
	 * matter). */
	layer_weights(p, opts, l, qlat, &p->rope[l], qrope);
	return WZ_OK;
}

/* The distortion weights of layer l's latent and of a position part pr
 * (the profile's, or version 7's anchored tokens'), from the query
 * energies qlat [R] and qrope [P] of each. */
static void layer_weights(wzc_profile *p, const wzc_prepare_opts *opts, int l, const double *qlat,
			  wzc_part_profile *pr, const double *qrope)
{
	double a = p->query_weighted ? opts->query_weight : 0;
	double ev[2] = { 0, 0 }, eqp[2] = { 0, 0 };
	for (int k = 0; k < p->R; k++) {
		ev[0] += p->latent[l].var[k];
		eqp[0] += p->query_weighted ? qlat[k] * p->latent[l].var[k] : 0;
	}
	for (int k = 0; k < p->P; k++) {
		ev[1] += pr->var[k];
		eqp[1] += p->query_weighted ? qrope[k] * pr->var[k] : 0;
	}
	double eq = eqp[0] + eqp[1], evall = ev[0] + ev[1];
	int shares = p->query_weighted && eq > 0;
	if (!(eq > 0))
		a = 0;
	double mw = 0;
	for (int k = 0; k < p->R + p->P; k++) {
		int part = k >= p->R;
		double q = a > 0 ? (part ? qrope[k - p->R] : qlat[k]) : 0;
		double plain = shares ? (ev[part] > 0 ? eqp[part] / eq / ev[part] : 0)
				      : (evall > 0 ? 1 / evall : 1);
		double wk = (1 - a) * plain + (a > 0 ? a * q / eq : 0);
		if (k < p->R)
			p->latent[l].weight[k] = (float)wk;
		else
			pr->weight[k - p->R] = (float)wk;
		mw += wk;
	}
	mw /= (p->R + p->P);
	for (int k = 0; mw > 0 && k < p->R; k++)
		p->latent[l].weight[k] = (float)(p->latent[l].weight[k] / mw);
	for (int k = 0; mw > 0 && k < p->P; k++)
		pr->weight[k] = (float)(pr->weight[k] / mw);
}

/* Layers are taken in turn from a counter; each is fitted alone, so the
 * profile is the same on any number of threads, and of several failing
 * layers the lowest is reported (the layers above it are not fitted). */
static void *layer_worker(void *arg)
{
	layer_job *j = arg;
	double *qlat = malloc(sizeof(double) * (size_t)(j->p->R + 1));
	double *qrope = malloc(sizeof(double) * (size_t)(j->p->P + 1));
	for (;;) {
		int l = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (l >= j->p->L || l > wzc_first_fail_at(&j->fail))
			break;
		wz_diag d;
		wz_err e = qlat && qrope ? prepare_layer(j, l, qlat, qrope, &d)
					 : wz_diag_set(&d, WZ_ERR_NOMEM, "out of memory");
		if (e)
			wzc_first_fail_note(&j->fail, l, e, &d);
		else if (j->opts->progress) {
			pthread_mutex_lock(&j->fail.lock);
			j->opts->progress(j->opts->progress_ud, ++j->done, j->p->L);
			pthread_mutex_unlock(&j->fail.lock);
		}
	}
	free(qlat);
	free(qrope);
	return NULL;
}

wz_err wzc_prepare(const wzc_window *const *ws, int nw, const wzc_prepare_opts *opts,
		   wzc_profile **out, wz_diag *diag)
{
	wzc_prepare_opts defaults;
	*out = NULL;
	if (!opts) {
		wzc_prepare_opts_default(&defaults);
		opts = &defaults;
	}
	if (nw < 1)
		return wz_diag_set(diag, WZ_ERR_USAGE, "prepare needs at least one calibration window");
	/* Refuse before reading any value: test windows must never inform the
	 * profile. */
	for (int w = 0; w < nw; w++) {
		const char *name = ws[w]->name ? ws[w]->name : "window";
		if (!ws[w]->split || strcmp(ws[w]->split, "calibration") != 0)
			return wz_diag_set(diag, WZ_ERR_REFUSED,
					   "%s: split is '%s'; prepare reads calibration windows only",
					   name, ws[w]->split ? ws[w]->split : "(none)");
	}
	const wzc_window *w0 = ws[0];
	int queries = 1;
	for (int w = 0; w < nw; w++) {
		const wzc_window *w1 = ws[w];
		const char *name = w1->name ? w1->name : "window";
		if (w1->L != w0->L || w1->R != w0->R || w1->P != w0->P || w1->T < 1)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: shape %d x %d x (%d + %d) differs from the first window's",
					   name, w1->L, w1->T, w1->R, w1->P);
		const char *m0 = w0->model ? w0->model : "", *m1 = w1->model ? w1->model : "";
		if (strcmp(m0, m1) != 0)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: model '%s' differs from the first window's '%s'", name,
					   m1, m0);
		if (!(w1->Q > 0 && w1->H > 0 && w1->q_latent && (w1->q_rope || w1->P == 0)))
			queries = 0;
	}
	if (w0->model && strlen(w0->model) > WZC_MODEL_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: model: a name longer than %d bytes",
				   w0->name ? w0->name : "window", WZC_MODEL_MAX);
	int undo = 0;
	if (opts->rope_freq) {
		if (opts->rope_pairs != w0->P / 2)
			return wz_diag_set(diag, WZ_ERR_USAGE,
					   "%d RoPE frequencies for a position part of %d values (%d pairs)",
					   opts->rope_pairs, w0->P, w0->P / 2);
		for (int i = 0; i < opts->rope_pairs; i++) {
			if (!(isfinite(opts->rope_freq[i]) && opts->rope_freq[i] >= 0))
				return wz_diag_set(diag, WZ_ERR_USAGE,
						   "RoPE frequency %d is %g: not a finite number >= 0", i,
						   opts->rope_freq[i]);
			undo |= opts->rope_freq[i] != 0;
		}
		int any = !opts->rope_layers;
		for (int l = 0; !any && l < w0->L; l++)
			any = opts->rope_layers[l] != 0;
		undo = undo && any; /* no layer asked: a plain profile */
		if (undo && w0->P % 2)
			return wz_diag_set(diag, WZ_ERR_USAGE,
					   "a position part of %d values: RoPE turns pairs, so undoing it "
					   "needs an even width",
					   w0->P);
	}
	wzc_window *bw = bf16_windows(ws, nw);
	const wzc_window **bws = malloc(sizeof *bws * (size_t)nw);
	if (!bw || !bws) {
		free_bf16(bw, nw);
		free(bws);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int w = 0; w < nw; w++)
		bws[w] = &bw[w];
	ws = bws;
	wzc_profile *p = wzc_profile_alloc(w0->L, w0->R, w0->P);
	wzc_window *rw = undo ? rotated_windows(ws, nw, opts->rope_freq) : NULL;
	const wzc_window **rws = undo ? malloc(sizeof *rws * (size_t)nw) : NULL;
	size_t npair = (size_t)(w0->P / 2);
	if (p && undo)
		p->rope_freq = malloc(sizeof *p->rope_freq * (size_t)w0->L * (npair ? npair : 1));
	if (!p || (undo && (!rw || !rws || !p->rope_freq))) {
		wzc_profile_free(p);
		free_rotated(rw, nw);
		free(rws);
		free_bf16(bw, nw);
		free(bws);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int w = 0; undo && w < nw; w++)
		rws[w] = &rw[w];
	if (undo) {
		/* the layers left as cached keep frequencies 0 */
		p->version = WZC_PROFILE_VERSION_ROPE;
		for (int l = 0; l < w0->L; l++)
			for (size_t i = 0; i < npair; i++)
				p->rope_freq[(size_t)l * npair + i] =
					!opts->rope_layers || opts->rope_layers[l] ? opts->rope_freq[i] : 0;
	}
	/* version 7: the residual windows, and the arrays of the prediction */
	int predict = undo && opts->predict > 0 && w0->P > 0;
	wzc_window *pw = predict ? rotated_windows(ws, nw, opts->rope_freq) : NULL;
	const wzc_window **pws = predict ? malloc(sizeof *pws * (size_t)nw) : NULL;
	float **res = predict ? malloc(sizeof *res * (size_t)nw) : NULL;
	if (predict && (!pw || !pws || !res || wzc_profile_pred_alloc(p))) {
		wzc_profile_free(p);
		free_rotated(rw, nw);
		free(rws);
		free_rotated(pw, nw);
		free(pws);
		free(res);
		free_bf16(bw, nw);
		free(bws);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int w = 0; predict && w < nw; w++) {
		pws[w] = &pw[w];
		res[w] = (float *)pw[w].rope;
	}
	snprintf(p->model, sizeof p->model, "%s", w0->model ? w0->model : "");
	p->query_weighted = queries && opts->query_weight > 0;
	for (int w = 0; w < nw; w++)
		p->ntokens += (uint64_t)ws[w]->T;
	layer_job job = { .ws = ws, .rws = rws, .pws = pws, .res = res, .nw = nw, .queries = queries,
			  .opts = opts, .p = p };
	wz_err e = WZ_OK;
	if (wzc_first_fail_init(&job.fail, p->L)) {
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	} else {
		enum { MAX_FITTERS = 256 };
		int nt = opts->threads > 0 ? opts->threads : wzc_cores();
		nt = nt > p->L ? p->L : nt > MAX_FITTERS ? MAX_FITTERS : nt;
		pthread_t tid[MAX_FITTERS];
		int started = 0;
		/* fewer threads than asked is only slower */
		for (int t = 1; t < nt && !pthread_create(&tid[started], NULL, layer_worker, &job); t++)
			started++;
		layer_worker(&job);
		for (int t = 0; t < started; t++)
			pthread_join(tid[t], NULL);
		e = wzc_first_fail_done(&job.fail, p->L, diag);
	}
	free_rotated(rw, nw);
	free(rws);
	free_rotated(pw, nw);
	free(pws);
	free(res);
	free_bf16(bw, nw);
	free(bws);
	if (e) {
		wzc_profile_free(p);
		return e;
	}
	/* version 7 only where some layer predicts; else as before */
	int any = 0;
	for (int l = 0; predict && l < p->L; l++)
		any |= p->predicts[l];
	if (any) {
		p->version = 7;
	} else if (p->predicts) {
		free(p->predicts);
		free(p->rope_plain);
		free(p->pred_map);
		p->predicts = NULL;
		p->rope_plain = NULL;
		p->pred_map = NULL;
	}
	*out = p;
	return WZ_OK;
}
