/* The wz profile file (docs/wz-format.md): serialization, a parser that
 * trusts nothing it reads, and allocation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/profile.h"
#include "codec/profile_cache.h"
#include "codec/profile_internal.h"
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

/* A profile of the shape with no arrays yet. */
static wzc_profile *alloc_shell(int L, int R, int P)
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
	p->pos_cap = calloc((size_t)L, sizeof *p->pos_cap);
	p->cache = wzc_profile_cache_new(L);
	if (!p->latent || !p->rope || !p->pos_cap || !p->cache) {
		wzc_profile_free(p);
		return NULL;
	}
	return p;
}

wzc_profile *wzc_profile_alloc(int L, int R, int P)
{
	wzc_profile *p = alloc_shell(L, R, P);
	if (!p)
		return NULL;
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
	for (int l = 0; !p->backing && l < p->L; l++) {
		if (p->latent)
			free_part(&p->latent[l]);
		if (p->rope)
			free_part(&p->rope[l]);
	}
	free(p->backing);
	wzc_profile_cache_free(p->cache);
	free(p->latent);
	free(p->rope);
	free(p->pos_cap);
	free(p->loaded);
	free(p->layer_hash);
	free(p);
}

int wzc_profile_has_layer(const wzc_profile *p, int l)
{
	return l >= 0 && l < p->L && (!p->loaded || p->loaded[l]);
}

wz_err wzc_profile_need_layer(const wzc_profile *p, int l, wz_diag *diag)
{
	if (wzc_profile_has_layer(p, l))
		return WZ_OK;
	return wz_diag_set(diag, WZ_ERR_USAGE,
			   "layer %d of the profile was not read (only some layers were asked for)", l);
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

/* The position caps after the layers' parts: version 4's layout (version
 * 5 keeps each layer's cap with the layer). */
static size_t cap_bytes(int version, int L)
{
	return version == 4 ? 4 * (size_t)L : 0;
}

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* Version 5's layout (docs/wz-format.md): the directory at D, the layers
 * from H, each of S bytes. */
static size_t dir_at(size_t mlen)
{
	return HEADER_BYTES + pad4(mlen);
}

static size_t layers_at(size_t mlen, size_t L)
{
	return dir_at(mlen) + 8 * L;
}

static size_t layer_bytes(int R, int P)
{
	return part_bytes(R) + part_bytes(P) + 4;
}

/* The file's size the header implies. */
static size_t file_bytes(int version, int L, int R, int P, size_t mlen)
{
	if (version >= 5)
		return layers_at(mlen, (size_t)L) + (size_t)L * layer_bytes(R, P) + 8;
	return HEADER_BYTES + pad4(mlen) + (size_t)L * (part_bytes(R) + part_bytes(P)) +
	       cap_bytes(version, L) + 8;
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
	*bytes = NULL;
	*nbytes = 0;
	for (int l = 0; l < pr->L; l++)
		if (!wzc_profile_has_layer(pr, l))
			return wz_diag_set(diag, WZ_ERR_USAGE,
					   "a profile read in part (layer %d not read) cannot be written", l);
	size_t mlen = strlen(pr->model);
	size_t total = file_bytes(pr->version, pr->L, pr->R, pr->P, mlen);
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
	if (pr->version >= 5) {
		/* the layers, each with its cap; the directory of their hashes;
		 * the trailing checksum over the header and directory */
		size_t S = layer_bytes(pr->R, pr->P), H = layers_at(mlen, (size_t)pr->L);
		for (int l = 0; l < pr->L; l++) {
			uint8_t *q = b + H + (size_t)l * S;
			q = put_part(q, &pr->latent[l]);
			q = put_part(q, &pr->rope[l]);
			put_floats(q, &pr->pos_cap[l], 1);
			put64(p + 8 * (size_t)l, wzc_profile_checksum(b + H + (size_t)l * S, S));
		}
		put64(b + total - 8, wzc_profile_checksum(b, H));
	} else {
		for (int l = 0; l < pr->L; l++) {
			p = put_part(p, &pr->latent[l]);
			p = put_part(p, &pr->rope[l]);
		}
		if (pr->version >= 4)
			p = put_floats(p, pr->pos_cap, (size_t)pr->L);
		put64(p, wzc_profile_checksum(b, total - 8));
	}
	*bytes = b;
	*nbytes = total;
	return WZ_OK;
}

void wzc_profile_reseal(uint8_t *b, size_t n)
{
	if (n < HEADER_BYTES + 8)
		return;
	uint32_t version = get32(b + 8), L = get32(b + 16), R = get32(b + 20), P = get32(b + 24);
	uint32_t mlen = get32(b + 36);
	if (version < 5) {
		put64(b + n - 8, wzc_profile_checksum(b, n - 8));
		return;
	}
	if (L < 1 || L > MAX_L || mlen > WZC_MODEL_MAX || R > MAX_R || P > MAX_P)
		return;
	size_t H = layers_at(mlen, L), S = layer_bytes((int)R, (int)P);
	if (n < H + 8)
		return;
	for (uint32_t l = 0; l < L && H + (size_t)(l + 1) * S <= n - 8; l++)
		put64(b + dir_at(mlen) + 8 * (size_t)l, wzc_profile_checksum(b + H + (size_t)l * S, S));
	put64(b + n - 8, wzc_profile_checksum(b, H));
}

/* Every value finite (and with nonneg, none below 0; -0 is not): on the
 * bits, without branches, as a 67 MB profile's checks are most of
 * reading it once the copy is gone. */
WZ_HOT static int all_finite(const float *x, size_t n, int nonneg)
{
	uint32_t bad = 0, neg = nonneg ? 0xffffffffu : 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t u;
		memcpy(&u, &x[i], 4);
		bad |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
		bad |= (uint32_t)((u >> 31) & ((u & 0x7fffffffu) != 0)) & neg;
	}
	return !bad;
}

