/* The MPI side of a sweep: rank 0 deals out points one at a time and
 * gathers their results; the other ranks run them (mpi.h). */
#include "sweep/mpi.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef WZ_HAVE_MPI
#include <mpi.h>
#endif

long wzsw_mpi_launched(void)
{
	/* Open MPI's mpirun, then PMIx and PMI (Slurm's srun, MPICH). */
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE" };
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *v = getenv(vars[i]);
		long n;
		if (v && !wz_parse_long(v, &n) && n > 0)
			return n;
	}
	return 0;
}

#ifndef WZ_HAVE_MPI

int wzsw_mpi_built(void)
{
	return 0;
}

wz_err wzsw_mpi_init(int *rank, int *size, wz_diag *diag)
{
	*rank = 0, *size = 1;
	return wz_diag_set(diag, WZ_ERR_UNSUPPORTED,
			   "this wzplan was built without MPI (configure --with-mpi, with Open MPI "
			   "installed)");
}

void wzsw_mpi_finalize(void)
{
}

void wzsw_mpi_abort(int status)
{
	(void)status;
}

wz_err wzsw_mpi_run(const long *indices, long n, wzsw_blob_fn work, void *wud, wzsw_take_fn take,
		    void *tud, wzsw_done_fn done, void *dud, long *nfailed, wz_diag *diag)
{
	(void)indices, (void)n, (void)work, (void)wud, (void)take, (void)tud, (void)done, (void)dud;
	*nfailed = 0;
	return wz_diag_set(diag, WZ_ERR_UNSUPPORTED, "this wzplan was built without MPI");
}

#else

/* Messages: a worker sends TAG_RESULT {index, status, bytes} (index -1
 * when it first asks), then the bytes under TAG_BLOB; rank 0 answers
 * TAG_WORK with the next index, or -1: stop. */
enum { TAG_RESULT = 1, TAG_BLOB = 2, TAG_WORK = 3 };

int wzsw_mpi_built(void)
{
	return 1;
}

static wz_err mpi_fail(wz_diag *diag, const char *what, int code)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(code, text, &len) != MPI_SUCCESS)
		len = 0;
	text[len] = '\0';
	return wz_diag_set(diag, WZ_ERR_IO, "MPI: %s: %s", what, len ? text : "failed");
}

wz_err wzsw_mpi_init(int *rank, int *size, wz_diag *diag)
{
	int rc = MPI_Init(NULL, NULL);
	if (rc != MPI_SUCCESS)
		return mpi_fail(diag, "MPI_Init", rc);
	/* Errors come back as codes, to be reported with the point. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return WZ_OK;
}

void wzsw_mpi_finalize(void)
{
	MPI_Finalize();
}

void wzsw_mpi_abort(int status)
{
	MPI_Abort(MPI_COMM_WORLD, status);
}

static wz_err worker(wzsw_blob_fn work, void *wud, wz_diag *diag)
{
	long msg[3] = { -1, 0, 0 };
	wz_buf blob = { 0 };
	for (;;) {
		int rc = MPI_Send(msg, 3, MPI_LONG, 0, TAG_RESULT, MPI_COMM_WORLD);
		if (rc == MPI_SUCCESS && msg[2] > 0)
			rc = MPI_Send(blob.data, (int)msg[2], MPI_BYTE, 0, TAG_BLOB, MPI_COMM_WORLD);
		if (rc != MPI_SUCCESS) {
			wz_buf_free(&blob);
			return mpi_fail(diag, "sending a result to rank 0", rc);
		}
		long index;
		rc = MPI_Recv(&index, 1, MPI_LONG, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS) {
			wz_buf_free(&blob);
			return mpi_fail(diag, "waiting for work from rank 0", rc);
		}
		if (index < 0)
			break;
		blob.len = 0;
		blob.failed = 0;
		int status = work(wud, index, &blob);
		/* A blob MPI cannot count in an int is a failed point, not a
		 * truncated one. */
		if (!status && (blob.failed || blob.len > (size_t)0x7fffffff))
			status = 1;
		msg[0] = index, msg[1] = status, msg[2] = status ? 0 : (long)blob.len;
	}
	wz_buf_free(&blob);
	return WZ_OK;
}

/* Waits for a result without spinning: Open MPI's blocking receive polls
 * at full speed, and rank 0 would take a core from the ranks that run
 * points on the same node.  Points take milliseconds at least, so probing
 * every millisecond or so costs them nothing. */
static int wait_result(MPI_Status *st)
{
	long pause_ns = 50000;
	for (;;) {
		int flag = 0;
		int rc = MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &flag, st);
		if (rc != MPI_SUCCESS || flag)
			return rc;
		struct timespec ts = { 0, pause_ns };
		nanosleep(&ts, NULL);
		if (pause_ns < 2000000)
			pause_ns *= 2;
	}
}

static wz_err dealer(const long *indices, long n, int nranks, wzsw_take_fn take, void *tud,
		     wzsw_done_fn done, void *dud, long *nfailed, wz_diag *diag)
{
	long next = 0;
	int working = nranks - 1; /* ranks not yet told to stop */
	char *bytes = NULL;
	size_t cap = 0;
	while (working > 0) {
		long msg[3];
		MPI_Status st;
		int rc = wait_result(&st);
		if (rc == MPI_SUCCESS)
			rc = MPI_Recv(msg, 3, MPI_LONG, st.MPI_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
		if (rc != MPI_SUCCESS) {
			free(bytes);
			return mpi_fail(diag, "waiting for the ranks", rc);
		}
		int from = st.MPI_SOURCE;
		size_t len = msg[2] > 0 ? (size_t)msg[2] : 0;
		if (len > cap) {
			char *b = realloc(bytes, len);
			if (!b) {
				free(bytes);
				return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
			}
			bytes = b, cap = len;
		}
		if (len && (rc = MPI_Recv(bytes, (int)len, MPI_BYTE, from, TAG_BLOB, MPI_COMM_WORLD,
					  MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
			free(bytes);
			return mpi_fail(diag, "receiving a result", rc);
		}
		long index = msg[0];
		/* The next point goes out before this one is stored, so the rank
		 * is not kept waiting on the archive. */
		long give = next < n ? indices[next++] : -1;
		if (give < 0)
			working--;
		if ((rc = MPI_Send(&give, 1, MPI_LONG, from, TAG_WORK, MPI_COMM_WORLD)) != MPI_SUCCESS) {
			free(bytes);
			return mpi_fail(diag, "sending work", rc);
		}
		if (index < 0)
			continue;
		int status = take(tud, index, (int)msg[1], bytes, len);
		if (status)
			(*nfailed)++;
		if (done)
			done(dud, index, status);
	}
	free(bytes);
	return WZ_OK;
}

wz_err wzsw_mpi_run(const long *indices, long n, wzsw_blob_fn work, void *wud, wzsw_take_fn take,
		    void *tud, wzsw_done_fn done, void *dud, long *nfailed, wz_diag *diag)
{
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	*nfailed = 0;
	if (size < 2)
		return WZ_OK;
	if (rank)
		return worker(work, wud, diag);
	return dealer(indices, n, size, take, tud, done, dud, nfailed, diag);
}

#endif
