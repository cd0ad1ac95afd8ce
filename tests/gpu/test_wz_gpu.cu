/* GPU test of the codec's CUDA kernels against the C reference: batched
 * encode into shuffled 64-token paged slots writes the reference's bytes and
 * decode of any set of slots gives its floats bit for bit, for bf16,
 * fp8-mix, fp8-ds-mla, int4-g64 and nvfp4 on the three synthetic families
 * and on adversarial tokens; wz-R decode into the transformed domain equals
 * the reference's on encoded and random records, and for a profile that
 * undoes RoPE the position part turned forward at each token's position;
 * the fused attention kernel agrees with its CPU emulation (which
 * test_attention_cpu checks against a double reference), RoPE undone
 * too; the wzx restore kernel gives the CPU reference's records and
 * verdicts on type 5 blocks, valid, bit-flipped and cut; the wze decode
 * kernel gives the CPU decoder's coefficients bit for bit on encoded and
 * random records.
 * Prints TAP, and with $WZ_GPU_RESULTS appends one "check" row per check
 * (docs/gpu-results.md).  Without a CUDA device it skips (exit 77). */
#include <math.h>

#include "tests/gpu/gpu_check.h"
#include "tests/gpu/emulate.h"
#include "tests/gpu/inputs.h"
#include "tests/gpu/wzx_blocks.h"
#include "codec/cuda/wzx_kernels.h"
#include "codec/cuda/wze_kernels.h"
extern "C" {
#include "codec/codec_internal.h"
#include "codec/wze/wze.h"
}

static int n_ok, n_fail;
static FILE *results;

static void check(int cond, const char *format, const char *op, const char *what)
{
	printf("%sok %d - %s %s: %s\n", cond ? "" : "not ", n_ok + n_fail + 1, format, op, what);
	cond ? n_ok++ : n_fail++;
	gpu_row(results, "check", format, op, -1, -1, -1, cond ? 1 : 0, cond ? "pass" : "FAIL", what);
}

static const struct {
	const char *name;
	int id;
} baselines[] = {
	{ "bf16", WZK_BF16 }, { "fp8-mix", WZK_FP8_MIX }, { "fp8-ds-mla", WZK_FP8_DS_MLA },
	{ "int4-g64", WZK_INT4_G64 }, { "nvfp4", WZK_NVFP4 },
};

/* Encode and decode n tokens on the GPU and with the C reference. */
static void check_baseline(int b, int R, int P, int n, const float *lat, const float *rope,
			   const char *what)
{
	wzc_format fmt;
	wzc_codec *c = NULL;
	if (wzc_format_parse(baselines[b].name, &fmt, NULL) ||
	    wzc_codec_new(&fmt, 1, R, P, NULL, &c, NULL)) {
		check(0, baselines[b].name, "codec", what);
		return;
	}
	size_t rb = wzc_codec_record_bytes(c);
	int npages = (n + WZK_PAGE_TOKENS - 1) / WZK_PAGE_TOKENS + 1;
	size_t nslots = (size_t)npages * WZK_PAGE_TOKENS;
	int64_t *slots = shuffled_slots(n, npages);
	uint8_t *ref = (uint8_t *)malloc(rb * n), *pool = (uint8_t *)malloc(rb * nslots);
	float *rl = (float *)malloc(sizeof(float) * n * R), *rr = (float *)malloc(sizeof(float) * n * (P + 1));
	float *gl = (float *)malloc(sizeof(float) * n * R), *gr = (float *)malloc(sizeof(float) * n * (P + 1));
	wzc_encode_layer(c, 0, n, lat, rope, ref, NULL);
	if (wzc_decode_layer(c, 0, n, ref, rl, rr))
		check(0, baselines[b].name, "decode", "the reference decode (out of memory)");
	float *dl = dev_copy(lat, (size_t)n * R), *dr = dev_copy(rope, (size_t)n * P);
	float *dol = dev_alloc<float>((size_t)n * R), *dor = dev_alloc<float>((size_t)n * P);
	int64_t *ds = dev_copy(slots, (size_t)n);
	uint8_t *dp = dev_alloc<uint8_t>(rb * nslots);
	int rc = !dl || !dr || !dol || !dor || !ds || !dp || wzk_cuda_record_bytes(baselines[b].id, R, P) != rb;
	rc = rc || cudaMemset(dp, 0, rb * nslots) ||
	     wzk_cuda_encode(baselines[b].id, R, P, n, dl, dr, ds, dp) ||
	     cudaDeviceSynchronize() || host_copy(pool, dp, rb * nslots);
	int same = !rc;
	for (int i = 0; i < n && same; i++)
		same = !memcmp(pool + (size_t)slots[i] * rb, ref + (size_t)i * rb, rb);
	check(same, baselines[b].name, "encode", what);
	rc = rc || wzk_cuda_decode(baselines[b].id, R, P, n, ds, dp, dol, dor) ||
	     cudaDeviceSynchronize() || host_copy(gl, dol, sizeof(float) * n * R) ||
	     host_copy(gr, dor, sizeof(float) * n * P);
	check(!rc && !memcmp(gl, rl, sizeof(float) * n * R) && !memcmp(gr, rr, sizeof(float) * n * P),
	      baselines[b].name, "decode", what);
	cudaFree(dl);
	cudaFree(dr);
	cudaFree(dol);
	cudaFree(dor);
	cudaFree(ds);
	cudaFree(dp);
	free(slots);
	free(ref);
	free(pool);
	free(rl);
	free(rr);
	free(gl);
	free(gr);
	wzc_codec_free(c);
}

