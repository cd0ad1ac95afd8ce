/* The wze coder, CPU reference (docs/wze-format.md): each token's
 * coefficients on the profile's transform, quantized uniformly with
 * steps by the distortion weights, rANS-coded under the plan's tables at
 * the finest step code whose code fits the record; the decoder shares its
 * per-record body with the GPU (wze_core.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/profile/predict.h"
#include "codec/profile/scale_code.h"
#include "codec/wze/wze.h"

/* One component's symbol at a code: the table index jt (class - WZE_JLO),
 * the symbol, the low bits and how many. */
typedef struct {
	int coded, jt, sym, b;
	uint32_t lo;
} wze_sym;

/* Component entry k of table set `set` (0 the latent, 1 or 2 the
 * position part: wze_core.h) at step code s, its part's scale code c. */
static wze_sym quantize(const wzc_wze_layer *ly, int k, int set, int s, int c0, float y)
{
	wze_sym o = { 0, 0, 0, 0, 0 };
	if (ly->cls[k] == WZE_CLS_NEVER || !c0)
		return o;
	int j = wze_class(ly->cls[k], s, c0);
	if (j > WZE_JHI)
		return o;
	o.coded = 1;
	o.b = wze_low_bits(j);
	o.jt = j + 16 * o.b - WZE_JLO;
	int c = set * WZE_NCLASS + o.jt, K = ly->tab_k[c];
	float step = ly->cstep[k] * wze_gain(s);
	double t = isfinite(y) ? (double)y / step : 0;
	if (o.b == 0) {
		double r = floor(t + 0.5);
		int q = r < -K ? -K : r > K ? K : (int)r;
		/* the nearer of the two reconstruction points around t */
		const float *rc = ly->recon + ly->rec_off[c] + K;
		int q2 = t < rc[q] ? q - 1 : q + 1;
		if (q2 >= -K && q2 <= K && fabs(t - rc[q2]) < fabs(t - rc[q]))
			q = q2;
		o.sym = q + K;
		return o;
	}
	double lim = ldexp((double)K + 1, o.b);
	double r = floor(t + 0.5);
	r = r < -lim ? -lim : r > lim ? lim : r;
	int64_t q = (int64_t)r, half = (int64_t)1 << (o.b - 1), one = (int64_t)1 << o.b;
	int64_t v = q + half, hi = v >= 0 ? v / one : -((-v + one - 1) / one);
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

/* The coefficient the decoder gives a symbol (wze_core.h's formula). */
static float dequantize(const wzc_wze_layer *ly, int k, int set, int s, wze_sym o)
{
	if (!o.coded)
		return 0;
	float step = ly->cstep[k] * wze_gain(s);
	int c = set * WZE_NCLASS + o.jt, K = ly->tab_k[c];
	if (o.b == 0)
		return ly->recon[ly->rec_off[c] + o.sym] * step;
	int64_t q = (int64_t)(o.sym - K) * ((int64_t)1 << o.b) + (int64_t)o.lo -
		    ((int64_t)1 << (o.b - 1));
	return (float)q * step;
}

/* A component's place: its table set and its entry in the per-component
 * arrays, for a record whose position part uses set pset. */
static void place(int k, int R, int P, int pset, int *set, int *kk)
{
	*set = k >= R ? pset : 0;
	*kk = *set == 2 ? k + P : k;
}

/* The refinement bits of a token at code s (wze_core.h's rule): the
 * first WZE_NREF refinable coded components in order (a table symbol
 * other than the outermost two, or any class below the tables), each
 * the half of its cell its value lies in.  With lat, the latent's
 * coefficients among them set to their refined values, as the decoder
 * gives them (n = R: the latent alone). */
static uint32_t refinement(const wzc_wze_layer *ly, int n, int R, int P, int pset, int s,
			   const uint8_t *code, const float *y, float *lat)
{
	uint32_t v = 0;
	int nref = 0;
	for (int k = 0; k < n && nref < WZE_NREF; k++) {
		int set, kk;
		place(k, R, P, pset, &set, &kk);
		wze_sym o = quantize(ly, kk, set, s, code[k >= R], y[k]);
		if (!o.coded)
			continue;
		int K = ly->tab_k[set * WZE_NCLASS + o.jt];
		if (o.b == 0 && !(o.sym > 0 && o.sym < 2 * K))
			continue;
		float step = ly->cstep[kk] * wze_gain(s);
		float qv = o.b == 0 ? (float)(o.sym - K)
				    : (float)((int64_t)(o.sym - K) * ((int64_t)1 << o.b) + (int64_t)o.lo -
					      ((int64_t)1 << (o.b - 1)));
		double t = isfinite(y[k]) ? (double)y[k] / step : 0;
		int h = t >= qv;
		v |= (uint32_t)h << nref;
		if (lat && k < R)
			lat[k] = (qv + (h ? 0.25f : -0.25f)) * step;
		nref++;
	}
	return v;
}

/* The estimated code length of a token at code s, 1/256 bits: the
 * symbols' costs, the low bits, the step code and the state's flush. */
static uint64_t estimate(const wzc_wze_layer *ly, int n, int R, int P, int pset, int s,
			 const uint8_t *code, const float *y)
{
	uint64_t bits = (32 + WZE_SBITS + 2 * 4) * 256; /* the scale codes: about 4 bits each */
	for (int k = 0; k < n; k++) {
		int set, kk;
		place(k, R, P, pset, &set, &kk);
		wze_sym o = quantize(ly, kk, set, s, code[k >= R], y[k]);
		if (o.coded)
			bits += ly->cost[ly->rec_off[set * WZE_NCLASS + o.jt] + o.sym] +
				256u * (unsigned)o.b;
	}
	return bits;
}

/* The rANS encoder writing down from the end of buf. */
typedef struct {
	uint32_t x;
	uint8_t *buf, *ptr;
	int over;
} wze_enc;

static void enc_put(wze_enc *e, uint32_t start, uint32_t freq)
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

static void enc_raw(wze_enc *e, uint32_t v, int c)
{
	enc_put(e, v << (WZE_PROB_BITS - c), 1u << (WZE_PROB_BITS - c));
}

/* A scale code, zigzagged around 128, by wze_dec_eg's code (its parts in
 * reverse: the suffix's chunks last first, the one, the zeros). */
static void enc_eg(wze_enc *e, int c)
{
	int d = c - 128;
	uint32_t u = (uint32_t)(d >= 0 ? 2 * d : -2 * d - 1) + (1u << WZE_EG_K);
	int n = 31 - __builtin_clz(u), z = n - WZE_EG_K;
	int nch = (n + WZE_RAW_CHUNK - 1) / WZE_RAW_CHUNK;
	for (int i = nch - 1; i >= 0; i--) {
		int left = n - WZE_RAW_CHUNK * i;
		int cw = left < WZE_RAW_CHUNK ? left : WZE_RAW_CHUNK;
		enc_raw(e, (u >> (left - cw)) & ((1u << cw) - 1), cw);
	}
	enc_raw(e, 1, 1);
	for (int i = 0; i < z; i++)
		enc_raw(e, 0, 1);
}

/* The stream of a token at code s (WZE_SMAX: none) with the anchor flags,
 * into the last cap bytes of tmp; returns its length, or -1 when it does
 * not fit.  Symbols go in backwards: the decoder reads the step code, the
 * flags, then the components in order. */
static long encode_at(const wzc_wze_layer *ly, int n, int R, int P, int s, int flags,
		      const uint8_t *code, const float *y, uint8_t *tmp, size_t cap)
{
	int pset = ly->predicts && (flags & 1) ? 2 : 1;
	/* the refinement bits ride in the initial state */
	uint32_t v = s != WZE_SMAX ? refinement(ly, n, R, P, pset, s, code, y, NULL) : 0;
	wze_enc e = { WZE_RANS_L + v, tmp, tmp + cap, 0 };
	for (int k = n - 1; k >= 0 && !e.over && s != WZE_SMAX; k--) {
		int set, kk;
		place(k, R, P, pset, &set, &kk);
		wze_sym o = quantize(ly, kk, set, s, code[k >= R], y[k]);
		if (!o.coded)
			continue;
		/* the low bits' chunks, last decoded first: the decoder reads
		 * them from the most significant, WZE_RAW_CHUNK bits each and
		 * the rest last */
		int nch = (o.b + WZE_RAW_CHUNK - 1) / WZE_RAW_CHUNK;
		for (int i = nch - 1; i >= 0; i--) {
			int left = o.b - WZE_RAW_CHUNK * i;
			int c = left < WZE_RAW_CHUNK ? left : WZE_RAW_CHUNK;
			enc_raw(&e, (o.lo >> (left - c)) & ((1u << c) - 1), c);
		}
		const uint32_t *cum = ly->cum + ly->tab_off[set * WZE_NCLASS + o.jt];
		enc_put(&e, cum[o.sym], cum[o.sym + 1] - cum[o.sym]);
	}
	if (s != WZE_SMAX) {
		enc_eg(&e, code[1]);
		enc_eg(&e, code[0]);
	}
	if (s != WZE_SMAX)
		for (int p = 1; p >= 0; p--) {
			uint32_t f0 = (1u << WZE_PROB_BITS) - WZE_FLAG_FREQ;
			if (flags & (1 << p))
				enc_put(&e, f0, WZE_FLAG_FREQ);
			else
				enc_put(&e, 0, f0);
		}
	enc_raw(&e, (uint32_t)s & ((1u << (WZE_SBITS - 8)) - 1), WZE_SBITS - 8);
	enc_raw(&e, (uint32_t)s >> (WZE_SBITS - 8), 8);
	if (e.over || e.ptr - e.buf < 4)
		return -1;
	e.ptr -= 4;
	for (int i = 0; i < 4; i++)
		e.ptr[i] = (uint8_t)(e.x >> (8 * i));
	return (long)(tmp + cap - e.ptr);
}

/* y = basis (x - mean), one part: eight partial sums of single
 * precision products a row (in vector lanes), added in pairs; the encoder
 * alone runs it, so its rounding decides nothing the decoder must match. */
static void forward(const wzc_part_profile *pp, const float *x, float *y, double *scratch)
{
	int n = pp->n;
	float *xc = (float *)scratch; /* n floats fit in n doubles */
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
static void inverse(const wzc_part_profile *pp, const float *y, float *x, double *scratch)
{
	int n = pp->n;
	float *acc = (float *)scratch;
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
} tok;

/* A predicted token's position coefficients at step code s, from the
 * latent it would code there: the prediction through mp (the map through
 * the latent's basis) of the dequantized coefficients, subtracted from
 * the position part, then its basis.  What the search weighs; the
 * record's residual is then made exact (encode_token). */
static void residual_at(tok *t, int s)
{
	const wzc_wze_plan *pl = t->pl;
	const wzc_wze_layer *ly = t->ly;
	const wzc_part_profile *pp = &pl->profile->rope[t->layer];
	int R = pl->R, P = pl->P;
	for (int i = 0; i < P; i++)
		t->acc[i] = 0;
	for (int k = 0; k < R; k++) {
		float v = dequantize(ly, k, 0, s, quantize(ly, k, 0, s, t->code[0], t->y[k]));
		if (v == 0)
			continue;
		const float *m = ly->mp + (size_t)k * P;
		for (int i = 0; i < P; i++)
			t->acc[i] += (double)v * m[i];
	}
	for (int i = 0; i < P; i++)
		t->r[i] = (float)((double)t->xpos[i] - t->acc[i]);
	forward(pp, t->r, t->y + R, t->acc);
}

/* The residual as the decoder will see it at code s: the latent decoded
 * from the coefficients coded there, predicted by the shared step. */
static void residual_exact(tok *t, int s)
{
	const wzc_wze_plan *pl = t->pl;
	const wzc_wze_layer *ly = t->ly;
	const wzc_profile *pr = pl->profile;
	int R = pl->R, P = pl->P;
	for (int k = 0; k < R; k++)
		t->lhat[k] = dequantize(ly, k, 0, s, quantize(ly, k, 0, s, t->code[0], t->y[k]));
	refinement(ly, R, R, P, 1, s, t->code, t->y, t->lhat);
	float *coef = t->lhat + R; /* R more floats */
	memcpy(coef, t->lhat, sizeof(float) * (size_t)R);
	inverse(&pr->latent[t->layer], coef, t->lhat, t->acc);
	wzc_pred_token(pr->pred_map[t->layer], pr->latent[t->layer].mean, t->lhat, R, P, t->r);
	for (int i = 0; i < P; i++)
		t->r[i] = t->xpos[i] - t->r[i];
	forward(&pr->rope[t->layer], t->r, t->y + R, t->acc);
}

static uint64_t estimate_tok(tok *t, int s)
{
	const wzc_wze_plan *pl = t->pl;
	if (t->predicted)
		residual_at(t, s);
	return estimate(t->ly, pl->R + pl->P, pl->R, pl->P, 1 + (t->ly->predicts && (t->flags & 1)),
			s, t->code, t->y);
}

static long encode_tok(tok *t, int s, uint8_t *tmp, int exact)
{
	const wzc_wze_plan *pl = t->pl;
	if (t->predicted && s != WZE_SMAX)
		(exact ? residual_exact : residual_at)(t, s);
	return encode_at(t->ly, pl->R + pl->P, pl->R, pl->P, s, t->flags, t->code, t->y, tmp,
			 pl->record_bytes);
}

/* One token: t->y holds the latent's coefficients relative to its mean
 * and, unless it is predicted, the position part's. */
static void encode_token(tok *t, uint8_t *rec, uint8_t *tmp)
{
	const wzc_wze_plan *pl = t->pl;
	const wzc_wze_layer *ly = t->ly;
	int R = pl->R, P = pl->P;
	float *y = t->y;
	size_t cap = pl->record_bytes;
	t->flags = 0;
	/* each part against the anchor where that leaves less weighted energy
	 * to code; where the layer predicts, a latent against its anchor (the
	 * attention sink) leaves its position part unpredicted, coded with the
	 * plain part's statistics (set 2), and any other token's position
	 * part is the residual, never against the anchor */
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
			forward(&pl->profile->rope[t->layer], t->r, y + R, t->acc);
		} else if (p) {
			t->predicted = 0;
			const wzc_part_profile *pp = ly->predicts ? &pl->profile->rope_plain[t->layer]
								  : &pl->profile->rope[t->layer];
			forward(pp, t->xpos, y + R, t->acc);
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
	/* the finest code whose estimate fits, by bisection (the estimate
	 * falls as the step grows), then the exact length decides: up until
	 * it fits, then down while it still does */
	uint64_t target = (uint64_t)cap * 8 * 256;
	int lo = -1, hi = WZE_SMAX - 1;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (estimate_tok(t, mid) <= target)
			hi = mid;
		else
			lo = mid;
	}
	int s = hi;
	long len = encode_tok(t, s, tmp, 1);
	while (len < 0 && s < WZE_SMAX - 1)
		len = encode_tok(t, ++s, tmp, 1);
	for (int down = 0; len >= 0 && s > 0 && down < 4; down++) {
		if (encode_tok(t, s - 1, tmp, 1) < 0)
			break;
		s--;
	}
	if (len < 0)
		s = WZE_SMAX;
	len = encode_tok(t, s, tmp, 1);
	memset(rec, 0, cap);
	memcpy(rec, tmp + cap - len, (size_t)len);
}

int wzc_wze_record_code(const uint8_t *rec, size_t record_bytes)
{
	wze_dec d;
	wze_dec_init(&d, rec, (uint32_t)record_bytes);
	int s = (int)wze_dec_raw(&d, 8) << (WZE_SBITS - 8);
	return s | (int)wze_dec_raw(&d, WZE_SBITS - 8);
}

void wzc_wze_encode_layer(const wzc_wze_plan *pl, int layer, int n, const float *latent,
			  const float *rope, uint8_t *records)
{
	const wzc_profile *pr = pl->profile;
	const wzc_wze_layer *ly = &pl->layers[layer];
	int R = pl->R, P = pl->P, W = R > P ? R : P;
	tok t = { pl, ly, layer, 0, 0, { 0, 0 }, NULL, NULL, NULL, NULL, NULL };
	t.y = malloc(sizeof(float) * (size_t)(R + P));
	t.r = malloc(sizeof(float) * (size_t)P + 1);
	t.lhat = malloc(sizeof(float) * 2 * (size_t)R);
	t.acc = malloc(sizeof(double) * (size_t)W + 1);
	uint8_t *tmp = malloc(pl->record_bytes);
	for (int i = 0; i < n; i++) {
		uint8_t *rec = records + (size_t)i * pl->record_bytes;
		if (!t.y || !t.r || !t.lhat || !t.acc || !tmp || !ly->ready) {
			/* nothing to code with: the record of no coefficient */
			uint8_t *scratch = tmp ? tmp : rec;
			long len = encode_at(ly, 0, 0, 0, WZE_SMAX, 0, NULL, NULL, scratch,
					     pl->record_bytes);
			memmove(rec, scratch + pl->record_bytes - len, (size_t)len);
			memset(rec + len, 0, pl->record_bytes - (size_t)len);
			continue;
		}
		forward(&pr->latent[layer], latent + (size_t)i * R, t.y, t.acc);
		t.xpos = (float *)rope + (size_t)i * P;
		encode_token(&t, rec, tmp);
	}
	free(t.y);
	free(t.r);
	free(t.lhat);
	free(t.acc);
	free(tmp);
}

void wzc_wze_decode_token(const wzc_wze_plan *pl, int layer, const uint8_t *rec, float *latent,
			  float *rope, int transformed)
{
	const wzc_profile *pr = pl->profile;
	const wzc_wze_layer *ly = &pl->layers[layer];
	int R = pl->R, P = pl->P;
	float ybuf[1024], pbuf[256];
	double abuf[1024];
	float *y = R + P <= 1024 ? ybuf : malloc(sizeof(float) * (size_t)(R + P));
	double *acc = R + P <= 1024 ? abuf : malloc(sizeof(double) * (size_t)(R + P));
	float *pred = P <= 256 ? pbuf : malloc(sizeof(float) * (size_t)P);
	if (!y || !acc || !pred || !ly->ready) {
		memset(latent, 0, sizeof(float) * (size_t)R);
		memset(rope, 0, sizeof(float) * (size_t)P);
	} else {
		wze_layer_view v = wzc_wze_view(pl, layer);
		int flags = wze_decode_coeffs(&v, rec, (uint32_t)pl->record_bytes, y);
		int pset = wze_pos_set(&v, flags);
		if (transformed) {
			memcpy(latent, y, sizeof(float) * (size_t)R);
			memcpy(rope, y + R, sizeof(float) * (size_t)P);
		} else {
			inverse(&pr->latent[layer], y, latent, acc);
			if (P)
				inverse(pset == 2 ? &pr->rope_plain[layer] : &pr->rope[layer], y + R,
					rope, acc);
			/* a predicted position part: the residual plus the
			 * prediction from the decoded latent (the shared step) */
			if (P && ly->predicts && pset == 1 && !(flags & 4)) {
				wzc_pred_token(pr->pred_map[layer], pr->latent[layer].mean, latent, R,
					       P, pred);
				for (int i = 0; i < P; i++)
					rope[i] += pred[i];
			}
		}
	}
	if (y != ybuf)
		free(y);
	if (acc != abuf)
		free(acc);
	if (pred != pbuf)
		free(pred);
}

void wzc_wze_decode_layer(const wzc_wze_plan *pl, int layer, int n, const uint8_t *records,
			  float *latent, float *rope)
{
	for (int t = 0; t < n; t++)
		wzc_wze_decode_token(pl, layer, records + (size_t)t * pl->record_bytes,
				     latent + (size_t)t * pl->R, rope + (size_t)t * pl->P, 0);
}
