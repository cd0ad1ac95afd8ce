/* The codec charts of a run: error against bits/value per format
 * (rate-distortion, with the Gaussian bound) and attention KL against
 * bits/value, from its archived codec measurements (propose.h). */
#include "runs/propose.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/formats/format.h"
#include "runs/schema.h"

#define MAX_POINTS 128

/* One format's figures, averaged over the windows measured. */
typedef struct {
	const char *format;
	char family[48];
	double bits, value, lo, hi, bound, bound_bits;
	int n, nbound;
} rd_point;

/* "wz-5.44" and "wz-6.31" are points of one rate-distortion curve: so are
 * the rates of every family named by its bits (wz, wzx, wzt). */
static int rate_family(const char *format)
{
	wzc_format f;
	return !wzc_format_parse(format, &f, NULL) && wzc_format_needs_profile(f.id);
}

static void family_of(const char *format, char *out, size_t n)
{
	snprintf(out, n, "%s", format);
	char *dash = strrchr(out, '-');
	if (dash && dash[1] >= '0' && dash[1] <= '9' && rate_family(format))
		*dash = '\0';
}

static rd_point *point_of(rd_point *pts, int *n, const char *format)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(pts[i].format, format))
			return &pts[i];
	if (*n >= MAX_POINTS)
		return NULL;
	rd_point *p = &pts[(*n)++];
	memset(p, 0, sizeof *p);
	p->format = format;
	family_of(format, p->family, sizeof p->family);
	return p;
}

static int by_bits(const void *a, const void *b)
{
	double x = ((const rd_point *)a)->bits, y = ((const rd_point *)b)->bits;
	return (x > y) - (x < y);
}

/* Windows, their sizes and whether any is synthetic, for the title. */
static void windows_line(const wza_run *codec, char *out, size_t n, int *synthetic)
{
	int nw = 0;
	double layers = NAN, tokens = NAN;
	const char *first = NULL;
	*synthetic = 0;
	for (int i = 0; i < codec->nfigures; i++) {
		const wza_figure *f = &codec->figures[i];
		if (strcmp(f->table, WZ_T_CODEC_WINDOW))
			continue;
		if (!strcmp(f->col, "file")) {
			nw++;
			if (!first)
				first = f->row;
		} else if (!strcmp(f->col, "source") && f->text &&
			   !strncmp(f->text, "synthetic", 9)) {
			*synthetic = 1;
		} else if (!strcmp(f->col, "layers")) {
			layers = f->value;
		} else if (!strcmp(f->col, "tokens")) {
			tokens = f->value;
		}
	}
	if (nw == 1)
		snprintf(out, n, "window %s, %.0f layer%s x %.0f tokens%s", first, layers,
			 layers == 1 ? "" : "s", tokens, *synthetic ? " (SYNTHETIC trace)" : "");
	else if (nw > 1)
		snprintf(out, n, "mean over %d windows%s", nw, *synthetic ? " (SYNTHETIC traces)" : "");
	else
		snprintf(out, n, "codec measurements");
}

