/* The simulator's engine: its event queue pops in (time, priority,
 * sequence) order against a linear scan, with and without the calendar,
 * for free and owned events, and however a run ends; and the step's
 * arithmetic that has a fast path: the busiest rank's tokens against its
 * reference, and the token draws' rounding against llround. */
#include "tests/tap.h"

#include <math.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/fleet.h"
#include "sim/population.h"

/* Many events pushed while others leave, as the simulator does: every pop
 * is the least (time, priority, sequence) still queued, checked against a
 * linear scan of what was pushed.  With width > 0 the main lane has a
 * calendar of `nbuckets` buckets of `width` seconds. */
static void check_random_order(double width, size_t nbuckets, const char *what)
{
	wzs_queue q;
	wzs_queue_init(&q);
	if (width > 0 && wzs_queue_calendar(&q, width, nbuckets, NULL)) {
		ok(0, "%s: calendar", what);
		return;
	}
	wzs_rng g;
	wzs_rng_seed(&g, 11, nbuckets);
	enum { MAXQ = 4096 };
	static double qt[MAXQ];
	static uint32_t qp[MAXQ], qid[MAXQ];
	int nq = 0, in_order = 1, pushed = 0, popped = 0, peek_ok = 1;
	for (int round = 0; round < 20000 && in_order; round++) {
		int k = (int)(wzs_rng_next(&g) % 3);
		for (int j = 0; j < k && nq < MAXQ; j++, pushed++) {
			/* Coarse times make ties on time and priority common. */
			double base = q.now > 0 ? q.now : 0;
			uint64_t pick = wzs_rng_next(&g);
			double t = base + (double)(pick % 8) * 0.25;
			if (pick % 97 == 0)
				t = base + 100; /* a jump past every bucket */
			uint32_t prio = (uint32_t)(wzs_rng_next(&g) % 3);
			/* Either lane: the order must not depend on it. */
			int lane = (int)(wzs_rng_next(&g) % WZS_LANES);
			wzs_queue_push_lane(&q, lane, t, prio, 0, (uint32_t)pushed, 0, NULL);
			qt[nq] = t;
			qp[nq] = prio;
			qid[nq++] = (uint32_t)pushed;
		}
		uint32_t peek_kind = 0, peek_a = UINT32_MAX;
		int peeked = wzs_queue_peek(&q, &peek_kind, &peek_a);
		wzs_event ev;
		if (!wzs_queue_pop(&q, &ev)) {
			peek_ok &= !peeked && nq == 0;
			continue;
		}
		peek_ok &= peeked && peek_a == ev.a;
		popped++;
		int best = 0;
		for (int i = 1; i < nq; i++)
			if (qt[i] < qt[best] || (qt[i] == qt[best] && (qp[i] < qp[best] ||
					(qp[i] == qp[best] && qid[i] < qid[best]))))
				best = i;
		in_order = nq > 0 && ev.a == qid[best] && ev.time == qt[best] && ev.prio == qp[best];
		qt[best] = qt[nq - 1];
		qp[best] = qp[nq - 1];
		qid[best] = qid[--nq];
	}
	ok(in_order && popped > 10000,
	   "%s: %d events pushed to random lanes leave in (time, priority, sequence) order", what,
	   popped);
	ok(peek_ok, "%s: peek names the event pop takes", what);
	ok(wzs_queue_peek_time(&q) >= q.now, "%s: the earliest queued time is never before now", what);
	/* The rest, and one at 1e300 (past any bucket index), come out in time
	 * order with the far one last. */
	wzs_queue_push(&q, 1e300, 0, 0, UINT32_MAX, 0, NULL);
	size_t left = 0;
	int sorted = 1;
	wzs_event ev, last = { .time = q.now };
	while (wzs_queue_pop(&q, &ev)) {
		sorted &= ev.time >= last.time;
		last = ev;
		left++;
	}
	ok(sorted && left == (size_t)nq + 1 && last.a == UINT32_MAX && q.n == 0,
	   "%s: the %d events left come out in order, the one at 1e300 last", what, nq);
	wzs_queue_free(&q);
}

