/* Symbols to the transformed domain attention reads, through a per-layer
 * table built once, in output order: for every component the place of its
 * symbol within a token, its level table (shared by the entries of one
 * part and count, so all of them stay in L1), its sigma and its part, and
 * the places of the two anchor flags.  A token is then a straight loop
 * over its components (eight at a time with AVX2 gathers where the
 * processor has them) in the wz decoder's order of operations, so the
 * values are the same bit for bit; the general loop (the decoder's own
 * steps) is the reference, and serves plans the table cannot describe. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define WZ_HAVE_AVX2_PATH 1
#endif

#include "codec/hot.h"
#include "codec/wz/wz_flat.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_internal.h"

typedef struct {
	int nv;
	int32_t *sym_of; /* [nv] the component's symbol within a token (0 for a single level) */
	int32_t *tab;    /* [nv] its level table in the plan's tables[] */
	float *sigma;    /* [nv] */
	int32_t *part;   /* [nv] 0 latent scale, -1 position scale (a blend mask) */
	uint8_t *run8;   /* [nv / 8] 1 when components 8g .. 8g + 7 read consecutive symbols
			  * (one load then, no gather) */
	int flag_sym[2]; /* symbol of each anchor flag within a token, -1 if none */
} trans_table;

void wzc_wzx_transform_free_layer(wzx_layer *ly)
{
	trans_table *t = ly->trans;
	if (!t)
		return;
	free(t->sym_of);
	free(t->tab);
	free(t->sigma);
	free(t->part);
	free(t->run8);
	free(t);
	ly->trans = NULL;
}

static void table_free(trans_table *t)
{
	wzx_layer ly = { .trans = t };
	wzc_wzx_transform_free_layer(&ly);
}

/* NULL when out of memory; WZC_WZX_NO_TABLE when the entries and
 * single-level components do not write every component exactly once (the
 * general loop then). */
static trans_table *build(const wzc_wzx *x, const wzc_wz_flat *f)
{
	int nv = f->nv, none = 0; /* none: the general loop serves the plan */
	trans_table *t = calloc(1, sizeof *t);
	unsigned char *written = calloc((size_t)nv + 1, 1);
	if (!t || !written)
		goto fail;
	t->nv = nv;
	t->sym_of = calloc((size_t)nv + 1, sizeof *t->sym_of);
	t->tab = calloc((size_t)nv + 1, sizeof *t->tab);
	t->sigma = calloc((size_t)nv + 1, sizeof *t->sigma);
	t->part = calloc((size_t)nv + 1, sizeof *t->part);
	t->run8 = calloc((size_t)nv / 8 + 1, 1);
	if (!t->sym_of || !t->tab || !t->sigma || !t->part || !t->run8)
		goto fail;
	t->flag_sym[0] = t->flag_sym[1] = -1;
	for (int i = 0; i < f->nentries; i++) {
		int c = f->comp[i];
		if (c >= nv) {
			if ((none = c - nv > 1))
				goto fail;
			t->flag_sym[c - nv] = x->scale_bytes + i;
			continue;
		}
		if ((none = c < 0 || written[c]++ || f->tab[i] > INT32_MAX))
			goto fail;
		t->sym_of[c] = x->scale_bytes + i;
		t->tab[c] = (int32_t)f->tab[i];
		t->sigma[c] = f->sigma[i];
		t->part[c] = f->part[i] ? -1 : 0;
	}
	/* single levels are written after the loop; their slots read symbol 0
	 * of level table 0 (harmless, overwritten) */
	for (int i = 0; i < f->nones; i++)
		if ((none = f->ones[i] < 0 || f->ones[i] >= nv || written[f->ones[i]]++))
			goto fail;
	for (int k = 0; k < nv; k++)
		if ((none = written[k] != 1))
			goto fail;
	for (int g = 0; g < nv / 8; g++) {
		int run = 1;
		for (int i = 1; i < 8; i++)
			run &= t->sym_of[8 * g + i] == t->sym_of[8 * g] + i;
		t->run8[g] = (uint8_t)run;
	}
	free(written);
	return t;
fail:
	if (t)
		table_free(t);
	free(written);
	return none ? WZC_WZX_NO_TABLE : NULL;
}

static void *build_table(const wzc_wzx *x, const wzx_layer *ly)
{
	return build(x, ly->flat);
}

/* The layer's table, built on first use; NULL when out of memory or where
 * the general loop serves the plan. */
static const trans_table *layer_table(const wzc_wzx *cx, int layer)
{
	wzc_wzx *x = (wzc_wzx *)cx; /* the table is a cache, not the coder's state */
	wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly)
		return NULL;
	return wzc_wzx_layer_table(x, ly, &ly->trans_ready, &ly->trans, build_table);
}

