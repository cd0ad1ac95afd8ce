/* Reading a cache trace a run of tokens at a time (wzt_cache_stream_*):
 * the header and the small tensors checked on opening as the whole-file
 * reader checks them, the cache's values read with pread when asked, so a
 * session of any length is read in the memory of its header. */
#include "traces/cache_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "traces/cache_trace_internal.h"

/* Values converted at a time when the queries and indices are checked on
 * opening. */
#define CHUNK_VALUES 65536

struct wzt_cache_stream {
	int fd;
	char *path;
	uint64_t data_at; /* the data buffer's offset in the file */
	wzt_tensor_desc latent, rope; /* copies: the layout is freed after opening */
	wzt_cache_trace info;
};

/* n bytes at offset off, or a message saying the file shrank. */
static wz_err read_at(int fd, const char *path, void *buf, size_t n, uint64_t off, wz_diag *diag)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return wz_diag_set(diag, WZ_ERR_IO, "%s: read error: %s", path, strerror(errno));
		if (r == 0)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: the file shrank while it was read (%llu bytes short at "
					   "byte %llu); was it being written?",
					   path, (unsigned long long)(n - got),
					   (unsigned long long)(off + got));
		got += (size_t)r;
	}
	return WZ_OK;
}

/* Reads tensor d through in pieces: floats checked finite, indices in
 * range; nothing kept but, when keep is not NULL, the indices (the
 * positions: 8 bytes a token). */
static wz_err check_tensor(const wzt_cache_stream *s, const wzt_tensor_desc *d, int is_index,
			   const char *const *labels, unsigned char *raw, float *vals, int64_t *idx,
			   int64_t *keep, wz_diag *diag)
{
	unsigned size = wzt_desc_size(d);
	for (uint64_t i = 0; i < d->count; i += CHUNK_VALUES) {
		uint64_t m = d->count - i < CHUNK_VALUES ? d->count - i : CHUNK_VALUES;
		wz_err e = read_at(s->fd, s->path, raw, (size_t)(m * size), s->data_at + d->begin + i * size,
				   diag);
		if (!e)
			e = is_index ? wzt_convert_indices(s->path, d, raw, i, m, s->info.T, idx, diag)
				     : wzt_convert_floats(s->path, d, raw, i, m, vals, labels, diag);
		if (e)
			return e;
		if (keep)
			memcpy(keep + i, idx, sizeof *idx * (size_t)m);
	}
	return WZ_OK;
}

/* What the whole-file reader checks besides the cache's values. */
static wz_err check_small_tensors(wzt_cache_stream *s, const wzt_layout *lay, wz_diag *diag)
{
	unsigned char *raw = malloc((size_t)CHUNK_VALUES * 8);
	float *vals = malloc(sizeof(float) * CHUNK_VALUES);
	int64_t *idx = malloc(sizeof(int64_t) * CHUNK_VALUES);
	wz_err e = WZ_OK;
	if (!raw || !vals || !idx)
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", s->path);
	if (!e && lay->Q)
		e = check_tensor(s, lay->q_latent, 0, wzt_query_dims, raw, vals, idx, NULL, diag);
	if (!e && lay->Q)
		e = check_tensor(s, lay->q_rope, 0, wzt_query_dims, raw, vals, idx, NULL, diag);
	if (!e && lay->positions) {
		s->info.positions = malloc(sizeof(int64_t) * (size_t)lay->positions->count);
		e = s->info.positions ? check_tensor(s, lay->positions, 1, NULL, raw, vals, idx,
						     s->info.positions, diag)
				      : wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", s->path);
	}
	if (!e && lay->Q)
		e = check_tensor(s, lay->q_index, 1, NULL, raw, vals, idx, NULL, diag);
	free(raw);
	free(vals);
	free(idx);
	return e;
}

