/* A replica's shared prefix cache: prefixes that many sessions begin with
 * (system prompts, documents, tool lists) kept in three tiers, GPU memory,
 * CPU memory and SSD, each with its capacity in bytes of the format that
 * tier stores, least recently used first out: a node pushed out of one
 * tier moves to the next, and out of the last it goes block by block.  So
 * a smaller format holds more prefixes in the same bytes.
 *
 * Prefixes form a radix tree: a prefix is a path of segments from the
 * root, each segment named by the id of the prefix that ends with it (the
 * prefix up to a point where requests diverge), so a request whose prefix
 * shares its first segments with a cached one hits those (a partial hit).
 * Every use of a segment uses its ancestors, which are made more recent
 * than it, so the least recent node of a tier is a leaf of what the tier
 * holds, and eviction takes leaves first, as SGLang's radix cache does. */
#ifndef WZS_PREFIX_CACHE_H
#define WZS_PREFIX_CACHE_H

#include <stdint.h>

#include "common/wz_error.h"

typedef enum {
	WZS_PREFIX_MISS = -1,
	WZS_PREFIX_HBM = 0,
	WZS_PREFIX_CPU = 1,
	WZS_PREFIX_SSD = 2,
} wzs_prefix_tier;

#define WZS_PREFIX_TIERS 3

typedef struct {
	int32_t id;
	int8_t tier;
	int32_t prev, next;           /* in its tier's list, least recent at the head */
	int64_t start, end;           /* the prefix's tokens [start, end) this segment covers */
	int64_t held;                 /* tokens held from start: end - start, or fewer once
					 its last blocks went out of the last tier */
} wzs_prefix_entry;

/* One segment of a prefix's path: the id naming it and the prefix's
 * tokens at its end.  A path starts at the root (token 0); each segment
 * starts where the one before it ends. */
typedef struct {
	int32_t id;
	int64_t end;
} wzs_prefix_link;

#define WZS_PREFIX_MAX_DEPTH 64

typedef struct {
	double capacity[WZS_PREFIX_TIERS];   /* bytes */
	double token_bytes[WZS_PREFIX_TIERS];/* bytes of one token in the tier's format */
	double used[WZS_PREFIX_TIERS];
	int32_t head[WZS_PREFIX_TIERS], tail[WZS_PREFIX_TIERS];
	long held[WZS_PREFIX_TIERS];         /* prefixes in each tier */
	wzs_prefix_entry *entries;
	int32_t nentries, capentries, free_entry;
	int32_t *slots;                      /* id -> entry, open addressing; -1 empty */
	uint32_t nslots;                     /* a power of two, at least twice the entries */
	int64_t block_tokens;                /* eviction's unit out of the last tier (1 by default;
						0: whole segments) */
	unsigned long long demotions, dropped;
} wzs_prefix_cache;

/* Sets up an empty cache.  A tier of capacity 0 holds nothing. */
void wzs_prefix_cache_init(wzs_prefix_cache *c, const double capacity[WZS_PREFIX_TIERS],
			   const double token_bytes[WZS_PREFIX_TIERS]);
void wzs_prefix_cache_free(wzs_prefix_cache *c);

/* Looks up a prefix given by its path of n segments (at most
 * WZS_PREFIX_MAX_DEPTH) for a request that begins with `tokens` of it: the
 * segments held from the root on, up to the first one missing or not held
 * whole.  Returns the slowest tier it read from, or WZS_PREFIX_MISS when
 * not even the first segment is held; hit_tokens[tier] gets the tokens
 * found in each tier (at most `tokens` in all).  What it found moves to
 * the GPU tier, most recent, as serving engines load a prefix before they
 * use it; a miss changes nothing. */
wzs_prefix_tier wzs_prefix_cache_lookup_path(wzs_prefix_cache *c, const wzs_prefix_link *path,
					     int n, int64_t tokens,
					     int64_t hit_tokens[WZS_PREFIX_TIERS] /* OUT */);

/* A request has computed the first `tokens` of the prefix with this path:
 * its segments go into the highest tier that can hold each, most recent,
 * pushing least recently used ones down.  A segment larger than every tier
 * is not kept.  Fails only when out of memory. */
wz_err wzs_prefix_cache_insert_path(wzs_prefix_cache *c, const wzs_prefix_link *path, int n,
				    int64_t tokens);

/* The same for a prefix of one segment, `id`, of `tokens` tokens: a hit
 * returns the tier and sets *hit_tokens to the tokens held (at most
 * `tokens`). */
wzs_prefix_tier wzs_prefix_cache_lookup(wzs_prefix_cache *c, int32_t id, int64_t tokens,
					int64_t *hit_tokens /* OUT */);
wz_err wzs_prefix_cache_insert(wzs_prefix_cache *c, int32_t id, int64_t tokens);

/* The tier that holds segment `id`, or WZS_PREFIX_MISS; changes nothing
 * (a router asking which replica has a prefix does not use it). */
wzs_prefix_tier wzs_prefix_cache_peek(const wzs_prefix_cache *c, int32_t id);

/* Tokens of the path's prefix a lookup would find (at most `tokens`), and
 * in *slowest the slowest tier it would read; changes nothing. */
int64_t wzs_prefix_cache_held(const wzs_prefix_cache *c, const wzs_prefix_link *path, int n,
			      int64_t tokens, wzs_prefix_tier *slowest /* OUT */);

#endif
