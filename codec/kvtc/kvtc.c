/* KVTC written from the paper's description (codec/kvtc/kvtc.h,
 * docs/kvtc.md). */
#include "codec/kvtc/kvtc.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "codec/profile/linalg.h"
#include "codec/profile/rope.h"

/* Calibration tokens per layer: the covariance's (evenly spaced over the
 * windows when there are more) and the rate search's sample. */
#define FIT_TOKENS 4096
#define SAMPLE_TOKENS 512
/* Rates kept, each with its allocation of every layer. */
#define MAX_RATES 32
/* zstd's level for the indices (its default). */
#define ZLEVEL 3

struct wzc_kvtc {
	int L, R, P, n, ns;
	double *mean;   /* [L][n] */
	float *basis;   /* [L][n][n]: row k is component k (decreasing variance) */
	double *var;    /* [L][n] */
	float *sample;  /* [L][ns][n]: calibration tokens' components */
	double *freq;   /* [L][P/2]: RoPE undone where not 0; NULL: none */
	pthread_mutex_t lock;
	int nrates;
	double rate[MAX_RATES];
	uint8_t *alloc[MAX_RATES]; /* [L][n] */
};

/* ---- the Gaussian uniform quantizer ---- */

static double Phi(double x)
{
	return 0.5 * erfc(-x / sqrt(2.0));
}

static double phi(double x)
{
	return isinf(x) ? 0 : exp(-0.5 * x * x) / sqrt(2 * M_PI);
}

/* Squared error of N levels (k + 0.5 - N/2) step, k = 0 .. N-1, on a unit
 * Gaussian: over each cell [a, b] with level c, the integral of
 * (x - c)^2 phi(x) = (1 + c^2)(Phi(b) - Phi(a)) + (a - 2c) phi(a) - (b - 2c) phi(b). */
static double uniform_error(int N, double step)
{
	double e = 0;
	for (int k = 0; k < N; k++) {
		double c = (k + 0.5 - N / 2.0) * step;
		double a = k == 0 ? -INFINITY : c - step / 2, b = k == N - 1 ? INFINITY : c + step / 2;
		double pa = isinf(a) ? 0 : (a - 2 * c) * phi(a), pb = isinf(b) ? 0 : (b - 2 * c) * phi(b);
		e += (1 + c * c) * (Phi(b) - Phi(a)) + pa - pb;
	}
	return e;
}

static double gauss_step[WZC_KVTC_MAX_BITS + 1], gauss_err[WZC_KVTC_MAX_BITS + 1];
static pthread_once_t gauss_once = PTHREAD_ONCE_INIT;

/* The least-error step of each level count, by golden-section search
 * (the error is unimodal in the step). */
static void gauss_fill(void)
{
	gauss_err[0] = 1;
	for (int b = 1; b <= WZC_KVTC_MAX_BITS; b++) {
		int N = 1 << b;
		double lo = 1e-4, hi = 4.0, g = (sqrt(5.0) - 1) / 2;
		double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
		double f1 = uniform_error(N, x1), f2 = uniform_error(N, x2);
		for (int it = 0; it < 200; it++) {
			if (f1 < f2) {
				hi = x2, x2 = x1, f2 = f1;
				x1 = hi - g * (hi - lo), f1 = uniform_error(N, x1);
			} else {
				lo = x1, x1 = x2, f1 = f2;
				x2 = lo + g * (hi - lo), f2 = uniform_error(N, x2);
			}
		}
		gauss_step[b] = (lo + hi) / 2;
		gauss_err[b] = uniform_error(N, gauss_step[b]);
	}
}

double wzc_kvtc_gauss_error(int b)
{
	pthread_once(&gauss_once, gauss_fill);
	return b < 0 ? 1 : gauss_err[b > WZC_KVTC_MAX_BITS ? WZC_KVTC_MAX_BITS : b];
}

double wzc_kvtc_gauss_step(int b)
{
	pthread_once(&gauss_once, gauss_fill);
	return b <= 0 ? 0 : gauss_step[b > WZC_KVTC_MAX_BITS ? WZC_KVTC_MAX_BITS : b];
}

/* ---- fitting ---- */

void wzc_kvtc_free(wzc_kvtc *k)
{
	if (!k)
		return;
	for (int r = 0; r < k->nrates; r++)
		free(k->alloc[r]);
	pthread_mutex_destroy(&k->lock);
	free(k->mean);
	free(k->basis);
	free(k->var);
	free(k->sample);
	free(k->freq);
	free(k);
}

