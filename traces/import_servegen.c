/* Draws requests from ServeGen's per-client distributions (arrival rate, CV
 * and family per window; token-count probability tables per 6 hours). */
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_csv.h"
#include "common/wz_io.h"
#include "common/wz_str.h"
#include "traces/traffic_import.h"

enum { DIST_GAMMA, DIST_WEIBULL };

typedef struct {
	double start, rate, cv, shape;
	int dist;
	int line;
} window;

/* Bounds that keep sampling finite: a family's shape outside them makes the
 * Gamma sampler spin or the gaps vanish; a period under a second (windows
 * 1e-20 s apart) repeats the day forever; a file asking for more requests
 * than this would fill memory before it finished. */
#define SHAPE_MIN 1e-3
#define SHAPE_MAX 1e4
#define PERIOD_MIN_S 1.0
#define MAX_REQUESTS 10000000.0 /* 640 MB of requests, sorted in as much again */
/* Windows visited while sampling (the period's windows times the periods
 * the span touches): each visit costs a look-up, so a file of 10^5 windows
 * sampled over many periods is refused before it runs for minutes. */
#define MAX_WINDOW_VISITS 10000000.0

typedef struct {
	double *values, *cdf; /* cdf[i]: probability of values[0..i], last = 1 */
	int n;
} table;

typedef struct {
	double start; /* seconds since 00:00 the tables apply from */
	table input, output;
} length_window;

typedef struct {
	int id;
	char *trace_path, *dataset_path;
	window *windows;
	int nwindows;
	double day; /* length of the trace's period, normally 86400 s */
	length_window *lengths;
	int nlengths;
} client;

static void client_free(client *c)
{
	free(c->trace_path);
	free(c->dataset_path);
	free(c->windows);
	for (int i = 0; i < c->nlengths; i++) {
		free(c->lengths[i].input.values);
		free(c->lengths[i].input.cdf);
		free(c->lengths[i].output.values);
		free(c->lengths[i].output.cdf);
	}
	free(c->lengths);
}

static wz_err load_windows(client *c, wz_diag *diag)
{
	const char *path = c->trace_path;
	wz_csv *csv;
	wz_err err = wzt_csv_load(path, &csv, diag);
	if (err)
		return err;
	c->windows = calloc((size_t)csv->nrows + 1, sizeof *c->windows);
	if (!c->windows) {
		wz_csv_free(csv);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	static const char *const names[] = { "window start", "rate", "cv", "distribution" };
	for (int i = 0; i < csv->nrows && !err; i++) {
		const wz_csv_row *row = &csv->rows[i];
		window *w = &c->windows[c->nwindows];
		double v[3];
		for (int f = 0; f < 3 && !err; f++) {
			const char *s = wz_csv_field(row, f);
			if (wz_parse_double(s, &v[f]) != 0 || v[f] < 0)
				err = wz_diag_set(diag, WZ_ERR_INPUT,
						  "%s:%d: field %s: '%s' is not a non-negative number",
						  path, row->line, names[f], s);
		}
		if (err)
			break;
		if (c->nwindows && v[0] <= c->windows[c->nwindows - 1].start) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: field window start: %g does not follow %g", path,
					  row->line, v[0], c->windows[c->nwindows - 1].start);
			break;
		}
		*w = (window){ .start = v[0], .rate = v[1], .cv = v[2], .dist = DIST_GAMMA,
			       .line = row->line };
		const char *dist = wz_csv_field(row, 3);
		double shape = 0;
		if (wz_name_eq(dist, "Weibull"))
			w->dist = DIST_WEIBULL;
		else if (*dist && !wz_name_eq(dist, "Gamma"))
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: field distribution: '%s' is not Gamma or Weibull",
					  path, row->line, dist);
		else if (w->rate > 0 && !*dist && !(w->cv > 0))
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: field cv: a window with traffic needs a positive cv or "
					  "a distribution",
					  path, row->line);
		if (!err && *dist && w->rate > 0 &&
		    (wz_parse_double(wz_csv_field(row, 4), &shape) != 0 || !(shape > 0)))
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: field shape: '%s' is not a positive number", path,
					  row->line, wz_csv_field(row, 4));
		/* Without a fitted family, a Gamma with the window's CV. */
		w->shape = shape > 0 ? shape : (w->cv > 0 ? 1.0 / (w->cv * w->cv) : 1.0);
		if (!err && w->rate > 0 && !(w->shape >= SHAPE_MIN && w->shape <= SHAPE_MAX))
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: field %s: %s gives a shape of %g, outside [%g, %g]",
					  path, row->line, shape > 0 ? "shape" : "cv",
					  wz_csv_field(row, shape > 0 ? 4 : 2), w->shape, SHAPE_MIN,
					  SHAPE_MAX);
		c->nwindows++;
	}
	wz_csv_free(csv);
	if (!err && c->nwindows == 0)
		err = wz_diag_set(diag, WZ_ERR_INPUT, "%s:1: no windows", path);
	if (err)
		return err;
	double step = c->nwindows > 1 ? c->windows[c->nwindows - 1].start -
						c->windows[c->nwindows - 2].start
				      : 86400.0;
	c->day = c->windows[c->nwindows - 1].start + step;
	if (!(c->day >= PERIOD_MIN_S) || !isfinite(c->day))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field window start: the windows make a period of %g s "
				   "(at least %g s)",
				   path, c->windows[c->nwindows - 1].line, c->day, PERIOD_MIN_S);
	return WZ_OK;
}

