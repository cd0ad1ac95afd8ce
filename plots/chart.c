/* Chart data, gnuplot script generation and rendering (chart.h). */
#include "plots/chart.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/wz_cleanup.h"
#include "common/wz_io.h"
#include "config.h"

#define MAX_SERIES 16
#define MAX_MARKS 4
#define MAX_NOTES 4

typedef struct {
	char *label;
	double x;
	double y[MAX_SERIES], lo[MAX_SERIES], hi[MAX_SERIES];
} chart_row;

struct wzp_chart {
	wzp_chart_kind kind;
	char *name, *title, *xlabel, *ylabel;
	int logx, logy;
	char *series[MAX_SERIES];
	int nseries;
	chart_row *rows;
	int nrows, cap_rows;
	double mark_x[MAX_MARKS];
	char *mark_label[MAX_MARKS];
	int nmarks;
	char *notes[MAX_NOTES];
	int nnotes;
	int failed;
};

static char *dup_text(wzp_chart *c, const char *s)
{
	char *d = strdup(s ? s : "");
	if (!d)
		c->failed = 1;
	return d;
}

static int valid_chart_name(const char *name)
{
	size_t n = name ? strlen(name) : 0;
	if (n == 0 || n > 64)
		return 0;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == n;
}

wzp_chart *wzp_chart_new(wzp_chart_kind kind, const char *name, const char *title)
{
	if (!valid_chart_name(name))
		return NULL;
	wzp_chart *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->kind = kind;
	c->name = dup_text(c, name);
	c->title = dup_text(c, title);
	c->xlabel = dup_text(c, "");
	c->ylabel = dup_text(c, "");
	if (c->failed) {
		wzp_chart_free(c);
		return NULL;
	}
	return c;
}

void wzp_chart_free(wzp_chart *c)
{
	if (!c)
		return;
	free(c->name), free(c->title), free(c->xlabel), free(c->ylabel);
	for (int i = 0; i < c->nseries; i++)
		free(c->series[i]);
	for (int i = 0; i < c->nrows; i++)
		free(c->rows[i].label);
	for (int i = 0; i < c->nmarks; i++)
		free(c->mark_label[i]);
	for (int i = 0; i < c->nnotes; i++)
		free(c->notes[i]);
	free(c->rows);
	free(c);
}

void wzp_chart_axes(wzp_chart *c, const char *xlabel, const char *ylabel)
{
	free(c->xlabel), free(c->ylabel);
	c->xlabel = dup_text(c, xlabel);
	c->ylabel = dup_text(c, ylabel);
}

void wzp_chart_log(wzp_chart *c, int logx, int logy)
{
	c->logx = logx;
	c->logy = logy;
}

int wzp_chart_series(wzp_chart *c, const char *title)
{
	if (c->nseries == MAX_SERIES) {
		c->failed = 1;
		return MAX_SERIES - 1;
	}
	c->series[c->nseries] = dup_text(c, title);
	return c->nseries++;
}

void wzp_chart_row(wzp_chart *c, const char *label, double x)
{
	if (c->nrows == c->cap_rows) {
		int ncap = c->cap_rows ? c->cap_rows * 2 : 16;
		chart_row *p = realloc(c->rows, (size_t)ncap * sizeof *p);
		if (!p) {
			c->failed = 1;
			return;
		}
		c->rows = p;
		c->cap_rows = ncap;
	}
	chart_row *r = &c->rows[c->nrows++];
	r->label = dup_text(c, label);
	r->x = x;
	for (int s = 0; s < MAX_SERIES; s++)
		r->y[s] = r->lo[s] = r->hi[s] = NAN;
}

void wzp_chart_value(wzp_chart *c, int series, double y, double lo, double hi)
{
	if (!c->nrows || series < 0 || series >= MAX_SERIES)
		return;
	chart_row *r = &c->rows[c->nrows - 1];
	r->y[series] = y;
	r->lo[series] = lo;
	r->hi[series] = hi;
}

void wzp_chart_mark_x(wzp_chart *c, double x, const char *label)
{
	if (c->nmarks == MAX_MARKS)
		return;
	c->mark_x[c->nmarks] = x;
	c->mark_label[c->nmarks++] = dup_text(c, label);
}