static wz_err open_checked(wzt_cache_stream *s, wz_diag *diag)
{
	const char *path = s->path;
	struct stat st;
	if (fstat(s->fd, &st) != 0 || !S_ISREG(st.st_mode))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: not a regular file", path);
	uint64_t size = (uint64_t)st.st_size;
	if (size < 8)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: %llu bytes, too short for a safetensors file (8-byte header "
				   "length first)",
				   path, (unsigned long long)size);
	unsigned char len8[8];
	wz_err e = read_at(s->fd, path, len8, 8, 0, diag);
	if (e)
		return e;
	uint64_t header_len = 0;
	for (int i = 7; i >= 0; i--)
		header_len = (header_len << 8) | len8[i];
	if ((e = wzt_header_len_check(path, header_len, size, diag)))
		return e;
	unsigned char *header = malloc((size_t)header_len);
	if (!header)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory for the header", path);
	wzt_layout lay;
	memset(&lay, 0, sizeof lay);
	e = read_at(s->fd, path, header, (size_t)header_len, 8, diag);
	if (!e)
		e = wzt_layout_parse(path, header, header_len, size - 8 - header_len, &lay, diag);
	free(header);
	if (!e) {
		s->data_at = 8 + header_len;
		s->latent = *lay.latent;
		s->rope = *lay.rope;
		s->latent.name = "latent"; /* the layout's names go with it */
		s->rope.name = "rope";
		s->info.L = lay.L;
		s->info.T = lay.T;
		s->info.R = lay.R;
		s->info.P = lay.P;
		s->info.Q = lay.Q;
		s->info.H = lay.H;
		e = check_small_tensors(s, &lay, diag);
	}
	if (!e)
		e = wzt_layout_metadata(path, &lay, &s->info, diag);
	wzt_layout_free(&lay);
	return e;
}

wz_err wzt_cache_stream_open(const char *path, wzt_cache_stream **out, wz_diag *diag)
{
	*out = NULL;
	wzt_cache_stream *s = calloc(1, sizeof *s);
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory", path);
	}
	s->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->fd < 0) {
		int saved = errno;
		wzt_cache_stream_close(s);
		return wz_diag_set(diag, saved == ENOENT ? WZ_ERR_INPUT : WZ_ERR_IO, "%s: %s", path,
				   strerror(saved));
	}
	wz_err e = open_checked(s, diag);
	if (e) {
		wzt_cache_stream_close(s);
		return e;
	}
	*out = s;
	return WZ_OK;
}

void wzt_cache_stream_close(wzt_cache_stream *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	free(s->info.model);
	free(s->info.split);
	free(s->info.window);
	free(s->info.source);
	free(s->info.positions);
	free(s->path);
	free(s);
}

const wzt_cache_trace *wzt_cache_stream_info(const wzt_cache_stream *s)
{
	return &s->info;
}

/* Values first .. first + count - 1 of tensor d into out, converted in
 * place: the stored bytes are read into the top of out (4-byte values fill
 * it, 2-byte ones its upper half) and converted from the front, so every
 * stored value is read before its float overwrites it. */
static wz_err read_floats(const wzt_cache_stream *s, const wzt_tensor_desc *d, uint64_t first,
			  uint64_t count, float *out, wz_diag *diag)
{
	if (!count)
		return WZ_OK;
	unsigned size = wzt_desc_size(d);
	unsigned char *raw = (unsigned char *)out + count * (sizeof(float) - size);
	wz_err e = read_at(s->fd, s->path, raw, (size_t)(count * size),
			   s->data_at + d->begin + first * size, diag);
	return e ? e : wzt_convert_floats(s->path, d, raw, first, count, out, wzt_cache_dims, diag);
}

wz_err wzt_cache_stream_read(const wzt_cache_stream *s, int layer, int t0, int n, float *latent,
			     float *rope, wz_diag *diag)
{
	const wzt_cache_trace *t = &s->info;
	if (layer < 0 || layer >= t->L || t0 < 0 || n < 0 || n > t->T - t0)
		return wz_diag_set(diag, WZ_ERR_RANGE, "%s: layer %d tokens %d..%d outside %d x %d",
				   s->path, layer, t0, t0 + n - 1, t->L, t->T);
	uint64_t row = (uint64_t)layer * (uint64_t)t->T + (uint64_t)t0;
	wz_err e = read_floats(s, &s->latent, row * (uint64_t)t->R, (uint64_t)n * (uint64_t)t->R,
			       latent, diag);
	return e ? e
		 : read_floats(s, &s->rope, row * (uint64_t)t->P, (uint64_t)n * (uint64_t)t->P,
			       rope, diag);
}
