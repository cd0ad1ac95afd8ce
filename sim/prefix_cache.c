/* The shared prefix cache's radix tree of segments, its tiers and their LRU
 * lists (prefix_cache.h). */
#include "sim/prefix_cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void wzs_prefix_cache_init(wzs_prefix_cache *c, const double capacity[WZS_PREFIX_TIERS],
			   const double token_bytes[WZS_PREFIX_TIERS])
{
	memset(c, 0, sizeof *c);
	for (int t = 0; t < WZS_PREFIX_TIERS; t++) {
		c->capacity[t] = capacity[t];
		c->token_bytes[t] = token_bytes[t];
		c->head[t] = c->tail[t] = -1;
	}
	c->free_entry = -1;
	c->block_tokens = 1;
}

void wzs_prefix_cache_free(wzs_prefix_cache *c)
{
	if (!c)
		return;
	free(c->entries);
	free(c->slots);
	c->entries = NULL;
	c->slots = NULL;
}

static uint32_t slot_of(uint32_t id, uint32_t nslots)
{
	uint32_t x = id * 0x9E3779B1u;
	return (x ^ (x >> 16)) & (nslots - 1);
}

/* The slot holding id's entry, or the empty slot where it would go. */
static uint32_t find_slot(const wzs_prefix_cache *c, int32_t id)
{
	uint32_t h = slot_of((uint32_t)id, c->nslots);
	while (c->slots[h] >= 0 && c->entries[c->slots[h]].id != id)
		h = (h + 1) & (c->nslots - 1);
	return h;
}

static int32_t find(const wzs_prefix_cache *c, int32_t id)
{
	return c->nslots ? c->slots[find_slot(c, id)] : -1;
}

static int grow_slots(wzs_prefix_cache *c)
{
	uint32_t n = c->nslots ? c->nslots * 2 : 64;
	int32_t *old = c->slots;
	uint32_t oldn = c->nslots;
	c->slots = malloc((size_t)n * sizeof *c->slots);
	if (!c->slots) {
		c->slots = old;
		return -1;
	}
	memset(c->slots, 0xff, (size_t)n * sizeof *c->slots);
	c->nslots = n;
	for (uint32_t i = 0; i < oldn; i++)
		if (old[i] >= 0)
			c->slots[find_slot(c, c->entries[old[i]].id)] = old[i];
	free(old);
	return 0;
}

/* Removes id's slot, shifting later ones of its probe run back so that
 * every lookup still finds its entry without tombstones. */
static void slot_remove(wzs_prefix_cache *c, int32_t id)
{
	uint32_t mask = c->nslots - 1, hole = find_slot(c, id);
	c->slots[hole] = -1;
	for (uint32_t i = (hole + 1) & mask; c->slots[i] >= 0; i = (i + 1) & mask) {
		uint32_t home = slot_of((uint32_t)c->entries[c->slots[i]].id, c->nslots);
		/* Move it into the hole when the hole lies on its way from home. */
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			c->slots[hole] = c->slots[i];
			c->slots[i] = -1;
			hole = i;
		}
	}
}

static void unlink_entry(wzs_prefix_cache *c, int32_t e)
{
	wzs_prefix_entry *x = &c->entries[e];
	int t = x->tier;
	if (t < 0)
		return; /* in no list */
	if (x->prev >= 0)
		c->entries[x->prev].next = x->next;
	else
		c->head[t] = x->next;
	if (x->next >= 0)
		c->entries[x->next].prev = x->prev;
	else
		c->tail[t] = x->prev;
	c->used[t] -= (double)x->held * c->token_bytes[t];
	if (--c->held[t] == 0)
		c->used[t] = 0; /* no rounding left behind */
	x->prev = x->next = -1;
	x->tier = -1;
}

static void append_entry(wzs_prefix_cache *c, int32_t e, int t)
{
	wzs_prefix_entry *x = &c->entries[e];
	x->tier = (int8_t)t;
	x->next = -1;
	x->prev = c->tail[t];
	if (c->tail[t] >= 0)
		c->entries[c->tail[t]].next = e;
	else
		c->head[t] = e;
	c->tail[t] = e;
	c->used[t] += (double)x->held * c->token_bytes[t];
	c->held[t]++;
}

