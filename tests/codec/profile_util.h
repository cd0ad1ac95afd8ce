/* Test helpers for the profile's tests: profiles compared value for
 * value, a synthetic profile made without preparing one, a file written
 * with its checksums made right again. */
#ifndef WZ_TEST_CODEC_PROFILE_UTIL_H
#define WZ_TEST_CODEC_PROFILE_UTIL_H

#include <stdio.h>
#include <string.h>

#include "codec/profile/profile.h"
#include "common/wz_io.h"

static inline int same_floats(const float *a, const float *b, size_t n)
{
	return memcmp(a, b, sizeof(float) * n) == 0;
}

static inline int same_part(const wzc_part_profile *a, const wzc_part_profile *b)
{
	size_t n = (size_t)a->n;
	return a->n == b->n && a->scale_ref == b->scale_ref && same_floats(a->mean, b->mean, n) &&
	       same_floats(a->basis, b->basis, n * n) && same_floats(a->var, b->var, n) &&
	       same_floats(a->sigma, b->sigma, n) && same_floats(a->weight, b->weight, n) &&
	       same_floats(a->anchor, b->anchor, n) && same_floats(a->hist, b->hist, WZC_HIST_BINS);
}

static inline int same_profile(const wzc_profile *a, const wzc_profile *b)
{
	if (a->L != b->L || a->R != b->R || a->P != b->P || a->version != b->version ||
	    strcmp(a->model, b->model) || a->ntokens != b->ntokens)
		return 0;
	for (int l = 0; l < a->L; l++)
		if (!same_part(&a->latent[l], &b->latent[l]) || !same_part(&a->rope[l], &b->rope[l]) ||
		    a->pos_cap[l] != b->pos_cap[l])
			return 0;
	return 1;
}

/* bytes written to path with their checksum made right again, so that
 * only the value checks can catch what was changed */
static inline int write_resealed(const char *path, uint8_t *b, size_t n)
{
	wzc_profile_reseal(b, n);
	wz_diag d;
	return wz_write_file_atomic(path, b, n, &d) ? -1 : 0;
}

/* A profile of unit bases whose layers differ (their means, histograms
 * and caps), without preparing one. */
static inline wzc_profile *synthetic(int L, int R, int P, const char *model)
{
	wzc_profile *p = wzc_profile_alloc(L, R, P);
	if (!p)
		return NULL;
	snprintf(p->model, sizeof p->model, "%s", model);
	p->ntokens = 1000;
	for (int l = 0; l < 2 * L; l++) {
		wzc_part_profile *q = l < L ? &p->latent[l] : &p->rope[l - L];
		q->scale_ref = 1;
		for (int i = 0; i < q->n; i++) {
			q->basis[(size_t)i * q->n + i] = 1;
			q->var[i] = q->sigma[i] = q->weight[i] = 1;
			q->mean[i] = q->anchor[i] = 0.25f * (float)((i + l) % 7) - 0.5f;
		}
		q->hist[l % WZC_HIST_BINS] = 1;
	}
	for (int l = 0; l < L; l++)
		p->pos_cap[l] = 0.125f * (float)(l + 1);
	return p;
}

#endif
