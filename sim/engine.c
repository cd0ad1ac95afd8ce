/* Event heap and seeded random streams for the simulator (engine.h).
 *
 * A 4-ary heap: half as deep as a binary one, and a node's four children
 * are two whole cache lines, so a pop touches about half the lines a
 * binary heap's does at the 10^5 events a large population keeps queued.
 * Several of them: replicas' operations, two thirds of a population's
 * events, wait in a heap of one node per replica indexed by replica
 * (owned events), which stays in cache and lets a cut operation's end be
 * replaced in place; users' next turns in the large one; a few others in
 * a small one.  With a calendar (wzs_queue_calendar) the large one holds
 * only the current bucket's events; the others wait unordered until
 * their bucket comes. */
#include "sim/engine.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ARITY 4
/* The heap starts this many nodes into its allocation so that every
 * sibling group (4i+1..4i+4, 128 bytes) starts on a 64-byte line. */
#define HEAD_PAD 3

_Static_assert(sizeof(wzs_node) == 32, "two nodes per cache line");

/* IEEE 754 doubles order like sign-magnitude integers: flipping the sign
 * bit of a positive value and every bit of a negative one gives unsigned
 * integers in numeric order. */
static inline uint64_t time_key(double t)
{
	uint64_t u;
	memcpy(&u, &t, sizeof u);
	return (u >> 63) ? ~u : (u | 0x8000000000000000ULL);
}

static inline double key_time(uint64_t u)
{
	u = (u >> 63) ? (u & 0x7fffffffffffffffULL) : ~u;
	double t;
	memcpy(&t, &u, sizeof t);
	return t;
}

static inline int before(const wzs_node *x, const wzs_node *y)
{
	return x->when < y->when || (x->when == y->when && x->tie < y->tie);
}

#ifdef __SIZEOF_INT128__
/* The same order as one 128-bit compare, which compilers do without a
 * branch: choosing the earliest of four children is a coin toss for the
 * branch predictor. */
static inline int before_flat(const wzs_node *x, const wzs_node *y)
{
	unsigned __int128 kx = (unsigned __int128)x->when << 64 | x->tie;
	unsigned __int128 ky = (unsigned __int128)y->when << 64 | y->tie;
	return kx < ky;
}
#else
#define before_flat before
#endif

/* The earliest of the four siblings at h[first..first + 3]. */
static inline size_t earliest_of_four(const wzs_node *h, size_t first)
{
	size_t a = first + (size_t)before_flat(&h[first + 1], &h[first]);
	size_t b = first + 2 + (size_t)before_flat(&h[first + 3], &h[first + 2]);
	return before_flat(&h[b], &h[a]) ? b : a;
}

/* q->first names the heap whose top leaves first: a lane's, the
 * calendar's far one or the owned one, or none (the queue is empty), or
 * it is unknown.  A pop finds it once for the next pop and the event
 * loop's look at the next event (wzs_queue_top); a push compares its
 * heap's new top with it. */
enum { FIRST_UNKNOWN = -2, FIRST_NONE = -1 };

static inline const wzs_heap *heap_at(const wzs_queue *q, int id)
{
	return &q->lane[id];
}

/* Heap `id`'s top may have come earlier (or it was empty). */
static inline void first_offer(wzs_queue *q, int id)
{
	if (q->first == FIRST_UNKNOWN || q->first == id)
		return;
	if (q->first == FIRST_NONE ||
	    before(&heap_at(q, id)->heap[0], &heap_at(q, q->first)->heap[0]))
		q->first = id;
}

/* An empty heap's top: a key after every event's (no time maps to
 * UINT64_MAX), so that finding the first of the heaps needs no test of
 * which are empty.  Never written: heaps point at it until they grow. */
static const wzs_node empty_top = { UINT64_MAX, UINT64_MAX, 0, 0, 0, 0 };

