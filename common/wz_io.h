/* File helpers: whole-file reads, atomic writes (nothing half-written),
 * content hashes, and I/O fault injection for tests. */
#ifndef WZ_IO_H
#define WZ_IO_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "common/wz_error.h"

/* Opens a regular file for reading (*f, the caller closes it): a FIFO, a
 * device or a folder is WZ_ERR_REFUSED without waiting for a writer (a FIFO
 * with none, /dev/zero, would hang a reader or fill memory). */
wz_err wz_open_regular(const char *path, FILE **f /* OUT */, wz_diag *diag);

/* Reads a whole regular file (at most max_bytes; anything else is refused
 * as wz_open_regular does) into a NUL-terminated buffer the caller frees
 * with free().  *size gets the byte count (without the NUL). */
wz_err wz_read_file(const char *path, size_t max_bytes, char **data /* OUT */,
		    size_t *size /* OUT */, wz_diag *diag);

/* Reads a whole regular file (at most max_bytes) of the size it has when
 * opened into one buffer aligned to 64 bytes, large ones on huge pages
 * where the system offers them (a 67 MB profile read into 4 KiB pages spent
 * most of its time in page faults), with no terminating NUL; the caller
 * frees it with free().  A file that shrinks while it is read is
 * WZ_ERR_IO; one that is not a regular file is read as wz_read_file does. */
wz_err wz_read_file_sized(const char *path, size_t max_bytes, void **data /* OUT */,
			  size_t *size /* OUT */, wz_diag *diag);

/* wz_read_file_sized, calling fed (when not NULL) after each piece read
 * (at most WZ_READ_PIECE bytes) with the buffer, the bytes in it so far
 * and the file's size: the caller works on each piece while it is still in
 * cache (hashing and checking a 67 MB profile after reading it all read it
 * from memory twice more).  The buffer is the function's until it returns
 * WZ_OK; fed must not keep it past an error.  A file that is not regular
 * is fed once, whole. */
#define WZ_READ_PIECE ((size_t)256 << 10)
typedef void (*wz_fed_fn)(void *ctx, const void *bytes, size_t have, size_t size);
wz_err wz_read_file_fed(const char *path, size_t max_bytes, wz_fed_fn fed, void *ctx,
			void **data /* OUT */, size_t *size /* OUT */, wz_diag *diag);

/* Opens a regular file for reading with pread: *fd (the caller closes it)
 * and its *size.  WZ_ERR_INPUT for a missing file, WZ_ERR_UNSUPPORTED for
 * one that is not a regular file (a pipe cannot be read at offsets; it is
 * not opened), WZ_ERR_IO otherwise. */
wz_err wz_open_at(const char *path, int *fd /* OUT */, uint64_t *size /* OUT */, wz_diag *diag);

/* Reads exactly len bytes at offset off of fd (opened from path, named in
 * errors) into dst, at most WZ_READ_PIECE at a time.  A file that ends
 * first (it shrank since it was opened) is WZ_ERR_IO saying so. */
wz_err wz_read_at(int fd, const char *path, uint64_t off, size_t len, void *dst, wz_diag *diag);

/* Writes bytes to path atomically: a temporary file in the same folder,
 * fsync, then rename.  On failure the old file (if any) is untouched and no
 * temporary is left behind.  An existing path that is not a regular file
 * (a symbolic link, a folder, a device) is never replaced: WZ_ERR_REFUSED. */
wz_err wz_write_file_atomic(const char *path, const void *bytes, size_t n, wz_diag *diag);

/* An output written in pieces, then renamed into place, so nothing
 * half-written is ever left at the path: a temporary file beside it
 * (mode 0666 & ~umask once committed), fsync, rename.  As with
 * wz_write_file_atomic, an existing path that is not a regular file is
 * refused.  path is borrowed until wz_out_stream_close. */
typedef struct {
	char *tmp;
	const char *path;
	int fd;
} wz_out_stream;
#define WZ_OUT_STREAM_NONE { NULL, NULL, -1 }
wz_err wz_out_stream_open(wz_out_stream *o, const char *path, wz_diag *diag);
/* As wz_out_stream_open, but a path of "-" is standard output, written as
 * it goes (a pipe has nothing to commit: on failure what was written
 * stays written, and the caller's exit status says so). */
wz_err wz_out_stream_open_or_stdout(wz_out_stream *o, const char *path, wz_diag *diag);
wz_err wz_out_stream_write(wz_out_stream *o, const void *bytes, size_t n, wz_diag *diag);
/* Commits (ok) or removes the output; a no-op on one never opened.  A
 * commit can still fail (the disk full at fsync): the output is then
 * removed and the old file, if any, kept. */
wz_err wz_out_stream_close(wz_out_stream *o, int ok, wz_diag *diag);

/* WZ_OK when path is absent or a regular file (not a symbolic link to
 * one); WZ_ERR_REFUSED naming what it is otherwise. */
wz_err wz_check_replaceable(const char *path, wz_diag *diag);

/* wz_mkdir_p for an output folder the user named: refused (WZ_ERR_REFUSED)
 * when it is a symbolic link or something other than a folder, so that
 * nothing is written through a link. */
wz_err wz_mkdir_out(const char *path, wz_diag *diag);

/* Creates a folder and its parents (mode 0777 & ~umask); existing is fine. */
wz_err wz_mkdir_p(const char *path, wz_diag *diag);

/* 64-bit XXH3 hash of a regular file's bytes (anything else is refused as
 * wz_open_regular does), as 16 lowercase hex digits in hex[17]; *size gets
 * the file size. */
wz_err wz_hash_file(const char *path, char hex[17] /* OUT */, uint64_t *size /* OUT */,
		    wz_diag *diag);

/* Paths an archive records are input too: a foreign archive could name
 * /etc/shadow as a run's scenario.  After wz_recorded_roots(folders, n)
 * (the process's, e.g. the archive's folder and the current one; copied),
 * wz_recorded_path_check accepts only a path that resolves, links followed,
 * to a file inside one of them, and refuses any other (WZ_ERR_REFUSED,
 * naming the folders); with no folders set it accepts every path. */
void wz_recorded_roots(const char *const *folders, int n);
wz_err wz_recorded_path_check(const char *path, wz_diag *diag);

/* 64-bit XXH3 of a buffer. */
uint64_t wz_hash_bytes(const void *bytes, size_t n);

/* Joins folder and name with one '/' into a new string the caller frees. */
char *wz_path_join(const char *folder, const char *name);

/* Test hook: when the environment variable WZ_FAULT_WRITE=N is set, the Nth
 * atomic write of this process (counting from 1) fails as if the disk were
 * full.  Returns nonzero when the current write must fail. */
int wz_fault_write_due(void);

#endif
