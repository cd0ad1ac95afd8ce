/* Packing a session into a wzx container as it goes: the header first, then
 * runs of blocks, each run's blocks wz-encoded and entropy-coded on many
 * threads (each block into its own slot) and handed to the sink in block
 * order, then the index and footer.  A block's bytes depend only on its
 * tokens, so the container is the same for any number of threads, and the
 * same as wzc_wzx_write's; memory is a run of blocks and the index. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_internal.h"

struct wzc_wzx_writer {
	const wzc_wzx *x;
	wzc_codec *codec;
	int T, nb;               /* tokens, blocks per layer */
	long nblocks, next;      /* blocks in all, the next to write */
	wzc_wzx_sink sink;
	void *sink_ctx;
	uint8_t *index;          /* [nblocks][16] */
	size_t at;               /* bytes written so far */
	wzc_wzx_stats st;
	wz_err failed;           /* a sink error stops the writer */
};

wz_err wzc_wzx_writer_new(const wzc_wzx *x, wzc_codec *codec, int T, wzc_wzx_sink sink,
			  void *sink_ctx, wzc_wzx_writer **out, wz_diag *diag)
{
	*out = NULL;
	int L = wzc_wzx_layers(x);
	if (!wzc_wzx_bound(L, T, wzc_wzx_R(x), wzc_wzx_P(x), wzc_wzx_record_bytes(x),
			   strlen(wzc_wzx_model(x))))
		return wz_diag_set(diag, WZ_ERR_RANGE, "wzx: %d layers x %d tokens is out of range", L, T);
	if (wzc_codec_record_bytes(codec) != wzc_wzx_record_bytes(x))
		return wz_diag_set(diag, WZ_ERR_USAGE, "wzx: a codec of another grid");
	wzc_wzx_writer *w = calloc(1, sizeof *w);
	if (!w)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	w->x = x;
	w->codec = codec;
	w->T = T;
	w->nb = (T + WZC_WZX_BLOCK_TOKENS - 1) / WZC_WZX_BLOCK_TOKENS;
	w->nblocks = (long)L * w->nb;
	w->sink = sink;
	w->sink_ctx = sink_ctx;
	uint8_t head[WZC_WZX_HEADER_FIXED + WZC_MODEL_MAX + 16];
	w->index = malloc((size_t)w->nblocks * WZC_WZX_INDEX_ENTRY);
	if (!w->index) {
		free(w);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	size_t H = wzc_wzx_header(x, T, head);
	wz_err e = sink(sink_ctx, head, H, diag);
	if (e) {
		wzc_wzx_writer_free(w);
		return e;
	}
	w->at = w->st.header = H;
	w->st.nblocks = (int)w->nblocks;
	*out = w;
	return WZ_OK;
}

void wzc_wzx_writer_free(wzc_wzx_writer *w)
{
	if (!w)
		return;
	free(w->index);
	free(w);
}

long wzc_wzx_writer_blocks(const wzc_wzx_writer *w)
{
	return w->nblocks;
}

typedef struct {
	wzc_wzx_writer *w;
	wzc_wzx_source src;
	void *src_ctx;
	long first, count, next; /* next: atomic */
	uint8_t **slot;          /* [count] the framed blocks */
	size_t *size;
	int *type;
	wzc_first_fail fail;     /* the run's lowest failing block */
} run_job;

static wz_err pack_one(run_job *j, long k, float *lat, float *rope, uint8_t *rec, wz_diag *diag)
{
	wzc_wzx_writer *w = j->w;
	long i = j->first + k;
	int layer = (int)(i / w->nb), t0 = (int)(i % w->nb) * WZC_WZX_BLOCK_TOKENS;
	int n = w->T - t0 < WZC_WZX_BLOCK_TOKENS ? w->T - t0 : WZC_WZX_BLOCK_TOKENS;
	wz_err e = j->src(j->src_ctx, layer, t0, n, lat, rope, diag);
	/* token t of a container is at position t (docs/wzx-format.md) */
	int64_t pos[WZC_WZX_BLOCK_TOKENS];
	for (int t = 0; t < n; t++)
		pos[t] = t0 + t;
	if (!e)
		e = wzc_encode_layer_at(w->codec, layer, n, lat, rope, pos, rec, diag);
	if (!e)
		j->size[k] = wzc_wzx_frame_block(w->x, layer, t0, n, rec, j->slot[k], &j->type[k]);
	if (!e && j->type[k] < 0)
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "wzx: out of memory coding layer %d block %d", layer,
				t0 / WZC_WZX_BLOCK_TOKENS);
	return e;
}

