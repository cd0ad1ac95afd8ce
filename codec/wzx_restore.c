/* Restoring runs of wzx blocks on many threads: blocks are independent, so
 * threads take them in turn from a shared counter and write each to its
 * own place in the output; the output, and the error reported (always the
 * lowest damaged block's), are the same for any number of threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/fpconv.h"
#include "codec/profile.h"
#include "codec/wz_gemm.h"
#include "codec/wzx.h"
#include "codec/wzx_fast.h"
#include "codec/wzx_internal.h"

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
	case WZC_RESTORE_BF16:
	case WZC_RESTORE_BF16_RECORDS: return sizeof(uint16_t) * (size_t)(in->R + in->P);
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
	float *rows;  /* [WZC_WZX_RESTORE_RUN * 64][R + P] transformed (bf16 only) */
	float *cache; /* [64][R + P] a block's cache values (bf16 only) */
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
	case WZC_RESTORE_BF16_RECORDS:
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

/* n tokens of a layer from the transformed domain (rows of R + P, latent
 * first) to bf16: the inverse transform of all n at once per part, by the
 * same fused chains as wzc_decode_layer's (wzc_gemm), so the same floats
 * as the per-block reference; the anchor flags' offsets are already in
 * the rows. */
static void rows_to_bf16(const wzc_wzx *x, int layer, int n, const float *rows, float *cache,
			 uint16_t *out)
{
	int R = x->R, P = x->P;
	size_t w = (size_t)(R + P);
	const wzc_part_profile *parts[2] = { &x->profile->latent[layer], &x->profile->rope[layer] };
	for (int p = 0; p < 2; p++) {
		int m = parts[p]->n, at = p ? R : 0;
		if (m)
			wzc_gemm(n, m, m, parts[p]->basis, (size_t)m, rows + at, w, 1, cache + at, w);
	}
	for (int t = 0; t < n; t++) {
		const float *c = cache + (size_t)t * w;
		uint16_t *o = out + (size_t)t * w;
		for (int k = 0; k < R; k++)
			o[k] = wzc_bf16_from_f32(c[k] + parts[0]->mean[k]);
		for (int k = 0; k < P; k++)
			o[R + k] = wzc_bf16_from_f32(c[R + k] + parts[1]->mean[k]);
	}
}

/* Blocks k .. k + m - 1 of the job (one layer) into the transformed domain,
 * records or bf16 together; the number done, and the error of the first
 * one not done. */
static int group_blocks(const job *j, long k, int m, scratch *s, wz_err *e, wz_diag *diag)
{
	const wzc_wzx_info *in = wzc_wzx_reader_info(j->r);
	long i = j->first + k;
	size_t per = wzc_wzx_restore_token_bytes(in, j->kind);
	uint8_t *dst = j->out + (tokens_before(in, i) - tokens_before(in, j->first)) * per;
	int done = 0, layer = (int)(i / in->blocks_per_layer), block = (int)(i % in->blocks_per_layer);
	if (j->kind == WZC_RESTORE_RECORDS)
		*e = wzc_wzx_read_blocks_records(j->r, j->x, layer, block, m, dst, &done, diag);
	else if (j->kind == WZC_RESTORE_TRANSFORMED)
		*e = wzc_wzx_read_blocks_rows(j->r, j->x, layer, block, m, (float *)(void *)dst, &done,
					      diag);
	else {
		*e = wzc_wzx_read_blocks_rows(j->r, j->x, layer, block, m, s->rows, &done, diag);
		/* the blocks done hold 64 tokens each but the layer's last */
		int ntok = 0;
		for (int b = 0; b < done; b++)
			ntok += in->T - (block + b) * WZC_WZX_BLOCK_TOKENS < WZC_WZX_BLOCK_TOKENS
					? in->T - (block + b) * WZC_WZX_BLOCK_TOKENS
					: WZC_WZX_BLOCK_TOKENS;
		for (int t = 0; t < ntok; t += WZC_WZX_BLOCK_TOKENS) {
			int n = ntok - t < WZC_WZX_BLOCK_TOKENS ? ntok - t : WZC_WZX_BLOCK_TOKENS;
			rows_to_bf16(j->x, layer, n, s->rows + (size_t)t * (in->R + in->P), s->cache,
				     (uint16_t *)(void *)dst + (size_t)t * (in->R + in->P));
		}
	}
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

/* Threads take runs of blocks (as many as the decoder takes at once, so
 * their latencies overlap; one for the bf16 reference). */
static void *worker(void *arg)
{
	job *j = arg;
	const wzc_wzx_info *in = wzc_wzx_reader_info(j->r);
	int run = j->kind == WZC_RESTORE_BF16_RECORDS ? 1 : WZC_WZX_RESTORE_RUN;
	size_t w = (size_t)(in->R + in->P);
	scratch s = { malloc(in->record_bytes * WZC_WZX_BLOCK_TOKENS),
		      malloc(sizeof(float) * WZC_WZX_BLOCK_TOKENS * (size_t)in->R),
		      malloc(sizeof(float) * (WZC_WZX_BLOCK_TOKENS * (size_t)in->P + 1)), NULL, NULL };
	if (j->kind == WZC_RESTORE_BF16) {
		s.rows = malloc(sizeof(float) * WZC_WZX_RESTORE_RUN * WZC_WZX_BLOCK_TOKENS * w);
		s.cache = malloc(sizeof(float) * WZC_WZX_BLOCK_TOKENS * w);
	}
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
			if (!s.rec || !s.lat || !s.rope ||
			    (j->kind == WZC_RESTORE_BF16 && (!s.rows || !s.cache))) {
				note_failure(j, k, wz_diag_set(&d, WZ_ERR_NOMEM, "out of memory"), &d);
				break;
			}
			if (run > 1) {
				/* within one layer */
				long i = j->first + k, left = in->blocks_per_layer - i % in->blocks_per_layer;
				int m = (int)(end - k < left ? end - k : left);
				k += group_blocks(j, k, m, &s, &e, &d);
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
	free(s.rows);
	free(s.cache);
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
