/* The simulator's event queue and random numbers: 4-ary heaps (a large one
 * and a small one, see lanes, the large one optionally fed by a calendar
 * of buckets) ordered by (time, priority, sequence number) packed into two
 * integer keys, and a seeded generator, so that a run is a pure function
 * of its inputs and seed. */
#ifndef WZS_ENGINE_H
#define WZS_ENGINE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wz_rng.h"

#include "common/wz_error.h"

/* One event.  `kind`, `a` and `b` are the caller's (what happened, to
 * which replica or session, and a generation number for lazy cancelling). */
typedef struct {
	double time;
	uint32_t prio;  /* lower first among events at the same time */
	uint32_t kind;
	uint64_t seq;   /* insertion order: the last tie-break, so FIFO */
	uint32_t a;
	uint32_t b;
} wzs_event;

/* A queued event: `when` holds the time's bits mapped so that unsigned
 * order is numeric order, `tie` the priority above the sequence number, so
 * an order test is two integer compares and a node fits half a cache line. */
typedef struct {
	uint64_t when;
	uint64_t tie;   /* prio << WZS_SEQ_BITS | seq */
	uint32_t kind;
	uint32_t a;
	uint32_t b;
	uint32_t hint;  /* the caller's, for prefetching (wzs_queue_push_hinted) */
} wzs_node;

#define WZS_SEQ_BITS 40  /* 1.1e12 events per run */
#define WZS_PRIO_MAX ((1u << (64 - WZS_SEQ_BITS)) - 1)

/* One 4-ary heap of nodes. */
typedef struct {
	wzs_node *heap;   /* heap[0] the earliest; children of i at 4i+1..4i+4 */
	void *mem;        /* heap's allocation (cache-line aligned sibling groups) */
	size_t n, cap;
} wzs_heap;

/* Lanes: events of a few sources that each keep about one event queued
 * go to their own small heap, which stays in cache, instead of sifting
 * through the large one every user's next turn waits in.  A pop takes the
 * earliest of the heaps' tops: the order is the one heap's (keys are
 * unique), whatever lane an event was pushed to. */
enum { WZS_LANE_MAIN, WZS_LANE_FEW, WZS_LANES };
/* The queue's heaps: the lanes', the calendar's far one, the owned one. */
enum { WZS_HEAP_FAR = WZS_LANES, WZS_HEAP_OWNED, WZS_HEAPS };

/* A calendar for the main lane (wzs_queue_calendar): times fall in buckets
 * of `width` seconds, bucket k holding [k width, (k + 1) width).  The main
 * lane's heap holds only the events of buckets up to `cur`; those of the
 * next nbuckets - 1 buckets wait unordered in a ring, each bucket an
 * array pushed to at its end and heapified whole when the heap empties;
 * later ones wait in the far heap (WZS_HEAP_FAR), popped from directly.
 * So the heap a pop sifts through holds one bucket's events, not the
 * whole population's next turns, and a push is an append. */
typedef struct {
	wzs_heap *ring;   /* mask + 1 buckets; NULL: no calendar */
	uint64_t mask;    /* buckets - 1 (a power of two less one) */
	size_t nring;     /* events in the ring */
	uint64_t cur;     /* the bucket the main heap has reached */
	double per_width; /* 1 / width */
} wzs_calendar;

/* Owned events (wzs_queue_owners): each of `nowners` owners (a replica)
 * keeps at most one event queued, in a 4-ary heap indexed by owner, so a
 * new event of an owner replaces its queued one in place.  The replaced
 * event is cancelled, but still counts as an event handled at its own
 * time, as if it had stayed queued and its handler had ignored it (see
 * wzs_queue_events).  A queue keeping it would pop it just before the
 * first event popped after it with a later key: `gone` keeps the keys of
 * those cancelled above every key popped so far, which have been passed
 * once the highest popped key is above them; `low` the rare others (an
 * event pushed at the clock's time with a lower priority than the last
 * popped, then replaced), checked at each pop; `gone_counted` those
 * known to have been passed. */
typedef struct {
	uint64_t when, tie;
} wzs_key;

typedef struct {
	uint32_t *pos;        /* owner -> its index in the owned heap, or UINT32_MAX */
	size_t nowners;
	/* A leaf slot of the owned heap that a pop left empty (0: none, as
	 * the top is never one; the heap's n counts it), for the next new
	 * owner's event:
	 * an operation's end is nearly always followed by its replica's
	 * next, which then sifts up from there instead of the heap's last
	 * node sifting down from the top.  Every other slot holds an event,
	 * and the heap's order holds with the slot taken as the latest. */
	size_t hole;
	wzs_key *gone, *low;
	size_t ngone, capgone, nlow, caplow;
	uint64_t gone_counted;
} wzs_owned;

typedef struct {
	wzs_heap lane[WZS_HEAPS]; /* the lanes', then the far and owned heaps */
	wzs_calendar cal;
	wzs_owned own;
	size_t n;         /* events queued in all lanes */
	uint64_t next_seq;
	uint64_t popped;  /* events popped so far (cancelled ones not included) */
	wzs_key hi;       /* the highest key popped so far */
	uint64_t end_key; /* wzs_queue_end's, as a key's `when` */
	int first;        /* the heap whose top leaves first (engine.c), when known */
	int ended;        /* pop has met the first event past the end */
	double now;       /* the last popped event's time: nothing may be pushed before it */
} wzs_queue;