void wzp_chart_note(wzp_chart *c, const char *fmt, ...)
{
	if (c->nnotes == MAX_NOTES)
		return;
	char text[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	c->notes[c->nnotes++] = dup_text(c, text);
}

const char *wzp_chart_name(const wzp_chart *c) { return c->name; }
const char *wzp_chart_title(const wzp_chart *c) { return c->title; }
int wzp_chart_rows(const wzp_chart *c) { return c->nrows; }

/* Every text that reaches a gnuplot script goes through here.  gnuplot
 * substitutes backquoted commands and macros inside double quotes but not
 * inside single quotes, where only a doubled quote means anything; so the
 * text is written as single-quoted pieces, a newline (for a second title
 * line) as the constant "\n" between them, and other control bytes as
 * blanks. */
void wzp_gnuplot_quote(wz_buf *b, const char *text)
{
	wz_buf_puts(b, "'");
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p == '\'')
			wz_buf_puts(b, "''");
		else if (*p == '\n')
			wz_buf_puts(b, "'.\"\\n\".'");
		else if (*p < 0x20 || *p == 0x7f)
			wz_buf_puts(b, " ");
		else
			wz_buf_append(b, (const char *)p, 1);
	}
	wz_buf_puts(b, "'");
}

/* Text in a "#" comment of the script or the data file: one line, and no
 * backslash, which would carry the comment on to the next line. */
static void comment_text(wz_buf *b, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p; p++)
		wz_buf_append(b, *p < 0x20 || *p == 0x7f || *p == '\\' ? " " : (const char *)p, 1);
}

static void quoted(wz_buf *b, const char *text)
{
	wzp_gnuplot_quote(b, text);
}

static void number(wz_buf *b, double v)
{
	if (isnan(v) || isinf(v))
		wz_buf_puts(b, "NaN");
	else
		wz_buf_printf(b, "%.10g", v);
}

static void write_data(const wzp_chart *c, wz_buf *d)
{
	wz_buf_puts(d, "# ");
	comment_text(d, c->title);
	wz_buf_puts(d, "\n# columns: label, x");
	for (int s = 0; s < c->nseries; s++) {
		wz_buf_puts(d, ", ");
		comment_text(d, c->series[s]);
		wz_buf_puts(d, " (value, low, high)");
	}
	wz_buf_puts(d, "\n");
	for (int i = 0; i < c->nrows; i++) {
		const chart_row *r = &c->rows[i];
		wz_buf_puts(d, "\"");
		for (const unsigned char *p = (const unsigned char *)r->label; *p; p++)
			if (*p != '"' && *p != '\\' && *p >= 0x20 && *p != 0x7f)
				wz_buf_append(d, (const char *)p, 1);
		wz_buf_puts(d, "\"\t");
		number(d, r->x);
		for (int s = 0; s < c->nseries; s++) {
			wz_buf_puts(d, "\t");
			number(d, r->y[s]);
			wz_buf_puts(d, "\t");
			number(d, r->lo[s]);
			wz_buf_puts(d, "\t");
			number(d, r->hi[s]);
		}
		wz_buf_puts(d, "\n");
	}
}

static int longest_label(const wzp_chart *c)
{
	int n = 0;
	for (int i = 0; i < c->nrows; i++)
		if ((int)strlen(c->rows[i].label) > n)
			n = (int)strlen(c->rows[i].label);
	return n;
}

static int has_errors(const wzp_chart *c, int s)
{
	for (int i = 0; i < c->nrows; i++)
		if (!isnan(c->rows[i].lo[s]) && !isnan(c->rows[i].hi[s]))
			return 1;
	return 0;
}

static void write_plot(const wzp_chart *c, wz_buf *g)
{
	char dat[160];
	snprintf(dat, sizeof dat, "%s.dat", c->name);
	wz_buf_puts(g, "plot ");
	for (int s = 0; s < c->nseries; s++) {
		int ycol = 3 + 3 * s;
		if (s)
			wz_buf_puts(g, ", \\\n     ");
		if (s == 0)
			quoted(g, dat);
		else
			wz_buf_puts(g, "''");
		switch (c->kind) {
		case WZP_CHART_BARS:
		case WZP_CHART_STACKED:
			wz_buf_printf(g, " using %d%s", ycol, s == 0 ? ":xtic(1)" : "");
			break;
		case WZP_CHART_LINES:
			wz_buf_printf(g, " using 2:%d with linespoints ls %d", ycol, s + 1);
			break;
		case WZP_CHART_POINTS:
			if (has_errors(c, s))
				wz_buf_printf(g, " using 2:%d:%d:%d with yerrorlines ls %d", ycol,
					      ycol + 1, ycol + 2, s + 1);
			else
				wz_buf_printf(g, " using 2:%d with linespoints ls %d", ycol, s + 1);
			break;
		}
		wz_buf_puts(g, " title ");
		quoted(g, c->series[s]);
	}
	wz_buf_puts(g, "\n");
}