/* The reference for owned events: one list where a replaced owned event
 * stays, marked stale, to be popped and ignored (as the simulator's
 * stale operation ends once were). */
enum { OWN_MAXQ = 4096 };
typedef struct {
	double t[OWN_MAXQ];
	uint32_t prio[OWN_MAXQ], id[OWN_MAXQ], owner[OWN_MAXQ];
	int stale[OWN_MAXQ];
	int n;
	uint64_t popped;
} own_ref;

static int own_ref_min(const own_ref *r)
{
	int best = 0;
	for (int i = 1; i < r->n; i++)
		if (r->t[i] < r->t[best] ||
		    (r->t[i] == r->t[best] && (r->prio[i] < r->prio[best] ||
					       (r->prio[i] == r->prio[best] && r->id[i] < r->id[best]))))
			best = i;
	return best;
}

static void own_ref_take(own_ref *r, int i)
{
	r->t[i] = r->t[r->n - 1];
	r->prio[i] = r->prio[r->n - 1];
	r->id[i] = r->id[r->n - 1];
	r->owner[i] = r->owner[r->n - 1];
	r->stale[i] = r->stale[r->n - 1];
	r->n--;
	r->popped++;
}

/* The reference's next live event, popping the stale ones before it;
 * -1 when none is left (the stale ones all popped). */
static int own_ref_pop(own_ref *r, double *t, uint32_t *id)
{
	while (r->n > 0) {
		int i = own_ref_min(r);
		int stale = r->stale[i];
		*t = r->t[i];
		*id = r->id[i];
		own_ref_take(r, i);
		if (!stale)
			return 1;
	}
	return 0;
}

/* Owned events replaced at random among events of the other lanes: the
 * live ones leave in the order of one list that keeps the replaced ones,
 * and wzs_queue_events counts what popping and ignoring those would,
 * however the loop ends (past an end time, drained, or stopped). */
