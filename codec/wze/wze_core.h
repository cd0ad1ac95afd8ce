/* The per-record steps of wze (docs/wze-format.md) that the CPU reference
 * and a GPU kernel share: the step of a component at a step code, its
 * table class, the byte-wise rANS decoder over a bounded record, and a
 * component's symbol and reconstruction. */
#ifndef WZC_WZE_CORE_H
#define WZC_WZE_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/formats/fpconv.h" /* WZ_HD */

/* Step codes: g(s) = 2^((s - WZE_S0) / 32), s in 0..WZE_SMAX - 1,
 * relative to the layer's weighted RMS; s = WZE_SMAX marks a record that
 * codes no coefficient.  The code is the stream's first WZE_SBITS bits. */
#define WZE_SBITS 10
#define WZE_SMAX ((1 << WZE_SBITS) - 1)
#define WZE_S0 768
/* Table classes: class j models cells of 2^(j/16) of a component's
 * standard deviation.  Classes above WZE_JHI are not coded (the component
 * decodes to its mean); classes below WZE_JLO code the index's high part
 * in class j + 16 b and b low bits uniformly. */
#define WZE_JLO (-64)
#define WZE_JHI 48
#define WZE_NCLASS (WZE_JHI - WZE_JLO + 1)
/* The finest class: finer ones (a step code no encoder picks, or a
 * damaged record) code as this one, with WZE_MAXLOW low bits. */
#define WZE_MAXLOW 24
#define WZE_JMIN (WZE_JLO - 16 * WZE_MAXLOW)
/* rANS: 32-bit state in [2^23, 2^31), byte renormalisation, frequencies
 * out of 2^16 (F. Giesen's rans_byte layout). */
#define WZE_PROB_BITS 16
#define WZE_RANS_L (1u << 23)
/* The anchor flags' frequencies out of 2^16: a part coded against the
 * anchor (the attention sink, one token a sequence) costs 16 bits, one
 * coded against the mean 2^-16 / ln 2 bits. */
#define WZE_FLAG_FREQ 1u
/* Refinement bits carried by the coder's initial state (docs/wze-format.md,
 * "Refinement"): the encoder starts at 2^23 + v, v < 2^WZE_NREF, which
 * costs at most log2(1.5) of a bit, and the decoder finds v in its state
 * after the last symbol: one bit for each of the first WZE_NREF
 * refinable components, the half of its cell it lies in. */
#define WZE_NREF 22
/* Low bits are coded in chunks of at most this many. */
#define WZE_RAW_CHUNK 8

/* 2^(e/32) as a float: 2^(i/32), i = e mod 32, an exact float constant
 * (hex literals: the same bits on every machine, no libm; a local table,
 * so that device code has it too), times an exact power of two. */
static inline WZ_HD float wze_pow2_32(int e)
{
	const float t[32] = {
		0x1.000000p+0f, 0x1.059b0ep+0f, 0x1.0b5586p+0f, 0x1.11301ep+0f,
		0x1.172b84p+0f, 0x1.1d4874p+0f, 0x1.2387a6p+0f, 0x1.29e9e0p+0f,
		0x1.306fe0p+0f, 0x1.371a74p+0f, 0x1.3dea64p+0f, 0x1.44e086p+0f,
		0x1.4bfdaep+0f, 0x1.5342b6p+0f, 0x1.5ab07ep+0f, 0x1.6247ecp+0f,
		0x1.6a09e6p+0f, 0x1.71f75ep+0f, 0x1.7a1148p+0f, 0x1.82589ap+0f,
		0x1.8ace54p+0f, 0x1.93737cp+0f, 0x1.9c4918p+0f, 0x1.a5503cp+0f,
		0x1.ae89fap+0f, 0x1.b7f770p+0f, 0x1.c199bep+0f, 0x1.cb720ep+0f,
		0x1.d5818ep+0f, 0x1.dfc974p+0f, 0x1.ea4afap+0f, 0x1.f50766p+0f,
	};
	int oct = e >= 0 ? e / 32 : -((-e + 31) / 32);
	float g = t[e - 32 * oct];
	for (; oct > 0; oct--)
		g *= 2.0f;
	for (; oct < 0; oct++)
		g *= 0.5f;
	return g;
}

