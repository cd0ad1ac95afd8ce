/* Outputs of `wzplan codec pack` and `unpack` written as they go: a
 * temporary file beside the path, renamed into place at the end. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/codec_cli.h"
#include "common/wz_io.h"

wz_err wz_out_open(wz_out_file *o, const char *path, wz_diag *diag)
{
	o->fd = -1;
	o->tmp = NULL;
	wz_err e = wz_check_replaceable(path, diag);
	if (e)
		return e;
	size_t n = strlen(path) + 16;
	if (!(o->tmp = malloc(n)))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	snprintf(o->tmp, n, "%s.tmpXXXXXX", path);
	if ((o->fd = mkstemp(o->tmp)) < 0) {
		e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
	}
	return e;
}

wz_err wz_out_write(wz_out_file *o, const char *path, const void *bytes, size_t n, wz_diag *diag)
{
	const char *p = bytes;
	while (n > 0) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
		p += w;
		n -= (size_t)w;
	}
	return WZ_OK;
}

/* Commits (ok) or removes the output. */
wz_err wz_out_close(wz_out_file *o, const char *path, int ok, wz_diag *diag)
{
	wz_err e = WZ_OK;
	if (o->fd < 0)
		return e;
	if (ok && wz_fault_write_due())
		e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", path, strerror(ENOSPC));
	if (ok && !e && fsync(o->fd))
		e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
	if (close(o->fd) && ok && !e)
		e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
	if (ok && !e) {
		mode_t mask = umask(0);
		umask(mask);
		chmod(o->tmp, 0666 & ~mask);
		if (rename(o->tmp, path))
			e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
	}
	if (!ok || e)
		unlink(o->tmp);
	free(o->tmp);
	return e;
}

int wz_cli_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
}

