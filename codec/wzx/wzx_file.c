/* The wzx container: writing header, blocks, index and footer, and opening
 * untrusted bytes with every field of the header, index and footer checked
 * (docs/wzx-format.md); its blocks are read in codec/wzx/wzx_read.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "codec/wzx/wzx.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_reader.h"

static const uint8_t MAGIC[8] = { 0x89, 'W', 'Z', 'X', '\r', '\n', 0x1a, '\n' };
static const uint8_t END_MAGIC[8] = { 0x89, 'W', 'Z', 'X', 'I', 'D', 'X', '\n' };

#define MAX_L 4096
#define MAX_R 8192
#define MAX_P 1024
#define MAX_T 0x7fffffffL

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t header_bytes(size_t model_len)
{
	return WZC_WZX_HEADER_FIXED + pad8(model_len) + 8;
}

size_t wzc_wzx_bound(int L, int T, int R, int P, size_t B, size_t model_len)
{
	if (L < 1 || L > MAX_L || T < 1 || R < 1 || R > MAX_R || P < 0 || P > MAX_P ||
	    model_len > WZC_MODEL_MAX || B < 1 || B > 2 * (size_t)(R + P))
		return 0;
	size_t nb = (size_t)L * (((size_t)T + WZC_WZX_BLOCK_TOKENS - 1) / WZC_WZX_BLOCK_TOKENS);
	/* At most 2^12 * 2^25 blocks and 2^31 * 2^12 * 2^14 bytes: fits 64 bits. */
	return header_bytes(model_len) + nb * (WZC_WZX_BLOCK_OVERHEAD + WZC_WZX_INDEX_ENTRY) +
	       (size_t)L * (size_t)T * B + WZC_WZX_FOOTER;
}

size_t wzc_wzx_header(const wzc_wzx *x, int T, uint8_t *dst)
{
	size_t mlen = strlen(wzc_wzx_model(x)), H = header_bytes(mlen);
	memset(dst, 0, H);
	memcpy(dst, MAGIC, 8);
	wzx_put32(dst + 8, WZC_WZX_VERSION);
	wzx_put32(dst + 16, (uint32_t)wzc_wzx_layers(x));
	wzx_put32(dst + 20, (uint32_t)wzc_wzx_R(x));
	wzx_put32(dst + 24, (uint32_t)wzc_wzx_P(x));
	wzx_put32(dst + 28, (uint32_t)T);
	wzx_put32(dst + 32, (uint32_t)wzc_wzx_record_bytes(x));
	wzx_put32(dst + 36, WZC_WZX_BLOCK_TOKENS);
	wzx_put64(dst + 40, wzc_wzx_profile_hash(x));
	wzx_put32(dst + 48, (uint32_t)mlen);
	memcpy(dst + WZC_WZX_HEADER_FIXED, wzc_wzx_model(x), mlen);
	wzx_put64(dst + H - 8, XXH3_64bits(dst, H - 8));
	return H;
}

size_t wzc_wzx_frame_block(const wzc_wzx *x, int layer, int t0, int n, const uint8_t *records,
			   uint8_t *blk, int *type)
{
	size_t size;
	*type = wzc_wzx_encode_block(x, layer, n, records, blk + 16,
				     (size_t)n * wzc_wzx_record_bytes(x), &size);
	if (*type < 0)
		return 0;
	wzx_put32(blk, (uint32_t)layer);
	wzx_put32(blk + 4, (uint32_t)t0);
	wzx_put32(blk + 8, (uint32_t)size);
	blk[12] = (uint8_t)n;
	blk[13] = (uint8_t)*type;
	blk[14] = blk[15] = 0;
	wzx_put64(blk + 16 + size, XXH3_64bits(blk, 16 + size));
	return size + WZC_WZX_BLOCK_OVERHEAD;
}