/* The squared norm of a row of finite values: eight float partial sums
 * (vectorized), added in double.  Its error, about 1e-7 per value summed,
 * is far below the check's tolerance of 1e-3. */
WZ_HOT static double norm2(const float *row, size_t n)
{
	float acc[8] = { 0 };
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		for (int j = 0; j < 8; j++)
			acc[j] += row[i + j] * row[i + j];
	double rn = 0;
	for (int j = 0; j < 8; j++)
		rn += acc[j];
	for (; i < n; i++)
		rn += (double)row[i] * row[i];
	return rn;
}

/* The part's arrays from the file: copied, or with view, pointing into
 * the bytes at *pp (little-endian, 4-byte aligned: the caller checked). */
static void get_part_arrays(const uint8_t **pp, wzc_part_profile *q, int view)
{
	size_t n = (size_t)q->n;
	const uint8_t *p = *pp;
	p = get_floats(p, &q->scale_ref, 1);
	if (view) {
		float *f = (float *)(void *)(uintptr_t)p;
		q->mean = f;
		q->basis = f + n;
		q->var = q->basis + n * n;
		q->sigma = q->var + n;
		q->weight = q->sigma + n;
		q->anchor = q->weight + n;
		q->hist = q->anchor + n;
		*pp = p + 4 * (n * n + 5 * n + WZC_HIST_BINS);
		return;
	}
	p = get_floats(p, q->mean, n);
	p = get_floats(p, q->basis, n * n);
	p = get_floats(p, q->var, n);
	p = get_floats(p, q->sigma, n);
	p = get_floats(p, q->weight, n);
	p = get_floats(p, q->anchor, n);
	p = get_floats(p, q->hist, WZC_HIST_BINS);
	*pp = p;
}

