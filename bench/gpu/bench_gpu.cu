/* GPU benchmark: the device's copy bandwidth (the reference, measured in
 * the same run), each GPU-tier format's paged decode and encode rate
 * beside it, and the fused decode attention's time per step for bf16,
 * fp8-mix and wz-5.44 over batch sizes and context lengths with 128 heads
 * (DeepSeek-V3 shapes), with the FLOP and byte rooflines beside each point,
 * and the decode cost factor the simulator reads.  All times are medians
 * of CUDA-event timings after warm-up, on data several times the L2 size.
 * Writes the rows of docs/gpu-results.md to $WZ_GPU_RESULTS (or stdout).
 *
 *   bench_gpu [--quick]     --quick: fewer points, for a smoke run */
#include <algorithm>
#include <math.h>
#include <vector>

#include "tests/gpu/gpu_check.h"
#include "codec/cuda/attn_tiles.h"

static FILE *out;

#define CK(x)                                                                              \
	do {                                                                               \
		int e_ = (int)(x);                                                         \
		if (e_) {                                                                  \
			fprintf(stderr, "bench_gpu: %s failed: %s (line %d)\n", #x,        \
				cudaGetErrorString((cudaError_t)e_), __LINE__);            \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

/* Median milliseconds of reps timed runs of fn after warm warm-up runs. */
template <typename F> static double time_ms(int warm, int reps, F fn)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < warm; i++)
		fn();
	CK(cudaDeviceSynchronize());
	std::vector<float> t;
	for (int i = 0; i < reps; i++) {
		CK(cudaEventRecord(a));
		fn();
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		float ms = 0;
		CK(cudaEventElapsedTime(&ms, a, b));
		t.push_back(ms);
	}
	CK(cudaGetLastError());
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	std::sort(t.begin(), t.end());
	return t[t.size() / 2];
}

/* Fills n device bytes by doubling copies of the first len (n >= len). */
static void replicate(uint8_t *d, size_t len, size_t n)
{
	for (size_t have = len; have < n;) {
		size_t c = std::min(have, n - have);
		CK(cudaMemcpy(d + have, d, c, cudaMemcpyDeviceToDevice));
		have += c;
	}
}

struct device_facts {
	char name[256];
	double copy_gbs;      /* measured, bytes read + written */
	double fp32_tflops;   /* SMs x 128 lanes x 2 x clock: the SIMT FMA peak */
	size_t l2;
};

static device_facts measure_device(void)
{
	device_facts d;
	cudaDeviceProp p;
	CK(cudaGetDeviceProperties(&p, 0));
	snprintf(d.name, sizeof d.name, "%s", p.name);
	int clock_khz = 0, sms = 0;
	CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	/* 128 FP32 lanes per SM on sm_80+ consumer and sm_90 parts (CUDA C
	 * Programming Guide, "Arithmetic Instructions" throughput table) */
	d.fp32_tflops = (double)sms * 128 * 2 * clock_khz * 1e3 / 1e12;
	d.l2 = (size_t)p.l2CacheSize;
	gpu_row(out, "device", "", "", -1, -1, -1, sms, "SMs", d.name);
	gpu_row(out, "device", "", "l2", -1, -1, -1, (double)d.l2 / 1048576.0, "MiB", "L2 cache size");
	gpu_row(out, "device", "", "fp32_peak", -1, -1, -1, d.fp32_tflops, "TFLOP/s",
		"SMs x 128 FP32 lanes x 2 x boost clock");
	size_t n = std::max((size_t)1 << 30, 16 * d.l2);
	uint8_t *a = dev_alloc<uint8_t>(n), *b = dev_alloc<uint8_t>(n);
	if (!a || !b) {
		fprintf(stderr, "bench_gpu: no memory for the copy reference\n");
		exit(1);
	}
	CK(cudaMemset(a, 1, n));
	double ms = time_ms(3, 20, [&] { CK(cudaMemcpy(b, a, n, cudaMemcpyDeviceToDevice)); });
	d.copy_gbs = 2.0 * n / (ms * 1e-3) / 1e9;
	char note[96];
	snprintf(note, sizeof note, "device-to-device copy of %zu MiB; read + write; median of 20", n >> 20);
	gpu_row(out, "copy", "", "copy", -1, -1, -1, d.copy_gbs, "GB/s", note);
	cudaFree(a);
	cudaFree(b);
	return d;
}

