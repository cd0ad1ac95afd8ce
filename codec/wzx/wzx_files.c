/* wzx containers to and from files (wzx_files.h): the run loops of
 * `wzplan codec pack` and `unpack`. */
#include "codec/wzx/wzx_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/profile/profile.h"
#include "codec/wzx/wzx_internal.h"
#include "common/wz_io.h"

static wz_err to_out(void *ctx, const void *bytes, size_t n, wz_diag *diag)
{
	return wz_out_stream_write(ctx, bytes, n, diag);
}

/* The container of x's grid for T tokens of each of L layers from src,
 * written to sink: every layer planned at once, on every thread (not by
 * its first block while the other threads wait), then runs of a few
 * blocks per thread, so that memory is that, not the session. */
static wz_err pack_runs(wzc_wzx *x, wzc_codec *codec, int L, int T, wzc_wzx_source src,
			void *src_ctx, int nthreads, wzc_wzx_sink sink, void *sink_ctx,
			wzc_wzx_stats *st, wz_diag *diag)
{
	wzc_wzx_writer *wr = NULL;
	wz_err e = wzc_wzx_writer_new(x, codec, T, sink, sink_ctx, &wr, diag);
	if (!e)
		e = wzc_wzx_build_layers(x, 0, L, nthreads, diag);
	long nb = wr ? wzc_wzx_writer_blocks(wr) : 0;
	long run = (long)nthreads * WZC_WZX_PACK_BLOCKS_PER_THREAD;
	for (long b = 0; !e && b < nb; b += run)
		e = wzc_wzx_writer_put(wr, nb - b < run ? nb - b : run, nthreads, src, src_ctx, diag);
	if (!e)
		e = wzc_wzx_writer_finish(wr, st, diag);
	wzc_wzx_writer_free(wr);
	return e;
}

wz_err wzc_wzx_check_positions(const wzc_profile *prof, const wzc_window *w, wz_diag *diag)
{
	int undo = 0;
	for (int l = 0; l < prof->L; l++)
		undo |= wzc_profile_undoes_rope(prof, l);
	for (int t = 0; undo && w->positions && t < w->T; t++)
		if (w->positions[t] != t)
			return wz_diag_set(diag, WZ_ERR_INPUT,
					   "%s: token %d is at position %lld: a container holds a "
					   "session from position 0 (token t at position t), and the "
					   "profile undoes RoPE, so it codes each token at its position",
					   w->name ? w->name : "window", t, (long long)w->positions[t]);
	return WZ_OK;
}

wz_err wzc_wzx_pack_file(const wzc_profile *prof, const wzc_format *fmt, const wzc_window *w,
			 wzc_wzx_source src, void *src_ctx, int nthreads, const char *path,
			 wzc_wzx_pack_result *res, wz_diag *diag)
{
	if (fmt->id != WZC_FMT_WZ && fmt->id != WZC_FMT_WZX)
		return wz_diag_set(diag, WZ_ERR_USAGE, "a wz-<bits> or wzx-<bits> grid, not %s",
				   fmt->name);
	if (nthreads < 1)
		nthreads = 1;
	wzc_codec *codec = NULL;
	wzc_wzx *x = NULL;
	wz_out_stream of = WZ_OUT_STREAM_NONE;
	wzc_wzx_stats st;
	wz_err e = wzc_profile_check_window(prof, w, diag);
	if (!e)
		e = wzc_wzx_check_positions(prof, w, diag);
	/* a wzx rate's grid searched on nthreads threads (the codec then
	 * finds it in the profile's cache) */
	size_t grid;
	if (!e && fmt->id == WZC_FMT_WZX)
		e = wzc_wzx_grid_bytes_threads(prof, fmt->rate_bits, nthreads, &grid, diag);
	if (!e)
		e = wzc_codec_new(fmt, w->L, w->R, w->P, prof, &codec, diag);
	if (!e)
		e = wzc_wzx_of_codec(codec, &x, diag);
	if (!e)
		e = wz_out_stream_open_or_stdout(&of, path, diag);
	if (!e)
		e = pack_runs(x, codec, w->L, w->T, src, src_ctx, nthreads, to_out, &of, &st, diag);
	wz_err ce = wz_out_stream_close(&of, !e, diag);
	e = e ? e : ce;
	if (!e && res) {
		res->record_bytes = wzc_wzx_record_bytes(x);
		res->stats = st;
	}
	wzc_wzx_free(x);
	wzc_codec_free(codec);
	return e;
}