/* The general loop (the decoder's own steps, any plan): one token's y and
 * flags, then the anchor where its flag says. */
static void token_general(const wzc_wzx *x, const wzc_wz_flat *f, const uint16_t *st, float *y,
			  float *lat, float *rope)
{
	int sb = x->scale_bytes, R = f->R, P = f->P, nv = f->nv;
	const uint16_t *dig = st + sb;
	float s[2] = { f->scale_mult[st[0]] * f->scale_ref[0],
		       P ? f->scale_mult[st[1]] * f->scale_ref[1] : 0.0f };
	uint32_t flags[2] = { 0, 0 };
	for (int i = 0; i < f->nones; i++) {
		int k = f->ones[i];
		y[k] = f->ones_lev[i] * f->ones_sigma[i] * s[k >= R];
	}
	for (int i = 0; i < f->nentries; i++) {
		int c = f->comp[i];
		if (c >= nv)
			flags[c - nv] = dig[i];
		else
			y[c] = f->tables[f->tab[i] + dig[i]] * f->sigma[i] * s[f->part[i]];
	}
	for (int k = 0; k < R; k++)
		lat[k] = flags[0] ? y[k] + f->delta[k] : y[k];
	for (int k = 0; k < P; k++)
		rope[k] = flags[1] ? y[R + k] + f->delta[R + k] : y[R + k];
}

/* What every path does after its components: single levels, anchors. */
static void token_finish(const trans_table *t, const wzc_wz_flat *f, const uint16_t *st,
			 const float *s, float *y)
{
	int R = f->R, P = f->P;
	for (int i = 0; i < f->nones; i++) {
		int k = f->ones[i];
		y[k] = f->ones_lev[i] * f->ones_sigma[i] * s[k >= R];
	}
	if (t->flag_sym[0] >= 0 && st[t->flag_sym[0]])
		for (int k = 0; k < R; k++)
			y[k] = y[k] + f->delta[k];
	if (t->flag_sym[1] >= 0 && st[t->flag_sym[1]])
		for (int k = R; k < R + P; k++)
			y[k] = y[k] + f->delta[k];
}

static void token_scales(const wzc_wz_flat *f, const uint16_t *st, float *s)
{
	s[0] = f->scale_mult[st[0]] * f->scale_ref[0];
	s[1] = f->P ? f->scale_mult[st[1]] * f->scale_ref[1] : 0.0f;
}

/* One token through the table into row y (R + P floats, latent first). */
WZ_HOT static void token_scalar(const trans_table *t, const wzc_wz_flat *f, const uint16_t *st,
				float *y)
{
	float s[2];
	token_scales(f, st, s);
	const float *lev = f->tables;
	for (int k = 0; k < t->nv; k++)
		y[k] = lev[t->tab[k] + st[t->sym_of[k]]] * t->sigma[k] * s[t->part[k] & 1];
	token_finish(t, f, st, s, y);
}

#ifdef WZ_HAVE_AVX2_PATH
/* The same, eight components at a time (gather_all: no single loads, for
 * the tests).  The symbol gather reads 32 bits at a 16-bit symbol, so the
 * token must not be the last of its buffer. */
__attribute__((target("avx2"))) static void token_avx2(const trans_table *t, const wzc_wz_flat *f,
						       const uint16_t *st, int gather_all, float *y)
{
	float s[2];
	token_scales(f, st, s);
	const __m256 s0 = _mm256_set1_ps(s[0]), s1 = _mm256_set1_ps(s[1]);
	const __m256i low16 = _mm256_set1_epi32(0xffff);
	const int *sy = (const int *)(const void *)st;
	int k = 0;
	for (; k + 8 <= t->nv; k += 8) {
		__m256i d;
		if (t->run8[k / 8] && !gather_all) {
			d = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(st + t->sym_of[k])));
		} else {
			__m256i at = _mm256_loadu_si256((const __m256i *)(const void *)(t->sym_of + k));
			d = _mm256_and_si256(_mm256_i32gather_epi32(sy, at, 2), low16);
		}
		__m256i idx = _mm256_add_epi32(d, _mm256_loadu_si256((const __m256i *)(const void *)(t->tab + k)));
		__m256 lev = _mm256_i32gather_ps(f->tables, idx, 4);
		__m256 part = _mm256_castsi256_ps(_mm256_loadu_si256((const __m256i *)(const void *)(t->part + k)));
		__m256 v = _mm256_mul_ps(_mm256_mul_ps(lev, _mm256_loadu_ps(t->sigma + k)),
					 _mm256_blendv_ps(s0, s1, part));
		_mm256_storeu_ps(y + k, v);
	}
	for (; k < t->nv; k++)
		y[k] = f->tables[t->tab[k] + st[t->sym_of[k]]] * t->sigma[k] * s[t->part[k] & 1];
	token_finish(t, f, st, s, y);
}
#endif