void wzc_wzx_index_entry(uint8_t *e, size_t offset, size_t block_size)
{
	wzx_put64(e, offset);
	wzx_put32(e + 8, (uint32_t)block_size);
	wzx_put32(e + 12, 0);
}

void wzc_wzx_footer(uint8_t *dst, size_t index_offset, const uint8_t *index, size_t nblocks)
{
	wzx_put64(dst, index_offset);
	wzx_put64(dst + 8, XXH3_64bits(index, nblocks * WZC_WZX_INDEX_ENTRY));
	memcpy(dst + 16, END_MAGIC, 8);
}

wz_err wzc_wzx_write(const wzc_wzx *x, int T, const uint8_t *records, uint8_t *dst, size_t cap,
		     size_t *written, wzc_wzx_stats *stats, wz_diag *diag)
{
	*written = 0;
	int L = wzc_wzx_layers(x), R = wzc_wzx_R(x), P = wzc_wzx_P(x);
	size_t B = wzc_wzx_record_bytes(x), mlen = strlen(wzc_wzx_model(x));
	size_t bound = wzc_wzx_bound(L, T, R, P, B, mlen);
	if (!bound)
		return wz_diag_set(diag, WZ_ERR_RANGE, "wzx: %d layers x %d tokens is out of range", L, T);
	if (cap < bound)
		return wz_diag_set(diag, WZ_ERR_RANGE, "wzx: a buffer of %zu bytes, %zu needed (wzc_wzx_bound)",
				   cap, bound);
	wzc_wzx_stats st = { 0 };
	int nb = (T + WZC_WZX_BLOCK_TOKENS - 1) / WZC_WZX_BLOCK_TOKENS;
	size_t H = wzc_wzx_header(x, T, dst);
	st.header = H;
	/* The index goes after the blocks; keep it aside meanwhile. */
	size_t nblocks = (size_t)L * nb;
	uint8_t *index = malloc(nblocks * WZC_WZX_INDEX_ENTRY);
	if (!index)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	size_t at = H;
	for (int l = 0; l < L; l++)
		for (int b = 0; b < nb; b++) {
			int t0 = b * WZC_WZX_BLOCK_TOKENS;
			int n = T - t0 < WZC_WZX_BLOCK_TOKENS ? T - t0 : WZC_WZX_BLOCK_TOKENS, type;
			size_t size = wzc_wzx_frame_block(x, l, t0, n, records + ((size_t)l * T + t0) * B,
							  dst + at, &type);
			if (type < 0) {
				free(index);
				return wz_diag_set(diag, WZ_ERR_NOMEM,
						   "wzx: out of memory coding layer %d block %d", l, b);
			}
			wzc_wzx_index_entry(index + ((size_t)l * nb + b) * WZC_WZX_INDEX_ENTRY, at, size);
			at += size;
			st.payload += size - WZC_WZX_BLOCK_OVERHEAD;
			st.nraw += type == 0;
		}
	st.blocks = at - H;
	st.nblocks = (int)nblocks;
	size_t ioff = at;
	memcpy(dst + at, index, nblocks * WZC_WZX_INDEX_ENTRY);
	at += nblocks * WZC_WZX_INDEX_ENTRY;
	free(index);
	wzc_wzx_footer(dst + at, ioff, dst + ioff, nblocks);
	at += WZC_WZX_FOOTER;
	st.index = at - ioff;
	st.total = at;
	*written = at;
	if (stats)
		*stats = st;
	return WZ_OK;
}

void wzc_wzx_reader_free(wzc_wzx_reader *r)
{
	if (!r)
		return;
	free(r->head);
	free(r->tail);
	free(r->win);
	free(r);
}

/* The file's bytes from off to its end (the index and footer); NULL with
 * *diag set when they cannot be read. */