static void drop_entry(wzs_prefix_cache *c, int32_t e)
{
	slot_remove(c, c->entries[e].id);
	c->entries[e].next = c->free_entry;
	c->free_entry = e;
	c->dropped++;
}

static int lower_tier_holds(const wzs_prefix_cache *c, int t)
{
	for (int u = t + 1; u < WZS_PREFIX_TIERS; u++)
		if (c->capacity[u] > 0)
			return 1;
	return 0;
}

/* Out of the last tier a victim goes block by block from its end, only as
 * many blocks as make room for `bytes` more, as vLLM's block LRU evicts a
 * sequence's last blocks first: the head of a prefix stays useful to every
 * request that begins with it.  With block_tokens 0 it goes whole, as
 * SGLang's radix cache evicts leaf nodes. */
static void trim_victim(wzs_prefix_cache *c, int32_t victim, int t, double bytes)
{
	wzs_prefix_entry *x = &c->entries[victim];
	double excess = c->used[t] + bytes - c->capacity[t];
	int64_t b = c->block_tokens;
	int64_t cut = b > 0 ? (int64_t)ceil(excess / c->token_bytes[t] / (double)b) * b : x->held;
	if (cut >= x->held) {
		unlink_entry(c, victim);
		drop_entry(c, victim);
		return;
	}
	x->held -= cut;
	c->used[t] -= (double)cut * c->token_bytes[t];
}

/* Puts an unlinked entry in the first tier from `from` that can hold it,
 * making room there by moving that tier's least recent entries down (or,
 * in the last tier, out block by block). */
static void place(wzs_prefix_cache *c, int32_t e, int from)
{
	for (int t = from; t < WZS_PREFIX_TIERS; t++) {
		double bytes = (double)c->entries[e].held * c->token_bytes[t];
		if (!(bytes <= c->capacity[t]) || c->capacity[t] <= 0)
			continue;
		int last = !lower_tier_holds(c, t);
		while (c->used[t] + bytes > c->capacity[t] && c->head[t] >= 0) {
			int32_t victim = c->head[t];
			if (last) {
				trim_victim(c, victim, t, bytes);
				continue;
			}
			unlink_entry(c, victim);
			c->demotions++;
			place(c, victim, t + 1);
		}
		append_entry(c, e, t);
		return;
	}
	drop_entry(c, e);
}

/* Walks the path from the root through the segments held, up to the first
 * one missing or not held whole: the tokens found in each tier (at most
 * `tokens` in all), the entries found (found may be NULL) and the slowest
 * tier read. */
static wzs_prefix_tier walk(const wzs_prefix_cache *c, const wzs_prefix_link *path, int n,
			    int64_t tokens, int64_t hit_tokens[WZS_PREFIX_TIERS], int32_t *found,
			    int *nfound)
{
	for (int t = 0; t < WZS_PREFIX_TIERS; t++)
		hit_tokens[t] = 0;
	*nfound = 0;
	int64_t at = 0;
	wzs_prefix_tier slowest = WZS_PREFIX_MISS;
	for (int i = 0; i < n && i < WZS_PREFIX_MAX_DEPTH && at < tokens; i++) {
		int32_t e = find(c, path[i].id);
		if (e < 0)
			break;
		const wzs_prefix_entry *x = &c->entries[e];
		if (x->start != at || x->held <= 0 || x->tier < 0)
			break;
		int64_t take = x->held < tokens - at ? x->held : tokens - at;
		hit_tokens[x->tier] += take;
		at += take;
		if ((wzs_prefix_tier)x->tier > slowest)
			slowest = (wzs_prefix_tier)x->tier;
		if (found)
			found[*nfound] = e;
		(*nfound)++;
		if (x->start + x->held < x->end)
			break;
	}
	return slowest;
}

int64_t wzs_prefix_cache_held(const wzs_prefix_cache *c, const wzs_prefix_link *path, int n,
			      int64_t tokens, wzs_prefix_tier *slowest)
{
	int64_t per[WZS_PREFIX_TIERS];
	int nfound;
	*slowest = walk(c, path, n, tokens, per, NULL, &nfound);
	return per[0] + per[1] + per[2];
}