/* wz-R: GPU paged decode against the reference's transformed decode. */
static void check_wz(wzt_family fam, const wzc_profile *prof, const char *rate)
{
	char what[96];
	snprintf(what, sizeof what, "synthetic %s: transformed decode = reference (encoded and random records)",
		 wzt_family_name(fam));
	wzt_cache_trace *tst = gpu_synth(fam, 1, 1000, 0, 0, 4096, 2, "test");
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzc_wz_flat *flat = NULL;
	wzc_cuda_wz *dplan = NULL;
	if (!tst || !prof || wzc_format_parse(rate, &fmt, NULL) ||
	    wzc_codec_new(&fmt, 1, tst->R, tst->P, prof, &c, NULL) || wzc_wz_flatten(c, 0, &flat, NULL) ||
	    wzc_cuda_wz_upload(flat, &dplan)) {
		check(0, rate, "decode", what);
		return;
	}
	int R = tst->R, P = tst->P, nv = R + P, n = tst->T, ntot = n + 256;
	size_t rb = wzc_codec_record_bytes(c);
	int npages = (ntot + WZK_PAGE_TOKENS - 1) / WZK_PAGE_TOKENS + 1;
	size_t nslots = (size_t)npages * WZK_PAGE_TOKENS;
	int64_t *slots = shuffled_slots(ntot, npages);
	uint8_t *rec = (uint8_t *)malloc(rb * ntot), *pool = (uint8_t *)calloc(nslots, rb);
	float *want = (float *)malloc(sizeof(float) * ntot * nv), *got = (float *)malloc(sizeof(float) * ntot * nv);
	wzc_encode_layer(c, 0, n, tst->latent, tst->rope, rec, NULL);
	for (size_t i = rb * n; i < rb * ntot; i++)
		rec[i] = (uint8_t)next_u64();
	for (int i = 0; i < ntot; i++) {
		memcpy(pool + (size_t)slots[i] * rb, rec + (size_t)i * rb, rb);
		wzc_wz_decode_token_transformed(c, 0, rec + (size_t)i * rb, want + (size_t)i * nv,
						want + (size_t)i * nv + R);
	}
	uint8_t *dp = dev_copy(pool, rb * nslots);
	int64_t *ds = dev_copy(slots, (size_t)ntot);
	float *dout = dev_alloc<float>((size_t)ntot * nv);
	int rc = !dp || !ds || !dout || wzc_cuda_wz_decode_slots(dplan, ntot, ds, dp, dout) ||
		 cudaDeviceSynchronize() || host_copy(got, dout, sizeof(float) * ntot * nv);
	check(!rc && !memcmp(got, want, sizeof(float) * ntot * nv), rate, "decode", what);
	cudaFree(dp);
	cudaFree(ds);
	cudaFree(dout);
	free(slots);
	free(rec);
	free(pool);
	free(want);
	free(got);
	wzc_cuda_wz_free(dplan);
	wzc_wz_flat_free(flat);
	wzc_codec_free(c);
	wzt_cache_trace_free(tst);
}

