/* Quality metrics: errors per token and query from an encode/decode round
 * trip, resampled for confidence intervals; iso-quality bits.  The
 * rate-distortion bound is in rd_bound.c. */
#include "codec/measure/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/formats/fpconv.h"
#include "codec/hot.h"

void wzc_errors_free(wzc_errors *e)
{
	if (!e)
		return;
	for (int p = 0; p < 2; p++) {
		free(e->err[p]);
		free(e->energy[p]);
		free(e->layer_err[p]);
		free(e->layer_energy[p]);
	}
	free(e->kl);
	free(e->out_err);
	free(e->layer_kl);
	free(e->layer_out_err);
	free(e);
}

static double *copy_of(const double *v, size_t n)
{
	double *c = malloc(sizeof *c * (n ? n : 1));
	if (c && n)
		memcpy(c, v, sizeof *c * n);
	return c;
}

wzc_errors *wzc_errors_layer(const wzc_errors *e, int l)
{
	if (!e->L || l < 0 || l >= e->L)
		return NULL;
	wzc_errors *x = calloc(1, sizeof *x);
	if (!x)
		return NULL;
	size_t T = (size_t)e->T, Q = (size_t)e->Q;
	x->T = e->T;
	x->Q = e->Q;
	int bad = 0;
	for (int p = 0; p < 2; p++) {
		bad |= !(x->err[p] = copy_of(e->layer_err[p] + T * l, T));
		bad |= !(x->energy[p] = copy_of(e->layer_energy[p] + T * l, T));
	}
	if (e->layer_kl) {
		bad |= !(x->kl = copy_of(e->layer_kl + Q * l, Q));
		bad |= !(x->out_err = copy_of(e->layer_out_err + Q * l, Q));
	}
	x->bytes = e->bytes / (size_t)e->L;
	x->payload_bytes = e->payload_bytes / (size_t)e->L;
	x->values = e->values / (size_t)e->L;
	x->bits_per_value = e->bits_per_value;
	if (bad) {
		wzc_errors_free(x);
		return NULL;
	}
	return x;
}

/* Heads scored (and their outputs summed) together: each pass over a
 * layer's keys or values serves this many query vectors, where one pass
 * per vector made the measurement memory-bound.  Every sum keeps its
 * order, and the loops' AVX2 and AVX-512 clones (WZ_VEC_CLONES) do the
 * same operations, so the figures are the same on any machine. */
#define HEADS_AT_ONCE 8
/* Tokens of the score tiles: a tile of each head's scores stays in the
 * first-level cache while the keys' rows stream past. */
#define SCORE_TILE 256

/* s[b][t] = sum_j q[b][j] kt[j][t] over t < n for nb query vectors q[b]
 * (rows of m) into rows of T: the axpy form vectorizes, each s[b][t] summed
 * over j in order. */
WZ_VEC_CLONES WZ_HOT static void scores(const float *q, int nb, int m, const float *kt, int T, int n,
			  double scale, float *s)
{
	for (int b = 0; b < nb; b++)
		for (int t = 0; t < n; t++)
			s[(size_t)b * T + t] = 0;
	for (int t0 = 0; t0 < n; t0 += SCORE_TILE) {
		int tn = n - t0 < SCORE_TILE ? n - t0 : SCORE_TILE;
		for (int j = 0; j < m; j++) {
			const float *row = kt + (size_t)j * T + t0;
			for (int b = 0; b < nb; b++) {
				float qj = q[(size_t)b * m + j];
				float *sb = s + (size_t)b * T + t0;
				for (int t = 0; t < tn; t++)
					sb[t] += qj * row[t];
			}
		}
	}
	for (int b = 0; b < nb; b++)
		for (int t = 0; t < n; t++)
			s[(size_t)b * T + t] = (float)(s[(size_t)b * T + t] * scale);
}

static void softmax(const float *s, int n, double *p)
{
	double mx = -INFINITY, z = 0;
	for (int t = 0; t < n; t++)
		mx = s[t] > mx ? s[t] : mx;
	for (int t = 0; t < n; t++) {
		p[t] = exp(s[t] - mx);
		z += p[t];
	}
	for (int t = 0; t < n; t++)
		p[t] /= z;
}

/* o[b][i] = sum_t p[b][t] rows[t][i] over t < n for nb weight vectors
 * (rows of T) into rows of R, each sum over t in order. */
