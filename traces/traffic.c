/* The normalized request table: reading and checking it, writing it
 * atomically, and the helpers importers use to build one (traffic.h). */
#include "traces/traffic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_csv.h"
#include "common/wz_io.h"
#include "common/wz_str.h"
#include "traces/traffic_import.h"

static const char *const columns[] = { "session",       "turn",          "arrival_s",
				       "prompt_tokens", "output_tokens", "prefix_tokens",
				       "shared_prefix", "shared_prefix_tokens", "shared_prefix_chain" };
enum { COL_SESSION, COL_TURN, COL_ARRIVAL, COL_PROMPT, COL_OUTPUT, COL_PREFIX, COL_SHARED,
       COL_SHARED_TOKENS, COL_CHAIN, NCOLS };

typedef struct {
	wzt_traffic t;
	size_t cap, cap_prefixes;
} traffic_impl;

wzt_traffic *wzt_traffic_new(const char *origin, const char *source)
{
	traffic_impl *impl = calloc(1, sizeof *impl);
	if (!impl)
		return NULL;
	impl->t.origin = strdup(origin ? origin : "");
	impl->t.source = strdup(source ? source : "");
	if (!impl->t.origin || !impl->t.source) {
		wzt_traffic_free(&impl->t);
		return NULL;
	}
	return &impl->t;
}

void wzt_traffic_free(wzt_traffic *traffic)
{
	if (!traffic)
		return;
	free(traffic->requests);
	free(traffic->prefixes);
	free(traffic->origin);
	free(traffic->source);
	/* Every table comes from wzt_traffic_new, so t is the first member of
	 * its traffic_impl. */
	free((traffic_impl *)traffic);
}

wz_err wzt_traffic_push(wzt_traffic *traffic, const wzt_request *req, wz_diag *diag)
{
	traffic_impl *impl = (traffic_impl *)traffic;
	if (traffic->n == impl->cap) {
		size_t cap = impl->cap ? impl->cap * 2 : 1024;
		wzt_request *grown = realloc(traffic->requests, sizeof *grown * cap);
		if (!grown)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", traffic->origin);
		traffic->requests = grown;
		impl->cap = cap;
	}
	traffic->requests[traffic->n++] = *req;
	return WZ_OK;
}

wz_err wzt_traffic_prefix_put(wzt_traffic *traffic, int32_t id, int32_t parent, int64_t tokens,
			      int exact, int line, wz_diag *diag)
{
	traffic_impl *impl = (traffic_impl *)traffic;
	if (traffic->nprefixes == impl->cap_prefixes) {
		size_t cap = impl->cap_prefixes ? impl->cap_prefixes * 2 : 256;
		wzt_prefix *grown = realloc(traffic->prefixes, sizeof *grown * cap);
		if (!grown)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", traffic->origin);
		traffic->prefixes = grown;
		impl->cap_prefixes = cap;
	}
	traffic->prefixes[traffic->nprefixes++] =
		(wzt_prefix){ .id = id, .parent = parent, .tokens = tokens, .exact = exact, .line = line };
	return WZ_OK;
}

static int prefix_cmp(const void *a, const void *b)
{
	const wzt_prefix *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

wz_err wzt_traffic_prefixes_done(wzt_traffic *traffic, wz_diag *diag)
{
	wzt_prefix *p = traffic->prefixes;
	size_t n = traffic->nprefixes, out = 0;
	if (n == 0)
		return WZ_OK;
	qsort(p, n, sizeof *p, prefix_cmp);
	const char *o = traffic->origin;
	for (size_t i = 0; i < n; i++) {
		if (out == 0 || p[out - 1].id != p[i].id) {
			p[out++] = p[i];
			continue;
		}
		wzt_prefix *m = &p[out - 1];
		if (m->parent != p[i].parent)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: field shared_prefix_chain: prefix %ld begins with "
					   "prefix %ld here but with %ld at line %d",
					   o, p[i].line, (long)p[i].id, (long)p[i].parent,
					   (long)m->parent, m->line);
		if ((m->exact && p[i].exact && m->tokens != p[i].tokens) ||
		    (m->exact && !p[i].exact && p[i].tokens > m->tokens) ||
		    (!m->exact && p[i].exact && m->tokens > p[i].tokens))
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: field shared_prefix_chain: prefix %ld has %lld tokens "
					   "here but %lld at line %d",
					   o, p[i].line, (long)p[i].id, (long long)p[i].tokens,
					   (long long)m->tokens, m->line);
		if (p[i].exact || (!m->exact && p[i].tokens > m->tokens)) {
			m->tokens = p[i].tokens;
			m->exact |= p[i].exact;
		}
	}
	traffic->nprefixes = out;
	for (size_t i = 0; i < out; i++) {
		const wzt_prefix *up = p[i].parent >= 0 ? wzt_traffic_prefix(traffic, p[i].parent) : NULL;
		if (up && up->tokens >= p[i].tokens)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: field shared_prefix_chain: prefix %ld (%lld tokens) "
					   "is not longer than prefix %ld it begins with (%lld tokens)",
					   o, p[i].line, (long)p[i].id, (long long)p[i].tokens,
					   (long)up->id, (long long)up->tokens);
	}
	return WZ_OK;
}