wzp_chart *wz_chart_codec(const wza_run *codec, const char *metric, wz_buf *skipped)
{
	int kl = !strcmp(metric, "kl");
	rd_point pts[MAX_POINTS];
	int n = 0;
	for (int i = 0; codec && i < codec->ncodec; i++) {
		const wza_codec *m = &codec->codec[i];
		int bound = !kl && !strcmp(m->metric, "nmse_bound");
		if ((strcmp(m->metric, metric) && !bound) || isnan(m->bits_per_value) ||
		    isnan(m->value) || m->value <= 0)
			continue;
		rd_point *p = point_of(pts, &n, m->format);
		if (!p)
			break;
		if (bound) {
			p->bound += m->value;
			p->bound_bits += m->bits_per_value;
			p->nbound++;
			continue;
		}
		p->bits += m->bits_per_value;
		p->value += m->value;
		p->lo += m->ci_low;
		p->hi += m->ci_high;
		p->n++;
	}
	/* The bound at each rate measured, sorted by rate; a bound row may
	 * stand alone (a rate no format was measured at). */
	rd_point bounds[MAX_POINTS];
	int nb = 0, m = 0;
	for (int i = 0; i < n; i++) {
		rd_point *p = &pts[i];
		if (p->nbound) {
			bounds[nb] = *p;
			bounds[nb].bits = p->bound_bits / p->nbound;
			bounds[nb++].bound = p->bound / p->nbound;
		}
		if (!p->n)
			continue;
		p->bits /= p->n, p->value /= p->n, p->lo /= p->n, p->hi /= p->n;
		pts[m++] = *p;
	}
	n = m;
	qsort(bounds, (size_t)nb, sizeof bounds[0], by_bits);
	if (!n) {
		if (kl)
			return NULL; /* no queries in the traces: nothing to say twice */
		wz_buf_puts(skipped, "Error against bits/value (rate-distortion): left out, because "
				     "this run has no codec measurements (give propose --trace FILE "
				     "--profile FILE, or --codec-run RUN).\n");
		return NULL;
	}
	qsort(pts, (size_t)n, sizeof pts[0], by_bits);
	char line[256], title[400];
	int synthetic;
	windows_line(codec, line, sizeof line, &synthetic);
	snprintf(title, sizeof title, "%s against bits per value\n%s",
		 kl ? "Attention KL divergence" : "Cache error (rate-distortion)", line);
	wzp_chart *c = wzp_chart_new(WZP_CHART_POINTS, kl ? "quality_kl" : "quality", title);
	if (!c)
		return NULL;
	wzp_chart_axes(c, "Bits per value (counted from the bytes written)",
		       kl ? "Attention KL, exact vs decoded cache (nats, log scale; lower is better)"
			  : "Normalized squared error, NMSE (log scale; lower is better)");
	wzp_chart_log(c, 0, 1);
	/* One series per family, in order of their lowest rate; each family's
	 * rows together and by rate, so its line runs left to right. */
	const char *fams[16];
	int nf = 0;
	for (int i = 0; i < n; i++) {
		int k = 0;
		while (k < nf && strcmp(fams[k], pts[i].family))
			k++;
		if (k == nf && nf < 15)
			fams[nf++] = pts[i].family;
	}
	for (int s = 0; s < nf; s++) {
		char name[64];
		/* a family whose points are its rates (the name lost its bits) */
		int rates = 0;
		for (int i = 0; i < n; i++)
			rates |= !strcmp(pts[i].family, fams[s]) && strcmp(pts[i].family, pts[i].format);
		snprintf(name, sizeof name, "%s%s", fams[s], rates ? " (rates measured)" : "");
		wzp_chart_series(c, name);
	}
	for (int s = 0; s < nf; s++)
		for (int i = 0; i < n; i++)
			if (!strcmp(pts[i].family, fams[s])) {
				wzp_chart_row(c, pts[i].format, pts[i].bits);
				wzp_chart_value(c, s, pts[i].value, pts[i].lo, pts[i].hi);
			}
	int has_bound = nb > 0;
	if (has_bound) {
		int b = wzp_chart_series(c, "Gaussian bound (reverse water-filling)");
		double last = NAN;
		for (int i = 0; i < nb; i++) {
			/* int4-g64 and nvfp4 share a rate: one bound point. */
			if (bounds[i].bits == last)
				continue;
			last = bounds[i].bits;
			wzp_chart_row(c, "bound", bounds[i].bits);
			wzp_chart_value(c, b, bounds[i].bound, NAN, NAN);
		}
	}
	wzp_chart_note(c, "Error bars: bootstrap 95%% confidence intervals over %s; points are "
			  "each format's bits/value from the bytes its encoder wrote.",
		       kl ? "queries" : "tokens");
	if (has_bound)
		wzp_chart_note(c, "Bound: the smallest NMSE any code of that rate reaches on a Gaussian "
				  "source with the window's sample covariance (optimistic on short "
				  "windows).");
	if (synthetic)
		wzp_chart_note(c, "SYNTHETIC cache traces from wzplan's generator, not a model's real "
				  "cache: the figures describe the codec on that statistical model.");
	return c;
}
