/* A codec comparison as a job: every format of one list against every
 * format of another on each trace window, paired, as `codec compare`
 * prints it.  Errors and progress go to the sink (runs/say.h). */
#ifndef WZ_RUNS_COMPARE_H
#define WZ_RUNS_COMPARE_H

#include "plots/table.h"

typedef struct {
	const char *const *paths; /* the trace windows */
	int npaths;
	const char *profile_path; /* needed for wz formats */
	const char *formats;      /* comma-separated list */
	const char *against;      /* the references, comma-separated */
	long threads;             /* 0: every core; the results do not depend on it */
	long nboot, seed;         /* the bootstrap */
	/* kvtc-<bits>: the calibration windows its transforms are fitted on */
	const char *const *calibration_paths;
	int ncalibration;
} wz_compare_req;

/* Measures both lists on every window and builds the table of pairs (wide:
 * every interval, for CSV and JSON).  On success the caller frees *out
 * with wzp_table_free.  Returns an exit status after reporting errors. */
int wz_compare_run(const wz_compare_req *rq, int wide, wzp_table **out /* OUT */);

#endif
