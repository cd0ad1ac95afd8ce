/* What type 4's decoder shares between codec/wzx/legacy/wzx_fast32.c (tables,
 * encoder, reference, portable loop, path dispatch) and
 * codec/wzx/legacy/wzx_fast32_x86.c (the AVX-512 and AVX2 loops): the layer's decoder
 * tables, the rows a fused decode writes, and the checked tail every loop
 * ends in. */
#ifndef WZC_WZX_FAST32_INTERNAL_H
#define WZC_WZX_FAST32_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_lanes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define WZ_HAVE_AVX512_PATH 1
#define WZ_HAVE_AVX2_PATH 1
#endif

#define SLOTS WZC_RANS12_M
#define K4 WZC_LANES4

typedef struct {
	int S, H, sb, nv, P;
	int32_t *src;          /* [S] scale byte j (j < sb), else the entry coded there, -1 single level */
	const uint32_t **cum;  /* [S] the place's 12-bit table */
	uint32_t *cnt;         /* [S] its symbols */
	uint32_t *fb;          /* [ntab * 4096] (s & 255) << 24 | (f - 1) << 12 | (slot - c) */
	float *val;            /* [ntab * 4096] the level value of the slot's symbol (1 single, 0 heads) */
	uint16_t *sym;         /* [ntab * 4096 + 2] the symbol */
	float *lv;             /* the plan's level tables, then 1 (single levels), then 256 zeros (heads) */
	int32_t *lvbase;       /* [S + K4] where place j's level table starts in lv */
	uint32_t *off;         /* [S + K4] arena offset of place j's table, j mod S */
	uint8_t *wide;         /* [S] a round from place j meets a table of over 256 symbols */
	uint8_t *huge;         /* [S] 1: a count over 4096, which only type 6 codes (by its
				  16-bit table); the place's 12-bit tables here are a
				  one-symbol stand-in that no type 4 or 5 decoder reads */
	float *sigma, *delta;  /* [S + K4] the component's sigma (a single level's level x sigma), delta */
	uint8_t *rope;         /* [S + K4] 0xff for a position component */
	int flag_place[2];     /* place of the latent and position anchor flags, -1 none */
	uint8_t *s2s;          /* [ntab * 4096 + 4] the slot's symbol (tables of at most 256 symbols) */
	uint64_t *stab;        /* per table of at most 256 symbols, per symbol: f | c << 16, the level value's bits << 32 */
	uint32_t *soff;        /* [S] where place j's table starts in stab (tables of over 256 symbols: 0) */
	int S5;                /* type 5: the coded places, heads then components of over one level */
	int32_t *coded;        /* [S5] their places */
	const float *scale_mult;
	float scale_ref[2];
	/* type 5 to records (codec/wzx/wzx_records5.c), NULL where the
	 * layer's groups do not allow it (its blocks then go through the
	 * reference's steps) */
	struct wzx_rec5 *rec5;
	struct wzx_fused5 *fused5; /* the fused loop's plan (codec/wzx/wzx_fast5_internal.h), or NULL */
} fast32;

/* The layer's tables (built on first use), NULL when out of memory or the
 * layer has no 12-bit tables; type 5 (codec/wzx/wzx_fast5.c) shares them. */
const fast32 *wzc_wzx_fast32_layer(const wzc_wzx *x, int layer);
/* The same for type 6 (codec/wzx/wzx_lanes6.c), also where the layer has
 * counts over 4096 (up to 2^16: those places marked huge). */
const fast32 *wzc_wzx_fast32_layer6(const wzc_wzx *x, int layer);

/* Codes a block of n records as type 4 (place_major 0: each token's
 * symbols in output order) or type 5 (1: the coded places' digits place
 * by place); the payload's bytes, or 0 when it does not fit in cap. */
size_t wzc_wzx_encode_lanes32(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			      int place_major, uint8_t *out, size_t cap);

/* The rows by the reference (types 4 and 5): the block's symbols by
 * `decode_ref`, back to coding order, then the wz decoder's steps; 0, or
 * what `decode_ref` returned (-1 as well when out of memory). */
typedef int (*wzc_lanes_ref_fn)(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
				size_t size, uint16_t *sym);
int wzc_wzx_lanes_ref_rows(const wzc_wzx *x, int layer, wzc_lanes_ref_fn decode_ref, int n,
			   const uint8_t *payload, size_t size, float *rows, size_t stride);

/* Where the rows of a fused decode stand: the token's row, its scales and
 * anchor flags as the heads of its places are decoded. */
typedef struct {
	float *row;
	size_t stride;
	uint32_t head[4];
	float s[2];
	int flag[2];
} rows_state;

static inline void read_states(const uint8_t *payload, uint32_t *x)
{
	for (int k = 0; k < K4; k++) {
		const uint8_t *q = payload + 4 * k;
		x[k] = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
	}
}

/* Place j of the current token decoded to symbol s with level value v. */
static inline void put_value(const fast32 *t, rows_state *r, int j, uint32_t s, float v)
{
	if (j < t->H) {
		r->head[j] = s;
		if (j == t->H - 1) {
			r->s[0] = t->scale_mult[r->head[0]] * t->scale_ref[0];
			r->s[1] = t->P ? t->scale_mult[r->head[1]] * t->scale_ref[1] : 0.0f;
			for (int p = 0; p < 2; p++)
				r->flag[p] = t->flag_place[p] >= 0 && r->head[t->flag_place[p]];
		}
		return;
	}
	int p = t->rope[j] & 1;
	float y = v * t->sigma[j] * r->s[p];
	r->row[j - t->H] = r->flag[p] ? y + t->delta[j] : y;
}

/* The last symbols one at a time with every read checked, then the end
 * check; sym or rows (the other NULL). */
int wzc_wzx_fast32_tail(const fast32 *t, uint32_t *x, long i, long N, int j, const uint8_t *p,
			const uint8_t *end, uint16_t *sym, rows_state *r);

/* The x86 loops (codec/wzx/legacy/wzx_fast32_x86.c): N symbols (n tokens of S) to
 * sym, or fused to the rows of r; 0, or -1 as the reference. */
#ifdef WZ_HAVE_AVX512_PATH
int wzc_wzx_fast32_avx512_symbols(const fast32 *t, long N, const uint8_t *payload, size_t size,
				  uint16_t *sym);
int wzc_wzx_fast32_avx512_rows(const fast32 *t, long N, const uint8_t *payload, size_t size,
			       rows_state *r);
#endif
#ifdef WZ_HAVE_AVX2_PATH
int wzc_wzx_fast32_avx2_symbols(const fast32 *t, long N, const uint8_t *payload, size_t size,
				uint16_t *sym);
int wzc_wzx_fast32_avx2_rows(const fast32 *t, long N, const uint8_t *payload, size_t size,
			     rows_state *r);
/* the same loop with its table look-ups by plain loads, not vpgatherdd */
int wzc_wzx_fast32_avx2_loads_symbols(const fast32 *t, long N, const uint8_t *payload, size_t size,
				      uint16_t *sym);
int wzc_wzx_fast32_avx2_loads_rows(const fast32 *t, long N, const uint8_t *payload, size_t size,
				   rows_state *r);
#endif

#endif