void wzs_queue_init(wzs_queue *q)
{
	memset(q->lane, 0, sizeof q->lane);
	for (int l = 0; l < WZS_HEAPS; l++)
		q->lane[l].heap = (wzs_node *)&empty_top;
	memset(&q->cal, 0, sizeof q->cal);
	memset(&q->own, 0, sizeof q->own);
	q->hi.when = q->hi.tie = 0;
	q->end_key = time_key(INFINITY);
	q->ended = 0;
	q->first = FIRST_NONE;
	q->n = 0;
	q->next_seq = 0;
	q->popped = 0;
	q->now = -INFINITY;
}

void wzs_queue_free(wzs_queue *q)
{
	if (!q)
		return;
	for (int l = 0; l < WZS_HEAPS; l++)
		free(q->lane[l].mem);
	if (q->cal.ring)
		for (size_t k = 0; k <= q->cal.mask; k++)
			free(q->cal.ring[k].mem);
	free(q->cal.ring);
	free(q->own.pos);
	free(q->own.gone);
	free(q->own.low);
	wzs_queue_init(q);
}

static int grow(wzs_heap *hp)
{
	size_t cap = hp->cap ? hp->cap * 2 : 8;
	void *mem;
	if (posix_memalign(&mem, 64, (cap + HEAD_PAD) * sizeof(wzs_node)))
		return -1;
	wzs_node *heap = (wzs_node *)mem + HEAD_PAD;
	if (hp->n)
		memcpy(heap, hp->heap, hp->n * sizeof *heap);
	else
		heap[0] = empty_top;
	free(hp->mem);
	hp->mem = mem;
	hp->heap = heap;
	hp->cap = cap;
	return 0;
}

/* The sifts take pos, an owned heap's owner -> slot map, to keep up to
 * date as nodes move, or NULL for the other heaps; they are inlined, so a
 * constant NULL costs the other heaps nothing. */

/* Puts ev at slot i of heap h, or above it, where i has no children. */
static inline __attribute__((always_inline)) void sift_up_from(wzs_node *h, size_t i,
								const wzs_node ev, uint32_t *pos)
{
	while (i > 0) {
		size_t parent = (i - 1) / ARITY;
		if (!before(&ev, &h[parent]))
			break;
		h[i] = h[parent];
		if (pos)
			pos[h[i].a] = (uint32_t)i;
		i = parent;
	}
	h[i] = ev;
	if (pos)
		pos[ev.a] = (uint32_t)i;
}

static void sift_up(wzs_heap *hp, wzs_node ev)
{
	sift_up_from(hp->heap, hp->n++, ev, NULL);
}

/* The earliest of the children from `first` of an n-node heap h (first < n). */
static inline size_t earliest_child(const wzs_node *h, size_t n, size_t first)
{
	if (first + ARITY <= n)
		return earliest_of_four(h, first);
	size_t best = first;
	for (size_t c = first + 1; c < n; c++)
		if (before(&h[c], &h[best]))
			best = c;
	return best;
}

/* Moves an empty slot at i of the n-node heap h down to a leaf, each
 * level's earliest child up into it, and returns the leaf.  A pop that
 * then fills the leaf from below (Floyd's bottom-up pop) skips the compare
 * with the node that fills it that a sift down from the top makes at each
 * level, and that node, the heap's last, nearly always sinks to the bottom
 * anyway, so that compare's branch is only a misprediction at the end. */
static inline size_t hole_down(wzs_node *h, size_t n, size_t i, uint32_t *pos)
{
	for (;;) {
		size_t first = ARITY * i + 1;
		if (first >= n)
			return i;
		size_t best = earliest_child(h, n, first);
		h[i] = h[best];
		if (pos)
			pos[h[i].a] = (uint32_t)i;
		i = best;
	}
}

/* Puts `last` at position i of the n-node heap h, or below it, where the
 * subtrees below i are heaps. */
static inline __attribute__((always_inline)) void sift_down_from(wzs_node *h, size_t n, size_t i,
								  const wzs_node last, uint32_t *pos)
{
	for (;;) {
		size_t first = ARITY * i + 1;
		if (first >= n)
			break;
		size_t best = earliest_child(h, n, first);
		if (!before(&h[best], &last))
			break;
		h[i] = h[best];
		if (pos)
			pos[h[i].a] = (uint32_t)i;
		i = best;
	}
	h[i] = last;
	if (pos)
		pos[last.a] = (uint32_t)i;
}

