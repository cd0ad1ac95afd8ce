/* The per-profile cache of derived data (codec/profile/profile_cache.h): one mutex
 * guards building; what is built is never changed or moved until the
 * profile is freed, so readers hold no lock while using it. */
#include "codec/profile/profile_cache.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NGRIDS 16

typedef struct {
	int have_d;
	double d[WZC_NSET];
	float *tab[WZC_NSET]; /* levels [N] then thresholds [N - 1] */
} part_cache;

typedef struct shared {
	int kind;
	size_t record_bytes;
	int refs;
	void *obj;
	void (*free_fn)(void *);
	struct shared *next;
} shared;

struct wzc_profile_cache {
	pthread_mutex_t lock;
	int L;
	part_cache *parts; /* [L][2] */
	int have_hash;
	uint64_t hash;
	int ngrids;
	double grid_bits[NGRIDS];
	size_t grid_bytes[NGRIDS];
	shared *objs;
};

wzc_profile_cache *wzc_profile_cache_new(int L)
{
	wzc_profile_cache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->parts = calloc((size_t)(L > 0 ? L : 1) * 2, sizeof *c->parts);
	if (!c->parts || pthread_mutex_init(&c->lock, NULL)) {
		free(c->parts);
		free(c);
		return NULL;
	}
	c->L = L;
	return c;
}

void wzc_profile_cache_free(wzc_profile_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < 2 * c->L; i++)
		for (int j = 0; j < WZC_NSET; j++)
			free(c->parts[i].tab[j]);
	/* objects still referenced belong to codecs that outlive their
	 * profile, which the API forbids; free what is left all the same */
	for (shared *s = c->objs, *next; s; s = next) {
		next = s->next;
		s->free_fn(s->obj);
		free(s);
	}
	free(c->parts);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static part_cache *part_of(const wzc_profile *p, int l, int part)
{
	wzc_profile_cache *c = p->cache;
	if (!c || l < 0 || l >= c->L || part < 0 || part > 1)
		return NULL;
	return &c->parts[2 * l + part];
}

/* The tables come from a layer's plan, which refuses a layer not read
 * (wzc_wz_plan_layer_get): here it is always there. */
static const float *hist_of(const wzc_profile *p, int l, int part)
{
	assert(wzc_profile_has_layer(p, l));
	return part ? p->rope[l].hist : p->latent[l].hist;
}

int wzc_profile_levels_distortion(const wzc_profile *p, int l, int part, double d[WZC_NSET])
{
	part_cache *pc = part_of(p, l, part);
	if (!pc)
		return wzc_levels_distortion(hist_of(p, l, part), p->version, d);
	pthread_mutex_lock(&p->cache->lock);
	int have = pc->have_d;
	if (have)
		memcpy(d, pc->d, sizeof pc->d);
	pthread_mutex_unlock(&p->cache->lock);
	if (have)
		return 0;
	/* Fitted outside the lock, so that threads planning different layers
	 * fit at once; the fit that gives the distortions gives the small
	 * tables too: keep them rather than fitting each again when a plan
	 * asks. */
	double dd[WZC_NSET];
	float *tables[WZC_NSET] = { NULL };
	int ok = 1;
	for (int j = 0; j < WZC_NSET; j++) {
		uint32_t N = wzc_level_count(j);
		if (N <= WZC_LLOYD_MAX && !(tables[j] = malloc(sizeof(float) * 2 * N)))
			ok = 0;
	}
	if (!ok || wzc_levels_fit_all(hist_of(p, l, part), p->version, dd, tables) != 0) {
		ok = 0;
		if (wzc_levels_distortion(hist_of(p, l, part), p->version, dd)) {
			/* out of memory: nothing cached, so that it is not kept */
			for (int j = 0; j < WZC_NSET; j++)
				free(tables[j]);
			memcpy(d, dd, sizeof dd);
			return -1;
		}
	}
	pthread_mutex_lock(&p->cache->lock);
	if (!pc->have_d) { /* else another thread got there first: the same values */
		memcpy(pc->d, dd, sizeof dd);
		pc->have_d = 1;
		for (int j = 0; ok && j < WZC_NSET; j++)
			if (tables[j] && !pc->tab[j]) {
				pc->tab[j] = tables[j];
				tables[j] = NULL;
			}
	}
	memcpy(d, pc->d, sizeof pc->d);
	pthread_mutex_unlock(&p->cache->lock);
	for (int j = 0; j < WZC_NSET; j++)
		free(tables[j]);
	return 0;
}