/* The blocks a rate fit codes: `per` full blocks of every layer, the
 * middles of per equal stretches of the session, as a window of per x 64
 * tokens (a block's coded size depends on its values and layer, not on
 * where it stands). */
typedef struct {
	wzc_wzx_source src;
	void *ctx;
	int per;   /* sampled blocks per layer */
	long full; /* the session's full blocks per layer */
} sample_src;

static wz_err from_sample(void *ctx, int layer, int t0, int n, float *lat, float *rope,
			  wz_diag *diag)
{
	const sample_src *s = ctx;
	long k = t0 / WZC_WZX_BLOCK_TOKENS;
	long b = (2 * k + 1) * s->full / (2L * s->per);
	return s->src(s->ctx, layer, (int)(b * WZC_WZX_BLOCK_TOKENS) + t0 % WZC_WZX_BLOCK_TOKENS, n,
		      lat, rope, diag);
}

static wz_err count_out(void *ctx, const void *bytes, size_t n, wz_diag *diag)
{
	(void)bytes;
	(void)diag;
	*(size_t *)ctx += n;
	return WZ_OK;
}

/* The sample packed in the grid of B-byte records, counted, not kept: its
 * bits/value as written (blocks, their headers and checksums, the index)
 * and (est, may be NULL) the profile's estimate for the grid, from the
 * same planned layers. */
static wz_err sample_rate(const wzc_profile *prof, const wzc_window *w, sample_src *ss, size_t B,
			  int nthreads, double *written, double *est, wz_diag *diag)
{
	int nv = w->R + w->P, T = ss->per * WZC_WZX_BLOCK_TOKENS;
	wzc_format fmt;
	wzc_format_wz_grid(B, w->R, w->P, &fmt);
	wzc_codec *codec = NULL;
	wzc_wzx *x = NULL;
	size_t bytes = 0;
	wz_err e = wzc_codec_new(&fmt, w->L, w->R, w->P, prof, &codec, diag);
	if (!e && wzc_codec_record_bytes(codec) != B)
		e = wz_diag_set(diag, WZ_ERR_INTERNAL, "the grid of %zu bytes came out as %zu", B,
				wzc_codec_record_bytes(codec));
	if (!e)
		e = wzc_wzx_of_codec(codec, &x, diag);
	if (!e)
		e = pack_runs(x, codec, w->L, T, from_sample, ss, nthreads, count_out, &bytes, NULL, diag);
	if (!e) {
		*written = (double)bytes * 8.0 / ((double)w->L * T * nv);
		if (est)
			*est = wzc_wzx_expected_bits(x);
	}
	wzc_wzx_free(x);
	wzc_codec_free(codec);
	return e;
}