wz_err wzt_traffic_overlay(wzt_traffic *dst, const wzt_traffic *src, wz_diag *diag)
{
	int64_t base = 0, id_base = 0, top = 0;
	for (size_t i = 0; i < dst->n; i++) {
		const wzt_request *r = &dst->requests[i];
		if (r->session >= base)
			base = r->session + 1;
		if (r->shared_prefix_tokens > 0 && r->shared_prefix >= id_base)
			id_base = (int64_t)r->shared_prefix + 1;
	}
	for (size_t i = 0; i < dst->nprefixes; i++)
		if (dst->prefixes[i].id >= id_base)
			id_base = (int64_t)dst->prefixes[i].id + 1;
	for (size_t i = 0; i < src->n; i++)
		if (src->requests[i].shared_prefix_tokens > 0 && src->requests[i].shared_prefix >= top)
			top = src->requests[i].shared_prefix;
	for (size_t i = 0; i < src->nprefixes; i++)
		if (src->prefixes[i].id > top)
			top = src->prefixes[i].id;
	if (id_base + top >= INT32_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: too many shared prefixes in all (ids past %ld)", src->origin,
				   (long)INT32_MAX - 1);
	for (size_t i = 0; i < src->n; i++) {
		wzt_request r = src->requests[i];
		r.session += base;
		if (r.shared_prefix_tokens > 0)
			r.shared_prefix += (int32_t)id_base;
		wz_err err = wzt_traffic_push(dst, &r, diag);
		if (err)
			return err;
	}
	for (size_t i = 0; i < src->nprefixes; i++) {
		const wzt_prefix *p = &src->prefixes[i];
		wz_err err = wzt_traffic_prefix_put(dst, p->id + (int32_t)id_base,
						    p->parent >= 0 ? p->parent + (int32_t)id_base : -1,
						    p->tokens, p->exact, p->line, diag);
		if (err)
			return err;
	}
	return wzt_traffic_prefixes_done(dst, diag);
}

