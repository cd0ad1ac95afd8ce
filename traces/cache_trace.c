/* Reading cache-trace files whole: the header checked against the bytes
 * given (traces/cache_trace_layout.c), then every tensor converted to
 * float32 with the trace's own rules (docs/cache-trace.md, "What the reader
 * checks"). */
#include "traces/cache_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "traces/cache_trace_internal.h"

static wz_err load_floats(const char *origin, const unsigned char *data, const wzt_tensor_desc *d,
			  float *out, const char *const *labels, wz_diag *diag)
{
	return wzt_convert_floats(origin, d, data + d->begin, 0, d->count, out, labels, diag);
}

/* The checked header's tensors, converted. */
static wz_err build_trace(const char *origin, const unsigned char *data, const wzt_layout *lay,
			  wzt_cache_trace **out, wz_diag *diag)
{
	wzt_cache_trace *t = wzt_cache_trace_new(lay->L, lay->T, lay->R, lay->P, lay->Q, lay->H);
	if (!t)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory for the trace", origin);
	wz_err err = load_floats(origin, data, lay->latent, t->latent, wzt_cache_dims, diag);
	if (!err)
		err = load_floats(origin, data, lay->rope, t->rope, wzt_cache_dims, diag);
	if (!err && lay->Q) {
		err = load_floats(origin, data, lay->q_latent, t->q_latent, wzt_query_dims, diag);
		if (!err)
			err = load_floats(origin, data, lay->q_rope, t->q_rope, wzt_query_dims, diag);
	}
	if (!err && lay->positions)
		err = wzt_convert_indices(origin, lay->positions, data + lay->positions->begin, 0,
					  lay->positions->count, t->T, t->positions, diag);
	if (!err && lay->Q)
		err = wzt_convert_indices(origin, lay->q_index, data + lay->q_index->begin, 0,
					  lay->q_index->count, t->T, t->q_index, diag);
	if (!err)
		err = wzt_layout_metadata(origin, lay, t, diag);
	if (err) {
		wzt_cache_trace_free(t);
		return err;
	}
	*out = t;
	return WZ_OK;
}

wz_err wzt_cache_trace_parse(const void *bytes, size_t n, const char *origin,
			     wzt_cache_trace **out, wz_diag *diag)
{
	const unsigned char *p = bytes;
	*out = NULL;
	if (!origin)
		origin = "(memory)";
	if (n < 8)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: %zu bytes, too short for a safetensors file (8-byte header "
				   "length first)",
				   origin, n);
	uint64_t header_len = 0;
	for (int i = 7; i >= 0; i--)
		header_len = (header_len << 8) | p[i];
	wz_err err = wzt_header_len_check(origin, header_len, n, diag);
	if (err)
		return err;
	wzt_layout lay;
	err = wzt_layout_parse(origin, p + 8, header_len, (uint64_t)(n - 8 - header_len), &lay, diag);
	if (!err)
		err = build_trace(origin, p + 8 + header_len, &lay, out, diag);
	wzt_layout_free(&lay);
	return err;
}

wz_err wzt_cache_trace_read(const char *path, wzt_cache_trace **out, wz_diag *diag)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return wz_diag_set(diag, errno == ENOENT ? WZ_ERR_INPUT : WZ_ERR_IO, "%s: %s", path,
				   strerror(errno));
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return wzt_cache_trace_parse("", 0, path, out, diag);
	}
	/* Read, not mapped: a mapped file truncated by someone else while we
	 * convert it would kill the process with SIGBUS.  A read that comes up
	 * short says so instead. */
	if ((uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2) {
		close(fd);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: too large for this machine", path);
	}
	size_t size = (size_t)st.st_size, got = 0;
	unsigned char *bytes = malloc(size);
	if (!bytes) {
		close(fd);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory for %zu bytes", path, size);
	}
	while (got < size) {
		ssize_t r = pread(fd, bytes + got, size - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int saved = errno;
			close(fd);
			free(bytes);
			if (r == 0)
				return wz_diag_set(diag, WZ_ERR_INPUT,
						   "%s: the file shrank while it was read (%zu of %zu "
						   "bytes); was it being written?",
						   path, got, size);
			return wz_diag_set(diag, WZ_ERR_IO, "%s: read error: %s", path, strerror(saved));
		}
		got += (size_t)r;
	}
	close(fd);
	wz_err err = wzt_cache_trace_parse(bytes, size, path, out, diag);
	free(bytes);
	return err;
}
