/* The synthetic cache generator: draws the model (bases, gains, scales) from
 * the seed and each window's tokens and queries from the window seed, as
 * docs/synthetic-cache.md specifies. */
#include "traces/synth_cache.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/synth_rng.h"

/* Bumped whenever the same parameters would give different values; it is
 * part of the source metadata, so old and new traces are never confused. */
#define GENERATOR_VERSION 1

/* Stream purposes, so the model's and the windows' numbers never overlap. */
enum { STREAM_MODEL = 1, STREAM_TOKENS = 2, STREAM_QUERIES = 3 };

/* Target standard deviations of the attention logits' two parts, so the
 * queries give attention that is neither uniform nor one-hot. */
#define LOGIT_SD_LATENT 2.0
#define LOGIT_SD_ROPE 1.0
/* Logit the sink gets on top of its ordinary score, and how much larger its
 * position part is than other tokens'. */
#define SINK_LOGIT_BOOST 6.0
#define SINK_ROPE_FACTOR 4.0
#define RMSNORM_EPS 1e-6

typedef struct {
	double alpha;   /* eigenvalues proportional to k^-alpha */
	int nu;         /* Student-t degrees of freedom (0: Gaussian) */
	double gain_sd; /* per-channel gains exp(gain_sd N(0,1)) */
	/* Entries that summarize tokens (0: one entry a token): each entry
	 * sums `pool` tokens' draws with softmax weights and sits at every
	 * `stride`-th position, RoPE at base rope_base */
	int pool, stride;
	double rope_base;
	/* share of the pre-RoPE position part's power that is a linear
	 * function of the latent's coefficients z (0: independent of it) */
	double predictable;
} family_shape;

/* mla-p's predictable share: on the project's own model (data/real, its
 * four calibration windows, layers 0-3), a least-squares map from the
 * latent to the position part with RoPE undone (YaRN 32 on 1024, base
 * 10000), fitted on the calibration windows, explains 95.1% (layer 3) to
 * 98.8% (layer 1) of that part's power on the four 32k test windows
 * (docs/synthetic-cache.md, "mla-p"): the lowest, rounded down. */
#define MLA_P_PREDICTABLE 0.95

/* DeepSeek-V4's compressed branches: c4a sums tokens [4j-4, 4j+3] (8 at
 * stride 4), c128a tokens [128j, 128j+127]; their RoPE base is 160000
 * (vllm.ai/blog/deepseek-v4, appendix; compress_rope_theta in the
 * configs; the YaRN scaling on top of it is left out). */
#define V4_COMPRESS_ROPE_BASE 160000.0

static const struct {
	const char *name;
	family_shape shape;
} families[] = {
	[WZT_FAMILY_IID] = { "iid", { 0.0, 0, 0.0, 0, 1, 10000.0 } },
	[WZT_FAMILY_MLA_A] = { "mla-a", { 0.7, 6, 0.5, 0, 1, 10000.0 } },
	[WZT_FAMILY_MLA_B] = { "mla-b", { 1.0, 4, 0.8, 0, 1, 10000.0 } },
	[WZT_FAMILY_V4_C4] = { "v4-c4", { 1.0, 4, 0.8, 8, 4, V4_COMPRESS_ROPE_BASE } },
	[WZT_FAMILY_V4_C128] = { "v4-c128", { 1.0, 4, 0.8, 128, 128, V4_COMPRESS_ROPE_BASE } },
	[WZT_FAMILY_MLA_P] = { "mla-p", { 0.7, 6, 0.5, 0, 1, 10000.0, MLA_P_PREDICTABLE } },
};
#define NFAMILIES ((int)(sizeof families / sizeof families[0]))

wz_err wzt_family_parse(const char *name, wzt_family *out, wz_diag *diag)
{
	for (int i = 0; i < NFAMILIES; i++)
		if (name && !strcmp(name, families[i].name)) {
			*out = (wzt_family)i;
			return WZ_OK;
		}
	return wz_diag_set(diag, WZ_ERR_USAGE,
			   "family '%s' is not one of iid, mla-a, mla-b, mla-p, v4-c4, v4-c128",
			   name ? name : "");
}

void wzt_family_shape(wzt_family family, int *R, int *P)
{
	int v4 = family == WZT_FAMILY_V4_C4 || family == WZT_FAMILY_V4_C128;
	*R = v4 ? 448 : 512;
	*P = 64;
}