static const uint8_t *tail_bytes(wzc_wzx_reader *r, size_t off, wz_diag *diag)
{
	if (r->b)
		return r->b + off;
	size_t len = r->n - off;
	free(r->tail);
	if (!(r->tail = malloc(len ? len : 1))) {
		wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory for an index of %zu bytes", r->origin,
			    len);
		return NULL;
	}
	if (r->read(r->ctx, off, len, r->tail)) {
		wz_diag_set(diag, WZ_ERR_IO, "%s: cannot read %zu bytes at %zu (did the file change?)",
			    r->origin, len, off);
		return NULL;
	}
	return r->tail;
}

const wzc_wzx_info *wzc_wzx_reader_info(const wzc_wzx_reader *r)
{
	return &r->info;
}

/* b: the header's bytes (at least its first min(n, fixed part + model + 8)). */
static wz_err open_checks(wzc_wzx_reader *r, const uint8_t *b, wz_diag *diag)
{
	size_t n = r->n;
	const char *o = r->origin;
	if (n < WZC_WZX_HEADER_FIXED + 8 + WZC_WZX_FOOTER)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %zu bytes is too short for a wzx container", o, n);
	if (memcmp(b, MAGIC, 8))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: not a wzx container (bad magic)", o);
	uint32_t version = wzx_get32(b + 8);
	if (version < 1 || version > WZC_WZX_VERSION)
		return wz_diag_set(diag, version > WZC_WZX_VERSION ? WZ_ERR_VERSION : WZ_ERR_INPUT,
				   "%s: wzx version %u (this build reads 1 to %d)", o, version,
				   WZC_WZX_VERSION);
	uint32_t mlen = wzx_get32(b + 48);
	if (mlen > WZC_MODEL_MAX)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: model name of %u bytes", o, mlen);
	size_t H = header_bytes(mlen);
	if (n < H + WZC_WZX_FOOTER)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: truncated header", o);
	if (wzx_get64(b + H - 8) != XXH3_64bits(b, H - 8))
		return wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: header checksum mismatch", o);
	if (wzx_get32(b + 12) || wzx_get32(b + 52))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: reserved header bits are not zero", o);
	for (size_t i = mlen; i < pad8(mlen); i++)
		if (b[WZC_WZX_HEADER_FIXED + i])
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s: model name padding is not zero", o);
	uint32_t L = wzx_get32(b + 16), R = wzx_get32(b + 20), P = wzx_get32(b + 24);
	uint32_t T = wzx_get32(b + 28), B = wzx_get32(b + 32), bt = wzx_get32(b + 36);
	if (L < 1 || L > MAX_L || R < 1 || R > MAX_R || P > MAX_P || T < 1 || T > MAX_T)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: shape %u layers x %u tokens x (%u + %u) out of range",
				   o, L, T, R, P);
	if (B < (P ? 2u : 1u) || B > 2 * (R + P))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: record size %u out of range", o, B);
	if (bt != WZC_WZX_BLOCK_TOKENS)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %u tokens per block (versions 1 to 6 have 64)", o, bt);
	const uint8_t *name = b + WZC_WZX_HEADER_FIXED;
	for (uint32_t i = 0; i < mlen; i++)
		if (name[i] < 0x20 || name[i] == 0x7f)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s: control character in the model name", o);
	size_t nbl = (T + (size_t)WZC_WZX_BLOCK_TOKENS - 1) / WZC_WZX_BLOCK_TOKENS;
	size_t nblocks = (size_t)L * nbl;
	/* every block takes at least its overhead and an index entry: checked
	 * before anything is sized by these counts */
	if (nblocks > (n - H - WZC_WZX_FOOTER) / (WZC_WZX_BLOCK_OVERHEAD + WZC_WZX_INDEX_ENTRY))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %zu blocks cannot fit in %zu bytes", o,
				   nblocks, n);
	size_t expect_ioff = n - WZC_WZX_FOOTER - nblocks * WZC_WZX_INDEX_ENTRY;
	const uint8_t *tail = tail_bytes(r, expect_ioff, diag);
	if (!tail)
		return diag ? diag->code : WZ_ERR_IO;
	const uint8_t *foot = tail + (n - WZC_WZX_FOOTER - expect_ioff);
	if (memcmp(foot + 16, END_MAGIC, 8))
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: no wzx index footer (truncated?)", o);
	uint64_t ioff = wzx_get64(foot);
	if (ioff != n - WZC_WZX_FOOTER - nblocks * WZC_WZX_INDEX_ENTRY)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: index offset %llu, expected %zu", o,
				   (unsigned long long)ioff, n - WZC_WZX_FOOTER - nblocks * WZC_WZX_INDEX_ENTRY);
	if (wzx_get64(foot + 8) != XXH3_64bits(tail, nblocks * WZC_WZX_INDEX_ENTRY))
		return wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: index checksum mismatch", o);
	uint64_t prev_end = H;
	for (size_t i = 0; i < nblocks; i++) {
		const uint8_t *e = tail + i * WZC_WZX_INDEX_ENTRY;
		uint64_t off = wzx_get64(e);
		uint32_t size = wzx_get32(e + 8);
		if (wzx_get32(e + 12) || size < WZC_WZX_BLOCK_OVERHEAD || off < prev_end ||
		    off > ioff || size > ioff - off)
			return wz_diag_set(diag, WZ_ERR_INPUT, "%s: index entry %zu is inconsistent", o, i);
		prev_end = off + size;
	}
	r->index_off = (size_t)ioff;
	r->index = tail;
	r->info = (wzc_wzx_info){ (int)L, (int)R, (int)P, (int)T, (int)nbl, (int)nblocks, B,
				  wzx_get64(b + 40), "", (int)version };
	memcpy(r->info.model, name, mlen);
	r->info.model[mlen] = 0;
	return WZ_OK;
}

