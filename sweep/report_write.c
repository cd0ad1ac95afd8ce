/* `wzplan sweep report`: writes the report that sweep/report.c builds from
 * the archive into a folder: report.md, one CSV per table, the charts'
 * gnuplot files and, with gnuplot, their images (report_write.h). */
#include "sweep/report_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runs/propose.h"
#include "common/wz_io.h"
#include "sweep/report.h"

static int write_text(const char *dir, const char *stem, const char *ext, const wz_buf *b)
{
	char path[4096];
	wz_diag diag;
	snprintf(path, sizeof path, "%s/%s%s", dir, stem, ext);
	if (b->failed) {
		wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
		return wz_say_fail("sweep", &diag);
	}
	if (wz_write_file_atomic(path, b->data ? b->data : "", b->len, &diag))
		return wz_say_fail("sweep", &diag);
	return 0;
}

int wz_sweep_report(const wzsw_sweep *s, wza_archive *a, const wza_run *codec,
		    long long codec_run, const char *dir, int quiet)
{
	wz_diag diag;
	wzsw_report *rep;
	if (wzsw_report_build(s, a, codec, codec_run, &rep, &diag))
		return wz_say_fail("sweep", &diag);
	int rc = 0;
	if (wz_mkdir_out(dir, &diag))
		rc = wz_say_fail("sweep", &diag);
	wz_buf md = { 0 };
	wz_buf_printf(&md, "# Sweep %s\n\n%ld points from %s; %ld not in archive %s.\n\n", s->name,
		      rep->points, s->origin, rep->missing, wza_path(a));
	for (int i = 0; i < rep->ntables && !rc; i++) {
		wz_buf csv = { 0 };
		if (wzp_table_render(rep->tables[i], WZP_CSV, &csv) ||
		    wzp_table_render(rep->tables[i], WZP_MD, &md)) {
			wz_diag_set(&diag, WZ_ERR_NOMEM, "out of memory");
			rc = wz_say_fail("sweep", &diag);
		}
		wz_buf_printf(&md, "\n(%s.csv)\n\n", rep->stems[i]);
		if (!rc)
			rc = write_text(dir, rep->stems[i], ".csv", &csv);
		wz_buf_free(&csv);
	}
	int rendered = 0;
	wz_buf why = { 0 };
	if (!rc && wz_charts_write(rep->charts, rep->ncharts, dir, &rendered, &why, &diag))
		rc = wz_say_fail("sweep", &diag);
	if (!rc) {
		wz_buf_puts(&md, "## Charts\n\n");
		for (int i = 0; i < rep->ncharts; i++) {
			const char *name = wzp_chart_name(rep->charts[i]);
			if (rendered)
				wz_buf_printf(&md, "![%s](%s.svg)\n\n", wzp_chart_title(rep->charts[i]),
					      name);
			else
				wz_buf_printf(&md, "- %s: %s.gp (not rendered: %s)\n",
					      wzp_chart_title(rep->charts[i]), name, wz_buf_str(&why));
		}
		if (rep->skipped.len)
			wz_buf_printf(&md, "\nLeft out:\n\n%s", wz_buf_str(&rep->skipped));
		rc = write_text(dir, "report", ".md", &md);
	}
	if (!rc && !quiet)
		wz_say(WZ_SAY_ERR, "wzplan sweep: report of %s: %d tables, %d charts%s in %s/\n", s->name,
			rep->ntables, rep->ncharts, rendered ? " (rendered)" : "", dir);
	if (!rc && rep->missing)
		wz_say(WZ_SAY_ERR, "wzplan sweep: %ld of %ld points are not in the archive\n",
			rep->missing, rep->points);
	wz_buf_free(&why);
	wz_buf_free(&md);
	wzsw_report_free(rep);
	return rc;
}