const char *wzt_family_name(wzt_family family)
{
	return (int)family >= 0 && (int)family < NFAMILIES ? families[family].name : "?";
}

double wzt_deepseek_softmax_scale(void)
{
	/* DeepSeek-V3 with YaRN, rope factor 40: m = 0.1 ln 40 + 1, scale =
	 * m^2 / sqrt(qk_head_dim = 192). */
	double m = 0.1 * log(40.0) + 1.0;
	return m * m / sqrt(192.0);
}

void wzt_synth_params_default(wzt_synth_params *p)
{
	memset(p, 0, sizeof *p);
	p->family = WZT_FAMILY_MLA_A;
	p->seed = 1;
	p->L = 4;
	p->T = 1024;
	p->R = 512;
	p->P = 64;
	p->Q = 32;
	p->H = 16;
	p->start_position = 0;
	p->window_seed = 0;
	p->split = "calibration";
	p->window = NULL;
	p->model = NULL;
}

void wzt_rope_rotate(float *v, int P, int64_t position, double base, int inverse)
{
	for (int i = 0; i < P / 2; i++) {
		double theta = pow(base, -2.0 * i / P);
		double angle = (double)position * theta * (inverse ? -1.0 : 1.0);
		double c = cos(angle), s = sin(angle);
		double x = v[2 * i], y = v[2 * i + 1];
		v[2 * i] = (float)(x * c - y * s);
		v[2 * i + 1] = (float)(x * s + y * c);
	}
}

/* x[0..n) += a * u[0..n).  Unrolled by 8 so that compilers vectorize it at
 * -O2 (the loop is most of the generator's time). */
static void axpy(float *restrict x, const float *restrict u, float a, int n)
{
	int i = 0;
	for (; i + 8 <= n; i += 8) {
		x[i] += a * u[i];
		x[i + 1] += a * u[i + 1];
		x[i + 2] += a * u[i + 2];
		x[i + 3] += a * u[i + 3];
		x[i + 4] += a * u[i + 4];
		x[i + 5] += a * u[i + 5];
		x[i + 6] += a * u[i + 6];
		x[i + 7] += a * u[i + 7];
	}
	for (; i < n; i++)
		x[i] += a * u[i];
}

static void axpyd(double *restrict x, const double *restrict u, double a, int n)
{
	int i = 0;
	for (; i + 4 <= n; i += 4) {
		x[i] += a * u[i];
		x[i + 1] += a * u[i + 1];
		x[i + 2] += a * u[i + 2];
		x[i + 3] += a * u[i + 3];
	}
	for (; i < n; i++)
		x[i] += a * u[i];
}

/* A uniformly random n x n orthogonal matrix, returned with its basis
 * vectors as rows (out[k*n + i] = component i of vector k), by Stewart's
 * method: a product of Householder reflections built from Gaussian vectors
 * of decreasing length, with random signs.  About 4n^3/3 operations, done
 * in double so the basis is orthogonal to ~1e-14 before the float copy. */
static int random_orthogonal(wzt_synth_rng *r, int n, float *out)
{
	double *q = calloc((size_t)n * n, sizeof *q), *v = malloc((size_t)n * sizeof *v),
	       *w = malloc((size_t)n * sizeof *w);
	if (!q || !v || !w) {
		free(q);
		free(v);
		free(w);
		return -1;
	}
	for (int i = 0; i < n; i++)
		q[(size_t)i * n + i] = wzt_rng_uniform(r) < 0.5 ? -1.0 : 1.0;
	/* Q <- H_k Q for k = n-2 .. 0; H_k touches rows and columns k..n-1. */
	for (int k = n - 2; k >= 0; k--) {
		int m = n - k;
		double norm2 = 0;
		for (int i = 0; i < m; i++) {
			v[i] = wzt_rng_normal(r);
			norm2 += v[i] * v[i];
		}
		v[0] += (v[0] >= 0 ? 1.0 : -1.0) * sqrt(norm2);
		double vv = 0;
		for (int i = 0; i < m; i++)
			vv += v[i] * v[i];
		if (vv == 0)
			continue;
		/* w = v^T Q[k.., k..], then Q[k.., k..] -= (2/vv) v w^T. */
		memset(w, 0, (size_t)m * sizeof *w);
		for (int i = 0; i < m; i++)
			axpyd(w, &q[(size_t)(k + i) * n + k], v[i], m);
		for (int i = 0; i < m; i++)
			axpyd(&q[(size_t)(k + i) * n + k], w, -2.0 * v[i] / vv, m);
	}
	for (size_t i = 0; i < (size_t)n * n; i++)
		out[i] = (float)q[i];
	free(q);
	free(v);
	free(w);
	return 0;
}