/* Paged decode and encode rates of every format on ntok tokens in shuffled
 * pages, as GB/s of bytes read + written and as a share of the copy rate. */
static void bench_codec(const device_facts &dev, const wzc_profile *prof,
			const wzc_profile *prof_rope, int ntok)
{
	const int R = 512, P = 64, nv = R + P;
	wzt_cache_trace *t = gpu_synth(WZT_FAMILY_MLA_B, 1, 4096, 0, 0, 0, 9, "test");
	if (!t)
		exit(1);
	std::vector<float> lat((size_t)ntok * R), rope((size_t)ntok * P);
	for (int i = 0; i < ntok; i++) {
		memcpy(&lat[(size_t)i * R], t->latent + (size_t)(i % t->T) * R, sizeof(float) * R);
		memcpy(&rope[(size_t)i * P], t->rope + (size_t)(i % t->T) * P, sizeof(float) * P);
	}
	/* pages in a random order, tokens in order within a page */
	int npages = (ntok + WZK_PAGE_TOKENS - 1) / WZK_PAGE_TOKENS;
	std::vector<int> perm(npages);
	for (int i = 0; i < npages; i++)
		perm[i] = i;
	uint64_t r = 12345;
	for (int i = npages - 1; i > 0; i--) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		std::swap(perm[i], perm[(int)((r >> 33) % (uint64_t)(i + 1))]);
	}
	std::vector<int64_t> slots(ntok);
	for (int i = 0; i < ntok; i++)
		slots[i] = (int64_t)perm[i / WZK_PAGE_TOKENS] * WZK_PAGE_TOKENS + i % WZK_PAGE_TOKENS;
	float *dl = dev_copy(lat.data(), lat.size()), *dr = dev_copy(rope.data(), rope.size());
	float *dol = dev_alloc<float>(lat.size()), *dor = dev_alloc<float>(rope.size());
	float *dout = dev_alloc<float>((size_t)ntok * nv);
	int64_t *ds = dev_copy(slots.data(), slots.size());
	uint8_t *dp = dev_alloc<uint8_t>((size_t)npages * WZK_PAGE_TOKENS * 1152);
	if (!dl || !dr || !dol || !dor || !dout || !ds || !dp) {
		fprintf(stderr, "bench_gpu: no memory for %d tokens\n", ntok);
		exit(1);
	}
	static const struct {
		const char *name;
		int id;
	} fm[] = { { "bf16", WZK_BF16 }, { "fp8-mix", WZK_FP8_MIX }, { "fp8-ds-mla", WZK_FP8_DS_MLA },
		   { "int4-g64", WZK_INT4_G64 }, { "nvfp4", WZK_NVFP4 } };
	char note[128];
	for (int f = 0; f < 5; f++) {
		size_t rb = wzk_cuda_record_bytes(fm[f].id, R, P);
		double bytes = (double)ntok * (rb + sizeof(float) * nv);
		double enc = time_ms(2, 10, [&] { CK(wzk_cuda_encode(fm[f].id, R, P, ntok, dl, dr, ds, dp)); });
		double dec = time_ms(2, 10, [&] { CK(wzk_cuda_decode(fm[f].id, R, P, ntok, ds, dp, dol, dor)); });
		double eg = bytes / (enc * 1e-3) / 1e9, dg = bytes / (dec * 1e-3) / 1e9;
		snprintf(note, sizeof note, "%d tokens in shuffled pages; f32 values; read + write; median of 10", ntok);
		gpu_row(out, "codec", fm[f].name, "encode", -1, -1, -1, eg, "GB/s", note);
		gpu_row(out, "codec", fm[f].name, "encode_share", -1, -1, -1, eg / dev.copy_gbs, "of copy", "");
		gpu_row(out, "codec", fm[f].name, "decode", -1, -1, -1, dg, "GB/s", note);
		gpu_row(out, "codec", fm[f].name, "decode_share", -1, -1, -1, dg / dev.copy_gbs, "of copy", "");
	}
	/* the fourth: a profile that undoes RoPE, whose position part decodes
	 * to the cache's domain (an inverse transform of 64 values and the
	 * pairs turned, per token); the last, the trellis-coded tier, whose
	 * state walks each token's digits on one thread */
	static const char *rates[] = { "wz-4.97", "wz-5.44", "wz-6.31", "wz-5.44", "wzt8-5.44" };
	static const char *labels[] = { "wz-4.97", "wz-5.44", "wz-6.31", "wz-5.44-rope-undone",
					"wzt8-5.44" };
	for (int i = 0; i < 5; i++) {
		wzc_format fmt;
		wzc_codec *c = NULL;
		wzc_wz_flat *flat = NULL;
		wzc_cuda_wz *plan = NULL;
		const wzc_profile *pr = i == 3 ? prof_rope : prof;
		if (!pr)
			continue;
		if (wzc_format_parse(rates[i], &fmt, NULL) || wzc_codec_new(&fmt, 1, R, P, pr, &c, NULL) ||
		    wzc_wz_flatten(c, 0, &flat, NULL) || wzc_cuda_wz_upload(flat, &plan))
			exit(1);
		size_t rb = wzc_codec_record_bytes(c);
		/* encoded once on the CPU (the GPU wz encoder is not written),
		 * replicated on the device */
		int nbase = std::min(ntok, 16384);
		std::vector<uint8_t> rec(rb * nbase);
		wzc_encode_layer(c, 0, nbase, lat.data(), rope.data(), rec.data(), NULL);
		CK(cudaMemcpy(dp, rec.data(), rec.size(), cudaMemcpyHostToDevice));
		replicate(dp, rec.size(), rb * (size_t)npages * WZK_PAGE_TOKENS);
		double dec = time_ms(2, 10, [&] { CK(wzc_cuda_wz_decode_slots(plan, ntok, ds, dp, dout)); });
		double dg = (double)ntok * (rb + sizeof(float) * nv) / (dec * 1e-3) / 1e9;
		snprintf(note, sizeof note, "%d tokens in shuffled pages; to the transformed domain in f32; median of 10", ntok);
		gpu_row(out, "codec", labels[i], "decode", -1, -1, -1, dg, "GB/s", note);
		gpu_row(out, "codec", labels[i], "decode_share", -1, -1, -1, dg / dev.copy_gbs, "of copy", "");
		wzc_cuda_wz_free(plan);
		wzc_wz_flat_free(flat);
		wzc_codec_free(c);
	}
	cudaFree(dl);
	cudaFree(dr);
	cudaFree(dol);
	cudaFree(dor);
	cudaFree(dout);
	cudaFree(ds);
	cudaFree(dp);
	wzt_cache_trace_free(t);
}