/* One number of a table, up to the first of `ends` (or the text's end),
 * read by the strict parser every format uses (no hex, no inf); *s moves
 * past it. */
static int table_number(const char **s, const char *ends, double *out)
{
	size_t n = strcspn(*s, ends);
	char text[64];
	if (n == 0 || n >= sizeof text)
		return -1;
	memcpy(text, *s, n);
	text[n] = 0;
	*s += n;
	return wz_parse_double(text, out);
}

/* ServeGen stores each table as the text of a Python dict,
 * "{45: 0.0097, 46: 0.0117}"; a JSON object of the same is also accepted. */
static int parse_table_text(const char *s, table *t)
{
	size_t cap = 64;
	t->values = malloc(sizeof *t->values * cap);
	t->cdf = malloc(sizeof *t->cdf * cap);
	if (!t->values || !t->cdf)
		return -1;
	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	if (*s++ != '{')
		return -1;
	for (;;) {
		while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r' || *s == ',')
			s++;
		if (*s == '}')
			return 0;
		double key, p;
		if (table_number(&s, ":", &key))
			return -1;
		while (*s == ' ')
			s++;
		if (*s++ != ':')
			return -1;
		while (*s == ' ')
			s++;
		if (table_number(&s, ",} \t\r\n", &p) || p < 0)
			return -1;
		if ((size_t)t->n == cap) {
			cap *= 2;
			double *gv = realloc(t->values, sizeof *gv * cap);
			if (gv)
				t->values = gv;
			double *gc = realloc(t->cdf, sizeof *gc * cap);
			if (gc)
				t->cdf = gc;
			if (!gv || !gc)
				return -1;
		}
		t->values[t->n] = key;
		t->cdf[t->n] = p;
		t->n++;
	}
}

/* The line of member `name` of window `wkey` in the file's text: jansson
 * keeps no positions for values, and messages must name a line. */
static int member_line(const char *text, const char *wkey, const char *name)
{
	char quoted[96];
	snprintf(quoted, sizeof quoted, "\"%s\"", wkey);
	const char *at = strstr(text, quoted);
	snprintf(quoted, sizeof quoted, "\"%s\"", name);
	const char *member = at ? strstr(at, quoted) : NULL;
	if (member)
		at = member;
	int line = 1;
	for (const char *p = text; at && p < at; p++)
		line += *p == '\n';
	return line;
}

