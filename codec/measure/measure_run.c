/* `codec measure`'s work (measure_run.h): every piece (a window's spectrum,
 * a window in a format, a sweep rate) is a job that writes only its own
 * slot, and jobs are handed out in a fixed order, so the results do not
 * depend on how many threads ran them or which ran which. */
#include "codec/measure/measure_run.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/measure/paired.h"

const double wzc_iso_rates[WZC_ISO_N] = { 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5,
					  7.0, 7.5, 8.0, 8.5, 9.0, 10.0, 11.0, 12.0 };

wzc_ci wzc_fewer_bits(double bits, wzc_ci iso)
{
	wzc_ci ci = { bits / iso.value, bits / iso.hi, bits / iso.lo };
	return ci;
}

/* A pool of threads running job(ud, i) for i in 0..n-1, each i once; after
 * a job fails (non-zero), jobs not yet started are skipped. */
typedef struct {
	int n, next, failed;
	int (*job)(void *ud, int i);
	void *ud;
	pthread_mutex_t lock;
} pool;

static void *pool_worker(void *arg)
{
	pool *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		int i = p->failed ? p->n : p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->n)
			return NULL;
		if (p->job(p->ud, i)) {
			pthread_mutex_lock(&p->lock);
			p->failed = 1;
			pthread_mutex_unlock(&p->lock);
		}
	}
}

static void pool_run(int n, int threads, int (*job)(void *, int), void *ud)
{
	pool p = { n, 0, 0, job, ud, PTHREAD_MUTEX_INITIALIZER };
	int nt = threads < 1 ? 1 : threads > n ? n : threads;
	pthread_t *tid = nt > 1 ? calloc((size_t)nt, sizeof *tid) : NULL;
	int started = 0;
	for (int t = 0; tid && t < nt; t++)
		if (!pthread_create(&tid[t], NULL, pool_worker, &p))
			started++;
		else
			break;
	if (!started)
		pool_worker(&p); /* one thread, or none could start: this one */
	for (int t = 0; t < started; t++)
		pthread_join(tid[t], NULL);
	free(tid);
	pthread_mutex_destroy(&p.lock);
}

typedef struct {
	const wzc_run_spec *s;
	wzc_run *run;
	wzc_spectrum **spectra; /* [window] */
	int per_window;         /* jobs per window in the first phase */
	wzc_exact **exact;      /* [window]: the exact attention held (NULL: none) */
	int *held;              /* [job of the exact phase]: window * L + layer */
	wz_err *err;            /* [job] */
	wz_diag *diag;          /* [job] */
	int capped;             /* the profile caps the position part (wzc_run_capped) */
} ctx;

static int is_wz(const wzc_format *f)
{
	return wzc_format_needs_profile(f->id);
}

static void note(const wzc_run_spec *s, const wzc_window *w, const char *what)
{
	if (s->progress)
		s->progress(s->progress_ud, w->name ? w->name : "?", what);
}

static wz_err measure_format(const ctx *c, int w, const wzc_format *f, wzc_errors **e,
			     wz_diag *diag)
{
	const wzc_run_spec *s = c->s;
	return wzc_measure_format_exact(&s->windows[w], f, is_wz(f) ? s->profile : NULL,
					c->exact ? c->exact[w] : NULL, s->per_layer, e, diag);
}

/* The exact attention of the windows' layers, held for every format
 * measured on them (wzc_exact): up to an eighth of the machine's memory in
 * all (at least 256 MiB, at most 8 GiB), layers in window and layer order
 * until it is spent, and the rest computed by each format as before.
 * Every format then spends half the attention's work (a third less time
 * for a run with --iso, 21 formats a window; the figures are the same bits
 * either way).  An eighth leaves the rest to what measuring holds besides:
 * each thread's decoded layer four times over (rows and transposed, of the
 * cache and of the format: 300 MB at 32k tokens of 576 values) and the
 * codecs' plans (about 1 GB for a 61-layer wz profile). */
