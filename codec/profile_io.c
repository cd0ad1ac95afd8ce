/* The wz profile file (docs/wz-format.md): serialization, a parser that
 * trusts nothing it reads, and allocation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/profile.h"
#include "codec/profile_cache.h"
#include "common/wz_io.h"

#include <xxhash.h>

static const uint8_t magic[8] = { 0x89, 'W', 'Z', 'P', 'R', 'O', 'F', '\n' };
#define HEADER_BYTES 48u
#define MAX_L 4096
#define MAX_R 8192
#define MAX_P 1024

static void free_part(wzc_part_profile *q)
{
	free(q->mean);
	free(q->basis);
	free(q->var);
	free(q->sigma);
	free(q->weight);
	free(q->anchor);
	free(q->hist);
}

static int alloc_part(wzc_part_profile *q, int n)
{
	size_t un = (size_t)n;
	q->n = n;
	q->mean = calloc(un ? un : 1, sizeof(float));
	q->basis = calloc(un > 0 ? un * un : 1, sizeof(float));
	q->var = calloc(un ? un : 1, sizeof(float));
	q->sigma = calloc(un ? un : 1, sizeof(float));
	q->weight = calloc(un ? un : 1, sizeof(float));
	q->anchor = calloc(un ? un : 1, sizeof(float));
	q->hist = calloc(WZC_HIST_BINS, sizeof(float));
	return q->mean && q->basis && q->var && q->sigma && q->weight && q->anchor && q->hist ? 0 : -1;
}

wzc_profile *wzc_profile_alloc(int L, int R, int P)
{
	wzc_profile *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->version = WZC_PROFILE_VERSION;
	p->L = L;
	p->R = R;
	p->P = P;
	p->latent = calloc((size_t)L, sizeof *p->latent);
	p->rope = calloc((size_t)L, sizeof *p->rope);
	p->cache = wzc_profile_cache_new(L);
	if (!p->latent || !p->rope || !p->cache) {
		wzc_profile_free(p);
		return NULL;
	}
	for (int l = 0; l < L; l++)
		if (alloc_part(&p->latent[l], R) || alloc_part(&p->rope[l], P)) {
			wzc_profile_free(p);
			return NULL;
		}
	return p;
}

void wzc_profile_free(wzc_profile *p)
{
	if (!p)
		return;
	for (int l = 0; l < p->L; l++) {
		if (p->latent)
			free_part(&p->latent[l]);
		if (p->rope)
			free_part(&p->rope[l]);
	}
	wzc_profile_cache_free(p->cache);
	free(p->latent);
	free(p->rope);
	free(p);
}

uint64_t wzc_profile_checksum(const void *bytes, size_t n)
{
	return XXH3_64bits(bytes, n);
}

static size_t part_bytes(int n)
{
	size_t un = (size_t)n;
	return 4 * (1 + un * un + 5 * un + WZC_HIST_BINS);
}

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint8_t *put_floats(uint8_t *p, const float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &x[i], 4);
		put32(p + 4 * i, u);
	}
	return p + 4 * n;
}

static const uint8_t *get_floats(const uint8_t *p, float *x, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u = get32(p + 4 * i);
		memcpy(&x[i], &u, 4);
	}
	return p + 4 * n;
}

static uint8_t *put_part(uint8_t *p, const wzc_part_profile *q)
{
	size_t n = (size_t)q->n;
	p = put_floats(p, &q->scale_ref, 1);
	p = put_floats(p, q->mean, n);
	p = put_floats(p, q->basis, n * n);
	p = put_floats(p, q->var, n);
	p = put_floats(p, q->sigma, n);
	p = put_floats(p, q->weight, n);
	p = put_floats(p, q->anchor, n);
	return put_floats(p, q->hist, WZC_HIST_BINS);
}

wz_err wzc_profile_serialize(const wzc_profile *pr, uint8_t **bytes, size_t *nbytes,
			     wz_diag *diag)
{
	size_t mlen = strlen(pr->model);
	size_t total = HEADER_BYTES + pad4(mlen) +
		       (size_t)pr->L * (part_bytes(pr->R) + part_bytes(pr->P)) + 8;
	uint8_t *b = calloc(1, total);
	if (!b)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (profile of %zu bytes)", total);
	memcpy(b, magic, 8);
	put32(b + 8, (uint32_t)pr->version);
	put32(b + 12, 0);
	put32(b + 16, (uint32_t)pr->L);
	put32(b + 20, (uint32_t)pr->R);
	put32(b + 24, (uint32_t)pr->P);
	put32(b + 28, WZC_HIST_BINS);
	put32(b + 32, (uint32_t)pr->query_weighted);
	put32(b + 36, (uint32_t)mlen);
	put64(b + 40, pr->ntokens);
	memcpy(b + HEADER_BYTES, pr->model, mlen);
	uint8_t *p = b + HEADER_BYTES + pad4(mlen);
	for (int l = 0; l < pr->L; l++) {
		p = put_part(p, &pr->latent[l]);
		p = put_part(p, &pr->rope[l]);
	}
	put64(p, wzc_profile_checksum(b, total - 8));
	*bytes = b;
	*nbytes = total;
	return WZ_OK;
}

static int all_finite(const float *x, size_t n, int nonneg)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]) || (nonneg && x[i] < 0))
			return 0;
	return 1;
}

static wz_err get_part(const uint8_t **pp, wzc_part_profile *q, const char *origin, int layer,
		       const char *part, wz_diag *diag)
{
	size_t n = (size_t)q->n;
	const uint8_t *p = *pp;
	p = get_floats(p, &q->scale_ref, 1);
	p = get_floats(p, q->mean, n);
	p = get_floats(p, q->basis, n * n);
	p = get_floats(p, q->var, n);
	p = get_floats(p, q->sigma, n);
	p = get_floats(p, q->weight, n);
	p = get_floats(p, q->anchor, n);
	p = get_floats(p, q->hist, WZC_HIST_BINS);
	*pp = p;
	if (!(isfinite(q->scale_ref) && q->scale_ref > 0) || !all_finite(q->mean, n, 0) ||
	    !all_finite(q->basis, n * n, 0) || !all_finite(q->var, n, 1) ||
	    !all_finite(q->sigma, n, 1) || !all_finite(q->weight, n, 1) || !all_finite(q->anchor, n, 0) ||
	    !all_finite(q->hist, WZC_HIST_BINS, 1))
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: layer %d, %s part: a value is negative, infinite or NaN",
				   origin, layer, part);
	/* Unit rows: the encoder's integer sums rely on them not to overflow
	 * (codec/wz_gemm.h); prepare writes eigenvectors with norms within
	 * about 1e-6 of 1. */
	for (size_t k = 0; k < n; k++) {
		double rn = 0;
		for (size_t i = 0; i < n; i++)
			rn += (double)q->basis[k * n + i] * q->basis[k * n + i];
		if (fabs(rn - 1.0) > 1e-3)
			return wz_diag_set(diag, WZ_ERR_CORRUPT,
					   "%s: layer %d, %s part: basis row %zu has squared norm %g, not 1",
					   origin, layer, part, k, rn);
	}
	double sum = 0;
	for (int i = 0; i < WZC_HIST_BINS; i++)
		sum += q->hist[i];
	if (fabs(sum - 1.0) > 1e-3)
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: layer %d, %s part: the value histogram sums to %g, not 1",
				   origin, layer, part, sum);
	return WZ_OK;
}