wz_err wzc_wzx_open(const void *bytes, size_t n, const char *origin, wzc_wzx_reader **out,
		    wz_diag *diag)
{
	*out = NULL;
	wzc_wzx_reader *r = calloc(1, sizeof *r);
	if (!r)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	r->b = bytes;
	r->n = n;
	snprintf(r->origin, sizeof r->origin, "%s", origin ? origin : "wzx");
	wz_err e = open_checks(r, r->b, diag);
	if (e) {
		free(r);
		return e;
	}
	*out = r;
	return WZ_OK;
}

wz_err wzc_wzx_open_source(size_t n, wzc_wzx_read_fn read, void *ctx, const char *origin,
			   wzc_wzx_reader **out, wz_diag *diag)
{
	*out = NULL;
	wzc_wzx_reader *r = calloc(1, sizeof *r);
	if (!r)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	r->n = n;
	r->read = read;
	r->ctx = ctx;
	snprintf(r->origin, sizeof r->origin, "%s", origin ? origin : "wzx");
	/* the longest header there is, or the whole file if shorter */
	size_t hn = header_bytes(WZC_MODEL_MAX) < n ? header_bytes(WZC_MODEL_MAX) : n;
	wz_err e = WZ_OK;
	if (!(r->head = calloc(hn + 1, 1)))
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	else if (read(ctx, 0, hn, r->head))
		e = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot read its first %zu bytes (did the file change?)",
				r->origin, hn);
	if (!e)
		e = open_checks(r, r->head, diag);
	if (e) {
		wzc_wzx_reader_free(r);
		return e;
	}
	*out = r;
	return WZ_OK;
}

/* Where blocks first .. first + count - 1 lie in the container. */
static void span_of(const wzc_wzx_reader *r, long first, long count, size_t *off, size_t *len)
{
	/* offsets increase and blocks lie before the index (checked at open) */
	const uint8_t *e0 = r->index + (size_t)first * WZC_WZX_INDEX_ENTRY;
	const uint8_t *e1 = r->index + (size_t)(first + count - 1) * WZC_WZX_INDEX_ENTRY;
	*off = (size_t)wzx_get64(e0);
	*len = (size_t)wzx_get64(e1) + wzx_get32(e1 + 8) - *off;
}

