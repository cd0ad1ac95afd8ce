/* Runs in memory: what a command collects before storing it in one
 * transaction, and what the archive loads back (archive.h). */
#include "archive/archive.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

static char *dup_or_null(const char *s, int *failed)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*failed = 1;
	return d;
}

/* Grows an array by one element; returns the new element zeroed, or NULL. */
static void *grow(void **items, int *n, int *cap, size_t size, int *failed)
{
	if (*failed)
		return NULL;
	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 16;
		void *p = realloc(*items, (size_t)ncap * size);
		if (!p) {
			*failed = 1;
			return NULL;
		}
		*items = p;
		*cap = ncap;
	}
	void *item = (char *)*items + (size_t)(*n)++ * size;
	memset(item, 0, size);
	return item;
}

#define GROW(run, arr, n, cap) grow((void **)&(run)->arr, &(run)->n, &(run)->cap, sizeof *(run)->arr, &(run)->failed)

static char *utc_now(void)
{
	char text[32];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return strdup(text);
}

wza_run *wza_run_new(const char *command, int argc, char *const *argv, const char *version)
{
	wza_run *run = calloc(1, sizeof *run);
	if (!run)
		return NULL;
	json_t *arr = json_array();
	for (int i = 0; arr && i < argc; i++)
		if (json_array_append_new(arr, json_string(argv[i])))
			run->failed = 1;
	run->args = arr ? json_dumps(arr, JSON_COMPACT) : NULL;
	json_decref(arr);
	run->command = dup_or_null(command, &run->failed);
	run->version = dup_or_null(version, &run->failed);
	run->started = utc_now();
	run->status = dup_or_null("running", &run->failed);
	if (!run->args || !run->started || run->failed) {
		wza_run_free(run);
		return NULL;
	}
	return run;
}

void wza_run_finish(wza_run *run, const char *status)
{
	free(run->finished);
	free(run->status);
	run->finished = utc_now();
	run->status = dup_or_null(status, &run->failed);
	if (!run->finished)
		run->failed = 1;
}

void wza_run_free(wza_run *run)
{
	if (!run)
		return;
	for (int i = 0; i < run->ninputs; i++) {
		wza_input *in = &run->inputs[i];
		free(in->kind), free(in->name), free(in->origin), free(in->hash), free(in->content);
	}
	for (int i = 0; i < run->nfigures; i++) {
		wza_figure *f = &run->figures[i];
		free(f->table), free(f->row), free(f->col), free(f->text);
	}
	for (int i = 0; i < run->ncodec; i++) {
		wza_codec *c = &run->codec[i];
		free(c->window), free(c->format), free(c->metric), free(c->trace_hash);
	}
	for (int i = 0; i < run->nsim; i++)
		free(run->sim[i].format), free(run->sim[i].metric), free(run->sim[i].unit);
	for (int i = 0; i < run->npoints; i++)
		free(run->points[i].format), free(run->points[i].series);
	for (int i = 0; i < run->nfleets; i++)
		free(run->fleets[i].format), free(run->fleets[i].method);
	free(run->inputs), free(run->figures), free(run->codec), free(run->sim);
	free(run->points), free(run->fleets);
	free(run->command), free(run->args), free(run->version);
	free(run->started), free(run->finished), free(run->status);
	free(run);
}

void wza_run_input(wza_run *run, const char *kind, const char *name, const char *origin,
		   const char *hash, long long size, const char *content)
{
	wza_input *in = GROW(run, inputs, ninputs, cap_inputs);
	if (!in)
		return;
	in->kind = dup_or_null(kind, &run->failed);
	in->name = dup_or_null(name, &run->failed);
	in->origin = dup_or_null(origin ? origin : "", &run->failed);
	in->hash = dup_or_null(hash, &run->failed);
	in->content = dup_or_null(content, &run->failed);
	in->size = size;
}

void wza_run_figure(wza_run *run, const char *table, const char *row, const char *col,
		    double value, const char *text)
{
	wza_figure *f = GROW(run, figures, nfigures, cap_figures);
	if (!f)
		return;
	f->table = dup_or_null(table, &run->failed);
	f->row = dup_or_null(row, &run->failed);
	f->col = dup_or_null(col, &run->failed);
	f->text = dup_or_null(text, &run->failed);
	f->value = value;
}

void wza_run_codec(wza_run *run, const char *window, const char *format, const char *metric,
		   double value, double ci_low, double ci_high, double bits_per_value,
		   const char *trace_hash)
{
	wza_codec *c = GROW(run, codec, ncodec, cap_codec);
	if (!c)
		return;
	c->window = dup_or_null(window, &run->failed);
	c->format = dup_or_null(format, &run->failed);
	c->metric = dup_or_null(metric, &run->failed);
	c->trace_hash = dup_or_null(trace_hash, &run->failed);
	c->value = value;
	c->ci_low = ci_low;
	c->ci_high = ci_high;
	c->bits_per_value = bits_per_value;
}

void wza_run_sim(wza_run *run, const char *format, const char *metric, double value,
		 const char *unit)
{
	wza_sim *s = GROW(run, sim, nsim, cap_sim);
	if (!s)
		return;
	s->format = dup_or_null(format, &run->failed);
	s->metric = dup_or_null(metric, &run->failed);
	s->unit = dup_or_null(unit, &run->failed);
	s->value = value;
}

void wza_run_point(wza_run *run, const char *format, const char *series, double x, double y)
{
	wza_point *p = GROW(run, points, npoints, cap_points);
	if (!p)
		return;
	p->format = dup_or_null(format, &run->failed);
	p->series = dup_or_null(series, &run->failed);
	p->x = x;
	p->y = y;
}

void wza_run_fleet(wza_run *run, const wza_fleet *fleet)
{
	wza_fleet *f = GROW(run, fleets, nfleets, cap_fleets);
	if (!f)
		return;
	*f = *fleet;
	f->format = dup_or_null(fleet->format, &run->failed);
	f->method = dup_or_null(fleet->method, &run->failed);
}

const wza_figure *wza_run_find_figure(const wza_run *run, const char *table, const char *row,
				      const char *col)
{
	for (int i = 0; i < run->nfigures; i++) {
		const wza_figure *f = &run->figures[i];
		if (!strcmp(f->table, table) && !strcmp(f->row, row) && !strcmp(f->col, col))
			return f;
	}
	return NULL;
}

double wza_run_value(const wza_run *run, const char *table, const char *row, const char *col)
{
	const wza_figure *f = wza_run_find_figure(run, table, row, col);
	return f ? f->value : NAN;
}

const char *wza_run_text(const wza_run *run, const char *table, const char *row, const char *col,
			 const char *absent)
{
	const wza_figure *f = wza_run_find_figure(run, table, row, col);
	return f && f->text ? f->text : absent;
}

const wza_input *wza_run_find_input(const wza_run *run, const char *kind, const char *name)
{
	for (int i = 0; i < run->ninputs; i++)
		if (!strcmp(run->inputs[i].kind, kind) && !strcmp(run->inputs[i].name, name))
			return &run->inputs[i];
	return NULL;
}
