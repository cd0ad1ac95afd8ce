/* Event heap and seeded random streams for the simulator (engine.h).
 *
 * A 4-ary heap: half as deep as a binary one, and a node's four children
 * are two whole cache lines, so a pop touches about half the lines a
 * binary heap's does at the 10^5 events a large population keeps queued.
 * Two of them (lanes): replicas' operations, two thirds of a population's
 * events, wait in a heap of about one node per replica that stays in
 * cache, users' next turns in the large one. */
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

void wzs_queue_init(wzs_queue *q)
{
	memset(q->lane, 0, sizeof q->lane);
	q->n = 0;
	q->next_seq = 0;
	q->popped = 0;
	q->now = -INFINITY;
}

void wzs_queue_free(wzs_queue *q)
{
	if (!q)
		return;
	for (int l = 0; l < WZS_LANES; l++)
		free(q->lane[l].mem);
	wzs_queue_init(q);
}

static int grow(wzs_heap *hp)
{
	size_t cap = hp->cap ? hp->cap * 2 : 1024;
	void *mem;
	if (posix_memalign(&mem, 64, (cap + HEAD_PAD) * sizeof(wzs_node)))
		return -1;
	wzs_node *heap = (wzs_node *)mem + HEAD_PAD;
	if (hp->n)
		memcpy(heap, hp->heap, hp->n * sizeof *heap);
	free(hp->mem);
	hp->mem = mem;
	hp->heap = heap;
	hp->cap = cap;
	return 0;
}

static void sift_up(wzs_heap *hp, wzs_node ev)
{
	wzs_node *h = hp->heap;
	size_t i = hp->n++;
	while (i > 0) {
		size_t parent = (i - 1) / ARITY;
		if (!before(&ev, &h[parent]))
			break;
		h[i] = h[parent];
		i = parent;
	}
	h[i] = ev;
}

/* Removes the top node (the heap is not empty). */
static void sift_down(wzs_heap *hp)
{
	wzs_node *h = hp->heap;
	size_t n = --hp->n;
	if (n == 0)
		return;
	const wzs_node last = h[n];
	size_t i = 0;
	for (;;) {
		size_t first = ARITY * i + 1;
		if (first >= n)
			break;
		size_t best = first, end = first + ARITY < n ? first + ARITY : n;
		for (size_t c = first + 1; c < end; c++)
			if (before(&h[c], &h[best]))
				best = c;
		if (!before(&h[best], &last))
			break;
		h[i] = h[best];
		i = best;
	}
	h[i] = last;
}

wz_err wzs_queue_push_lane(wzs_queue *q, int lane, double time, uint32_t prio, uint32_t kind,
			   uint32_t a, uint32_t b, wz_diag *diag)
{
	assert(time >= q->now);
	assert(prio <= WZS_PRIO_MAX);
	assert(q->next_seq < (1ULL << WZS_SEQ_BITS));
	assert(lane >= 0 && lane < WZS_LANES);
	wzs_heap *hp = &q->lane[lane];
	if (hp->n == hp->cap && grow(hp))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (event queue)");
	wzs_node ev = { time_key(time), (uint64_t)prio << WZS_SEQ_BITS | q->next_seq++, kind, a, b,
			0 };
	sift_up(hp, ev);
	q->n++;
	return WZ_OK;
}

wz_err wzs_queue_push(wzs_queue *q, double time, uint32_t prio, uint32_t kind, uint32_t a,
		      uint32_t b, wz_diag *diag)
{
	return wzs_queue_push_lane(q, WZS_LANE_MAIN, time, prio, kind, a, b, diag);
}

/* The lane whose top leaves first, or -1 when all are empty. */
static int first_lane(const wzs_queue *q)
{
	int best = -1;
	for (int l = 0; l < WZS_LANES; l++)
		if (q->lane[l].n &&
		    (best < 0 || before(&q->lane[l].heap[0], &q->lane[best].heap[0])))
			best = l;
	return best;
}

int wzs_queue_pop(wzs_queue *q, wzs_event *ev)
{
	int l = first_lane(q);
	if (l < 0)
		return 0;
	wzs_heap *hp = &q->lane[l];
	const wzs_node top = hp->heap[0];
	ev->time = key_time(top.when);
	ev->prio = (uint32_t)(top.tie >> WZS_SEQ_BITS);
	ev->seq = top.tie & ((1ULL << WZS_SEQ_BITS) - 1);
	ev->kind = top.kind;
	ev->a = top.a;
	ev->b = top.b;
	q->popped++;
	q->now = ev->time;
	q->n--;
	sift_down(hp);
	return 1;
}

double wzs_queue_peek_time(const wzs_queue *q)
{
	int l = first_lane(q);
	return l >= 0 ? key_time(q->lane[l].heap[0].when) : INFINITY;
}

void wzs_rng_seed(wzs_rng *r, uint64_t seed, uint64_t stream)
{
	wz_rng_seed(r, seed ^ (stream * 0xd1b54a32d192ed03ULL));
}

double wzs_rng_exp(wzs_rng *r, double mean)
{
	return -mean * log(wz_rng_uniform(r));
}
