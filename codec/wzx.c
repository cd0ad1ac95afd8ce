/* The wzx block coder: static rANS tables per (layer, part, level count)
 * derived from the profile, wz records to symbols and back exactly, and
 * the choice of the wz grid for a wzx rate (docs/wzx-format.md). */
#include "codec/wzx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_internal.h"
#include "codec/levels.h"
#include "codec/wz_flat.h"
#include "codec/wz_plan.h"
#include "codec/wzx_internal.h"
#include "codec/wzx_rans.h"
#include "codec/wzx_token.h"

typedef struct {
	wzc_wz_flat *flat;
	wzc_rans_table *etab;              /* [nentries] the table of each coded component */
	uint32_t *cum[2][WZC_NSET];        /* histogram tables per (part, count index) */
	uint16_t *hint[2][WZC_NSET];       /* their decoder search hints */
	double bits;                       /* expected bits of one token's symbols */
} wzx_layer;

struct wzc_wzx {
	const wzc_codec *codec;
	wzc_codec *owned;
	const wzc_profile *profile;
	int L, R, P, scale_bytes;
	size_t B;
	uint64_t profile_hash;
	wzc_rans_table scale_tab;
	wzx_layer *layers;
	double expected_bits;
};

int wzc_wzx_layers(const wzc_wzx *x) { return x->L; }
int wzc_wzx_R(const wzc_wzx *x) { return x->R; }
int wzc_wzx_P(const wzc_wzx *x) { return x->P; }
uint64_t wzc_wzx_profile_hash(const wzc_wzx *x) { return x->profile_hash; }
const char *wzc_wzx_model(const wzc_wzx *x) { return x->profile->model; }
size_t wzc_wzx_record_bytes(const wzc_wzx *x) { return x->B; }
double wzc_wzx_expected_bits(const wzc_wzx *x) { return x->expected_bits; }

void wzc_wzx_free(wzc_wzx *x)
{
	if (!x)
		return;
	for (int l = 0; x->layers && l < x->L; l++) {
		wzx_layer *ly = &x->layers[l];
		wzc_wz_flat_free(ly->flat);
		free(ly->etab);
		for (int p = 0; p < 2; p++)
			for (int j = 0; j < WZC_NSET; j++) {
				free(ly->cum[p][j]);
				free(ly->hint[p][j]);
			}
	}
	free(x->layers);
	wzc_codec_free(x->owned);
	free(x);
}

/* The histogram's CDF at z, linear within bins (prefix[i] = mass below bin i). */
static double hist_cdf(const float *hist, const double *prefix, double z)
{
	double w = 2.0 * WZC_HIST_RANGE / WZC_HIST_BINS, u = (z + WZC_HIST_RANGE) / w;
	if (!(u > 0))
		return 0;
	if (u >= WZC_HIST_BINS)
		return prefix[WZC_HIST_BINS];
	int i = (int)u;
	return prefix[i] + (u - i) * hist[i];
}

static int count_index(uint32_t n)
{
	for (int j = 0; j < WZC_NSET; j++)
		if (wzc_level_count(j) == n)
			return j;
	return -1;
}

/* The table of count index j for part p, built once per layer; its
 * expected cost in *bits. */
