/* A set of wzx type 5 or 6 blocks for the CUDA restore's tests (the CPU
 * emulation, tests/gpu/test_wzx_kernels_cpu.c, and the GPU test,
 * tests/gpu/test_wz_gpu.cu): one layer of a synthetic window coded at a
 * rate, its blocks of 64 tokens and a shorter last one, then copies of the
 * first blocks with a bit flipped or cut short; each block's verdict and
 * records as the CPU reference gives them (wzc_wzx_decode_lanes5_records_path,
 * wzc_wzx_decode_lanes6_records_path, _REF).  C and CUDA C++. */
#ifndef WZ_TEST_GPU_WZX_BLOCKS_H
#define WZ_TEST_GPU_WZX_BLOCKS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_rec5.h"
#include "codec/wzx/wzx_rec6.h"
#include "traces/synth_cache.h"
#ifdef __cplusplus
}
#endif

typedef struct {
	wzc_profile *prof;
	wzc_codec *codec;
	wzc_wzx *x;
	const wzx_rec5 *plan;
	const wzx_rec6 *plan6;   /* type 6's narrow tables; NULL for type 5 blocks */
	int type;
	size_t B;
	int nblk, ndamaged;
	uint8_t *pay;            /* payloads end to end */
	size_t *off, *size, *rec_off, bytes, rec_bytes;
	int *ntok, *want_verdict;
	uint8_t *want;           /* the reference's records (rec_off[b]); zeros where refused */
} wzx_blockset;

static inline void wzx_blockset_free(wzx_blockset *s)
{
	free(s->pay);
	free(s->off);
	free(s->size);
	free(s->rec_off);
	free(s->ntok);
	free(s->want_verdict);
	free(s->want);
	wzc_wzx_free(s->x);
	wzc_codec_free(s->codec);
	wzc_profile_free(s->prof);
	memset(s, 0, sizeof *s);
}

static inline wzt_cache_trace *wzx_blockset_synth(wzt_family fam, int T, uint64_t window_seed, const char *split)
{
	wzt_synth_params p;
	wzt_synth_params_default(&p);
	p.family = fam;
	p.seed = 7;
	p.L = 1;
	p.T = T;
	p.window_seed = window_seed;
	p.split = split;
	wzt_cache_trace *t = NULL;
	wz_diag d;
	if (wzt_synth_cache(&p, &t, &d)) {
		fprintf(stderr, "synth: %s\n", d.msg);
		return NULL;
	}
	return t;
}

/* T tokens of family fam at format `rate` (a wz or wzx name) as blocks of
 * `type` (5 or 6); 0, or -1 with a message on stderr. */
static inline int wzx_blockset_make(wzx_blockset *s, wzt_family fam, const char *rate, int T, int type)
{
	memset(s, 0, sizeof *s);
	s->type = type;
	wzt_cache_trace *cal = wzx_blockset_synth(fam, 1024, 100, "calibration");
	wzt_cache_trace *tr = wzx_blockset_synth(fam, T, 3, "test");
	wz_diag d;
	wzc_format fmt;
	int rc = -1;
	if (!cal || !tr)
		goto out;
	{
		wzc_window cw;
		memset(&cw, 0, sizeof cw);
		cw.L = 1, cw.T = cal->T, cw.R = cal->R, cw.P = cal->P, cw.latent = cal->latent,
		cw.rope = cal->rope, cw.positions = cal->positions, cw.split = "calibration";
		const wzc_window *cp = &cw;
		if (wzc_prepare(&cp, 1, NULL, &s->prof, &d) || wzc_format_parse(rate, &fmt, &d) ||
		    wzc_codec_new(&fmt, 1, tr->R, tr->P, s->prof, &s->codec, &d) ||
		    wzc_wzx_of_codec(s->codec, &s->x, &d)) {
			fprintf(stderr, "wzx blocks: %s\n", d.msg);
			goto out;
		}
	}
	s->B = wzc_codec_record_bytes(s->codec);
	s->plan = wzc_wzx_rec5_of(s->x, 0);
	s->plan6 = NULL;
	if (type == 6)
		s->plan6 = wzc_wzx_rec6_of(s->x, 0, &s->plan);
	if (!s->plan || (type == 6 && !s->plan6)) {
		fprintf(stderr, "wzx blocks: %s: no records plan for the layer\n", rate);
		goto out;
	}
	{
		int full = (T + 63) / 64;
		s->ndamaged = 2 * (full < 3 ? full : 3) * 8;
		s->nblk = full + s->ndamaged;
		size_t cap = (size_t)s->nblk * (64 * s->B * 2 + 512);
		uint8_t *rec = (uint8_t *)malloc((size_t)T * s->B);
		uint8_t *one = (uint8_t *)malloc(64 * s->B * 2 + 512);
		s->pay = (uint8_t *)malloc(cap);
		s->off = (size_t *)malloc(sizeof(size_t) * s->nblk);
		s->size = (size_t *)malloc(sizeof(size_t) * s->nblk);
		s->rec_off = (size_t *)malloc(sizeof(size_t) * s->nblk);
		s->ntok = (int *)malloc(sizeof(int) * s->nblk);
		s->want_verdict = (int *)malloc(sizeof(int) * s->nblk);
		s->want = (uint8_t *)calloc((size_t)s->nblk * 64, s->B);
		if (!rec || !one || !s->pay || !s->off || !s->size || !s->rec_off || !s->ntok || !s->want_verdict || !s->want) {
			free(rec);
			free(one);
			goto out;
		}
		wzc_encode_layer(s->codec, 0, T, tr->latent, tr->rope, rec, &d);
		uint64_t r = 0x9e3779b97f4a7c15ull;
		for (int b = 0; b < s->nblk; b++) {
			int src = b < full ? b : (b - full) / 16, t0 = 64 * src, n = T - t0 < 64 ? T - t0 : 64;
			size_t sz = (type == 6 ? wzc_wzx_encode_lanes6 : wzc_wzx_encode_lanes5)(
				s->x, 0, n, rec + (size_t)t0 * s->B, one, 64 * s->B * 2 + 512);
			if (!sz) {
				free(rec);
				free(one);
				fprintf(stderr, "wzx blocks: block %d does not code\n", b);
				goto out;
			}
			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			if (b >= full && (b - full) % 2 == 0) /* a bit flipped */
				one[r % sz] ^= (uint8_t)(1u << (r >> 32) % 8);
			else if (b >= full) /* cut short */
				sz = (size_t)(r % sz);
			s->off[b] = s->bytes;
			s->size[b] = sz;
			memcpy(s->pay + s->bytes, one, sz);
			s->bytes += sz;
			s->ntok[b] = n;
			s->rec_off[b] = (size_t)b * 64 * s->B;
			s->want_verdict[b] = (type == 6 ? wzc_wzx_decode_lanes6_records_path
							   : wzc_wzx_decode_lanes5_records_path)(s->x, 0, WZC_LANES4_REF, n, one,
												  sz, s->want + s->rec_off[b]);
			if (s->want_verdict[b])
				memset(s->want + s->rec_off[b], 0, (size_t)n * s->B);
		}
		s->rec_bytes = (size_t)s->nblk * 64 * s->B;
		free(rec);
		free(one);
	}
	rc = 0;
out:
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(tr);
	if (rc)
		wzx_blockset_free(s);
	return rc;
}

#endif