static void check_owned_order(double width, size_t nbuckets, uint32_t owners, uint64_t seed,
			      int ending, const char *what)
{
	wzs_queue q;
	wzs_queue_init(&q);
	if ((width > 0 && wzs_queue_calendar(&q, width, nbuckets, NULL)) ||
	    wzs_queue_owners(&q, owners, NULL)) {
		ok(0, "%s: setup", what);
		return;
	}
	static own_ref r;
	memset(&r, 0, sizeof r);
	wzs_rng g;
	wzs_rng_seed(&g, seed, nbuckets);
	int in_order = 1, counts = 1, waiting = 1, popped = 0, replaced = 0, lows = 0;
	uint32_t pushed = 0;
	size_t deepest = 0; /* the owned heap's most slots */
	for (int round = 0; round < 20000 && in_order; round++) {
		/* With many owners, a queue built up first keeps most of them
		 * holding an event. */
		int k = (int)(wzs_rng_next(&g) % 3) + (owners > 8 && round < 300);
		for (int j = 0; j < k && r.n < OWN_MAXQ; j++, pushed++) {
			double base = q.now > 0 ? q.now : 0;
			uint64_t pick = wzs_rng_next(&g);
			double t = base + (double)(pick % 8) * 0.25;
			uint32_t prio = (uint32_t)(wzs_rng_next(&g) % 3);
			int kind = (int)(wzs_rng_next(&g) % 4); /* 0, 1: lanes; 2, 3: owned */
			uint32_t owner = (uint32_t)(wzs_rng_next(&g) % owners);
			if (kind < 2) {
				wzs_queue_push_lane(&q, kind, t, prio, 0, 0, pushed, NULL);
				owner = UINT32_MAX;
			} else {
				wzs_queue_push_owned(&q, owner, t, prio, 0, pushed, 0, NULL);
				for (int i = 0; i < r.n; i++)
					if (r.owner[i] == owner && !r.stale[i]) {
						r.stale[i] = 1;
						replaced++;
					}
			}
			r.t[r.n] = t;
			r.prio[r.n] = prio;
			r.id[r.n] = pushed;
			r.owner[r.n] = owner;
			r.stale[r.n++] = 0;
		}
		lows += q.own.nlow > 0;
		if (q.lane[WZS_HEAP_OWNED].n > deepest)
			deepest = q.lane[WZS_HEAP_OWNED].n;
		waiting &= wzs_queue_waiting(&q) == (size_t)r.n;
		if (ending == 2 && round == 15000)
			break; /* the caller stops after an event */
		wzs_event ev;
		double t;
		uint32_t id;
		int got = wzs_queue_pop(&q, &ev), want = own_ref_pop(&r, &t, &id);
		if (!got || !want) {
			in_order &= got == want;
			continue;
		}
		popped++;
		in_order = ev.b == id && ev.time == t;
		counts &= wzs_queue_events(&q) == r.popped;
	}
	/* Fewer owners hold events to replace more often; more make a
	 * deeper heap (three levels from 6 events, four from 22). */
	ok(in_order && popped > 10000 && replaced > (owners <= 8 ? 1000 : 300) &&
	   deepest > (owners <= 8 ? 5 : 21),
	   "%s: %d events (%d owned ones replaced, at most %zu owned queued) leave in the order "
	   "of one list that keeps the replaced ones", what, popped, replaced, deepest);
	ok(counts && waiting && lows > 0,
	   "%s: the events counted and waiting are the one list's, with %d rounds holding a "
	   "replaced event below the last popped", what, lows);
	/* The end: past an end time (ending 0), drained (1), or stopped (2). */
	double end = ending == 0 ? q.now + 0.6 : INFINITY;
	wzs_queue_end(&q, end);
	wzs_event ev;
	if (ending != 2)
		while (wzs_queue_pop(&q, &ev))
			;
	/* The reference's loop, the replaced events popped like the others. */
	if (ending != 2)
		while (r.n > 0) {
			int i = own_ref_min(&r);
			double t = r.t[i];
			own_ref_take(&r, i);
			if (t > end)
				break;
		}
	ok(wzs_queue_events(&q) == r.popped,
	   "%s: %s, %llu events counted, as the one list's loop would", what,
	   ending == 0 ? "stopped past an end" : ending == 1 ? "drained" : "stopped after an event",
	   (unsigned long long)r.popped);
	wzs_queue_free(&q);
}

/* The decode epoch's busiest-rank walk, fast against reference, on
 * random ranks: contributions of either sign, idle ranks, odd counts. */
static void test_rank_tokens_max2(void)
{
	wzs_rng g;
	wzs_rng_seed(&g, 5, 1);
	double a[67];
	int64_t n[67];
	int same = 1, cases = 0, nonzero = 0;
	for (int round = 0; round < 20000; round++) {
		int ranks = 1 + (int)(wzs_rng_next(&g) % 67);
		for (int k = 0; k < ranks; k++) {
			n[k] = (int64_t)(wzs_rng_next(&g) % 300) * (wzs_rng_next(&g) % 4 != 0);
			a[k] = (wzs_rng_uniform(&g) - 0.3) * 4e6;
		}
		int64_t step0 = (int64_t)(wzs_rng_next(&g) % 200000);
		int64_t step1 = step0 + (int64_t)(wzs_rng_next(&g) % 5000);
		double per_step = round % 2 ? 1.0 : 1.0 + wzs_rng_uniform(&g);
		double f0, f1, r0, r1;
		wzs_rank_tokens_max2(a, n, ranks, step0, step1, per_step, &f0, &f1);
		wzs_rank_tokens_max2_ref(a, n, ranks, step0, step1, per_step, &r0, &r1);
		same &= f0 == r0 && f1 == r1; /* == : +0 and -0 alike */
		nonzero += r0 != 0;
		cases++;
	}
	ok(same && nonzero > cases / 2, "busiest rank's tokens: the fast walk gives the reference's "
	   "in %d random cases", cases);
}

/* The token draws' rounding is llround's: halves, values just below
 * them, integers, the edges of the fast range, and random draws. */