/* Removes the top node (the heap is not empty): its slot goes down to a
 * leaf, and the last node fills it from there. */
static void sift_down(wzs_heap *hp)
{
	size_t n = --hp->n;
	if (n > 0)
		sift_up_from(hp->heap, hole_down(hp->heap, n, 0, NULL), hp->heap[n], NULL);
	else
		hp->heap[0] = empty_top;
}

/* Orders an array into a heap from the last parent up (Floyd): linear. */
static void heapify(wzs_heap *hp)
{
	for (size_t i = hp->n > 1 ? (hp->n - 2) / ARITY + 1 : 0; i-- > 0;)
		sift_down_from(hp->heap, hp->n, i, hp->heap[i], NULL);
}

wz_err wzs_queue_calendar(wzs_queue *q, double width, size_t nbuckets, wz_diag *diag)
{
	assert(q->n == 0 && !q->cal.ring);
	assert(width > 0 && isfinite(width));
	assert(nbuckets >= 2 && (nbuckets & (nbuckets - 1)) == 0);
	q->cal.ring = calloc(nbuckets, sizeof *q->cal.ring);
	if (!q->cal.ring)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (event calendar)");
	q->cal.mask = nbuckets - 1;
	q->cal.per_width = 1.0 / width;
	q->cal.cur = 0;
	return WZ_OK;
}

/* The bucket of time t: monotone in t (a product by a positive constant
 * and the clamps keep order), which is all the calendar's order needs. */
static inline uint64_t bucket_of(const wzs_calendar *c, double t)
{
	double x = t * c->per_width;
	if (!(x > 0))
		return 0;
	return x < 0x1p62 ? (uint64_t)x : (1ULL << 62);
}

/* The main heap is empty and the ring is not: the next non-empty bucket
 * becomes the heap (its array swapped in, so nothing is allocated). */
static void calendar_advance(wzs_queue *q)
{
	wzs_calendar *c = &q->cal;
	uint64_t k = c->cur + 1;
	while (c->ring[k & c->mask].n == 0)
		k++;
	c->cur = k;
	wzs_heap *main = &q->lane[WZS_LANE_MAIN], *bucket = &c->ring[k & c->mask];
	const wzs_heap empty = *main;
	*main = *bucket;
	*bucket = empty;
	c->nring -= main->n;
	heapify(main);
}

/* A main-lane event with a calendar: into the heap if its bucket has been
 * reached, else appended to its bucket, or beyond the ring into `far`. */
static int calendar_push(wzs_queue *q, wzs_node ev, double time)
{
	wzs_calendar *c = &q->cal;
	wzs_heap *main = &q->lane[WZS_LANE_MAIN];
	uint64_t k = bucket_of(c, time);
	if (k <= c->cur) {
		if (main->n == main->cap && grow(main))
			return -1;
		sift_up(main, ev);
		first_offer(q, WZS_LANE_MAIN);
		return 0;
	}
	if (k - c->cur > c->mask) {
		wzs_heap *far = &q->lane[WZS_HEAP_FAR];
		if (far->n == far->cap && grow(far))
			return -1;
		sift_up(far, ev);
		first_offer(q, WZS_HEAP_FAR);
		return 0;
	}
	wzs_heap *bucket = &c->ring[k & c->mask];
	if (bucket->n == bucket->cap && grow(bucket))
		return -1;
	bucket->heap[bucket->n++] = ev;
	c->nring++;
	if (main->n == 0) {
		calendar_advance(q);
		first_offer(q, WZS_LANE_MAIN);
	}
	return 0;
}

