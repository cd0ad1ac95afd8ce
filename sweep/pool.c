/* The process pool that runs a sweep's points on every core: forked
 * workers, each sent the next point as soon as it is free (sweep.h). */
#include "sweep/sweep.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

int wzsw_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > 4096 ? 4096 : (int)n;
}

typedef struct {
	pid_t pid;
	int to, from; /* pipe ends: indices to the worker, statuses back */
	long index;   /* the point it runs, or -1 when idle */
} worker;

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w, n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r, n -= (size_t)r;
	}
	return 0;
}

/* The worker's loop: an index in, fn's status out, until the pipe closes. */
static void serve(int in, int out, wzsw_point_fn fn, void *ud)
{
	long index;
	while (read_all(in, &index, sizeof index) == 0) {
		int status = fn(ud, index);
		if (write_all(out, &status, sizeof status))
			break;
	}
	_exit(0);
}

static int start(worker *w, worker *all, int nall, wzsw_point_fn fn, void *ud)
{
	int down[2], up[2];
	if (pipe(down))
		return -1;
	if (pipe(up)) {
		close(down[0]), close(down[1]);
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(down[0]), close(down[1]), close(up[0]), close(up[1]);
		return -1;
	}
	if (pid == 0) {
#ifdef __linux__
		/* A killed sweep must not leave workers writing points that the
		 * resumed sweep runs again. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
#endif
		(void)parent;
		for (int i = 0; i < nall; i++)
			if (all[i].pid > 0)
				close(all[i].to), close(all[i].from);
		close(down[1]), close(up[0]);
		serve(down[0], up[1], fn, ud);
	}
	close(down[0]), close(up[1]);
	w->pid = pid, w->to = down[1], w->from = up[0], w->index = -1;
	return 0;
}

static void stop(worker *w)
{
	if (w->pid <= 0)
		return;
	close(w->to), close(w->from);
	int st;
	while (waitpid(w->pid, &st, 0) < 0 && errno == EINTR)
		;
	w->pid = 0;
}

wz_err wzsw_pool_run(int nworkers, const long *indices, long n, wzsw_point_fn fn, void *ud,
		     wzsw_done_fn done, void *dud, long *nfailed, wz_diag *diag)
{
	*nfailed = 0;
	if (nworkers <= 0) {
		for (long i = 0; i < n; i++) {
			int status = fn(ud, indices[i]);
			if (status)
				(*nfailed)++;
			if (done)
				done(dud, indices[i], status);
		}
		return WZ_OK;
	}
	if (nworkers > n)
		nworkers = n > 0 ? (int)n : 1;
	worker *ws = calloc((size_t)nworkers, sizeof *ws);
	struct pollfd *pf = calloc((size_t)nworkers, sizeof *pf);
	if (!ws || !pf) {
		free(ws), free(pf);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	/* A worker that died leaves a closed pipe, not a signal to this one. */
	void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
	wz_err err = WZ_OK;
	long next = 0, running = 0;
	for (int i = 0; i < nworkers && !err; i++)
		if (start(&ws[i], ws, i, fn, ud))
			err = wz_diag_set(diag, WZ_ERR_IO, "cannot start a worker process: %s",
					  strerror(errno));
	while (!err && (next < n || running > 0)) {
		for (int i = 0; i < nworkers && next < n; i++) {
			if (ws[i].index >= 0)
				continue;
			if (ws[i].pid <= 0 && start(&ws[i], ws, nworkers, fn, ud)) {
				err = wz_diag_set(diag, WZ_ERR_IO, "cannot start a worker process: %s",
						  strerror(errno));
				break;
			}
			ws[i].index = indices[next++];
			running++;
			if (write_all(ws[i].to, &ws[i].index, sizeof ws[i].index)) {
				/* Died before it took the point: the point failed. */
				(*nfailed)++;
				if (done)
					done(dud, ws[i].index, -1);
				ws[i].index = -1, running--;
				stop(&ws[i]);
			}
		}
		if (err || running == 0)
			continue;
		for (int i = 0; i < nworkers; i++) {
			pf[i].fd = ws[i].index >= 0 ? ws[i].from : -1;
			pf[i].events = POLLIN;
			pf[i].revents = 0;
		}
		if (poll(pf, (nfds_t)nworkers, -1) < 0) {
			if (errno == EINTR)
				continue;
			err = wz_diag_set(diag, WZ_ERR_IO, "waiting for the workers: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < nworkers; i++) {
			if (pf[i].fd < 0 || !(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			int status;
			long index = ws[i].index;
			if (read_all(ws[i].from, &status, sizeof status)) {
				status = -1; /* the worker died in the point */
				stop(&ws[i]);
			}
			if (status)
				(*nfailed)++;
			ws[i].index = -1;
			running--;
			if (done)
				done(dud, index, status);
		}
	}
	for (int i = 0; i < nworkers; i++)
		stop(&ws[i]);
	signal(SIGPIPE, old_pipe);
	free(ws), free(pf);
	return err;
}