static wz_err load_table(json_t *win, const char *name, const char *path, const char *text,
			 const char *wkey, table *t, wz_diag *diag)
{
	json_t *v = json_object_get(win, name);
	int bad = 0;
	if (json_is_string(v)) {
		bad = parse_table_text(json_string_value(v), t);
	} else if (json_is_object(v)) {
		char *dump = json_dumps(v, JSON_COMPACT);
		/* Quoted keys: drop the quotes so the same parser reads it. */
		if (dump) {
			char *w = dump;
			for (char *r = dump; *r; r++)
				if (*r != '"')
					*w++ = *r;
			*w = '\0';
		}
		bad = !dump || parse_table_text(dump, t);
		free(dump);
	} else {
		bad = 1;
	}
	double total = 0;
	for (int i = 0; !bad && i < t->n; i++)
		total += t->cdf[i];
	/* "{}": the client sent nothing in those hours. */
	if (!bad && t->n == 0)
		return WZ_OK;
	if (bad || !(total > 0))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: window \"%s\": field %s: not a table of {tokens: "
				   "probability}",
				   path, member_line(text, wkey, name), wkey, name);
	for (int i = 0; i < t->n; i++) {
		if (t->values[i] < 0 || t->values[i] > (double)WZT_MAX_TOKENS)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s:%d: window \"%s\": field %s: token count %g out of range",
					   path, member_line(text, wkey, name), wkey, name,
					   t->values[i]);
		t->cdf[i] = (i ? t->cdf[i - 1] : 0) + t->cdf[i] / total;
	}
	t->cdf[t->n - 1] = 1.0;
	return WZ_OK;
}

static int length_cmp(const void *a, const void *b)
{
	double x = ((const length_window *)a)->start, y = ((const length_window *)b)->start;
	return x < y ? -1 : x > y;
}

static wz_err load_lengths(client *c, wz_diag *diag)
{
	const char *path = c->dataset_path;
	char *text;
	size_t n;
	wz_err err = wz_read_file(path, WZT_MAX_FILE_BYTES, &text, &n, diag);
	if (err)
		return err;
	json_error_t jerr;
	size_t skip = n >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3) ? 3 : 0;
	json_t *root = json_loadb(text + skip, n - skip, 0, &jerr);
	if (!root) {
		free(text);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: not JSON: %s", path, jerr.line,
				   jerr.text);
	}
	if (!json_is_object(root) || json_object_size(root) == 0)
		err = wz_diag_set(diag, WZ_ERR_INPUT, "%s:1: want an object of windows", path);
	else if (!(c->lengths = calloc(json_object_size(root), sizeof *c->lengths)))
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	const char *key;
	json_t *win;
	json_object_foreach(root, key, win)
	{
		if (err)
			break;
		length_window *lw = &c->lengths[c->nlengths++];
		if (wz_parse_double(key, &lw->start) != 0 || !json_is_object(win)) {
			err = wz_diag_set(diag, WZ_ERR_INPUT,
					  "%s:%d: window \"%s\": want seconds since 00:00 and an "
					  "object",
					  path, member_line(text, key, key), key);
			break;
		}
		err = load_table(win, "input_tokens", path, text, key, &lw->input, diag);
		if (!err)
			err = load_table(win, "output_tokens", path, text, key, &lw->output, diag);
		if (err)
			break;
	}
	json_decref(root);
	free(text);
	if (!err)
		qsort(c->lengths, (size_t)c->nlengths, sizeof *c->lengths, length_cmp);
	return err;
}

static double draw(const table *t, wzt_rng *rng)
{
	double u = wzt_rng_uniform(rng);
	int lo = 0, hi = t->n - 1;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (t->cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return t->values[lo];
}

/* The tables in force at a time of day: the latest non-empty ones that
 * start by then, else (traffic where the tables have none) the first
 * non-empty ones. */
static const length_window *pick_lengths(const client *c, double time_of_day)
{
	const length_window *found = NULL;
	for (int k = 0; k < c->nlengths; k++) {
		const length_window *lw = &c->lengths[k];
		if (!lw->input.n || !lw->output.n)
			continue;
		if (lw->start <= time_of_day || !found)
			found = lw;
		if (lw->start > time_of_day)
			break;
	}
	return found;
}

/* Requests of one client in [from, to) (seconds since 00:00 of day 0; days
 * repeat).  Each window is a renewal process of its own whose mean gap is
 * exactly 1/rate: the file's fitted scale does not always agree with its
 * rate, and the rate is what sizing depends on. */
static wz_err sample_client(const client *c, const wzt_servegen_opts *o, int64_t *next_session,
			    wzt_traffic *t, wz_diag *diag)
{
	wzt_rng rng;
	/* Seeded per client, so choosing other clients leaves this one's
	 * requests unchanged. */
	wzt_rng_seed(&rng, o->seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(c->id + 1)));
	double from = o->start_s, to = o->start_s + o->duration_s;
	double scale_rate = o->rate_scale > 0 ? o->rate_scale : 1.0;
	double day0 = floor(from / c->day) * c->day;
	for (double day = day0; day < to; day += c->day) {
		for (int i = 0; i < c->nwindows; i++) {
			const window *w = &c->windows[i];
			double ws = day + w->start;
			double we = day + (i + 1 < c->nwindows ? c->windows[i + 1].start : c->day);
			if (we <= from || ws >= to || !(w->rate > 0))
				continue;
			double rate = w->rate * scale_rate, mean = 1.0 / rate;
			const length_window *lw = pick_lengths(c, w->start);
			if (!lw)
				return wz_diag_set(diag, WZ_ERR_INPUT,
						   "%s: no input_tokens and output_tokens tables for "
						   "the traffic of %s",
						   c->dataset_path, c->trace_path);
			for (double now = ws;;) {
				if (w->dist == DIST_WEIBULL)
					now += wzt_rng_weibull(&rng, w->shape,
							       mean / tgamma(1.0 + 1.0 / w->shape));
				else
					now += wzt_rng_gamma(&rng, w->shape, mean / w->shape);
				if (now >= we || now >= to)
					break;
				if (now < from)
					continue;
				wzt_request r = { .session = (*next_session)++,
						  .arrival_s = now - from,
						  .prompt_tokens = (int64_t)draw(&lw->input, &rng),
						  .output_tokens = (int64_t)draw(&lw->output, &rng) };
				wz_err err = wzt_traffic_push(t, &r, diag);
				if (err)
					return err;
			}
		}
	}
	return WZ_OK;
}

