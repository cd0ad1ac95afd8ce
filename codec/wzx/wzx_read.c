/* The wzx container's blocks read back: each block's checks, then its
 * symbols, records, transformed rows or runs of blocks by the decoder its
 * type takes (docs/wzx-format.md); the header, index and footer are
 * opened in codec/wzx/wzx_file.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "codec/wzx/wzx.h"
#include "codec/wzx/legacy/wzx_legacy.h"
#include "codec/wzx/wzx_fast.h"
#include "codec/wzx/wzx_internal.h"
#include "codec/wzx/wzx_reader.h"
#include "codec/wzx/wzx_lanes.h"

/* A block's checks (docs/wzx-format.md, "Reading untrusted bytes"): its
 * checksum, its header against its index slot, a type its version allows,
 * a raw payload's size.  *blk is the block, *ntok its tokens. */
static wz_err block_at(const wzc_wzx_reader *r, const wzc_wzx *x, int layer, int block,
		       const uint8_t **blk, size_t *payload, int *ntok, char *what, size_t nwhat,
		       wz_diag *diag)
{
	const wzc_wzx_info *in = &r->info;
	*ntok = 0;
	if (layer < 0 || layer >= in->L || block < 0 || block >= in->blocks_per_layer)
		return wz_diag_set(diag, WZ_ERR_RANGE, "%s: no block %d of layer %d", r->origin, block,
				   layer);
	if (wzc_wzx_layers(x) != in->L || wzc_wzx_record_bytes(x) != in->record_bytes)
		return wz_diag_set(diag, WZ_ERR_USAGE, "%s: a coder for another grid", r->origin);
	size_t i = (size_t)layer * in->blocks_per_layer + block;
	const uint8_t *e = r->index + i * WZC_WZX_INDEX_ENTRY;
	size_t off = (size_t)wzx_get64(e), size = wzx_get32(e + 8);
	if (!r->b && (off < r->win_off || off - r->win_off > r->win_len ||
		      size > r->win_len - (off - r->win_off)))
		return wz_diag_set(diag, WZ_ERR_USAGE, "%s: block %zu is not loaded (wzc_wzx_reader_load)",
				   r->origin, i);
	const uint8_t *b = r->b ? r->b + off : r->win + (off - r->win_off);
	int t0 = block * WZC_WZX_BLOCK_TOKENS;
	int n = in->T - t0 < WZC_WZX_BLOCK_TOKENS ? in->T - t0 : WZC_WZX_BLOCK_TOKENS;
	size_t pay = size - WZC_WZX_BLOCK_OVERHEAD, B = in->record_bytes;
	snprintf(what, nwhat, "block %zu (layer %d, tokens %d..%d)", i, layer, t0, t0 + n - 1);
	if (wzx_get64(b + 16 + pay) != XXH3_64bits(b, 16 + pay))
		return wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: %s: checksum mismatch", r->origin, what);
	/* the coded types each version allows: 1; 2; 2 and 3; 2 and 4; 2 and 5;
	 * 2 and 6 */
	int type = b[13], allowed = type == WZC_WZX_RAW ||
				    (in->version == 1   ? type == WZC_WZX_RANS
				     : in->version == 2 ? type == WZC_WZX_LANES
				     : in->version == 3 ? type == WZC_WZX_LANES || type == WZC_WZX_LANES12
				     : in->version == 4 ? type == WZC_WZX_LANES || type == WZC_WZX_LANES4
				     : in->version == 5 ? type == WZC_WZX_LANES || type == WZC_WZX_LANES5
							: type == WZC_WZX_LANES || type == WZC_WZX_LANES6);
	if (wzx_get32(b) != (uint32_t)layer || wzx_get32(b + 4) != (uint32_t)t0 ||
	    wzx_get32(b + 8) != pay || b[12] != n || b[14] || b[15] || !allowed)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %s: header does not match the index", r->origin,
				   what);
	if (b[13] == WZC_WZX_RAW && pay != (size_t)n * B)
		return wz_diag_set(diag, WZ_ERR_INPUT, "%s: %s: raw payload of %zu bytes", r->origin,
				   what, pay);
	/* the layer's tables, built on its first block */
	wz_err err = wzc_wzx_layer_ready(x, layer, diag);
	if (err)
		return err;
	if ((type == WZC_WZX_LANES12 || type == WZC_WZX_LANES4 || type == WZC_WZX_LANES5) &&
	    !wzc_wzx_layer_type3(x, layer))
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: %s: a 12-bit rANS block in a layer with a count above 4096",
				   r->origin, what);
	if (type == WZC_WZX_LANES6 && !wzc_wzx_layer_type6(x, layer)) {
		if (wzc_wzx_table_nomem(&wzc_wzx_layer_at(x, layer)->fast6_ready))
			return wz_diag_set(diag, WZ_ERR_NOMEM, "%s: %s: out of memory", r->origin, what);
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s: %s: a type 6 block in a layer with a count above 65536",
				   r->origin, what);
	}
	*blk = b;
	*payload = pay;
	*ntok = n;
	return WZ_OK;
}

