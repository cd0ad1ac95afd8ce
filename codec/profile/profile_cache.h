/* What is derived from a profile once and kept with it for its life: the
 * level tables and their distortions per (layer, part), the profile's
 * hash, the wz grid of each wzx rate, and the wz plans and wzx coders of
 * the record sizes in use.  Built lazily, safe to use from many threads;
 * the results are exactly what computing them afresh gives (the cache
 * never changes what is computed, only how often). */
#ifndef WZC_PROFILE_CACHE_H
#define WZC_PROFILE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "codec/profile/levels.h"
#include "codec/profile/profile.h"
#include "common/wz_error.h"

typedef struct wzc_profile_cache wzc_profile_cache;

/* Made with the profile (wzc_profile_alloc) and freed with it. */
wzc_profile_cache *wzc_profile_cache_new(int L);
void wzc_profile_cache_free(wzc_profile_cache *c);

/* wzc_levels_distortion of part (0 latent, 1 position) of layer l.  0,
 * or -1 when out of memory (nothing is cached then: a later call with
 * memory gets the true values). */
int wzc_profile_levels_distortion(const wzc_profile *p, int l, int part, double d[WZC_NSET] /* OUT */);
/* wzc_levels_table of count index j for part of layer l, copied out; 0,
 * or -1 when out of memory. */
int wzc_profile_levels_table(const wzc_profile *p, int l, int part, int j, float *levels /* OUT */,
			     float *thresholds /* OUT */);

/* The profile's hash as the wzx header stores it (the checksum field of
 * its file); computed once.  A profile read from a file knows it already. */
wz_err wzc_profile_hash(const wzc_profile *p, uint64_t *hash /* OUT */, wz_diag *diag);
void wzc_profile_cache_set_hash(wzc_profile *p, uint64_t hash);

/* A remembered value per key (the wz grid of a wzx rate): 1 and *value when
 * known. */
int wzc_profile_grid_get(const wzc_profile *p, double bits, size_t *record_bytes /* OUT */);
void wzc_profile_grid_put(const wzc_profile *p, double bits, size_t record_bytes);

/* Shared objects per (kind, record size), reference counted: get returns
 * one with a reference taken, or NULL when none is cached; put offers a
 * new one and returns 1 when the cache now holds it with a reference for
 * the caller (it frees it with free_fn when the last reference goes; when
 * another was cached meanwhile, ours is freed at once and *obj replaced by
 * that one), 0 when it could not (the caller keeps ownership); release
 * drops a reference.  Used for wz plans, which are read-only once built. */
enum { WZC_CACHE_PLAN = 0 };
void *wzc_profile_shared_get(const wzc_profile *p, int kind, size_t record_bytes);
int wzc_profile_shared_put(const wzc_profile *p, int kind, size_t record_bytes, void **obj,
			   void (*free_fn)(void *));
void wzc_profile_shared_release(const wzc_profile *p, int kind, size_t record_bytes);

#endif
