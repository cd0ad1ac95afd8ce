/* Restoring runs of wzx blocks on many threads: blocks are independent, so
 * each thread restores its own contiguous share of a run and writes each
 * block to its own place in the output; the output, and the error
 * reported (always the lowest damaged block's), are the same for any
 * number of threads.  A restorer keeps its threads and their scratch
 * from run to run, so a streaming restore (a run of a few blocks per
 * thread at a time) pays for them once, not per run. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "codec/formats/fpconv.h"
#include "codec/profile/profile.h"
#include "codec/profile/rope.h"
#include "codec/wz/wz_gemm.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_internal.h"

/* Blocks a thread takes at once (transformed domain, records): the most
 * the type 3 decoder decodes together. */
#define WZC_WZX_RESTORE_RUN WZC_LANES12_GROUP_MAX

typedef struct {
	const wzc_wzx_reader *r;
	const wzc_wzx *x;
	wzc_restore_kind kind;
	long first, count;
	int fill;                /* each thread reads its share's blocks first */
	uint8_t *out;
	wzc_first_fail fail;     /* the lowest damaged block */
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
	uint8_t *rec;  /* [64][B] a block's records (the bf16 reference only) */
	float *lat, *rope;
	float *rows;  /* [WZC_WZX_RESTORE_RUN * 64][R + P] transformed (bf16 only) */
	float *cache; /* [64][R + P] a block's cache values (bf16 only) */
} scratch;

/* Block i to bf16 the reference's way (WZC_RESTORE_BF16_RECORDS): its
 * records, then wzc_decode_layer.  Every other kind goes by runs of
 * blocks (group_blocks). */
static wz_err reference_block(const job *j, long i, scratch *s, wz_diag *diag)
{
	const wzc_wzx_info *in = wzc_wzx_reader_info(j->r);
	int layer = (int)(i / in->blocks_per_layer), block = (int)(i % in->blocks_per_layer), n;
	size_t per = wzc_wzx_restore_token_bytes(in, j->kind);
	uint8_t *dst = j->out + (tokens_before(in, i) - tokens_before(in, j->first)) * per;
	int R = in->R, P = in->P;
	wz_err e = wzc_wzx_read_block(j->r, j->x, layer, block, s->rec, &n, diag);
	if (e)
		return e;
	int64_t pos[WZC_WZX_BLOCK_TOKENS]; /* token t of a container is at position t */
	for (int t = 0; t < n; t++)
		pos[t] = (int64_t)block * WZC_WZX_BLOCK_TOKENS + t;
	e = wzc_decode_layer_at(wzc_wzx_codec(j->x), layer, n, s->rec, pos, s->lat, s->rope);
	if (e)
		return wz_diag_set(diag, e, "%s: layer %d: out of memory decoding block %d",
				   in->model, layer, block);
	for (int t = 0; t < n; t++) {
		uint16_t *o = (uint16_t *)(void *)dst + (size_t)t * (R + P);
		for (int k = 0; k < R; k++)
			o[k] = wzc_bf16_from_f32(s->lat[(size_t)t * R + k]);
		for (int k = 0; k < P; k++)
			o[R + k] = wzc_bf16_from_f32(s->rope[(size_t)t * P + k]);
	}
	return WZ_OK;
}

/* n tokens of a layer from the transformed domain (rows of R + P, latent
 * first) to bf16: the inverse transform of all n at once per part, by the
 * same fused chains as wzc_decode_layer's (wzc_gemm), so the same floats
 * as the per-block reference; the anchor flags' offsets are already in
 * the rows.  Where the profile undoes RoPE, each token's position part is
 * turned forward at its position (first + t) as wzc_decode_layer_at does. */
