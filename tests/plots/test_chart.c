/* Unit tests of chart generation: the data file and gnuplot script of each
 * chart kind, quoting, finding gnuplot, and rendering when it is there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/wz_io.h"
#include "common/wz_str.h"
#include "plots/chart.h"
#include "tests/tap.h"

static void script_of(const wzp_chart *c, wz_buf *data, wz_buf *gp)
{
	wz_buf_reset(data);
	wz_buf_reset(gp);
	ok(wzp_chart_script(c, data, gp) == WZ_OK, "%s: script generated", wzp_chart_name(c));
}

static void test_bars(void)
{
	wzp_chart *c = wzp_chart_new(WZP_CHART_BARS, "cost", "Annual cost\nscenario 'A'");
	wzp_chart_axes(c, "Cache format", "Cost per year (million US$)");
	int r = wzp_chart_series(c, "Reserved");
	int o = wzp_chart_series(c, "On demand");
	wzp_chart_row(c, "fp8-mix", 0);
	wzp_chart_value(c, r, 17.52, NAN, NAN);
	wzp_chart_value(c, o, 31.6236, NAN, NAN);
	wzp_chart_row(c, "it's", 1);
	wzp_chart_value(c, r, 12.5, NAN, NAN);
	wzp_chart_note(c, "Prices: set 'product-page'.");
	wz_buf data = { 0 }, gp = { 0 };
	script_of(c, &data, &gp);
	const char *g = wz_buf_str(&gp), *d = wz_buf_str(&data);
	has_str(g, "set terminal pngcairo", "renders PNG with cairo");
	has_str(g, "set output 'cost.png'", "PNG named after the chart");
	has_str(g, "set terminal svg", "and SVG");
	has_str(g, "set output 'cost.svg'\nreplot", "SVG by replotting");
	has_str(g, "set style histogram clustered", "clustered bars");
	has_str(g, "plot 'cost.dat' using 3:xtic(1) title 'Reserved'", "first series with labels");
	has_str(g, "'' using 6 title 'On demand'", "second series column");
	has_str(g, "set title 'Annual cost'.\"\\n\".'scenario ''A'''", "two-line title, quotes kept");
	has_str(g, "set ylabel 'Cost per year (million US$)'", "y axis label with unit");
	has_str(g, "set xlabel 'Cache format'", "x axis label");
	has_str(g, "'Prices: set ''product-page''.'", "note with doubled single quotes");
	has_str(g, "set yrange [0:*]", "bars start at zero");
	has_str(g, "set key", "a legend");
	has_str(d, "\"fp8-mix\"\t0\t17.52\tNaN\tNaN\t31.6236\tNaN\tNaN\n", "data row");
	has_str(d, "\"it's\"\t1\t12.5\tNaN\tNaN\tNaN\tNaN\tNaN\n", "missing cell as NaN");
	wzp_chart_row(c, "dearer", 2);
	wzp_chart_value(c, r, -3, NAN, NAN);
	script_of(c, &data, &gp);
	ok(!strstr(wz_buf_str(&gp), "set yrange [0:*]") && strstr(wz_buf_str(&gp), "xzeroaxis"),
	   "negative bars: a zero line instead of a clipped axis");
	wz_buf_free(&data);
	wz_buf_free(&gp);
	wzp_chart_free(c);
}

static void test_lines_and_points(void)
{
	wzp_chart *c = wzp_chart_new(WZP_CHART_LINES, "gpus_by_context", "GPUs against context");
	wzp_chart_axes(c, "Context (thousand tokens)", "GPUs");
	wzp_chart_log(c, 1, 0);
	wzp_chart_series(c, "fp8-mix");
	wzp_chart_series(c, "wz-5.44");
	wzp_chart_row(c, "4096", 4.096);
	wzp_chart_value(c, 0, 32, NAN, NAN);
	wzp_chart_value(c, 1, 16, NAN, NAN);
	wzp_chart_mark_x(c, 100, "scenario");
	wz_buf data = { 0 }, gp = { 0 };
	script_of(c, &data, &gp);
	const char *g = wz_buf_str(&gp);
	has_str(g, "set logscale x 2", "log x axis");
	has_str(g, "using 2:3 with linespoints ls 1 title 'fp8-mix'", "first line");
	has_str(g, "using 2:6 with linespoints ls 2 title 'wz-5.44'", "second line");
	has_str(g, "set arrow 1 from 100, graph 0 to 100, graph 1 nohead", "marker line");
	wzp_chart_free(c);

	c = wzp_chart_new(WZP_CHART_POINTS, "quality", "Error against bits");
	wzp_chart_log(c, 0, 1);
	wzp_chart_series(c, "wz");
	wzp_chart_series(c, "fp8-mix");
	wzp_chart_row(c, "wz-5.44 w1", 5.44);
	wzp_chart_value(c, 0, 1e-3, 0.9e-3, 1.1e-3);
	wzp_chart_row(c, "fp8-mix w1", 8.06);
	wzp_chart_value(c, 1, 2e-3, NAN, NAN);
	script_of(c, &data, &gp);
	g = wz_buf_str(&gp);
	has_str(g, "using 2:3:4:5 with yerrorlines ls 1 title 'wz'", "error bars where given");
	has_str(g, "using 2:6 with linespoints ls 2 title 'fp8-mix'", "plain points without");
	has_str(g, "set logscale y", "log y axis");
	wzp_chart_free(c);

	/* More series than colours: every series still has its own style. */
	c = wzp_chart_new(WZP_CHART_POINTS, "many", "Many series");
	for (int i = 0; i < 12; i++) {
		char name[16];
		snprintf(name, sizeof name, "s%d", i);
		wzp_chart_series(c, name);
	}
	wzp_chart_row(c, "r", 1);
	for (int i = 0; i < 12; i++)
		wzp_chart_value(c, i, i + 1, NAN, NAN);
	script_of(c, &data, &gp);
	g = wz_buf_str(&gp);
	int distinct = 1;
	char seen[12][64];
	for (int i = 0; i < 12; i++) {
		char key[32];
		snprintf(key, sizeof key, "set style line %d ", i + 1);
		const char *p = strstr(g, key);
		const char *e = p ? strchr(p, '\n') : NULL;
		if (!p || !e || e - p - strlen(key) >= sizeof seen[i]) {
			distinct = 0;
			break;
		}
		snprintf(seen[i], sizeof seen[i], "%.*s", (int)(e - p - strlen(key)), p + strlen(key));
		for (int j = 0; j < i; j++)
			distinct &= strcmp(seen[i], seen[j]) != 0;
	}
	ok(distinct, "12 series, 8 colours: 12 different styles (the 9th: %s)", seen[8]);
	wzp_chart_free(c);

	c = wzp_chart_new(WZP_CHART_STACKED, "memory", "Memory");
	wzp_chart_series(c, "Weights");
	wzp_chart_series(c, "Cache");
	wzp_chart_row(c, "fp8-mix", 0);
	wzp_chart_value(c, 0, 39, NAN, NAN);
	wzp_chart_value(c, 1, 26, NAN, NAN);
	script_of(c, &data, &gp);
	has_str(wz_buf_str(&gp), "set style histogram rowstacked", "stacked bars");
	wzp_chart_free(c);
	wz_buf_free(&data);
	wz_buf_free(&gp);
}

