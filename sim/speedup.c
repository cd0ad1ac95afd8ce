/* Replay speed-up of session arrivals (speedup.h). */
#include "sim/speedup.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	double time;
	size_t index;
} keyed;

static int keyed_cmp(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

wz_err wzs_traffic_speedup(wzt_traffic *t, double factor, wzs_speedup_mode mode, wz_diag *diag)
{
	if (!(factor > 0 && factor <= 1e6))
		return wz_diag_set(diag, WZ_ERR_RANGE, "speed-up %g is not in (0, 1e6]", factor);
	if (factor == 1 || t->n == 0)
		return WZ_OK;
	if (mode == WZS_SPEEDUP_ALL) {
		/* Order is kept: every time is divided by the same factor. */
		for (size_t i = 0; i < t->n; i++)
			t->requests[i].arrival_s /= factor;
		return WZ_OK;
	}
	int64_t nsess = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->requests[i].session + 1 > nsess)
			nsess = t->requests[i].session + 1;
	double *start = malloc((size_t)nsess * sizeof *start);
	keyed *order = malloc(t->n * sizeof *order);
	wzt_request *rows = malloc(t->n * sizeof *rows);
	if (!start || !order || !rows) {
		free(start);
		free(order);
		free(rows);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory (speed-up)");
	}
	for (int64_t s = 0; s < nsess; s++)
		start[s] = -1;
	/* Rows are in arrival order, so a session's first row is its start. */
	for (size_t i = 0; i < t->n; i++) {
		wzt_request *r = &t->requests[i];
		if (start[r->session] < 0)
			start[r->session] = r->arrival_s;
		double s0 = start[r->session];
		order[i].time = s0 / factor + (r->arrival_s - s0);
		order[i].index = i;
	}
	qsort(order, t->n, sizeof *order, keyed_cmp);
	for (size_t i = 0; i < t->n; i++) {
		rows[i] = t->requests[order[i].index];
		rows[i].arrival_s = order[i].time;
	}
	memcpy(t->requests, rows, t->n * sizeof *rows);
	free(rows);
	free(start);
	free(order);
	return WZ_OK;
}
