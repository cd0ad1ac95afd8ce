/* What the fast wz encoder's files share: codec/wz/wz_encode.c (a layer's
 * records: the transform, the levels, the groups' fields),
 * codec/wz/wz_encode_block.c (a block of tokens made ready for the
 * transform) and codec/wz/wz_encode_overload.c (steps 5 and 6 of
 * docs/wz-format.md, "Arithmetic": the overload raise and the searched
 * scale).  Each gives the reference's bytes (codec/wz/wz_codec.c). */
#ifndef WZC_WZ_ENCODE_INTERNAL_H
#define WZC_WZ_ENCODE_INTERNAL_H

#include <stdint.h>

#include "codec/wz/wz_gemm.h"
#include "codec/wz/wz_plan.h"

/* Vectorized at -O3; never contracted to fused multiply-adds (the sums of
 * squares decide the anchor flag and the scale code, and the reference
 * computes them with separate multiplies and adds). */
#if defined(__GNUC__) && !defined(__clang__)
#define WZ_HOT __attribute__((optimize("O3", "fp-contract=off")))
#if defined(__x86_64__) && defined(__GLIBC__)
#define WZ_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#else
#if defined(__clang__)
#pragma clang fp contract(off)
#endif
#define WZ_HOT
#endif
#ifndef WZ_CLONES
#define WZ_CLONES
#endif

#define BLOCK 64

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WZ_ENCODE_512 1
#endif

/* wz_encode_block.c: whether the encoder takes its AVX-512 paths; a
 * part's anchor flags, scale codes, reciprocal scales and scaled values;
 * its integers pair-major and in the dot form; and the reference's redo of
 * a token the lanes leave out. */
int wzc_wz_encode_avx512(void);
void wzc_wz_prepare_part(const float *scale_mult, const wzc_part_profile *pp, int can_flag, int m,
			 int nb, const float *x, int scaled, int avx512,
			 float *xt /* OUT [m][BLOCK] */, uint8_t *flag /* OUT [BLOCK] */,
			 uint8_t *code /* OUT [BLOCK] */, float *inv /* OUT [BLOCK] */);
void wzc_wz_quantize_inputs(int m, const float *xt, uint32_t *xp /* OUT */,
			    int *e /* OUT [BLOCK] */);
void wzc_wz_quantize_rows(int m, int nb, const float *x, const float *mean, const float *anchor,
			  const uint8_t *flag, const float *inv, int kpad,
			  uint32_t *xd /* OUT [nb][kpad] */, int *e /* OUT [nb] */);
void wzc_wz_redo_row(int m, const float *row, const float *base, float s, float *col /* [m] */,
		     int16_t *xq /* [m + 1] */, uint32_t *dst, int *e);
void wzc_wz_redo_token(int m, const float *xt, int t, float *col /* [m] */,
		       int16_t *xq /* [m + 1] */, uint32_t *xp, int *e);

/* Scratch of wzc_wz_overload_raise_fast for a part of up to m coded components. */
typedef struct {
	float *zr;      /* [m] */
	uint32_t *q;    /* [5][m]: each candidate's digits */
	double *terms;  /* [5][m] */
} overload_work;

/* wz_encode_overload.c: step 5's raise for a part past a table's outer
 * bound, with the chosen candidate's digits. */
int wzc_wz_overload_raise_fast(const layer_plan *lp, int part, int j0, int nc, const float *z,
			       const float *mult, int c0, overload_work *ow,
			       const uint32_t **digits /* OUT */);

/* Step 6's search over a part's scale codes (wzc_search_descent): the
 * part, and the digits of the last SEARCH_KEEP codes tried. */
#define SEARCH_KEEP 4
typedef struct {
	const layer_plan *lp;
	wzc_qbatch b;        /* the part's slice of the plan's grids */
	int j0, nc, c0;
	const float *z, *mult;
	float *zr;           /* scratch [nc] */
	uint32_t *q[SEARCH_KEEP]; /* [nc] each: the digits of the codes tried */
	int code[SEARCH_KEEP], tried;
} search_ctx;

/* wz_encode_overload.c: step 6's cost at one code (ctx a search_ctx), and
 * the kept digits of code c (NULL when gone). */
double wzc_wz_search_cost(void *ctx, int code);
const uint32_t *wzc_wz_search_digits(const search_ctx *x, int c);

#endif