wz_err wzs_queue_push_hinted(wzs_queue *q, int lane, double time, uint32_t prio, uint32_t kind,
			     uint32_t a, uint32_t b, uint32_t hint, wz_diag *diag)
{
	assert(time >= q->now);
	assert(prio <= WZS_PRIO_MAX);
	assert(q->next_seq < (1ULL << WZS_SEQ_BITS));
	assert(lane >= 0 && lane < WZS_LANES);
	wzs_node ev = { time_key(time), (uint64_t)prio << WZS_SEQ_BITS | q->next_seq, kind, a, b,
			hint };
	wzs_heap *hp = &q->lane[lane];
	if (lane == WZS_LANE_MAIN && q->cal.ring) {
		if (calendar_push(q, ev, time))
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (event queue)");
	} else {
		if (hp->n == hp->cap && grow(hp))
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (event queue)");
		sift_up(hp, ev);
		first_offer(q, lane);
	}
	q->next_seq++;
	q->n++;
	return WZ_OK;
}

wz_err wzs_queue_push_lane(wzs_queue *q, int lane, double time, uint32_t prio, uint32_t kind,
			   uint32_t a, uint32_t b, wz_diag *diag)
{
	return wzs_queue_push_hinted(q, lane, time, prio, kind, a, b, 0, diag);
}

wz_err wzs_queue_push(wzs_queue *q, double time, uint32_t prio, uint32_t kind, uint32_t a,
		      uint32_t b, wz_diag *diag)
{
	return wzs_queue_push_lane(q, WZS_LANE_MAIN, time, prio, kind, a, b, diag);
}

wz_err wzs_queue_owners(wzs_queue *q, size_t nowners, wz_diag *diag)
{
	assert(q->n == 0 && !q->own.pos);
	assert(nowners < UINT32_MAX);
	wzs_owned *o = &q->own;
	o->pos = malloc((nowners ? nowners : 1) * sizeof *o->pos);
	o->capgone = 256;
	o->gone = malloc(o->capgone * sizeof *o->gone);
	if (!o->pos || !o->gone)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (event queue)");
	for (size_t i = 0; i < nowners; i++)
		o->pos[i] = UINT32_MAX;
	o->nowners = nowners;
	while (q->lane[WZS_HEAP_OWNED].cap < nowners)
		if (grow(&q->lane[WZS_HEAP_OWNED]))
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (event queue)");
	return WZ_OK;
}

static inline int key_before(const wzs_key *x, const wzs_key *y)
{
	return x->when < y->when || (x->when == y->when && x->tie < y->tie);
}

/* Fills the empty slot a pop left (wzs_owned's hole), if any, with the
 * heap's last node.  The top stays: it is the earliest of all. */
static void owned_close(wzs_owned *o, wzs_heap *hp)
{
	size_t i = o->hole;
	if (!i)
		return;
	o->hole = 0;
	sift_up_from(hp->heap, i, hp->heap[hp->n - 1], o->pos);
	hp->n--;
}

/* Removes the owned heap's top, leaving its slot empty at a leaf for the
 * next new owner's event unless that leaf is the last slot. */
static void owned_pop(wzs_owned *o, wzs_heap *hp)
{
	owned_close(o, hp);
	o->pos[hp->heap[0].a] = UINT32_MAX;
	size_t n = hp->n, i = hole_down(hp->heap, n, 0, o->pos);
	if (i == n - 1)
		hp->n--;
	else
		o->hole = i;
	if (!hp->n)
		hp->heap[0] = empty_top;
}

/* Counts the cancelled events that lie below the highest key popped:
 * whatever the loop does next, they have been handled.  Keeps the others. */
static void gone_settle(wzs_owned *o, const wzs_key *hi)
{
	size_t keep = 0;
	for (size_t i = 0; i < o->ngone; i++) {
		if (key_before(&o->gone[i], hi))
			o->gone_counted++;
		else
			o->gone[keep++] = o->gone[i];
	}
	o->ngone = keep;
}

static int key_append(wzs_key **arr, size_t *n, size_t *cap, wzs_key k)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		wzs_key *a = realloc(*arr, c * sizeof *a);
		if (!a)
			return -1;
		*arr = a;
		*cap = c;
	}
	(*arr)[(*n)++] = k;
	return 0;
}

