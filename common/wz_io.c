/* Whole-file reads, atomic writes, hashing and fault injection (wz_io.h). */
#include "common/wz_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

wz_err wz_open_regular(const char *path, FILE **out, wz_diag *diag)
{
	*out = NULL;
	/* O_NONBLOCK: opening a FIFO with no writer would otherwise wait
	 * forever; nothing but a regular file is read. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return wz_diag_set(diag, errno == ENOENT ? WZ_ERR_INPUT : WZ_ERR_IO,
				   "%s: cannot open: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		int folder = S_ISDIR(st.st_mode);
		close(fd);
		return wz_diag_set(diag, WZ_ERR_REFUSED,
				   "%s: is %s; wzplan reads only regular files", path,
				   folder ? "a folder" : "not a regular file (a FIFO or a device)");
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
	}
	*out = f;
	return WZ_OK;
}

wz_err wz_read_file(const char *path, size_t max_bytes, char **data, size_t *size,
		    wz_diag *diag)
{
	*data = NULL;
	*size = 0;
	FILE *f = NULL;
	wz_err e = wz_open_regular(path, &f, diag);
	if (e)
		return e;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	if (!buf) {
		fclose(f);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
	}
	for (;;) {
		if (len + 1 >= cap) {
			if (cap > max_bytes) {
				free(buf);
				fclose(f);
				return wz_diag_set(diag, WZ_ERR_INPUT,
						   "%s: larger than the %zu bytes allowed", path, max_bytes);
			}
			char *grown = realloc(buf, cap * 2);
			if (!grown) {
				free(buf);
				fclose(f);
				return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
			}
			buf = grown;
			cap *= 2;
		}
		size_t got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0)
			break;
	}
	int failed = ferror(f);
	fclose(f);
	if (failed) {
		free(buf);
		return wz_diag_set(diag, WZ_ERR_IO, "%s: read error", path);
	}
	if (len > max_bytes) {
		free(buf);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: larger than the %zu bytes allowed",
				   path, max_bytes);
	}
	buf[len] = '\0';
	*data = buf;
	*size = len;
	return WZ_OK;
}

/* Huge pages pay for a buffer of several of them. */
#define HUGE_PAGE ((size_t)2 << 20)

wz_err wz_read_file_sized(const char *path, size_t max_bytes, void **data, size_t *size,
			  wz_diag *diag)
{
	return wz_read_file_fed(path, max_bytes, NULL, NULL, data, size, diag);
}

wz_err wz_read_file_fed(const char *path, size_t max_bytes, wz_fed_fn fed, void *ctx,
			void **data, size_t *size, wz_diag *diag)
{
	*data = NULL;
	*size = 0;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC); /* a FIFO must not block here */
	if (fd < 0)
		return wz_diag_set(diag, errno == ENOENT ? WZ_ERR_INPUT : WZ_ERR_IO,
				   "%s: cannot open: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		char *buf;
		wz_err e = wz_read_file(path, max_bytes, &buf, size, diag);
		*data = buf;
		if (!e && fed)
			fed(ctx, buf, *size, *size);
		return e;
	}
	size_t n = (size_t)st.st_size;
	if (n > max_bytes) {
		close(fd);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: larger than the %zu bytes allowed", path,
				   max_bytes);
	}
	int huge = n >= 4 * HUGE_PAGE;
	size_t cap = huge ? (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE : n + 1;
	void *buf = NULL;
	if (posix_memalign(&buf, huge ? HUGE_PAGE : 64, cap)) {
		close(fd);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
	}
#ifdef MADV_HUGEPAGE
	if (huge)
		(void)madvise(buf, cap, MADV_HUGEPAGE); /* a hint: without it, small pages */
#endif
	size_t len = 0;
	while (len < n) {
		size_t want = fed && n - len > WZ_READ_PIECE ? WZ_READ_PIECE : n - len;
		ssize_t got = read(fd, (char *)buf + len, want);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			int err = got < 0 ? errno : 0;
			close(fd);
			free(buf);
			return got < 0 ? wz_diag_set(diag, WZ_ERR_IO, "%s: read error: %s", path, strerror(err))
				       : wz_diag_set(diag, WZ_ERR_IO, "%s: %zu bytes, then the file ended (it shrank while read)",
						     path, len);
		}
		len += (size_t)got;
		if (fed)
			fed(ctx, buf, len, n);
	}
	close(fd);
	*data = buf;
	*size = n;
	return WZ_OK;
}