/* g(s). */
static inline WZ_HD float wze_gain(int s)
{
	return wze_pow2_32(s - WZE_S0);
}

/* The table class (1/16 octaves) of a component whose class at code
 * WZE_S0 and scale code 128 is c32 (1/32 octaves), at code s and scale
 * code c (1/16 octaves): the nearest, halves up. */
static inline WZ_HD int wze_class(int c32, int s, int c)
{
	int j32 = c32 + (s - WZE_S0) + 2 * (128 - c);
	int j = j32 >= -1 ? (j32 + 1) / 2 : -((-j32) / 2);
	return j < WZE_JMIN ? WZE_JMIN : j;
}

/* The number of low bits b of a class j < WZE_JLO: the least b with
 * j + 16 b >= WZE_JLO. */
static inline WZ_HD int wze_low_bits(int j)
{
	return j >= WZE_JLO ? 0 : (WZE_JLO - j + 15) / 16;
}

/* The byte-wise rANS decoder over a record's payload: reads past its end
 * give 0, so a damaged record decodes to something, never out of bounds. */
typedef struct {
	uint32_t x;
	const uint8_t *p;
	uint32_t pos, len;
} wze_dec;

static inline WZ_HD uint32_t wze_byte(wze_dec *d)
{
	return d->pos < d->len ? d->p[d->pos++] : (d->pos++, 0u);
}

static inline WZ_HD void wze_dec_init(wze_dec *d, const uint8_t *payload, uint32_t len)
{
	d->p = payload;
	d->len = len;
	d->pos = 0;
	d->x = 0;
	for (int i = 0; i < 4; i++)
		d->x |= wze_byte(d) << (8 * i);
}

static inline WZ_HD void wze_dec_advance(wze_dec *d, uint32_t start, uint32_t freq, uint32_t slot)
{
	d->x = freq * (d->x >> WZE_PROB_BITS) + slot - start;
	/* a state from the encoder is at least 2^23, so the step leaves it at
	 * least 2^7 and two bytes bring it back; a damaged record's state
	 * can be anything, even 0, which no number of zero bytes raises:
	 * three reads at most */
	for (int i = 0; i < 3 && d->x < WZE_RANS_L; i++)
		d->x = (d->x << 8) | wze_byte(d);
}

/* The symbol s in lo .. hi - 1 with cum[s] <= slot < cum[s + 1], by
 * binary search (cum[lo] <= slot < cum[hi] on entry), and the state's
 * step past it: the reference's search over the whole table and the fast
 * path's over a bucket's range. */
static inline WZ_HD int wze_dec_search(wze_dec *d, const uint32_t *cum, uint32_t slot, int lo, int hi)
{
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if (cum[mid] <= slot)
			lo = mid;
		else
			hi = mid;
	}
	wze_dec_advance(d, cum[lo], cum[lo + 1] - cum[lo], slot);
	return lo;
}

/* One symbol of a table: cum[0..n] (cum[0] = 0, cum[n] = 2^16) by binary
 * search of the state's slot. */
static inline WZ_HD int wze_dec_symbol(wze_dec *d, const uint32_t *cum, int n)
{
	return wze_dec_search(d, cum, d->x & ((1u << WZE_PROB_BITS) - 1), 0, n);
}

/* The slot table of a table, for a decoder that has one (the CPU's fast
 * path; docs/wze-format.md, "Speed"): the slot's top WZE_LUT_BITS bits
 * pick a bucket, lut[b] is the symbol holding the bucket's first slot and
 * lut[WZE_LUT_N] the last symbol, so the symbol lies in lut[b] ..
 * lut[b + 1]: most buckets hold one symbol boundary or none, and a
 * binary search over that range finds any other.  The same symbol as
 * wze_dec_symbol's, whose search is the reference. */
#define WZE_LUT_BITS 8
#define WZE_LUT_N (1 << WZE_LUT_BITS)
static inline WZ_HD int wze_dec_symbol_lut(wze_dec *d, const uint32_t *cum, const uint16_t *lut)
{
	uint32_t slot = d->x & ((1u << WZE_PROB_BITS) - 1);
	uint32_t b = slot >> (WZE_PROB_BITS - WZE_LUT_BITS);
	return wze_dec_search(d, cum, slot, lut[b], lut[b + 1] + 1);
}

