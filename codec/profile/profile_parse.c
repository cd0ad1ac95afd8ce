/* The wz profile file's parser (docs/wz-format.md), which trusts nothing
 * it reads: whole, as a file's pieces arrive or from memory, and from
 * version 5 a layer at a time (profile_layers.c reads the file). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/hot.h"
#include "codec/profile/profile.h"
#include "codec/profile/profile_cache.h"
#include "codec/profile/profile_internal.h"
#include "common/wz_io.h"

#include <xxhash.h>

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
	 * (codec/wz/wz_gemm.h); prepare writes eigenvectors with norms within
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

/* The largest magnitude of a prediction map's entry that a reader takes:
 * a map scales the latent's units to the position part's, and a real
 * model's are within a few units (the project model's maps, fitted by
 * prepare, are below 2); 2^20 leaves every fitted map far inside while a
 * damaged exponent, which makes the prediction overflow a float for any
 * latent of bf16 values, is refused. */
#define WZC_PRED_MAP_MAX 1048576.0f

/* Version 7: layer l's prediction (docs/wz-format.md, "Predicted position
 * part"), after its RoPE frequencies: the flag, the anchored tokens'
 * position part, the map. */
static wz_err parse_prediction(wzc_profile *p, int l, const uint8_t *q, int view,
			       const char *origin, wz_diag *diag)
{
	uint32_t on = get32(q);
	q += 4;
	if (on > 1)
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: layer %d: the prediction flag is %u, not 0 or 1", origin, l, on);
	if (on && !wzc_profile_undoes_rope(p, l))
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: layer %d predicts its position part but does not undo RoPE",
				   origin, l);
	wzc_part_profile *a = &p->rope_plain[l];
	a->n = p->P;
	if (!view && !a->mean && wzc_part_alloc(a, p->P))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	get_part_arrays(&q, a, view);
	wz_err e = check_part(a, origin, l, "anchored position", diag);
	if (e)
		return e;
	size_t nm = (size_t)p->R * (size_t)p->P;
	p->predicts[l] = (unsigned char)on;
	if (!on)
		return WZ_OK;
	float *map = view ? (float *)(void *)(uintptr_t)q : malloc(sizeof *map * (nm ? nm : 1));
	if (!map)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (!view)
		get_floats(q, map, nm);
	p->pred_map[l] = map;
	for (size_t i = 0; i < nm; i++)
		if (!(fabsf(map[i]) <= WZC_PRED_MAP_MAX)) /* NaN fails too */
			return wz_diag_set(diag, WZ_ERR_CORRUPT,
					   "%s: layer %d: prediction map entry (%zu, %zu) is %g: not a "
					   "finite number within +-%g",
					   origin, l, i / (size_t)p->P, i % (size_t)p->P, (double)map[i],
					   (double)WZC_PRED_MAP_MAX);
	return WZ_OK;
}