static size_t exact_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	size_t lo = (size_t)256 << 20, hi = (size_t)8 << 30;
	if (pages <= 0 || size <= 0)
		return lo;
	size_t b = (size_t)pages / 8 * (size_t)size;
	return b < lo ? lo : b > hi ? hi : b;
}

/* The exact phase: job i computes the layer c->held[i] names. */
static int exact_job(void *ud, int i)
{
	ctx *c = ud;
	const wzc_run_spec *s = c->s;
	int L = s->windows[0].L, w = c->held[i] / L, l = c->held[i] % L;
	char what[48];
	snprintf(what, sizeof what, "exact attention, layer %d", l);
	note(s, &s->windows[w], what);
	c->err[i] = wzc_exact_layer(c->exact[w], &s->windows[w], l, &c->diag[i]);
	return c->err[i] != WZ_OK;
}

/* Makes the windows' exact attention holders and lists the layers to
 * compute within exact_budget(); 0 layers when fewer than two formats share a
 * window (nothing to gain). */
static int plan_exact(ctx *c, int nitems)
{
	const wzc_run_spec *s = c->s;
	int nw = s->nwindows, L = nw > 0 ? s->windows[0].L : 0, n = 0;
	for (int w = 1; w < nw; w++)
		if (s->windows[w].L != L)
			return 0;
	if (nitems < 2 || L < 1 || !(c->exact = calloc((size_t)nw, sizeof *c->exact)) ||
	    !(c->held = calloc((size_t)nw * L, sizeof *c->held)))
		return 0;
	size_t used = 0, budget = exact_budget();
	for (int w = 0; w < nw; w++) {
		c->exact[w] = wzc_exact_new(&s->windows[w]);
		size_t b = wzc_exact_layer_bytes(c->exact[w]);
		for (int l = 0; c->exact[w] && l < L && used + b <= budget; l++) {
			used += b;
			c->held[n++] = w * L + l;
		}
	}
	return n;
}

/* First phase: job j of window w is its spectrum (0), a format, or a sweep
 * rate. */
static int measure_job(void *ud, int i)
{
	ctx *c = ud;
	const wzc_run_spec *s = c->s;
	int w = i / c->per_window, j = i % c->per_window;
	const wzc_window *win = &s->windows[w];
	wz_err *rc = &c->err[i];
	wz_diag *diag = &c->diag[i];
	if (j == 0) {
		if (s->no_bound)
			return 0;
		note(s, win, "Gaussian bound");
		*rc = (c->capped ? wzc_spectrum_of_parts : wzc_spectrum_of)(win, &c->spectra[w], diag);
	} else if (j <= s->nformats) {
		const wzc_format *f = &s->formats[j - 1];
		note(s, win, f->name);
		*rc = measure_format(c, w, f, &c->run->cells[(size_t)w * s->nformats + j - 1].e,
				     diag);
	} else {
		int k = j - 1 - s->nformats;
		wzc_format f;
		char name[32];
		snprintf(name, sizeof name, "wz-%g", wzc_iso_rates[k]);
		char what[48];
		snprintf(what, sizeof what, "iso sweep %s", name);
		note(s, win, what);
		*rc = wzc_format_parse(name, &f, diag);
		if (!*rc)
			*rc = measure_format(c, w, &f, &c->run->sweep[(size_t)w * WZC_ISO_N + k].e,
					     diag);
	}
	return *rc != WZ_OK;
}

int wzc_run_capped(const wzc_run_spec *spec)
{
	const wzc_profile *pr = spec->profile;
	for (int l = 0; pr && pr->pos_cap && pr->P > 0 && l < pr->L; l++)
		if (pr->pos_cap[l] > 0)
			return 1;
	return 0;
}