/* One layer's share of the model, drawn from the seed alone. */
typedef struct {
	float *basis;      /* [R][R] latent basis vectors as rows */
	float *rope_basis; /* [P][P] */
	double *lambda;    /* [R] latent eigenvalues, mean 1 */
	double *mu;        /* [P] position-part eigenvalues, mean 1 */
	float *gains;      /* [R] */
	float *sink;       /* [R] the sink token's latent (after norm and gains) */
	double scale;      /* latent scale of this layer */
	double rope_scale; /* RMS of this layer's position part */
	double *q_weight;  /* [H][R] head h's variance weights on the latent basis */
	double *qr_weight; /* [H][P] the same on the position basis */
	/* mla-p: [P][R] the map from the latent's coefficients z to the
	 * predictable position part, scaled so that it has mean power 1 per
	 * value (as mu has), and [P] its power along each position basis
	 * vector; NULL for the other families */
	float *predict;
	double *predict_power;
} layer_model;

static void layer_free(layer_model *m)
{
	free(m->basis);
	free(m->rope_basis);
	free(m->lambda);
	free(m->mu);
	free(m->gains);
	free(m->sink);
	free(m->q_weight);
	free(m->qr_weight);
	free(m->predict);
	free(m->predict_power);
	memset(m, 0, sizeof *m);
}

/* eig[k] proportional to (k+1)^-alpha, scaled to mean 1. */
static void power_law(double *eig, int n, double alpha)
{
	double sum = 0;
	for (int k = 0; k < n; k++)
		sum += eig[k] = pow(k + 1.0, -alpha);
	for (int k = 0; k < n; k++)
		eig[k] *= n / sum;
}

/* c = scale * gains * x / rms(x): DeepSeek's kv_a_layernorm. */
static void rmsnorm_gain(float *c, const float *x, const float *gains, double scale, int R)
{
	double ss = 0;
	for (int i = 0; i < R; i++)
		ss += (double)x[i] * x[i];
	double inv = scale / sqrt(ss / R + RMSNORM_EPS);
	for (int i = 0; i < R; i++)
		c[i] = (float)(gains[i] * x[i] * inv);
}

/* mla-p's map: Gaussian entries, scaled so that the predictable part
 * M z has E|M z|^2 = P (unit power per value, as the independent part's
 * mean eigenvalue), E[z_k^2] = lambda_k; and its power along each basis
 * vector v_j of the position part, E[(v_j . M z)^2] = sum_k lambda_k
 * (v_j . M_k)^2 (M_k column k), which the queries' scale needs. */
static int predict_draw(wzt_synth_rng *r, int R, int P, layer_model *m)
{
	m->predict = malloc((size_t)P * R * sizeof *m->predict);
	m->predict_power = calloc((size_t)P, sizeof *m->predict_power);
	double *col = malloc((size_t)P * sizeof *col);
	if (!m->predict || !m->predict_power || !col) {
		free(col);
		return -1;
	}
	double power = 0;
	for (int i = 0; i < P * R; i++)
		m->predict[i] = (float)wzt_rng_normal(r);
	for (int k = 0; k < R; k++)
		for (int i = 0; i < P; i++)
			power += m->lambda[k] * (double)m->predict[(size_t)i * R + k] * m->predict[(size_t)i * R + k];
	float norm = (float)sqrt(P / power);
	for (int i = 0; i < P * R; i++)
		m->predict[i] *= norm;
	for (int k = 0; k < R; k++) {
		for (int i = 0; i < P; i++)
			col[i] = m->predict[(size_t)i * R + k];
		for (int j = 0; j < P; j++) {
			const float *v = &m->rope_basis[(size_t)j * P];
			double d = 0;
			for (int i = 0; i < P; i++)
				d += (double)v[i] * col[i];
			m->predict_power[j] += m->lambda[k] * d * d;
		}
	}
	free(col);
	return 0;
}

