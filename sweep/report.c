/* The sweep report: its points' archived figures gathered into tables per
 * pair of axes and into charts, every figure beside the run it came from
 * (report.h). */
#include "sweep/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "archive/merge.h"
#include "runs/schema.h"

/* The figures the report reads, as propose runs record them. */
#define T_COST WZ_T_COST
#define T_SIM WZ_T_SIMULATION
#define C_COST "reserved_usd_year"
#define C_GPUS "gpus"
#define MAX_FORMATS 64

typedef struct {
	long index;
	long long run; /* 0 when not in the archive */
	char id[17];
	int *vi;       /* value index on each axis */
	wza_run *r;
} rpoint;

typedef struct {
	const wzsw_sweep *s;
	rpoint *pts;
	long n;
	const char *formats[MAX_FORMATS]; /* every format of the runs, first seen first */
	int nformats;
	wzsw_report *rep;
	const char *archive;
} rctx;

/* One figure with its run, to sort into min, median and max. */
typedef struct {
	double v;
	long long run;
	long index;
} sample;

static double figure(const wza_run *r, const char *table, const char *row, const char *col)
{
	const wza_figure *f = r ? wza_run_find_figure(r, table, row, col) : NULL;
	return f ? f->value : NAN;
}

/* A cost-table figure of a format by the point's sizing: memory
 * accounting (first principles), or scaling when that is the point's mode
 * (and where memory accounting gave none, in mode "both"). */
static double cost_figure(const wza_run *r, const char *format, const char *what)
{
	const wza_figure *m = r ? wza_run_find_figure(r, WZ_T_SCENARIO, "scenario", "mode") : NULL;
	int scaling = m && m->text && !strcmp(m->text, "scaling");
	char col[64];
	snprintf(col, sizeof col, "%s_%s", scaling ? "scaling" : "memory", what);
	double v = figure(r, T_COST, format, col);
	if (isnan(v) && !scaling) {
		snprintf(col, sizeof col, "scaling_%s", what);
		v = figure(r, T_COST, format, col);
	}
	return v;
}

static const char *baseline_of(const wza_run *r)
{
	const wza_figure *f = wza_run_find_figure(r, WZ_T_SCENARIO, "scenario", "baseline_format");
	return f && f->text ? f->text : "fp8-mix";
}