static int gone_add(wzs_queue *q, const wzs_node *ev)
{
	wzs_owned *o = &q->own;
	wzs_key k = { ev->when, ev->tie };
	if (key_before(&k, &q->hi)) /* no real key is below hi's initial zero */
		return key_append(&o->low, &o->nlow, &o->caplow, k);
	if (o->ngone == o->capgone) {
		gone_settle(o, &q->hi);
		if (o->ngone <= o->capgone / 2) {
			o->gone[o->ngone++] = k;
			return 0;
		}
	}
	return key_append(&o->gone, &o->ngone, &o->capgone, k);
}

/* A pop of key k: the low cancelled events below it have been handled. */
static void low_settle(wzs_owned *o, const wzs_key *k)
{
	size_t keep = 0;
	for (size_t i = 0; i < o->nlow; i++) {
		if (key_before(&o->low[i], k))
			o->gone_counted++;
		else
			o->low[keep++] = o->low[i];
	}
	o->nlow = keep;
}

wz_err wzs_queue_push_owned(wzs_queue *q, uint32_t owner, double time, uint32_t prio,
			    uint32_t kind, uint32_t b, uint32_t hint, wz_diag *diag)
{
	assert(time >= q->now);
	assert(prio <= WZS_PRIO_MAX);
	assert(q->next_seq < (1ULL << WZS_SEQ_BITS));
	wzs_owned *o = &q->own;
	assert(owner < o->nowners);
	wzs_node ev = { time_key(time), (uint64_t)prio << WZS_SEQ_BITS | q->next_seq, kind, owner, b,
			hint };
	wzs_heap *hp = &q->lane[WZS_HEAP_OWNED];
	if (o->pos[owner] != UINT32_MAX) {
		owned_close(o, hp); /* which may move the owner's event */
		uint32_t at = o->pos[owner];
		wzs_node old = hp->heap[at];
		if (gone_add(q, &old))
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (event queue)");
		if (before(&ev, &old)) {
			sift_up_from(hp->heap, at, ev, o->pos);
			first_offer(q, WZS_HEAP_OWNED);
		} else {
			sift_down_from(hp->heap, hp->n, at, ev, o->pos);
			if (at == 0 && q->first == WZS_HEAP_OWNED)
				q->first = FIRST_UNKNOWN; /* its top came later */
		}
	} else if (o->hole) {
		size_t i = o->hole;
		o->hole = 0;
		sift_up_from(hp->heap, i, ev, o->pos);
		first_offer(q, WZS_HEAP_OWNED);
		q->n++;
	} else {
		if (hp->n == hp->cap && grow(hp))
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (event queue)");
		sift_up_from(hp->heap, hp->n++, ev, o->pos);
		first_offer(q, WZS_HEAP_OWNED);
		q->n++;
	}
	q->next_seq++;
	return WZ_OK;
}

void wzs_queue_end(wzs_queue *q, double end)
{
	assert(!isnan(end));
	/* -0 and +0 are one time, and keys order them. */
	q->end_key = time_key(end == 0 ? 0.0 : end);
}

uint64_t wzs_queue_events(const wzs_queue *q)
{
	const wzs_owned *o = &q->own;
	uint64_t n = q->popped + o->gone_counted + (uint64_t)q->ended;
	for (size_t i = 0; i < o->ngone; i++)
		n += (uint64_t)key_before(&o->gone[i], &q->hi);
	return n;
}

/* Counts the cancelled events in arr[0..n) up to the end (noting the
 * highest in *latest), and says whether one lies past it. */
static int count_to_end(wzs_queue *q, const wzs_key *arr, size_t n, wzs_key *latest)
{
	int past = 0;
	for (size_t i = 0; i < n; i++) {
		if (arr[i].when > q->end_key) {
			past = 1;
			continue;
		}
		q->own.gone_counted++;
		if (key_before(latest, &arr[i]))
			*latest = arr[i];
	}
	return past;
}

/* Nothing is queued up to the end: the cancelled events up to it have
 * been handled, the clock at the last of them; if anything lies past it
 * (`queued_past`, or a cancelled event), the first such was handled and
 * the queue has ended. */
