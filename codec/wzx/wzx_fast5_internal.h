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
 * range; -1 out of memory. */
int wzc_wzx_rec5_build(fast32 *t, const wzc_wz_flat *f, size_t B);
void wzc_wzx_rec5_free(struct wzx_rec5 *p);

#ifdef WZ_HAVE_AVX2_PATH
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
/* The records of n tokens from such digits (AVX2: four tokens' group
 * values a vector), for a plan of at most WZC_REC5_AVX2_GROUPS groups. */
#define WZC_REC5_AVX2_GROUPS 128
void wzc_wzx_rec5_avx2_records(const fast32 *t, int n, const uint16_t *dig, uint8_t *records /* OUT */);
#endif

#endif