static int any_negative(const wzp_chart *c)
{
	for (int i = 0; i < c->nrows; i++)
		for (int s = 0; s < c->nseries; s++)
			if (c->rows[i].y[s] < 0)
				return 1;
	return 0;
}

/* Colours that stay apart in print and for common colour blindness
 * (Okabe and Ito's palette). */
static const char *const palette[] = {
	"#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000",
};

wz_err wzp_chart_script(const wzp_chart *c, wz_buf *data, wz_buf *script)
{
	if (c->failed)
		return WZ_ERR_NOMEM;
	write_data(c, data);
	wz_buf *g = script;
	int bars = c->kind == WZP_CHART_BARS || c->kind == WZP_CHART_STACKED;
	int longest = longest_label(c);
	/* Rotated category labels need room below the axis; notes need a line
	 * each.  Margins are in character heights. */
	int rotate = bars && c->nrows * (longest + 2) > 90;
	int bmargin = 3 + (rotate ? longest * 6 / 10 + 1 : 0) + c->nnotes * 3 / 2 + 1;
	wz_buf_puts(g, "# ");
	comment_text(g, c->title);
	wz_buf_puts(g, "\n");
	wz_buf_printf(g, "# Generated by wzplan.  Re-render in this folder with: gnuplot %s.gp\n"
			 "# (reads %s.dat, writes %s.png and %s.svg)\n",
		      c->name, c->name, c->name, c->name);
	wz_buf_puts(g, "set encoding utf8\n"
		       "set datafile separator \"\\t\"\n"
		       "set datafile missing \"NaN\"\n"
		       "set terminal pngcairo size 1100,680 font 'DejaVu Sans,11' noenhanced\n");
	wz_buf_printf(g, "set output '%s.png'\n", c->name);
	wz_buf_puts(g, "set title ");
	quoted(g, c->title);
	wz_buf_puts(g, " font ',13'\nset xlabel ");
	quoted(g, c->xlabel);
	wz_buf_puts(g, "\nset ylabel ");
	quoted(g, c->ylabel);
	wz_buf_printf(g, "\nset bmargin %d\n", bmargin);
	/* The key goes right of the plot, so the notes below never meet it. */
	wz_buf_puts(g, "set key outside right top vertical reverse Left samplen 2 spacing 1.3\n"
		       "set grid ytics lc rgb '#d0d0d0'\n"
		       "set border 3\nset tics nomirror\n");
	for (size_t i = 0; i < sizeof palette / sizeof palette[0]; i++)
		wz_buf_printf(g, "set linetype %zu lc rgb '%s' lw 2 pt %zu ps 1.2\n", i + 1,
			      palette[i], i + 5);
	/* Past the palette, the colours again with another dash and point, so
	 * no two series look the same. */
	const int npal = (int)(sizeof palette / sizeof palette[0]);
	for (int i = 0; i < c->nseries; i++) {
		wz_buf_printf(g, "set style line %d lt %d", i + 1, i % npal + 1);
		if (i >= npal)
			wz_buf_printf(g, " dt %d pt %d", i / npal + 1, i % npal + 1);
		wz_buf_puts(g, "\n");
	}
	if (bars) {
		wz_buf_printf(g, "set style data histograms\nset style histogram %s\n",
			      c->kind == WZP_CHART_BARS ? "clustered gap 1" : "rowstacked");
		wz_buf_puts(g, "set style fill solid 0.9 border rgb '#404040'\n"
			       "set boxwidth 0.75\nset xtics scale 0\n");
		/* Histogram slots are 0..n-1: half a slot of air on either side. */
		wz_buf_printf(g, "set xrange [-0.6:%.1f]\n", c->nrows - 0.4);
		/* Bars start at zero; negative ones (a format costing more than the
		 * baseline) hang below a zero line. */
		wz_buf_puts(g, any_negative(c) ? "set xzeroaxis lt -1\n" : "set yrange [0:*]\n");
		if (rotate)
			wz_buf_puts(g, "set xtics rotate by -25 left\n");
	} else {
		if (c->logx)
			wz_buf_puts(g, "set logscale x 2\n");
		if (c->logy)
			wz_buf_puts(g, "set logscale y\nset format y '%g'\n");
		else
			wz_buf_puts(g, "set yrange [0:*]\n");
		wz_buf_puts(g, "set autoscale xfix\nset offsets graph 0.02, graph 0.02, graph 0.05, 0\n");
	}
	for (int i = 0; i < c->nmarks; i++) {
		wz_buf_printf(g, "set arrow %d from ", i + 1);
		number(g, c->mark_x[i]);
		wz_buf_puts(g, ", graph 0 to ");
		number(g, c->mark_x[i]);
		wz_buf_puts(g, ", graph 1 nohead dashtype 2 lc rgb '#606060'\n");
		wz_buf_printf(g, "set label %d ", i + 1);
		quoted(g, c->mark_label[i]);
		wz_buf_puts(g, " at ");
		number(g, c->mark_x[i]);
		wz_buf_puts(g, ", graph 0.97 offset -0.5,0 right font ',10' tc rgb '#404040'\n");
	}
	for (int i = 0; i < c->nnotes; i++) {
		wz_buf_printf(g, "set label %d ", 10 + i);
		quoted(g, c->notes[i]);
		wz_buf_printf(g, " at screen 0.01, screen %.3f left font ',9' tc rgb '#404040'\n",
			      0.015 + 0.028 * (c->nnotes - 1 - i));
	}
	write_plot(c, g);
	wz_buf_puts(g, "set terminal svg size 1100,680 dynamic font 'DejaVu Sans,11' noenhanced "
		       "background rgb 'white'\n");
	wz_buf_printf(g, "set output '%s.svg'\nreplot\nunset output\n", c->name);
	return data->failed || script->failed ? WZ_ERR_NOMEM : WZ_OK;
}