static int by_value(const void *a, const void *b)
{
	const sample *x = a, *y = b;
	if (x->v != y->v)
		return x->v < y->v ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* A number shown to 4 significant digits, carried in full in CSV. */
static void table_g(wzp_table *t, double v)
{
	char text[32];
	snprintf(text, sizeof text, "%.4g", v);
	wzp_table_num(t, v, text);
}

static wz_err add_table(wzsw_report *rep, wzp_table *t, const char *stem, wz_diag *diag)
{
	wzp_table **tt = t ? realloc(rep->tables, (size_t)(rep->ntables + 1) * sizeof *tt) : NULL;
	if (tt)
		rep->tables = tt;
	char **ss = tt ? realloc(rep->stems, (size_t)(rep->ntables + 1) * sizeof *ss) : NULL;
	if (ss)
		rep->stems = ss;
	char *copy = ss ? strdup(stem) : NULL;
	if (!copy) {
		wzp_table_free(t);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	rep->tables[rep->ntables] = t;
	rep->stems[rep->ntables++] = copy;
	return WZ_OK;
}

static wz_err add_chart(wzsw_report *rep, wzp_chart *c, wz_diag *diag)
{
	wzp_chart **cc = c ? realloc(rep->charts, (size_t)(rep->ncharts + 1) * sizeof *cc) : NULL;
	if (!cc) {
		wzp_chart_free(c);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	rep->charts = cc;
	rep->charts[rep->ncharts++] = c;
	return WZ_OK;
}

static int axis_index(const wzsw_sweep *s, const char *key)
{
	for (int a = 0; a < s->naxes; a++)
		if (!strcmp(s->axes[a].key, key))
			return a;
	return -1;
}

/* Points, their ids and runs: the table every other one refers to. */
static wz_err points_table(rctx *c, wz_diag *diag)
{
	const wzsw_sweep *s = c->s;
	wzp_table *t = wzp_table_new("Sweep points and their runs");
	if (!t)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	wzp_table_column(t, "point", "Point", 1);
	wzp_table_column(t, "point_id", "Point id", 0);
	wzp_table_column(t, "run", "Run", 1);
	for (int a = 0; a < s->naxes; a++)
		wzp_table_column(t, s->axes[a].key, s->axes[a].key, 0);
	for (long i = 0; i < c->n; i++) {
		const rpoint *p = &c->pts[i];
		wzp_table_row(t);
		wzp_table_numf(t, (double)p->index, 0);
		wzp_table_str(t, p->id);
		if (p->run)
			wzp_table_numf(t, (double)p->run, 0);
		else
			wzp_table_empty(t);
		for (int a = 0; a < s->naxes; a++)
			wzp_table_str(t, s->axes[a].values[p->vi[a]]);
	}
	wzp_table_note(t, "Sweep %s: %ld points, %ld not in %s (no run).", s->name, c->n,
		       c->rep->missing, c->archive);
	return add_table(c->rep, t, "points", diag);
}

/* min, lower median and max of the samples, each with its run: the lower
 * median so that every figure shown is one run's. */
static void stat_cells(wzp_table *t, sample *sm, int n, int decimals)
{
	if (!n) {
		for (int k = 0; k < 6; k++)
			wzp_table_empty(t);
		return;
	}
	qsort(sm, (size_t)n, sizeof *sm, by_value);
	const sample *pick[3] = { &sm[(n - 1) / 2], &sm[0], &sm[n - 1] };
	for (int k = 0; k < 3; k++) {
		wzp_table_numf(t, pick[k]->v, decimals);
		wzp_table_numf(t, (double)pick[k]->run, 0);
	}
}

static void stat_columns(wzp_table *t, const char *what)
{
	static const char *const names[3] = { "median", "min", "max" };
	for (int k = 0; k < 3; k++) {
		char key[64], label[96];
		snprintf(key, sizeof key, "%s_%s", what, names[k]);
		snprintf(label, sizeof label, "%s %s", what, names[k]);
		wzp_table_column(t, key, label, 1);
		snprintf(key, sizeof key, "run_%s", names[k]);
		snprintf(label, sizeof label, "Run (%s)", names[k]);
		wzp_table_column(t, key, label, 1);
	}
}

/* One table for axes A and B: per pair of their values and per format, the
 * annual reserved cost over the points with those values (the other axes
 * varying), as median, minimum and maximum with their runs.  With b < 0,
 * one axis alone. */
static wz_err pair_table(rctx *c, int a, int b, sample *sm, wz_diag *diag)
{
	const wzsw_sweep *s = c->s;
	const wzsw_axis *A = &s->axes[a], *B = b >= 0 ? &s->axes[b] : NULL;
	char title[256], stem[160];
	snprintf(title, sizeof title, "Annual reserved cost (US$) by %s%s%s", A->key,
		 B ? " and " : "", B ? B->key : "");
	snprintf(stem, sizeof stem, "pair-%s%s%s", A->key, B ? "-" : "", B ? B->key : "");
	wzp_table *t = wzp_table_new(title);
	if (!t)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	wzp_table_column(t, A->key, A->key, 0);
	if (B)
		wzp_table_column(t, B->key, B->key, 0);
	wzp_table_column(t, "format", "Format", 0);
	wzp_table_column(t, "points", "Points", 1);
	stat_columns(t, "cost");
	int nb = B ? B->nvalues : 1;
	for (int va = 0; va < A->nvalues; va++)
		for (int vb = 0; vb < nb; vb++)
			for (int f = 0; f < c->nformats; f++) {
				int n = 0;
				for (long i = 0; i < c->n; i++) {
					const rpoint *p = &c->pts[i];
					if (!p->r || p->vi[a] != va || (B && p->vi[b] != vb))
						continue;
					double v = cost_figure(p->r, c->formats[f], C_COST);
					if (!isnan(v))
						sm[n++] = (sample){ v, p->run, p->index };
				}
				if (!n)
					continue;
				wzp_table_row(t);
				wzp_table_str(t, A->values[va]);
				if (B)
					wzp_table_str(t, B->values[vb]);
				wzp_table_str(t, c->formats[f]);
				wzp_table_numf(t, n, 0);
				stat_cells(t, sm, n, 0);
			}
	wzp_table_note(t, "Cost table column memory_%s of each point's run (scaling_%s where the "
			  "point sizes by scaling); over the points with these values (the other "
			  "axes varying), the median (the lower one of an even count), minimum and "
			  "maximum, each with the run it is from.",
		       C_COST, C_COST);
	return add_table(c->rep, t, stem, diag);
}

/* Whether points p and q lie on the same slice: the same value on every
 * axis but x and those the chart draws as series. */
static int same_slice(const wzsw_sweep *s, const rpoint *p, const rpoint *q, int x)
{
	for (int a = 0; a < s->naxes; a++) {
		const char *k = s->axes[a].key;
		if (a == x || !strcmp(k, "formats") || !strcmp(k, WZSW_KEY_SIMULATE))
			continue;
		if (p->vi[a] != q->vi[a])
			return 0;
	}
	return 1;
}

static void slice_words(const wzsw_sweep *s, const rpoint *p, int x, wz_buf *b)
{
	for (int a = 0; a < s->naxes; a++) {
		const char *k = s->axes[a].key;
		if (a == x || !strcmp(k, "formats") || !strcmp(k, WZSW_KEY_SIMULATE))
			continue;
		wz_buf_printf(b, "%s%s = %s", b->len ? ", " : "", k, s->axes[a].values[p->vi[a]]);
	}
}

typedef struct {
	const char *stem, *x_key, *title, *xlabel, *ylabel;
	double scale; /* figure -> chart unit */
	int with_sim; /* also the fleets sized by simulation */
} line_kind;

/* The value of series f (format, or format sized by simulation) at a
 * point; NaN when absent. */
static double series_value(const line_kind *k, const rpoint *p, const char *format, int sim)
{
	const char *what = !strcmp(k->stem, "cost-context") ? C_COST : C_GPUS;
	return sim ? figure(p->r, T_SIM, format, what) : cost_figure(p->r, format, what);
}

/* Charts of one kind, one per slice (the other axes' values), each line a
 * format; the table of the same stem gives the run of every point drawn. */
static wz_err line_charts(rctx *c, const line_kind *k, wz_diag *diag)
{
	const wzsw_sweep *s = c->s;
	int x = axis_index(s, k->x_key);
	if (x < 0) {
		wz_buf_printf(&c->rep->skipped, "%s: the sweep has no axis.%s.\n", k->stem, k->x_key);
		return WZ_OK;
	}
	wzp_table *t = wzp_table_new(k->title);
	if (!t)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	wzp_table_column(t, "chart", "Chart", 0);
	wzp_table_column(t, "slice", "Other axes", 0);
	wzp_table_column(t, k->x_key, k->x_key, 1);
	wzp_table_column(t, "series", "Series", 0);
	wzp_table_column(t, "value", k->ylabel, 1);
	wzp_table_column(t, "run", "Run", 1);
	wzp_table_column(t, "point", "Point", 1);
	char *done = calloc((size_t)c->n + 1, 1);
	wz_err err = done ? WZ_OK : wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	int nslices = 0, nleft = 0;
	for (long first = 0; first < c->n && !err; first++) {
		if (done[first] || !c->pts[first].r)
			continue;
		const rpoint *p0 = &c->pts[first];
		nslices++;
		for (long i = first; i < c->n; i++)
			if (same_slice(s, p0, &c->pts[i], x))
				done[i] = 1;
		if (nslices > WZSW_REPORT_MAX_SLICES) {
			nleft++;
			continue;
		}
		char name[80];
		if (s->naxes > 1)
			snprintf(name, sizeof name, "%s-%d", k->stem, nslices);
		else
			snprintf(name, sizeof name, "%s", k->stem);
		wz_buf words = { 0 };
		slice_words(s, p0, x, &words);
		char title[512];
		snprintf(title, sizeof title, "%s%s%s", k->title, words.len ? ": " : "",
			 wz_buf_str(&words));
		wzp_chart *ch = wzp_chart_new(WZP_CHART_LINES, name, title);
		if (!ch) {
			wz_buf_free(&words);
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
			break;
		}
		wzp_chart_axes(ch, k->xlabel, k->ylabel);
		for (int sim = 0; sim <= k->with_sim; sim++)
			for (int f = 0; f < c->nformats; f++) {
				char st[96];
				snprintf(st, sizeof st, "%s%s", c->formats[f], sim ? " (simulated)" : "");
				/* A series only when some point of the slice has it. */
				int any = 0;
				for (long i = first; i < c->n && !any; i++)
					any = c->pts[i].r && same_slice(s, p0, &c->pts[i], x) &&
					      !isnan(series_value(k, &c->pts[i], c->formats[f], sim));
				if (!any)
					continue;
				int si = wzp_chart_series(ch, st);
				(void)si;
			}
		/* Rows are the x axis's values in the sweep's order; each cell is
		 * the first point of the slice at that x with the series. */
		const wzsw_axis *X = &s->axes[x];
		for (int v = 0; v < X->nvalues; v++) {
			double xv = strtod(X->values[v], NULL);
			long xl;
			if (!wz_parse_count(X->values[v], &xl))
				xv = (double)xl;
			wzp_chart_row(ch, X->values[v], xv);
			int si = 0;
			for (int sim = 0; sim <= k->with_sim; sim++)
				for (int f = 0; f < c->nformats; f++) {
					const rpoint *hit = NULL;
					int any = 0;
					for (long i = first; i < c->n; i++) {
						const rpoint *p = &c->pts[i];
						if (!p->r || !same_slice(s, p0, p, x))
							continue;
						if (!isnan(series_value(k, p, c->formats[f], sim))) {
							any = 1;
							if (p->vi[x] == v && !hit)
								hit = p;
						}
					}
					if (!any)
						continue;
					if (hit) {
						double y = series_value(k, hit, c->formats[f], sim);
						wzp_chart_value(ch, si, y * k->scale, NAN, NAN);
						char st[96];
						snprintf(st, sizeof st, "%s%s", c->formats[f],
							 sim ? " (simulated)" : "");
						wzp_table_row(t);
						wzp_table_str(t, name);
						wzp_table_str(t, words.len ? wz_buf_str(&words) : "-");
						wzp_table_numf(t, xv, 0);
						wzp_table_str(t, st);
						table_g(t, y * k->scale);
						wzp_table_numf(t, (double)hit->run, 0);
						wzp_table_numf(t, (double)hit->index, 0);
					}
					si++;
				}
		}
		wzp_chart_note(ch, "Sweep %s, archive %s; %s.csv names the run of every point drawn.",
			       s->name, c->archive, k->stem);
		wz_buf_free(&words);
		err = add_chart(c->rep, ch, diag);
	}
	free(done);
	if (nleft)
		wz_buf_printf(&c->rep->skipped,
			      "%s: %d of %d charts left out (at most %d; the table has them all).\n",
			      k->stem, nleft, nslices, WZSW_REPORT_MAX_SLICES);
	wzp_table_note(t, "Every figure drawn in the %s charts, with its run and point.", k->stem);
	if (err) {
		wzp_table_free(t);
		return err;
	}
	return add_table(c->rep, t, k->stem, diag);
}

void wzsw_pareto(const double *error, const double *cost, int n, int *front)
{
	for (int i = 0; i < n; i++) {
		front[i] = !isnan(error[i]) && !isnan(cost[i]);
		for (int j = 0; j < n && front[i]; j++) {
			if (j == i || isnan(error[j]) || isnan(cost[j]))
				continue;
			if (error[j] <= error[i] && cost[j] <= cost[i] &&
			    (error[j] < error[i] || cost[j] < cost[i]))
				front[i] = 0;
		}
	}
}

/* Mean nmse of a format over the windows of the codec run; NaN if none. */
static double quality_of(const wza_run *codec, const char *format, int *nwindows)
{
	double sum = 0;
	int n = 0;
	for (int i = 0; i < codec->ncodec; i++) {
		const wza_codec *m = &codec->codec[i];
		if (!strcmp(m->format, format) && !strcmp(m->metric, "nmse") && !isnan(m->value))
			sum += m->value, n++;
	}
	*nwindows = n;
	return n ? sum / n : NAN;
}

/* The cost-quality front: each format's measured error against its annual
 * reserved cost relative to the baseline format's at the same point. */
static wz_err front(rctx *c, const wza_run *codec, long long codec_run, sample *sm,
		    wz_diag *diag)
{
	if (!codec) {
		wz_buf_puts(&c->rep->skipped,
			    "front: no codec measurements given (--codec-run RUN).\n");
		return WZ_OK;
	}
	int nf = c->nformats;
	double err_[MAX_FORMATS], med[MAX_FORMATS];
	int nwin[MAX_FORMATS], on[MAX_FORMATS];
	for (int f = 0; f < nf; f++)
		err_[f] = quality_of(codec, c->formats[f], &nwin[f]), med[f] = NAN;
	wzp_table *t = wzp_table_new("Cost-quality front across formats");
	if (!t)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	wzp_table_column(t, "format", "Format", 0);
	wzp_table_column(t, "nmse", "nmse (mean)", 1);
	wzp_table_column(t, "windows", "Windows", 1);
	wzp_table_column(t, "codec_run", "Codec run", 1);
	wzp_table_column(t, "points", "Points", 1);
	stat_columns(t, "cost_ratio");
	wzp_table_column(t, "pareto", "Pareto", 0);
	/* Medians first, for the front; the samples are rebuilt per row. */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1)
			wzsw_pareto(err_, med, nf, on);
		for (int f = 0; f < nf; f++) {
			int n = 0;
			for (long i = 0; i < c->n; i++) {
				const rpoint *p = &c->pts[i];
				if (!p->r)
					continue;
				double v = cost_figure(p->r, c->formats[f], C_COST);
				double b = cost_figure(p->r, baseline_of(p->r), C_COST);
				if (!isnan(v) && !isnan(b) && b > 0)
					sm[n++] = (sample){ v / b, p->run, p->index };
			}
			if (pass == 0) {
				if (n) {
					qsort(sm, (size_t)n, sizeof *sm, by_value);
					med[f] = sm[(n - 1) / 2].v;
				}
				continue;
			}
			if (isnan(err_[f]) || !n)
				continue;
			wzp_table_row(t);
			wzp_table_str(t, c->formats[f]);
			table_g(t, err_[f]);
			wzp_table_numf(t, nwin[f], 0);
			wzp_table_numf(t, (double)codec_run, 0);
			wzp_table_numf(t, n, 0);
			stat_cells(t, sm, n, 3);
			wzp_table_str(t, on[f] ? "yes" : "no");
		}
	}
	wzp_table_note(t, "nmse: mean over the windows of codec run %lld; cost ratio: the format's "
			  "annual reserved cost over the baseline format's at the same point; "
			  "Pareto: no other format has both lower nmse and lower median cost.",
		       codec_run);
	wzp_chart *ch = wzp_chart_new(WZP_CHART_POINTS, "front", "Cost-quality front across formats");
	if (!ch) {
		wzp_table_free(t);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	wzp_chart_axes(ch, "Attention-cache error (nmse, mean over windows)",
		       "Annual reserved cost / baseline's (median, min-max)");
	wzp_chart_log(ch, 1, 0);
	int drawn = 0;
	for (int r = 0; r < wzp_table_rows(t); r++) {
		char st[128];
		const char *f = wzp_table_text(t, r, 0);
		snprintf(st, sizeof st, "%s%s", f,
			 !strcmp(wzp_table_text(t, r, wzp_table_cols(t) - 1), "yes") ? " (Pareto)"
											 : "");
		wzp_chart_series(ch, st);
	}
	for (int r = 0; r < wzp_table_rows(t); r++) {
		double e = wzp_table_value(t, r, 1);
		if (!(e > 0))
			continue;
		wzp_chart_row(ch, wzp_table_text(t, r, 0), e);
		wzp_chart_value(ch, r, wzp_table_value(t, r, 5), wzp_table_value(t, r, 7),
				wzp_table_value(t, r, 9));
		drawn++;
	}
	wzp_chart_note(ch, "Sweep %s; quality from codec run %lld; front.csv names the runs.",
		       c->s->name, codec_run);
	wz_err err = add_table(c->rep, t, "front", diag);
	if (err) {
		wzp_chart_free(ch);
		return err;
	}
	if (!drawn) {
		wzp_chart_free(ch);
		wz_buf_puts(&c->rep->skipped,
			    "front: no format of the sweep has an nmse in the codec run.\n");
		return WZ_OK;
	}
	return add_chart(c->rep, ch, diag);
}

static wz_err gather(rctx *c, wza_archive *a, wz_diag *diag)
{
	const wzsw_sweep *s = c->s;
	wza_point_run *runs;
	int nruns;
	wz_err err = wza_point_runs(a, NULL, &runs, &nruns, diag);
	if (err)
		return err;
	c->pts = calloc((size_t)s->npoints, sizeof *c->pts);
	if (!c->pts)
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	for (long i = 0; i < s->npoints && !err; i++) {
		rpoint *p = &c->pts[c->n++];
		p->index = i;
		if (!(p->vi = calloc((size_t)s->naxes + 1, sizeof *p->vi))) {
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
			break;
		}
		long rest = i;
		for (int ax = s->naxes - 1; ax >= 0; ax--) {
			p->vi[ax] = (int)(rest % s->axes[ax].nvalues);
			rest /= s->axes[ax].nvalues;
		}
		wzsw_point pt;
		if ((err = wzsw_point_build(s, i, &pt, diag)))
			break;
		memcpy(p->id, pt.id, sizeof p->id);
		wzsw_point_clear(&pt);
		/* The oldest run of the point: runs are listed oldest first. */
		for (int k = 0; k < nruns && !p->run; k++)
			if (!strcmp(runs[k].point, p->id))
				p->run = runs[k].run;
		if (!p->run) {
			c->rep->missing++;
			continue;
		}
		if ((err = wza_load(a, p->run, &p->r, diag)))
			break;
		for (int f = 0; f < p->r->nfigures; f++) {
			const wza_figure *fg = &p->r->figures[f];
			if (strcmp(fg->table, T_COST))
				continue;
			int seen = 0;
			for (int k = 0; k < c->nformats && !seen; k++)
				seen = !strcmp(c->formats[k], fg->row);
			if (!seen && c->nformats < MAX_FORMATS)
				c->formats[c->nformats++] = fg->row;
		}
	}
	wza_point_runs_free(runs, nruns);
	return err;
}

static void release(rctx *c)
{
	for (long i = 0; i < c->n; i++) {
		free(c->pts[i].vi);
		wza_run_free(c->pts[i].r);
	}
	free(c->pts);
}

void wzsw_report_free(wzsw_report *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->ntables; i++)
		wzp_table_free(r->tables[i]), free(r->stems[i]);
	for (int i = 0; i < r->ncharts; i++)
		wzp_chart_free(r->charts[i]);
	free(r->tables), free(r->stems), free(r->charts);
	wz_buf_free(&r->skipped);
	free(r);
}

wz_err wzsw_report_build(const wzsw_sweep *s, wza_archive *a, const wza_run *codec,
			 long long codec_run, wzsw_report **out, wz_diag *diag)
{
	*out = NULL;
	wzsw_report *rep = calloc(1, sizeof *rep);
	if (!rep)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	rep->points = s->npoints;
	rctx c = { .s = s, .rep = rep, .archive = wza_path(a) };
	wz_err err = gather(&c, a, diag);
	sample *sm = err ? NULL : calloc((size_t)s->npoints + 1, sizeof *sm);
	if (!err && !sm)
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (!err)
		err = points_table(&c, diag);
	if (!err && s->naxes == 1)
		err = pair_table(&c, 0, -1, sm, diag);
	for (int x = 0; x < s->naxes && !err; x++)
		for (int y = x + 1; y < s->naxes && !err; y++)
			err = pair_table(&c, x, y, sm, diag);
	static const line_kind kinds[2] = {
		{ "cost-context", "context", "Annual reserved cost against context",
		  "Context (tokens)", "Annual reserved cost (million US$)", 1e-6, 0 },
		{ "gpus-users", "users", "GPUs against users", "Concurrent users", "GPUs", 1, 1 },
	};
	for (int k = 0; k < 2 && !err; k++)
		err = line_charts(&c, &kinds[k], diag);
	if (!err)
		err = front(&c, codec, codec_run, sm, diag);
	free(sm);
	release(&c);
	if (err) {
		wzsw_report_free(rep);
		return err;
	}
	*out = rep;
	return WZ_OK;
}