WZ_VEC_CLONES WZ_HOT static void weighted_sum(const double *p, int nb, int T, const float *rows, int n, int R,
				double *o)
{
	for (int b = 0; b < nb; b++)
		for (int i = 0; i < R; i++)
			o[(size_t)b * R + i] = 0;
	for (int t = 0; t < n; t++) {
		const float *c = rows + (size_t)t * R;
		for (int b = 0; b < nb; b++) {
			double pt = p[(size_t)b * T + t];
			double *ob = o + (size_t)b * R;
			for (int i = 0; i < R; i++)
				ob[i] += pt * c[i];
		}
	}
}

/* Keys of one layer, transposed: kt[j][t] for j over latent then position. */
static void transpose_keys(const float *lat, const float *rope, int T, int R, int P, float *kt)
{
	for (int t = 0; t < T; t++) {
		for (int i = 0; i < R; i++)
			kt[(size_t)i * T + t] = lat[(size_t)t * R + i];
		for (int i = 0; i < P; i++)
			kt[(size_t)(R + i) * T + t] = rope[(size_t)t * P + i];
	}
}

struct wzc_exact {
	int L, Q, H, R;
	size_t *qoff; /* [Q + 1]: where query qi's rows start, H rows of n_qi each */
	double **p;   /* [L]: [qoff[Q]], the softmax of the exact scores; NULL: not held */
	double **o;   /* [L]: [Q][H][R], the attention output over the latent */
};

/* The tokens query qi sees. */
static int seen(const wzc_window *w, int qi)
{
	int64_t last = w->q_index[qi];
	return last < 0 ? 0 : last >= w->T ? w->T : (int)last + 1;
}

static int has_queries(const wzc_window *w)
{
	return w->Q > 0 && w->H > 0 && w->q_latent && w->q_index && (w->q_rope || !w->P);
}

wzc_exact *wzc_exact_new(const wzc_window *w)
{
	if (!has_queries(w))
		return NULL;
	wzc_exact *x = calloc(1, sizeof *x);
	if (!x)
		return NULL;
	x->L = w->L;
	x->Q = w->Q;
	x->H = w->H;
	x->R = w->R;
	x->qoff = malloc(sizeof *x->qoff * ((size_t)w->Q + 1));
	x->p = calloc((size_t)w->L + 1, sizeof *x->p);
	x->o = calloc((size_t)w->L + 1, sizeof *x->o);
	if (!x->qoff || !x->p || !x->o) {
		wzc_exact_free(x);
		return NULL;
	}
	x->qoff[0] = 0;
	for (int qi = 0; qi < w->Q; qi++)
		x->qoff[qi + 1] = x->qoff[qi] + (size_t)w->H * (size_t)seen(w, qi);
	return x;
}

/* Whether x has the shape of window w's attention (the layers, queries,
 * heads and latent, and each query's tokens). */
static int made_for(const wzc_exact *x, const wzc_window *w)
{
	if (x->L != w->L || x->Q != w->Q || x->H != w->H || x->R != w->R || !has_queries(w))
		return 0;
	for (int qi = 0; qi < w->Q; qi++)
		if (x->qoff[qi + 1] - x->qoff[qi] != (size_t)w->H * (size_t)seen(w, qi))
			return 0;
	return 1;
}

size_t wzc_exact_layer_bytes(const wzc_exact *x)
{
	return x ? sizeof(double) * (x->qoff[x->Q] + (size_t)x->Q * x->H * x->R) : 0;
}

void wzc_exact_free(wzc_exact *x)
{
	if (!x)
		return;
	for (int l = 0; x->p && x->o && l < x->L; l++) {
		free(x->p[l]);
		free(x->o[l]);
	}
	free(x->p);
	free(x->o);
	free(x->qoff);
	free(x);
}

/* Query qi's vectors of heads h0..h0+nb-1 in layer l, latent then position
 * part, into rows of R + P. */
static void load_queries(const wzc_window *w, int l, int qi, int h0, int nb, float *q)
{
	int R = w->R, P = w->P, m = R + P;
	for (int b = 0; b < nb; b++) {
		size_t off = ((size_t)l * w->Q + qi) * w->H + h0 + b;
		float *qb = q + (size_t)b * m;
		memcpy(qb, w->q_latent + off * R, sizeof(float) * (size_t)R);
		if (P)
			memcpy(qb + R, w->q_rope + off * P, sizeof(float) * (size_t)P);
	}
}