static int layer_model_draw(const wzt_synth_params *p, int layer, layer_model *m)
{
	const family_shape *f = &families[p->family].shape;
	int R = p->R, P = p->P, H = p->H;
	memset(m, 0, sizeof *m);
	m->lambda = malloc((size_t)R * sizeof *m->lambda);
	m->mu = malloc((size_t)P * sizeof *m->mu);
	m->gains = malloc((size_t)R * sizeof *m->gains);
	m->sink = malloc((size_t)R * sizeof *m->sink);
	m->q_weight = malloc((size_t)(H ? H : 1) * R * sizeof *m->q_weight);
	m->qr_weight = malloc((size_t)(H ? H : 1) * P * sizeof *m->qr_weight);
	if (!m->lambda || !m->mu || !m->gains || !m->sink || !m->q_weight || !m->qr_weight)
		return -1;
	if (p->family == WZT_FAMILY_IID)
		return 0; /* no structure: nothing to draw */
	m->basis = malloc((size_t)R * R * sizeof *m->basis);
	m->rope_basis = malloc((size_t)P * P * sizeof *m->rope_basis);
	if (!m->basis || !m->rope_basis)
		return -1;
	wzt_synth_rng r;
	wzt_rng_init(&r, p->seed, STREAM_MODEL, (uint64_t)p->family, (uint64_t)layer);
	if (random_orthogonal(&r, R, m->basis) || random_orthogonal(&r, P, m->rope_basis))
		return -1;
	power_law(m->lambda, R, f->alpha);
	power_law(m->mu, P, f->alpha);
	for (int i = 0; i < R; i++)
		m->gains[i] = (float)exp(f->gain_sd * wzt_rng_normal(&r));
	/* Shallow layers small, deep ones large, two decades apart (real-mla/:
	 * 239x between layers of GLM-5.2), with some jitter per layer. */
	double depth = p->L > 1 ? (double)layer / (p->L - 1) : 1.0;
	m->scale = pow(10.0, -2.0 + 2.0 * depth + 0.15 * wzt_rng_normal(&r));
	m->rope_scale = 0.3 * exp(0.5 * wzt_rng_normal(&r));
	float *dir = malloc((size_t)R * sizeof *dir);
	if (!dir)
		return -1;
	for (int i = 0; i < R; i++)
		dir[i] = (float)wzt_rng_normal(&r);
	rmsnorm_gain(m->sink, dir, m->gains, m->scale, R);
	free(dir);
	/* Last, so that the cache part of the model does not depend on H. */
	for (int i = 0; i < H * R; i++)
		m->q_weight[i] = exp(0.5 * wzt_rng_normal(&r));
	for (int i = 0; i < H * P; i++)
		m->qr_weight[i] = exp(0.5 * wzt_rng_normal(&r));
	/* After everything else, so that the other families' draws stay. */
	if (f->predictable > 0 && predict_draw(&r, R, P, m))
		return -1;
	return 0;
}

/* Tokens are drawn in blocks so each basis row is read once per block. */
#define BLOCK 8