/* b uniform bits (b <= WZE_RAW_CHUNK). */
static inline WZ_HD uint32_t wze_dec_raw(wze_dec *d, int b)
{
	uint32_t slot = d->x & ((1u << WZE_PROB_BITS) - 1);
	uint32_t v = slot >> (WZE_PROB_BITS - b);
	wze_dec_advance(d, v << (WZE_PROB_BITS - b), 1u << (WZE_PROB_BITS - b), slot);
	return v;
}

/* An Exp-Golomb code of order WZE_EG_K (the scale codes' deviation from
 * the reference, zigzagged): z zero bits, a one, then z + k bits of
 * u = value + 2^k below its top bit, most significant first.  At most 16
 * zeros are read (a damaged record), and the value is at most 255. */
#define WZE_EG_K 1
static inline WZ_HD int wze_dec_eg(wze_dec *d)
{
	int z = 0;
	while (z < 16 && wze_dec_raw(d, 1) == 0)
		z++;
	int n = z + WZE_EG_K;
	uint32_t r = 0;
	for (int left = n; left > 0; left -= WZE_RAW_CHUNK) {
		int c = left < WZE_RAW_CHUNK ? left : WZE_RAW_CHUNK;
		r = (r << c) | wze_dec_raw(d, c);
	}
	uint32_t v = ((1u << n) | r) - (1u << WZE_EG_K);
	return v > 255 ? 255 : (int)v;
}

/* A scale code from its zigzagged deviation from 128 (0, -1, 1, -2, ...
 * as 0, 1, 2, 3, ...), clamped to 0..255. */
static inline WZ_HD int wze_unzigzag_code(int zz)
{
	int d = zz & 1 ? -((zz + 1) / 2) : zz / 2;
	int c = 128 + d;
	return c < 0 ? 0 : c > 255 ? 255 : c;
}

/* One layer's tables as the decoder reads them (flat arrays, so that a
 * GPU copy is a few memcpys): per table set and class, the offset of its
 * cumulative frequencies and reconstruction points and its K (symbols
 * -K..K).  The sets: 0 the latent, 1 the position part, and in a layer
 * that predicts its position part (profile version 7) 1 is the residual
 * from the prediction and 2 the position part of a token whose latent is
 * coded against the anchor (not predicted).  Per component arrays hold
 * R + P entries, R + 2P where the layer predicts (set 2's last). */
typedef struct {
	const uint32_t *tab_off;  /* [3][WZE_NCLASS] into cum (entries 2K + 2 a table) */
	const uint32_t *rec_off;  /* [3][WZE_NCLASS] into recon (2K + 1 a table) */
	const uint16_t *tab_k;    /* [3][WZE_NCLASS] */
	const uint32_t *cum;
	const float *recon;       /* a symbol's point in cells: ~q, centroid of its cell */
	const float *cstep;       /* [n] the component's step at g = 1 */
	const int16_t *cls;       /* [n] its class at s = WZE_S0, 1/32 octaves
				   * (WZE_CLS_NEVER: never coded) */
	const float *delta;       /* [n] the anchor's coefficients, less the mean's */
	int R, P;
	int predicts;             /* 1: the layer predicts its position part */
} wze_layer_view;

/* The position part's table set of a record with these flags. */
static inline WZ_HD int wze_pos_set(const wze_layer_view *v, int flags)
{
	return v->predicts && (flags & 1) ? 2 : 1;
}

#define WZE_CLS_NEVER 30000

/* Decodes one record's coefficients y[R + P] (relative to the mean, the
 * anchor added where flagged; in a layer that predicts, the position
 * part's are the residual's unless the latent is coded against the
 * anchor) and returns its flags (bit 0 latent anchored, bit 1 position
 * part; bit 2 for a record that codes nothing): the shared body of the
 * CPU decoders and the GPU kernel.  bytes: the record's size.  lut: the
 * layer's slot tables (WZE_LUT_N + 1 entries a table, in the order of
 * tab_off), or NULL to find each symbol by binary search, as the
 * reference does; the two find the same symbols. */
