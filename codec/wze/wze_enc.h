/* The per-component steps of wze's encoder (docs/wze-format.md) that its
 * reference (wze_codec.c) and its fast path (wze_fast_enc.c) share, so
 * that the two make the same records: a component's symbol at a step
 * code, the rANS encoder's steps, the transforms and a token's anchor
 * flags and scale codes.  Internal to codec/wze/. */
#ifndef WZC_WZE_ENC_H
#define WZC_WZE_ENC_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "codec/profile/scale_code.h"
#include "codec/wze/wze.h"

/* One component's symbol at a code: the table index jt (class - WZE_JLO),
 * the symbol, the low bits and how many. */
typedef struct {
	int coded, jt, sym, b;
	uint32_t lo;
} wze_sym;

/* What a component's quantizer rounds: its value over its step (0 for a
 * value that is not finite). */
static inline double wze_ratio(float y, float step)
{
	return isfinite(y) ? (double)y / step : 0;
}

/* t rounded to the nearest integer (halves up), clamped to +-K. */
static inline __attribute__((always_inline)) int wze_round_index(double t, int K)
{
	double r = floor(t + 0.5);
	return r < -K ? -K : r > K ? K : (int)r;
}

/* Of the two reconstruction points around t (rc: a table's, from its
 * centre; q: t rounded and clamped to +-K), the index of the nearer:
 * flags, not branches, as the way goes with the value. */
static inline __attribute__((always_inline)) int wze_nearer(const float *rc, int K, int q, double t)
{
	float r1 = rc[q];
	int q2 = q + 1 - 2 * (t < r1);
	int in = (q2 >= -K) & (q2 <= K); /* the second read only inside the table */
	float r2 = rc[in ? q2 : q];
	int nearer = in & (fabs(t - r2) < fabs(t - r1));
	return q + nearer * (q2 - q);
}

/* The symbol of a component of table set `set` in class j (wze_class,
 * at most WZE_JHI) whose value over its step is t. */
static inline __attribute__((always_inline)) wze_sym
wze_quantize_ratio(const wzc_wze_layer *ly, int set, int j, double t)
{
	wze_sym o = { 1, 0, 0, 0, 0 };
	o.b = wze_low_bits(j);
	o.jt = j + 16 * o.b - WZE_JLO;
	int c = set * WZE_NCLASS + o.jt, K = ly->tab_k[c];
	if (o.b == 0) {
		o.sym = wze_nearer(ly->recon + ly->rec_off[c] + K, K, wze_round_index(t, K), t) + K;
		return o;
	}
	/* (K + 1) 2^b, exact in a double (K <= 4096, b <= WZE_MAXLOW) */
	double lim = (double)(((int64_t)K + 1) << o.b);
	double r = floor(t + 0.5);
	r = r < -lim ? -lim : r > lim ? lim : r;
	int64_t q = (int64_t)r, half = (int64_t)1 << (o.b - 1), one = (int64_t)1 << o.b;
	/* v = hi 2^b + lo, hi rounded down (a division by 2^b, without one) */
	int64_t v = q + half, hi = v >= 0 ? v >> o.b : -((-v + one - 1) >> o.b);
	int64_t lo = v - hi * one;
	if (hi > K) {
		hi = K;
		lo = one - 1;
	} else if (hi < -K) {
		hi = -K;
		lo = 0;
	}
	o.sym = (int)hi + K;
	o.lo = (uint32_t)lo;
	return o;
}

/* Component entry k of table set `set` (0 the latent, 1 or 2 the
 * position part: wze_core.h) at step code s, whose gain g = wze_gain(s)
 * the caller gives, its part's scale code c0. */
static inline wze_sym wze_quantize(const wzc_wze_layer *ly, int k, int set, int s, float g,
				   int c0, float y)
{
	wze_sym o = { 0, 0, 0, 0, 0 };
	if (ly->cls[k] == WZE_CLS_NEVER || !c0)
		return o;
	int j = wze_class(ly->cls[k], s, c0);
	if (j > WZE_JHI)
		return o;
	return wze_quantize_ratio(ly, set, j, wze_ratio(y, ly->cstep[k] * g));
}