/* Sets a queue up empty (a zeroed one is not: its empty heaps need their
 * sentinel top, engine.c); free with wzs_queue_free. */
void wzs_queue_init(wzs_queue *q);
void wzs_queue_free(wzs_queue *q);
/* Gives the main lane a calendar of `nbuckets` (a power of two) buckets
 * `width` seconds wide (see wzs_calendar): best when a bucket holds a few
 * hundred events and the ring spans nearly all pushes ahead of now.  It
 * changes the speed, never the order events leave in.  Call it on an
 * empty queue; fails only for want of memory. */
wz_err wzs_queue_calendar(wzs_queue *q, double width, size_t nbuckets, wz_diag *diag);
/* Pushing an event before the last popped one's time is a bug in the
 * caller (the clock would go backwards) and fails an assertion, as does a
 * priority above WZS_PRIO_MAX or a time that is NaN. */
wz_err wzs_queue_push(wzs_queue *q, double time, uint32_t prio, uint32_t kind, uint32_t a,
		      uint32_t b, wz_diag *diag);
/* The same into lane `lane` (WZS_LANE_MAIN or WZS_LANE_FEW): where an event
 * waits changes the speed, never the order events leave in. */
wz_err wzs_queue_push_lane(wzs_queue *q, int lane, double time, uint32_t prio, uint32_t kind,
			   uint32_t a, uint32_t b, wz_diag *diag);
/* The same with a `hint` that wzs_queue_top gives back with the event: what
 * the caller will want in cache when the event comes (a request's slot,
 * say).  It changes nothing else. */
wz_err wzs_queue_push_hinted(wzs_queue *q, int lane, double time, uint32_t prio, uint32_t kind,
			     uint32_t a, uint32_t b, uint32_t hint, wz_diag *diag);
/* Gives the queue `nowners` owners for wzs_queue_push_owned.  Call it on
 * an empty queue; fails only for want of memory. */
wz_err wzs_queue_owners(wzs_queue *q, size_t nowners, wz_diag *diag);
/* Queues owner `owner`'s event (its `a` is the owner), cancelling the one
 * it had queued, if any: the order the others leave in is the one heap's
 * with the cancelled event still in it, and wzs_queue_events counts the
 * cancelled event when the clock passes it, so a caller that used to
 * push and ignore stale events on pop sees the same order and count. */
wz_err wzs_queue_push_owned(wzs_queue *q, uint32_t owner, double time, uint32_t prio,
			    uint32_t kind, uint32_t b, uint32_t hint, wz_diag *diag);
/* An end time: wzs_queue_pop returns 0 once the next event is later,
 * and counts that event as handled (wzs_queue_events), as a loop that
 * pops it and stops there would.  Default INFINITY. */
void wzs_queue_end(wzs_queue *q, double end);
/* Events handled so far: the pops, the event past the end if pop has
 * met it, and each cancelled owned event that a queue keeping it would
 * have popped (and its caller ignored) by now.  With no owned events and
 * no end met, q->popped. */
uint64_t wzs_queue_events(const wzs_queue *q);
/* Events queued, cancelled owned ones that would still be queued
 * included (as q->n was before they were cancelled). */
size_t wzs_queue_waiting(wzs_queue *q);
/* The earliest queued event as it is stored, or NULL when the queue is
 * empty (valid until the next push or pop). */
const wzs_node *wzs_queue_top(const wzs_queue *q);
/* Takes the earliest event into *ev; returns 0 when the queue is empty,
 * or its next event is past the end (wzs_queue_end). */
int wzs_queue_pop(wzs_queue *q, wzs_event *ev /* OUT */);
/* The earliest event's kind and arguments without taking it (to prefetch
 * what its handler will read); 0 when the queue is empty. */
int wzs_queue_peek(const wzs_queue *q, uint32_t *kind /* OUT */, uint32_t *a /* OUT */);
/* The earliest event's time, or INFINITY when empty. */
double wzs_queue_peek_time(const wzs_queue *q);

/* Random numbers from wzplan's seeded generator (common/wz_rng.h).  Every
 * user gets an independent stream so that runs with different fleet sizes
 * see the same users (common random numbers), which keeps the fleet-size
 * search monotone in practice. */
typedef wz_rng wzs_rng;

/* Seeds a stream from (seed, stream id). */
void wzs_rng_seed(wzs_rng *r, uint64_t seed, uint64_t stream);
static inline uint64_t wzs_rng_next(wzs_rng *r) { return wz_rng_next(r); }
/* Uniform in (0, 1): never 0, so logarithms are safe. */
static inline double wzs_rng_uniform(wzs_rng *r) { return wz_rng_uniform(r); }
/* Exponential with the given mean: the ziggurat's (common/wz_rng.h),
 * inline because a population's set-up draws tens per user. */
static inline double wzs_rng_exp(wzs_rng *r, double mean)
{
	return mean * wz_rng_exp1(r);
}

#endif