/* The number of requests sample_client will draw on average, counted
 * before any is drawn; more than MAX_REQUESTS (over all clients) is refused
 * naming the window that asks for the most. */
static wz_err check_expected(const client *c, const wzt_servegen_opts *o, double *total,
			     wz_diag *diag)
{
	double from = o->start_s, to = o->start_s + o->duration_s;
	double scale_rate = o->rate_scale > 0 ? o->rate_scale : 1.0;
	double days = ceil(to / c->day) - floor(from / c->day);
	double most = 0;
	int most_line = c->windows[0].line;
	if (!(days <= 1e6))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: sampling %g s repeats its %g s period %.3g times (at most "
				   "1e6)",
				   c->trace_path, o->duration_s, c->day, days);
	if (!(days * c->nwindows <= MAX_WINDOW_VISITS))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field window start: %d windows over %.3g periods of %g s "
				   "make %.3g window visits (at most %.0f); sample a shorter "
				   "--duration",
				   c->trace_path, c->windows[c->nwindows - 1].line, c->nwindows, days,
				   c->day, days * c->nwindows, MAX_WINDOW_VISITS);
	for (int i = 0; i < c->nwindows; i++) {
		const window *w = &c->windows[i];
		double len = (i + 1 < c->nwindows ? c->windows[i + 1].start : c->day) - w->start;
		double n = w->rate * scale_rate * fmin(len * days, o->duration_s);
		*total += n;
		if (n > most)
			most = n, most_line = w->line;
	}
	if (!(*total <= MAX_REQUESTS))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field rate: sampling %g s would draw about %.3g requests "
				   "(at most %.0f); lower the rate, --rate-scale or --duration",
				   c->trace_path, most_line, o->duration_s, *total, MAX_REQUESTS);
	return WZ_OK;
}

/* Finds the chunks: a folder is scanned for chunk-<i>-trace.csv; a file
 * chunk-<i>-trace.csv or chunk-<i>-dataset.json names its pair. */