const wzt_prefix *wzt_traffic_prefix(const wzt_traffic *traffic, int32_t id)
{
	size_t lo = 0, hi = traffic->nprefixes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (traffic->prefixes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < traffic->nprefixes && traffic->prefixes[lo].id == id ? &traffic->prefixes[lo]
									  : NULL;
}

/* Merge sort: stable, so requests with equal times keep their file order
 * (qsort makes no such promise). */
static void merge_sort(wzt_request *a, wzt_request *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	merge_sort(a, tmp, h);
	merge_sort(a + h, tmp, n - h);
	if (a[h - 1].arrival_s <= a[h].arrival_s)
		return;
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = a[j].arrival_s < a[i].arrival_s ? a[j++] : a[i++];
	while (i < h)
		tmp[k++] = a[i++];
	memcpy(a, tmp, sizeof *a * k);
}

/* Rows earlier than the latest arrival listed before them. */
static size_t count_out_of_order(const wzt_traffic *t)
{
	size_t n = 0;
	double latest = -INFINITY;
	for (size_t i = 0; i < t->n; i++) {
		if (t->requests[i].arrival_s < latest)
			n++;
		else
			latest = t->requests[i].arrival_s;
	}
	return n;
}

size_t wzt_traffic_sort(wzt_traffic *traffic)
{
	size_t moved = count_out_of_order(traffic);
	if (!moved)
		return 0;
	wzt_request *tmp = malloc(sizeof *tmp * traffic->n);
	if (tmp) {
		merge_sort(traffic->requests, tmp, traffic->n);
		free(tmp);
	} else {
		/* Out of memory for the buffer: an insertion sort is slow but
		 * stable and needs none. */
		for (size_t i = 1; i < traffic->n; i++) {
			wzt_request r = traffic->requests[i];
			size_t j = i;
			while (j > 0 && traffic->requests[j - 1].arrival_s > r.arrival_s) {
				traffic->requests[j] = traffic->requests[j - 1];
				j--;
			}
			traffic->requests[j] = r;
		}
	}
	return moved;
}

typedef struct {
	int64_t key;
	int64_t dense;
	int32_t turns;
	int used;
} session_slot;

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

wz_err wzt_traffic_renumber(wzt_traffic *traffic, wz_diag *diag)
{
	size_t cap = 16;
	while (cap < traffic->n * 2)
		cap *= 2;
	session_slot *slots = calloc(cap, sizeof *slots);
	if (!slots)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", traffic->origin);
	int64_t next = 0;
	for (size_t i = 0; i < traffic->n; i++) {
		wzt_request *r = &traffic->requests[i];
		size_t h = (size_t)mix64((uint64_t)r->session) & (cap - 1);
		while (slots[h].used && slots[h].key != r->session)
			h = (h + 1) & (cap - 1);
		if (!slots[h].used)
			slots[h] = (session_slot){ r->session, next++, 0, 1 };
		r->session = slots[h].dense;
		r->turn = slots[h].turns++;
	}
	free(slots);
	return WZ_OK;
}

void wzt_traffic_rebase(wzt_traffic *traffic)
{
	if (!traffic->n)
		return;
	double first = traffic->requests[0].arrival_s;
	for (size_t i = 1; i < traffic->n; i++)
		if (traffic->requests[i].arrival_s < first)
			first = traffic->requests[i].arrival_s;
	for (size_t i = 0; i < traffic->n; i++)
		traffic->requests[i].arrival_s -= first;
}

wz_err wzt_csv_load(const char *path, wz_csv **out, wz_diag *diag)
{
	char *text;
	size_t n;
	wz_err err = wz_read_file(path, WZT_MAX_FILE_BYTES, &text, &n, diag);
	if (err)
		return err;
	size_t bom = n >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
	err = wz_csv_parse(text + bom, n - bom, path, out, diag);
	free(text);
	return err;
}

wz_err wzt_check_order(double *latest, double t, wzt_unsorted_policy policy, const char *origin,
		       int line, const char *field, wz_diag *diag)
{
	if (t < *latest && policy == WZT_UNSORTED_REFUSE)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field %s: %.17g is earlier than a record before it "
				   "(%.17g); records must be in arrival order (or sort them)",
				   origin, line, field, t, *latest);
	if (t > *latest)
		*latest = t;
	return WZ_OK;
}

wz_err wzt_check_span(double *first, double t_s, const char *text, const char *origin, int line,
		      const char *field, wz_diag *diag)
{
	if (isnan(*first))
		*first = t_s;
	if (!(fabs(t_s - *first) <= WZT_MAX_SPAN_S))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field %s: '%.40s' is %.3g s from the first record's "
				   "time; a trace spans at most %.0f s (366 days)",
				   origin, line, field, text, fabs(t_s - *first), WZT_MAX_SPAN_S);
	return WZ_OK;
}

wz_err wzt_traffic_finish(wzt_traffic *traffic, size_t *n_reordered, wz_diag *diag)
{
	size_t moved = wzt_traffic_sort(traffic);
	if (n_reordered)
		*n_reordered = moved;
	wzt_traffic_rebase(traffic);
	return wzt_traffic_renumber(traffic, diag);
}