/* Text meant to make gnuplot run something: each would create a witness
 * file in the chart's folder (where gnuplot runs) if it were evaluated. */
static const char *const hostile[] = {
	"t`touch w_title`",
	"x\"`touch w_dq`\"",
	"a' . system('touch w_sys') . '",
	"b\nsystem(\"touch w_nl\")\n`touch w_nl2`",
	"c; system(\"touch w_semi\"); print 'x",
	"@m `touch w_macro` \\",
	"d\r\\\nsystem('touch w_cont')",
};
#define NHOSTILE (sizeof hostile / sizeof hostile[0])

static void test_injection(const char *gnuplot, const char *dir)
{
	wz_diag d;
	wzp_chart_kind kinds[2] = { WZP_CHART_BARS, WZP_CHART_POINTS };
	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < NHOSTILE; i++) {
			wzp_chart *c = wzp_chart_new(kinds[k], "inj", hostile[i]);
			wzp_chart_axes(c, hostile[(i + 1) % NHOSTILE], hostile[(i + 2) % NHOSTILE]);
			wzp_chart_series(c, hostile[(i + 3) % NHOSTILE]);
			wzp_chart_series(c, hostile[(i + 4) % NHOSTILE]);
			wzp_chart_row(c, hostile[(i + 5) % NHOSTILE], 1);
			wzp_chart_value(c, 0, 1, 0.5, 1.5);
			wzp_chart_value(c, 1, 2, NAN, NAN);
			wzp_chart_row(c, hostile[(i + 6) % NHOSTILE], 2);
			wzp_chart_value(c, 0, 3, 2.5, 3.5);
			wzp_chart_mark_x(c, 1.5, hostile[i]);
			wzp_chart_note(c, "%s", hostile[(i + 1) % NHOSTILE]);
			int wrote = wzp_chart_write(c, dir, &d) == WZ_OK;
			int drew = wrote && wzp_chart_render(gnuplot, dir, "inj", &d) == WZ_OK;
			if (!ok(drew, "hostile text %zu in a %s chart: gnuplot still renders it", i,
				k ? "points" : "bars"))
				printf("#   %s\n", d.msg);
			wzp_chart_free(c);
		}
	}
	const char *witness[] = { "w_title", "w_dq", "w_sys", "w_nl", "w_nl2", "w_semi", "w_macro", "w_cont" };
	int ran = 0;
	for (size_t i = 0; i < sizeof witness / sizeof witness[0]; i++) {
		char p[300];
		snprintf(p, sizeof p, "%s/%s", dir, witness[i]);
		if (access(p, F_OK) == 0) {
			printf("#   gnuplot created %s\n", p);
			ran = 1;
		}
	}
	ok(!ran, "no command in any text was run by gnuplot");
	char png[300];
	snprintf(png, sizeof png, "%s/inj.png", dir);
	ok(access(png, F_OK) == 0, "the hostile chart was drawn");
	ok(wzp_chart_new(WZP_CHART_BARS, "../x", "t") == NULL &&
		   wzp_chart_new(WZP_CHART_BARS, "a b", "t") == NULL,
	   "a chart name outside [a-z0-9_-] is refused");
}