wz_err wzc_profile_parse(const void *bytes, size_t n, const char *origin, wzc_profile **out,
			 wz_diag *diag)
{
	const uint8_t *b = bytes;
	*out = NULL;
	if (n < HEADER_BYTES + 8 || memcmp(b, magic, 8) != 0)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: not a wz profile (bad magic or too short)",
				   origin);
	uint32_t version = get32(b + 8);
	if (version < 1 || version > WZC_PROFILE_VERSION)
		return wz_diag_set(diag, WZ_ERR_VERSION,
				   "%s: profile version %u, this build reads 1 to %d", origin, version,
				   WZC_PROFILE_VERSION);
	if (get64(b + n - 8) != wzc_profile_checksum(b, n - 8))
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: checksum mismatch: the profile is corrupted", origin);
	uint32_t flags = get32(b + 12), L = get32(b + 16), R = get32(b + 20), P = get32(b + 24);
	uint32_t bins = get32(b + 28), qw = get32(b + 32), mlen = get32(b + 36);
	if (flags != 0 || qw > 1)
		return wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: reserved header bits are set", origin);
	if (L < 1 || L > MAX_L || R < 1 || R > MAX_R || P > MAX_P || bins != WZC_HIST_BINS ||
	    mlen > WZC_MODEL_MAX)
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: header out of range (L %u, R %u, P %u, bins %u, model %u bytes)",
				   origin, L, R, P, bins, mlen);
	size_t want = HEADER_BYTES + pad4(mlen) + (size_t)L * (part_bytes((int)R) + part_bytes((int)P)) + 8;
	if (want != n)
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: %zu bytes, the header implies %zu", origin, n, want);
	for (uint32_t i = 0; i < mlen; i++)
		if (b[HEADER_BYTES + i] < 0x20 || b[HEADER_BYTES + i] == 0x7f)
			return wz_diag_set(diag, WZ_ERR_CORRUPT,
					   "%s: the model name has a control character", origin);
	wzc_profile *p = wzc_profile_alloc((int)L, (int)R, (int)P);
	if (!p)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	memcpy(p->model, b + HEADER_BYTES, mlen);
	p->model[mlen] = 0;
	p->version = (int)version;
	p->query_weighted = (int)qw;
	p->ntokens = get64(b + 40);
	const uint8_t *q = b + HEADER_BYTES + pad4(mlen);
	for (int l = 0; l < (int)L; l++) {
		wz_err e = get_part(&q, &p->latent[l], origin, l, "latent", diag);
		if (!e)
			e = get_part(&q, &p->rope[l], origin, l, "position", diag);
		if (e) {
			wzc_profile_free(p);
			return e;
		}
	}
	/* the wzx header's profile hash is this checksum: known without
	 * serializing the profile again */
	wzc_profile_cache_set_hash(p, get64(b + n - 8));
	*out = p;
	return WZ_OK;
}