/* The exact half of attention() for heads h0..h0+nb-1 of query qi of layer
 * l: their probabilities p[b][0..n) (rows `stride` apart) and outputs
 * o[b][R], with kt the layer's keys transposed and q, s scratch. */
static void exact_heads(const wzc_window *w, int l, int qi, int h0, int nb, int n,
			const float *kt, float *q, float *s, double *p, int stride, double *o)
{
	int T = w->T, R = w->R, P = w->P, m = R + P;
	load_queries(w, l, qi, h0, nb, q);
	scores(q, nb, m, kt, T, n, w->softmax_scale, s);
	for (int b = 0; b < nb; b++)
		softmax(s + (size_t)b * T, n, p + (size_t)b * stride);
	weighted_sum(p, nb, stride, w->latent + (size_t)l * T * R, n, R, o);
}

wz_err wzc_exact_layer(wzc_exact *x, const wzc_window *w, int l, wz_diag *diag)
{
	int T = w->T, R = w->R, P = w->P, m = R + P;
	const int HB = HEADS_AT_ONCE;
	if (!x || l < 0 || l >= x->L)
		return wz_diag_set(diag, WZ_ERR_RANGE, "no layer %d to hold the attention of", l);
	if (!made_for(x, w))
		return wz_diag_set(diag, WZ_ERR_USAGE, "the attention holder was made for a window of another shape");
	if (x->p[l])
		return WZ_OK;
	double *p = malloc(sizeof(double) * (x->qoff[x->Q] + 1));
	double *o = malloc(sizeof(double) * ((size_t)x->Q * x->H * R + 1));
	float *kt = malloc(sizeof(float) * (size_t)m * T);
	float *q = malloc(sizeof(float) * (size_t)m * HB), *s = malloc(sizeof(float) * (size_t)T * HB);
	if (!p || !o || !kt || !q || !s) {
		free(p);
		free(o);
		free(kt);
		free(q);
		free(s);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory holding a layer's attention");
	}
	transpose_keys(w->latent + (size_t)l * T * R, w->rope + (size_t)l * T * P, T, R, P, kt);
	for (int qi = 0; qi < w->Q; qi++) {
		int n = seen(w, qi);
		for (int h0 = 0; n > 0 && h0 < w->H; h0 += HB) {
			int nb = w->H - h0 < HB ? w->H - h0 : HB;
			exact_heads(w, l, qi, h0, nb, n, kt, q, s, p + x->qoff[qi] + (size_t)h0 * n, n,
				    o + ((size_t)qi * w->H + h0) * R);
		}
	}
	free(kt);
	free(q);
	free(s);
	x->p[l] = p;
	x->o[l] = o;
	return WZ_OK;
}

/* Attention KL and output error of layer l of the window, decoded as
 * lat_hat and rope_hat, added to e.  The exact attention comes from x (made
 * for this window, or NULL) where it holds the layer (the same doubles:
 * exact_heads computes both), else is computed here. */