int wzc_profile_levels_table(const wzc_profile *p, int l, int part, int j, float *levels,
			     float *thresholds)
{
	part_cache *pc = part_of(p, l, part);
	uint32_t N = wzc_level_count(j);
	if (pc) {
		pthread_mutex_lock(&p->cache->lock);
		const float *t = pc->tab[j];
		pthread_mutex_unlock(&p->cache->lock);
		if (!t) { /* fitted outside the lock, kept unless another thread was first */
			float *mine = malloc(sizeof(float) * 2 * N);
			if (mine && wzc_levels_table(hist_of(p, l, part), p->version, j, mine, mine + N)) {
				free(mine); /* out of memory: not cached */
				mine = NULL;
			}
			if (mine) {
				pthread_mutex_lock(&p->cache->lock);
				if (!pc->tab[j]) {
					pc->tab[j] = mine;
					mine = NULL;
				}
				t = pc->tab[j];
				pthread_mutex_unlock(&p->cache->lock);
				free(mine);
			}
		}
		if (t) {
			memcpy(levels, t, sizeof(float) * N);
			memcpy(thresholds, t + N, sizeof(float) * (N - 1));
			return 0;
		}
	}
	/* no cache, or no memory for it: compute in place */
	return wzc_levels_table(hist_of(p, l, part), p->version, j, levels, thresholds);
}

wz_err wzc_profile_hash(const wzc_profile *p, uint64_t *hash, wz_diag *diag)
{
	wzc_profile_cache *c = p->cache;
	if (c) {
		pthread_mutex_lock(&c->lock);
		int have = c->have_hash;
		*hash = c->hash;
		pthread_mutex_unlock(&c->lock);
		if (have)
			return WZ_OK;
	}
	uint8_t *b;
	size_t n;
	wz_err e = wzc_profile_serialize(p, &b, &n, diag);
	if (e)
		return e;
	uint64_t h = 0;
	for (int i = 0; n >= 8 && i < 8; i++)
		h |= (uint64_t)b[n - 8 + i] << (8 * i);
	free(b);
	*hash = h;
	if (c)
		wzc_profile_cache_set_hash((wzc_profile *)p, h);
	return WZ_OK;
}

void wzc_profile_cache_set_hash(wzc_profile *p, uint64_t hash)
{
	wzc_profile_cache *c = p->cache;
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->hash = hash;
	c->have_hash = 1;
	pthread_mutex_unlock(&c->lock);
}

int wzc_profile_grid_get(const wzc_profile *p, double bits, size_t *record_bytes)
{
	wzc_profile_cache *c = p->cache;
	int found = 0;
	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	for (int i = 0; i < c->ngrids && !found; i++)
		if (c->grid_bits[i] == bits) {
			*record_bytes = c->grid_bytes[i];
			found = 1;
		}
	pthread_mutex_unlock(&c->lock);
	return found;
}

void wzc_profile_grid_put(const wzc_profile *p, double bits, size_t record_bytes)
{
	wzc_profile_cache *c = p->cache;
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	/* a small ring: a process asks for a handful of rates */
	int i = c->ngrids < NGRIDS ? c->ngrids++ : (int)(record_bytes % NGRIDS);
	c->grid_bits[i] = bits;
	c->grid_bytes[i] = record_bytes;
	pthread_mutex_unlock(&c->lock);
}

static shared *find(wzc_profile_cache *c, int kind, size_t record_bytes)
{
	for (shared *s = c->objs; s; s = s->next)
		if (s->kind == kind && s->record_bytes == record_bytes)
			return s;
	return NULL;
}

void *wzc_profile_shared_get(const wzc_profile *p, int kind, size_t record_bytes)
{
	wzc_profile_cache *c = p->cache;
	if (!c)
		return NULL;
	pthread_mutex_lock(&c->lock);
	shared *s = find(c, kind, record_bytes);
	void *obj = NULL;
	if (s) {
		s->refs++;
		obj = s->obj;
	}
	pthread_mutex_unlock(&c->lock);
	return obj;
}

int wzc_profile_shared_put(const wzc_profile *p, int kind, size_t record_bytes, void **obj,
			   void (*free_fn)(void *))
{
	wzc_profile_cache *c = p->cache;
	if (!c)
		return 0;
	pthread_mutex_lock(&c->lock);
	shared *s = find(c, kind, record_bytes), *fresh = NULL;
	if (s) {
		/* built twice by racing threads: keep the first, drop ours */
		s->refs++;
		free_fn(*obj);
		*obj = s->obj;
	} else if ((fresh = malloc(sizeof *fresh))) {
		*fresh = (shared){ kind, record_bytes, 1, *obj, free_fn, c->objs };
		c->objs = fresh;
	}
	pthread_mutex_unlock(&c->lock);
	return s || fresh;
}

void wzc_profile_shared_release(const wzc_profile *p, int kind, size_t record_bytes)
{
	wzc_profile_cache *c = p->cache;
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	shared **at = &c->objs;
	while (*at && !((*at)->kind == kind && (*at)->record_bytes == record_bytes))
		at = &(*at)->next;
	shared *s = *at;
	if (s && --s->refs == 0) {
		*at = s->next;
		s->free_fn(s->obj);
		free(s);
	}
	pthread_mutex_unlock(&c->lock);
}
