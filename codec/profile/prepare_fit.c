/* One part's fit for `prepare` (codec/profile/prepare.c runs it per layer
 * and part): mean and covariance over the calibration windows, the
 * covariance's eigenbasis (KLT) and its shrinkage, the query energy per
 * component (through RoPE where the part is coded with RoPE undone), the
 * per-token scale and the histogram of standardized values, and the
 * attention sink's anchor. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/profile/linalg.h"
#include "codec/profile/prepare_internal.h"
#include "codec/profile/rope.h"
#include "codec/profile/scale_code.h"

static int rope_query_moments(const wzc_window *const *ws, int nw, int l, const wzc_part_profile *q,
			      const double *freq, double *qstat, double *q4, double *nq_out);

/* The mean of the attention sinks' values (the part's mean where the
 * windows hold none); -1 when out of memory. */
static int fit_anchor(const wzc_window *const *ws, int nw, int l, int pos, wzc_part_profile *q)
{
	int n = q->n, count = 0;
	double *acc = calloc((size_t)(n ? n : 1), sizeof *acc);
	if (!acc)
		return -1;
	for (int w = 0; w < nw; w++)
		for (int t = 0; t < ws[w]->T; t++)
			if (wzc_prep_is_sink(ws[w], t)) {
				const float *v = wzc_prep_row(ws[w], pos, l, t);
				for (int i = 0; i < n; i++)
					acc[i] += v[i];
				count++;
			}
	for (int i = 0; i < n; i++)
		q->anchor[i] = count ? (float)(acc[i] / count) : q->mean[i];
	free(acc);
	return 0;
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

/* The fit (codec/profile/prepare_internal.h). */
WZ_VEC_CLONES WZ_HOT wz_err wzc_prepare_fit_part(const wzc_window *const *ws, int nw, int l, int pos, int klt,
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
	int rc;
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
			if (wzc_prep_is_sink(ws[w], t))
				continue;
			const float *v = wzc_prep_row(ws[w], pos, l, t);
			for (int i = 0; i < n; i++)
				mean[i] += v[i];
			N++;
		}
	for (int i = 0; i < n; i++)
		mean[i] = klt && N > 0 ? mean[i] / N : 0;
	/* Lower triangle of the covariance, then mirrored. */
	for (int w = 0; w < nw; w++)
		for (int t = 0; t < ws[w]->T; t++) {
			if (wzc_prep_is_sink(ws[w], t))
				continue;
			const float *v = wzc_prep_row(ws[w], pos, l, t);
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
	} else if ((rc = wzc_sym_eigen(cov, n, eig))) {
		free(mean);
		free(cov);
		free(eig);
		free(x);
		if (rc == WZC_EIG_NOMEM)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "layer %d: out of memory", l);
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
			if (wzc_prep_is_sink(ws[w], t))
				continue;
			const float *v = wzc_prep_row(ws[w], pos, l, t);
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
				if (wzc_prep_is_sink(ws[w], t))
				continue;
			const float *v = wzc_prep_row(ws[w], pos, l, t);
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
		nomem = fit_anchor(ws, nw, l, pos, q) < 0;
	return nomem ? wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory") : WZ_OK;
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

static int rope_query_moments(const wzc_window *const *ws, int nw, int l, const wzc_part_profile *q,
			      const double *freq, double *qstat, double *q4, double *nq_out)
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