wz_err wzc_profile_read(const char *path, wzc_profile **out, wz_diag *diag)
{
	char *data;
	size_t n;
	*out = NULL;
	wz_err e = wz_read_file(path, (size_t)1 << 34, &data, &n, diag);
	if (e)
		return e;
	e = wzc_profile_parse(data, n, path, out, diag);
	free(data);
	return e;
}

wz_err wzc_profile_write(const char *path, const wzc_profile *p, wz_diag *diag)
{
	uint8_t *b;
	size_t n;
	wz_err e = wzc_profile_serialize(p, &b, &n, diag);
	if (e)
		return e;
	e = wz_write_file_atomic(path, b, n, diag);
	free(b);
	return e;
}

wz_err wzc_profile_check_window(const wzc_profile *p, const wzc_window *w, wz_diag *diag)
{
	const char *name = w->name ? w->name : "window";
	if (p->model[0] && w->model && w->model[0] && strcmp(p->model, w->model) != 0)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: the cache is of model '%s', the profile of '%s'", name,
				   w->model, p->model);
	if (p->L != w->L || p->R != w->R || p->P != w->P)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: the cache is %d layers x (%d + %d), the profile %d x (%d + %d)",
				   name, w->L, w->R, w->P, p->L, p->R, p->P);
	return WZ_OK;
}