static wz_err attention(const wzc_window *w, int l, const float *lat_hat, const float *rope_hat,
			const wzc_exact *x, wzc_errors *e)
{
	int T = w->T, R = w->R, P = w->P, m = R + P;
	const int HB = HEADS_AT_ONCE;
	int held = x && x->p[l];
	float *kt = held ? NULL : malloc(sizeof(float) * (size_t)m * T);
	float *kth = malloc(sizeof(float) * (size_t)m * T);
	float *q = malloc(sizeof(float) * (size_t)m * HB);
	float *s = held ? NULL : malloc(sizeof(float) * (size_t)T * HB);
	float *sh = malloc(sizeof(float) * (size_t)T * HB);
	double *p = held ? NULL : malloc(sizeof(double) * (size_t)T * HB);
	double *ph = malloc(sizeof(double) * (size_t)T * HB);
	double *o = held ? NULL : malloc(sizeof(double) * (size_t)R * HB);
	double *oh = malloc(sizeof(double) * (size_t)R * HB);
	wz_err rc = WZ_OK;
	if ((!held && (!kt || !s || !p || !o)) || !kth || !q || !sh || !ph || !oh) {
		rc = WZ_ERR_NOMEM;
		goto out;
	}
	if (!held)
		transpose_keys(w->latent + (size_t)l * T * R, w->rope + (size_t)l * T * P, T, R, P, kt);
	transpose_keys(lat_hat, rope_hat, T, R, P, kth);
	for (int qi = 0; qi < w->Q; qi++) {
		int n = seen(w, qi);
		if (n == 0)
			continue;
		for (int h0 = 0; h0 < w->H; h0 += HB) {
			int nb = w->H - h0 < HB ? w->H - h0 : HB;
			const double *pe, *oe;
			int stride;
			if (held) {
				load_queries(w, l, qi, h0, nb, q);
				pe = x->p[l] + x->qoff[qi] + (size_t)h0 * n;
				oe = x->o[l] + ((size_t)qi * w->H + h0) * R;
				stride = n;
			} else {
				exact_heads(w, l, qi, h0, nb, n, kt, q, s, p, T, o);
				pe = p;
				oe = o;
				stride = T;
			}
			scores(q, nb, m, kth, T, n, w->softmax_scale, sh);
			for (int b = 0; b < nb; b++)
				softmax(sh + (size_t)b * T, n, ph + (size_t)b * T);
			weighted_sum(ph, nb, T, lat_hat, n, R, oh);
			/* the heads' figures added in head order, as one at a time */
			for (int b = 0; b < nb; b++) {
				const double *pb = pe + (size_t)b * stride, *phb = ph + (size_t)b * T;
				const double *ob = oe + (size_t)b * R, *ohb = oh + (size_t)b * R;
				double kl = 0;
				for (int t = 0; t < n; t++)
					if (pb[t] > 0)
						kl += pb[t] * (log(pb[t]) - log(phb[t] > 1e-300 ? phb[t] : 1e-300));
				double num = 0, den = 0;
				for (int i = 0; i < R; i++) {
					num += (ob[i] - ohb[i]) * (ob[i] - ohb[i]);
					den += ob[i] * ob[i];
				}
				double scale = 1.0 / ((double)w->L * w->H);
				e->kl[qi] += (kl > 0 ? kl : 0) * scale;
				e->out_err[qi] += (den > 0 ? sqrt(num / den) : 0) * scale;
				if (e->layer_kl) {
					size_t at = (size_t)l * w->Q + qi;
					e->layer_kl[at] += (kl > 0 ? kl : 0) / w->H;
					e->layer_out_err[at] += (den > 0 ? sqrt(num / den) : 0) / w->H;
				}
			}
		}
	}
out:
	free(kt);
	free(kth);
	free(q);
	free(s);
	free(sh);
	free(p);
	free(ph);
	free(o);
	free(oh);
	return rc;
}

wz_err wzc_measure(const wzc_window *w, wzc_codec *codec, wzc_errors **out, wz_diag *diag)
{
	return wzc_measure_layers(w, codec, 0, out, diag);
}

/* 1 when token t of the window stays in bf16 under "-keep<F>-<L>": its
 * position is below F, or it is one of the window's last L. */
static int kept(const wzc_window *w, int t, long first, long last)
{
	int64_t pos = w->positions ? w->positions[t] : t;
	return pos < first || (long)(w->T - t) <= last;
}

/* Tokens the codec did not store stand as bf16 of the originals. */
static size_t keep_tokens(const wzc_window *w, long first, long last, const float *x,
			  const float *xr, float *lat, float *rope)
{
	size_t n = 0;
	for (int t = 0; t < w->T; t++) {
		if (!kept(w, t, first, last))
			continue;
		n++;
		for (int i = 0; i < w->R; i++)
			lat[(size_t)t * w->R + i] = wzc_bf16_to_f32(wzc_bf16_from_f32(x[(size_t)t * w->R + i]));
		for (int i = 0; i < w->P; i++)
			rope[(size_t)t * w->P + i] =
				wzc_bf16_to_f32(wzc_bf16_from_f32(xr[(size_t)t * w->P + i]));
	}
	return n;
}

static wz_err measure(const wzc_window *w, wzc_codec *codec, const wzc_exact *x,
		      long keep_first, long keep_last, int keep_layers, wzc_errors **out,
		      wz_diag *diag);

wz_err wzc_measure_layers(const wzc_window *w, wzc_codec *codec, int keep_layers,
			  wzc_errors **out, wz_diag *diag)
{
	return measure(w, codec, NULL, 0, 0, keep_layers, out, diag);
}