wz_err wzt_parse_tokens(const char *text, const char *origin, int line, const char *field,
			int64_t *out, wz_diag *diag)
{
	long v;
	double d;
	if (wz_parse_long(text, &v) != 0) {
		/* Some exports write counts as floats ("12.0"); accept those
		 * that are whole numbers. */
		if (wz_parse_double(text, &d) != 0 || d != floor(d) || fabs(d) > 9.0e15)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: field %s: '%s' is not a whole number of tokens",
					   origin, line, field, text);
		v = (long)d;
	}
	if (v < 0)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field %s: negative token count %ld",
				   origin, line, field, v);
	if (v > WZT_MAX_TOKENS)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field %s: %ld tokens is absurd (more than 10^8)", origin,
				   line, field, v);
	*out = v;
	return WZ_OK;
}

static wz_err parse_row(const wz_csv *csv, const wz_csv_row *row, const int *col,
			wzt_request *r, wz_diag *diag)
{
	const char *o = csv->origin;
	int line = row->line;
	long v;
	const char *s = wz_csv_field(row, col[COL_SESSION]);
	if (wz_parse_long(s, &v) != 0 || v < 0)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field session: '%s' is not a non-negative integer", o, line,
				   s);
	/* The simulator indexes sessions with 32-bit ids. */
	if (v >= INT32_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field session: %ld is too large (at most %ld)", o, line, v,
				   (long)INT32_MAX - 1);
	r->session = v;
	s = wz_csv_field(row, col[COL_TURN]);
	if (wz_parse_long(s, &v) != 0 || v < 0 || v > INT32_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field turn: '%s' is not a non-negative integer", o, line, s);
	r->turn = (int32_t)v;
	s = wz_csv_field(row, col[COL_ARRIVAL]);
	/* wz_parse_double refuses nan and inf as well as text. */
	if (wz_parse_double(s, &r->arrival_s) != 0)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field arrival_s: '%s' is not a finite number of seconds", o,
				   line, s);
	if (r->arrival_s < 0)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: field arrival_s: negative time %s", o,
				   line, s);
	if (r->arrival_s > WZT_MAX_SPAN_S)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field arrival_s: %s s is past the longest trace, %.0f s "
				   "(366 days)",
				   o, line, s, WZT_MAX_SPAN_S);
	wz_err err = wzt_parse_tokens(wz_csv_field(row, col[COL_PROMPT]), o, line,
				      "prompt_tokens", &r->prompt_tokens, diag);
	if (!err)
		err = wzt_parse_tokens(wz_csv_field(row, col[COL_OUTPUT]), o, line, "output_tokens",
				       &r->output_tokens, diag);
	r->prefix_tokens = 0;
	if (!err && col[COL_PREFIX] >= 0)
		err = wzt_parse_tokens(wz_csv_field(row, col[COL_PREFIX]), o, line, "prefix_tokens",
				       &r->prefix_tokens, diag);
	r->shared_prefix = 0;
	r->shared_prefix_tokens = 0;
	if (err || col[COL_SHARED] < 0)
		return err;
	/* An empty shared_prefix: the request begins with no shared prefix. */
	s = wz_csv_field(row, col[COL_SHARED]);
	const char *st = wz_csv_field(row, col[COL_SHARED_TOKENS]);
	if ((!s || !*s) && (!st || !*st || !strcmp(st, "0")))
		return WZ_OK;
	if (wz_parse_long(s, &v) != 0 || v < 0 || v >= INT32_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field shared_prefix: '%s' is not an id from 0 to %ld", o, line,
				   s ? s : "", (long)INT32_MAX - 1);
	r->shared_prefix = (int32_t)v;
	err = wzt_parse_tokens(st, o, line, "shared_prefix_tokens", &r->shared_prefix_tokens, diag);
	if (!err && r->shared_prefix_tokens > r->prefix_tokens + r->prompt_tokens)
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s:%d: field shared_prefix_tokens: %lld is more than the request's "
				  "context (prefix_tokens + prompt_tokens = %lld)",
				  o, line, (long long)r->shared_prefix_tokens,
				  (long long)(r->prefix_tokens + r->prompt_tokens));
	return err;
}

/* A row's shared_prefix_chain: the shared prefixes its shared prefix
 * begins with, outermost first, as id:tokens separated by '/'; each
 * longer than the one before and shorter than the row's shared prefix. */