wz_err wzc_wzx_fit_rate(const wzc_profile *prof, const wzc_window *w, wzc_wzx_source src,
			void *src_ctx, double bits, int nthreads, wzc_wzx_rate_fit *fit, wz_diag *diag)
{
	memset(fit, 0, sizeof *fit);
	if (nthreads < 1)
		nthreads = 1;
	size_t g;
	wz_err e = wzc_profile_check_window(prof, w, diag);
	if (!e)
		e = wzc_wzx_grid_bytes_threads(prof, bits, nthreads, &g, diag);
	if (e)
		return e;
	fit->profile_bytes = fit->record_bytes = g;
	sample_src ss = { src, src_ctx, WZC_WZX_FIT_BLOCKS, w->T / WZC_WZX_BLOCK_TOKENS };
	if (ss.full < 1)
		return WZ_OK; /* shorter than a block: nothing to sample */
	if (ss.per > ss.full)
		ss.per = (int)ss.full;
	fit->sample_blocks = (long)ss.per * w->L;
	double m, est;
	if ((e = sample_rate(prof, w, &ss, g, nthreads, &m, &est, diag)))
		return e;
	fit->profile_sample_bits = fit->sample_bits = m;
	fit->profile_estimate = est;
	fit->probes = 1;
	/* Over the rate: the written rate is close to proportional to the
	 * grid (a little less than proportional: fixed costs such as the
	 * scale codes do not shrink), so the grid scaled by bits / m lands at
	 * or below the rate; then one secant step between the two back up
	 * towards it.  A grid at or below bits x (R + P) / 8 - 1 bytes always
	 * fits (a block that codes larger than its records is stored raw, and
	 * the framing, 40 bytes a block of 64 tokens, is 5 / (R + P)
	 * bits/value, under the 8 / (R + P) of a byte of grid), so the loop
	 * ends. */
	size_t hi = g;
	double mhi = m;
	while (m > bits && g > 1) {
		size_t next = (size_t)((double)g * bits / m);
		g = next >= g ? g - 1 : next < 1 ? 1 : next;
		if ((e = sample_rate(prof, w, &ss, g, nthreads, &m, NULL, diag)))
			return e;
		fit->probes++;
		if (m > bits) {
			hi = g;
			mhi = m;
		}
	}
	if (hi != g && mhi > m) {
		size_t up = g + (size_t)((bits - m) * (double)(hi - g) / (mhi - m));
		if (up > g && up < hi) {
			double mu;
			if ((e = sample_rate(prof, w, &ss, up, nthreads, &mu, NULL, diag)))
				return e;
			fit->probes++;
			if (mu <= bits) {
				g = up;
				m = mu;
			}
		}
	}
	fit->record_bytes = g;
	fit->sample_bits = m;
	return WZ_OK;
}

/* The container read with pread a run of blocks at a time, never mapped
 * (a file that shrinks while it is read is then an error, not a SIGBUS)
 * nor read whole: memory is its index (16 bytes a block) and a run of
 * blocks, whatever the session's length. */
typedef struct {
	int fd;
	int shrank;
	int err; /* a failed read's errno (the read may be on another thread) */
} source;

static int read_at(void *ctx, size_t off, size_t len, void *dst)
{
	source *s = ctx;
	size_t got = 0;
	while (got < len) {
		ssize_t k = pread(s->fd, (uint8_t *)dst + got, len - got, (off_t)(off + got));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			s->shrank = k == 0;
			s->err = k < 0 ? errno : 0;
			return -1;
		}
		got += (size_t)k;
	}
	return 0;
}

/* A failed read says why: the file shrank, or the system's error. */
static wz_err read_failure(const char *path, const source *src, wz_err e, wz_diag *diag)
{
	if (e != WZ_ERR_IO)
		return e;
	if (src->shrank)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: the file shrank while it was read", path);
	return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot read: %s", path,
			   strerror(src->err ? src->err : errno));
}

static wz_err open_in(const char *path, source *src, wzc_wzx_reader **r, wz_diag *diag)
{
	*r = NULL;
	src->shrank = 0;
	src->err = 0;
	src->fd = open(path, O_RDONLY);
	struct stat st;
	if (src->fd < 0 || fstat(src->fd, &st))
		return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: not a regular file", path);
	return read_failure(path, src,
			    wzc_wzx_open_source((size_t)st.st_size, read_at, src, path, r, diag),
			    diag);
}

/* The tokens of blocks b0 .. b0 + nb - 1: every block of a layer has 64
 * but the layer's last. */
static long run_tokens(const wzc_wzx_info *info, long b0, long nb)
{
	long tok = 0;
	for (long i = b0; i < b0 + nb; i++) {
		long t0 = (i % info->blocks_per_layer) * WZC_WZX_BLOCK_TOKENS;
		tok += info->T - t0 < WZC_WZX_BLOCK_TOKENS ? info->T - t0 : WZC_WZX_BLOCK_TOKENS;
	}
	return tok;
}