wz_err wzc_measure_kept(const wzc_window *w, wzc_codec *codec, long keep_first, long keep_last,
			int keep_layers, wzc_errors **out, wz_diag *diag)
{
	return wzc_measure_exact(w, codec, NULL, 1, keep_first, keep_last, keep_layers, out, diag);
}

wz_err wzc_measure_exact(const wzc_window *w, wzc_codec *codec, const wzc_exact *x, int keeps,
			 long keep_first, long keep_last, int keep_layers, wzc_errors **out,
			 wz_diag *diag)
{
	if (!keeps)
		return measure(w, codec, x, 0, 0, keep_layers, out, diag);
	if (keep_first < 0 || keep_last < 0 || wzc_codec_format(codec)->id == WZC_FMT_WZX) {
		*out = NULL;
		return wz_diag_set(diag, WZ_ERR_INPUT, "kept tokens need a fixed record per token");
	}
	return measure(w, codec, x, keep_first, keep_last, keep_layers, out, diag);
}

static wz_err measure(const wzc_window *w, wzc_codec *codec, const wzc_exact *exact,
		      long keep_first, long keep_last, int keep_layers, wzc_errors **out,
		      wz_diag *diag)
{
	*out = NULL;
	int T = w->T, R = w->R, P = w->P;
	size_t rb = wzc_codec_record_bytes(codec);
	int queries = has_queries(w);
	/* a holder made for another window's shape is not used */
	if (exact && !made_for(exact, w))
		exact = NULL;
	wz_err rc = WZ_ERR_NOMEM;
	wzc_errors *e = calloc(1, sizeof *e);
	uint8_t *rec = malloc(rb * (size_t)T);
	float *lat = malloc(sizeof(float) * (size_t)T * R);
	float *rope = malloc(sizeof(float) * ((size_t)T * P + 1));
	if (!e || !rec || !lat || !rope)
		goto nomem;
	e->T = T;
	e->Q = queries ? w->Q : 0;
	for (int p = 0; p < 2; p++) {
		e->err[p] = calloc((size_t)T, sizeof(double));
		e->energy[p] = calloc((size_t)T, sizeof(double));
		if (!e->err[p] || !e->energy[p])
			goto nomem;
	}
	if (queries) {
		e->kl = calloc((size_t)w->Q, sizeof(double));
		e->out_err = calloc((size_t)w->Q, sizeof(double));
		if (!e->kl || !e->out_err)
			goto nomem;
	}
	if (keep_layers && w->L > 0) {
		size_t LT = (size_t)w->L * T, LQ = (size_t)w->L * (queries ? w->Q : 0);
		e->L = w->L;
		for (int p = 0; p < 2; p++)
			if (!(e->layer_err[p] = calloc(LT, sizeof(double))) ||
			    !(e->layer_energy[p] = calloc(LT, sizeof(double))))
				goto nomem;
		if (queries && (!(e->layer_kl = calloc(LQ, sizeof(double))) ||
				!(e->layer_out_err = calloc(LQ, sizeof(double)))))
			goto nomem;
	}
	/* A variable-rate format (wzx): the records decoded back out of a
	 * container really written, and its bytes (header and index included)
	 * counted. */
	uint8_t *wzx_rec = NULL;
	const wzc_format_info *info = wzc_format_info_of(wzc_codec_format(codec)->id);
	if (info->window_records) {
		rc = info->window_records(codec, w, &wzx_rec, &e->bytes, &e->payload_bytes, diag);
		if (rc)
			goto fail;
	}
	for (int l = 0; l < w->L; l++) {
		const float *x[2] = { w->latent + (size_t)l * T * R, w->rope + (size_t)l * T * P };
		if (wzx_rec)
			memcpy(rec, wzx_rec + rb * (size_t)T * l, rb * (size_t)T);
		else if ((rc = wzc_encode_layer_at(codec, l, T, x[0], x[1], w->positions, rec, diag)))
			goto fail;
		if ((rc = wzc_decode_layer_at(codec, l, T, rec, w->positions, lat, rope))) {
			wz_diag_set(diag, rc, "layer %d: could not be decoded (%s)", l, wz_strerror(rc));
			goto fail;
		}
		size_t nkept = keep_first || keep_last
				       ? keep_tokens(w, keep_first, keep_last, x[0], x[1], lat, rope)
				       : 0;
		if (!wzx_rec)
			e->bytes += rb * ((size_t)T - nkept) + 2 * (size_t)(R + P) * nkept;
		e->values += (size_t)T * (R + P);
		const float *xh[2] = { lat, rope };
		int width[2] = { R, P };
		for (int p = 0; p < 2; p++)
			for (int t = 0; t < T; t++) {
				const float *a = x[p] + (size_t)t * width[p], *b = xh[p] + (size_t)t * width[p];
				double se = 0, en = 0;
				for (int i = 0; i < width[p]; i++) {
					double d = (double)a[i] - b[i];
					se += d * d;
					en += (double)a[i] * a[i];
				}
				e->err[p][t] += se;
				e->energy[p][t] += en;
				if (e->L) {
					e->layer_err[p][(size_t)l * T + t] = se;
					e->layer_energy[p][(size_t)l * T + t] = en;
				}
			}
		if (queries && attention(w, l, lat, rope, exact, e)) {
			free(wzx_rec);
			goto nomem;
		}
	}
	free(wzx_rec);
	e->bits_per_value = e->values ? (double)e->bytes * 8.0 / (double)e->values : 0;
	free(rec);
	free(lat);
	free(rope);
	*out = e;
	return WZ_OK;
nomem:
	rc = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory measuring a window");
fail:
	free(rec);
	free(lat);
	free(rope);
	wzc_errors_free(e);
	return rc;
}

