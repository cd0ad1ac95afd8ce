/* The wzx block coder: static rANS tables per (layer, part, level count)
 * derived from the profile, and wz records to symbols and back exactly
 * (docs/wzx-format.md); the wz grid for a wzx rate is chosen in
 * codec/wzx/wzx_grid.c. */
#include "codec/wzx/wzx.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_internal.h"
#include "codec/profile/levels.h"
#include "codec/profile/profile_cache.h"
#include "codec/wz/wz_flat.h"
#include "codec/wz/wz_plan.h"
#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_lanes.h"
#include "codec/wzx/wzx_rec6.h"
#include "codec/wzx/wzx_rans.h"
#include "codec/wzx/wzx_token.h"

int wzc_wzx_layers(const wzc_wzx *x) { return x->L; }
int wzc_wzx_R(const wzc_wzx *x) { return x->R; }
int wzc_wzx_P(const wzc_wzx *x) { return x->P; }
uint64_t wzc_wzx_profile_hash(const wzc_wzx *x) { return x->profile_hash; }
const char *wzc_wzx_model(const wzc_wzx *x) { return x->profile->model; }
size_t wzc_wzx_record_bytes(const wzc_wzx *x) { return x->B; }
const wzc_codec *wzc_wzx_codec(const wzc_wzx *x) { return x->codec; }
int wzc_wzx_layer_type3(const wzc_wzx *x, int layer)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	return ly ? ly->type3 : 0;
}

static void drop_layer(wzx_layer *ly);