/* A type 2 or 3 block's symbols, in a buffer the caller frees. */
static wz_err lanes_symbols(const wzc_wzx_reader *r, const wzc_wzx *x, int layer, int n,
			    const uint8_t *blk, size_t payload, const char *what, uint16_t **sym,
			    wz_diag *diag)
{
	*sym = malloc(sizeof **sym * (size_t)n * wzc_wzx_block_symbols(x, layer));
	if (!*sym)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	int bad;
	if (blk[13] == WZC_WZX_LANES4 || blk[13] == WZC_WZX_LANES5 || blk[13] == WZC_WZX_LANES6) {
		/* output order, then back to coding order */
		int S4 = blk[13] == WZC_WZX_LANES6 ? wzc_wzx_block_symbols6(x, layer) : wzc_wzx_block_symbols4(x, layer);
		uint16_t *s4 = malloc(sizeof *s4 * (size_t)n * S4 + 1);
		if (!s4) {
			free(*sym);
			*sym = NULL;
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		}
		bad = (blk[13] == WZC_WZX_LANES6
				      ? wzc_wzx_decode_lanes6_path(x, layer, WZC_LANES4_BEST, n, blk + 16, payload, s4)
			      : blk[13] == WZC_WZX_LANES5
				      ? wzc_wzx_decode_lanes5_path(x, layer, WZC_LANES4_BEST, n, blk + 16, payload, s4)
				      : wzc_wzx_decode_lanes4_path(x, layer, WZC_LANES4_BEST, n, blk + 16, payload, s4));
		if (!bad)
			wzc_wzx_symbols4_entries(x, layer, n, s4, *sym);
		free(s4);
	} else {
		bad = blk[13] == WZC_WZX_LANES12
			      ? wzc_wzx_decode_lanes12(x, layer, n, blk + 16, payload, *sym)
			      : wzc_wzx_decode_lanes(x, layer, WZC_LANES, n, blk + 16, payload, *sym);
	}
	if (bad) {
		free(*sym);
		*sym = NULL;
		return wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: %s: rANS payload does not decode",
				   r->origin, what);
	}
	return WZ_OK;
}

wz_err wzc_wzx_read_block(const wzc_wzx_reader *r, const wzc_wzx *x, int layer, int block,
			  uint8_t *records, int *ntok, wz_diag *diag)
{
	const uint8_t *blk;
	size_t payload;
	int n;
	char what[96];
	*ntok = 0;
	wz_err e = block_at(r, x, layer, block, &blk, &payload, &n, what, sizeof what, diag);
	if (e)
		return e;
	if (blk[13] == WZC_WZX_RAW) {
		memcpy(records, blk + 16, payload);
	} else if (blk[13] == WZC_WZX_RANS) {
		if (wzc_wzx_decode_block(x, layer, n, blk + 16, payload, records))
			return wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: %s: rANS payload does not decode",
					   r->origin, what);
	} else if (blk[13] == WZC_WZX_LANES5 || blk[13] == WZC_WZX_LANES6) {
		/* straight to records (codec/wzx/wzx_records5.c, wzx_lanes6.c) */
		if ((blk[13] == WZC_WZX_LANES6 ? wzc_wzx_decode_lanes6_records : wzc_wzx_decode_lanes5_records)(
			    x, layer, n, blk + 16, payload, records))
			return wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: %s: rANS payload does not decode",
					   r->origin, what);
	} else {
		uint16_t *sym;
		if ((e = lanes_symbols(r, x, layer, n, blk, payload, what, &sym, diag)))
			return e;
		wzc_wzx_symbols_records(x, layer, n, sym, records);
		free(sym);
	}
	*ntok = n;
	return WZ_OK;
}