/* Versions 5 and 6: layer l's bytes at q parsed into the profile and
 * checked (its checksum already matched): the parts, then its position
 * cap, then (version 6) its RoPE inverse frequencies. */
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
	q = get_floats(q, &p->pos_cap[l], 1);
	if (!all_finite(&p->pos_cap[l], 1, 1))
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: layer %d: the position cap is negative, infinite or NaN", origin, l);
	if (p->version < 6)
		return WZ_OK;
	size_t npair = (size_t)(p->P / 2);
	double *f = p->rope_freq + (size_t)l * npair;
	q = get_doubles(q, f, npair);
	for (size_t i = 0; i < npair; i++)
		if (!(isfinite(f[i]) && f[i] >= 0))
			return wz_diag_set(diag, WZ_ERR_CORRUPT,
					   "%s: layer %d: RoPE frequency %zu is negative, infinite or NaN",
					   origin, l, i);
	if (p->version < 7)
		return WZ_OK;
	return parse_prediction(p, l, q, view, origin, diag);
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
		if (r->p->rope_plain)
			memset(r->p->rope_plain, 0, sizeof *r->p->rope_plain * r->L);
		if (r->p->pred_map)
			memset(r->p->pred_map, 0, sizeof *r->p->pred_map * r->L);
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
	if (r->n < WZC_PROF_HEADER + 8 || memcmp(b, wzc_profile_magic, 8) != 0) {
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
		if (L < 1 || L > WZC_PROF_MAX_L || mlen > WZC_MODEL_MAX) {
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
	if (L < 1 || L > WZC_PROF_MAX_L || R < 1 || R > WZC_PROF_MAX_R || P > WZC_PROF_MAX_P || bins != WZC_HIST_BINS ||
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
		if (b[WZC_PROF_HEADER + i] < 0x20 || b[WZC_PROF_HEADER + i] == 0x7f) {
			r->late = wz_diag_set(late, WZ_ERR_CORRUPT,
					      "%s: the model name has a control character", origin);
			return;
		}
	r->parsed = version >= 5 ? r->H : WZC_PROF_HEADER + pad4(mlen);
	r->lhashed = r->parsed;
	r->S = layer_bytes((int)version, (int)R, (int)P);
	/* the file's buffer is 64-byte aligned: the parts start 4-byte aligned */
	r->view = r->may_view && (uintptr_t)(b + r->parsed) % 4 == 0;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	r->view = 0;
#endif
	/* read in part: the layers' arrays come later, each its own way */
	wzc_profile *p = r->view || r->head_only ? wzc_profile_shell((int)L, (int)R, (int)P)
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
	if (version >= 7 && wzc_profile_pred_alloc(p)) {
		wzc_profile_free(p);
		r->early = wz_diag_set(&r->early_diag, WZ_ERR_NOMEM, "out of memory");
		return;
	}
	if (version >= 6 && !(p->rope_freq = calloc((size_t)L * (P / 2 ? P / 2 : 1), sizeof(double)))) {
		wzc_profile_free(p);
		r->early = wz_diag_set(&r->early_diag, WZ_ERR_NOMEM, "out of memory");
		return;
	}
	memcpy(p->model, b + WZC_PROF_HEADER, mlen);
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
	while (!r->late && r->p && r->units < (int)r->L) {
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
		size_t head = WZC_PROF_HEADER + pad4(WZC_MODEL_MAX);
		if (have < (n < head ? n : head))
			return;
		parse_header(r);
	}
	if (r->early)
		return;
	/* the hash first, on the piece just read */
	hash_to(r, have < n - 8 ? have : n - 8);
	if (r->head_only) /* the layers come apart (wzc_profile_load_layer) */
		return;
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
	if (wzc_profile_checksum(bytes, layer_bytes(p->version, p->R, p->P)) != p->layer_hash[l])
		return wz_diag_set(diag, WZ_ERR_CORRUPT,
				   "%s: layer %d: checksum mismatch: the profile is corrupted", origin, l);
	if (!view && (wzc_part_alloc(&p->latent[l], p->R) || wzc_part_alloc(&p->rope[l], p->P))) {
		wzc_part_free(&p->latent[l]);
		wzc_part_free(&p->rope[l]);
		memset(&p->latent[l], 0, sizeof p->latent[l]);
		memset(&p->rope[l], 0, sizeof p->rope[l]);
		p->latent[l].n = p->R;
		p->rope[l].n = p->P;
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	wz_err e = parse_layer(p, l, bytes, view, origin, diag);
	if (e) {
		if (!view) {
			wzc_part_free(&p->latent[l]);
			wzc_part_free(&p->rope[l]);
			if (p->rope_plain)
				wzc_part_free(&p->rope_plain[l]);
			if (p->pred_map)
				free(p->pred_map[l]);
		}
		if (p->rope_plain)
			memset(&p->rope_plain[l], 0, sizeof p->rope_plain[l]);
		if (p->pred_map)
			p->pred_map[l] = NULL;
		if (p->predicts)
			p->predicts[l] = 0;
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