/* Latent and position part of tokens t0..t0+n-1 of one layer. */
static void gen_tokens(const wzt_synth_params *p, const layer_model *m, wzt_synth_rng *r, int t0, int n,
		       wzt_cache_trace *t, int layer, float *coef, float *x)
{
	const family_shape *f = &families[p->family].shape;
	int R = p->R, P = p->P;
	for (int b = 0; b < n; b++) {
		float *c = &t->latent[((size_t)layer * t->T + t0 + b) * R];
		float *y = &t->rope[((size_t)layer * t->T + t0 + b) * P];
		if (p->family == WZT_FAMILY_IID) {
			for (int i = 0; i < R; i++)
				c[i] = (float)wzt_rng_normal(r);
			for (int i = 0; i < P; i++)
				y[i] = (float)wzt_rng_normal(r);
			continue;
		}
		float *cb = &coef[(size_t)b * R];
		float yc[P];
		if (f->pool > 0) {
			/* a learned weighted sum of the entry's tokens: softmax
			 * weights of Gaussian scores, scaled to unit power so the
			 * eigenvalues keep their meaning */
			double w[f->pool], wsum = 0, w2 = 0;
			for (int i = 0; i < f->pool; i++)
				wsum += w[i] = exp(wzt_rng_normal(r));
			for (int i = 0; i < f->pool; i++)
				w2 += (w[i] / wsum) * (w[i] / wsum);
			double norm = 1.0 / (wsum * sqrt(w2));
			memset(cb, 0, (size_t)R * sizeof *cb);
			memset(yc, 0, sizeof yc);
			for (int i = 0; i < f->pool; i++) {
				double a = w[i] * norm;
				for (int k = 0; k < R; k++)
					cb[k] += (float)(a * sqrt(m->lambda[k]) *
							 wzt_rng_student_unit(r, f->nu));
				for (int j = 0; j < P; j++)
					yc[j] += (float)(a * sqrt(m->mu[j]) * wzt_rng_normal(r));
			}
		} else {
			for (int k = 0; k < R; k++)
				cb[k] = (float)(sqrt(m->lambda[k]) * wzt_rng_student_unit(r, f->nu));
			for (int j = 0; j < P; j++)
				yc[j] = (float)(sqrt(m->mu[j]) * wzt_rng_normal(r));
		}
		memset(y, 0, (size_t)P * sizeof *y);
		if (m->predict) {
			/* y = r (sqrt(e) M z + sqrt(1 - e) V (sqrt(mu) n)): z the
			 * latent's coefficients (Student-t), before its norm, as
			 * k_rope = W_KR h is before c_kv's */
			double e = f->predictable, a = m->rope_scale * sqrt(e);
			for (int i = 0; i < P; i++) {
				const float *mi = &m->predict[(size_t)i * R];
				double d = 0;
				for (int k = 0; k < R; k++)
					d += (double)mi[k] * cb[k];
				y[i] = (float)(a * d);
			}
			for (int j = 0; j < P; j++)
				yc[j] = (float)(sqrt(1 - e) * yc[j]);
		}
		for (int j = 0; j < P; j++)
			axpy(y, &m->rope_basis[(size_t)j * P], (float)(m->rope_scale * yc[j]), P);
	}
	if (p->family == WZT_FAMILY_IID)
		return;
	memset(x, 0, (size_t)n * R * sizeof *x);
	for (int k = 0; k < R; k++)
		for (int b = 0; b < n; b++)
			axpy(&x[(size_t)b * R], &m->basis[(size_t)k * R], coef[(size_t)b * R + k], R);
	for (int b = 0; b < n; b++) {
		int64_t pos = t->positions[t0 + b];
		float *c = &t->latent[((size_t)layer * t->T + t0 + b) * R];
		float *y = &t->rope[((size_t)layer * t->T + t0 + b) * P];
		if (pos == 0 && f->pool == 0) { /* the attention sink (a token's, not an entry's) */
			memcpy(c, m->sink, (size_t)R * sizeof *c);
			for (int j = 0; j < P; j++)
				y[j] *= (float)SINK_ROPE_FACTOR;
		} else {
			rmsnorm_gain(c, &x[(size_t)b * R], m->gains, m->scale, R);
		}
		wzt_rope_rotate(y, P, pos, f->rope_base, 0);
	}
}

/* Tokens sampled to measure the latent's power along each basis vector. */
#define POWER_SAMPLES 64

/* power[k] = mean over up to POWER_SAMPLES of the layer's tokens (the sink
 * left out) of (u_k . c)^2: what the latent part of a logit's variance is
 * made of.  Measured, because RMSNorm and the gains make it differ from
 * s^2 lambda_k by tens of percent. */
static void basis_power(const layer_model *m, const wzt_cache_trace *t, int layer, double *power)
{
	int R = t->R, n = 0;
	memset(power, 0, (size_t)R * sizeof *power);
	int step = t->T > POWER_SAMPLES ? t->T / POWER_SAMPLES : 1;
	for (int tok = 0; tok < t->T; tok += step) {
		if (t->positions[tok] == 0)
			continue;
		const float *c = &t->latent[((size_t)layer * t->T + tok) * R];
		for (int k = 0; k < R; k++) {
			const float *u = &m->basis[(size_t)k * R];
			double d = 0;
			for (int i = 0; i < R; i++)
				d += (double)u[i] * c[i];
			power[k] += d * d;
		}
		n++;
	}
	for (int k = 0; k < R; k++) /* a one-token window: fall back to the model */
		power[k] = n ? power[k] / n : m->scale * m->scale * m->lambda[k];
}

/* Queries of one layer: Gaussian with covariance on the latent's (and the
 * position part's) basis, head-specific weights, scaled so the logits have
 * the target spread, plus a component that raises the sink's logit. */