wz_err wzc_wzx_unpack_file(const char *in, const wzc_profile *prof, wzc_restore_kind kind,
			   long layer, long block, int nthreads, const char *out,
			   wzc_wzx_unpack_result *res, wz_diag *diag)
{
	if ((layer < 0) != (block < 0))
		return wz_diag_set(diag, WZ_ERR_USAGE, "a layer and a block go together");
	if (nthreads < 1)
		nthreads = 1;
	source src = { -1, 0, 0 };
	wzc_wzx_reader *r = NULL;
	wzc_wzx *x = NULL;
	wzc_wzx_restorer *pool = NULL;
	uint8_t *buf = NULL;
	wz_out_stream of = WZ_OUT_STREAM_NONE;
	size_t nout = 0;
	long first = 0, count = 0, ntok = 0;
	wz_err e = open_in(in, &src, &r, diag);
	if (!e)
		e = wzc_wzx_coder_for(r, prof, &x, diag);
	const wzc_wzx_info *info = r ? wzc_wzx_reader_info(r) : NULL;
	if (!e && layer >= 0) {
		if (layer >= info->L || block >= info->blocks_per_layer)
			e = wz_diag_set(diag, WZ_ERR_RANGE, "%s: no block %ld of layer %ld", in, block,
					layer);
		first = layer * info->blocks_per_layer + block;
		count = 1;
	} else if (!e) {
		count = info->nblocks;
	}
	size_t per = info ? wzc_wzx_restore_token_bytes(info, kind) : 0;
	long run = (long)nthreads * WZC_WZX_BLOCKS_PER_THREAD;
	if (!e && !(buf = malloc(per * WZC_WZX_BLOCK_TOKENS * (size_t)run)))
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (!e)
		e = wzc_wzx_restorer_new(r, x, kind, nthreads < count ? nthreads : (int)count, &pool,
					 diag);
	if (!e)
		e = wz_out_stream_open_or_stdout(&of, out, diag);
	/* the range's layers planned at once, on every thread */
	if (!e)
		e = wzc_wzx_build_layers(x, (int)(first / info->blocks_per_layer),
					 (int)((first + count - 1) / info->blocks_per_layer -
					       first / info->blocks_per_layer + 1),
					 nthreads, diag);
	for (long b0 = first; !e && b0 < first + count; b0 += run) {
		long nb = first + count - b0 < run ? first + count - b0 : run;
		/* the run's blocks read by the threads that restore them */
		e = wzc_wzx_reader_place(r, b0, nb, diag);
		if (!e)
			e = read_failure(in, &src, wzc_wzx_restorer_fill_run(pool, b0, nb, buf, diag), diag);
		long tok = run_tokens(info, b0, nb);
		if (!e)
			e = wz_out_stream_write(&of, buf, per * (size_t)tok, diag);
		nout += per * (size_t)tok;
		ntok += tok;
	}
	wz_err ce = wz_out_stream_close(&of, !e, diag);
	e = e ? e : ce;
	if (!e && res) {
		res->layers = layer >= 0 ? 1 : info->L;
		res->tokens = ntok;
		res->bytes = nout;
	}
	free(buf);
	wzc_wzx_restorer_free(pool);
	wzc_wzx_free(x);
	wzc_wzx_reader_free(r);
	if (src.fd >= 0)
		close(src.fd);
	return e;
}

wz_err wzc_wzx_unpack_path(const char *in, const char *profile_path, wzc_restore_kind kind,
			   long layer, long block, int nthreads, const char *out,
			   wzc_wzx_unpack_result *res, wz_diag *diag)
{
	if ((layer < 0) != (block < 0))
		return wz_diag_set(diag, WZ_ERR_USAGE, "a layer and a block go together");
	if (layer > 4095)
		return wz_diag_set(diag, WZ_ERR_RANGE, "%s: no layer %ld", in, layer);
	unsigned char want[4096] = { 0 };
	wzc_profile *prof;
	if (layer >= 0)
		want[layer] = 1;
	wz_err e = wzc_profile_read_layers(profile_path, layer >= 0 ? want : NULL, (int)layer + 1, &prof,
					   diag);
	if (e)
		return e;
	e = wzc_wzx_unpack_file(in, prof, kind, layer, block, nthreads, out, res, diag);
	wzc_profile_free(prof);
	return e;
}