static void bound_of(const ctx *c, wzc_run_cell *cell, const wzc_spectrum *sp, int layer)
{
	if (c->s->no_bound) {
		cell->bound_nmse = cell->gap_db = NAN;
		cell->bound_capped_nmse = cell->capped_gap_db = NAN;
		return;
	}
	double bits = cell->e->bits_per_value;
	double nmse = wzc_metric_ci(cell->e, WZC_M_NMSE, 0, 1).value;
	cell->bound_nmse = layer < 0 ? wzc_spectrum_bound_nmse(sp, bits)
				     : wzc_spectrum_layer_bound_nmse(sp, layer, bits);
	cell->gap_db = 10 * log10(nmse / cell->bound_nmse);
	cell->bound_capped_nmse = cell->capped_gap_db = NAN;
	const wzc_profile *pr = c->s->profile;
	if (c->capped && pr->L == sp->L) {
		cell->bound_capped_nmse = wzc_spectrum_capped_bound_nmse(sp, layer, bits, pr->pos_cap);
		cell->capped_gap_db = 10 * log10(nmse / cell->bound_capped_nmse);
	}
}

/* Iso-quality bits of cell against the sweep's errors sweep[0..WZC_ISO_N). */
static void iso_of(const wzc_run_spec *s, wzc_run_cell *cell, wzc_errors *const *sweep)
{
	/* Bits the sweep really wrote, so interpolation is in counted bits. */
	double rates[WZC_ISO_N];
	for (int k = 0; k < WZC_ISO_N; k++)
		rates[k] = sweep[k]->bits_per_value;
	wzc_metric m[2] = { WZC_M_NMSE, WZC_M_KL };
	for (int k = 0; k < 2; k++)
		cell->iso[k] = wzc_iso_bits(rates, sweep, WZC_ISO_N, cell->e, m[k], s->nboot, s->seed,
					    &cell->iso_censored[k]);
	cell->has_iso = 1;
}

/* Second phase: the figures of one cell (a format, then the sweep's) that
 * need the first phase done: bound, iso-quality bits, per-layer rows. */
static int figures_job(void *ud, int i)
{
	ctx *c = ud;
	const wzc_run_spec *s = c->s;
	int per = s->nformats + (s->iso ? WZC_ISO_N : 0);
	int w = i / per, j = i % per;
	const wzc_spectrum *sp = c->spectra[w];
	int sweep_cell = j >= s->nformats;
	wzc_run_cell *cell = sweep_cell ? &c->run->sweep[(size_t)w * WZC_ISO_N + j - s->nformats]
					: &c->run->cells[(size_t)w * s->nformats + j];
	wzc_errors *sw[WZC_ISO_N];
	for (int k = 0; s->iso && k < WZC_ISO_N; k++)
		sw[k] = c->run->sweep[(size_t)w * WZC_ISO_N + k].e;
	/* wz against the wz sweep says nothing: iso figures are for the
	 * other formats. */
	int iso = s->iso && !sweep_cell && !is_wz(&s->formats[j]);
	bound_of(c, cell, sp, -1);
	if (iso)
		iso_of(s, cell, sw);
	if (!s->per_layer || sweep_cell)
		return 0;
	int L = cell->e->L;
	cell->layers = calloc((size_t)L, sizeof *cell->layers);
	if (!cell->layers)
		goto nomem;
	cell->nlayers = L;
	for (int l = 0; l < L; l++) {
		wzc_run_cell *lc = &cell->layers[l];
		if (!(lc->e = wzc_errors_layer(cell->e, l)))
			goto nomem;
		bound_of(c, lc, sp, l);
		if (!iso)
			continue;
		wzc_errors *lsw[WZC_ISO_N] = { 0 };
		int bad = 0;
		for (int k = 0; k < WZC_ISO_N; k++)
			bad |= !(lsw[k] = wzc_errors_layer(sw[k], l));
		if (!bad)
			iso_of(s, lc, lsw);
		for (int k = 0; k < WZC_ISO_N; k++)
			wzc_errors_free(lsw[k]);
		if (bad)
			goto nomem;
	}
	return 0;
nomem:
	c->err[i] = wz_diag_set(&c->diag[i], WZ_ERR_NOMEM, "out of memory");
	return 1;
}