wz_err wzc_wzx_read_block_transformed(const wzc_wzx_reader *r, const wzc_wzx *x, int layer,
				      int block, float *y_latent, float *y_rope, int *ntok,
				      wz_diag *diag)
{
	const uint8_t *blk;
	size_t payload;
	int n;
	char what[96];
	*ntok = 0;
	wz_err e = block_at(r, x, layer, block, &blk, &payload, &n, what, sizeof what, diag);
	if (e)
		return e;
	const wzc_wzx_info *in = &r->info;
	if (blk[13] == WZC_WZX_LANES4 || blk[13] == WZC_WZX_LANES5 || blk[13] == WZC_WZX_LANES6) {
		/* straight to rows, then the two parts apart */
		size_t w = (size_t)(in->R + in->P);
		float *rows = malloc(sizeof *rows * w * (size_t)n);
		if (!rows)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		if ((blk[13] == WZC_WZX_LANES6   ? wzc_wzx_decode_lanes6_rows
		     : blk[13] == WZC_WZX_LANES5 ? wzc_wzx_decode_lanes5_rows
						 : wzc_wzx_decode_lanes4_rows)(x, layer, n, blk + 16, payload, rows, w)) {
			free(rows);
			return wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: %s: rANS payload does not decode",
					   r->origin, what);
		}
		for (int t = 0; t < n; t++) {
			memcpy(y_latent + (size_t)t * in->R, rows + w * t, sizeof(float) * in->R);
			memcpy(y_rope + (size_t)t * in->P, rows + w * t + in->R, sizeof(float) * in->P);
		}
		free(rows);
	} else if (blk[13] == WZC_WZX_LANES || blk[13] == WZC_WZX_LANES12) {
		uint16_t *sym;
		if ((e = lanes_symbols(r, x, layer, n, blk, payload, what, &sym, diag)))
			return e;
		wzc_wzx_symbols_transformed(x, layer, n, sym, y_latent, y_rope);
		free(sym);
	} else {
		/* raw and version 1 blocks: through their records */
		uint8_t *rec = malloc(in->record_bytes * (size_t)n);
		if (!rec)
			return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		int got;
		e = wzc_wzx_read_block(r, x, layer, block, rec, &got, diag);
		for (int t = 0; !e && t < n; t++)
			if (wzc_wz_decode_token_transformed(wzc_wzx_codec(x), layer, rec + (size_t)t * in->record_bytes,
							    y_latent + (size_t)t * in->R, y_rope + (size_t)t * in->P))
				e = wz_diag_set(diag, WZ_ERR_NOMEM, "%s: its records could not be decoded (out of memory)",
						what);
		free(rec);
		if (e)
			return e;
	}
	*ntok = n;
	return WZ_OK;
}