static void rows_to_bf16(const wzc_wzx *x, int layer, int n, int64_t first, const float *rows,
			 float *cache, uint16_t *out)
{
	const double *freq = wzc_codec_rope_freq(wzc_wzx_codec(x), layer);
	int R = x->R, P = x->P;
	size_t w = (size_t)(R + P);
	const wzc_part_profile *parts[2] = { &x->profile->latent[layer], &x->profile->rope[layer] };
	for (int p = 0; p < 2; p++) {
		int m = parts[p]->n, at = p ? R : 0;
		if (m)
			wzc_gemm(n, m, m, parts[p]->basis, (size_t)m, rows + at, w, 1, cache + at, w);
	}
	for (int t = 0; t < n; t++) {
		float *c = cache + (size_t)t * w;
		uint16_t *o = out + (size_t)t * w;
		for (int k = 0; k < R; k++)
			o[k] = wzc_bf16_from_f32(c[k] + parts[0]->mean[k]);
		for (int k = 0; k < P; k++)
			c[R + k] += parts[1]->mean[k];
		if (freq)
			wzc_rope_turn(c + R, P, first + t, freq, 1);
		for (int k = 0; k < P; k++)
			o[R + k] = wzc_bf16_from_f32(c[R + k]);
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
			rows_to_bf16(j->x, layer, n, (int64_t)block * WZC_WZX_BLOCK_TOKENS + t,
				     s->rows + (size_t)t * (in->R + in->P), s->cache,
				     (uint16_t *)(void *)dst + (size_t)t * (in->R + in->P));
		}
	}
	return done;
}

static wz_err scratch_new(const wzc_wzx_info *in, wzc_restore_kind kind, scratch *s)
{
	size_t w = (size_t)(in->R + in->P);
	memset(s, 0, sizeof *s);
	if (kind == WZC_RESTORE_BF16_RECORDS) {
		s->rec = malloc(in->record_bytes * WZC_WZX_BLOCK_TOKENS);
		s->lat = malloc(sizeof(float) * WZC_WZX_BLOCK_TOKENS * (size_t)in->R);
		s->rope = malloc(sizeof(float) * (WZC_WZX_BLOCK_TOKENS * (size_t)in->P + 1));
		if (!s->rec || !s->lat || !s->rope)
			return WZ_ERR_NOMEM;
	}
	if (kind == WZC_RESTORE_BF16) {
		s->rows = malloc(sizeof(float) * WZC_WZX_RESTORE_RUN * WZC_WZX_BLOCK_TOKENS * w);
		s->cache = malloc(sizeof(float) * WZC_WZX_BLOCK_TOKENS * w);
		if (!s->rows || !s->cache)
			return WZ_ERR_NOMEM;
	}
	return WZ_OK;
}

static void scratch_free(scratch *s)
{
	free(s->rec);
	free(s->lat);
	free(s->rope);
	free(s->rows);
	free(s->cache);
}

/* Thread t of n restores its own share of the job: a contiguous range of
 * runs of blocks (as many as the decoder takes at once, so their latencies
 * overlap; one for the bf16 reference).  Shares, not runs taken from a
 * shared counter: a streaming restore reuses its output buffer run after
 * run, and a thread that writes the same part of it each time finds those
 * lines in its own cache (docs/restore.md, "The streaming restore over
 * threads", has the figures). */
