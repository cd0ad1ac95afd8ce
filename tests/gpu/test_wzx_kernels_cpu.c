/* The CUDA restore of wzx type 5 and 6 blocks (codec/cuda/wzx_kernels.cu)
 * run on the CPU: the kernel's warp emulated lane by lane with the same steps
 * (codec/cuda/wzx_restore.h), the ballot's prefix count by a loop, the
 * lanes of each round in both orders; its records and verdicts against the
 * CPU reference's on valid, bit-flipped and cut blocks (tests/gpu/wzx_blocks.h). */
#include "tests/tap.h"

#include "codec/cuda/wzx_restore.h"
#include "tests/gpu/wzx_blocks.h"

/* The kernel's block b; its verdict, the records into out + rec_off[b]. */
static int emulate(const wzx_blockset *s, int b, int reverse, uint16_t *dig, uint8_t *out)
{
	const wzx_rec5 *p = s->plan;
	const uint8_t *pl = s->pay + s->off[b];
	size_t sz = s->size[b], pos = 4 * WZK_WZX_LANES;
	int n = s->ntok[b];
	int bad = sz < 4 * WZK_WZX_LANES || n < 1 || n > WZK_WZX_TOKENS;
	uint32_t x[WZK_WZX_LANES];
	for (int l = 0; l < WZK_WZX_LANES; l++)
		x[l] = bad ? 0 : wzk_wzx5_state(pl, l);
	long N = (long)n * p->S5;
	for (long base = 0; !bad && base < N; base += WZK_WZX_LANES) {
		unsigned m = 0;
		for (int i = 0; i < WZK_WZX_LANES; i++) {
			int l = reverse ? WZK_WZX_LANES - 1 - i : i;
			m |= (unsigned)wzk_wzx5_lane(p, s->plan6, n, base, N, l, &x[l], dig) << l;
		}
		for (int i = 0; i < WZK_WZX_LANES; i++) {
			int l = reverse ? WZK_WZX_LANES - 1 - i : i;
			if (m >> l & 1)
				bad |= wzk_wzx5_refill(&x[l], pl, sz, pos, __builtin_popcount(m & ((1u << l) - 1)));
		}
		pos += 2 * (size_t)__builtin_popcount(m);
	}
	int ok = !bad && pos == sz;
	for (int l = 0; l < WZK_WZX_LANES; l++)
		ok &= x[l] == (1u << 16);
	for (int k = 0; ok && k < n; k++)
		wzc_wzx_rec5_token(p, dig, n, k, out + s->rec_off[b] + (size_t)k * p->B);
	return ok ? 0 : -1;
}

static void one(wzt_family fam, const char *rate, int T, int type)
{
	wzx_blockset s;
	if (!ok(!wzx_blockset_make(&s, fam, rate, T, type), "%s %s: %d tokens coded as type %d blocks",
		wzt_family_name(fam), rate, T, type))
		return;
	uint16_t *dig = malloc(sizeof *dig * (size_t)s.plan->S5 * WZK_WZX_TOKENS);
	uint8_t *out = calloc(s.rec_bytes, 1);
	int same = dig && out, refused = 0;
	for (int reverse = 0; same && reverse < 2; reverse++)
		for (int b = 0; b < s.nblk; b++) {
			memset(out + s.rec_off[b], 0, (size_t)s.ntok[b] * s.B);
			int v = emulate(&s, b, reverse, dig, out);
			refused += v != 0 && !reverse;
			same &= v == s.want_verdict[b] &&
				!memcmp(out + s.rec_off[b], s.want + s.rec_off[b], (size_t)s.ntok[b] * s.B);
		}
	ok(same, "%s %s, type %d: the warp emulated, lanes both ways: %d blocks (%d damaged, %d refused), "
		 "the reference's records and verdicts", wzt_family_name(fam), rate, type, s.nblk, s.ndamaged, refused);
	free(dig);
	free(out);
	wzx_blockset_free(&s);
}

int main(void)
{
	for (int type = 5; type <= 6; type++) {
		one(WZT_FAMILY_MLA_B, "wzx-5.4", 300, type);
		one(WZT_FAMILY_MLA_A, "wz-4.97", 150, type);
		one(WZT_FAMILY_IID, "wz-5.44", 64, type);
		one(WZT_FAMILY_MLA_A, "wz-2", 100, type);
	}
	/* counts over 4096: type 6's uniform places (no type 5 there) */
	one(WZT_FAMILY_MLA_B, "wz-8", 100, 6);
	return tap_done();
}