wz_err wz_open_at(const char *path, int *fd, uint64_t *size, wz_diag *diag)
{
	*fd = -1;
	*size = 0;
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return wz_diag_set(diag, WZ_ERR_UNSUPPORTED, "%s: not a regular file", path);
	int f = open(path, O_RDONLY);
	if (f < 0)
		return wz_diag_set(diag, errno == ENOENT ? WZ_ERR_INPUT : WZ_ERR_IO,
				   "%s: cannot open: %s", path, strerror(errno));
	if (fstat(f, &st) || !S_ISREG(st.st_mode)) {
		close(f);
		return wz_diag_set(diag, WZ_ERR_UNSUPPORTED, "%s: not a regular file", path);
	}
	*fd = f;
	*size = (uint64_t)st.st_size;
	return WZ_OK;
}

wz_err wz_read_at(int fd, const char *path, uint64_t off, size_t len, void *dst, wz_diag *diag)
{
	size_t got = 0;
	while (got < len) {
		size_t want = len - got > WZ_READ_PIECE ? WZ_READ_PIECE : len - got;
		ssize_t k = pread(fd, (char *)dst + got, want, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return wz_diag_set(diag, WZ_ERR_IO, "%s: read error: %s", path, strerror(errno));
		if (k == 0)
			return wz_diag_set(diag, WZ_ERR_IO,
					   "%s: the file ended at %llu bytes (it shrank while read)", path,
					   (unsigned long long)(off + got));
		got += (size_t)k;
	}
	return WZ_OK;
}

int wz_fault_write_due(void)
{
	static long count;
	const char *spec = getenv("WZ_FAULT_WRITE");
	count++;
	if (!spec || !*spec)
		return 0;
	return atol(spec) == count;
}

wz_err wz_check_replaceable(const char *path, wz_diag *diag)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? WZ_OK
				       : wz_diag_set(diag, WZ_ERR_IO, "%s: %s", path, strerror(errno));
	if (S_ISREG(st.st_mode))
		return WZ_OK;
	return wz_diag_set(diag, WZ_ERR_REFUSED,
			   "%s: is %s; wzplan only replaces regular files (give a new name, or "
			   "leave the option out to write to standard output where the command can)",
			   path,
			   S_ISLNK(st.st_mode)   ? "a symbolic link"
			   : S_ISDIR(st.st_mode) ? "a folder"
						 : "not a regular file");
}

wz_err wz_out_stream_open(wz_out_stream *o, const char *path, wz_diag *diag)
{
	o->fd = -1;
	o->tmp = NULL;
	o->path = path;
	wz_err e = wz_check_replaceable(path, diag);
	if (e)
		return e;
	size_t n = strlen(path) + 16;
	if (!(o->tmp = malloc(n)))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
	/* mkstemp's template: the temporary beside the path */
	snprintf(o->tmp, n, "%s.tmpXXXXXX", path);
	if ((o->fd = mkstemp(o->tmp)) < 0) {
		e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
	}
	return e;
}

wz_err wz_out_stream_open_or_stdout(wz_out_stream *o, const char *path, wz_diag *diag)
{
	if (strcmp(path, "-"))
		return wz_out_stream_open(o, path, diag);
	o->tmp = NULL;
	o->path = "standard output";
	if ((o->fd = dup(STDOUT_FILENO)) < 0)
		return wz_diag_set(diag, WZ_ERR_IO, "standard output: %s", strerror(errno));
	return WZ_OK;
}

wz_err wz_out_stream_write(wz_out_stream *o, const void *bytes, size_t n, wz_diag *diag)
{
	const char *p = bytes;
	while (n > 0) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", o->path,
					   strerror(errno));
		p += w;
		n -= (size_t)w;
	}
	return WZ_OK;
}

wz_err wz_out_stream_close(wz_out_stream *o, int ok, wz_diag *diag)
{
	wz_err e = WZ_OK;
	if (o->fd < 0)
		return e;
	const char *path = o->path;
	if (!o->tmp) {
		/* standard output: nothing to sync or rename */
		if (close(o->fd) && ok)
			e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
		o->fd = -1;
		return e;
	}
	if (ok && wz_fault_write_due())
		e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", path, strerror(ENOSPC));
	if (ok && !e && fsync(o->fd))
		e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
	if (close(o->fd) && ok && !e)
		e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
	o->fd = -1;
	if (ok && !e) {
		/* mkstemp makes 0600; outputs are ordinary files */
		mode_t mask = umask(0);
		umask(mask);
		chmod(o->tmp, 0666 & ~mask);
		if (rename(o->tmp, path))
			e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
	}
	if (!ok || e)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	return e;
}

