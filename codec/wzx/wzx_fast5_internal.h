/* What type 5's decoder shares between codec/wzx/wzx_fast5.c (encoder,
 * reference, portable loop, dispatch) and codec/wzx/wzx_fast5_x86.c (the AVX2
 * loop): a block's per-token scales and flags from its heads, and the
 * components of a single level, which no symbol codes. */
#ifndef WZC_WZX_FAST5_INTERNAL_H
#define WZC_WZX_FAST5_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx/wzx.h"
#include "codec/wz/wz_flat.h"
#include "codec/wzx/wzx_fast32_internal.h"

/* Type 5's part of the layer's tables (codec/wzx/legacy/wzx_fast32.c's build, once
 * t's slot arenas are filled): the coded places, the slot's symbol byte of
 * each of the ntab tables (seen[k] its cumulative frequencies; tab_of[j]
 * place j's table), and per symbol its frequency, start and level value
 * (tables of at most 256 symbols).  0, or -1 out of memory (what it
 * allocated is t's, freed with it). */
int wzc_wzx_fast5_build(fast32 *t, const uint32_t *const *seen, int ntab, const uint32_t *tab_of);

/* hd[j][k]: head place j of token k; sc[p][k] the token's scale of part p
 * (0 latent, 1 position), fm[p][k] -1 where its anchor flag is set. */
void wzc_wzx_fast5_heads(const fast32 *t, int n, const uint32_t (*hd)[WZC_WZX_BLOCK_TOKENS],
			 float (*sc)[WZC_WZX_BLOCK_TOKENS] /* OUT */,
			 int32_t (*fm)[WZC_WZX_BLOCK_TOKENS] /* OUT */);
/* The values of the single-level components of n tokens into their rows. */
void wzc_wzx_fast5_singles(const fast32 *t, int n, const float (*sc)[WZC_WZX_BLOCK_TOKENS],
			   const int32_t (*fm)[WZC_WZX_BLOCK_TOKENS], float *rows /* OUT */,
			   size_t stride);

/* The records plan of t's layer (codec/wzx/wzx_records5.c): t->rec5, left
 * NULL where a group is not contiguous or its count is out of its bits'
 * range, and the fused loop's, t->fused5; -1 out of memory. */
int wzc_wzx_rec5_build(fast32 *t, const wzc_wz_flat *f, size_t B);
void wzc_wzx_rec5_free(struct wzx_rec5 *p);

/* The loop from a block's payload straight to records (AVX2,
 * codec/wzx/wzx_records5_x86.c): each coded place's round adds its digit
 * times its place value into its piece's row of 32-bit sums (a row per
 * piece from its first place until its group is written), and once a
 * group and the groups before it have all their places, each token's
 * field is taken from the rows and written in its record. */
#define WZC_FUSED5_ROWS 32
typedef struct {
	const uint8_t *s2s;  /* the slot's symbol byte (not wide) */
	const uint32_t *e5;  /* per symbol f | c << 12 | s << 24 (not wide) */
	const uint32_t *fb;  /* per slot, t->fb's entries (wide) */
	const uint16_t *sym; /* per slot, the symbol (wide) */
	uint32_t pv;         /* the digit's place value in its piece (0 heads) */
	int32_t piece;
	int16_t row;         /* its piece's row, -1 heads */
	uint8_t first;       /* the piece's first place: the row is set, not added to */
	uint8_t wide;        /* over 256 symbols, or one of frequency 4096 */
	uint8_t hi4;         /* wide, at most 1280 symbols: the symbol's bits past 8 from thr */
	int32_t thr[4];      /* cum[256 h] - 1 (h = 1 .. 4; 4095 past the symbols): s >> 8 is the
				count of those below the slot */
	int32_t gend;        /* > 0: groups below gend are written after this place */
} wzx_fused5_place;
typedef struct wzx_fused5 {
	wzx_fused5_place *pl; /* [S5] */
	int nrows;
	int32_t *gpoff;       /* [ng + 1] the group's pieces in prow, most significant first */
	int16_t *prow;        /* their rows */
	uint64_t *ppm;        /* their levels in all (wzx_rec5's pm) */
	uint8_t *gsh;         /* [ng] the field's bit in its 64-bit word after the scale codes */
	int32_t *gwi;         /* [ng] that word */
	uint32_t nbits;       /* the fields' bits in all */
	uint32_t *e5;
} wzx_fused5;
void wzc_wzx_fused5_free(wzx_fused5 *f);