static wz_err parse_chain(wzt_traffic *t, const char *s, const wzt_request *r, const char *o,
			  int line, wz_diag *diag)
{
	if (!s || !*s)
		return r->shared_prefix_tokens > 0
			       ? wzt_traffic_prefix_put(t, r->shared_prefix, -1, r->shared_prefix_tokens,
							0, line, diag)
			       : WZ_OK;
	if (r->shared_prefix_tokens <= 0)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field shared_prefix_chain: '%s' without a shared prefix", o,
				   line, s);
	int32_t parent = -1;
	int64_t last = 0;
	for (const char *at = s; *at;) {
		char *end;
		long id = strtol(at, &end, 10);
		long long tokens = -1;
		if (end != at && *end == ':') {
			const char *tk = end + 1;
			tokens = strtoll(tk, &end, 10);
			if (end == tk)
				tokens = -1;
		}
		if (tokens < 0 || id < 0 || id >= INT32_MAX || (*end && *end != '/') ||
		    id == r->shared_prefix)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: field shared_prefix_chain: '%s' is not a list of "
					   "id:tokens of other prefixes separated by '/'",
					   o, line, s);
		if (tokens <= last || tokens >= r->shared_prefix_tokens)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: field shared_prefix_chain: prefix %ld's %lld tokens "
					   "are not between the one before (%lld) and the shared "
					   "prefix's %lld",
					   o, line, id, tokens, (long long)last,
					   (long long)r->shared_prefix_tokens);
		wz_err err = wzt_traffic_prefix_put(t, (int32_t)id, parent, tokens, 1, line, diag);
		if (err)
			return err;
		parent = (int32_t)id;
		last = tokens;
		at = *end ? end + 1 : end;
	}
	return wzt_traffic_prefix_put(t, r->shared_prefix, parent, r->shared_prefix_tokens, 0, line,
				      diag);
}

wz_err wzt_traffic_read(const char *path, wzt_unsorted_policy policy, wzt_traffic **out,
			size_t *n_reordered, wz_diag *diag)
{
	*out = NULL;
	if (n_reordered)
		*n_reordered = 0;
	wz_csv *csv;
	wz_err err = wzt_csv_load(path, &csv, diag);
	if (err)
		return err;
	if (csv->nrows == 0) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:1: empty file: no header line", path);
	}
	int col[NCOLS];
	for (int c = 0; c < NCOLS; c++)
		col[c] = wz_csv_column(csv, columns[c]);
	for (int c = 0; c < NCOLS; c++) {
		/* prefix_tokens may be left out: no reuse is known; so may the
		 * shared prefix, but its two columns go together. */
		if ((c == COL_SHARED || c == COL_SHARED_TOKENS) &&
		    (col[COL_SHARED] < 0) != (col[COL_SHARED_TOKENS] < 0)) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: header: column %s without %s", path,
					  csv->rows[0].line,
					  col[COL_SHARED] < 0 ? "shared_prefix_tokens" : "shared_prefix",
					  col[COL_SHARED] < 0 ? "shared_prefix" : "shared_prefix_tokens");
			wz_csv_free(csv);
			return err;
		}
		if (c == COL_CHAIN && col[c] >= 0 && col[COL_SHARED] < 0) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: header: column shared_prefix_chain without shared_prefix",
					  path, csv->rows[0].line);
			wz_csv_free(csv);
			return err;
		}
		if (col[c] < 0 && c != COL_PREFIX && c != COL_SHARED && c != COL_SHARED_TOKENS &&
		    c != COL_CHAIN) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: header: no column '%s' (want "
					  "session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens)",
					  path, csv->rows[0].line, columns[c]);
			wz_csv_free(csv);
			return err;
		}
	}
	wzt_traffic *t = wzt_traffic_new(path, "wzplan-traffic");
	if (!t) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	double latest = -INFINITY;
	int64_t top_session = -1;
	int top_line = 0;
	for (int i = 1; i < csv->nrows && !err; i++) {
		const wz_csv_row *row = &csv->rows[i];
		wzt_request r = { 0 };
		err = parse_row(csv, row, col, &r, diag);
		if (!err && r.session > top_session)
			top_session = r.session, top_line = row->line;
		if (!err && col[COL_CHAIN] >= 0)
			err = parse_chain(t, wz_csv_field(row, col[COL_CHAIN]), &r, path, row->line,
					  diag);
		if (err)
			break;
		err = wzt_check_order(&latest, r.arrival_s, policy, path, row->line, "arrival_s",
				      diag);
		if (!err)
			err = wzt_traffic_push(t, &r, diag);
	}
	/* The simulator keeps a slot for every id up to the largest. */
	long most = (long)t->n > WZT_MAX_SPARSE_SESSION ? (long)t->n : WZT_MAX_SPARSE_SESSION;
	if (!err && top_session >= most)
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s:%d: field session: %lld is too large for %zu rows (ids are "
				  "dense, 0, 1, ...; at most %ld or the row count)",
				  path, top_line, (long long)top_session, t->n,
				  WZT_MAX_SPARSE_SESSION);
	wz_csv_free(csv);
	if (!err)
		err = wzt_traffic_prefixes_done(t, diag);
	if (err) {
		wzt_traffic_free(t);
		return err;
	}
	size_t moved = wzt_traffic_sort(t);
	if (n_reordered)
		*n_reordered = moved;
	*out = t;
	return WZ_OK;
}