static void restore_blocks(job *j, scratch *s, int t, int n)
{
	const wzc_wzx_info *in = wzc_wzx_reader_info(j->r);
	int run = j->kind == WZC_RESTORE_BF16_RECORDS ? 1 : WZC_WZX_RESTORE_RUN;
	long nruns = (j->count + run - 1) / run;
	long r0 = nruns * t / n, r1 = nruns * (t + 1) / n;
	if (j->fill && r1 > r0) {
		/* the share's blocks read here, so that they are read on every
		 * thread at once and land in the cache of the thread that decodes
		 * them */
		long k0 = r0 * run, k1 = r1 * run < j->count ? r1 * run : j->count;
		wz_diag d;
		wz_err e = wzc_wzx_reader_fill(j->r, j->first + k0, k1 - k0, &d);
		if (e) {
			wzc_first_fail_note(&j->fail, k0, e, &d);
			return;
		}
	}
	for (long ri = r0; ri < r1; ri++) {
		long k0 = ri * run;
		/* past a block already found damaged: what comes after the
		 * lowest damaged block does not matter */
		if (k0 > wzc_first_fail_at(&j->fail))
			break;
		long end = k0 + run < j->count ? k0 + run : j->count;
		for (long k = k0; k < end;) {
			wz_diag d;
			wz_err e;
			if (run > 1) {
				/* within one layer */
				long i = j->first + k, left = in->blocks_per_layer - i % in->blocks_per_layer;
				int m = (int)(end - k < left ? end - k : left);
				k += group_blocks(j, k, m, s, &e, &d);
				if (e) {
					wzc_first_fail_note(&j->fail, k, e, &d);
					return;
				}
			} else {
				if ((e = reference_block(j, j->first + k, s, &d))) {
					wzc_first_fail_note(&j->fail, k, e, &d);
					return;
				}
				k++;
			}
		}
	}
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

typedef enum { TASK_NONE, TASK_BLOCKS, TASK_QUIT } task; /* NONE: before the first */

struct wzc_wzx_restorer {
	const wzc_wzx_reader *r;
	const wzc_wzx *x;
	wzc_restore_kind kind;
	int nthreads, started;   /* threads asked for; workers running besides the caller */
	pthread_t *tid;
	scratch *sc;             /* [nthreads]: the caller's is sc[0] */
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	unsigned long gen;       /* bumped for each task the workers take */
	int busy;                /* workers still on the current task */
	task what;
	job *j;                  /* TASK_BLOCKS */
};

typedef struct {
	wzc_wzx_restorer *p;
	int t;
} worker_arg;

static void do_task(wzc_wzx_restorer *p, task what, int t)
{
	if (what == TASK_BLOCKS)
		restore_blocks(p->j, &p->sc[t], t, p->started + 1);
}

/* Waiting a little by spinning before sleeping: between runs the caller
 * writes the last run's output and places the next (a fraction of a
 * millisecond), and a worker that slept meanwhile starts the next run
 * late while the others, done with their shares, wait for it.  WZ_SPIN
 * rounds of a pause are about a millisecond at most.  Measured on a 2-core
 * machine (codec unpack --to transformed --out - of 61 layers x 16,384
 * tokens on 2 threads, medians of 5 alternated): 0.77 s with the spin,
 * 1.10 s without it. */
#define WZ_SPIN 20000

static void spin_while_gen(wzc_wzx_restorer *p, unsigned long seen)
{
	for (int i = 0; i < WZ_SPIN && __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE) == seen; i++)
		cpu_relax();
}

static void spin_while_busy(wzc_wzx_restorer *p)
{
	for (int i = 0; i < WZ_SPIN && __atomic_load_n(&p->busy, __ATOMIC_ACQUIRE) > 0; i++)
		cpu_relax();
}

/* A worker waits for a task, does its share, and says so. */
static void *worker(void *arg)
{
	worker_arg *a = arg;
	wzc_wzx_restorer *p = a->p;
	unsigned long seen = 0;
	for (;;) {
		spin_while_gen(p, seen);
		pthread_mutex_lock(&p->mu);
		while (p->gen == seen)
			pthread_cond_wait(&p->go, &p->mu);
		seen = p->gen;
		task what = p->what;
		pthread_mutex_unlock(&p->mu);
		if (what == TASK_QUIT)
			break;
		do_task(p, what, a->t);
		pthread_mutex_lock(&p->mu);
		if (__atomic_sub_fetch(&p->busy, 1, __ATOMIC_RELEASE) == 0)
			pthread_cond_signal(&p->done);
		pthread_mutex_unlock(&p->mu);
	}
	free(a);
	return NULL;
}

/* The task on every thread, this one among them; back when all are done. */
static void run_task(wzc_wzx_restorer *p, task what)
{
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->what = what;
		p->busy = p->started;
		__atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&p->go);
		pthread_mutex_unlock(&p->mu);
	}
	if (what != TASK_QUIT)
		do_task(p, what, 0);
	if (p->started && what != TASK_QUIT) {
		spin_while_busy(p);
		pthread_mutex_lock(&p->mu);
		while (p->busy > 0)
			pthread_cond_wait(&p->done, &p->mu);
		pthread_mutex_unlock(&p->mu);
	}
}