static wz_err hist_table(wzx_layer *ly, const wzc_part_profile *pp, const double *prefix, int p,
			 int j, double *bits, wzc_rans_table *t, wz_diag *diag)
{
	uint32_t n = wzc_level_count(j);
	double *prob = malloc(sizeof *prob * n);
	float *lev = malloc(sizeof *lev * 2 * n);
	ly->cum[p][j] = malloc(sizeof(uint32_t) * (n + 1));
	uint32_t shift = wzc_rans_hint_shift(n);
	ly->hint[p][j] = malloc(sizeof(uint16_t) * (WZC_RANS_M >> shift));
	if (!prob || !lev || !ly->cum[p][j] || !ly->hint[p][j]) {
		free(prob);
		free(lev);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	wzc_levels_table(pp->hist, j, lev, lev + n);
	const float *thr = lev + n;
	double lo = 0, sum = 0;
	for (uint32_t d = 0; d < n; d++) {
		double hi = d + 1 < n ? hist_cdf(pp->hist, prefix, thr[d]) : prefix[WZC_HIST_BINS];
		prob[d] = hi > lo ? hi - lo : 0;
		sum += prob[d];
		lo = hi > lo ? hi : lo;
	}
	wzc_rans_quantize(prob, n, ly->cum[p][j]);
	*t = (wzc_rans_table){ n, 0, ly->cum[p][j], NULL, 0 };
	wzc_rans_hint(t, shift, ly->hint[p][j]);
	t->hint = ly->hint[p][j];
	t->hint_shift = shift;
	for (uint32_t d = 0; d < n; d++)
		prob[d] = sum > 0 ? prob[d] / sum : 1.0 / n;
	*bits = wzc_rans_cost_bits(t, prob);
	free(prob);
	free(lev);
	return WZ_OK;
}

static wzc_rans_table uniform(uint32_t n)
{
	return (wzc_rans_table){ n, WZC_RANS_M / n, NULL, NULL, 0 };
}

static double uniform_bits(uint32_t n)
{
	wzc_rans_table t = uniform(n);
	double bits = 0;
	for (uint32_t s = 0; s < n; s++) {
		uint32_t c, f;
		wzc_rans_sym(&t, s, &c, &f);
		bits += (WZC_RANS_BITS - log2((double)f)) / n;
	}
	return bits;
}

static wz_err build_layer(wzc_wzx *x, int l, wz_diag *diag)
{
	wzx_layer *ly = &x->layers[l];
	wz_err e = wzc_wz_flatten(x->codec, l, &ly->flat, diag);
	if (e)
		return e;
	const wzc_wz_flat *f = ly->flat;
	const wzc_part_profile *pp[2] = { &x->profile->latent[l], &x->profile->rope[l] };
	ly->etab = calloc((size_t)f->nentries + 1, sizeof *ly->etab);
	double *prefix = malloc(sizeof *prefix * (WZC_HIST_BINS + 1));
	if (!ly->etab || !prefix) {
		free(prefix);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	wzc_rans_table made[2][WZC_NSET];
	double cost[2][WZC_NSET];
	int have[2][WZC_NSET] = { { 0 } }, prefix_part = -1;
	ly->bits = 8.0 * x->scale_bytes;
	for (int i = 0; i < f->nentries; i++) {
		uint32_t n = f->nlev[i];
		int p = f->part[i], j = count_index(n);
		if (f->comp[i] >= f->nv || n > WZC_RANS_MAX_TABLE || j < 0 || p < 0 || p > 1) {
			/* anchor flags and very large counts: uniform */
			ly->etab[i] = uniform(n);
			ly->bits += uniform_bits(n);
			continue;
		}
		if (!have[p][j]) {
			if (prefix_part != p) {
				prefix[0] = 0;
				for (int b = 0; b < WZC_HIST_BINS; b++)
					prefix[b + 1] = prefix[b] + pp[p]->hist[b];
				prefix_part = p;
			}
			e = hist_table(ly, pp[p], prefix, p, j, &cost[p][j], &made[p][j], diag);
			if (e) {
				free(prefix);
				return e;
			}
			have[p][j] = 1;
		}
		ly->etab[i] = made[p][j];
		ly->bits += cost[p][j];
	}
	free(prefix);
	return WZ_OK;
}

static uint64_t profile_hash(const wzc_profile *p, wz_diag *diag, wz_err *err)
{
	uint8_t *b;
	size_t n;
	*err = wzc_profile_serialize(p, &b, &n, diag);
	if (*err)
		return 0;
	uint64_t h = n >= 8 ? wzx_get64(b + n - 8) : 0;
	free(b);
	return h;
}

/* need_hash 0: a coder only for its estimate (the grid search), which skips
 * serializing the whole profile to hash it. */
static wz_err of_codec(const wzc_codec *codec, int need_hash, wzc_wzx **out, wz_diag *diag)
{
	*out = NULL;
	if (!codec->wz)
		return wz_diag_set(diag, WZ_ERR_USAGE, "wzx needs a wz or wzx codec");
	wzc_wzx *x = calloc(1, sizeof *x);
	if (!x)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	x->codec = codec;
	x->profile = codec->wz->profile;
	x->L = codec->L;
	x->R = codec->R;
	x->P = codec->P;
	x->B = codec->record_bytes;
	x->scale_bytes = codec->P ? 2 : 1;
	x->scale_tab = uniform(256);
	wz_err e = WZ_OK;
	if (need_hash)
		x->profile_hash = profile_hash(x->profile, diag, &e);
	x->layers = e ? NULL : calloc((size_t)x->L, sizeof *x->layers);
	if (!e && !x->layers)
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	double bits = 0;
	for (int l = 0; !e && l < x->L; l++) {
		e = build_layer(x, l, diag);
		if (!e)
			bits += x->layers[l].bits;
	}
	if (e) {
		wzc_wzx_free(x);
		return e;
	}
	/* per token: symbols, plus the block and index overhead shared by 64 */
	double per_token = bits / x->L + 8.0 * (WZC_WZX_BLOCK_OVERHEAD + WZC_WZX_INDEX_ENTRY) /
						 WZC_WZX_BLOCK_TOKENS;
	x->expected_bits = per_token / (x->R + x->P);
	*out = x;
	return WZ_OK;
}

wz_err wzc_wzx_of_codec(const wzc_codec *codec, wzc_wzx **out, wz_diag *diag)
{
	return of_codec(codec, 1, out, diag);
}

static wz_err new_coder(const wzc_profile *p, size_t record_bytes, int need_hash, wzc_wzx **out,
			wz_diag *diag)
{
	*out = NULL;
	int nv = p->R + p->P;
	wzc_format fmt = { .id = WZC_FMT_WZ };
	fmt.rate_bits = (double)record_bytes * 8.0 / nv;
	snprintf(fmt.name, sizeof fmt.name, "wz-%.4f", fmt.rate_bits);
	wzc_codec *codec;
	wz_err e = wzc_codec_new(&fmt, p->L, p->R, p->P, p, &codec, diag);
	if (e)
		return e;
	if (wzc_codec_record_bytes(codec) != record_bytes) {
		wzc_codec_free(codec);
		return wz_diag_set(diag, WZ_ERR_INTERNAL, "wz grid of %zu bytes came out as %zu",
				   record_bytes, wzc_codec_record_bytes(codec));
	}
	e = of_codec(codec, need_hash, out, diag);
	if (e) {
		wzc_codec_free(codec);
		return e;
	}
	(*out)->owned = codec;
	return WZ_OK;
}

wz_err wzc_wzx_new(const wzc_profile *p, size_t record_bytes, wzc_wzx **out, wz_diag *diag)
{
	return new_coder(p, record_bytes, 1, out, diag);
}

wz_err wzc_wzx_grid_bytes(const wzc_profile *p, double bits, size_t *record_bytes, wz_diag *diag)
{
	int nv = p->R + p->P;
	long ok = (long)floor(bits * nv / 8.0 + 1e-9), bad = 2L * nv + 1;
	if (ok < (p->P ? 2 : 1))
		ok = p->P ? 2 : 1;
	/* bisection for the largest grid whose estimate fits */
	while (bad - ok > 1) {
		long mid = ok + (bad - ok) / 2;
		wzc_wzx *x;
		wz_err e = new_coder(p, (size_t)mid, 0, &x, diag);
		if (e)
			return e;
		if (wzc_wzx_expected_bits(x) <= bits)
			ok = mid;
		else
			bad = mid;
		wzc_wzx_free(x);
	}
	*record_bytes = (size_t)ok;
	return WZ_OK;
}

int wzc_wzx_encode_block(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			 uint8_t *out, size_t cap, size_t *size)
{
	const wzx_layer *ly = &x->layers[layer];
	const wzc_wz_flat *f = ly->flat;
	int ne = f->nentries, sb = x->scale_bytes, S = sb + ne;
	size_t raw = (size_t)n * x->B;
	uint32_t *sym = malloc(sizeof *sym * (size_t)S * n);
	uint8_t *tmp = malloc(raw + 4);
	int type = WZC_WZX_RAW;
	if (sym && tmp) {
		for (int t = 0; t < n; t++) {
			const uint8_t *rec = records + (size_t)t * x->B;
			for (int b = 0; b < sb; b++)
				sym[(size_t)t * S + b] = rec[b];
			wzc_wzx_digits(f, rec, sym + (size_t)t * S + sb);
		}
		wzc_rans_enc enc;
		wzc_rans_enc_init(&enc, tmp, raw + 4);
		for (int t = n - 1; t >= 0 && !enc.overflow; t--)
			for (int i = S - 1; i >= 0; i--)
				wzc_rans_put(&enc, i < sb ? &x->scale_tab : &ly->etab[i - sb],
					     sym[(size_t)t * S + i]);
		uint8_t *start = wzc_rans_enc_flush(&enc);
		size_t got = start ? (size_t)(tmp + raw + 4 - start) : raw;
		if (start && got < raw && got <= cap) {
			memcpy(out, start, got);
			*size = got;
			type = WZC_WZX_RANS;
		}
	}
	if (type == WZC_WZX_RAW) {
		memcpy(out, records, raw);
		*size = raw;
	}
	free(sym);
	free(tmp);
	return type;
}

int wzc_wzx_decode_block(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			 size_t size, uint8_t *records)
{
	const wzx_layer *ly = &x->layers[layer];
	const wzc_wz_flat *f = ly->flat;
	int ne = f->nentries, sb = x->scale_bytes;
	uint32_t *dig = malloc(sizeof *dig * ((size_t)ne + 1));
	if (!dig)
		return -1;
	wzc_rans_dec dec;
	wzc_rans_dec_init(&dec, payload, size);
	for (int t = 0; t < n && !dec.bad; t++) {
		uint8_t scales[2];
		for (int b = 0; b < sb; b++)
			scales[b] = (uint8_t)wzc_rans_get(&dec, &x->scale_tab);
		for (int i = 0; i < ne; i++)
			dig[i] = wzc_rans_get(&dec, &ly->etab[i]);
		wzc_wzx_record(f, x->B, scales, dig, records + (size_t)t * x->B);
	}
	free(dig);
	return wzc_rans_dec_done(&dec) ? 0 : -1;
}