/* Shortest decimal that reads back as the same double, so a round trip is
 * exact without printing 17 digits for every time. */
static void format_seconds(double v, char *buf, size_t n)
{
	for (int digits = 9; digits <= 17; digits++) {
		snprintf(buf, n, "%.*g", digits, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* ",id:tokens/id:tokens" of the prefixes the row's shared prefix begins with. */
static void write_chain(wz_buf *b, const wzt_traffic *traffic, const wzt_request *r)
{
	const wzt_prefix *up[64];
	int n = 0;
	const wzt_prefix *x = r->shared_prefix_tokens > 0
				      ? wzt_traffic_prefix(traffic, r->shared_prefix)
				      : NULL;
	while (x && x->parent >= 0 && n < 64 && (x = wzt_traffic_prefix(traffic, x->parent)))
		up[n++] = x;
	wz_buf_puts(b, ",");
	for (int k = n - 1; k >= 0; k--)
		wz_buf_printf(b, "%ld:%lld%s", (long)up[k]->id, (long long)up[k]->tokens,
			      k ? "/" : "");
}

wz_err wzt_traffic_write(const char *path, const wzt_traffic *traffic, wz_diag *diag)
{
	wz_buf b = { 0 };
	/* The shared prefix columns only when a row has one, so that tables
	 * without them keep the bytes they always had. */
	int shared = 0, chains = 0;
	for (size_t i = 0; i < traffic->n && !shared; i++)
		shared = traffic->requests[i].shared_prefix_tokens > 0;
	for (size_t i = 0; i < traffic->nprefixes && !chains; i++)
		chains = traffic->prefixes[i].parent >= 0;
	wz_buf_puts(&b, shared ? "session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens,"
				 "shared_prefix,shared_prefix_tokens"
			       : "session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens");
	wz_buf_puts(&b, chains ? ",shared_prefix_chain\n" : "\n");
	for (size_t i = 0; i < traffic->n && !b.failed; i++) {
		const wzt_request *r = &traffic->requests[i];
		char t[40];
		format_seconds(r->arrival_s, t, sizeof t);
		wz_buf_printf(&b, "%lld,%ld,%s,%lld,%lld,%lld", (long long)r->session,
			      (long)r->turn, t, (long long)r->prompt_tokens,
			      (long long)r->output_tokens, (long long)r->prefix_tokens);
		if (shared && r->shared_prefix_tokens > 0)
			wz_buf_printf(&b, ",%ld,%lld", (long)r->shared_prefix,
				      (long long)r->shared_prefix_tokens);
		else if (shared)
			wz_buf_puts(&b, ",,0");
		if (chains)
			write_chain(&b, traffic, r);
		wz_buf_puts(&b, "\n");
	}
	if (b.failed) {
		wz_buf_free(&b);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
	}
	wz_err err = wz_write_file_atomic(path, b.data, b.len, diag);
	wz_buf_free(&b);
	return err;
}