wzs_prefix_tier wzs_prefix_cache_lookup_path(wzs_prefix_cache *c, const wzs_prefix_link *path,
					     int n, int64_t tokens,
					     int64_t hit_tokens[WZS_PREFIX_TIERS])
{
	int32_t found[WZS_PREFIX_MAX_DEPTH];
	int nfound;
	wzs_prefix_tier slowest = walk(c, path, n, tokens, hit_tokens, found, &nfound);
	/* All out of their lists first, so that making room for one cannot
	 * evict another; then deepest first, so that every segment ends more
	 * recent than the segments below it. */
	for (int k = 0; k < nfound; k++)
		unlink_entry(c, found[k]);
	for (int k = nfound - 1; k >= 0; k--)
		place(c, found[k], WZS_PREFIX_HBM);
	return slowest;
}

wzs_prefix_tier wzs_prefix_cache_lookup(wzs_prefix_cache *c, int32_t id, int64_t tokens,
					int64_t *hit_tokens)
{
	wzs_prefix_link one = { id, tokens };
	int32_t e = find(c, id);
	if (e >= 0 && c->entries[e].end > one.end)
		one.end = c->entries[e].end;
	int64_t per[WZS_PREFIX_TIERS];
	wzs_prefix_tier tier = wzs_prefix_cache_lookup_path(c, &one, 1, tokens, per);
	*hit_tokens = per[0] + per[1] + per[2];
	return tier;
}

wzs_prefix_tier wzs_prefix_cache_peek(const wzs_prefix_cache *c, int32_t id)
{
	int32_t e = find(c, id);
	return e < 0 ? WZS_PREFIX_MISS : (wzs_prefix_tier)c->entries[e].tier;
}

/* The entry of segment `id`, made if missing; -1 when out of memory. */
static int32_t entry_for(wzs_prefix_cache *c, int32_t id, int64_t start, int64_t end)
{
	int32_t e = find(c, id);
	if (e >= 0)
		return e;
	if ((uint32_t)(c->nentries + 1) * 2 > c->nslots && grow_slots(c))
		return -1;
	if (c->free_entry >= 0) {
		e = c->free_entry;
		c->free_entry = c->entries[e].next;
	} else {
		if (c->nentries == c->capentries) {
			int32_t cap = c->capentries ? c->capentries * 2 : 64;
			wzs_prefix_entry *g = realloc(c->entries, (size_t)cap * sizeof *g);
			if (!g)
				return -1;
			c->entries = g;
			c->capentries = cap;
		}
		e = c->nentries++;
	}
	c->entries[e] = (wzs_prefix_entry){ .id = id, .tier = -1, .prev = -1, .next = -1,
					    .start = start, .end = end, .held = 0 };
	c->slots[find_slot(c, id)] = e;
	return e;
}

wz_err wzs_prefix_cache_insert_path(wzs_prefix_cache *c, const wzs_prefix_link *path, int n,
				    int64_t tokens)
{
	if (n > WZS_PREFIX_MAX_DEPTH)
		n = WZS_PREFIX_MAX_DEPTH;
	int32_t placed[WZS_PREFIX_MAX_DEPTH];
	int nplaced = 0;
	int64_t start = 0;
	for (int i = 0; i < n && start < tokens; i++) {
		int64_t end = path[i].end;
		if (end <= start)
			break; /* a path that does not grow: its input was checked, so stop */
		int32_t e = entry_for(c, path[i].id, start, end);
		if (e < 0)
			return WZ_ERR_NOMEM;
		wzs_prefix_entry *x = &c->entries[e];
		if (x->start != start)
			break;
		unlink_entry(c, e);
		if (end > x->end)
			x->end = end;
		int64_t have = (tokens < x->end ? tokens : x->end) - x->start;
		if (have > x->held)
			x->held = have;
		placed[nplaced++] = e;
		start = x->end;
	}
	for (int k = nplaced - 1; k >= 0; k--)
		place(c, placed[k], WZS_PREFIX_HBM);
	return WZ_OK;
}

wz_err wzs_prefix_cache_insert(wzs_prefix_cache *c, int32_t id, int64_t tokens)
{
	if (tokens <= 0)
		return WZ_OK;
	wzs_prefix_link one = { id, tokens };
	return wzs_prefix_cache_insert_path(c, &one, 1, tokens);
}