/* One format's attention set-up: records of every sequence's context in
 * their own pages, the queries and the work space. */
struct att_case {
	const char *name;
	int fmt;
	size_t rb;
	wzc_cuda_wz *plan;
	float *basis_l, *basis_r, *mean_l; /* device, wz only */
	uint8_t *pool;
};

static void bench_attention(const device_facts &dev, const wzc_profile *prof,
			    const wzc_profile *prof_rope, int quick)
{
	const int R = 512, P = 64, nv = R + P, H = 128;
	std::vector<int> batches = quick ? std::vector<int>{ 1, 16 } : std::vector<int>{ 1, 2, 4, 8, 16, 32, 64, 128 };
	std::vector<int> contexts = quick ? std::vector<int>{ 32768 } : std::vector<int>{ 32768, 131072 };
	int maxb = batches.back(), maxc = contexts.back(), max_pages = maxc / WZK_PAGE_TOKENS;
	size_t maxtok = (size_t)maxb * maxc;
	int sms = 0;
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
	wzt_cache_trace *t = gpu_synth(WZT_FAMILY_MLA_B, 1, 16384, 0, 0, 0, 11, "test");
	if (!t)
		exit(1);
	/* the last: wz-5.44 of a profile that undoes RoPE (the tile decode
	 * turns the position part into the cache's domain per token) */
	enum { NC = 4 };
	att_case cases[NC] = { { "wz-5.44", WZK_FMT_WZ, 0, NULL, NULL, NULL, NULL, NULL },
			       { "fp8-mix", WZK_FP8_MIX, 0, NULL, NULL, NULL, NULL, NULL },
			       { "bf16", WZK_BF16, 0, NULL, NULL, NULL, NULL, NULL },
			       { "wz-5.44-rope-undone", WZK_FMT_WZ, 0, NULL, NULL, NULL, NULL, NULL } };
	const wzc_profile *profs[NC] = { prof, prof, prof, prof_rope };
	int ncase = prof_rope ? NC : NC - 1;
	wzc_codec *codecs[NC] = { NULL, NULL, NULL, NULL };
	wzc_wz_flat *flats[NC] = { NULL, NULL, NULL, NULL };
	for (int f = 0; f < ncase; f++) {
		wzc_format fmt;
		if (wzc_format_parse(f == 3 ? "wz-5.44" : cases[f].name, &fmt, NULL) ||
		    wzc_codec_new(&fmt, 1, R, P, profs[f], &codecs[f], NULL))
			exit(1);
		cases[f].rb = wzc_codec_record_bytes(codecs[f]);
		std::vector<uint8_t> rec(cases[f].rb * t->T);
		wzc_encode_layer(codecs[f], 0, t->T, t->latent, t->rope, rec.data(), NULL);
		cases[f].pool = dev_alloc<uint8_t>(cases[f].rb * maxtok);
		if (!cases[f].pool) {
			fprintf(stderr, "bench_gpu: no memory for the %s cache\n", cases[f].name);
			exit(1);
		}
		CK(cudaMemcpy(cases[f].pool, rec.data(), rec.size(), cudaMemcpyHostToDevice));
		replicate(cases[f].pool, rec.size(), cases[f].rb * maxtok);
		if (fmt.id == WZC_FMT_WZ) {
			if (wzc_wz_flatten(codecs[f], 0, &flats[f], NULL) ||
			    wzc_cuda_wz_upload(flats[f], &cases[f].plan))
				exit(1);
			cases[f].basis_l = dev_copy(profs[f]->latent[0].basis, (size_t)R * R);
			cases[f].basis_r = dev_copy(profs[f]->rope[0].basis, (size_t)P * P);
			cases[f].mean_l = dev_copy(profs[f]->latent[0].mean, (size_t)R);
		}
	}
	/* sequence b's pages are b * max_pages .. in order: distinct memory for
	 * every token, as a full cache has */
	std::vector<int32_t> pages((size_t)maxb * max_pages);
	for (size_t i = 0; i < pages.size(); i++)
		pages[i] = (int32_t)i;
	int32_t *dpages = dev_copy(pages.data(), pages.size());
	std::vector<float> q((size_t)maxb * H * nv);
	uint64_t r = 99;
	for (size_t i = 0; i < q.size(); i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		q[i] = ((float)(r >> 40) / 16777216.0f - 0.5f) * 0.2f;
	}
	float *dq = dev_copy(q.data(), q.size()), *dqr = dev_alloc<float>(q.size());
	float *dout = dev_alloc<float>((size_t)maxb * H * R), *dout2 = dev_alloc<float>((size_t)maxb * H * R);
	std::vector<int32_t> lens(maxb);
	int32_t *dlen = dev_alloc<int32_t>(maxb);
	float *dwork = NULL;
	size_t work_have = 0;
	std::vector<double> factors[NC];
	char note[160];
	for (int ctx : contexts)
		for (int B : batches) {
			for (int b = 0; b < B; b++)
				lens[b] = ctx;
			CK(cudaMemcpy(dlen, lens.data(), sizeof(int32_t) * B, cudaMemcpyHostToDevice));
			/* enough splits for about four blocks per SM */
			int hg = (H + WZK_ATT_HEADS - 1) / WZK_ATT_HEADS;
			int nsplit = std::max(1, (4 * sms + hg * B - 1) / (hg * B));
			int chunk = (ctx + nsplit - 1) / nsplit;
			chunk = (chunk + WZK_ATT_TILE - 1) / WZK_ATT_TILE * WZK_ATT_TILE;
			nsplit = (ctx + chunk - 1) / chunk;
			size_t wf = wzk_cuda_attention_work_floats(B, H, R, nsplit);
			if (wf > work_have) {
				cudaFree(dwork);
				dwork = dev_alloc<float>(wf);
				work_have = wf;
				if (!dwork)
					exit(1);
			}
			double flops = 2.0 * B * H * (double)ctx * (nv + R);
			double ms_fp8 = 0, ms[NC];
			for (int f = 0; f < ncase; f++) {
				att_case &c = cases[f];
				wzk_cuda_attention_args g;
				memset(&g, 0, sizeof g);
				g.fmt = c.fmt;
				g.wz = c.plan;
				g.R = R;
				g.P = P;
				g.H = H;
				g.B = B;
				g.ctx_len = dlen;
				g.pages = dpages;
				g.max_pages = max_pages;
				g.pool = c.pool;
				g.q = c.plan ? dqr : dq;
				g.scale = (float)t->softmax_scale;
				g.chunk = chunk;
				g.nsplit = nsplit;
				g.work = dwork;
				g.out = dout;
				int rows = B * H;
				/* wz: rotate the queries in, the output out, once per
				 * step (timed with the step); the constant q . mean
				 * shifts every score of a head alike, so softmax and
				 * output do not need it */
				int undo = f == 3;
				auto step = [&] {
					if (c.plan) {
						CK(wzk_cuda_rotate(rows, R, c.basis_l, 0, dq, nv, NULL, dqr, nv));
						/* RoPE undone: the position part as cached */
						if (undo)
							CK(cudaMemcpy2D(dqr + R, sizeof(float) * nv, dq + R,
									sizeof(float) * nv, sizeof(float) * P, rows,
									cudaMemcpyDeviceToDevice));
						else
							CK(wzk_cuda_rotate(rows, P, c.basis_r, 0, dq + R, nv, NULL,
									   dqr + R, nv));
					}
					CK(wzk_cuda_attention(&g));
					if (c.plan)
						CK(wzk_cuda_rotate(rows, R, c.basis_l, 1, dout, R, c.mean_l, dout2, R));
				};
				step();
				CK(cudaDeviceSynchronize());
				int reps = flops > 1e12 ? 3 : 7;
				ms[f] = time_ms(1, reps, step);
				double bytes = (double)B * ctx * c.rb;
				snprintf(note, sizeof note, "SIMT kernel; %d splits of %d; median of %d", nsplit, chunk, reps);
				gpu_row(out, "attention", c.name, "step", B, ctx, H, ms[f] * 1e3, "us", note);
				gpu_row(out, "roofline_bytes", c.name, "step", B, ctx, H,
					bytes / (dev.copy_gbs * 1e9) * 1e6, "us", "cache bytes / measured copy rate");
				gpu_row(out, "roofline_flops", c.name, "step", B, ctx, H,
					flops / (dev.fp32_tflops * 1e12) * 1e6, "us", "scores + output FLOPs / FP32 FMA peak");
				if (f == 1)
					ms_fp8 = ms[f];
			}
			for (int f = 0; f < ncase; f++) {
				double ratio = ms[f] / ms_fp8;
				gpu_row(out, "attention_vs_fp8", cases[f].name, "step", B, ctx, H, ratio, "ratio",
					"time per step / fp8-mix's");
				/* the simulator multiplies cache bytes by the factor:
				 * time_f / time_fp8 = bytes_f x factor_f / bytes_fp8 */
				factors[f].push_back(ratio * (double)cases[1].rb / (double)cases[f].rb);
			}
		}
	for (int f = 0; f < ncase; f++) {
		std::sort(factors[f].begin(), factors[f].end());
		gpu_row(out, "decode_cost", cases[f].name, "factor", -1, -1, H, factors[f][factors[f].size() / 2],
			"factor", "median over the attention points of (time / fp8-mix time) x (fp8-mix bytes / bytes)");
	}
	for (int f = 0; f < ncase; f++) {
		cudaFree(cases[f].pool);
		cudaFree(cases[f].basis_l);
		cudaFree(cases[f].basis_r);
		cudaFree(cases[f].mean_l);
		wzc_cuda_wz_free(cases[f].plan);
		wzc_codec_free(codecs[f]);
		wzc_wz_flat_free(flats[f]);
	}
	cudaFree(dpages);
	cudaFree(dq);
	cudaFree(dqr);
	cudaFree(dout);
	cudaFree(dout2);
	cudaFree(dlen);
	cudaFree(dwork);
	wzt_cache_trace_free(t);
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && !strcmp(argv[1], "--quick");
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		fprintf(stderr, "bench_gpu: no CUDA device\n");
		return 77;
	}
	out = gpu_results();
	if (!out)
		out = stdout;
	device_facts dev = measure_device();
	wzc_profile *prof = gpu_profile(WZT_FAMILY_MLA_B);
	if (!prof)
		return 1;
	wzc_profile *prof_rope = gpu_profile_rope(WZT_FAMILY_MLA_B, 1);
	bench_codec(dev, prof, prof_rope, quick ? 65536 : 1 << 20);
	bench_attention(dev, prof, prof_rope, quick);
	wzc_profile_free(prof);
	wzc_profile_free(prof_rope);
	if (out != stdout)
		fclose(out);
	return 0;
}