/* The coefficient the decoder gives a symbol (wze_core.h's formula), at
 * gain g. */
static inline float wze_dequantize(const wzc_wze_layer *ly, int k, int set, float g, wze_sym o)
{
	if (!o.coded)
		return 0;
	float step = ly->cstep[k] * g;
	int c = set * WZE_NCLASS + o.jt, K = ly->tab_k[c];
	if (o.b == 0)
		return ly->recon[ly->rec_off[c] + o.sym] * step;
	int64_t q = (int64_t)(o.sym - K) * ((int64_t)1 << o.b) + (int64_t)o.lo -
		    ((int64_t)1 << (o.b - 1));
	return (float)q * step;
}

/* The estimate's fixed part, 1/256 bits: the state's flush, the step
 * code and the scale codes (about 4 bits each). */
#define WZE_EST_FIXED ((32 + WZE_SBITS + 2 * 4) * 256)

/* A component's place: its table set and its entry in the per-component
 * arrays, for a record whose position part uses set pset. */
static inline void wze_place(int k, int R, int P, int pset, int *set, int *kk)
{
	*set = k >= R ? pset : 0;
	*kk = *set == 2 ? k + P : k;
}

/* A coded symbol's refinement (wze_core.h's rule): 0 where it is not
 * refinable (one of its table's outermost two symbols), else 1 with the
 * half of its cell y lies in (*h) and its refined value (*val). */
static inline int wze_refine(const wzc_wze_layer *ly, int kk, int set, float g, wze_sym o,
			     float y, int *h, float *val)
{
	int K = ly->tab_k[set * WZE_NCLASS + o.jt];
	if (o.b == 0 && !(o.sym > 0 && o.sym < 2 * K))
		return 0;
	float step = ly->cstep[kk] * g;
	float qv = o.b == 0 ? (float)(o.sym - K)
			    : (float)((int64_t)(o.sym - K) * ((int64_t)1 << o.b) + (int64_t)o.lo -
				      ((int64_t)1 << (o.b - 1)));
	double t = isfinite(y) ? (double)y / step : 0;
	*h = t >= qv;
	*val = (qv + (*h ? 0.25f : -0.25f)) * step;
	return 1;
}

/* The rANS encoder writing down from the end of buf. */
typedef struct {
	uint32_t x;
	uint8_t *buf, *ptr;
	int over;
} wze_enc;

static inline void wze_enc_put(wze_enc *e, uint32_t start, uint32_t freq)
{
	uint32_t xmax = ((WZE_RANS_L >> WZE_PROB_BITS) << 8) * freq;
	while (e->x >= xmax) {
		if (e->ptr == e->buf) {
			e->over = 1;
			return;
		}
		*--e->ptr = (uint8_t)(e->x & 0xff);
		e->x >>= 8;
	}
	e->x = ((e->x / freq) << WZE_PROB_BITS) + (e->x % freq) + start;
}

static inline void wze_enc_raw(wze_enc *e, uint32_t v, int c)
{
	wze_enc_put(e, v << (WZE_PROB_BITS - c), 1u << (WZE_PROB_BITS - c));
}

/* A scale code, zigzagged around 128, by wze_dec_eg's code (its parts in
 * reverse: the suffix's chunks last first, the one, the zeros). */
static inline void wze_enc_eg(wze_enc *e, int c)
{
	int d = c - 128;
	uint32_t u = (uint32_t)(d >= 0 ? 2 * d : -2 * d - 1) + (1u << WZE_EG_K);
	int n = 31 - __builtin_clz(u), z = n - WZE_EG_K;
	int nch = (n + WZE_RAW_CHUNK - 1) / WZE_RAW_CHUNK;
	for (int i = nch - 1; i >= 0; i--) {
		int left = n - WZE_RAW_CHUNK * i;
		int cw = left < WZE_RAW_CHUNK ? left : WZE_RAW_CHUNK;
		wze_enc_raw(e, (u >> (left - cw)) & ((1u << cw) - 1), cw);
	}
	wze_enc_raw(e, 1, 1);
	for (int i = 0; i < z; i++)
		wze_enc_raw(e, 0, 1);
}