int wzc_wzx_transform_have(wzc_transform_path path)
{
	switch (path) {
	case WZC_TRANSFORM_REF:
	case WZC_TRANSFORM_SCALAR:
	case WZC_TRANSFORM_BEST: return 1;
	case WZC_TRANSFORM_AVX2:
	case WZC_TRANSFORM_AVX2_GATHER:
#ifdef WZ_HAVE_AVX2_PATH
		return __builtin_cpu_supports("avx2");
#else
		return 0;
#endif
	}
	return 0;
}

void wzc_wzx_symbols_rows_path(const wzc_wzx *x, int layer, wzc_transform_path path, int n,
			       const uint16_t *sym, float *rows, size_t stride)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly)
		return; /* out of memory: no symbol was decoded for it either */
	const wzc_wz_flat *f = ly->flat;
	const trans_table *t = path == WZC_TRANSFORM_REF ? NULL : layer_table(x, layer);
	int S = x->scale_bytes + f->nentries, R = f->R, P = f->P;
	if (path == WZC_TRANSFORM_BEST)
		path = wzc_wzx_transform_have(WZC_TRANSFORM_AVX2) ? WZC_TRANSFORM_AVX2
								   : WZC_TRANSFORM_SCALAR;
	int gather_all = path == WZC_TRANSFORM_AVX2_GATHER;
	if (gather_all)
		path = WZC_TRANSFORM_AVX2;
	if (path == WZC_TRANSFORM_AVX2 && !wzc_wzx_transform_have(WZC_TRANSFORM_AVX2))
		path = WZC_TRANSFORM_SCALAR;
	float ybuf[1024], *y = t || f->nv <= 1024 ? ybuf : malloc(sizeof *y * (size_t)f->nv);
	if (!y) {
		for (int k = 0; k < n; k++)
			memset(rows + (size_t)k * stride, 0, sizeof(float) * (size_t)(R + P));
		return;
	}
	for (int k = 0; k < n; k++) {
		float *row = rows + (size_t)k * stride;
		const uint16_t *st = sym + (size_t)k * S;
		if (!t)
			token_general(x, f, st, y, row, row + R);
#ifdef WZ_HAVE_AVX2_PATH
		else if (path == WZC_TRANSFORM_AVX2 && k + 1 < n)
			token_avx2(t, f, st, gather_all, row);
#endif
		else
			token_scalar(t, f, st, row);
	}
	if (y != ybuf)
		free(y);
}

void wzc_wzx_symbols_rows(const wzc_wzx *x, int layer, int n, const uint16_t *sym, float *rows,
			  size_t stride)
{
	wzc_wzx_symbols_rows_path(x, layer, WZC_TRANSFORM_BEST, n, sym, rows, stride);
}

void wzc_wzx_symbols_transformed(const wzc_wzx *x, int layer, int n, const uint16_t *sym,
				 float *y_latent, float *y_rope)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly)
		return; /* out of memory: no symbol was decoded for it either */
	int R = ly->flat->R, P = ly->flat->P;
	float rows[8 * 1024];
	if (R + P > 1024) { /* not a cache shape this project meets; the slow way */
		for (int k = 0; k < n; k++) {
			float *row = malloc(sizeof *row * (size_t)(R + P));
			if (!row) {
				memset(y_latent + (size_t)k * R, 0, sizeof(float) * R);
				memset(y_rope + (size_t)k * P, 0, sizeof(float) * P);
				continue;
			}
			wzc_wzx_symbols_rows(x, layer, 1, sym + (size_t)k * wzc_wzx_block_symbols(x, layer), row,
					     (size_t)(R + P));
			memcpy(y_latent + (size_t)k * R, row, sizeof(float) * R);
			memcpy(y_rope + (size_t)k * P, row + R, sizeof(float) * P);
			free(row);
		}
		return;
	}
	int per = 8 * 1024 / (R + P), S = wzc_wzx_block_symbols(x, layer);
	for (int k0 = 0; k0 < n; k0 += per) {
		int m = n - k0 < per ? n - k0 : per;
		wzc_wzx_symbols_rows(x, layer, m, sym + (size_t)k0 * S, rows, (size_t)(R + P));
		for (int k = 0; k < m; k++) {
			memcpy(y_latent + (size_t)(k0 + k) * R, rows + (size_t)k * (R + P), sizeof(float) * R);
			memcpy(y_rope + (size_t)(k0 + k) * P, rows + (size_t)k * (R + P) + R, sizeof(float) * P);
		}
	}
}