/* wz-R of a profile that undoes RoPE: the GPU paged decode at each
 * token's position against its CPU emulation (which test_kernels_cpu
 * checks bit for bit against the reference): the latent bit for bit, the
 * position part within one unit in the last place (CUDA's cos and sin
 * against libm's; codec/profile/rope.h), on encoded tokens from position 70,000
 * and random records at random positions. */
static void check_wz_rope(wzt_family fam, const wzc_profile *prof, const char *rate)
{
	char what[224];
	wzt_cache_trace *tst = gpu_synth(fam, 1, 1000, 0, 0, 70000, 2, "test");
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzc_wz_flat *flat = NULL;
	wzc_cuda_wz *dplan = NULL;
	if (!tst || !prof || wzc_format_parse(rate, &fmt, NULL) ||
	    wzc_codec_new(&fmt, 1, tst->R, tst->P, prof, &c, NULL) || wzc_wz_flatten(c, 0, &flat, NULL) ||
	    !flat->rope_undone || wzc_cuda_wz_upload(flat, &dplan)) {
		check(0, rate, "decode", "RoPE undone: set-up");
		wzc_wz_flat_free(flat);
		wzc_codec_free(c);
		wzt_cache_trace_free(tst);
		return;
	}
	int R = tst->R, P = tst->P, nv = R + P, n = tst->T, ntot = n + 256;
	size_t rb = wzc_codec_record_bytes(c);
	int npages = (ntot + WZK_PAGE_TOKENS - 1) / WZK_PAGE_TOKENS + 1;
	size_t nslots = (size_t)npages * WZK_PAGE_TOKENS;
	int64_t *slots = shuffled_slots(ntot, npages), *pos = (int64_t *)malloc(sizeof(int64_t) * ntot);
	uint8_t *rec = (uint8_t *)malloc(rb * ntot), *pool = (uint8_t *)calloc(nslots, rb);
	float *want = (float *)malloc(sizeof(float) * ntot * nv), *got = (float *)malloc(sizeof(float) * ntot * nv);
	for (int i = 0; i < ntot; i++)
		pos[i] = i < n ? tst->positions[i] : (int64_t)(next_u64() >> 24);
	wzc_encode_layer_at(c, 0, n, tst->latent, tst->rope, pos, rec, NULL);
	for (size_t i = rb * n; i < rb * ntot; i++)
		rec[i] = (uint8_t)next_u64();
	for (int i = 0; i < ntot; i++)
		memcpy(pool + (size_t)slots[i] * rb, rec + (size_t)i * rb, rb);
	wzk_wz_dec_args ea = { *flat, ntot, slots, pool, want, pos };
	int rc = emu_wz_decode(&ea);
	uint8_t *dp = dev_copy(pool, rb * nslots);
	int64_t *ds = dev_copy(slots, (size_t)ntot), *dpos = dev_copy(pos, (size_t)ntot);
	float *dout = dev_alloc<float>((size_t)ntot * nv);
	rc = rc || !dp || !ds || !dpos || !dout ||
	     wzc_cuda_wz_decode_slots_at(dplan, ntot, ds, dpos, dp, dout) || cudaDeviceSynchronize() ||
	     host_copy(got, dout, sizeof(float) * ntot * nv);
	int latent_same = !rc;
	long ulp1 = 0, worse = 0;
	for (int i = 0; i < ntot && !rc; i++) {
		latent_same &= !memcmp(got + (size_t)i * nv, want + (size_t)i * nv, sizeof(float) * R);
		for (int k = R; k < nv; k++) {
			float g = got[(size_t)i * nv + k], w = want[(size_t)i * nv + k];
			if (memcmp(&g, &w, sizeof g) == 0)
				continue;
			int32_t gi, wi;
			memcpy(&gi, &g, 4);
			memcpy(&wi, &w, 4);
			long d = (long)gi - (long)wi;
			(d == 1 || d == -1) ? ulp1++ : worse++;
		}
	}
	snprintf(what, sizeof what, "synthetic %s, RoPE undone: paged decode at each position = emulation "
		 "(latent bit for bit; position part: %ld values 1 ulp off, %ld more)",
		 wzt_family_name(fam), ulp1, worse);
	check(!rc && latent_same && worse == 0, rate, "decode", what);
	cudaFree(dp);
	cudaFree(ds);
	cudaFree(dpos);
	cudaFree(dout);
	free(slots);
	free(pos);
	free(rec);
	free(pool);
	free(want);
	free(got);
	wzc_cuda_wz_free(dplan);
	wzc_wz_flat_free(flat);
	wzc_codec_free(c);
	wzt_cache_trace_free(tst);
}