int wzc_kvtc_layers(const wzc_kvtc *k)
{
	return k->L;
}

int wzc_kvtc_R(const wzc_kvtc *k)
{
	return k->R;
}

int wzc_kvtc_P(const wzc_kvtc *k)
{
	return k->P;
}

/* The calibration tokens: every window's tokens but the sinks, as (window,
 * token) pairs in order. */
typedef struct {
	int w, t;
} cal_ref;

static int64_t position_of(const wzc_window *w, int t)
{
	return w->positions ? w->positions[t] : t;
}

/* The layer's RoPE frequencies, or NULL where it is not undone. */
static const double *layer_freq(const wzc_kvtc *k, int l)
{
	return k->freq ? k->freq + (size_t)l * (k->P / 2) : NULL;
}

/* Calibration token j of layer l into x [n] (its position part with RoPE
 * undone where the transforms undo it). */
static void cal_token(const wzc_kvtc *k, const wzc_window *const *w, const cal_ref *refs, int l,
		      long j, float *x)
{
	const wzc_window *s = w[refs[j].w];
	int t = refs[j].t, R = s->R, P = s->P;
	memcpy(x, s->latent + ((size_t)l * s->T + t) * R, sizeof *x * R);
	memcpy(x + R, s->rope + ((size_t)l * s->T + t) * P, sizeof *x * P);
	const double *f = layer_freq(k, l);
	if (f)
		wzc_rope_turn(x + R, P, position_of(s, t), f, -1);
}

static wz_err fit_layer(wzc_kvtc *k, const wzc_window *const *w, const cal_ref *refs, long total,
			int l, double *cov, double *ev, float *x)
{
	int n = k->n;
	long m = total < FIT_TOKENS ? total : FIT_TOKENS;
	double *mean = k->mean + (size_t)l * n;
	memset(cov, 0, sizeof *cov * (size_t)n * n);
	for (long s = 0; s < m; s++) {
		cal_token(k, w, refs, l, s * total / m, x);
		for (int i = 0; i < n; i++)
			mean[i] += x[i];
	}
	for (int i = 0; i < n; i++)
		mean[i] /= (double)m;
	for (long s = 0; s < m; s++) {
		cal_token(k, w, refs, l, s * total / m, x);
		for (int i = 0; i < n; i++)
			ev[i] = x[i] - mean[i];
		for (int i = 0; i < n; i++)
			for (int j = 0; j <= i; j++)
				cov[(size_t)i * n + j] += ev[i] * ev[j];
	}
	for (int i = 0; i < n; i++)
		for (int j = 0; j <= i; j++)
			cov[(size_t)j * n + i] = cov[(size_t)i * n + j] /= (double)m;
	int erc = wzc_sym_eigen(cov, n, ev);
	if (erc)
		return erc == WZC_EIG_NOMEM ? WZ_ERR_NOMEM : WZ_ERR_INTERNAL;
	float *basis = k->basis + (size_t)l * n * n;
	for (size_t i = 0; i < (size_t)n * n; i++)
		basis[i] = (float)cov[i];
	for (int i = 0; i < n; i++)
		k->var[(size_t)l * n + i] = ev[i] > 0 ? ev[i] : 0;
	/* the rate search's sample: calibration tokens' components */
	for (int s = 0; s < k->ns; s++) {
		cal_token(k, w, refs, l, (long)s * total / k->ns, x);
		float *y = k->sample + ((size_t)l * k->ns + s) * n;
		for (int i = 0; i < n; i++) {
			double d = 0;
			for (int j = 0; j < n; j++)
				d += basis[(size_t)i * n + j] * (x[j] - mean[j]);
			y[i] = (float)d;
		}
	}
	return WZ_OK;
}

