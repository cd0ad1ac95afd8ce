/* Traffic: the normalized request table every importer produces and the
 * simulator replays.  File format: CSV, specified in wzplan-traffic(5):
 *   session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens
 * and optionally shared_prefix,shared_prefix_tokens and
 * shared_prefix_chain; one row per request, sorted by arrival time. */
#ifndef WZT_TRAFFIC_H
#define WZT_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "common/wz_error.h"

typedef struct {
	int64_t session;        /* session id (dense, 0-based after import) */
	int32_t turn;           /* 0-based turn within the session */
	double arrival_s;       /* seconds from the start of the trace */
	int64_t prompt_tokens;  /* new prompt tokens this turn */
	int64_t output_tokens;  /* tokens generated */
	int64_t prefix_tokens;  /* tokens of this request's context that an earlier
				   request of the session (or a shared prefix) already
				   computed and could reuse */
	/* A prefix that requests of many sessions begin with (a system prompt,
	 * a document, a tool list): its id and its tokens at the start of the
	 * request's context (prefix + prompt); 0 tokens: none. */
	int32_t shared_prefix;
	int64_t shared_prefix_tokens;
} wzt_request;

/* A shared prefix's place in the tree of prefixes: the shared prefix it
 * begins with (its parent, -1: none) and its tokens, from the
 * shared_prefix_chain column.  A request's prefix with parent p shares
 * p's tokens with every other prefix under p. */
typedef struct {
	int32_t id, parent;
	int64_t tokens;
	int exact;              /* tokens as an ancestor gives them (else at most) */
	int line;               /* where it was first given, for messages */
} wzt_prefix;

typedef struct {
	wzt_request *requests;
	size_t n;
	wzt_prefix *prefixes;   /* sorted by id; only prefixes in a chain */
	size_t nprefixes;
	char *origin;           /* file it came from, for messages */
	char *source;           /* "azure-csv:<file>", "mooncake:<file>", ... */
} wzt_traffic;

/* What to do with arrival times out of order. */
typedef enum {
	WZT_UNSORTED_REFUSE = 0, /* error naming the first row out of order */
	WZT_UNSORTED_SORT = 1,   /* stable sort, with a warning count */
} wzt_unsorted_policy;

/* Reads a normalized request table.  Malformed rows, negative or absurd
 * token counts (> 10^8) fail with file:line and field.  *n_reordered (may be
 * NULL) gets how many rows were out of order when sorting.  The caller frees
 * the result with wzt_traffic_free. */
wz_err wzt_traffic_read(const char *path, wzt_unsorted_policy policy, wzt_traffic **out /* OUT */,
			size_t *n_reordered /* OUT */, wz_diag *diag);
/* Writes the table atomically. */
wz_err wzt_traffic_write(const char *path, const wzt_traffic *traffic, wz_diag *diag);
void wzt_traffic_free(wzt_traffic *traffic);

/* The tree entry of shared prefix `id`, or NULL when it has no chain. */
const wzt_prefix *wzt_traffic_prefix(const wzt_traffic *traffic, int32_t id);

#endif