/* Fused attention on the GPU against the CPU emulation of the same kernel
 * (which tests/gpu/test_attention_cpu checks against a double reference):
 * they differ only by the GPU's expf, so within 1e-5 of the output RMS. */
static void check_attention(const wzc_profile *prof, const char *name)
{
	enum { B = 3, H = 40, CH = 64, MAXP = 8 };
	static const int32_t ctx[B] = { 1, 130, 500 };
	wzt_cache_trace *tst = gpu_synth(WZT_FAMILY_MLA_B, 1, 500, B, H, 2048, 3, "test");
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzc_wz_flat *flat = NULL;
	wzc_cuda_wz *dplan = NULL;
	if (!tst || wzc_format_parse(name, &fmt, NULL) ||
	    wzc_codec_new(&fmt, 1, tst->R, tst->P, prof, &c, NULL) ||
	    ((fmt.id == WZC_FMT_WZ || wzc_format_trellis_nu(fmt.id)) &&
	     (wzc_wz_flatten(c, 0, &flat, NULL) || wzc_cuda_wz_upload(flat, &dplan)))) {
		check(0, name, "attention", "set-up");
		return;
	}
	int R = tst->R, P = tst->P, nv = R + P, T = tst->T;
	size_t rb = wzc_codec_record_bytes(c);
	uint8_t *rec = (uint8_t *)malloc(rb * T);
	wzc_encode_layer(c, 0, T, tst->latent, tst->rope, rec, NULL);
	/* sequence b's page p is physical page b * MAXP + (MAXP - 1 - p) */
	int32_t pages[B][MAXP];
	uint8_t *pool = (uint8_t *)calloc((size_t)B * MAXP * WZK_PAGE_TOKENS, rb);
	for (int b = 0; b < B; b++)
		for (int p = 0; p < MAXP; p++) {
			pages[b][p] = b * MAXP + (MAXP - 1 - p);
			for (int i = 0; i < WZK_PAGE_TOKENS && p * WZK_PAGE_TOKENS + i < ctx[b]; i++)
				memcpy(pool + ((size_t)pages[b][p] * WZK_PAGE_TOKENS + i) * rb,
				       rec + (size_t)(p * WZK_PAGE_TOKENS + i) * rb, rb);
		}
	float *q = (float *)malloc(sizeof(float) * B * H * nv);
	for (int bh = 0; bh < B * H; bh++) {
		memcpy(q + (size_t)bh * nv, tst->q_latent + (size_t)bh * R, sizeof(float) * R);
		memcpy(q + (size_t)bh * nv + R, tst->q_rope + (size_t)bh * P, sizeof(float) * P);
	}
	if (flat) /* rotated on the host here; the benchmark times wzk_cuda_rotate */
		for (int bh = 0; bh < B * H; bh++) {
			float tmp[1024];
			for (int k = 0; k < R; k++)
				tmp[k] = wzk_rotate_value(R, prof->latent[0].basis, 0, q + (size_t)bh * nv, NULL, k);
			/* with RoPE undone the position part stays as cached */
			for (int k = 0; k < P; k++)
				tmp[R + k] = flat->rope_undone ? q[(size_t)bh * nv + R + k]
					   : wzk_rotate_value(P, prof->rope[0].basis, 0, q + (size_t)bh * nv + R, NULL, k);
			memcpy(q + (size_t)bh * nv, tmp, sizeof(float) * nv);
		}
	int nsplit = (ctx[B - 1] + CH - 1) / CH;
	wzk_att_args a;
	memset(&a, 0, sizeof a);
	a.fmt = flat ? WZK_FMT_WZ : (int)fmt.id;
	a.l = wzk_layout_of(a.fmt, R, P);
	if (flat) {
		a.f = *flat;
		a.l.R = R;
		a.l.P = P;
		a.l.rb = (int)rb;
	}
	a.R = R;
	a.P = P;
	a.H = H;
	a.B = B;
	a.ctx_len = ctx;
	a.pages = &pages[0][0];
	a.max_pages = MAXP;
	a.pool = pool;
	a.q = q;
	a.scale = (float)tst->softmax_scale;
	a.chunk = CH;
	a.nsplit = nsplit;
	size_t no = (size_t)B * H * R;
	float *po = (float *)malloc(sizeof(float) * no * nsplit), *pml = (float *)malloc(sizeof(float) * B * H * nsplit * 2);
	float *want = (float *)malloc(sizeof(float) * no), *got = (float *)malloc(sizeof(float) * no);
	a.part_o = po;
	a.part_ml = pml;
	emu_attention(&a, want);
	wzk_cuda_attention_args g;
	memset(&g, 0, sizeof g);
	g.fmt = a.fmt;
	g.wz = dplan;
	g.R = R;
	g.P = P;
	g.H = H;
	g.B = B;
	g.max_pages = MAXP;
	g.scale = a.scale;
	g.chunk = CH;
	g.nsplit = nsplit;
	int32_t *dctx = dev_copy(ctx, B), *dpages = dev_copy(&pages[0][0], (size_t)B * MAXP);
	uint8_t *dpool = dev_copy(pool, (size_t)B * MAXP * WZK_PAGE_TOKENS * rb);
	float *dq = dev_copy(q, (size_t)B * H * nv);
	float *dwork = dev_alloc<float>(wzk_cuda_attention_work_floats(B, H, R, nsplit));
	float *dout = dev_alloc<float>(no);
	g.ctx_len = dctx;
	g.pages = dpages;
	g.pool = dpool;
	g.q = dq;
	g.work = dwork;
	g.out = dout;
	int rc = !dctx || !dpages || !dpool || !dq || !dwork || !dout || wzk_cuda_attention(&g) ||
		 cudaDeviceSynchronize() || host_copy(got, dout, sizeof(float) * no);
	double worst = rc ? INFINITY : 0;
	for (int bh = 0; bh < B * H && !rc; bh++) {
		double ss = 0, e = 0;
		for (int k = 0; k < R; k++) {
			double w = want[(size_t)bh * R + k];
			ss += w * w;
			e = fmax(e, fabs(got[(size_t)bh * R + k] - w));
		}
		worst = fmax(worst, e / sqrt(ss / R + 1e-30));
	}
	char what[160];
	snprintf(what, sizeof what, "GPU fused attention = its CPU emulation within 1e-5 of the output RMS%s (largest %.2e)",
		 flat && flat->rope_undone ? ", RoPE undone" : "", worst);
	check(worst <= 1e-5, name, "attention", what);
	cudaFree(dctx);
	cudaFree(dpages);
	cudaFree(dpool);
	cudaFree(dq);
	cudaFree(dwork);
	cudaFree(dout);
	free(po);
	free(pml);
	free(want);
	free(got);
	free(q);
	free(rec);
	free(pool);
	wzc_cuda_wz_free(dplan);
	wzc_wz_flat_free(flat);
	wzc_codec_free(c);
	wzt_cache_trace_free(tst);
}