wz_err wzc_wzx_reader_place(wzc_wzx_reader *r, long first, long count, wz_diag *diag)
{
	if (r->b || count <= 0)
		return WZ_OK;
	if (first < 0 || first + count > r->info.nblocks)
		return wz_diag_set(diag, WZ_ERR_RANGE, "%s: blocks %ld..%ld of %d", r->origin, first,
				   first + count - 1, r->info.nblocks);
	size_t off, len;
	span_of(r, first, count, &off, &len);
	if (len > r->win_cap) {
		uint8_t *w = realloc(r->win, len);
		if (!w)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: out of memory for %zu bytes of blocks",
					   r->origin, len);
		r->win = w;
		r->win_cap = len;
	}
	r->win_off = off;
	r->win_len = len;
	return WZ_OK;
}

wz_err wzc_wzx_reader_fill(const wzc_wzx_reader *r, long first, long count, wz_diag *diag)
{
	if (r->b || count <= 0)
		return WZ_OK;
	size_t off, len;
	if (first < 0 || first + count > r->info.nblocks)
		return wz_diag_set(diag, WZ_ERR_RANGE, "%s: blocks %ld..%ld of %d", r->origin, first,
				   first + count - 1, r->info.nblocks);
	span_of(r, first, count, &off, &len);
	if (off < r->win_off || off - r->win_off > r->win_len || len > r->win_len - (off - r->win_off))
		return wz_diag_set(diag, WZ_ERR_USAGE, "%s: blocks %ld..%ld are not placed "
				   "(wzc_wzx_reader_place)", r->origin, first, first + count - 1);
	if (r->read(r->ctx, off, len, r->win + (off - r->win_off)))
		return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot read blocks %ld..%ld (%zu bytes at %zu; "
						    "did the file change?)",
				   r->origin, first, first + count - 1, len, off);
	return WZ_OK;
}

wz_err wzc_wzx_reader_load(wzc_wzx_reader *r, long first, long count, wz_diag *diag)
{
	wz_err e = wzc_wzx_reader_place(r, first, count, diag);
	if (!e)
		e = wzc_wzx_reader_fill(r, first, count, diag);
	if (e && !r->b)
		r->win_len = 0; /* nothing loaded */
	return e;
}

wz_err wzc_wzx_coder_for(const wzc_wzx_reader *r, const wzc_profile *p, wzc_wzx **out,
			 wz_diag *diag)
{
	*out = NULL;
	const wzc_wzx_info *in = &r->info;
	if (in->L != p->L || in->R != p->R || in->P != p->P)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: the container is %d layers x (%d + %d), the profile %d x (%d + %d)",
				   r->origin, in->L, in->R, in->P, p->L, p->R, p->P);
	wzc_wzx *x;
	wz_err e = wzc_wzx_new(p, in->record_bytes, &x, diag);
	if (e)
		return e;
	if (wzc_wzx_profile_hash(x) != in->profile_hash) {
		wzc_wzx_free(x);
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: written with another profile (hash %016llx)",
				   r->origin, (unsigned long long)in->profile_hash);
	}
	/* The header's name is sealed only by the header checksum, which anyone
	 * can recompute; a container must not pass for another model's. */
	if (strcmp(in->model, p->model)) {
		wzc_wzx_free(x);
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: the container holds model '%.100s', the profile is for '%.100s'",
				   r->origin, in->model, p->model);
	}
	*out = x;
	return WZ_OK;
}

size_t wzc_wzx_block_offset(const wzc_wzx_reader *r, long i)
{
	if (i < 0 || i >= r->info.nblocks)
		return r->index_off;
	return (size_t)wzx_get64(r->index + (size_t)i * WZC_WZX_INDEX_ENTRY);
}