static wz_err find_clients(const char *const *paths, int n_paths, client **out, int *n_out,
			   wz_diag *diag)
{
	client *cs = NULL;
	int n = 0, cap = 0;
	for (int p = 0; p < n_paths; p++) {
		DIR *dir = opendir(paths[p]);
		struct dirent *de;
		const char *only = NULL;
		char *folder = NULL;
		if (!dir) {
			const char *slash = strrchr(paths[p], '/');
			folder = slash ? strndup(paths[p], (size_t)(slash - paths[p]) + 1)
				       : strdup("./");
			only = slash ? slash + 1 : paths[p];
			dir = folder ? opendir(folder) : NULL;
			if (!dir) {
				free(folder);
				*out = cs;
				*n_out = n;
				return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot open", paths[p]);
			}
		}
		while ((de = readdir(dir))) {
			int id, used = 0;
			char kind[16];
			if (sscanf(de->d_name, "chunk-%d-%15[a-z].%n", &id, kind, &used) != 2 || !used)
				continue;
			if (strcmp(kind, "trace") || strcmp(de->d_name + used, "csv"))
				continue;
			char trace_name[64], dataset_name[64];
			snprintf(trace_name, sizeof trace_name, "chunk-%d-trace.csv", id);
			snprintf(dataset_name, sizeof dataset_name, "chunk-%d-dataset.json", id);
			if (only && strcmp(only, trace_name) && strcmp(only, dataset_name))
				continue;
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				client *g = realloc(cs, sizeof *g * (size_t)cap);
				if (!g) {
					closedir(dir);
					free(folder);
					*out = cs;
					*n_out = n;
					return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
				}
				cs = g;
			}
			const char *base = folder ? folder : paths[p];
			cs[n] = (client){ .id = id,
					  .trace_path = wz_path_join(base, trace_name),
					  .dataset_path = wz_path_join(base, dataset_name) };
			n++;
		}
		closedir(dir);
		free(folder);
	}
	*out = cs;
	*n_out = n;
	if (!n)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: no ServeGen chunk-<i>-trace.csv found", n_paths ? paths[0] : "");
	for (int i = 0; i < n; i++)
		if (!cs[i].trace_path || !cs[i].dataset_path)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	return WZ_OK;
}

static int client_cmp(const void *a, const void *b)
{
	int x = ((const client *)a)->id, y = ((const client *)b)->id;
	return x < y ? -1 : x > y;
}

wz_err wzt_import_servegen(const char *const *paths, int n_paths, const wzt_servegen_opts *opts,
			   wzt_traffic **out, wz_diag *diag)
{
	*out = NULL;
	if (!(opts->duration_s > 0) || !isfinite(opts->duration_s) || !(opts->start_s >= 0))
		return wz_diag_set(diag, WZ_ERR_USAGE,
				   "ServeGen sampling needs a positive duration and a start >= 0");
	if (!(opts->start_s <= WZT_MAX_SPAN_S) || !(opts->duration_s <= WZT_MAX_SPAN_S))
		return wz_diag_set(diag, WZ_ERR_USAGE,
				   "ServeGen sampling: --start %g s and --duration %g s must each be "
				   "at most %.0f s (366 days)",
				   opts->start_s, opts->duration_s, WZT_MAX_SPAN_S);
	client *cs = NULL;
	int n = 0;
	wz_err err = find_clients(paths, n_paths, &cs, &n, diag);
	if (!err)
		qsort(cs, (size_t)n, sizeof *cs, client_cmp);
	for (int k = 0; k < opts->n_clients && !err; k++) {
		int found = 0;
		for (int i = 0; i < n; i++)
			found |= cs[i].id == opts->clients[k];
		if (!found)
			err = wz_diag_set(diag, WZ_ERR_NOT_FOUND, "%s: no client chunk-%d",
					  paths[0], opts->clients[k]);
	}
	wzt_traffic *t = NULL;
	if (!err) {
		wz_buf src = { 0 };
		wz_buf_printf(&src, "servegen:%s start=%g duration=%g seed=%llu", paths[0],
			      opts->start_s, opts->duration_s, (unsigned long long)opts->seed);
		t = wzt_traffic_new(paths[0], wz_buf_str(&src));
		wz_buf_free(&src);
		if (!t)
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	int64_t next_session = 0;
	double expected = 0;
	for (int i = 0; i < n && !err; i++) {
		int wanted = opts->n_clients == 0;
		for (int k = 0; k < opts->n_clients; k++)
			wanted |= cs[i].id == opts->clients[k];
		if (!wanted)
			continue;
		err = load_windows(&cs[i], diag);
		if (!err)
			err = check_expected(&cs[i], opts, &expected, diag);
		if (!err)
			err = load_lengths(&cs[i], diag);
		if (!err)
			err = sample_client(&cs[i], opts, &next_session, t, diag);
	}
	for (int i = 0; i < n; i++)
		client_free(&cs[i]);
	free(cs);
	/* No rebase: times stay relative to the chosen start of the day. */
	if (!err) {
		wzt_traffic_sort(t);
		err = wzt_traffic_renumber(t, diag);
	}
	if (err) {
		wzt_traffic_free(t);
		return err;
	}
	*out = t;
	return WZ_OK;
}