/* wzx type 5 or 6 blocks restored to records on the GPU
 * (codec/cuda/wzx_kernels.cu) against the CPU reference: records bit for
 * bit, the same verdicts. */
static void check_wzx(wzt_family fam, const char *rate, int T, int type)
{
	char what[160];
	wzx_blockset s;
	if (wzx_blockset_make(&s, fam, rate, T, type)) {
		check(0, rate, "wzx restore", "set-up");
		return;
	}
	wzk_wzx5 *plan = NULL;
	uint8_t *dpay = NULL, *drec = NULL;
	size_t *doff = NULL, *dsize = NULL, *drec_off = NULL;
	int *dntok = NULL, *dverdict = NULL;
	int *verdict = (int *)malloc(sizeof(int) * s.nblk);
	uint8_t *got = (uint8_t *)malloc(s.rec_bytes);
	int rc = !verdict || !got || (type == 6 ? wzk_wzx6_upload(s.plan, s.plan6, &plan) : wzk_wzx5_upload(s.plan, &plan)) ||
		 cudaMalloc(&dpay, s.bytes + 1) || cudaMalloc(&drec, s.rec_bytes) ||
		 cudaMalloc(&doff, sizeof(size_t) * s.nblk) || cudaMalloc(&dsize, sizeof(size_t) * s.nblk) ||
		 cudaMalloc(&drec_off, sizeof(size_t) * s.nblk) || cudaMalloc(&dntok, sizeof(int) * s.nblk) ||
		 cudaMalloc(&dverdict, sizeof(int) * s.nblk) ||
		 cudaMemcpy(dpay, s.pay, s.bytes, cudaMemcpyHostToDevice) ||
		 cudaMemset(drec, 0, s.rec_bytes) ||
		 cudaMemcpy(doff, s.off, sizeof(size_t) * s.nblk, cudaMemcpyHostToDevice) ||
		 cudaMemcpy(dsize, s.size, sizeof(size_t) * s.nblk, cudaMemcpyHostToDevice) ||
		 cudaMemcpy(drec_off, s.rec_off, sizeof(size_t) * s.nblk, cudaMemcpyHostToDevice) ||
		 cudaMemcpy(dntok, s.ntok, sizeof(int) * s.nblk, cudaMemcpyHostToDevice) ||
		 wzk_wzx5_records(plan, s.nblk, dpay, doff, dsize, dntok, drec, drec_off, dverdict) ||
		 cudaMemcpy(got, drec, s.rec_bytes, cudaMemcpyDeviceToHost) ||
		 cudaMemcpy(verdict, dverdict, sizeof(int) * s.nblk, cudaMemcpyDeviceToHost);
	int same = !rc, refused = 0;
	for (int b = 0; same && b < s.nblk; b++) {
		refused += verdict[b] != 0;
		same &= verdict[b] == s.want_verdict[b] &&
			(verdict[b] || !memcmp(got + s.rec_off[b], s.want + s.rec_off[b], (size_t)s.ntok[b] * s.B));
	}
	snprintf(what, sizeof what, "%s, type %d, %d blocks (%d damaged, %d refused): the CPU reference's records and verdicts",
		 wzt_family_name(fam), type, s.nblk, s.ndamaged, refused);
	check(same, rate, "wzx restore", what);
	cudaFree(dpay);
	cudaFree(drec);
	cudaFree(doff);
	cudaFree(dsize);
	cudaFree(drec_off);
	cudaFree(dntok);
	cudaFree(dverdict);
	wzk_wzx5_free(plan);
	free(verdict);
	free(got);
	wzx_blockset_free(&s);
}