wz_err wzp_chart_write(const wzp_chart *c, const char *dir, wz_diag *diag)
{
	wz_buf data = { 0 }, script = { 0 };
	wz_err err = wzp_chart_script(c, &data, &script);
	if (err) {
		wz_buf_free(&data);
		wz_buf_free(&script);
		return wz_diag_set(diag, err, "chart %s: out of memory", c->name);
	}
	const char *ext[2] = { ".dat", ".gp" };
	const wz_buf *bufs[2] = { &data, &script };
	for (int i = 0; i < 2 && !err; i++) {
		char name[192];
		snprintf(name, sizeof name, "%s%s", c->name, ext[i]);
		char *path = wz_path_join(dir, name);
		if (!path)
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		else
			err = wz_write_file_atomic(path, bufs[i]->data ? bufs[i]->data : "",
						   bufs[i]->len, diag);
		free(path);
	}
	wz_buf_free(&data);
	wz_buf_free(&script);
	return err;
}

static int executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static char *search_path(const char *prog)
{
	if (strchr(prog, '/'))
		return executable(prog) ? strdup(prog) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		return NULL;
	char *copy = strdup(path), *save = NULL, *found = NULL;
	for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char *cand = wz_path_join(*d ? d : ".", prog);
		if (cand && executable(cand))
			found = cand;
		else
			free(cand);
	}
	free(copy);
	return found;
}

wz_err wzp_gnuplot_find(char **out, wz_diag *diag)
{
	*out = NULL;
	const char *env = getenv("WZ_GNUPLOT");
	if (env) {
		if (!*env || !strcmp(env, "none"))
			return wz_diag_set(diag, WZ_ERR_UNSUPPORTED,
					   "gnuplot is turned off ($WZ_GNUPLOT is '%s')", env);
		*out = search_path(env);
		return *out ? WZ_OK
			    : wz_diag_set(diag, WZ_ERR_UNSUPPORTED,
					  "gnuplot not found at $WZ_GNUPLOT (%s)", env);
	}
	if (WZ_GNUPLOT[0] == '/' && executable(WZ_GNUPLOT))
		*out = strdup(WZ_GNUPLOT);
	else
		*out = search_path("gnuplot");
	return *out ? WZ_OK
		    : wz_diag_set(diag, WZ_ERR_UNSUPPORTED,
				  "gnuplot not found (not at %s, not on $PATH); install it (Debian: "
				  "gnuplot-nox) or set $WZ_GNUPLOT",
				  WZ_GNUPLOT);
}