/* One coded component, table set `set`: the low bits' chunks, last
 * decoded first (the decoder reads them from the most significant,
 * WZE_RAW_CHUNK bits each and the rest last), then the symbol. */
static inline void wze_enc_component(wze_enc *e, const wzc_wze_layer *ly, int set, wze_sym o)
{
	int nch = (o.b + WZE_RAW_CHUNK - 1) / WZE_RAW_CHUNK;
	for (int i = nch - 1; i >= 0; i--) {
		int left = o.b - WZE_RAW_CHUNK * i;
		int c = left < WZE_RAW_CHUNK ? left : WZE_RAW_CHUNK;
		wze_enc_raw(e, (o.lo >> (left - c)) & ((1u << c) - 1), c);
	}
	const uint32_t *cum = ly->cum + ly->tab_off[set * WZE_NCLASS + o.jt];
	wze_enc_put(e, cum[o.sym], cum[o.sym + 1] - cum[o.sym]);
}

/* What the decoder reads before the components, put after them: the
 * scale codes and the anchor flags (not for s = WZE_SMAX), the step code;
 * then the state.  Returns the stream's length at the end of e->buf (cap
 * bytes), or -1 when it does not fit. */
static inline long wze_enc_finish(wze_enc *e, int s, int flags, const uint8_t *code, size_t cap)
{
	if (s != WZE_SMAX) {
		wze_enc_eg(e, code[1]);
		wze_enc_eg(e, code[0]);
		for (int p = 1; p >= 0; p--) {
			uint32_t f0 = (1u << WZE_PROB_BITS) - WZE_FLAG_FREQ;
			if (flags & (1 << p))
				wze_enc_put(e, f0, WZE_FLAG_FREQ);
			else
				wze_enc_put(e, 0, f0);
		}
	}
	wze_enc_raw(e, (uint32_t)s & ((1u << (WZE_SBITS - 8)) - 1), WZE_SBITS - 8);
	wze_enc_raw(e, (uint32_t)s >> (WZE_SBITS - 8), 8);
	if (e->over || e->ptr - e->buf < 4)
		return -1;
	e->ptr -= 4;
	for (int i = 0; i < 4; i++)
		e->ptr[i] = (uint8_t)(e->x >> (8 * i));
	return (long)(e->buf + cap - e->ptr);
}

/* y = basis (x - mean), one part: eight partial sums of single
 * precision products a row (in vector lanes), added in pairs.  The same
 * operations in the same order at any vector width, so the fast path's
 * vectorised copy gives the same coefficients. */
