/* Charts as gnuplot scripts: a chart is a table of rows (categories or x
 * values) by series, written as NAME.dat and NAME.gp side by side and
 * rendered to NAME.png and NAME.svg by running gnuplot. */
#ifndef WZP_CHART_H
#define WZP_CHART_H

#include "common/wz_error.h"
#include "common/wz_str.h"

typedef enum {
	WZP_CHART_BARS = 0,    /* clustered bars, one cluster per row label */
	WZP_CHART_STACKED = 1, /* one stacked bar per row label */
	WZP_CHART_LINES = 2,   /* lines with points over numeric x */
	WZP_CHART_POINTS = 3,  /* points over numeric x, with y error bars when given */
} wzp_chart_kind;

typedef struct wzp_chart wzp_chart;

/* A new chart; `name` is the file stem ("cost" -> cost.gp, cost.dat,
 * cost.png, cost.svg) and must be 1 to 64 of [a-z0-9_-].  Returns NULL when
 * out of memory or for any other name; free with wzp_chart_free.  Every text
 * given to a chart (titles, labels, series, notes) is data: it reaches the
 * script only through wzp_gnuplot_quote. */
wzp_chart *wzp_chart_new(wzp_chart_kind kind, const char *name, const char *title);
void wzp_chart_free(wzp_chart *c);

/* Axis labels, with units: "Annual cost (million US$)". */
void wzp_chart_axes(wzp_chart *c, const char *xlabel, const char *ylabel);
void wzp_chart_log(wzp_chart *c, int logx, int logy);
/* Adds a series (a bar colour, a line); returns its index. */
int wzp_chart_series(wzp_chart *c, const char *title);
/* Starts a row: `label` names a category (bars), `x` places it (lines). */
void wzp_chart_row(wzp_chart *c, const char *label, double x);
/* Sets a series' value in the current row; lo/hi are NaN without error bars.
 * Cells left unset are missing (NaN): no bar, no point. */
void wzp_chart_value(wzp_chart *c, int series, double y, double lo, double hi);
/* A dashed vertical line at x with a label (e.g. the scenario's context). */
void wzp_chart_mark_x(wzp_chart *c, double x, const char *label);
/* A line of small print under the chart (sources, provenance). */
void wzp_chart_note(wzp_chart *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

const char *wzp_chart_name(const wzp_chart *c);
const char *wzp_chart_title(const wzp_chart *c);
int wzp_chart_rows(const wzp_chart *c);

/* Appends text as a gnuplot string constant that gnuplot never evaluates:
 * single-quoted (a quote doubled), a newline as "\n" joined by '.', other
 * control bytes as blanks.  No backquote, macro or escape inside survives. */
void wzp_gnuplot_quote(wz_buf *b, const char *text);

/* The data file and the gnuplot script, appended to the buffers.  The
 * script reads NAME.dat and writes NAME.png and NAME.svg in its folder. */
wz_err wzp_chart_script(const wzp_chart *c, wz_buf *data, wz_buf *script);

/* Writes NAME.dat and NAME.gp into dir (atomically each). */
wz_err wzp_chart_write(const wzp_chart *c, const char *dir, wz_diag *diag);

/* Finds gnuplot: $WZ_GNUPLOT when set ("" or "none": no gnuplot), else the
 * one configure found, else `gnuplot` on $PATH.  WZ_ERR_UNSUPPORTED with a
 * message saying what was looked for when there is none.  The caller frees
 * *path. */
wz_err wzp_gnuplot_find(char **path /* OUT */, wz_diag *diag);

/* Runs `gnuplot NAME.gp` in dir, producing NAME.png and NAME.svg.  On
 * failure the message carries gnuplot's first lines of complaint. */
wz_err wzp_chart_render(const char *gnuplot, const char *dir, const char *name, wz_diag *diag);

#endif
