/* A sweep's report written to a folder: the report sweep/report.c builds
 * from the archive, as report.md, a CSV per table and the charts (drawn by
 * runs/charts.c).  Errors go to the sink (runs/say.h). */
#ifndef WZ_SWEEP_REPORT_WRITE_H
#define WZ_SWEEP_REPORT_WRITE_H

#include "archive/archive.h"
#include "sweep/sweep.h"

/* `sweep report`: builds the sweep's report (sweep/report.h) and writes it
 * into dir: report.md, a CSV per table, the charts.  codec may be NULL.
 * Returns an exit status after reporting errors. */
int wz_sweep_report(const wzsw_sweep *s, wza_archive *a, const wza_run *codec,
		    long long codec_run, const char *dir, int quiet);

#endif
