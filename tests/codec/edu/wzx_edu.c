/* The educational wzx decoder (tests/codec/edu/wzx_edu.h): the
 * specification, docs/wzx-format.md, read top to bottom. */
#include "tests/codec/edu/wzx_edu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* ---- little-endian fields ---- */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static int fail(char *err, const char *what)
{
	snprintf(err, 128, "%s", what);
	return -1;
}

/* ---- the header (docs/wzx-format.md, "Header") ---- */

static const uint8_t magic[8] = { 0x89, 'W', 'Z', 'X', '\r', '\n', 0x1a, '\n' };
static const uint8_t end_magic[8] = { 0x89, 'W', 'Z', 'X', 'I', 'D', 'X', '\n' };

typedef struct {
	uint32_t version, L, R, P, T, B;
	size_t H; /* the header's bytes, its checksum included */
} header;

static int read_header(const uint8_t *f, size_t n, header *h, char *err)
{
	if (n < 64 + 24)
		return fail(err, "shorter than a header and a footer");
	if (memcmp(f, magic, 8))
		return fail(err, "not a wzx container (magic)");
	h->version = get32(f + 8);
	if (h->version < 1 || h->version > 6)
		return fail(err, "a version this decoder does not know");
	uint32_t name = get32(f + 48);
	if (name > 255)
		return fail(err, "model name longer than 255 bytes");
	size_t pad = (name + 7) / 8 * 8;
	h->H = 56 + pad + 8;
	if (h->H + 24 > n)
		return fail(err, "header past the end");
	if (XXH3_64bits(f, 56 + pad) != get64(f + 56 + pad))
		return fail(err, "header checksum");
	if (get32(f + 12) || get32(f + 52))
		return fail(err, "reserved header field not 0");
	h->L = get32(f + 16);
	h->R = get32(f + 20);
	h->P = get32(f + 24);
	h->T = get32(f + 28);
	h->B = get32(f + 32);
	if (h->L < 1 || h->L > 4096 || h->R < 1 || h->R > 8192 || h->P > 1024 || h->T < 1 ||
	    h->T > 0x7fffffffu || h->B < 1 || h->B > 2 * (h->R + h->P) || get32(f + 36) != 64)
		return fail(err, "a header field out of range");
	return 0;
}

int edu_wzx_shape(const uint8_t *file, size_t n, int *L, int *T, int *B, char *err)
{
	header h;
	if (read_header(file, n, &h, err))
		return -1;
	*L = (int)h.L;
	*T = (int)h.T;
	*B = (int)h.B;
	return 0;
}

/* ---- rANS (docs/wzx-format.md, "The entropy coder") ---- */

/* The symbol whose slots hold `slot`: c_s <= slot < c_s + f_s. */
static uint32_t symbol_at(const edu_table *t, uint32_t slot)
{
	uint32_t s = 0;
	while (s + 1 < t->n && t->cum[s + 1] <= slot)
		s++;
	return s;
}

/* Type 1: one byte-wise state, M = 2^16, x in [2^23, 2^31). */
static int decode_rans1(const uint8_t *p, size_t size, long N, const edu_table *const *tab,
			uint16_t *sym)
{
	if (size < 4)
		return -1;
	uint32_t x = get32(p);
	size_t at = 4;
	for (long i = 0; i < N; i++) {
		const edu_table *t = tab[i];
		uint32_t slot = x & 0xffff, s = symbol_at(t, slot);
		x = (t->cum[s + 1] - t->cum[s]) * (x >> 16) + slot - t->cum[s];
		while (x < (1u << 23)) {
			if (at >= size)
				return -1;
			x = x << 8 | p[at++];
		}
		sym[i] = (uint16_t)s;
	}
	return at == size && x == (1u << 23) ? 0 : -1;
}

/* Types 2 to 5: K lanes, symbol i in lane i mod K, 16-bit words, M = 2^bits;
 * each lane in [2^16, 2^32), starting and ending at 2^16. */