wz_err wzc_kvtc_fit(const wzc_window *const *w, int nw, const double *rope_freq, wzc_kvtc **out,
		    wz_diag *diag)
{
	*out = NULL;
	if (nw < 1)
		return wz_diag_set(diag, WZ_ERR_INPUT, "kvtc: no calibration window");
	long total = 0, all = 0;
	for (int i = 0; i < nw; i++) {
		if (w[i]->split && !strcmp(w[i]->split, "test"))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "kvtc: window %s is marked test; calibration reads only "
					   "calibration windows",
					   w[i]->name ? w[i]->name : "(unnamed)");
		if (w[i]->L != w[0]->L || w[i]->R != w[0]->R || w[i]->P != w[0]->P)
			return wz_diag_set(diag, WZ_ERR_INPUT, "kvtc: calibration windows of two shapes");
		all += w[i]->T;
	}
	cal_ref *refs = malloc(sizeof *refs * (size_t)(all ? all : 1));
	if (!refs)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	for (int i = 0; i < nw; i++)
		for (int t = 0; t < w[i]->T; t++)
			if (position_of(w[i], t) >= WZC_KVTC_SINKS)
				refs[total++] = (cal_ref){ i, t };
	if (total < 2) {
		free(refs);
		return wz_diag_set(diag, WZ_ERR_INPUT, "kvtc: fewer than 2 calibration tokens past the sinks");
	}
	wzc_kvtc *k = calloc(1, sizeof *k);
	if (!k) {
		free(refs);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	pthread_mutex_init(&k->lock, NULL);
	k->L = w[0]->L, k->R = w[0]->R, k->P = w[0]->P, k->n = k->R + k->P;
	k->ns = (int)(total < SAMPLE_TOKENS ? total : SAMPLE_TOKENS);
	size_t n = (size_t)k->n, L = (size_t)k->L;
	k->mean = calloc(L * n, sizeof *k->mean);
	k->var = calloc(L * n, sizeof *k->var);
	k->basis = malloc(sizeof *k->basis * L * n * n);
	k->sample = malloc(sizeof *k->sample * L * (size_t)k->ns * n);
	size_t npair = (size_t)(k->P / 2);
	int undo = 0;
	for (size_t i = 0; rope_freq && i < L * npair; i++)
		undo |= rope_freq[i] != 0;
	if (undo && (k->freq = malloc(sizeof *k->freq * L * npair)))
		memcpy(k->freq, rope_freq, sizeof *k->freq * L * npair);
	double *cov = malloc(sizeof *cov * n * n), *ev = malloc(sizeof *ev * n);
	float *x = malloc(sizeof *x * n);
	wz_err e = k->mean && k->var && k->basis && k->sample && cov && ev && x && (!undo || k->freq)
			   ? WZ_OK
			   : WZ_ERR_NOMEM;
	for (int l = 0; !e && l < k->L; l++)
		e = fit_layer(k, w, refs, total, l, cov, ev, x);
	free(refs);
	free(cov);
	free(ev);
	free(x);
	if (e) {
		wzc_kvtc_free(k);
		return wz_diag_set(diag, e, e == WZ_ERR_NOMEM ? "kvtc: out of memory"
							       : "kvtc: the eigendecomposition did not converge");
	}
	*out = k;
	return WZ_OK;
}

/* ---- coding ---- */

/* The index of y among 2^b levels of `step` (component sigma included). */
static inline int quantize(float y, int b, float step)
{
	int N = 1 << b;
	float q = floorf(y / step + (float)(N / 2));
	return q < 0 ? 0 : q > (float)(N - 1) ? N - 1 : (int)q;
}

static inline float level(int q, int b, float step)
{
	return ((float)q + 0.5f - (float)((1 << b) / 2)) * step;
}

/* Codes the components y [n][k->n] of n tokens (a block) of layer l under
 * allocation a: the indices component by component, zstd-compressed into
 * z (room zcap); returns its size, 0 on failure.  With yq, each component
 * replaced by its level. */
static size_t code_block(const wzc_kvtc *k, int l, const uint8_t *a, int n, const float *y,
			 float *yq, uint8_t *buf, void *z, size_t zcap)
{
	const double *var = k->var + (size_t)l * k->n;
	size_t m = 0;
	for (int i = 0; i < k->n; i++) {
		if (!a[i]) {
			for (int t = 0; yq && t < n; t++)
				yq[(size_t)t * k->n + i] = 0;
			continue;
		}
		float step = (float)(sqrt(var[i]) * wzc_kvtc_gauss_step(a[i]));
		for (int t = 0; t < n; t++) {
			int q = quantize(y[(size_t)t * k->n + i], a[i], step);
			buf[m++] = (uint8_t)q;
			if (yq)
				yq[(size_t)t * k->n + i] = level(q, a[i], step);
		}
	}
	if (!m)
		return 4; /* nothing coded: the block's length field alone */
	size_t c = ZSTD_compress(z, zcap, buf, m, ZLEVEL);
	return ZSTD_isError(c) ? 0 : c + 4;
}