static void test_llround(void)
{
	static const double edge[] = { 0, -0.0, 0.5, 1.5, 2.5, 0.49999999999999994, 1.4999999999999998,
				       3, 1e15 + 0.5, 0x1p52 - 0.5, 0x1p52, 0x1p52 + 1, 0x1p60, -0.5,
				       -2.5, -7.25 };
	int same = 1;
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
		same &= wzs_llround(edge[i]) == llround(edge[i]);
	wzs_rng g;
	wzs_rng_seed(&g, 9, 2);
	for (int i = 0; i < 200000; i++) {
		double v = wzs_rng_exp(&g, i % 2 ? 800 : 3.5);
		same &= wzs_llround(v) == llround(v);
		double h = floor(v) + 0.5; /* a half */
		double below = nextafter(h, 0);
		same &= wzs_llround(h) == llround(h) && wzs_llround(below) == llround(below);
	}
	ok(same, "token rounding is llround's on halves, edges and 200,000 draws");
}

static void test_engine_order(void)
{
	wzs_queue q;
	wzs_queue_init(&q);
	wzs_queue_push(&q, 2.0, 0, 1, 0, 0, NULL);
	wzs_queue_push(&q, 1.0, 5, 2, 0, 0, NULL);
	wzs_queue_push(&q, 1.0, 1, 3, 0, 0, NULL);
	wzs_queue_push(&q, 1.0, 1, 4, 0, 0, NULL);
	wzs_event ev;
	int order[4], n = 0;
	while (n < 4 && wzs_queue_pop(&q, &ev))
		order[n++] = (int)ev.kind;
	ok(n == 4 && order[0] == 3 && order[1] == 4 && order[2] == 2 && order[3] == 1,
	   "events leave by time, then priority, then insertion order");
	wzs_queue_free(&q);
	check_random_order(0, 0, "no calendar");
	/* A calendar of 8 buckets of 0.1 s: pushes up to 2 s ahead land in the
	 * main heap, the ring and beyond it, with jumps of the clock that leave
	 * the ring empty. */
	check_random_order(0.1, 8, "8 buckets of 0.1 s");
	check_random_order(1e-3, 2, "2 buckets of 1 ms");
	check_random_order(10, 64, "64 buckets of 10 s");
	for (int ending = 0; ending < 3; ending++) {
		check_owned_order(0, 0, 8, 21 + (uint64_t)ending, ending, "owned, no calendar");
		check_owned_order(0.1, 8, 8, 31 + (uint64_t)ending, ending, "owned, 8 buckets of 0.1 s");
		/* More owners: a heap of three levels, whose pops leave their
		 * empty slot deeper and not in the last place. */
		check_owned_order(0, 0, 40, 41 + (uint64_t)ending, ending, "owned, 40 owners");
	}
	/* A replaced event past the end, the queue drained before it: the
	 * one list's loop would have popped it, and stopped there. */
	wzs_queue_init(&q);
	wzs_queue_owners(&q, 1, NULL);
	wzs_queue_push_owned(&q, 0, 5, 0, 0, 0, 0, NULL);
	wzs_queue_push_owned(&q, 0, 1, 0, 0, 0, 0, NULL);
	uint64_t none = wzs_queue_events(&q);
	wzs_queue_end(&q, 3);
	int first = wzs_queue_pop(&q, &ev);
	uint64_t one = wzs_queue_events(&q);
	int second = wzs_queue_pop(&q, &ev);
	ok(none == 0 && first && one == 1 && !second && wzs_queue_events(&q) == 2,
	   "a replaced event is counted where the clock passes it");
	wzs_queue_free(&q);
	wzs_rng a, b;
	wzs_rng_seed(&a, 7, 3);
	wzs_rng_seed(&b, 7, 3);
	int same = 1;
	for (int i = 0; i < 1000; i++)
		same &= wzs_rng_next(&a) == wzs_rng_next(&b);
	ok(same, "a seeded stream repeats");
}

int main(void)
{
	test_engine_order();
	test_rank_tokens_max2();
	test_llround();
	return tap_done();
}