static void gen_queries(const wzt_synth_params *p, const layer_model *m, wzt_synth_rng *r,
			wzt_cache_trace *t, int layer, double softmax_scale, double *power)
{
	int R = p->R, P = p->P, H = p->H;
	double sink2 = 0;
	if (m->basis) {
		/* entries that summarize tokens hold no sink token (V4's sink
		 * is a logit of its own per head, not a cached entry) */
		for (int i = 0; i < R && families[p->family].shape.pool == 0; i++)
			sink2 += (double)m->sink[i] * m->sink[i];
		if (t->Q)
			basis_power(m, t, layer, power);
	}
	float coef[R], yc[P];
	for (int q = 0; q < t->Q; q++) {
		int64_t pos = t->positions[t->q_index[q]];
		for (int h = 0; h < H; h++) {
			float *ql = &t->q_latent[(((size_t)layer * t->Q + q) * H + h) * R];
			float *qr = &t->q_rope[(((size_t)layer * t->Q + q) * H + h) * P];
			if (p->family == WZT_FAMILY_IID) {
				double a = LOGIT_SD_LATENT / (softmax_scale * sqrt((double)R));
				double ar = LOGIT_SD_ROPE / (softmax_scale * sqrt((double)P));
				for (int i = 0; i < R; i++)
					ql[i] = (float)(a * wzt_rng_normal(r));
				for (int i = 0; i < P; i++)
					qr[i] = (float)(ar * wzt_rng_normal(r));
				continue;
			}
			const double *w = &m->q_weight[(size_t)h * R];
			const double *wr = &m->qr_weight[(size_t)h * P];
			/* E[(q.c)^2] = a^2 sum_k w_k lambda_k power_k: choose a for
			 * the target spread.  The position part has no norm: its
			 * power is rope_scale^2 mu_j (RoPE turns both sides, which
			 * keeps the spread at relative position 0). */
			double tr = 0, trr = 0;
			for (int k = 0; k < R; k++)
				tr += w[k] * m->lambda[k] * power[k];
			for (int j = 0; j < P; j++)
				trr += wr[j] * m->mu[j] *
				       (m->predict ? families[p->family].shape.predictable * m->predict_power[j] +
							     (1 - families[p->family].shape.predictable) * m->mu[j]
						   : m->mu[j]);
			double a = LOGIT_SD_LATENT / (softmax_scale * sqrt(tr));
			double ar = LOGIT_SD_ROPE / (softmax_scale * m->rope_scale * sqrt(trr));
			for (int k = 0; k < R; k++)
				coef[k] = (float)(a * sqrt(w[k] * m->lambda[k]) * wzt_rng_normal(r));
			for (int j = 0; j < P; j++)
				yc[j] = (float)(ar * sqrt(wr[j] * m->mu[j]) * wzt_rng_normal(r));
			memset(ql, 0, (size_t)R * sizeof *ql);
			for (int k = 0; k < R; k++)
				axpy(ql, &m->basis[(size_t)k * R], coef[k], R);
			if (sink2 > 0)
				axpy(ql, m->sink, (float)(SINK_LOGIT_BOOST / (softmax_scale * sink2)), R);
			memset(qr, 0, (size_t)P * sizeof *qr);
			for (int j = 0; j < P; j++)
				axpy(qr, &m->rope_basis[(size_t)j * P], yc[j], P);
			wzt_rope_rotate(qr, P, pos, families[p->family].shape.rope_base, 0);
		}
	}
}