/* Type 6's tables of a layer (codec/wzx/wzx_lanes6.c): type 5's (t) and
 * each coded place's table, narrow or type 5's. */
#include "codec/wzx/wzx_rec6.h"
typedef struct fast6 {
	const fast32 *t;
	const uint32_t **cum;  /* [S5] coded place q's table (cum[cnt[q]] = 2^qb[q]) */
	uint32_t *cnt;         /* [S5] its symbols */
	uint32_t *e;           /* the narrow tables' slot entries (wzx_rec6) */
	const uint32_t **eq;   /* [S5] place q's in e, NULL where it has type 5's table */
	uint64_t *ev;          /* per slot of each narrow (table, level table): its entry, the level value's bits << 32 */
	const uint64_t **evq;  /* [S5] place q's in ev, NULL where it has type 5's table */
	wzx_rec6 r6;
} fast6;
const fast6 *wzc_wzx_fast6_layer(const wzc_wzx *x, int layer);

/* The reference to records of types 5 and 6 (codec/wzx/wzx_records5.c):
 * the block's symbols by dec (wzc_wzx_decode_lanes5_ref or _lanes6_ref, by
 * binary search; S4 a token), back to coding order, the records by the
 * division.  0, or -1 as dec. */
typedef int (*wzc_wzx_symbols_fn)(const wzc_wzx *x, int layer, int n, const uint8_t *payload, size_t size,
				  uint16_t *sym);
int wzc_wzx_records_ref(const wzc_wzx *x, int layer, int n, int S4, wzc_wzx_symbols_fn dec, const uint8_t *payload,
			size_t size, uint8_t *records /* OUT */);

#ifdef WZ_HAVE_AVX2_PATH
/* Type 6 by type 5's one-pass loop (its narrow places by one look-up a
 * lane); to records, or to the digits alone (dig[q * n + k], plain
 * loads).  0, or -1 as the reference. */
int wzc_wzx_fused6_avx2_records(const fast6 *s, int n, const uint8_t *payload, size_t size,
				uint8_t *records /* OUT */, int loads);
/* The same loop with plain loads, compiled with AVX-512F and AVX-512VL
 * (its renormalisation by vpexpandd): where wzc_wzx_fused6_vl_have. */
int wzc_wzx_fused6_vl_have(void);
int wzc_wzx_fused6_vl_records(const fast6 *s, int n, const uint8_t *payload, size_t size, uint8_t *records /* OUT */);
int wzc_wzx_fused6_vl_digits(const fast6 *s, int n, const uint8_t *payload, size_t size, uint16_t *dig /* OUT */);
int wzc_wzx_fused6_avx2_digits(const fast6 *s, int n, const uint8_t *payload, size_t size,
			       uint16_t *dig /* OUT */);
/* Type 6 to rows by type 5's AVX2 loop, its narrow places by one look-up
 * a lane and the level value by digit.  0, or -1 as the reference. */
int wzc_wzx_fast6_avx2_rows(const fast6 *s, int n, const uint8_t *payload, size_t size, float *rows /* OUT */,
			    size_t stride, int loads);
/* n (a multiple of 32) tokens to symbols (type 4's order) or to rows; loads: the look-ups by plain loads
 * (not vpgatherdd).  0, or -1 as the reference. */
int wzc_wzx_fast5_avx2_symbols(const fast32 *t, int n, const uint8_t *payload, size_t size,
			       uint16_t *sym /* OUT */, int loads);
int wzc_wzx_fast5_avx2_rows(const fast32 *t, int n, const uint8_t *payload, size_t size,
			    float *rows /* OUT */, size_t stride, int loads);
/* n (a multiple of 32) tokens to their digits in coding order, place by
 * place: dig[q * n + k] the symbol of coded place q (t->coded[q]) of
 * token k.  0, or -1 as the reference. */
int wzc_wzx_fast5_avx2_digits(const fast32 *t, int n, const uint8_t *payload, size_t size,
			      uint16_t *dig /* OUT [S5][n] */, int loads);
/* n (a multiple of 32) tokens straight to their records by the fused
 * loop (t->fused5 set; the processor has AVX2 and BMI2:
 * wzc_wzx_fused5_have); loads as above.  0, or -1 as the reference. */
int wzc_wzx_fused5_have(void);
int wzc_wzx_fused5_avx2_records(const fast32 *t, int n, const uint8_t *payload, size_t size,
				uint8_t *records /* OUT */, int loads);
#endif

#endif