static int decode_lanes(const uint8_t *p, size_t size, int K, int bits, long N,
			const edu_table *const *tab, uint16_t *sym)
{
	uint32_t x[32];
	if (size < 4 * (size_t)K || size % 2)
		return -1;
	for (int k = 0; k < K; k++)
		x[k] = get32(p + 4 * k);
	size_t at = 4 * (size_t)K;
	for (long i = 0; i < N; i++) {
		int k = (int)(i % K);
		const edu_table *t = tab[i];
		/* bits 0: each table's own precision (type 6), M = cum[n] */
		int b = bits;
		while (!bits && b < 16 && (1u << b) < t->cum[t->n])
			b++;
		if (t->cum[t->n] != (1u << b))
			return -1;
		uint32_t mask = (1u << b) - 1;
		uint32_t slot = x[k] & mask, s = symbol_at(t, slot);
		x[k] = (t->cum[s + 1] - t->cum[s]) * (x[k] >> b) + slot - t->cum[s];
		if (x[k] < (1u << 16)) {
			if (at + 2 > size)
				return -1;
			x[k] = x[k] << 16 | (uint32_t)(p[at] | p[at + 1] << 8);
			at += 2;
		}
		sym[i] = (uint16_t)s;
	}
	for (int k = 0; k < K; k++)
		if (x[k] != (1u << 16))
			return -1;
	return at == size ? 0 : -1;
}

/* ---- digits to the wz record (docs/wz-format.md, "Record") ---- */

/* Per group: V the digits as a mixed-radix number (the first most
 * significant), M the product of the counts, w = ceil(V 2^k / M) in k bits
 * at the group's offset, least significant bit first; unused bits 0. */
static void put_record(const edu_layer *ly, int B, const uint8_t *scales, const uint32_t *dig,
		       uint8_t *rec)
{
	memset(rec, 0, (size_t)B);
	memcpy(rec, scales, (size_t)ly->scale_bytes);
	for (int g = 0; g < ly->ngroups; g++) {
		unsigned __int128 V = 0, M = 1;
		for (int e = ly->gstart[g]; e < ly->gstart[g + 1]; e++) {
			V = V * ly->nlev[e] + dig[e];
			M *= ly->nlev[e];
		}
		int k = ly->gbits[g];
		unsigned __int128 w = ((V << k) + M - 1) / M;
		for (int b = 0; b < k; b++)
			if ((w >> b) & 1) {
				uint32_t at = ly->goff[g] + (uint32_t)b;
				rec[at / 8] |= (uint8_t)(1u << (at % 8));
			}
	}
}

/* ---- a block (docs/wzx-format.md, "Block") ---- */