static void *run_worker(void *arg)
{
	run_job *j = arg;
	const wzc_wzx *x = j->w->x;
	size_t B = wzc_wzx_record_bytes(x);
	float *lat = malloc(sizeof(float) * WZC_WZX_BLOCK_TOKENS * (size_t)wzc_wzx_R(x));
	float *rope = malloc(sizeof(float) * (WZC_WZX_BLOCK_TOKENS * (size_t)wzc_wzx_P(x) + 1));
	uint8_t *rec = malloc(B * WZC_WZX_BLOCK_TOKENS);
	for (;;) {
		long k = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (k >= j->count || k > wzc_first_fail_at(&j->fail))
			break;
		wz_diag d;
		wz_err e = !lat || !rope || !rec ? wz_diag_set(&d, WZ_ERR_NOMEM, "out of memory")
						 : pack_one(j, k, lat, rope, rec, &d);
		if (e)
			wzc_first_fail_note(&j->fail, k, e, &d);
	}
	free(lat);
	free(rope);
	free(rec);
	return NULL;
}

wz_err wzc_wzx_writer_put(wzc_wzx_writer *w, long count, int nthreads, wzc_wzx_source src,
			  void *src_ctx, wz_diag *diag)
{
	if (w->failed)
		return wz_diag_set(diag, WZ_ERR_USAGE, "wzx: the writer failed before");
	if (count < 0 || count > w->nblocks - w->next)
		return wz_diag_set(diag, WZ_ERR_RANGE, "wzx: %ld more blocks, %ld left", count,
				   w->nblocks - w->next);
	if (count == 0)
		return WZ_OK;
	size_t cap = WZC_WZX_BLOCK_OVERHEAD + WZC_WZX_BLOCK_TOKENS * wzc_wzx_record_bytes(w->x);
	run_job j = { .w = w, .src = src, .src_ctx = src_ctx, .first = w->next, .count = count };
	j.slot = calloc((size_t)count, sizeof *j.slot);
	j.size = calloc((size_t)count, sizeof *j.size);
	j.type = calloc((size_t)count, sizeof *j.type);
	uint8_t *arena = malloc(cap * (size_t)count);
	if (!j.slot || !j.size || !j.type || !arena || wzc_first_fail_init(&j.fail, count)) {
		free(j.slot);
		free(j.size);
		free(j.type);
		free(arena);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	for (long k = 0; k < count; k++)
		j.slot[k] = arena + cap * (size_t)k;
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > count)
		nthreads = (int)count;
	pthread_t *tid = malloc(sizeof *tid * (size_t)nthreads);
	int started = 0;
	for (int t = 1; tid && t < nthreads; t++)
		if (!pthread_create(&tid[t], NULL, run_worker, &j))
			started = t;
		else
			break;
	run_worker(&j); /* this thread works too; fewer threads than asked is only slower */
	for (int t = 1; t <= started; t++)
		pthread_join(tid[t], NULL);
	free(tid);
	wz_err e = wzc_first_fail_done(&j.fail, count, diag);
	/* in block order: the same bytes for any number of threads */
	for (long k = 0; !e && k < count; k++) {
		e = w->sink(w->sink_ctx, j.slot[k], j.size[k], diag);
		wzc_wzx_index_entry(w->index + (size_t)(w->next + k) * WZC_WZX_INDEX_ENTRY, w->at,
				    j.size[k]);
		w->at += j.size[k];
		w->st.payload += j.size[k] - WZC_WZX_BLOCK_OVERHEAD;
		w->st.nraw += j.type[k] == 0;
	}
	if (e)
		w->failed = e;
	else
		w->next += count;
	free(j.slot);
	free(j.size);
	free(j.type);
	free(arena);
	return e;
}

wz_err wzc_wzx_writer_finish(wzc_wzx_writer *w, wzc_wzx_stats *stats, wz_diag *diag)
{
	if (w->failed)
		return wz_diag_set(diag, WZ_ERR_USAGE, "wzx: the writer failed before");
	if (w->next != w->nblocks)
		return wz_diag_set(diag, WZ_ERR_USAGE, "wzx: %ld of %ld blocks written", w->next,
				   w->nblocks);
	size_t ni = (size_t)w->nblocks * WZC_WZX_INDEX_ENTRY;
	uint8_t foot[WZC_WZX_FOOTER];
	wzc_wzx_footer(foot, w->at, w->index, (size_t)w->nblocks);
	wz_err e = w->sink(w->sink_ctx, w->index, ni, diag);
	if (!e)
		e = w->sink(w->sink_ctx, foot, sizeof foot, diag);
	if (e) {
		w->failed = e;
		return e;
	}
	w->st.blocks = w->at - w->st.header;
	w->st.index = ni + WZC_WZX_FOOTER;
	w->st.total = w->at + ni + WZC_WZX_FOOTER;
	if (stats)
		*stats = w->st;
	return WZ_OK;
}
