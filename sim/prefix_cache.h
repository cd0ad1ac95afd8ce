/* A replica's shared prefix cache: prefixes that many sessions begin with
 * (system prompts, documents, tool lists) kept in three tiers, GPU memory,
 * CPU memory and SSD, each with its capacity in bytes of the format that
 * tier stores, least recently used first out: a prefix pushed out of one
 * tier moves to the next, and out of the last it is gone.  So a smaller
 * format holds more prefixes in the same bytes. */
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
	int64_t tokens;
} wzs_prefix_entry;

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
	unsigned long long demotions, dropped;
} wzs_prefix_cache;

/* Sets up an empty cache.  A tier of capacity 0 holds nothing. */
void wzs_prefix_cache_init(wzs_prefix_cache *c, const double capacity[WZS_PREFIX_TIERS],
			   const double token_bytes[WZS_PREFIX_TIERS]);
void wzs_prefix_cache_free(wzs_prefix_cache *c);

/* Looks prefix `id` up for a request that begins with `tokens` of it.  A
 * hit returns the tier it was found in, sets *hit_tokens to the tokens
 * held (at most `tokens`) and moves the prefix to the GPU tier, most
 * recent, as serving engines load a prefix before they use it; a miss
 * returns WZS_PREFIX_MISS and changes nothing. */
wzs_prefix_tier wzs_prefix_cache_lookup(wzs_prefix_cache *c, int32_t id, int64_t tokens,
					int64_t *hit_tokens /* OUT */);

/* The tier that holds prefix `id`, or WZS_PREFIX_MISS; changes nothing
 * (a router asking which replica has a prefix does not use it). */
wzs_prefix_tier wzs_prefix_cache_peek(const wzs_prefix_cache *c, int32_t id);

/* A request has computed `tokens` of prefix `id`: it goes into the highest
 * tier that can hold it, most recent, pushing least recently used
 * prefixes down.  A prefix larger than every tier is not kept.  Fails only
 * when out of memory. */
wz_err wzs_prefix_cache_insert(wzs_prefix_cache *c, int32_t id, int64_t tokens);

#endif