/* Bytes the sample of layer l takes under allocation a, 0 on failure. */
static size_t sample_bytes(const wzc_kvtc *k, int l, const uint8_t *a, uint8_t *buf, void *z,
			   size_t zcap)
{
	size_t total = 0;
	for (int t0 = 0; t0 < k->ns; t0 += WZC_KVTC_BLOCK) {
		int n = k->ns - t0 < WZC_KVTC_BLOCK ? k->ns - t0 : WZC_KVTC_BLOCK;
		size_t c = code_block(k, l, a, n, k->sample + ((size_t)l * k->ns + t0) * k->n, NULL,
				      buf, z, zcap);
		if (!c)
			return 0;
		total += c;
	}
	return total;
}

/* Layer l's allocation at `bits`: the dynamic program over components
 * (the least sum of var_i D(b_i) within B bits a token, for every B at
 * once), then the largest B whose coded sample fits `bits` (bisection).
 * Returns 0, or -1 when out of memory. */
static int allocate(const wzc_kvtc *k, double bits, int l, uint8_t *a)
{
	int n = k->n, Bmax = WZC_KVTC_MAX_BITS * n;
	const double *var = k->var + (size_t)l * n;
	double *dp = malloc(sizeof *dp * (size_t)(Bmax + 1)), *nx = malloc(sizeof *nx * (size_t)(Bmax + 1));
	uint8_t *choice = malloc((size_t)n * (Bmax + 1));
	size_t room = (size_t)WZC_KVTC_BLOCK * n, zcap = ZSTD_compressBound(room);
	uint8_t *buf = malloc(room);
	void *z = malloc(zcap);
	int rc = -1;
	if (!dp || !nx || !choice || !buf || !z)
		goto done;
	for (int B = 0; B <= Bmax; B++)
		dp[B] = 0;
	/* components from the last: dp[B] the least error of components i..n-1 within B */
	for (int i = n - 1; i >= 0; i--) {
		uint8_t *ch = choice + (size_t)i * (Bmax + 1);
		for (int B = 0; B <= Bmax; B++) {
			double best = INFINITY;
			int bb = 0;
			for (int b = 0; b <= WZC_KVTC_MAX_BITS && b <= B; b++) {
				double v = var[i] * wzc_kvtc_gauss_error(b) + dp[B - b];
				if (v < best)
					best = v, bb = b;
			}
			nx[B] = best;
			ch[B] = (uint8_t)bb;
		}
		double *t = dp;
		dp = nx;
		nx = t;
	}
	/* the bisection over the budget: lo fits (0 always), hi does not */
	double target = bits * n * k->ns / 8.0;
	int lo = 0, hi = Bmax + 1;
	while (hi - lo > 1) {
		int m = lo + (hi - lo) / 2, B = m;
		for (int i = 0; i < n; i++) {
			a[i] = choice[(size_t)i * (Bmax + 1) + B];
			B -= a[i];
		}
		size_t got = sample_bytes(k, l, a, buf, z, zcap);
		if (!got)
			goto done;
		if ((double)got <= target)
			lo = m;
		else
			hi = m;
	}
	for (int i = 0, B = lo; i < n; i++) {
		a[i] = choice[(size_t)i * (Bmax + 1) + B];
		B -= a[i];
	}
	rc = 0;
done:
	free(dp);
	free(nx);
	free(choice);
	free(buf);
	free(z);
	return rc;
}

const uint8_t *wzc_kvtc_alloc(const wzc_kvtc *ck, double bits, int l)
{
	wzc_kvtc *k = (wzc_kvtc *)ck; /* the allocations are a cache */
	if (l < 0 || l >= k->L)
		return NULL;
	uint8_t *got = NULL;
	pthread_mutex_lock(&k->lock);
	for (int r = 0; r < k->nrates && !got; r++)
		if (k->rate[r] == bits)
			got = k->alloc[r];
	if (!got && k->nrates < MAX_RATES) {
		uint8_t *a = malloc((size_t)k->L * k->n);
		int bad = !a;
		for (int m = 0; !bad && m < k->L; m++)
			bad = allocate(k, bits, m, a + (size_t)m * k->n);
		if (!bad) {
			k->rate[k->nrates] = bits;
			k->alloc[k->nrates++] = got = a;
		} else {
			free(a);
		}
	}
	pthread_mutex_unlock(&k->lock);
	return got ? got + (size_t)l * k->n : NULL;
}