const char *wzc_metric_name(wzc_metric m)
{
	static const char *const names[] = { "nmse_latent", "nmse_rope", "nmse", "kl", "out_err" };
	return m >= 0 && m <= WZC_M_OUT_ERR ? names[m] : "?";
}

int wzc_metric_available(const wzc_errors *e, wzc_metric m)
{
	if (m == WZC_M_KL || m == WZC_M_OUT_ERR)
		return e->Q > 0 && e->kl != NULL;
	return e->T > 0;
}

/* The metric on a resample: idx[] of n units (tokens or queries); NULL
 * means every unit once. */
static double metric_on(const wzc_errors *e, wzc_metric m, const int *idx, int n)
{
	if (m == WZC_M_KL || m == WZC_M_OUT_ERR) {
		const double *v = m == WZC_M_KL ? e->kl : e->out_err;
		double s = 0;
		for (int i = 0; i < n; i++)
			s += v[idx ? idx[i] : i];
		return n ? s / n : NAN;
	}
	double num = 0, den = 0;
	for (int i = 0; i < n; i++) {
		int t = idx ? idx[i] : i;
		if (m != WZC_M_NMSE_ROPE) {
			num += e->err[0][t];
			den += e->energy[0][t];
		}
		if (m != WZC_M_NMSE_LATENT) {
			num += e->err[1][t];
			den += e->energy[1][t];
		}
	}
	return den > 0 ? num / den : 0;
}

