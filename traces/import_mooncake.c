/* Imports Mooncake's JSONL traces: prefix-block hashes become each
 * request's reusable prefix and chain requests into sessions, apart from
 * prefixes that many conversations share, which become shared prefixes
 * with ids of their own (wzplan-traffic(5)). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "common/wz_name.h"
#include "common/wz_str.h"
#include "traces/traffic_import.h"

/* An open-addressing map from block id to a value; ids are arbitrary 64-bit
 * integers from the file, so there is no dense index to use instead. */
typedef struct {
	int64_t *keys;
	int64_t *vals;
	unsigned char *used;
	size_t cap, n;
} id_map;

static uint64_t hash64(int64_t k)
{
	uint64_t x = (uint64_t)k;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static void map_free(id_map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof *m);
}

static int64_t *map_find(const id_map *m, int64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t h = hash64(key) & (m->cap - 1);; h = (h + 1) & (m->cap - 1)) {
		if (!m->used[h])
			return NULL;
		if (m->keys[h] == key)
			return &m->vals[h];
	}
}

static int map_put(id_map *m, int64_t key, int64_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		id_map g = { 0 };
		g.cap = m->cap ? m->cap * 2 : 4096;
		g.keys = malloc(sizeof *g.keys * g.cap);
		g.vals = malloc(sizeof *g.vals * g.cap);
		g.used = calloc(g.cap, 1);
		if (!g.keys || !g.vals || !g.used) {
			map_free(&g);
			return -1;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->used[i])
				map_put(&g, m->keys[i], m->vals[i]);
		map_free(m);
		*m = g;
	}
	size_t h = hash64(key) & (m->cap - 1);
	while (m->used[h] && m->keys[h] != key)
		h = (h + 1) & (m->cap - 1);
	if (!m->used[h]) {
		m->used[h] = 1;
		m->keys[h] = key;
		m->n++;
	}
	m->vals[h] = val;
	return 0;
}

typedef struct {
	double t_ms;
	int64_t input, output;
	size_t ids_off, nids;
	int line;
	size_t order; /* position in the file, so the sort is stable */
} record;

static int record_cmp(const void *a, const void *b)
{
	const record *x = a, *y = b;
	if (x->t_ms != y->t_ms)
		return x->t_ms < y->t_ms ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

typedef struct {
	record *recs;
	size_t nrecs, cap_recs;
	int64_t *ids;
	size_t nids, cap_ids;
} parsed;

static void parsed_free(parsed *p)
{
	free(p->recs);
	free(p->ids);
}

static wz_err json_tokens(json_t *obj, const char *name, const char *path, int line,
			  int64_t *out, wz_diag *diag)
{
	json_t *v = json_object_get(obj, name);
	if (!v)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field %s: missing", path, line,
				   name);
	char text[64];
	if (json_is_integer(v))
		snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_real(v))
		snprintf(text, sizeof text, "%.17g", json_real_value(v));
	else
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field %s: not a number", path, line,
				   name);
	return wzt_parse_tokens(text, path, line, name, out, diag);
}

static wz_err parse_line(json_t *obj, const char *path, int line, parsed *p, wz_diag *diag)
{
	if (!json_is_object(obj))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: not a JSON object", path, line);
	record r = { .line = line, .order = p->nrecs, .ids_off = p->nids };
	json_t *ts = json_object_get(obj, "timestamp");
	if (!ts)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field timestamp: missing", path,
				   line);
	if (!json_is_number(ts) || !isfinite(json_number_value(ts)) || json_number_value(ts) < 0)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field timestamp: not a non-negative number of milliseconds",
				   path, line);
	r.t_ms = json_number_value(ts);
	wz_err err = json_tokens(obj, "input_length", path, line, &r.input, diag);
	if (!err)
		err = json_tokens(obj, "output_length", path, line, &r.output, diag);
	if (err)
		return err;
	/* hash_ids may be absent (a length-only trace): no reuse is known. */
	json_t *ids = json_object_get(obj, "hash_ids");
	if (ids && !json_is_array(ids))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field hash_ids: not a list", path,
				   line);
	size_t n = ids ? json_array_size(ids) : 0;
	if (p->nids + n > p->cap_ids) {
		size_t cap = p->cap_ids ? p->cap_ids : 4096;
		while (cap < p->nids + n)
			cap *= 2;
		int64_t *grown = realloc(p->ids, sizeof *grown * cap);
		if (!grown)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
		p->ids = grown;
		p->cap_ids = cap;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *v = json_array_get(ids, i);
		if (!json_is_integer(v))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: field hash_ids: item %zu is not an integer", path,
					   line, i);
		p->ids[p->nids + i] = (int64_t)json_integer_value(v);
	}
	r.nids = n;
	if (p->nrecs == p->cap_recs) {
		size_t cap = p->cap_recs ? p->cap_recs * 2 : 1024;
		record *grown = realloc(p->recs, sizeof *grown * cap);
		if (!grown)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
		p->recs = grown;
		p->cap_recs = cap;
	}
	p->nids += n;
	p->recs[p->nrecs++] = r;
	return WZ_OK;
}