/* Runs of blocks into rows of the transformed domain, or into records. */
static wz_err read_blocks(const wzc_wzx_reader *r, const wzc_wzx *x, int layer, int block, int G,
			  int to_records, void *dst, int *ndone, wz_diag *diag)
{
	const wzc_wzx_info *in = &r->info;
	size_t stride = (size_t)(in->R + in->P);
	/* bytes of one token's output */
	size_t per = to_records ? in->record_bytes : sizeof(float) * stride;
	const uint8_t *blk[WZC_LANES12_GROUP_MAX], *pay[WZC_LANES12_GROUP_MAX];
	size_t size[WZC_LANES12_GROUP_MAX];
	int n[WZC_LANES12_GROUP_MAX], verdict[WZC_LANES12_GROUP_MAX];
	uint16_t *sym[WZC_LANES12_GROUP_MAX];
	char what[WZC_LANES12_GROUP_MAX][96];
	*ndone = 0;
	if (G < 1 || G > WZC_LANES12_GROUP_MAX)
		return wz_diag_set(diag, WZ_ERR_USAGE, "%d blocks at once (at most %d)", G,
				   WZC_LANES12_GROUP_MAX);
	/* the blocks' checks in order; a failing one ends the group there */
	wz_diag first_bad;
	wz_err e = WZ_OK;
	int m = 0;
	for (; m < G; m++)
		if ((e = block_at(r, x, layer, block + m, &blk[m], &size[m], &n[m], what[m],
				  sizeof what[m], &first_bad)))
			break;
	/* a run of type 3 blocks of one token count decodes together */
	int run = 0;
	while (run < m && blk[run][13] == WZC_WZX_LANES12 && n[run] == n[0])
		run++;
	if (run < 2)
		run = 0;
	size_t S = (size_t)wzc_wzx_block_symbols(x, layer);
	/* + 1: the transform's gathers read a symbol's 32 bits */
	uint16_t *buf = run ? malloc(sizeof *buf * (S * WZC_WZX_BLOCK_TOKENS * (size_t)run + 1)) : NULL;
	if (run && !buf)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	for (int g = 0; g < run; g++) {
		pay[g] = blk[g] + 16;
		sym[g] = buf + S * WZC_WZX_BLOCK_TOKENS * (size_t)g;
	}
	if (run)
		wzc_wzx_decode_lanes12_group(x, layer, WZC_LANES12_BEST, run, n[0], pay, size, sym, verdict);
	/* a run of type 4 blocks, or of type 5 blocks, of one token count:
	 * straight into the rows, together */
	int run4 = 0, t45 = m && !to_records && (blk[0][13] == WZC_WZX_LANES4 || blk[0][13] == WZC_WZX_LANES5 ||
						 blk[0][13] == WZC_WZX_LANES6)
				    ? blk[0][13]
				    : 0;
	while (t45 && run4 < m && blk[run4][13] == t45 && n[run4] == n[0])
		run4++;
	if (run4 && t45 != WZC_WZX_LANES4) {
		for (int g = 0; g < run4; g++)
			verdict[g] = (t45 == WZC_WZX_LANES6 ? wzc_wzx_decode_lanes6_rows : wzc_wzx_decode_lanes5_rows)(
				x, layer, n[0], blk[g] + 16, size[g], (float *)dst + stride * n[0] * (size_t)g, stride);
	} else if (run4) {
		float *rw[WZC_LANES4_GROUP_MAX];
		for (int g = 0; g < run4; g++) {
			pay[g] = blk[g] + 16;
			rw[g] = (float *)dst + stride * n[0] * (size_t)g;
		}
		wzc_wzx_decode_lanes4_rows_group(x, layer, WZC_LANES4_BEST, run4, n[0], pay, size, rw, stride,
						 verdict);
	}
	uint8_t *out = dst;
	wz_err be = WZ_OK;
	for (int g = 0; g < m && !be; g++) {
		if (g < run4) {
			if (verdict[g])
				be = wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: %s: rANS payload does not decode",
						 r->origin, what[g]);
		} else if (g < run) {
			if (verdict[g])
				be = wz_diag_set(diag, WZ_ERR_CORRUPT, "%s: %s: rANS payload does not decode",
						 r->origin, what[g]);
			else if (to_records)
				wzc_wzx_symbols_records(x, layer, n[g], sym[g], out);
			else
				wzc_wzx_symbols_rows(x, layer, n[g], sym[g], (float *)(void *)out, stride);
		} else if (to_records) {
			int got = 0;
			be = wzc_wzx_read_block(r, x, layer, block + g, out, &got, diag);
		} else {
			/* any other block: alone, through a latent and a position part */
			float *lat = malloc(sizeof *lat * (size_t)n[g] * in->R),
			      *rope = malloc(sizeof *rope * ((size_t)n[g] * in->P + 1));
			int got = 0;
			be = !lat || !rope ? wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory")
					   : wzc_wzx_read_block_transformed(r, x, layer, block + g, lat, rope,
									    &got, diag);
			float *o = (float *)(void *)out;
			for (int t = 0; !be && t < got; t++) {
				memcpy(o + (size_t)t * stride, lat + (size_t)t * in->R, sizeof(float) * in->R);
				memcpy(o + (size_t)t * stride + in->R, rope + (size_t)t * in->P,
				       sizeof(float) * in->P);
			}
			free(lat);
			free(rope);
		}
		if (!be) {
			out += (size_t)n[g] * per;
			++*ndone;
		}
	}
	free(buf);
	if (be)
		return be;
	if (e && diag)
		*diag = first_bad;
	return e;
}