void wzc_wzx_free(wzc_wzx *x)
{
	if (!x)
		return;
	for (int l = 0; x->layers && l < x->L; l++) {
		wzx_layer *ly = &x->layers[l];
		wzc_wzx_fast12_free_layer(ly);
		wzc_wzx_fast32_free_layer(ly);
		wzc_wzx_fast6_free_layer(ly);
		wzc_wzx_transform_free_layer(ly);
		wzc_wzx_fast_free_layer(ly);
		drop_layer(ly);
	}
	for (int l = 0; x->lock && l < x->L; l++)
		pthread_mutex_destroy(&x->lock[l]);
	free(x->ready);
	free(x->lock);
	wzc_wzx_fast_free(x);
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
static wz_err hist_table(wzx_layer *ly, const wzc_profile *pr, int l, const double *prefix, int p,
			 int j, double *bits, double *bits12, double *bits6, wzc_rans_table *t, wz_diag *diag)
{
	uint32_t n = wzc_level_count(j);
	double *prob = malloc(sizeof *prob * n);
	float *lev = malloc(sizeof *lev * 2 * n);
	ly->cum[p][j] = malloc(sizeof(uint32_t) * (n + 1));
	ly->cum12[p][j] = malloc(sizeof(uint32_t) * (n + 1));
	uint32_t shift = wzc_rans_hint_shift(n);
	ly->hint[p][j] = malloc(sizeof(uint16_t) * (WZC_RANS_M >> shift));
	if (n <= WZC_RANS6_MAXN)
		ly->cum6[p][j] = malloc(sizeof(uint32_t) * (n + 1));
	if (!prob || !lev || !ly->cum[p][j] || !ly->cum12[p][j] || !ly->hint[p][j] ||
	    (n <= WZC_RANS6_MAXN && !ly->cum6[p][j])) {
		free(prob);
		free(lev);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	const wzc_part_profile *pp = p ? &pr->rope[l] : &pr->latent[l];
	if (wzc_profile_levels_table(pr, l, p, j, lev, lev + n)) {
		free(prob);
		free(lev);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	const float *thr = lev + n;
	double lo = 0, sum = 0;
	for (uint32_t d = 0; d < n; d++) {
		double hi = d + 1 < n ? hist_cdf(pp->hist, prefix, thr[d]) : prefix[WZC_HIST_BINS];
		prob[d] = hi > lo ? hi - lo : 0;
		sum += prob[d];
		lo = hi > lo ? hi : lo;
	}
	wzc_rans_quantize(prob, n, ly->cum[p][j]);
	wzc_rans_quantize_m(prob, n, WZC_RANS12_M, ly->cum12[p][j]);
	if (n <= WZC_RANS6_MAXN)
		wzc_rans_quantize_m(prob, n, WZC_RANS6_M, ly->cum6[p][j]);
	*t = (wzc_rans_table){ n, 0, ly->cum[p][j], NULL, 0 };
	wzc_rans_hint(t, shift, ly->hint[p][j]);
	t->hint = ly->hint[p][j];
	t->hint_shift = shift;
	for (uint32_t d = 0; d < n; d++)
		prob[d] = sum > 0 ? prob[d] / sum : 1.0 / n;
	*bits = wzc_rans_cost_bits(t, prob);
	*bits12 = wzc_rans_cost_bits_m(ly->cum12[p][j], n, WZC_RANS12_BITS, prob);
	*bits6 = n <= WZC_RANS6_MAXN ? wzc_rans_cost_bits_m(ly->cum6[p][j], n, WZC_RANS6_BITS, prob) : *bits12;
	free(prob);
	free(lev);
	return WZ_OK;
}

static wzc_rans_table uniform(uint32_t n)
{
	return (wzc_rans_table){ n, WZC_RANS_M / n, NULL, NULL, 0 };
}

/* Bits of a uniform source under the 12-bit uniform table of n symbols. */
static double uniform_bits12(const uint32_t *cum, uint32_t n)
{
	double bits = 0;
	for (uint32_t s = 0; s < n; s++)
		bits += (WZC_RANS12_BITS - log2((double)(cum[s + 1] - cum[s]))) / n;
	return bits;
}

/* A uniform table of n symbols over M the layer owns (type 2's: f = M / n,
 * the last symbol the remainder); NULL when out of memory. */
static const uint32_t *uniform_m(wzx_layer *ly, uint32_t n, uint32_t M)
{
	uint32_t **more = realloc(ly->uni12, sizeof *more * ((size_t)ly->nuni12 + 1));
	if (!more)
		return NULL;
	ly->uni12 = more;
	uint32_t *cum = malloc(sizeof *cum * (n + 1));
	if (!cum)
		return NULL;
	wzc_rans_uniform_cum(n, M, cum);
	ly->uni12[ly->nuni12++] = cum;
	return cum;
}

/* A 12-bit uniform table of n <= 4096 symbols (the coder's for flags and
 * scale codes, else one the layer owns); NULL when out of memory. */
static const uint32_t *uniform12(const wzc_wzx *x, wzx_layer *ly, uint32_t n)
{
	if (n == 2)
		return x->cum12_flag;
	if (n == 256)
		return x->cum12_scale;
	/* other counts coded uniform are rare (none in a plan of the level
	 * count set below 4096): a table for each such entry */
	return uniform_m(ly, n, WZC_RANS12_M);
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
	ly->ecum12 = calloc((size_t)f->nentries + 1, sizeof *ly->ecum12);
	ly->ecum6 = calloc((size_t)f->nentries + 1, sizeof *ly->ecum6);
	ly->ecount12 = calloc((size_t)f->nentries + 1, sizeof *ly->ecount12);
	double *prefix = malloc(sizeof *prefix * (WZC_HIST_BINS + 1));
	if (!ly->etab || !ly->ecum12 || !ly->ecum6 || !ly->ecount12 || !prefix) {
		free(prefix);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	wzc_rans_table made[2][WZC_NSET];
	double cost[2][WZC_NSET], cost12[2][WZC_NSET], cost6[2][WZC_NSET];
	int have[2][WZC_NSET] = { { 0 } }, prefix_part = -1;
	ly->bits = ly->bits12 = ly->bits6 = 8.0 * x->scale_bytes;
	ly->type3 = 1;
	for (int i = 0; i < f->nentries; i++) {
		uint32_t n = f->nlev[i];
		int p = f->part[i], j = count_index(n);
		ly->ecount12[i] = n;
		if (f->comp[i] >= f->nv || n > WZC_RANS_MAX_TABLE || j < 0 || p < 0 || p > 1) {
			/* anchor flags and very large counts: uniform */
			ly->etab[i] = uniform(n);
			ly->bits += uniform_bits(n);
			if (n > WZC_RANS12_M) {
				ly->type3 = 0; /* no frequency of at least 1 in 2^12 for each */
				/* type 6: type 2's uniform table, M = 2^16 (a count
				 * above 2^16 leaves ecum6 NULL: no type 6) */
				if (n <= WZC_RANS_M && !(ly->ecum6[i] = uniform_m(ly, n, WZC_RANS_M))) {
					free(prefix);
					return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
				}
				ly->bits6 += uniform_bits(n);
				continue;
			}
			if (!(ly->ecum12[i] = uniform12(x, ly, n))) {
				free(prefix);
				return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
			}
			ly->bits12 += uniform_bits12(ly->ecum12[i], n);
			/* an anchor flag narrow, another uniform count type 5's table */
			ly->ecum6[i] = n == 2 ? x->cum6_flag : ly->ecum12[i];
			ly->bits6 += n == 2 ? 1.0 : uniform_bits12(ly->ecum12[i], n);
			continue;
		}
		if (!have[p][j]) {
			if (prefix_part != p) {
				prefix[0] = 0;
				for (int b = 0; b < WZC_HIST_BINS; b++)
					prefix[b + 1] = prefix[b] + pp[p]->hist[b];
				prefix_part = p;
			}
			e = hist_table(ly, x->profile, l, prefix, p, j, &cost[p][j], &cost12[p][j],
				       &cost6[p][j], &made[p][j], diag);
			if (e) {
				free(prefix);
				return e;
			}
			have[p][j] = 1;
		}
		ly->etab[i] = made[p][j];
		ly->bits += cost[p][j];
		ly->ecum12[i] = ly->cum12[p][j];
		ly->bits12 += cost12[p][j];
		ly->ecum6[i] = ly->cum6[p][j] ? ly->cum6[p][j] : ly->cum12[p][j];
		ly->bits6 += cost6[p][j];
	}
	free(prefix);
	return WZ_OK;
}

/* need_hash 0: a coder only for its estimate (the grid search), which skips
 * serializing the whole profile to hash it. */
static wz_err of_codec(const wzc_codec *codec, int need_hash, wzc_wzx **out, wz_diag *diag)
{
	*out = NULL;
	if (!codec->wz || codec->wzt)
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
	wzc_rans_uniform_cum(256, WZC_RANS12_M, x->cum12_scale);
	wzc_rans_uniform_cum(2, WZC_RANS12_M, x->cum12_flag);
	wzc_rans_uniform_cum(256, WZC_RANS6_M, x->cum6_scale);
	wzc_rans_uniform_cum(2, WZC_RANS6_M, x->cum6_flag);
	wz_err e = WZ_OK;
	x->fast_lock = malloc(sizeof *x->fast_lock);
	if (!x->fast_lock || pthread_mutex_init(x->fast_lock, NULL)) {
		free(x->fast_lock);
		x->fast_lock = NULL;
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	if (!e && need_hash)
		e = wzc_profile_hash(x->profile, &x->profile_hash, diag);
	x->layers = e ? NULL : calloc((size_t)x->L, sizeof *x->layers);
	x->ready = e ? NULL : calloc((size_t)x->L, sizeof *x->ready);
	x->lock = e ? NULL : malloc(sizeof *x->lock * (size_t)x->L);
	if (!e && (!x->layers || !x->ready || !x->lock)) {
		free(x->lock);
		x->lock = NULL;
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (int l = 0; !e && l < x->L; l++)
		pthread_mutex_init(&x->lock[l], NULL);
	if (e) {
		wzc_wzx_free(x);
		return e;
	}
	/* the layers' tables are built when first used (wzc_wzx_layer_at) */
	*out = x;
	return WZ_OK;
}

/* A layer's tables freed (the fast decoders' apart), and the layer
 * zeroed: what a failed build leaves for a later try. */
static void drop_layer(wzx_layer *ly)
{
	wzc_wz_flat_free(ly->flat);
	free(ly->etab);
	for (int p = 0; p < 2; p++)
		for (int j = 0; j < WZC_NSET; j++) {
			free(ly->cum[p][j]);
			free(ly->hint[p][j]);
			free(ly->cum12[p][j]);
			free(ly->cum6[p][j]);
		}
	for (int k = 0; k < ly->nuni12; k++)
		free(ly->uni12[k]);
	free(ly->uni12);
	free(ly->ecum12);
	free(ly->ecum6);
	free(ly->ecount12);
	memset(ly, 0, sizeof *ly);
}

wz_err wzc_wzx_layer_ready(const wzc_wzx *cx, int l, wz_diag *diag)
{
	wzc_wzx *x = (wzc_wzx *)cx; /* the tables are a cache, not the coder's state */
	if (l < 0 || l >= x->L)
		return wz_diag_set(diag, WZ_ERR_RANGE, "no layer %d of %d", l, x->L);
	if (__atomic_load_n(&x->ready[l], __ATOMIC_ACQUIRE))
		return WZ_OK;
	wz_err e = WZ_OK;
	pthread_mutex_lock(&x->lock[l]);
	if (!x->ready[l]) {
		e = build_layer(x, l, diag);
		if (e)
			drop_layer(&x->layers[l]); /* for a later try */
		else
			__atomic_store_n(&x->ready[l], 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&x->lock[l]);
	return e;
}

wzx_layer *wzc_wzx_layer_at(const wzc_wzx *x, int l)
{
	wz_diag d;
	return wzc_wzx_layer_ready(x, l, &d) ? NULL : &x->layers[l];
}

/* Layers lo .. lo + n - 1 built on nthreads threads, a layer each at a
 * time (the layers are independent; each is planned under its own lock). */
typedef struct {
	const wzc_wzx *x;
	int next, end;           /* next: atomic */
	wzc_first_fail fail;     /* the lowest failing layer */
} build_job;

static void *build_worker(void *arg)
{
	build_job *j = arg;
	for (;;) {
		int l = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (l >= j->end || l > wzc_first_fail_at(&j->fail))
			return NULL;
		wz_diag d;
		wz_err e = wzc_wzx_layer_ready(j->x, l, &d);
		if (e)
			wzc_first_fail_note(&j->fail, l, e, &d);
	}
}

wz_err wzc_wzx_build_layers(const wzc_wzx *x, int lo, int n, int nthreads, wz_diag *diag)
{
	if (lo < 0 || n < 0 || lo + n > x->L)
		return wz_diag_set(diag, WZ_ERR_RANGE, "layers %d..%d of %d", lo, lo + n - 1, x->L);
	build_job j = { .x = x, .next = lo, .end = lo + n };
	if (wzc_first_fail_init(&j.fail, j.end))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	enum { MAX_BUILDERS = 64 };
	pthread_t tid[MAX_BUILDERS];
	int nt = nthreads > n ? n : nthreads > MAX_BUILDERS ? MAX_BUILDERS : nthreads, started = 0;
	/* fewer threads than asked is only slower */
	for (int t = 1; t < nt && !pthread_create(&tid[started], NULL, build_worker, &j); t++)
		started++;
	build_worker(&j);
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	return wzc_first_fail_done(&j.fail, j.end, diag);
}

double wzc_wzx_expected_bits(const wzc_wzx *x)
{
	double bits = 0;
	for (int l = 0; l < x->L; l++) {
		const wzx_layer *ly = wzc_wzx_layer_at(x, l);
		if (!ly)
			return NAN;
		/* the tables of the type the layer is written with */
		bits += ly->type3 ? ly->bits6 : ly->bits;
	}
	/* per token: symbols, plus the block and index overhead shared by 64 */
	double per_token = bits / x->L + 8.0 * (WZC_WZX_BLOCK_OVERHEAD + WZC_WZX_INDEX_ENTRY) /
						 WZC_WZX_BLOCK_TOKENS;
	return per_token / (x->R + x->P);
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

wz_err wzc_wzx_new_unhashed(const wzc_profile *p, size_t record_bytes, wzc_wzx **out, wz_diag *diag)
{
	return new_coder(p, record_bytes, 0, out, diag);
}

/* The symbols of n records, token-major: scale codes, then the digits. */
static uint32_t *block_symbols(const wzc_wzx *x, const wzx_layer *ly, int n, const uint8_t *records)
{
	const wzc_wz_flat *f = ly->flat;
	int sb = x->scale_bytes, S = sb + f->nentries;
	uint32_t *sym = malloc(sizeof *sym * (size_t)S * n);
	if (!sym)
		return NULL;
	for (int t = 0; t < n; t++) {
		const uint8_t *rec = records + (size_t)t * x->B;
		for (int b = 0; b < sb; b++)
			sym[(size_t)t * S + b] = rec[b];
		wzc_wzx_digits(f, rec, sym + (size_t)t * S + sb);
	}
	return sym;
}

size_t wzc_wzx_encode_lanes(const wzc_wzx *x, int layer, int K, int n, const uint8_t *records,
			    uint8_t *out, size_t cap)
{
	int nomem = 0;
	return wzc_wzx_encode_lanes_checked(x, layer, K, n, records, out, cap, &nomem);
}

size_t wzc_wzx_encode_lanes_checked(const wzc_wzx *x, int layer, int K, int n,
				    const uint8_t *records, uint8_t *out, size_t cap, int *nomem)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly) {
		*nomem = 1;
		return 0;
	}
	int sb = x->scale_bytes, S = sb + ly->flat->nentries;
	size_t room = (size_t)n * x->B + 4 * (size_t)K + 2;
	uint32_t *sym = block_symbols(x, ly, n, records);
	uint8_t *tmp = malloc(room);
	size_t got = 0;
	if (sym && tmp && K >= 1 && K <= WZC_LANES_MAX) {
		wzc_lanes_enc enc;
		wzc_lanes_enc_init(&enc, K, tmp, room);
		for (long i = (long)n * S - 1; i >= 0 && !enc.overflow; i--) {
			int j = (int)(i % S);
			wzc_lanes_put(&enc, (int)(i % K), j < sb ? &x->scale_tab : &ly->etab[j - sb], sym[i]);
		}
		uint8_t *start = wzc_lanes_enc_flush(&enc);
		if (start && (size_t)(tmp + room - start) <= cap) {
			got = (size_t)(tmp + room - start);
			memcpy(out, start, got);
		}
	} else if (!sym || !tmp) {
		*nomem = 1;
	}
	free(sym);
	free(tmp);
	return got;
}

size_t wzc_wzx_encode_lanes12(const wzc_wzx *x, int layer, int K, int n, const uint8_t *records,
			      uint8_t *out, size_t cap)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly)
		return 0;
	int sb = x->scale_bytes, S = sb + ly->flat->nentries;
	if (!ly->type3 || K < 1 || K > WZC_LANES_MAX)
		return 0;
	size_t room = (size_t)n * x->B + 4 * (size_t)K + 2;
	uint32_t *sym = block_symbols(x, ly, n, records);
	uint8_t *tmp = malloc(room);
	size_t got = 0;
	if (sym && tmp) {
		wzc_lanes_enc enc;
		wzc_lanes_enc_init(&enc, K, tmp, room);
		for (long i = (long)n * S - 1; i >= 0 && !enc.overflow; i--) {
			int j = (int)(i % S);
			wzc_lanes12_put(&enc, (int)(i % K), j < sb ? x->cum12_scale : ly->ecum12[j - sb], sym[i]);
		}
		uint8_t *start = wzc_lanes_enc_flush(&enc);
		if (start && (size_t)(tmp + room - start) <= cap) {
			got = (size_t)(tmp + room - start);
			memcpy(out, start, got);
		}
	}
	free(sym);
	free(tmp);
	return got;
}

size_t wzc_wzx_encode_rans1(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			    uint8_t *out, size_t cap)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly)
		return 0;
	int sb = x->scale_bytes, S = sb + ly->flat->nentries;
	size_t room = (size_t)n * x->B + 8;
	uint32_t *sym = block_symbols(x, ly, n, records);
	uint8_t *tmp = malloc(room);
	size_t got = 0;
	if (sym && tmp) {
		wzc_rans_enc enc;
		wzc_rans_enc_init(&enc, tmp, room);
		for (long i = (long)n * S - 1; i >= 0 && !enc.overflow; i--) {
			int j = (int)(i % S);
			wzc_rans_put(&enc, j < sb ? &x->scale_tab : &ly->etab[j - sb], sym[i]);
		}
		uint8_t *start = wzc_rans_enc_flush(&enc);
		if (start && (size_t)(tmp + room - start) <= cap) {
			got = (size_t)(tmp + room - start);
			memcpy(out, start, got);
		}
	}
	free(sym);
	free(tmp);
	return got;
}

int wzc_wzx_encode_block(const wzc_wzx *x, int layer, int n, const uint8_t *records,
			 uint8_t *out, size_t cap, size_t *size)
{
	size_t raw = (size_t)n * x->B;
	/* type 6 (type 5's lanes, narrow tables) where the layer's counts
	 * allow it (every count at most 2^16), else type 2; either unless it
	 * is not smaller than the records */
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	int type6 = wzc_wzx_layer_type6(x, layer), nomem = !ly || (!type6 && wzc_wzx_table_nomem(&ly->fast6_ready));
	size_t got = 0;
	if (!nomem)
		got = type6 ? wzc_wzx_encode_lanes6_checked(x, layer, n, records, out, cap, &nomem)
			    : wzc_wzx_encode_lanes_checked(x, layer, WZC_LANES, n, records, out, cap, &nomem);
	if (nomem)
		return -1;
	if (got && got < raw) {
		*size = got;
		return type6 ? WZC_WZX_LANES6 : WZC_WZX_LANES;
	}
	memcpy(out, records, raw);
	*size = raw;
	return WZC_WZX_RAW;
}

int wzc_wzx_decode_block(const wzc_wzx *x, int layer, int n, const uint8_t *payload,
			 size_t size, uint8_t *records)
{
	const wzx_layer *ly = wzc_wzx_layer_at(x, layer);
	if (!ly)
		return -1;
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