/* wze-R: the GPU decode into the coefficient domain against the CPU
 * decoder's (its body is the same wze_core.h function), on encoded and
 * random records. */
static void check_wze(wzt_family fam, const wzc_profile *prof, const char *rate)
{
	char what[96];
	snprintf(what, sizeof what, "synthetic %s: wze decode = reference (encoded and random records)",
		 wzt_family_name(fam));
	wzt_cache_trace *tst = gpu_synth(fam, 1, 1000, 0, 0, 4096, 2, "test");
	wzc_format fmt;
	wzc_codec *c = NULL;
	wzk_wze *dplan = NULL;
	size_t ncum = 0, nrec = 0, nent = 0;
	if (!tst || !prof || wzc_format_parse(rate, &fmt, NULL) ||
	    wzc_codec_new(&fmt, 1, tst->R, tst->P, prof, &c, NULL) || !c->wze) {
		check(0, rate, "decode", what);
		wzc_codec_free(c);
		wzt_cache_trace_free(tst);
		return;
	}
	wze_layer_view v = wzc_wze_view(c->wze, 0);
	wzc_wze_view_sizes(c->wze, 0, &ncum, &nrec, &nent);
	int R = tst->R, P = tst->P, nv = R + P, n = tst->T, ntot = n + 256;
	size_t rb = wzc_codec_record_bytes(c);
	uint8_t *rec = (uint8_t *)malloc(rb * ntot);
	float *want = (float *)malloc(sizeof(float) * ntot * nv), *got = (float *)malloc(sizeof(float) * ntot * nv);
	const wzc_format_info *info = wzc_format_info_of(fmt.id);
	wzc_encode_layer(c, 0, n, tst->latent, tst->rope, rec, NULL);
	for (size_t i = rb * n; i < rb * ntot; i++)
		rec[i] = (uint8_t)next_u64();
	int decoded = 1;
	for (int i = 0; i < ntot; i++)
		decoded &= !info->decode_token(c, 0, rec + (size_t)i * rb, want + (size_t)i * nv,
					       want + (size_t)i * nv + R, 1);
	uint8_t *dr = dev_copy(rec, rb * ntot);
	float *dout = dev_alloc<float>((size_t)ntot * nv);
	int rc = !decoded || wzk_wze_upload(&v, ncum, nrec, nent, &dplan) || !dr || !dout ||
		 wzk_wze_decode(dplan, ntot, NULL, dr, (uint32_t)rb, dout) || cudaDeviceSynchronize() ||
		 host_copy(got, dout, sizeof(float) * ntot * nv);
	check(!rc && !memcmp(got, want, sizeof(float) * ntot * nv), rate, "decode", what);
	cudaFree(dr);
	cudaFree(dout);
	free(rec);
	free(want);
	free(got);
	wzk_wze_free(dplan);
	wzc_codec_free(c);
	wzt_cache_trace_free(tst);
}