static inline WZ_HD int wze_decode_coeffs_lut(const wze_layer_view *v, const uint16_t *lut,
					      const uint8_t *rec, uint32_t bytes, float *y)
{
	int n = v->R + v->P;
	wze_dec d;
	wze_dec_init(&d, rec, bytes);
	int s = (int)wze_dec_raw(&d, 8) << (WZE_SBITS - 8);
	s |= (int)wze_dec_raw(&d, WZE_SBITS - 8);
	if (s == WZE_SMAX) {
		for (int k = 0; k < n; k++)
			y[k] = 0;
		return 4;
	}
	const uint32_t flag_cum[3] = { 0, (1u << WZE_PROB_BITS) - WZE_FLAG_FREQ,
				       1u << WZE_PROB_BITS };
	int flags = wze_dec_symbol(&d, flag_cum, 2);
	flags |= wze_dec_symbol(&d, flag_cum, 2) << 1;
	int code[2];
	code[0] = wze_unzigzag_code(wze_dec_eg(&d));
	code[1] = wze_unzigzag_code(wze_dec_eg(&d));
	float g = wze_gain(s);
	int pset = wze_pos_set(v, flags);
	int nref = 0, rk[WZE_NREF];
	float rq[WZE_NREF], rstep[WZE_NREF];
	for (int k = 0; k < n; k++) {
		int part = k >= v->R, set = part ? pset : 0;
		int kk = set == 2 ? k + v->P : k; /* the component's entry */
		float yk = 0;
		if (v->cls[kk] != WZE_CLS_NEVER && code[part] &&
		    wze_class(v->cls[kk], s, code[part]) <= WZE_JHI) {
			int j = wze_class(v->cls[kk], s, code[part]);
			int b = wze_low_bits(j), jt = j + 16 * b - WZE_JLO;
			int K = v->tab_k[set * WZE_NCLASS + jt];
			const uint32_t *cum = v->cum + v->tab_off[set * WZE_NCLASS + jt];
			int sym = lut ? wze_dec_symbol_lut(&d, cum,
							   lut + (size_t)(set * WZE_NCLASS + jt) *
									 (WZE_LUT_N + 1))
				      : wze_dec_symbol(&d, cum, 2 * K + 1);
			float step = v->cstep[kk] * g;
			if (b == 0) {
				yk = v->recon[v->rec_off[set * WZE_NCLASS + jt] + sym] * step;
				if (sym > 0 && sym < 2 * K && nref < WZE_NREF) {
					rk[nref] = k;
					rq[nref] = (float)(sym - K);
					rstep[nref++] = step;
				}
			} else {
				int64_t q = (int64_t)(sym - K);
				uint32_t lo = 0;
				for (int r = b; r > 0; r -= WZE_RAW_CHUNK) {
					int c = r < WZE_RAW_CHUNK ? r : WZE_RAW_CHUNK;
					lo = (lo << c) | wze_dec_raw(&d, c);
				}
				q = q * ((int64_t)1 << b) + (int64_t)lo - ((int64_t)1 << (b - 1));
				yk = (float)q * step;
				if (nref < WZE_NREF) {
					rk[nref] = k;
					rq[nref] = (float)q;
					rstep[nref++] = step;
				}
			}
		}
		if (flags & (1 << part))
			yk += v->delta[kk];
		y[k] = yk;
	}
	/* the refinement: the state after the last symbol is the encoder's
	 * first, 2^23 + v; bit i of v puts refinable component i at the
	 * centre of the upper (1) or lower (0) half of its cell */
	uint32_t bits = (d.x - WZE_RANS_L) & ((1u << WZE_NREF) - 1);
	for (int i = 0; i < nref; i++) {
		int k = rk[i], part = k >= v->R, kk = part && pset == 2 ? k + v->P : k;
		float yk = (rq[i] + ((bits >> i) & 1 ? 0.25f : -0.25f)) * rstep[i];
		if (flags & (1 << part))
			yk += v->delta[kk];
		y[k] = yk;
	}
	return flags;
}

/* The reference: each symbol by binary search (the GPU kernel's body). */
static inline WZ_HD int wze_decode_coeffs(const wze_layer_view *v, const uint8_t *rec,
					  uint32_t bytes, float *y)
{
	return wze_decode_coeffs_lut(v, NULL, rec, bytes, y);
}

#endif