wz_err wzc_wzx_read_blocks_rows(const wzc_wzx_reader *r, const wzc_wzx *x, int layer, int block,
				int G, float *rows, int *ndone, wz_diag *diag)
{
	return read_blocks(r, x, layer, block, G, 0, rows, ndone, diag);
}

wz_err wzc_wzx_read_blocks_records(const wzc_wzx_reader *r, const wzc_wzx *x, int layer,
				   int block, int G, uint8_t *records, int *ndone, wz_diag *diag)
{
	return read_blocks(r, x, layer, block, G, 1, records, ndone, diag);
}

wz_err wzc_wzx_read_all(const wzc_wzx_reader *r, const wzc_wzx *x, uint8_t *records,
			wz_diag *diag)
{
	const wzc_wzx_info *in = &r->info;
	for (int l = 0; l < in->L; l++)
		for (int b = 0; b < in->blocks_per_layer; b++) {
			int n;
			size_t t0 = (size_t)b * WZC_WZX_BLOCK_TOKENS;
			wz_err e = wzc_wzx_read_block(r, x, l, b,
						      records + ((size_t)l * in->T + t0) * in->record_bytes,
						      &n, diag);
			if (e)
				return e;
		}
	return WZ_OK;
}

wz_err wzc_wzx_roundtrip(wzc_codec *codec, const wzc_window *w, uint8_t **out,
			 wzc_wzx_stats *stats, wz_diag *diag)
{
	*out = NULL;
	wzc_wzx *x;
	wz_err e = wzc_wzx_of_codec(codec, &x, diag);
	if (e)
		return e;
	size_t B = wzc_wzx_record_bytes(x), per = (size_t)w->T * B;
	size_t cap = wzc_wzx_bound(w->L, w->T, w->R, w->P, B, strlen(wzc_wzx_model(x)));
	uint8_t *rec = malloc(per * (size_t)w->L), *buf = malloc(cap ? cap : 1);
	wzc_wzx_reader *r = NULL;
	if (!rec || !buf) {
		e = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		goto done;
	}
	for (int l = 0; l < w->L && !e; l++)
		e = wzc_encode_layer_at(codec, l, w->T, w->latent + (size_t)l * w->T * w->R,
					w->rope + (size_t)l * w->T * w->P, w->positions, rec + per * l,
					diag);
	size_t n = 0;
	if (!e)
		e = wzc_wzx_write(x, w->T, rec, buf, cap, &n, stats, diag);
	/* what is measured is what comes back out of the container */
	if (!e) {
		memset(rec, 0, per * (size_t)w->L);
		e = wzc_wzx_open(buf, n, "wzx", &r, diag);
	}
	if (!e)
		e = wzc_wzx_read_all(r, x, rec, diag);
done:
	wzc_wzx_reader_free(r);
	free(buf);
	wzc_wzx_free(x);
	if (e)
		free(rec);
	else
		*out = rec;
	return e;
}
