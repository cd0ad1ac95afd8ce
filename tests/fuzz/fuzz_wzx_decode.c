/* Fuzz target for the wzx container reader: a profile and a container from
 * untrusted bytes, every block read back.  Input layout: byte 0 flags (bit 0:
 * reseal the container's checksums first, so mutations reach the field
 * checks and the rANS decoder instead of stopping at a checksum), bytes 1..4
 * the profile's length n (little-endian), n profile bytes (its checksum is
 * always recomputed), then the container.  A profile, and the coder for each
 * grid and header a container pairs with it, are built once per process
 * (fuzz_profile.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "codec/profile/profile.h"
#include "codec/wzx/wzx.h"
#include "tests/fuzz/fuzz_profile.h"

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

/* wzc_wzx_coder_for's answer for this header and profile, memoized: it
 * depends on nothing else, and building the coder is the slow part. */
typedef struct {
	wz_err err;
	wzc_wzx *x;
} coder_answer;

static void free_answer(void *a)
{
	if (a)
		wzc_wzx_free(((coder_answer *)a)->x);
	free(a);
}

static wzc_wzx *coder_for(const wzc_wzx_reader *r, const wzc_profile *prof)
{
	const wzc_wzx_info *in = wzc_wzx_reader_info(r);
	struct {
		int L, R, P, record_bytes;
		uint64_t profile_hash;
		char model[sizeof in->model];
	} k;
	memset(&k, 0, sizeof k);
	k.L = in->L;
	k.R = in->R;
	k.P = in->P;
	k.record_bytes = (int)in->record_bytes;
	k.profile_hash = in->profile_hash;
	memcpy(k.model, in->model, sizeof k.model);
	uint64_t key = XXH3_64bits(&k, sizeof k);
	int found;
	coder_answer *a = fuzz_memo_get(prof, key, &found);
	if (!found) {
		a = calloc(1, sizeof *a);
		if (a)
			a->err = wzc_wzx_coder_for(r, prof, &a->x, NULL);
		fuzz_memo_put(prof, key, a, free_answer);
	}
	return a && !a->err ? a->x : NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 5)
		return 0;
	int flags = data[0];
	size_t n = fuzz_profile_len(data, size);
	size_t nc = size - 5 - n;
	const wzc_profile *prof = fuzz_profile_get(data + 5, n);
	uint8_t *cont = malloc(nc ? nc : 1);
	if (!cont)
		return 0;
	memcpy(cont, data + 5 + n, nc);
	if (flags & 1)
		reseal(cont, nc);
	wzc_wzx_reader *r = NULL;
	if (wzc_wzx_open(cont, nc, "fuzz", &r, NULL))
		goto out;
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
	    (x = coder_for(r, prof))) {
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
	}
	wzc_wzx_reader_free(r);
out:
	free(cont);
	return 0;
}
