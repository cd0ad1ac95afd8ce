/* The wze coder, CPU reference (docs/wze-format.md): each token's
 * coefficients on the profile's transform, quantized uniformly with
 * steps by the distortion weights, rANS-coded under the plan's tables at
 * the finest step code whose code fits the record; the decoder shares its
 * per-record body with the GPU (wze_core.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/profile/scale_code.h"
#include "codec/profile/scale_code.h"
#include "codec/wze/wze.h"

/* One component's symbol at a code: the table index jt (class - WZE_JLO),
 * the symbol, the low bits and how many. */
typedef struct {
	int coded, jt, sym, b;
	uint32_t lo;
} wze_sym;

static wze_sym quantize(const wzc_wze_layer *ly, int k, int part, int s, const uint8_t *code,
		       float y)
{
	wze_sym o = { 0, 0, 0, 0, 0 };
	if (ly->cls[k] == WZE_CLS_NEVER || !code[part])
		return o;
	int j = wze_class(ly->cls[k], s, code[part]);
	if (j > WZE_JHI)
		return o;
	o.coded = 1;
	o.b = wze_low_bits(j);
	o.jt = j + 16 * o.b - WZE_JLO;
	int c = part * WZE_NCLASS + o.jt, K = ly->tab_k[c];
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

/* The estimated code length of a token at code s, 1/256 bits: the
 * symbols' costs, the low bits, the step code and the state's flush. */
static uint64_t estimate(const wzc_wze_layer *ly, int n, int R, int s, const uint8_t *code,
			 const float *y)
{
	uint64_t bits = (32 + WZE_SBITS + 16) * 256;
	for (int k = 0; k < n; k++) {
		wze_sym o = quantize(ly, k, k >= R, s, code, y[k]);
		if (o.coded)
			bits += ly->cost[ly->rec_off[(k >= R) * WZE_NCLASS + o.jt] + o.sym] +
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

/* The stream of a token at code s (WZE_SMAX: none) with the anchor flags,
 * into the last cap bytes of tmp; returns its length, or -1 when it does
 * not fit.  Symbols go in backwards: the decoder reads the step code, the
 * flags, then the components in order. */
static long encode_at(const wzc_wze_layer *ly, int n, int R, int s, int flags,
		      const uint8_t *code, const float *y, uint8_t *tmp, size_t cap)
{
	wze_enc e = { WZE_RANS_L, tmp, tmp + cap, 0 };
	for (int k = n - 1; k >= 0 && !e.over && s != WZE_SMAX; k--) {
		int part = k >= R;
		wze_sym o = quantize(ly, k, part, s, code, y[k]);
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
		const uint32_t *cum = ly->cum + ly->tab_off[part * WZE_NCLASS + o.jt];
		enc_put(&e, cum[o.sym], cum[o.sym + 1] - cum[o.sym]);
	}
	if (s != WZE_SMAX) {
		enc_raw(&e, code[1], 8);
		enc_raw(&e, code[0], 8);
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

/* One token: y holds its coefficients relative to the mean. */
static void encode_token(const wzc_wze_plan *pl, const wzc_wze_layer *ly, float *y,
			 uint8_t *rec, uint8_t *tmp)
{
	int R = pl->R, n = pl->R + pl->P;
	size_t cap = pl->record_bytes;
	int flags = 0;
	uint8_t code[2];
	/* each part against the anchor where that leaves less weighted energy
	 * to code */
	for (int p = 0; p < 2; p++) {
		int k0 = p ? R : 0, k1 = p ? n : R;
		double e0 = 0, e1 = 0;
		for (int k = k0; k < k1; k++) {
			double d = (double)y[k] - ly->delta[k];
			e0 += ly->wgt[k] * (double)y[k] * y[k];
			e1 += ly->wgt[k] * d * d;
		}
		if (e1 < e0) {
			flags |= 1 << p;
			for (int k = k0; k < k1; k++)
				y[k] -= ly->delta[k];
		}
		/* the scale of what is coded, as wz codes it: the RMS of the
		 * part's coefficients; the tables' classes are relative to it */
		double ss = 0;
		for (int k = k0; k < k1; k++)
			ss += (double)y[k] * y[k];
		code[p] = k1 > k0 ? wzc_scale_code(sqrt(ss / (k1 - k0)), ly->scale_ref[p]) : 0;
	}
	/* the finest code whose estimate fits, by bisection (the estimate
	 * falls as the step grows), then the exact length decides: up until
	 * it fits, then down while it still does */
	uint64_t target = (uint64_t)cap * 8 * 256;
	int lo = -1, hi = WZE_SMAX - 1;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (estimate(ly, n, R, mid, code, y) <= target)
			hi = mid;
		else
			lo = mid;
	}
	int s = hi;
	long len = encode_at(ly, n, R, s, flags, code, y, tmp, cap);
	while (len < 0 && s < WZE_SMAX - 1)
		len = encode_at(ly, n, R, ++s, flags, code, y, tmp, cap);
	for (int down = 0; len >= 0 && s > 0 && down < 4; down++) {
		if (encode_at(ly, n, R, s - 1, flags, code, y, tmp, cap) < 0)
			break;
		s--;
	}
	if (len < 0)
		s = WZE_SMAX;
	len = encode_at(ly, n, R, s, flags, code, y, tmp, cap);
	memset(rec, 0, pl->record_bytes);
	memcpy(rec, tmp + cap - len, (size_t)len);
}

int wzc_wze_record_code(const uint8_t *rec, size_t record_bytes)
{
	wze_dec d;
	wze_dec_init(&d, rec, (uint32_t)record_bytes);
	int s = (int)wze_dec_raw(&d, 8) << (WZE_SBITS - 8);
	return s | (int)wze_dec_raw(&d, WZE_SBITS - 8);
}

/* y = basis (x - mean), one part. */
static void forward(const wzc_part_profile *pp, const float *x, float *y, double *xc)
{
	for (int i = 0; i < pp->n; i++)
		xc[i] = (double)x[i] - pp->mean[i];
	for (int k = 0; k < pp->n; k++) {
		const float *b = pp->basis + (size_t)k * pp->n;
		double s = 0;
		for (int i = 0; i < pp->n; i++)
			s += b[i] * xc[i];
		y[k] = (float)s;
	}
}

void wzc_wze_encode_layer(const wzc_wze_plan *pl, int layer, int n, const float *latent,
			  const float *rope, uint8_t *records)
{
	const wzc_profile *pr = pl->profile;
	const wzc_wze_layer *ly = &pl->layers[layer];
	int R = pl->R, P = pl->P;
	float *y = malloc(sizeof(float) * (size_t)(R + P));
	double *xc = malloc(sizeof(double) * (size_t)(R > P ? R : P) + 1);
	uint8_t *tmp = malloc(pl->record_bytes);
	for (int t = 0; t < n; t++) {
		uint8_t *rec = records + (size_t)t * pl->record_bytes;
		if (!y || !xc || !tmp || !ly->ready) { /* nothing to code with */
			uint8_t *scratch = tmp ? tmp : rec;
			long len = encode_at(ly, 0, 0, WZE_SMAX, 0, NULL, NULL, scratch, pl->record_bytes);
			memmove(rec, scratch + pl->record_bytes - len, (size_t)len);
			memset(rec + len, 0, pl->record_bytes - (size_t)len);
			continue;
		}
		forward(&pr->latent[layer], latent + (size_t)t * R, y, xc);
		if (P)
			forward(&pr->rope[layer], rope + (size_t)t * P, y + R, xc);
		encode_token(pl, ly, y, rec, tmp);
	}
	free(y);
	free(xc);
	free(tmp);
}

/* x = mean + basis^T y, one part (components at zero skipped). */
static void inverse(const wzc_part_profile *pp, const float *y, float *x, double *acc)
{
	for (int i = 0; i < pp->n; i++)
		acc[i] = 0;
	for (int k = 0; k < pp->n; k++) {
		if (y[k] == 0)
			continue;
		const float *b = pp->basis + (size_t)k * pp->n;
		for (int i = 0; i < pp->n; i++)
			acc[i] += (double)y[k] * b[i];
	}
	for (int i = 0; i < pp->n; i++)
		x[i] = (float)(acc[i] + pp->mean[i]);
}

void wzc_wze_decode_token(const wzc_wze_plan *pl, int layer, const uint8_t *rec, float *latent,
			  float *rope, int transformed)
{
	const wzc_profile *pr = pl->profile;
	int R = pl->R, P = pl->P;
	float ybuf[1024];
	double abuf[1024];
	float *y = R + P <= 1024 ? ybuf : malloc(sizeof(float) * (size_t)(R + P));
	double *acc = R + P <= 1024 ? abuf : malloc(sizeof(double) * (size_t)(R + P));
	if (!y || !acc || !pl->layers[layer].ready) {
		memset(latent, 0, sizeof(float) * (size_t)R);
		memset(rope, 0, sizeof(float) * (size_t)P);
	} else {
		wze_layer_view v = wzc_wze_view(pl, layer);
		wze_decode_coeffs(&v, rec, (uint32_t)pl->record_bytes, y);
		if (transformed) {
			memcpy(latent, y, sizeof(float) * (size_t)R);
			memcpy(rope, y + R, sizeof(float) * (size_t)P);
		} else {
			inverse(&pr->latent[layer], y, latent, acc);
			if (P)
				inverse(&pr->rope[layer], y + R, rope, acc);
		}
	}
	if (y != ybuf)
		free(y);
	if (acc != abuf)
		free(acc);
}

void wzc_wze_decode_layer(const wzc_wze_plan *pl, int layer, int n, const uint8_t *records,
			  float *latent, float *rope)
{
	for (int t = 0; t < n; t++)
		wzc_wze_decode_token(pl, layer, records + (size_t)t * pl->record_bytes,
				     latent + (size_t)t * pl->R, rope + (size_t)t * pl->P, 0);
}
