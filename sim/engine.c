/* Event heap and seeded random streams for the simulator (engine.h). */
#include "sim/engine.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>

void wzs_queue_init(wzs_queue *q)
{
	q->heap = NULL;
	q->n = q->cap = 0;
	q->next_seq = 0;
	q->popped = 0;
	q->now = -INFINITY;
}

void wzs_queue_free(wzs_queue *q)
{
	if (!q)
		return;
	free(q->heap);
	wzs_queue_init(q);
}

static int before(const wzs_event *x, const wzs_event *y)
{
	if (x->time != y->time)
		return x->time < y->time;
	if (x->prio != y->prio)
		return x->prio < y->prio;
	return x->seq < y->seq;
}

wz_err wzs_queue_push(wzs_queue *q, double time, uint32_t prio, uint32_t kind, uint32_t a,
		      uint32_t b, wz_diag *diag)
{
	assert(time >= q->now);
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 1024;
		wzs_event *heap = realloc(q->heap, cap * sizeof *heap);
		if (!heap)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (event queue)");
		q->heap = heap;
		q->cap = cap;
	}
	wzs_event ev = { time, prio, kind, q->next_seq++, a, b };
	size_t i = q->n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!before(&ev, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = ev;
	return WZ_OK;
}

int wzs_queue_pop(wzs_queue *q, wzs_event *ev)
{
	if (q->n == 0)
		return 0;
	*ev = q->heap[0];
	q->popped++;
	q->now = ev->time;
	wzs_event last = q->heap[--q->n];
	size_t i = 0, n = q->n;
	for (;;) {
		size_t child = 2 * i + 1;
		if (child >= n)
			break;
		if (child + 1 < n && before(&q->heap[child + 1], &q->heap[child]))
			child++;
		if (!before(&q->heap[child], &last))
			break;
		q->heap[i] = q->heap[child];
		i = child;
	}
	if (n > 0)
		q->heap[i] = last;
	return 1;
}

double wzs_queue_peek_time(const wzs_queue *q)
{
	return q->n ? q->heap[0].time : INFINITY;
}

void wzs_rng_seed(wzs_rng *r, uint64_t seed, uint64_t stream)
{
	wz_rng_seed(r, seed ^ (stream * 0xd1b54a32d192ed03ULL));
}

double wzs_rng_exp(wzs_rng *r, double mean)
{
	return -mean * log(wz_rng_uniform(r));
}