static void pop_none(wzs_queue *q, int queued_past)
{
	wzs_owned *o = &q->own;
	wzs_key latest = q->hi;
	int past = count_to_end(q, o->gone, o->ngone, &latest);
	past |= count_to_end(q, o->low, o->nlow, &latest);
	o->ngone = o->nlow = 0;
	if (key_before(&q->hi, &latest)) {
		q->hi = latest;
		q->now = key_time(latest.when);
	}
	q->ended = queued_past || past;
}

size_t wzs_queue_waiting(wzs_queue *q)
{
	gone_settle(&q->own, &q->hi);
	return q->n + q->own.ngone + q->own.nlow;
}

/* The heap whose top leaves first (a lane's, the calendar's far one or
 * the owned one), or FIRST_NONE when all are empty: the earliest of the
 * four tops, an empty heap's being empty_top, in three compares without
 * branches.  The main heap is empty only when the ring is, and the
 * ring's events all leave after the main heap's. */
static int first_find(const wzs_queue *q)
{
	_Static_assert(WZS_HEAPS == 4, "first_find compares four tops");
	const wzs_heap *h = q->lane;
	int a = before_flat(&h[1].heap[0], &h[0].heap[0]);
	int b = 2 + before_flat(&h[3].heap[0], &h[2].heap[0]);
	int best = before_flat(&h[b].heap[0], &h[a].heap[0]) ? b : a;
	return h[best].n ? best : FIRST_NONE;
}

static const wzs_heap *first_heap(const wzs_queue *q)
{
	int id = q->first == FIRST_UNKNOWN ? first_find(q) : q->first;
	return id == FIRST_NONE ? NULL : heap_at(q, id);
}

/* Pops heap hp's top (the queue's first). */
static void pop_from(wzs_queue *q, wzs_heap *hp)
{
	if (hp == &q->lane[WZS_HEAP_OWNED]) {
		owned_pop(&q->own, hp);
		return;
	}
	sift_down(hp);
	if (hp == &q->lane[WZS_LANE_MAIN] && hp->n == 0 && q->cal.nring)
		calendar_advance(q);
}

int wzs_queue_pop(wzs_queue *q, wzs_event *ev)
{
	if (q->ended)
		return 0;
	wzs_heap *hp = (wzs_heap *)first_heap(q);
	if (!hp || hp->heap[0].when > q->end_key) {
		pop_none(q, hp != NULL);
		q->first = FIRST_UNKNOWN;
		return 0;
	}
	const wzs_node top = hp->heap[0];
	ev->time = key_time(top.when);
	ev->prio = (uint32_t)(top.tie >> WZS_SEQ_BITS);
	ev->seq = top.tie & ((1ULL << WZS_SEQ_BITS) - 1);
	ev->kind = top.kind;
	ev->a = top.a;
	ev->b = top.b;
	q->popped++;
	q->now = ev->time;
	const wzs_key k = { top.when, top.tie };
	if (key_before(&q->hi, &k))
		q->hi = k;
	if (q->own.nlow)
		low_settle(&q->own, &k);
	q->n--;
	pop_from(q, hp);
	q->first = first_find(q);
	return 1;
}

const wzs_node *wzs_queue_top(const wzs_queue *q)
{
	const wzs_heap *hp = first_heap(q);
	return hp ? &hp->heap[0] : NULL;
}

int wzs_queue_peek(const wzs_queue *q, uint32_t *kind, uint32_t *a)
{
	const wzs_heap *hp = first_heap(q);
	if (!hp)
		return 0;
	*kind = hp->heap[0].kind;
	*a = hp->heap[0].a;
	return 1;
}

double wzs_queue_peek_time(const wzs_queue *q)
{
	const wzs_heap *hp = first_heap(q);
	return hp ? key_time(hp->heap[0].when) : INFINITY;
}

void wzs_rng_seed(wzs_rng *r, uint64_t seed, uint64_t stream)
{
	wz_rng_seed(r, seed ^ (stream * 0xd1b54a32d192ed03ULL));
}