static wz_err parse_file(const char *path, const char *text, size_t size,
			 wzt_unsorted_policy policy, parsed *p, size_t *n_reordered, wz_diag *diag)
{
	double latest = -INFINITY, first = NAN;
	size_t moved = 0;
	int line = 0;
	for (size_t pos = 0; pos < size;) {
		const char *start = text + pos;
		const char *nl = memchr(start, '\n', size - pos);
		size_t len = nl ? (size_t)(nl - start) : size - pos;
		pos += len + (nl ? 1 : 0);
		line++;
		if (line == 1 && len >= 3 && !memcmp(start, "\xEF\xBB\xBF", 3)) {
			start += 3;
			len -= 3;
		}
		while (len && (start[len - 1] == '\r' || start[len - 1] == ' ' ||
			       start[len - 1] == '\t'))
			len--;
		size_t lead = 0;
		while (lead < len && (start[lead] == ' ' || start[lead] == '\t'))
			lead++;
		if (lead == len)
			continue;
		json_error_t jerr;
		json_t *obj = json_loadb(start, len, 0, &jerr);
		if (!obj)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: not JSON: %s (column %d)", path,
					   line, jerr.text, jerr.column);
		wz_err err = parse_line(obj, path, line, p, diag);
		json_decref(obj);
		if (err)
			return err;
		double t = p->recs[p->nrecs - 1].t_ms;
		if (t < latest)
			moved++;
		char shown[32];
		snprintf(shown, sizeof shown, "%.15g", t);
		err = wzt_check_span(&first, t / 1000, shown, path, line, "timestamp", diag);
		if (!err)
			err = wzt_check_order(&latest, t, policy, path, line, "timestamp", diag);
		if (err)
			return err;
	}
	if (moved)
		qsort(p->recs, p->nrecs, sizeof *p->recs, record_cmp);
	if (n_reordered)
		*n_reordered = moved;
	return WZ_OK;
}

/* Walks the requests in arrival order.  A block id seen in any earlier
 * request is cached (an infinite cache); a request reuses the longest
 * prefix of its ids all seen before.  Mooncake's ids are hashes of the
 * whole prefix up to the block, so a request whose ids start with every id
 * of an earlier request continues that request's conversation.  So does one
 * that starts with the ids of an earlier request's full blocks: the next
 * turn's block where the earlier one ended partway holds more tokens, so it
 * has a new id.
 *
 * But many conversations begin with the same blocks (a system prompt, a
 * tool list, a document): those are shared prefixes, not earlier turns.  A
 * block is a branch point when, anywhere in the trace, two different full
 * blocks follow it; a request continues a session only where its match
 * with that session's chain reaches past the request's last branch point.
 * Without that rule, a request of one or two blocks that holds only the
 * shared prompt becomes a chain that every later conversation joins. */
static int chain_put(id_map *chains, const int64_t *ids, size_t len, int64_t session)
{
	/* Chains longer than 2^20 blocks (half a billion tokens) cannot pass
	 * the token limit, so 20 bits of length suffice. */
	if (len == 0 || len >= 0xFFFFF)
		return 0;
	return map_put(chains, ids[len - 1], session << 20 | (int64_t)len);
}

/* Marks every block that two different full blocks follow somewhere in
 * the trace (branch: block id -> 1). */
static int find_branches(const parsed *p, int block_tokens, id_map *branch)
{
	id_map next = { 0 }; /* block id -> the full block that first followed it */
	int fail = 0;
	for (size_t i = 0; i < p->nrecs && !fail; i++) {
		const record *r = &p->recs[i];
		/* no hash_ids anywhere leaves p->ids NULL, and NULL + 0 is
		 * undefined in C (UBSan stops a sanitizer build on it) */
		const int64_t *ids = p->ids ? p->ids + r->ids_off : NULL;
		size_t full = (size_t)(r->input / block_tokens);
		if (full > r->nids)
			full = r->nids;
		for (size_t k = 0; k + 1 < full && !fail; k++) {
			int64_t *v = map_find(&next, ids[k]);
			if (!v)
				fail = map_put(&next, ids[k], ids[k + 1]);
			else if (*v != ids[k + 1])
				fail = map_put(branch, ids[k], 1);
		}
	}
	map_free(&next);
	return fail;
}