wz_err wzc_kvtc_roundtrip(const wzc_kvtc *k, double bits, int l, int n, const float *latent,
			  const float *rope, const int64_t *positions, float *out_latent,
			  float *out_rope, size_t *bytes, wz_diag *diag)
{
	*bytes = 0;
	const uint8_t *a = wzc_kvtc_alloc(k, bits, l);
	int nv = k->n, R = k->R, P = k->P;
	size_t room = (size_t)WZC_KVTC_BLOCK * nv, zcap = ZSTD_compressBound(room);
	float *y = malloc(sizeof *y * room), *yq = malloc(sizeof *yq * room);
	uint8_t *buf = malloc(room);
	void *z = malloc(zcap);
	int *idx = malloc(sizeof *idx * (size_t)(n ? n : 1));
	float *back = malloc(sizeof *back * (size_t)(P + 1));
	const double *f = layer_freq(k, l);
	wz_err e = a && y && yq && buf && z && idx && back ? WZ_OK : WZ_ERR_NOMEM;
	const double *mean = k->mean + (size_t)l * nv;
	const float *V = k->basis + (size_t)l * nv * nv;
	/* the sinks kept as they are (bf16, the cache's own values), the
	 * other tokens coded in blocks of WZC_KVTC_BLOCK in order */
	int m = 0;
	for (int t = 0; !e && t < n; t++) {
		if ((positions ? positions[t] : t) >= WZC_KVTC_SINKS) {
			idx[m++] = t;
			continue;
		}
		memmove(out_latent + (size_t)t * R, latent + (size_t)t * R, sizeof *y * R);
		memmove(out_rope + (size_t)t * P, rope + (size_t)t * P, sizeof *y * P);
		*bytes += 2 * (size_t)nv;
	}
	for (int b0 = 0; !e && b0 < m; b0 += WZC_KVTC_BLOCK) {
		int nb = m - b0 < WZC_KVTC_BLOCK ? m - b0 : WZC_KVTC_BLOCK;
		for (int j = 0; j < nb; j++) {
			int t = idx[b0 + j];
			const float *xl = latent + (size_t)t * R, *xr = rope + (size_t)t * P;
			float *yt = y + (size_t)j * nv;
			if (f) { /* the position part with RoPE undone */
				memcpy(back, xr, sizeof *back * P);
				wzc_rope_turn(back, P, positions ? positions[t] : t, f, -1);
				xr = back;
			}
			for (int i = 0; i < nv; i++) {
				const float *v = V + (size_t)i * nv;
				float d = 0;
				for (int c = 0; c < R; c++)
					d += v[c] * (xl[c] - (float)mean[c]);
				for (int c = 0; c < P; c++)
					d += v[R + c] * (xr[c] - (float)mean[R + c]);
				yt[i] = d;
			}
		}
		size_t c = code_block(k, l, a, nb, y, yq, buf, z, zcap);
		if (!c) {
			e = WZ_ERR_NOMEM;
			break;
		}
		*bytes += c;
		/* decoded: the mean plus the levels through the transposed basis */
		for (int j = 0; j < nb; j++) {
			int t = idx[b0 + j];
			float *x = y + (size_t)j * nv; /* y is spent: the output row */
			for (int i = 0; i < nv; i++)
				x[i] = (float)mean[i];
			const float *q = yq + (size_t)j * nv;
			for (int i = 0; i < nv; i++) {
				if (!a[i])
					continue;
				const float *v = V + (size_t)i * nv;
				for (int c2 = 0; c2 < nv; c2++)
					x[c2] += q[i] * v[c2];
			}
			if (f)
				wzc_rope_turn(x + R, P, positions ? positions[t] : t, f, 1);
			memcpy(out_latent + (size_t)t * R, x, sizeof *x * R);
			memcpy(out_rope + (size_t)t * P, x + R, sizeof *x * P);
		}
	}
	free(y);
	free(yq);
	free(buf);
	free(z);
	free(idx);
	free(back);
	return e ? wz_diag_set(diag, e, "kvtc: out of memory") : WZ_OK;
}