static void test_gnuplot(void)
{
	char *path = NULL;
	wz_diag d;
	setenv("WZ_GNUPLOT", "none", 1);
	ok(wzp_gnuplot_find(&path, &d) == WZ_ERR_UNSUPPORTED && !path, "WZ_GNUPLOT=none: no gnuplot");
	setenv("WZ_GNUPLOT", "/nonexistent/gnuplot", 1);
	ok(wzp_gnuplot_find(&path, &d) == WZ_ERR_UNSUPPORTED, "a missing WZ_GNUPLOT: no gnuplot");
	has_str(d.msg, "/nonexistent/gnuplot", "the message names where it looked");
	unsetenv("WZ_GNUPLOT");
	if (wzp_gnuplot_find(&path, &d) != WZ_OK) {
		printf("ok %d - # SKIP gnuplot is not installed: %s\n", ++tap_count, d.msg);
		return;
	}
	char dir[] = "test-chart.XXXXXX";
	if (!mkdtemp(dir)) {
		ok(0, "temporary folder");
		free(path);
		return;
	}
	wzp_chart *c = wzp_chart_new(WZP_CHART_BARS, "t", "Test chart");
	wzp_chart_series(c, "a");
	wzp_chart_row(c, "x", 0);
	wzp_chart_value(c, 0, 1, NAN, NAN);
	ok(wzp_chart_write(c, dir, &d) == WZ_OK, "data and script written");
	ok(wzp_chart_render(path, dir, "t", &d) == WZ_OK, "gnuplot renders it");
	char png[300], svg[300], *text = NULL;
	size_t n = 0;
	snprintf(png, sizeof png, "%s/t.png", dir);
	snprintf(svg, sizeof svg, "%s/t.svg", dir);
	ok(wz_read_file(png, 1 << 24, &text, &n, &d) == WZ_OK && n > 8 &&
		   !memcmp(text, "\x89PNG", 4),
	   "a PNG file");
	free(text);
	ok(wz_read_file(svg, 1 << 24, &text, &n, &d) == WZ_OK && strstr(text, "<svg"), "an SVG file");
	free(text);
	/* A broken script: gnuplot's complaint reaches the message. */
	char gp[300];
	snprintf(gp, sizeof gp, "%s/bad.gp", dir);
	wz_write_file_atomic(gp, "plot nosuchfunction(x)\n", 23, &d);
	ok(wzp_chart_render(path, dir, "bad", &d) == WZ_ERR_IO, "a failing script is an error");
	has_str(d.msg, "gnuplot bad.gp failed", "the message names the script");
	wzp_chart_free(c);
	test_injection(path, dir);
	free(path);
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

int main(void)
{
	test_bars();
	test_lines_and_points();
	test_gnuplot();
	return tap_done();
}