static wz_err check_part(const wzc_part_profile *q, const char *origin, int layer,
			 const char *part, wz_diag *diag)
{
	size_t n = (size_t)q->n;
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
		double rn = norm2(q->basis + k * n, n);
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

/* Version 5: layer l's bytes at q parsed into the profile and checked
 * (its checksum already matched): the parts, then its position cap. */
static wz_err parse_layer(wzc_profile *p, int l, const uint8_t *q, int view, const char *origin,
			  wz_diag *diag)
{
	get_part_arrays(&q, &p->latent[l], view);
	wz_err e = check_part(&p->latent[l], origin, l, "latent", diag);
	if (e)
		return e;
	get_part_arrays(&q, &p->rope[l], view);
	if ((e = check_part(&p->rope[l], origin, l, "position", diag)))
		return e;
	get_floats(q, &p->pos_cap[l], 1);
	if (!all_finite(&p->pos_cap[l], 1, 1))
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: layer %d: the position cap is negative, infinite or NaN", origin, l);
	return WZ_OK;
}

/* A profile parsed as its bytes arrive (a file read in pieces, or all at
 * once from memory): each unit (the header, then the parts in file order;
 * from version 5 the layers) is hashed and checked once complete, while
 * its bytes are still in cache.  The errors come as parsing the whole
 * buffer gave them: a bad magic or version at once; a checksum mismatch
 * before anything else the bytes say, so an error found in a unit waits
 * (late) until the checksum is known. */
typedef struct {
	const char *origin;
	int may_view;		/* the buffer will be handed over to the profile */
	int view;		/* the arrays point into it */
	int head_only;		/* version 5: the header and directory alone are fed */
	const uint8_t *b;	/* the buffer as of the last feed */
	size_t have, n;		/* bytes in it; the size it will have */
	XXH3_state_t *hash;
	size_t hashed;		/* bytes [0, hashed) hashed */
	size_t parsed;		/* the end of the units parsed */
	int header_done;
	uint32_t version, L, R, P;
	size_t D, H, S;		/* version 5: the directory, the layers, a layer's size */
	XXH3_state_t *lhash;	/* version 5: the layer being read */
	size_t lhashed;		/* its bytes [parsed, lhashed) hashed */
	int units;		/* parts parsed: layer units / 2, the latent part first;
				 * version 5: layers */
	int caps_done;		/* the position caps (version 4) read, or none to read */
	wzc_profile *p;
	wz_err early, late;
	wz_diag early_diag, late_diag;
} reading;

static void hash_to(reading *r, size_t end)
{
	if (r->version >= 5 && end > r->H)
		end = r->H; /* the trailing checksum covers the header and directory */
	if (end > r->hashed) {
		XXH3_64bits_update(r->hash, r->b + r->hashed, end - r->hashed);
		r->hashed = end;
	}
}

/* The profile built so far, without touching the arrays of a view (the
 * buffer is not its own yet). */
static void drop(reading *r)
{
	if (r->p && r->view) {
		memset(r->p->latent, 0, sizeof *r->p->latent * r->L);
		memset(r->p->rope, 0, sizeof *r->p->rope * r->L);
	}
	wzc_profile_free(r->p);
	r->p = NULL;
}

/* The header: as much of it as a file of n bytes can hold has arrived. */
static void parse_header(reading *r)
{
	const uint8_t *b = r->b;
	const char *origin = r->origin;
	r->header_done = 1;
	if (r->n < HEADER_BYTES + 8 || memcmp(b, magic, 8) != 0) {
		r->early = wz_diag_set(&r->early_diag, WZ_ERR_INPUT,
				       "%s: not a wz profile (bad magic or too short)", origin);
		return;
	}
	uint32_t version = get32(b + 8);
	if (version < 1 || version > WZC_PROFILE_VERSION) {
		r->early = wz_diag_set(&r->early_diag, WZ_ERR_VERSION,
				       "%s: profile version %u, this build reads 1 to %d", origin,
				       version, WZC_PROFILE_VERSION);
		return;
	}
	uint32_t flags = get32(b + 12), L = get32(b + 16), R = get32(b + 20), P = get32(b + 24);
	uint32_t bins = get32(b + 28), qw = get32(b + 32), mlen = get32(b + 36);
	r->version = version;
	if (version >= 5) {
		/* the extent of the trailing checksum, before it can be checked */
		if (L < 1 || L > MAX_L || mlen > WZC_MODEL_MAX) {
			r->early = wz_diag_set(&r->early_diag, WZ_ERR_CORRUPT,
					       "%s: header out of range (L %u, model %u bytes)", origin, L,
					       mlen);
			return;
		}
		r->D = dir_at(mlen);
		r->H = layers_at(mlen, L);
		if (r->n < r->H + 8) {
			r->early = wz_diag_set(&r->early_diag, WZ_ERR_CORRUPT,
					       "%s: %zu bytes, too few for the header and directory of %u layers",
					       origin, r->n, L);
			return;
		}
	}
	wz_diag *late = &r->late_diag;
	if (flags != 0 || qw > 1) {
		r->late = wz_diag_set(late, WZ_ERR_CORRUPT, "%s: reserved header bits are set", origin);
		return;
	}
	if (L < 1 || L > MAX_L || R < 1 || R > MAX_R || P > MAX_P || bins != WZC_HIST_BINS ||
	    mlen > WZC_MODEL_MAX) {
		r->late = wz_diag_set(late, WZ_ERR_CORRUPT,
				      "%s: header out of range (L %u, R %u, P %u, bins %u, model %u bytes)",
				      origin, L, R, P, bins, mlen);
		return;
	}
	size_t want = file_bytes((int)version, (int)L, (int)R, (int)P, mlen);
	if (want != r->n) {
		r->late = wz_diag_set(late, WZ_ERR_CORRUPT, "%s: %zu bytes, the header implies %zu",
				      origin, r->n, want);
		return;
	}
	for (uint32_t i = 0; i < mlen; i++)
		if (b[HEADER_BYTES + i] < 0x20 || b[HEADER_BYTES + i] == 0x7f) {
			r->late = wz_diag_set(late, WZ_ERR_CORRUPT,
					      "%s: the model name has a control character", origin);
			return;
		}
	r->parsed = version >= 5 ? r->H : HEADER_BYTES + pad4(mlen);
	r->lhashed = r->parsed;
	r->S = layer_bytes((int)R, (int)P);
	/* the file's buffer is 64-byte aligned: the parts start 4-byte aligned */
	r->view = r->may_view && (uintptr_t)(b + r->parsed) % 4 == 0;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	r->view = 0;
#endif
	/* read in part: the layers' arrays come later, each its own way */
	wzc_profile *p = r->view || r->head_only ? alloc_shell((int)L, (int)R, (int)P)
						 : wzc_profile_alloc((int)L, (int)R, (int)P);
	if (!p) {
		r->early = wz_diag_set(&r->early_diag, WZ_ERR_NOMEM, "out of memory");
		return;
	}
	r->L = L;
	r->R = R;
	r->P = P;
	for (int l = 0; (r->view || r->head_only) && l < (int)L; l++) {
		p->latent[l].n = (int)R;
		p->rope[l].n = (int)P;
	}
	memcpy(p->model, b + HEADER_BYTES, mlen);
	p->model[mlen] = 0;
	p->version = (int)version;
	p->query_weighted = (int)qw;
	p->ntokens = get64(b + 40);
	r->p = p;
}

/* Version 5: the layers complete in the buffer, each hashed as its
 * pieces arrive and checked against its directory entry once whole. */
static void feed_layers(reading *r)
{
	while (!r->late && r->p && !r->head_only && r->units < (int)r->L) {
		int l = r->units;
		size_t end = r->parsed + r->S, upto = r->have < end ? r->have : end;
		if (upto > r->lhashed) {
			XXH3_64bits_update(r->lhash, r->b + r->lhashed, upto - r->lhashed);
			r->lhashed = upto;
		}
		if (end > r->have)
			break;
		if (XXH3_64bits_digest(r->lhash) != get64(r->b + r->D + 8 * (size_t)l))
			r->late = wz_diag_set(&r->late_diag, WZ_ERR_CORRUPT,
					      "%s: layer %d: checksum mismatch: the profile is corrupted",
					      r->origin, l);
		else
			r->late = parse_layer(r->p, l, r->b + r->parsed, r->view, r->origin,
					      &r->late_diag);
		XXH3_64bits_reset(r->lhash);
		r->parsed = r->lhashed = end;
		r->units++;
	}
}

/* The buffer now holds have of its n bytes: the same buffer each time
 * (wz_read_file_fed), or all of them at once. */
static void feed(void *ctx, const void *bytes, size_t have, size_t n)
{
	reading *r = ctx;
	r->b = bytes;
	r->have = have;
	r->n = n;
	if (!r->header_done) {
		size_t head = HEADER_BYTES + pad4(WZC_MODEL_MAX);
		if (have < (n < head ? n : head))
			return;
		parse_header(r);
	}
	if (r->early)
		return;
	/* the hash first, on the piece just read */
	hash_to(r, have < n - 8 ? have : n - 8);
	if (r->version >= 5) {
		feed_layers(r);
		return;
	}
	while (!r->late && r->p && r->units < 2 * (int)r->L) {
		int l = r->units / 2, latent = r->units % 2 == 0;
		size_t end = r->parsed + part_bytes((int)(latent ? r->R : r->P));
		if (end > have)
			break;
		const uint8_t *q = r->b + r->parsed;
		wzc_part_profile *part = latent ? &r->p->latent[l] : &r->p->rope[l];
		get_part_arrays(&q, part, r->view);
		r->late = check_part(part, r->origin, l, latent ? "latent" : "position", &r->late_diag);
		r->parsed = end;
		r->units++;
	}
	/* version 4: the position caps after the layers' parts */
	if (!r->late && r->p && r->units == 2 * (int)r->L && !r->caps_done &&
	    r->parsed + cap_bytes(r->p->version, (int)r->L) <= have) {
		r->caps_done = 1;
		if (r->p->version >= 4) {
			get_floats(r->b + r->parsed, r->p->pos_cap, r->L);
			if (!all_finite(r->p->pos_cap, r->L, 1))
				r->late = wz_diag_set(&r->late_diag, WZ_ERR_CORRUPT,
						      "%s: a position cap is negative, infinite or NaN",
						      r->origin);
		}
		r->parsed += cap_bytes(r->p->version, (int)r->L);
	}
}

static wz_err reading_start(reading *r, const char *origin, int may_view, wz_diag *diag)
{
	memset(r, 0, sizeof *r);
	r->origin = origin;
	r->may_view = may_view;
	r->hash = XXH3_createState();
	r->lhash = XXH3_createState();
	if (!r->hash || !r->lhash || XXH3_64bits_reset(r->hash) != XXH_OK ||
	    XXH3_64bits_reset(r->lhash) != XXH_OK) {
		XXH3_freeState(r->hash);
		XXH3_freeState(r->lhash);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	return WZ_OK;
}

/* The verdict once everything to be fed was: the early error, the
 * checksum (trailer, the file's last 8 bytes, against what was hashed),
 * the late error, in that order. */
static wz_err reading_verdict(reading *r, uint64_t trailer, wz_diag *diag)
{
	wz_err e = WZ_OK;
	if (!r->header_done && !r->early) /* nothing fed: an empty file */
		r->early = wz_diag_set(&r->early_diag, WZ_ERR_INPUT,
				       "%s: not a wz profile (bad magic or too short)", r->origin);
	if (r->early) {
		e = r->early;
		if (diag)
			*diag = r->early_diag;
	} else if (trailer != XXH3_64bits_digest(r->hash)) {
		e = wz_diag_set(diag, WZ_ERR_CORRUPT,
				"%s: checksum mismatch: the profile is corrupted", r->origin);
	} else if (r->late) {
		e = r->late;
		if (diag)
			*diag = r->late_diag;
	}
	XXH3_freeState(r->hash);
	XXH3_freeState(r->lhash);
	r->hash = r->lhash = NULL;
	return e;
}

/* After the last feed: the profile, which takes own (the buffer, when the
 * reading may view it) with it; on an error nothing is kept and own is
 * freed. */
static wz_err reading_finish(reading *r, void *own, wzc_profile **out, wz_diag *diag)
{
	uint64_t trailer = r->header_done && !r->early ? get64(r->b + r->n - 8) : 0;
	wz_err e = reading_verdict(r, trailer, diag);
	if (e) {
		drop(r);
		free(own);
		return e;
	}
	if (r->view)
		r->p->backing = own; /* freed with the profile from here on */
	else
		free(own);
	/* the wzx header's profile hash is this checksum: known without
	 * serializing the profile again */
	wzc_profile_cache_set_hash(r->p, trailer);
	*out = r->p;
	return WZ_OK;
}

wz_err wzc_profile_parse(const void *bytes, size_t n, const char *origin, wzc_profile **out,
			 wz_diag *diag)
{
	reading r;
	*out = NULL;
	wz_err e = reading_start(&r, origin, 0, diag);
	if (e)
		return e;
	if (n)
		feed(&r, bytes, n, n);
	return reading_finish(&r, NULL, out, diag);
}

wz_err wzc_profile_read(const char *path, wzc_profile **out, wz_diag *diag)
{
	reading r;
	void *data;
	size_t n;
	*out = NULL;
	wz_err e = reading_start(&r, path, 1, diag);
	if (e)
		return e;
	/* hashed and checked piece by piece as it is read; the profile keeps
	 * the bytes (its arrays are views of them) */
	e = wz_read_file_fed(path, (size_t)1 << 34, feed, &r, &data, &n, diag);
	if (e) {
		XXH3_freeState(r.hash);
		XXH3_freeState(r.lhash);
		drop(&r);
		return e;
	}
	return reading_finish(&r, data, out, diag);
}

wz_err wzc_profile_open_head(const uint8_t *head, size_t nhead, size_t n, uint64_t trailer,
			     const char *origin, wzc_profile **out, wz_diag *diag)
{
	reading r;
	*out = NULL;
	wz_err e = reading_start(&r, origin, 0, diag);
	if (e)
		return e;
	r.head_only = 1;
	if (nhead)
		feed(&r, head, nhead, n);
	if (!r.early && r.header_done && r.version < 5)
		r.early = wz_diag_set(&r.early_diag, WZ_ERR_IO,
				      "%s: the file changed while it was read", origin);
	if (!r.early && r.header_done && r.hashed < r.H)
		r.early = wz_diag_set(&r.early_diag, WZ_ERR_INTERNAL,
				      "%s: the directory was not all given", origin);
	if ((e = reading_verdict(&r, trailer, diag))) {
		drop(&r);
		return e;
	}
	wzc_profile *p = r.p;
	p->loaded = calloc(r.L, 1);
	p->layer_hash = malloc(sizeof *p->layer_hash * r.L);
	if (!p->loaded || !p->layer_hash) {
		wzc_profile_free(p);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (uint32_t l = 0; l < r.L; l++)
		p->layer_hash[l] = get64(head + r.D + 8 * (size_t)l);
	wzc_profile_cache_set_hash(p, trailer);
	*out = p;
	return WZ_OK;
}

size_t wzc_profile_layers_at(size_t mlen, size_t L)
{
	return layers_at(mlen, L);
}

size_t wzc_profile_layer_offset(const wzc_profile *p, int l)
{
	return layers_at(strlen(p->model), (size_t)p->L) + (size_t)l * layer_bytes(p->R, p->P);
}

size_t wzc_profile_layer_size(const wzc_profile *p)
{
	return layer_bytes(p->R, p->P);
}

int wzc_profile_can_view(const void *bytes)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uintptr_t)bytes % 4 == 0;
#else
	(void)bytes;
	return 0;
#endif
}

wz_err wzc_profile_load_layer(wzc_profile *p, int l, const uint8_t *bytes, int view,
			      const char *origin, wz_diag *diag)
{
	if (!p->loaded || !p->layer_hash || l < 0 || l >= p->L || p->loaded[l])
		return wz_diag_set(diag, WZ_ERR_INTERNAL, "%s: layer %d cannot be loaded", origin, l);
	if (view && !wzc_profile_can_view(bytes))
		return wz_diag_set(diag, WZ_ERR_INTERNAL, "%s: layer %d cannot be viewed", origin, l);
	if (wzc_profile_checksum(bytes, layer_bytes(p->R, p->P)) != p->layer_hash[l])
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: layer %d: checksum mismatch: the profile is corrupted", origin, l);
	if (!view && (alloc_part(&p->latent[l], p->R) || alloc_part(&p->rope[l], p->P))) {
		free_part(&p->latent[l]);
		free_part(&p->rope[l]);
		memset(&p->latent[l], 0, sizeof p->latent[l]);
		memset(&p->rope[l], 0, sizeof p->rope[l]);
		p->latent[l].n = p->R;
		p->rope[l].n = p->P;
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	wz_err e = parse_layer(p, l, bytes, view, origin, diag);
	if (e) {
		if (!view) {
			free_part(&p->latent[l]);
			free_part(&p->rope[l]);
		}
		memset(&p->latent[l], 0, sizeof p->latent[l]);
		memset(&p->rope[l], 0, sizeof p->rope[l]);
		p->latent[l].n = p->R;
		p->rope[l].n = p->P;
		p->pos_cap[l] = 0;
		return e;
	}
	p->loaded[l] = 1;
	return WZ_OK;
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
