/* Restoring runs of wzx blocks on many threads: blocks are independent, so
 * threads take them in turn from a shared counter and write each to its
 * own place in the output; the output, and the error reported (always the
 * lowest damaged block's), are the same for any number of threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/fpconv.h"
#include "codec/wzx.h"
#include "codec/wzx_fast.h"

/* Blocks a thread takes at once (transformed domain, records): the most
 * the type 3 decoder decodes together. */
#define WZC_WZX_RESTORE_RUN WZC_LANES12_GROUP_MAX

typedef struct {
	const wzc_wzx_reader *r;
	const wzc_wzx *x;
	wzc_restore_kind kind;
	long first, count, next; /* next: atomic */
	uint8_t *out;
	long fail;               /* lowest failing block so far (atomic), count if none */
	wz_err fail_err;         /* its error and message */
	wz_diag fail_diag;
	pthread_mutex_t lock;
} job;

size_t wzc_wzx_restore_token_bytes(const wzc_wzx_info *in, wzc_restore_kind kind)
{
	switch (kind) {
	case WZC_RESTORE_RECORDS: return in->record_bytes;
	case WZC_RESTORE_TRANSFORMED: return sizeof(float) * (size_t)(in->R + in->P);
	case WZC_RESTORE_BF16: return sizeof(uint16_t) * (size_t)(in->R + in->P);
	}
	return 0;
}

/* Tokens before block i, counted over the whole container (layer-major). */
static size_t tokens_before(const wzc_wzx_info *in, long i)
{
	long l = i / in->blocks_per_layer, b = i % in->blocks_per_layer;
	return (size_t)l * in->T + (size_t)b * WZC_WZX_BLOCK_TOKENS;
}

typedef struct {
	uint8_t *rec;
	float *lat, *rope;
} scratch;

static wz_err one_block(const job *j, long i, scratch *s, wz_diag *diag)
{
	const wzc_wzx_info *in = wzc_wzx_reader_info(j->r);
	int layer = (int)(i / in->blocks_per_layer), block = (int)(i % in->blocks_per_layer), n;
	size_t per = wzc_wzx_restore_token_bytes(in, j->kind);
	uint8_t *dst = j->out + (tokens_before(in, i) - tokens_before(in, j->first)) * per;
	int R = in->R, P = in->P;
	wz_err e;
	switch (j->kind) {
	case WZC_RESTORE_RECORDS:
		return wzc_wzx_read_block(j->r, j->x, layer, block, dst, &n, diag);
	case WZC_RESTORE_TRANSFORMED:
		e = wzc_wzx_read_block_transformed(j->r, j->x, layer, block, s->lat, s->rope, &n, diag);
		for (int t = 0; !e && t < n; t++) {
			float *o = (float *)(void *)dst + (size_t)t * (R + P);
			memcpy(o, s->lat + (size_t)t * R, sizeof(float) * R);
			memcpy(o + R, s->rope + (size_t)t * P, sizeof(float) * P);
		}
		return e;
	case WZC_RESTORE_BF16:
		e = wzc_wzx_read_block(j->r, j->x, layer, block, s->rec, &n, diag);
		if (e)
			return e;
		wzc_decode_layer(wzc_wzx_codec(j->x), layer, n, s->rec, s->lat, s->rope);
		for (int t = 0; t < n; t++) {
			uint16_t *o = (uint16_t *)(void *)dst + (size_t)t * (R + P);
			for (int k = 0; k < R; k++)
				o[k] = wzc_bf16_from_f32(s->lat[(size_t)t * R + k]);
			for (int k = 0; k < P; k++)
				o[R + k] = wzc_bf16_from_f32(s->rope[(size_t)t * P + k]);
		}
		return WZ_OK;
	}
	return wz_diag_set(diag, WZ_ERR_USAGE, "no such restore kind");
}

/* Blocks k .. k + m - 1 of the job (one layer) into the transformed domain
 * or records together; the number done, and the error of the first one
 * not done. */