/* Removes what rendering left in its private folder, then the folder. */
static void remove_stage(const char *stage, const char *name)
{
	static const char *const ext[] = { ".png", ".svg", ".log", ".dat" };
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		char file[192];
		snprintf(file, sizeof file, "%s%s", name, ext[i]);
		char *path = wz_path_join(stage, file);
		if (path)
			unlink(path);
		free(path);
	}
	rmdir(stage);
}

/* Moves stage/NAME.EXT to dir/NAME.EXT, never onto a link or a folder. */
static wz_err publish_output(const char *stage, const char *dir, const char *name,
			     const char *ext, wz_diag *diag)
{
	char file[192];
	snprintf(file, sizeof file, "%s%s", name, ext);
	char *from = wz_path_join(stage, file), *to = wz_path_join(dir, file);
	wz_err err = !from || !to ? wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory") : WZ_OK;
	struct stat st;
	if (!err && (lstat(from, &st) != 0 || !S_ISREG(st.st_mode)))
		err = wz_diag_set(diag, WZ_ERR_IO, "gnuplot %s.gp wrote no %s", name, file);
	if (!err)
		err = wz_check_replaceable(to, diag);
	if (!err && rename(from, to) != 0)
		err = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", to, strerror(errno));
	free(from);
	free(to);
	return err;
}

wz_err wzp_chart_render(const char *gnuplot, const char *dir, const char *name, wz_diag *diag)
{
	/* gnuplot opens its outputs following links, so it runs in a folder
	 * of its own made here (mkdtemp: new, private, nothing planted in it);
	 * its outputs are then renamed into dir, where a link or a folder at
	 * a chart's name is refused rather than written through. */
	char script[192], log[192], dat[192];
	snprintf(script, sizeof script, "../%s.gp", name);
	snprintf(log, sizeof log, "%s.log", name);
	snprintf(dat, sizeof dat, "%s.dat", name);
	char *stage = wz_path_join(dir, ".chart-XXXXXX");
	if (!stage)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (!mkdtemp(stage)) {
		wz_err e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot make a folder to render in: %s",
				       dir, strerror(errno));
		free(stage);
		return e;
	}
	wz_cleanup_add(stage);
	char *log_path = wz_path_join(stage, log);
	char *dat_link = wz_path_join(stage, dat);
	char dat_target[200];
	snprintf(dat_target, sizeof dat_target, "../%s", dat);
	wz_err err = WZ_OK;
	if (!log_path || !dat_link)
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	else if (symlink(dat_target, dat_link) != 0)
		err = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot link the chart's data: %s", stage,
				  strerror(errno));
	pid_t pid = err ? -1 : fork();
	if (!err && pid < 0)
		err = wz_diag_set(diag, WZ_ERR_IO, "cannot start gnuplot: %s", strerror(errno));
	if (pid == 0) {
		/* The child only calls async-signal-safe functions before exec. */
		if (chdir(stage) != 0)
			_exit(126);
		int fd = open(log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
		if (fd < 0)
			_exit(126);
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
		execl(gnuplot, "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	if (pid > 0)
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	if (!err && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		char *text = NULL;
		size_t n = 0;
		wz_read_file(log_path, 1 << 20, &text, &n, NULL);
		if (text && n > 300)
			text[300] = '\0';
		for (char *p = text; p && *p; p++)
			if (*p == '\n')
				*p = ' ';
		err = wz_diag_set(diag, WZ_ERR_IO, "gnuplot %s.gp failed (%s %d)%s%s", name,
				  WIFEXITED(status) ? "exit status" : "signal",
				  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
				  text && *text ? ": " : "", text ? text : "");
		free(text);
	}
	if (!err)
		err = publish_output(stage, dir, name, ".png", diag);
	if (!err)
		err = publish_output(stage, dir, name, ".svg", diag);
	remove_stage(stage, name);
	wz_cleanup_forget(stage);
	free(stage);
	free(log_path);
	free(dat_link);
	return err;
}