wz_err wz_write_file_atomic(const char *path, const void *bytes, size_t n, wz_diag *diag)
{
	wz_out_stream o;
	wz_err e = wz_out_stream_open(&o, path, diag);
	if (!e)
		e = wz_out_stream_write(&o, bytes, n, diag);
	wz_err ce = wz_out_stream_close(&o, !e, diag);
	return e ? e : ce;
}

wz_err wz_mkdir_out(const char *path, wz_diag *diag)
{
	struct stat st;
	if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
		return wz_diag_set(diag, WZ_ERR_REFUSED,
				   "%s: is %s, not a folder; wzplan writes only into real folders",
				   path, S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
	return wz_mkdir_p(path, diag);
}

wz_err wz_mkdir_p(const char *path, wz_diag *diag)
{
	char *copy = strdup(path);
	if (!copy)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	for (char *s = copy + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char saved = *s;
			*s = '\0';
			if (mkdir(copy, 0777) != 0 && errno != EEXIST) {
				wz_err e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot create folder: %s",
						       copy, strerror(errno));
				free(copy);
				return e;
			}
			*s = saved;
			if (!saved)
				break;
		}
	}
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(copy);
		return wz_diag_set(diag, WZ_ERR_IO, "%s: not a folder", path);
	}
	free(copy);
	return WZ_OK;
}

#define MAX_ROOTS 4
static char *roots[MAX_ROOTS];
static int nroots;

void wz_recorded_roots(const char *const *folders, int n)
{
	for (int i = 0; i < nroots; i++)
		free(roots[i]), roots[i] = NULL;
	nroots = 0;
	for (int i = 0; i < n && nroots < MAX_ROOTS; i++) {
		char *real = realpath(folders[i], NULL);
		if (real)
			roots[nroots++] = real;
	}
	if (n > 0 && nroots == 0) /* none resolved: nothing is inside */
		roots[nroots++] = strdup("");
}

wz_err wz_recorded_path_check(const char *path, wz_diag *diag)
{
	if (!nroots)
		return WZ_OK;
	char *real = realpath(path, NULL);
	if (!real) /* not there (or not reachable): whoever reads it says so */
		return WZ_OK;
	int inside = 0;
	for (int i = 0; i < nroots && !inside; i++) {
		size_t n = strlen(roots[i]);
		inside = n > 0 && !strncmp(real, roots[i], n) &&
			 (real[n] == '/' || (n == 1 && roots[i][0] == '/'));
	}
	free(real);
	if (inside)
		return WZ_OK;
	return wz_diag_set(diag, WZ_ERR_REFUSED,
			   "%s: outside %s%s%s, where an archive's recorded paths are read", path,
			   nroots > 0 && *roots[0] ? roots[0] : "(none)", nroots > 1 ? " and " : "",
			   nroots > 1 ? roots[1] : "");
}

uint64_t wz_hash_bytes(const void *bytes, size_t n)
{
	return XXH3_64bits(bytes, n);
}

wz_err wz_hash_file(const char *path, char hex[17], uint64_t *size, wz_diag *diag)
{
	FILE *f = NULL;
	wz_err e = wz_open_regular(path, &f, diag);
	if (e == WZ_ERR_IO && diag)
		diag->code = WZ_ERR_INPUT; /* as before: a file that cannot be opened is bad input */
	if (e)
		return e == WZ_ERR_IO ? WZ_ERR_INPUT : e;
	XXH3_state_t *state = XXH3_createState();
	if (!state) {
		fclose(f);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	XXH3_64bits_reset(state);
	char buf[1 << 16];
	uint64_t total = 0;
	size_t got;
	while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
		XXH3_64bits_update(state, buf, got);
		total += got;
	}
	int failed = ferror(f);
	fclose(f);
	uint64_t h = XXH3_64bits_digest(state);
	XXH3_freeState(state);
	if (failed)
		return wz_diag_set(diag, WZ_ERR_IO, "%s: read error", path);
	snprintf(hex, 17, "%016llx", (unsigned long long)h);
	if (size)
		*size = total;
	return WZ_OK;
}

char *wz_path_join(const char *folder, const char *name)
{
	size_t a = strlen(folder), b = strlen(name);
	char *out = malloc(a + b + 2);
	if (!out)
		return NULL;
	memcpy(out, folder, a);
	size_t k = a;
	if (k > 0 && out[k - 1] != '/')
		out[k++] = '/';
	memcpy(out + k, name, b + 1);
	return out;
}
