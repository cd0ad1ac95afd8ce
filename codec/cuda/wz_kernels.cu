/* CUDA kernels of wz decode and the older contiguous fp8-mix kernels
 * (codec/cuda/wz_kernels.h): one block per token, the same inline
 * per-element and per-group code as the C reference, so the GPU writes and
 * reads the reference's bytes. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "codec/cuda/paged_wz.h"
#include "codec/cuda/pred_step.h"
#include "codec/cuda/wz_kernels.h"

struct wzc_cuda_wz {
	wzc_wz_flat view; /* pointers into dev */
	void *dev;
};

static const void *rebase(const void *p, const wzc_wz_flat *h, void *dev)
{
	return (const char *)dev + ((const char *)p - (const char *)h->block);
}

extern "C" int wzc_cuda_wz_upload(const wzc_wz_flat *h, wzc_cuda_wz **out)
{
	*out = NULL;
	wzc_cuda_wz *p = (wzc_cuda_wz *)calloc(1, sizeof *p);
	if (!p)
		return (int)cudaErrorMemoryAllocation;
	cudaError_t e = cudaMalloc(&p->dev, h->block_bytes ? h->block_bytes : 1);
	if (e == cudaSuccess)
		e = cudaMemcpy(p->dev, h->block, h->block_bytes, cudaMemcpyHostToDevice);
	if (e != cudaSuccess) {
		cudaFree(p->dev);
		free(p);
		return (int)e;
	}
	p->view = *h;
	wzc_wz_flat *v = &p->view;
	v->goff = (const uint32_t *)rebase(h->goff, h, p->dev);
	v->gbits = (const uint8_t *)rebase(h->gbits, h, p->dev);
	v->gstart = (const int32_t *)rebase(h->gstart, h, p->dev);
	v->comp = (const int32_t *)rebase(h->comp, h, p->dev);
	v->part = (const int32_t *)rebase(h->part, h, p->dev);
	v->nlev = (const uint32_t *)rebase(h->nlev, h, p->dev);
	v->sigma = (const float *)rebase(h->sigma, h, p->dev);
	v->tab = (const uint32_t *)rebase(h->tab, h, p->dev);
	v->tables = (const float *)rebase(h->tables, h, p->dev);
	v->ones = (const int32_t *)rebase(h->ones, h, p->dev);
	v->ones_lev = (const float *)rebase(h->ones_lev, h, p->dev);
	v->ones_sigma = (const float *)rebase(h->ones_sigma, h, p->dev);
	v->delta = (const float *)rebase(h->delta, h, p->dev);
	v->scale_mult = (const float *)rebase(h->scale_mult, h, p->dev);
	v->cbt = (const uint32_t *)rebase(h->cbt, h, p->dev);
	if (h->rope_undone) {
		v->rope_basis = (const float *)rebase(h->rope_basis, h, p->dev);
		v->rope_mean = (const float *)rebase(h->rope_mean, h, p->dev);
		v->rope_freq = (const double *)rebase(h->rope_freq, h, p->dev);
	}
	v->block = p->dev;
	*out = p;
	return 0;
}

extern "C" void wzc_cuda_wz_free(wzc_cuda_wz *p)
{
	if (!p)
		return;
	cudaFree(p->dev);
	free(p);
}

/* One block per token (the steps of codec/cuda/paged_wz.h): threads take
 * groups (each a serial chain of multiplies), a trellis-coded plan's state
 * walks its digits split in runs over up to WZC_WZT_WALKERS threads, then
 * the threads write the
 * transformed-domain values.  Shared memory: y[nv] (a trellis plan's
 * digits wait in it for the walk). */
__global__ void wz_decode_kernel(const __grid_constant__ wzk_wz_dec_args a)
{
	extern __shared__ float y[];
	__shared__ wzk_wz_tok st;
	int b = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
	const uint8_t *rec = wzk_wz_rec(&a, b);
	wzk_wz_begin(&a.f, rec, tid, nt, &st, y);
	__syncthreads();
	wzk_wz_groups(&a.f, rec, tid, nt, &st, y);
	__syncthreads();
	if (a.f.nu) {
		wzk_wz_walk_runs(&a.f, tid, nt, &st, y);
		__syncthreads();
		wzk_wz_walk(&a.f, tid, nt, &st, y);
		__syncthreads();
	}
	wzk_wz_dec_store(&a, b, tid, nt, &st, y);
}

extern "C" const wzc_wz_flat *wzc_cuda_wz_view(const wzc_cuda_wz *p)
{
	return &p->view;
}

extern "C" int wzc_cuda_wz_decode_slots_at(const wzc_cuda_wz *p, int n, const int64_t *slots,
					   const int64_t *positions, const uint8_t *pool,
					   float *out)
{
	if (n <= 0)
		return 0;
	wzk_wz_dec_args a = { p->view, n, slots, pool, out, positions };
	wz_decode_kernel<<<n, 64, sizeof(float) * (size_t)p->view.nv>>>(a);
	return (int)cudaGetLastError();
}

extern "C" int wzc_cuda_wz_decode_slots(const wzc_cuda_wz *p, int n, const int64_t *slots,
					const uint8_t *pool, float *out)
{
	return wzc_cuda_wz_decode_slots_at(p, n, slots, NULL, pool, out);
}

extern "C" int wzc_cuda_wz_decode(const wzc_cuda_wz *p, const uint8_t *records, int ntok,
				  float *out)
{
	return wzc_cuda_wz_decode_slots(p, ntok, NULL, records, out);
}

/* Profile version 7: the prediction added to n tokens' decoded residuals,
 * one thread per position value (codec/cuda/pred_step.h). */
__global__ void pred_add_kernel(const __grid_constant__ wzk_pred_args a)
{
	long idx = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (idx < (long)a.n * a.P)
		wzk_pred_add_value(&a, idx);
}

extern "C" int wzc_cuda_pred_add(const float *map, const float *mean, const float *latent,
				 int R, int P, int n, const int64_t *positions, float *rope)
{
	if (n <= 0 || P <= 0)
		return 0;
	wzk_pred_args a = { map, mean, latent, rope, positions, R, P, n };
	long total = (long)n * P;
	pred_add_kernel<<<(unsigned)((total + 255) / 256), 256>>>(a);
	return (int)cudaGetLastError();
}

/* fp8-mix in contiguous records: the paged kernels with slots 0..n-1. */
extern "C" int wzc_cuda_fp8_mix_encode(const float *latent, const float *rope, int ntok, int R,
				       int P, uint8_t *records)
{
	return wzk_cuda_encode(WZK_FP8_MIX, R, P, ntok, latent, rope, NULL, records);
}

extern "C" int wzc_cuda_fp8_mix_decode(const uint8_t *records, int ntok, int R, int P,
				       float *latent, float *rope)
{
	return wzk_cuda_decode(WZK_FP8_MIX, R, P, ntok, NULL, records, latent, rope);
}
