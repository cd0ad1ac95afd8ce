/* Fuzz target for the wzx container reader: a profile and a container from
 * untrusted bytes, every block read back.  Input layout: byte 0 flags (bit 0:
 * reseal the container's checksums first, so mutations reach the field
 * checks and the rANS decoder instead of stopping at a checksum), bytes 1..4
 * the profile's length n (little-endian), n profile bytes (its checksum is
 * always recomputed), then the container. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "codec/profile.h"
#include "codec/wzx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Recomputes the header and index checksums where the fields that place
 * them are in range; blocks are resealed after the index is validated. */
static void reseal(uint8_t *b, size_t n)
{
	if (n < 56 + 8)
		return;
	size_t mlen = (size_t)b[48] | (size_t)b[49] << 8 | (size_t)b[50] << 16 | (size_t)b[51] << 24;
	size_t H = mlen <= 255 ? 56 + ((mlen + 7) & ~(size_t)7) + 8 : 0;
	if (H && H <= n)
		put64(b + H - 8, XXH3_64bits(b, H - 8));
	if (n < 24)
		return;
	uint64_t ioff = get64(b + n - 24);
	if (ioff <= n - 24)
		put64(b + n - 16, XXH3_64bits(b + ioff, n - 24 - ioff));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 5)
		return 0;
	int flags = data[0];
	size_t n = (size_t)data[1] | (size_t)data[2] << 8 | (size_t)data[3] << 16 |
		   (size_t)data[4] << 24;
	if (n > size - 5)
		n = size - 5;
	size_t nc = size - 5 - n;
	uint8_t *prof_bytes = malloc(n ? n : 1), *cont = malloc(nc ? nc : 1);
	if (!prof_bytes || !cont)
		goto out;
	memcpy(prof_bytes, data + 5, n);
	memcpy(cont, data + 5 + n, nc);
	if (n >= 8) {
		uint64_t sum = wzc_profile_checksum(prof_bytes, n - 8);
		put64(prof_bytes + n - 8, sum);
	}
	wzc_profile *prof = NULL;
	if (wzc_profile_parse(prof_bytes, n, "fuzz", &prof, NULL))
		prof = NULL;
	if (flags & 1)
		reseal(cont, nc);
	wzc_wzx_reader *r = NULL;
	if (wzc_wzx_open(cont, nc, "fuzz", &r, NULL))
		goto out_prof;
	const wzc_wzx_info *in = wzc_wzx_reader_info(r);
	if (flags & 1) {
		/* the index is valid now: reseal every block it points to */
		size_t ioff = nc - 24 - (size_t)in->nblocks * 16;
		for (int i = 0; i < in->nblocks; i++) {
			uint64_t off = get64(cont + ioff + 16 * (size_t)i);
			size_t bs = (size_t)cont[ioff + 16 * (size_t)i + 8] |
				    (size_t)cont[ioff + 16 * (size_t)i + 9] << 8 |
				    (size_t)cont[ioff + 16 * (size_t)i + 10] << 16 |
				    (size_t)cont[ioff + 16 * (size_t)i + 11] << 24;
			put64(cont + off + bs - 8, XXH3_64bits(cont + off, bs - 8));
		}
	}
	/* Keep planning cheap: a fuzzer's shapes are small anyway. */
	wzc_wzx *x = NULL;
	if (prof && prof->L <= 4 && prof->R <= 128 && (size_t)in->L * in->T <= 4096 &&
	    !wzc_wzx_coder_for(r, prof, &x, NULL)) {
		uint8_t *rec = malloc((size_t)in->L * in->T * in->record_bytes);
		if (rec)
			wzc_wzx_read_all(r, x, rec, NULL);
		int nt;
		uint8_t *one = malloc(64 * in->record_bytes);
		if (one)
			wzc_wzx_read_block(r, x, in->L - 1, in->blocks_per_layer - 1, one, &nt, NULL);
		/* and into the transformed domain (version 2 blocks take the fast
		 * decoder from their digits) */
		float *yl = malloc(sizeof(float) * 64 * (size_t)in->R);
		float *yr = malloc(sizeof(float) * (64 * (size_t)in->P + 1));
		for (int l = 0; yl && yr && l < in->L; l++)
			wzc_wzx_read_block_transformed(r, x, l, 0, yl, yr, &nt, NULL);
		free(yl);
		free(yr);
		free(rec);
		free(one);
		wzc_wzx_free(x);
	}
	wzc_wzx_reader_free(r);
out_prof:
	wzc_profile_free(prof);
out:
	free(prof_bytes);
	free(cont);
	return 0;
}