wz_err wzc_wzx_restorer_new(const wzc_wzx_reader *r, const wzc_wzx *x, wzc_restore_kind kind,
			    int nthreads, wzc_wzx_restorer **out, wz_diag *diag)
{
	*out = NULL;
	if (kind < WZC_RESTORE_RECORDS || kind > WZC_RESTORE_BF16_RECORDS)
		return wz_diag_set(diag, WZ_ERR_USAGE, "no such restore kind");
	if (nthreads < 1)
		nthreads = 1;
	wzc_wzx_restorer *p = calloc(1, sizeof *p);
	if (!p)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	p->r = r;
	p->x = x;
	p->kind = kind;
	p->nthreads = nthreads;
	p->tid = calloc((size_t)nthreads, sizeof *p->tid);
	p->sc = calloc((size_t)nthreads, sizeof *p->sc);
	if (!p->tid || !p->sc || pthread_mutex_init(&p->mu, NULL)) {
		free(p->tid);
		free(p->sc);
		free(p);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	const wzc_wzx_info *in = wzc_wzx_reader_info(r);
	if (scratch_new(in, kind, &p->sc[0])) {
		wzc_wzx_restorer_free(p);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	/* fewer threads than asked (no memory for one's scratch, or no
	 * thread) is only slower */
	for (int t = 1; t < nthreads; t++) {
		worker_arg *a = malloc(sizeof *a);
		if (!a || scratch_new(in, kind, &p->sc[t])) {
			free(a);
			break;
		}
		a->p = p;
		a->t = t;
		if (pthread_create(&p->tid[t], NULL, worker, a)) {
			free(a);
			break;
		}
		p->started = t;
	}
	*out = p;
	return WZ_OK;
}

static wz_err run_job(wzc_wzx_restorer *p, long first, long count, int fill, void *out,
		      wz_diag *diag)
{
	const wzc_wzx_info *in = wzc_wzx_reader_info(p->r);
	if (first < 0 || count < 0 || first + count > in->nblocks)
		return wz_diag_set(diag, WZ_ERR_RANGE, "blocks %ld..%ld of %d", first, first + count - 1,
				   in->nblocks);
	if (count == 0)
		return WZ_OK;
	job j = { .r = p->r, .x = p->x, .kind = p->kind, .first = first, .count = count, .out = out,
		  .fill = fill };
	if (wzc_first_fail_init(&j.fail, count))
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	p->j = &j;
	run_task(p, TASK_BLOCKS);
	p->j = NULL;
	return wzc_first_fail_done(&j.fail, count, diag);
}

wz_err wzc_wzx_restorer_run(wzc_wzx_restorer *p, long first, long count, void *out, wz_diag *diag)
{
	return run_job(p, first, count, 0, out, diag);
}

wz_err wzc_wzx_restorer_fill_run(wzc_wzx_restorer *p, long first, long count, void *out,
				 wz_diag *diag)
{
	return run_job(p, first, count, 1, out, diag);
}

void wzc_wzx_restorer_free(wzc_wzx_restorer *p)
{
	if (!p)
		return;
	run_task(p, TASK_QUIT);
	for (int t = 1; t <= p->started; t++)
		pthread_join(p->tid[t], NULL);
	for (int t = 0; t < p->nthreads; t++)
		scratch_free(&p->sc[t]);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->mu);
	free(p->tid);
	free(p->sc);
	free(p);
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
	if (nthreads > count)
		nthreads = (int)count;
	wzc_wzx_restorer *p;
	wz_err e = wzc_wzx_restorer_new(r, x, kind, nthreads, &p, diag);
	if (e)
		return e;
	e = wzc_wzx_restorer_run(p, first, count, out, diag);
	wzc_wzx_restorer_free(p);
	return e;
}