static void cell_free(wzc_run_cell *cell)
{
	for (int l = 0; l < cell->nlayers; l++)
		cell_free(&cell->layers[l]);
	free(cell->layers);
	wzc_errors_free(cell->e);
}

void wzc_run_free(wzc_run *run)
{
	if (!run)
		return;
	for (size_t i = 0; run->cells && i < (size_t)run->nwindows * run->nformats; i++)
		cell_free(&run->cells[i]);
	for (size_t i = 0; run->sweep && i < (size_t)run->nwindows * WZC_ISO_N; i++)
		cell_free(&run->sweep[i]);
	free(run->cells);
	free(run->sweep);
	free(run);
}

/* The first failed job's message, in job order. */
static wz_err first_error(const ctx *c, int n, wz_diag *diag)
{
	for (int i = 0; i < n; i++)
		if (c->err[i]) {
			if (diag)
				*diag = c->diag[i];
			return c->err[i];
		}
	return WZ_OK;
}

wz_err wzc_run_measure(const wzc_run_spec *s, wzc_run **out, wz_diag *diag)
{
	*out = NULL;
	int nw = s->nwindows, nf = s->nformats;
	ctx c = { s, calloc(1, sizeof *c.run), calloc((size_t)nw + 1, sizeof *c.spectra),
		  1 + nf + (s->iso ? WZC_ISO_N : 0), NULL, NULL, NULL, NULL, wzc_run_capped(s) };
	int n1 = nw * c.per_window, n2 = nw * (nf + (s->iso ? WZC_ISO_N : 0));
	int n0 = plan_exact(&c, nf + (s->iso ? WZC_ISO_N : 0));
	int njobs = n1 > n2 ? n1 : n2;
	njobs = njobs > n0 ? njobs : n0;
	c.err = calloc((size_t)njobs + 1, sizeof *c.err);
	c.diag = calloc((size_t)njobs + 1, sizeof *c.diag);
	if (c.run) {
		c.run->nwindows = nw;
		c.run->nformats = nf;
		c.run->cells = calloc((size_t)nw * nf + 1, sizeof *c.run->cells);
		c.run->sweep = s->iso ? calloc((size_t)nw * WZC_ISO_N, sizeof *c.run->sweep) : NULL;
	}
	wz_err rc = WZ_OK;
	if (!c.run || !c.spectra || !c.err || !c.diag || !c.run->cells || (s->iso && !c.run->sweep))
		rc = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	for (int w = 0; !rc && s->profile && w < nw; w++)
		rc = wzc_profile_check_window(s->profile, &s->windows[w], diag);
	if (!rc && n0) {
		pool_run(n0, s->threads, exact_job, &c);
		rc = first_error(&c, n0, diag);
		memset(c.err, 0, sizeof *c.err * (size_t)njobs);
	}
	if (!rc) {
		pool_run(n1, s->threads, measure_job, &c);
		rc = first_error(&c, n1, diag);
	}
	if (!rc) {
		memset(c.err, 0, sizeof *c.err * (size_t)njobs);
		pool_run(n2, s->threads, figures_job, &c);
		rc = first_error(&c, n2, diag);
	}
	for (int w = 0; c.spectra && w < nw; w++)
		wzc_spectrum_free(c.spectra[w]);
	for (int w = 0; c.exact && w < nw; w++)
		wzc_exact_free(c.exact[w]);
	free(c.exact);
	free(c.held);
	free(c.spectra);
	free(c.err);
	free(c.diag);
	if (rc)
		wzc_run_free(c.run);
	else
		*out = c.run;
	return rc;
}