static int group_blocks(const job *j, long k, int m, wz_err *e, wz_diag *diag)
{
	const wzc_wzx_info *in = wzc_wzx_reader_info(j->r);
	long i = j->first + k;
	size_t per = wzc_wzx_restore_token_bytes(in, j->kind);
	uint8_t *dst = j->out + (tokens_before(in, i) - tokens_before(in, j->first)) * per;
	int done = 0, layer = (int)(i / in->blocks_per_layer), block = (int)(i % in->blocks_per_layer);
	*e = j->kind == WZC_RESTORE_RECORDS
		     ? wzc_wzx_read_blocks_records(j->r, j->x, layer, block, m, dst, &done, diag)
		     : wzc_wzx_read_blocks_rows(j->r, j->x, layer, block, m, (float *)(void *)dst, &done,
						diag);
	return done;
}

static void note_failure(job *j, long k, wz_err e, const wz_diag *d)
{
	pthread_mutex_lock(&j->lock);
	if (k < j->fail) {
		j->fail_err = e;
		j->fail_diag = *d;
		__atomic_store_n(&j->fail, k, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&j->lock);
}

/* Threads take runs of blocks (for the transformed domain and records, as
 * many as the decoder takes at once, so their latencies overlap; one for
 * bf16). */
static void *worker(void *arg)
{
	job *j = arg;
	const wzc_wzx_info *in = wzc_wzx_reader_info(j->r);
	int run = j->kind == WZC_RESTORE_BF16 ? 1 : WZC_WZX_RESTORE_RUN;
	scratch s = { malloc(in->record_bytes * WZC_WZX_BLOCK_TOKENS),
		      malloc(sizeof(float) * WZC_WZX_BLOCK_TOKENS * (size_t)in->R),
		      malloc(sizeof(float) * (WZC_WZX_BLOCK_TOKENS * (size_t)in->P + 1)) };
	for (;;) {
		long k0 = __atomic_fetch_add(&j->next, run, __ATOMIC_RELAXED);
		/* past the range, or past a block already found damaged: what
		 * comes after the lowest damaged block does not matter */
		if (k0 >= j->count || k0 > __atomic_load_n(&j->fail, __ATOMIC_RELAXED))
			break;
		long end = k0 + run < j->count ? k0 + run : j->count;
		for (long k = k0; k < end;) {
			wz_diag d;
			wz_err e;
			if (!s.rec || !s.lat || !s.rope) {
				note_failure(j, k, wz_diag_set(&d, WZ_ERR_NOMEM, "out of memory"), &d);
				break;
			}
			if (run > 1) {
				/* within one layer */
				long i = j->first + k, left = in->blocks_per_layer - i % in->blocks_per_layer;
				int m = (int)(end - k < left ? end - k : left);
				k += group_blocks(j, k, m, &e, &d);
				if (e) {
					note_failure(j, k, e, &d);
					break;
				}
			} else {
				if ((e = one_block(j, j->first + k, &s, &d))) {
					note_failure(j, k, e, &d);
					break;
				}
				k++;
			}
		}
	}
	free(s.rec);
	free(s.lat);
	free(s.rope);
	return NULL;
}

wz_err wzc_wzx_restore(const wzc_wzx_reader *r, const wzc_wzx *x, wzc_restore_kind kind,
		       long first, long count, int nthreads, void *out, wz_diag *diag)
{
	const wzc_wzx_info *in = wzc_wzx_reader_info(r);
	if (first < 0 || count < 0 || first + count > in->nblocks)
		return wz_diag_set(diag, WZ_ERR_RANGE, "blocks %ld..%ld of %d", first, first + count - 1,
				   in->nblocks);
	if (count == 0)
		return WZ_OK;
	job j = { .r = r, .x = x, .kind = kind, .first = first, .count = count, .out = out,
		  .fail = count };
	if (pthread_mutex_init(&j.lock, NULL))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > count)
		nthreads = (int)count;
	pthread_t *tid = malloc(sizeof *tid * (size_t)nthreads);
	int started = 0;
	for (int t = 1; tid && t < nthreads; t++)
		if (!pthread_create(&tid[t], NULL, worker, &j))
			started = t;
		else
			break;
	worker(&j); /* this thread works too; fewer threads than asked is only slower */
	for (int t = 1; t <= started; t++)
		pthread_join(tid[t], NULL);
	free(tid);
	wz_err e = WZ_OK;
	if (j.fail < count) {
		e = j.fail_err;
		if (diag)
			*diag = j.fail_diag;
	}
	pthread_mutex_destroy(&j.lock);
	return e;
}