static int units(const wzc_errors *e, wzc_metric m)
{
	return m == WZC_M_KL || m == WZC_M_OUT_ERR ? e->Q : e->T;
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void resample(int *idx, int n, uint64_t *state)
{
	for (int i = 0; i < n; i++)
		idx[i] = (int)(splitmix(state) % (uint64_t)n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	/* NaN sorts last: an unreachable value is "worse than any". */
	if (isnan(x) || isnan(y))
		return isnan(x) - isnan(y);
	return (x > y) - (x < y);
}

static void percentiles(double *v, int n, double *lo, double *hi)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	*lo = v[(int)floor(0.025 * (n - 1))];
	*hi = v[(int)ceil(0.975 * (n - 1))];
}

wzc_ci wzc_metric_ci(const wzc_errors *e, wzc_metric m, int nboot, uint64_t seed)
{
	wzc_ci r = { NAN, NAN, NAN };
	if (!wzc_metric_available(e, m))
		return r;
	int n = units(e, m);
	r.value = metric_on(e, m, NULL, n);
	int *idx = malloc(sizeof *idx * (size_t)n);
	double *v = malloc(sizeof *v * (size_t)(nboot > 0 ? nboot : 1));
	if (idx && v && nboot > 1) {
		for (int b = 0; b < nboot; b++) {
			resample(idx, n, &seed);
			v[b] = metric_on(e, m, idx, n);
		}
		percentiles(v, nboot, &r.lo, &r.hi);
	}
	free(idx);
	free(v);
	return r;
}

wzc_ci wzc_ratio_ci(const wzc_errors *a, const wzc_errors *ref, wzc_metric m, int nboot,
		    uint64_t seed)
{
	wzc_ci r = { NAN, NAN, NAN };
	if (!wzc_metric_available(a, m) || !wzc_metric_available(ref, m) ||
	    units(a, m) != units(ref, m))
		return r;
	int n = units(a, m);
	r.value = metric_on(a, m, NULL, n) / metric_on(ref, m, NULL, n);
	int *idx = malloc(sizeof *idx * (size_t)n);
	double *v = malloc(sizeof *v * (size_t)(nboot > 0 ? nboot : 1));
	if (idx && v && nboot > 1) {
		for (int b = 0; b < nboot; b++) {
			resample(idx, n, &seed);
			v[b] = metric_on(a, m, idx, n) / metric_on(ref, m, idx, n);
		}
		percentiles(v, nboot, &r.lo, &r.hi);
	}
	free(idx);
	free(v);
	return r;
}

double wzc_share_better(const wzc_errors *a, const wzc_errors *ref, wzc_metric m)
{
	if (!wzc_metric_available(a, m) || !wzc_metric_available(ref, m) ||
	    units(a, m) != units(ref, m))
		return NAN;
	int n = units(a, m), better = 0;
	for (int i = 0; i < n; i++) {
		double x, y;
		if (m == WZC_M_KL || m == WZC_M_OUT_ERR) {
			x = (m == WZC_M_KL ? a->kl : a->out_err)[i];
			y = (m == WZC_M_KL ? ref->kl : ref->out_err)[i];
		} else {
			int p0 = m == WZC_M_NMSE_ROPE, p1 = m != WZC_M_NMSE_LATENT;
			x = (p0 ? 0 : a->err[0][i]) + (p1 ? a->err[1][i] : 0);
			y = (p0 ? 0 : ref->err[0][i]) + (p1 ? ref->err[1][i] : 0);
		}
		better += x < y;
	}
	return n ? (double)better / n : NAN;
}

double wzc_sqnr_db(double nmse)
{
	return nmse > 0 ? -10.0 * log10(nmse) : INFINITY;
}

/* The iso-quality rate on one resample; NAN when unreachable. */
static double iso_on(const double *rates, wzc_errors *const *errs, int n, const wzc_errors *ref,
		     wzc_metric m, const int *idx, int nu, int *censored)
{
	double target = metric_on(ref, m, idx, nu), prev = NAN;
	for (int i = 0; i < n; i++) {
		double cur = metric_on(errs[i], m, idx, nu);
		if (cur <= target) {
			if (i == 0) {
				if (censored)
					*censored = 1;
				return rates[0];
			}
			if (!(prev > 0 && cur > 0 && target > 0))
				return rates[i];
			double f = (log(target) - log(prev)) / (log(cur) - log(prev));
			return rates[i - 1] + f * (rates[i] - rates[i - 1]);
		}
		prev = cur;
	}
	return NAN;
}

wzc_ci wzc_iso_bits(const double *rates, wzc_errors *const *errs, int n, const wzc_errors *ref,
		    wzc_metric m, int nboot, uint64_t seed, int *censored)
{
	wzc_ci r = { NAN, NAN, NAN };
	if (censored)
		*censored = 0;
	if (n < 1 || !wzc_metric_available(ref, m))
		return r;
	for (int i = 0; i < n; i++)
		if (!wzc_metric_available(errs[i], m) || units(errs[i], m) != units(ref, m))
			return r;
	int nu = units(ref, m);
	r.value = iso_on(rates, errs, n, ref, m, NULL, nu, censored);
	int *idx = malloc(sizeof *idx * (size_t)nu);
	double *v = malloc(sizeof *v * (size_t)(nboot > 0 ? nboot : 1));
	if (idx && v && nboot > 1) {
		for (int b = 0; b < nboot; b++) {
			resample(idx, nu, &seed);
			v[b] = iso_on(rates, errs, n, ref, m, idx, nu, NULL);
		}
		percentiles(v, nboot, &r.lo, &r.hi);
	}
	free(idx);
	free(v);
	return r;
}