static int decode_block(const header *h, const uint8_t *blk, size_t size, long index,
			const edu_layer *layers, uint8_t *records, char *err)
{
	long nb = (h->T + 63) / 64;
	uint32_t layer = get32(blk), t0 = get32(blk + 4), S = get32(blk + 8);
	int ntok = blk[12], type = blk[13];
	if (size < 24 || S != size - 24)
		return fail(err, "a block's size is not its index entry's");
	if (XXH3_64bits(blk, 16 + S) != get64(blk + 16 + S))
		return fail(err, "a block's checksum");
	long want_n = (long)h->T - 64 * (index % nb);
	if (layer != (uint32_t)(index / nb) || t0 != 64 * (uint32_t)(index % nb) ||
	    ntok != (want_n > 64 ? 64 : want_n) || blk[14] || blk[15])
		return fail(err, "a block's header is not its place in the index");
	/* the block types each version writes (Reading untrusted bytes) */
	static const int allowed[7][7] = { { 0 },	       { 1, 1 },	   { 1, 0, 1 }, { 1, 0, 1, 1 },
					   { 1, 0, 1, 0, 1 }, { 1, 0, 1, 0, 0, 1 }, { 1, 0, 1, 0, 0, 0, 1 } };
	if (type > 6 || !allowed[h->version][type])
		return fail(err, "a block type its version does not write");
	const edu_layer *ly = &layers[layer];
	const uint8_t *pay = blk + 16;
	uint8_t *out = records + ((size_t)layer * h->T + t0) * h->B;
	if (type == 0) {
		if (S != (size_t)ntok * h->B)
			return fail(err, "a raw block's size");
		memcpy(out, pay, S);
		return 0;
	}
	int S3 = ly->scale_bytes + ly->nentries, per = type >= 4 ? ly->S : S3;
	long N = type >= 5 ? (long)ntok * ly->S5 : (long)ntok * per;
	uint16_t *sym = calloc((size_t)ntok * (size_t)(per > S3 ? per : S3) + 1, sizeof *sym);
	const edu_table **tab = malloc(sizeof *tab * ((size_t)N + 1));
	uint32_t *dig = malloc(sizeof *dig * ((size_t)ly->nentries + 1));
	uint16_t *coded = malloc(sizeof *coded * ((size_t)N + 1));
	int bad = !sym || !tab || !dig || !coded;
	/* each symbol's table, in the order the block codes them */
	for (long i = 0; !bad && i < N; i++) {
		if (type <= 2)
			tab[i] = &ly->tab16[i % S3];
		else if (type == 3)
			tab[i] = ly->tab12 ? &ly->tab12[i % S3] : NULL;
		else if (type == 4)
			tab[i] = ly->place ? &ly->place[i % per] : NULL;
		else if (type == 5) /* place-major: i = q n + k */
			tab[i] = ly->place ? &ly->place[ly->coded[i / ntok]] : NULL;
		else /* type 6: the same, each place's table at its precision */
			tab[i] = ly->place6 ? &ly->place6[ly->coded[i / ntok]] : NULL;
		bad |= tab[i] == NULL;
	}
	if (!bad)
		bad = type == 1 ? decode_rans1(pay, S, N, tab, coded)
		      : decode_lanes(pay, S, type >= 4 ? 32 : 8, type == 2 ? 16 : type == 6 ? 0 : 12, N, tab, coded);
	if (!bad && type >= 5) /* back to token-major: a place not coded has digit 0 */
		for (long i = 0; i < N; i++)
			sym[(i % ntok) * per + ly->coded[i / ntok]] = coded[i];
	else if (!bad)
		memcpy(sym, coded, sizeof *sym * (size_t)N);
	for (int k = 0; !bad && k < ntok; k++) {
		const uint16_t *s = sym + (size_t)k * per;
		uint8_t scales[2];
		if (type <= 3) {
			for (int j = 0; j < ly->scale_bytes; j++)
				scales[j] = (uint8_t)s[j];
			for (int e = 0; e < ly->nentries; e++)
				dig[e] = s[ly->scale_bytes + e];
		} else {
			for (int j = 0; j < per; j++)
				if (j < ly->scale_bytes)
					scales[j] = (uint8_t)s[j];
				else if (ly->src[j] >= 0)
					dig[ly->src[j]] = s[j];
		}
		put_record(ly, (int)h->B, scales, dig, out + (size_t)k * h->B);
	}
	free(sym);
	free(tab);
	free(dig);
	free(coded);
	return bad ? fail(err, "a coded block does not decode exactly") : 0;
}

/* ---- the container ---- */

int edu_wzx_decode(const uint8_t *f, size_t n, const edu_layer *layers, int nlayers,
		   uint8_t *records, size_t cap, int *L, int *T, int *B, char *err)
{
	header h;
	if (read_header(f, n, &h, err))
		return -1;
	*L = (int)h.L;
	*T = (int)h.T;
	*B = (int)h.B;
	if ((int)h.L > nlayers || (size_t)h.L * h.T * h.B > cap)
		return fail(err, "more layers or records than the caller has room for");
	/* the footer: the index's offset and checksum, the end magic */
	const uint8_t *foot = f + n - 24;
	if (memcmp(foot + 16, end_magic, 8))
		return fail(err, "no end magic");
	long nblocks = (long)h.L * ((h.T + 63) / 64);
	uint64_t at = get64(foot);
	if (at != n - 24 - 16 * (uint64_t)nblocks || at < h.H)
		return fail(err, "the index is not where the block count puts it");
	const uint8_t *index = f + at;
	if (XXH3_64bits(index, 16 * (size_t)nblocks) != get64(foot + 8))
		return fail(err, "index checksum");
	uint64_t prev = h.H;
	for (long i = 0; i < nblocks; i++) {
		const uint8_t *e = index + 16 * i;
		uint64_t off = get64(e), size = get32(e + 8);
		if (get32(e + 12) || size < 24 || off != prev || off + size > at)
			return fail(err, "an index entry out of place");
		prev = off + size;
		if (decode_block(&h, f + off, size, i, layers, records, err))
			return -1;
	}
	return prev == at ? 0 : fail(err, "bytes between the last block and the index");
}
