/* A sweep's points as runs: one point run as an archived propose run (a
 * propose request, runs/propose.h) tagged with the sweep and point ids, the
 * MPI ranks' halves of it, and the sweep's results read back from an
 * archive in point order.  Errors go to the sink (runs/say.h). */
#ifndef WZ_SWEEP_POINT_RUN_H
#define WZ_SWEEP_POINT_RUN_H

#include "archive/archive.h"
#include "common/wz_str.h"
#include "sweep/sweep.h"

typedef struct {
	const wzsw_sweep *sweep;
	const char *archive;  /* the archive's path */
	const char *workdir;  /* where the points' scenario files are written */
	const char *sweep_abs;/* the sweep file's absolute path, for the run's inputs */
} wz_sweep_ctx;

/* Runs point `index` and stores it (a wzsw_point_fn; ud is a wz_sweep_ctx).
 * Returns an exit status after reporting errors. */
int wz_sweep_run_point(void *ud, long index);

/* The figures of every archived point of the sweep, in point order, as CSV
 * (point index, point id, run, table, row, column, value, text): the same
 * bytes for the same results whatever order the points ran in.  Points not
 * in the archive are counted in *missing.  Returns an exit status. */
int wz_sweep_results_csv(const char *cmd, const wzsw_sweep *s, wza_archive *a, wz_buf *out,
			 long *missing /* OUT */);

/* The MPI ranks' halves of a point (mpi.h): a worker runs the point into
 * a scratch archive of its own at c->archive and returns that file's
 * bytes; rank 0 writes the bytes to a scratch file in c->workdir and
 * merges it into the sweep's archive (c->archive there), in one
 * transaction, refusing a point already stored. */
int wz_sweep_mpi_work(void *ud, long index, wz_buf *blob);
int wz_sweep_mpi_take(void *ud, long index, int status, const void *blob, size_t n);

#endif