static inline void wze_forward(const wzc_part_profile *pp, const float *x, float *y,
			       float *xc /* [n] scratch */)
{
	int n = pp->n;
	for (int i = 0; i < n; i++)
		xc[i] = x[i] - pp->mean[i];
	for (int k = 0; k < n; k++) {
		const float *b = pp->basis + (size_t)k * n;
		float s8[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
		int i = 0;
		for (; i + 8 <= n; i += 8)
			for (int j = 0; j < 8; j++)
				s8[j] += b[i + j] * xc[i + j];
		for (; i < n; i++)
			s8[i & 7] += b[i] * xc[i];
		y[k] = ((s8[0] + s8[1]) + (s8[2] + s8[3])) + ((s8[4] + s8[5]) + (s8[6] + s8[7]));
	}
}

/* x = mean + basis^T y, one part, in single precision, component by
 * component in order (components at zero skipped): the decoder's, which
 * the encoder runs too where it predicts.  Each output is the same chain
 * of products and sums in component order whatever the vector width. */
static inline void wze_inverse(const wzc_part_profile *pp, const float *y, float *x,
			       float *acc /* [n] scratch */)
{
	int n = pp->n;
	for (int i = 0; i < n; i++)
		acc[i] = 0;
	for (int k = 0; k < n; k++) {
		if (y[k] == 0)
			continue;
		const float *b = pp->basis + (size_t)k * n;
		float yk = y[k];
		for (int i = 0; i < n; i++)
			acc[i] += yk * b[i];
	}
	for (int i = 0; i < n; i++)
		x[i] = acc[i] + pp->mean[i];
}

/* One token's work: its coefficients y[R + P] as coded (the position
 * part's the residual's where it is predicted), the position part's
 * values xpos (coded domain) and scratch. */
typedef struct {
	const wzc_wze_plan *pl;
	const wzc_wze_layer *ly;
	int layer, flags, predicted;
	uint8_t code[2];
	float *y, *xpos, *r, *lhat;
	double *acc;
} wze_tok;

/* A token's anchor flags and scale codes, from the latent's coefficients
 * relative to its mean in t->y[0 .. R) and the position part's values
 * t->xpos: each part against the anchor where that leaves less weighted
 * energy to code; where the layer predicts, a latent against its anchor
 * (the attention sink) leaves its position part unpredicted, coded with
 * the plain part's statistics (set 2), and any other token's position
 * part is the residual, never against the anchor.  Leaves t->y as coded
 * before the step search (the position part's residual from the
 * prediction of the uncoded latent). */
static inline void wze_prepare_token(wze_tok *t)
{
	const wzc_wze_plan *pl = t->pl;
	const wzc_wze_layer *ly = t->ly;
	int R = pl->R, P = pl->P;
	float *y = t->y;
	t->flags = 0;
	for (int p = 0; p < 2; p++) {
		int k0 = p ? R : 0, k1 = p ? R + P : R;
		int off = p && ly->predicts && (t->flags & 1) ? P : 0; /* set 2's entries */
		if (p && ly->predicts && !(t->flags & 1)) {
			/* the residual from the prediction of the uncoded latent,
			 * for its scale */
			t->predicted = 1;
			for (int i = 0; i < P; i++)
				t->acc[i] = 0;
			for (int k = 0; k < R; k++) {
				const float *m = ly->mp + (size_t)k * P;
				for (int i = 0; i < P; i++)
					t->acc[i] += (double)y[k] * m[i];
			}
			for (int i = 0; i < P; i++)
				t->r[i] = (float)((double)t->xpos[i] - t->acc[i]);
			wze_forward(&pl->profile->rope[t->layer], t->r, y + R, (float *)t->acc);
		} else if (p) {
			t->predicted = 0;
			const wzc_part_profile *pp = ly->predicts ? &pl->profile->rope_plain[t->layer]
								  : &pl->profile->rope[t->layer];
			wze_forward(pp, t->xpos, y + R, (float *)t->acc);
		}
		if (!(p && t->predicted)) {
			double e0 = 0, e1 = 0;
			for (int k = k0; k < k1; k++) {
				double d = (double)y[k] - ly->delta[k + off];
				e0 += ly->wgt[k + off] * (double)y[k] * y[k];
				e1 += ly->wgt[k + off] * d * d;
			}
			if (e1 < e0) {
				t->flags |= 1 << p;
				for (int k = k0; k < k1; k++)
					y[k] -= ly->delta[k + off];
			}
		}
		/* the scale of what is coded, as wz codes it: the RMS of the
		 * part's coefficients; the tables' classes are relative to it */
		double ss = 0;
		for (int k = k0; k < k1; k++)
			ss += (double)y[k] * y[k];
		int sref = p == 0 ? 0 : off ? 2 : 1;
		t->code[p] = k1 > k0 ? wzc_scale_code(sqrt(ss / (k1 - k0)), ly->scale_ref[sref]) : 0;
	}
}

#endif
