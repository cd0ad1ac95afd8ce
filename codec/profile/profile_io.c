/* The wz profile (docs/wz-format.md): allocation, serialization and
 * writing; its parsers are profile_parse.c and profile_layers.c. */
#include <stdlib.h>
#include <string.h>

#include "codec/profile/profile.h"
#include "codec/profile/profile_cache.h"
#include "codec/profile/profile_internal.h"
#include "common/wz_io.h"

#include <xxhash.h>

void wzc_part_free(wzc_part_profile *q)
{
	free(q->mean);
	free(q->basis);
	free(q->var);
	free(q->sigma);
	free(q->weight);
	free(q->anchor);
	free(q->hist);
}

int wzc_part_alloc(wzc_part_profile *q, int n)
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

int wzc_profile_pred_alloc(wzc_profile *p)
{
	size_t L = (size_t)p->L;
	p->predicts = calloc(L, 1);
	p->rope_plain = calloc(L, sizeof *p->rope_plain);
	p->pred_map = calloc(L, sizeof *p->pred_map);
	return p->predicts && p->rope_plain && p->pred_map ? 0 : -1;
}

/* A profile of the shape with no arrays yet. */
wzc_profile *wzc_profile_shell(int L, int R, int P)
{
	wzc_profile *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->version = WZC_PROFILE_VERSION_PLAIN;
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
	wzc_profile *p = wzc_profile_shell(L, R, P);
	if (!p)
		return NULL;
	for (int l = 0; l < L; l++)
		if (wzc_part_alloc(&p->latent[l], R) || wzc_part_alloc(&p->rope[l], P)) {
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
			wzc_part_free(&p->latent[l]);
		if (p->rope)
			wzc_part_free(&p->rope[l]);
		if (p->rope_plain)
			wzc_part_free(&p->rope_plain[l]);
		if (p->pred_map)
			free(p->pred_map[l]);
	}
	free(p->backing);
	free(p->predicts);
	free(p->rope_plain);
	free(p->pred_map);
	wzc_profile_cache_free(p->cache);
	free(p->latent);
	free(p->rope);
	free(p->pos_cap);
	free(p->rope_freq);
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
	memcpy(b, wzc_profile_magic, 8);
	put32(b + 8, (uint32_t)pr->version);
	put32(b + 12, 0);
	put32(b + 16, (uint32_t)pr->L);
	put32(b + 20, (uint32_t)pr->R);
	put32(b + 24, (uint32_t)pr->P);
	put32(b + 28, WZC_HIST_BINS);
	put32(b + 32, (uint32_t)pr->query_weighted);
	put32(b + 36, (uint32_t)mlen);
	put64(b + 40, pr->ntokens);
	memcpy(b + WZC_PROF_HEADER, pr->model, mlen);
	uint8_t *p = b + WZC_PROF_HEADER + pad4(mlen);
	if (pr->version >= 5) {
		/* the layers, each with its cap; the directory of their hashes;
		 * the trailing checksum over the header and directory */
		size_t S = layer_bytes(pr->version, pr->R, pr->P), H = layers_at(mlen, (size_t)pr->L);
		size_t npair = (size_t)(pr->P / 2);
		for (int l = 0; l < pr->L; l++) {
			uint8_t *q = b + H + (size_t)l * S;
			q = put_part(q, &pr->latent[l]);
			q = put_part(q, &pr->rope[l]);
			q = put_floats(q, &pr->pos_cap[l], 1);
			if (pr->version >= 6 && pr->rope_freq) /* else zeros: no pair rotated */
				put_doubles(q, pr->rope_freq + (size_t)l * npair, npair);
			q += freq_bytes(pr->version, pr->P);
			if (pr->version >= 7) {
				/* a layer that does not predict: its position part
				 * again, and a map of zeros */
				int on = wzc_profile_predicts(pr, l);
				put32(q, (uint32_t)on);
				q = put_part(q + 4, on ? &pr->rope_plain[l] : &pr->rope[l]);
				if (on)
					put_floats(q, pr->pred_map[l], (size_t)pr->P * (size_t)pr->R);
			}
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
	if (n < WZC_PROF_HEADER + 8)
		return;
	uint32_t version = get32(b + 8), L = get32(b + 16), R = get32(b + 20), P = get32(b + 24);
	uint32_t mlen = get32(b + 36);
	if (version < 5) {
		put64(b + n - 8, wzc_profile_checksum(b, n - 8));
		return;
	}
	if (L < 1 || L > WZC_PROF_MAX_L || mlen > WZC_MODEL_MAX || R > WZC_PROF_MAX_R || P > WZC_PROF_MAX_P)
		return;
	size_t H = layers_at(mlen, L), S = layer_bytes((int)version, (int)R, (int)P);
	if (n < H + 8)
		return;
	for (uint32_t l = 0; l < L && H + (size_t)(l + 1) * S <= n - 8; l++)
		put64(b + dir_at(mlen) + 8 * (size_t)l, wzc_profile_checksum(b + H + (size_t)l * S, S));
	put64(b + n - 8, wzc_profile_checksum(b, H));
}

size_t wzc_profile_layer_offset(const wzc_profile *p, int l)
{
	return layers_at(strlen(p->model), (size_t)p->L) +
	       (size_t)l * layer_bytes(p->version, p->R, p->P);
}

size_t wzc_profile_layer_size(const wzc_profile *p)
{
	return layer_bytes(p->version, p->R, p->P);
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
