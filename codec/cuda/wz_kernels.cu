/* CUDA kernels of the codec (codec/cuda/wz_kernels.h): one block per token,
 * the same inline per-element and per-group code as the C reference, so
 * the GPU writes and reads the reference's bytes. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

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

/* One block per token: threads take groups (each a serial chain of
 * multiplies), then write the transformed-domain values. */
__global__ void wz_decode_kernel(wzc_wz_flat f, const uint8_t *records, int ntok, float *out)
{
	extern __shared__ float y[];
	__shared__ uint32_t flags[2];
	int t = blockIdx.x;
	if (t >= ntok)
		return;
	const uint8_t *rec = records + (size_t)t * f.record_bytes;
	float s[2] = { wzc_wz_scale(&f, rec, 0), wzc_wz_scale(&f, rec, 1) };
	if (threadIdx.x < 2)
		flags[threadIdx.x] = 0;
	for (int i = threadIdx.x; i < f.nones; i += blockDim.x)
		y[f.ones[i]] = f.ones_lev[i] * f.ones_sigma[i] * s[f.ones[i] >= f.R];
	__syncthreads();
	for (int g = threadIdx.x; g < f.ngroups; g += blockDim.x)
		wzc_wz_decode_group(&f, rec, g, s, y, flags);
	__syncthreads();
	for (int k = threadIdx.x; k < f.nv; k += blockDim.x)
		out[(size_t)t * f.nv + k] = wzc_wz_transformed(&f, y, flags, k);
}

extern "C" int wzc_cuda_wz_decode(const wzc_cuda_wz *p, const uint8_t *records, int ntok,
				  float *out)
{
	if (ntok <= 0)
		return 0;
	wz_decode_kernel<<<ntok, 64, sizeof(float) * (size_t)p->view.nv>>>(p->view, records, ntok,
									   out);
	return (int)cudaGetLastError();
}

/* Largest |x| of n values by one block (blockDim a power of two <= 256). */
__device__ static float block_absmax(const float *x, int n)
{
	__shared__ float red[256];
	float m = 0;
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		m = fmaxf(m, fabsf(x[i]));
	red[threadIdx.x] = m;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if ((int)threadIdx.x < w)
			red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + w]);
		__syncthreads();
	}
	float r = red[0];
	__syncthreads();
	return r;
}

/* As the C reference's f16_scale: never zero for a nonzero value, finite. */
__device__ static uint16_t f16_scale(float s)
{
	uint16_t h = wzc_f16_from_f32(s);
	if (s > 0 && (h & 0x7fff) == 0)
		h = 1;
	if ((h & 0x7fff) >= 0x7c00)
		h = 0x7bff;
	return h;
}

__global__ void fp8_mix_encode_kernel(const float *latent, const float *rope, int R, int P,
				      size_t rb, uint8_t *records)
{
	int t = blockIdx.x;
	const float *x = latent + (size_t)t * R;
	uint8_t *rec = records + (size_t)t * rb;
	uint16_t hs = f16_scale(block_absmax(x, R) / WZC_E4M3_MAX);
	float sc = wzc_f16_to_f32(hs), inv = sc > 0 ? 1.0f / sc : 0;
	for (int i = threadIdx.x; i < R; i += blockDim.x)
		rec[i] = wzc_e4m3_from_f32(x[i] * inv);
	if (threadIdx.x == 0) {
		rec[R] = (uint8_t)hs;
		rec[R + 1] = (uint8_t)(hs >> 8);
	}
	if (!P)
		return;
	const float *r = rope + (size_t)t * P;
	uint16_t hr = f16_scale(block_absmax(r, P) / 127.0f);
	float sr = wzc_f16_to_f32(hr), invr = sr > 0 ? 1.0f / sr : 0;
	for (int i = threadIdx.x; i < P; i += blockDim.x) {
		float q = wzc_rint(r[i] * invr);
		q = q > 127 ? 127 : q < -127 ? -127 : q;
		rec[R + 2 + i] = (uint8_t)(int8_t)q;
	}
	if (threadIdx.x == 0) {
		rec[R + 2 + P] = (uint8_t)hr;
		rec[R + 3 + P] = (uint8_t)(hr >> 8);
	}
}

__global__ void fp8_mix_decode_kernel(const uint8_t *records, int R, int P, size_t rb,
				      float *latent, float *rope)
{
	int t = blockIdx.x;
	const uint8_t *rec = records + (size_t)t * rb;
	float sc = wzc_f16_to_f32((uint16_t)(rec[R] | rec[R + 1] << 8));
	for (int i = threadIdx.x; i < R; i += blockDim.x)
		latent[(size_t)t * R + i] = wzc_e4m3_to_f32(rec[i]) * sc;
	if (!P)
		return;
	float sr = wzc_f16_to_f32((uint16_t)(rec[R + 2 + P] | rec[R + 3 + P] << 8));
	for (int i = threadIdx.x; i < P; i += blockDim.x)
		rope[(size_t)t * P + i] = (float)(int8_t)rec[R + 2 + i] * sr;
}

static size_t fp8_mix_bytes(int R, int P)
{
	return (size_t)R + 2 + (P ? (size_t)P + 2 : 0);
}

extern "C" int wzc_cuda_fp8_mix_encode(const float *latent, const float *rope, int ntok, int R,
				       int P, uint8_t *records)
{
	if (ntok <= 0)
		return 0;
	fp8_mix_encode_kernel<<<ntok, 128>>>(latent, rope, R, P, fp8_mix_bytes(R, P), records);
	return (int)cudaGetLastError();
}

extern "C" int wzc_cuda_fp8_mix_decode(const uint8_t *records, int ntok, int R, int P,
				       float *latent, float *rope)
{
	if (ntok <= 0)
		return 0;
	fp8_mix_decode_kernel<<<ntok, 128>>>(records, R, P, fp8_mix_bytes(R, P), latent, rope);
	return (int)cudaGetLastError();
}