static wz_err check_params(const wzt_synth_params *p, wz_diag *diag)
{
	if ((int)p->family < 0 || (int)p->family >= NFAMILIES)
		return wz_diag_set(diag, WZ_ERR_USAGE, "unknown family %d", (int)p->family);
	if (p->L < 1 || p->L > 1024 || p->T < 1 || p->T > (1 << 24))
		return wz_diag_set(diag, WZ_ERR_USAGE, "layers must be 1..1024 and tokens 1..%d",
				   1 << 24);
	if (p->R < 1 || p->R > 8192 || p->P < 2 || p->P > 1024 || p->P % 2)
		return wz_diag_set(diag, WZ_ERR_USAGE,
				   "latent width must be 1..8192 and the position part even, 2..1024");
	if (p->Q < 0 || p->H < 0 || (p->Q == 0) != (p->H == 0) || p->Q > p->T || p->H > 1024)
		return wz_diag_set(diag, WZ_ERR_USAGE,
				   "queries must be 0..tokens (%d) and heads 1..1024, or both 0", p->T);
	if (p->start_position < 0 || p->start_position > (INT64_C(1) << 40))
		return wz_diag_set(diag, WZ_ERR_USAGE, "start position %lld out of range",
				   (long long)p->start_position);
	if (!p->split || (strcmp(p->split, "calibration") && strcmp(p->split, "test")))
		return wz_diag_set(diag, WZ_ERR_USAGE, "split must be calibration or test");
	/* Keeps a mistyped size from asking for terabytes: 2^31 values per
	 * tensor (8 GiB as float32). */
	double values = (double)p->L * p->T * (p->R + p->P) + (double)p->L * p->Q * p->H * (p->R + p->P);
	if (values > 2147483648.0)
		return wz_diag_set(diag, WZ_ERR_RANGE,
				   "%.3g values requested; at most 2^31 per trace", values);
	return WZ_OK;
}

static char *dup_or(const char *text, const char *fallback)
{
	return strdup(text ? text : fallback);
}

wz_err wzt_synth_cache(const wzt_synth_params *p, wzt_cache_trace **out, wz_diag *diag)
{
	*out = NULL;
	wz_err err = check_params(p, diag);
	if (err)
		return err;
	wzt_cache_trace *t = wzt_cache_trace_new(p->L, p->T, p->R, p->P, p->Q, p->H);
	float *coef = malloc((size_t)BLOCK * p->R * sizeof *coef);
	float *x = malloc((size_t)BLOCK * p->R * sizeof *x);
	double *power = malloc((size_t)p->R * sizeof *power);
	if (!t || !coef || !x || !power) {
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory for a synthetic trace");
		goto fail;
	}
	/* a family of entries puts entry i at every stride-th position */
	int stride = families[p->family].shape.stride;
	for (int i = 0; i < p->T; i++)
		t->positions[i] = p->start_position + (int64_t)stride * i;
	for (int q = 0; q < p->Q; q++) /* spread evenly, the last at the window's end */
		t->q_index[q] = (int64_t)(((int64_t)q + 1) * p->T / p->Q - 1);
	t->softmax_scale = wzt_deepseek_softmax_scale();
	/* the RoPE the mla families apply (iid applies none) */
	t->rope_theta = p->family == WZT_FAMILY_IID ? 0 : families[p->family].shape.rope_base;
	char model[64], source[320];
	snprintf(model, sizeof model, "synthetic-%s-seed%llu", wzt_family_name(p->family),
		 (unsigned long long)p->seed);
	snprintf(source, sizeof source,
		 "synthetic:%s generator=%d seed=%llu window_seed=%llu layers=%d tokens=%d R=%d "
		 "P=%d queries=%d heads=%d start=%lld",
		 wzt_family_name(p->family), GENERATOR_VERSION, (unsigned long long)p->seed,
		 (unsigned long long)p->window_seed, p->L, p->T, p->R, p->P, p->Q, p->H,
		 (long long)p->start_position);
	t->model = dup_or(p->model, model);
	t->split = dup_or(p->split, "calibration");
	t->window = dup_or(p->window, "synthetic");
	t->source = strdup(source);
	if (!t->model || !t->split || !t->window || !t->source) {
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory for a synthetic trace");
		goto fail;
	}
	for (int l = 0; l < p->L; l++) {
		layer_model m;
		if (layer_model_draw(p, l, &m)) {
			layer_free(&m);
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory for the synthetic model");
			goto fail;
		}
		wzt_synth_rng r;
		wzt_rng_init(&r, p->seed, STREAM_TOKENS, p->window_seed, (uint64_t)l);
		for (int t0 = 0; t0 < p->T; t0 += BLOCK)
			gen_tokens(p, &m, &r, t0, p->T - t0 < BLOCK ? p->T - t0 : BLOCK, t, l, coef, x);
		wzt_rng_init(&r, p->seed, STREAM_QUERIES, p->window_seed, (uint64_t)l);
		gen_queries(p, &m, &r, t, l, t->softmax_scale, power);
		layer_free(&m);
	}
	free(coef);
	free(x);
	free(power);
	*out = t;
	return WZ_OK;
fail:
	free(coef);
	free(x);
	free(power);
	wzt_cache_trace_free(t);
	return err;
}