int main(void)
{
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("1..0 # SKIP no CUDA device\n");
		return 77;
	}
	results = gpu_results();
	static const wzt_family fams[] = { WZT_FAMILY_IID, WZT_FAMILY_MLA_A, WZT_FAMILY_MLA_B };
	for (int f = 0; f < 3; f++) {
		wzt_cache_trace *t = gpu_synth(fams[f], 1, 2003, 0, 0, 100, 5, "test");
		char what[64];
		snprintf(what, sizeof what, "synthetic %s", wzt_family_name(fams[f]));
		for (int b = 0; b < 5 && t; b++)
			check_baseline(b, t->R, t->P, t->T, t->latent, t->rope, what);
		wzt_cache_trace_free(t);
	}
	const int R = 512, P = 64, n = 8 * 21 * 3;
	float *lat = (float *)malloc(sizeof(float) * n * R), *rope = (float *)malloc(sizeof(float) * n * P);
	adversarial(R, P, n, lat, rope);
	for (int b = 0; b < 5; b++)
		check_baseline(b, R, P, n, lat, rope, "zeros subnormals huge NaN Inf");
	free(lat);
	free(rope);
	/* wz, then the trellis-coded formats (8, 32 and 256 states) */
	static const char *rates[] = { "wz-4.97", "wz-5.44", "wz-6.31", "wzt8-4.97", "wzt8-5.44",
				       "wzt32-5.44", "wzt-5.44" };
	wzc_profile *mlab = NULL;
	for (int f = 0; f < 3; f++) {
		wzc_profile *prof = gpu_profile(fams[f]);
		for (int r = 0; r < 7; r++)
			check_wz(fams[f], prof, rates[r]);
		check_wze(fams[f], prof, "wze-4.97");
		check_wze(fams[f], prof, "wze-5.44");
		if (fams[f] == WZT_FAMILY_MLA_B)
			mlab = prof;
		else
			wzc_profile_free(prof);
	}
	check_attention(mlab, "bf16");
	check_attention(mlab, "fp8-mix");
	check_attention(mlab, "wz-5.44");
	check_attention(mlab, "wzt8-5.44");
	wzc_profile_free(mlab);
	static const wzt_family rfams[] = { WZT_FAMILY_MLA_A, WZT_FAMILY_MLA_B };
	for (int f = 0; f < 2; f++) {
		wzc_profile *prof = gpu_profile_rope(rfams[f], 1);
		check_wz_rope(rfams[f], prof, "wz-5.44");
		if (rfams[f] == WZT_FAMILY_MLA_B)
			check_attention(prof, "wz-5.44");
		wzc_profile_free(prof);
	}
	for (int type = 5; type <= 6; type++) {
		check_wzx(WZT_FAMILY_MLA_B, "wzx-5.4", 1000, type);
		check_wzx(WZT_FAMILY_MLA_A, "wz-4.97", 300, type);
		check_wzx(WZT_FAMILY_IID, "wz-5.44", 130, type);
	}
	check_wzx(WZT_FAMILY_MLA_B, "wz-8", 300, 6); /* counts over 4096: uniform places */
	printf("1..%d\n", n_ok + n_fail);
	if (results)
		fclose(results);
	return n_fail ? 1 : 0;
}