static wz_err account(const char *path, const parsed *p, int block_tokens, wzt_traffic *t,
		      wzt_mooncake_stats *stats, wz_diag *diag)
{
	id_map seen = { 0 };   /* block id -> 1 */
	id_map chains = { 0 }; /* last id of a request's ids -> session * 2^20 + length */
	id_map branch = { 0 }; /* shared-prefix branch points -> 1 */
	id_map shared_ids = { 0 }; /* last block of a shared prefix -> its dense id */
	int64_t next_session = 0, next_shared = 0;
	wz_err err = WZ_OK;
	stats->blocks = stats->hit_blocks = stats->shared_blocks = 0;
	if (find_branches(p, block_tokens, &branch))
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
	for (size_t i = 0; i < p->nrecs && !err; i++) {
		const record *r = &p->recs[i];
		/* one id per block of the input: more ids than the input fills
		 * would name blocks past its end (and a shared prefix longer
		 * than the request) */
		int64_t fills = (r->input + block_tokens - 1) / block_tokens;
		if ((int64_t)r->nids > fills) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: field hash_ids: %zu blocks of %d tokens, but "
					  "input_length %lld fills %lld",
					  path, r->line, r->nids, block_tokens, (long long)r->input,
					  (long long)fills);
			break;
		}
		/* no hash_ids anywhere leaves p->ids NULL, and NULL + 0 is
		 * undefined in C (UBSan stops a sanitizer build on it) */
		const int64_t *ids = p->ids ? p->ids + r->ids_off : NULL;
		size_t hit = 0;
		while (hit < r->nids && map_find(&seen, ids[hit]))
			hit++;
		size_t shared = 0; /* blocks up to the last branch point */
		for (size_t k = 0; k < r->nids; k++)
			if (map_find(&branch, ids[k]))
				shared = k + 1;
		int64_t session = -1;
		for (size_t len = r->nids; len > shared && session < 0; len--) {
			int64_t *v = map_find(&chains, ids[len - 1]);
			if (v && (size_t)(*v & 0xFFFFF) == len)
				session = *v >> 20;
		}
		if (session < 0)
			session = next_session++;
		for (size_t k = 0; k < r->nids && !err; k++)
			if (map_put(&seen, ids[k], 1))
				err = wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
		size_t full = (size_t)(r->input / block_tokens);
		if (!err && (chain_put(&chains, ids, r->nids, session) ||
			     (full < r->nids && chain_put(&chains, ids, full, session))))
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
		stats->blocks += (int64_t)r->nids;
		stats->hit_blocks += (int64_t)hit;
		stats->shared_blocks += (int64_t)(shared < hit ? shared : hit);
		int64_t prefix = (int64_t)hit * block_tokens;
		if (prefix > r->input)
			prefix = r->input;
		wzt_request req = { .session = session,
				    .arrival_s = r->t_ms / 1000.0,
				    .prompt_tokens = r->input - prefix,
				    .output_tokens = r->output,
				    .prefix_tokens = prefix };
		/* The blocks up to the last branch point are a prefix other
		 * conversations share; Mooncake's id of its last block names the
		 * whole of it (ids hash the prefix up to the block).  Each earlier
		 * branch point ends a shorter shared prefix that this one begins
		 * with: the chain of them is the request's path in the prefix
		 * tree, so a prefix cache can hit the part two prefixes share. */
		int32_t parent = -1;
		for (size_t k = 0; !err && k < shared; k++) {
			if (k + 1 < shared && !map_find(&branch, ids[k]))
				continue;
			int64_t *sid = map_find(&shared_ids, ids[k]);
			if (!sid && next_shared < INT32_MAX - 1) {
				if (map_put(&shared_ids, ids[k], next_shared++))
					err = wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
				sid = map_find(&shared_ids, ids[k]);
			}
			if (!sid)
				break;
			int64_t tokens = (int64_t)(k + 1) * block_tokens;
			int last = k + 1 == shared;
			if (last) {
				req.shared_prefix = (int32_t)*sid;
				req.shared_prefix_tokens = tokens < r->input ? tokens : r->input;
				tokens = req.shared_prefix_tokens;
			}
			if (!err)
				err = wzt_traffic_prefix_put(t, (int32_t)*sid, parent, tokens, !last,
							     (int)i + 1, diag);
			parent = (int32_t)*sid;
		}
		if (!err)
			err = wzt_traffic_push(t, &req, diag);
	}
	map_free(&seen);
	map_free(&chains);
	map_free(&branch);
	map_free(&shared_ids);
	if (!err)
		err = wzt_traffic_prefixes_done(t, diag);
	return err;
}

wz_err wzt_import_mooncake(const char *path, int block_tokens, wzt_unsorted_policy policy,
			   wzt_traffic **out, size_t *n_reordered, wzt_mooncake_stats *stats,
			   wz_diag *diag)
{
	*out = NULL;
	if (n_reordered)
		*n_reordered = 0;
	if (block_tokens <= 0)
		block_tokens = 512;
	wzt_mooncake_stats local;
	if (!stats)
		stats = &local;
	char *text;
	size_t size;
	wz_err err = wz_read_file(path, WZT_MAX_FILE_BYTES, &text, &size, diag);
	if (err)
		return err;
	parsed p = { 0 };
	err = wz_text_check(text, size, path, diag);
	if (!err)
		err = parse_file(path, text, size, policy, &p, n_reordered, diag);
	free(text);
	wzt_traffic *t = NULL;
	if (!err) {
		wz_buf src = { 0 };
		wz_buf_printf(&src, "mooncake:%s", path);
		t = wzt_traffic_new(path, wz_buf_str(&src));
		wz_buf_free(&src);
		if (!t)
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	if (!err)
		err = account(path, &p, block_tokens, t, stats, diag);
	parsed_free(&p);
	if (!err)
		err = wzt_traffic_finish(t, NULL, diag);
	if (err) {
		wzt_traffic_free(t);
		return err;
	}
	*out = t;
	return WZ_OK;
}
