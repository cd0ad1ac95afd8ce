/* Sharing a sweep's points over MPI ranks: rank 0 hands out one point at a
 * time to whichever rank asks (dynamic load balancing: points differ in
 * cost by orders of magnitude) and gathers each result, as bytes, back;
 * the other ranks run points.  Built only with Open MPI (configure
 * --with-mpi); without it every function says so. */
#ifndef WZSW_MPI_H
#define WZSW_MPI_H

#include <stddef.h>

#include "common/wz_error.h"
#include "common/wz_str.h"
#include "sweep/sweep.h"

/* 1 when this build can run over MPI. */
int wzsw_mpi_built(void);
/* The number of ranks an MPI launcher (mpirun, srun) started, read from
 * its environment before MPI starts; 0 when not launched by one.  A build
 * without MPI uses it to refuse rather than run the whole sweep N times. */
long wzsw_mpi_launched(void);

wz_err wzsw_mpi_init(int *rank /* OUT */, int *size /* OUT */, wz_diag *diag);
void wzsw_mpi_finalize(void);
/* Ends every rank at once after an error on one (MPI_Abort). */
void wzsw_mpi_abort(int status);

/* On a worker rank: runs point index; on success fills blob with the bytes
 * to send to rank 0.  Returns 0 for success. */
typedef int (*wzsw_blob_fn)(void *ud, long index, wz_buf *blob);
/* On rank 0: takes a point's result (status 0 with its bytes, or the
 * worker's non-zero status and no bytes); returns 0 when stored. */
typedef int (*wzsw_take_fn)(void *ud, long index, int status, const void *blob, size_t n);

/* Runs the n points of indices over the ranks, in that order as ranks come
 * free.  Every rank calls it: rank 0 with the indices, take, done and
 * nfailed (the points whose work or take did not return 0), the others
 * with work (indices are ignored there).  Rank 0 runs no point itself;
 * with one rank nothing runs (the caller uses the process pool). */
wz_err wzsw_mpi_run(const long *indices, long n, wzsw_blob_fn work, void *wud, wzsw_take_fn take,
		    void *tud, wzsw_done_fn done, void *dud, long *nfailed /* OUT */,
		    wz_diag *diag);

#endif
