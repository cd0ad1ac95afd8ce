/* CUDA kernels of the fused absorbed-MLA decode attention over paged
 * records (codec/cuda/wz_kernels.h): the split kernel runs the per-thread
 * steps of codec/cuda/attn_tiles.h between barriers, the combine kernel
 * merges the splits, and a small kernel rotates queries into (and outputs
 * out of) wz's transformed domain once per step. */
#include <cuda_runtime.h>
#include <string.h>

#include "codec/cuda/attn_tiles.h"
#include "codec/cuda/wz_kernels.h"

__global__ void __launch_bounds__(WZK_ATT_THREADS) wzk_attention_kernel(const __grid_constant__ wzk_att_args a)
{
	extern __shared__ __align__(16) unsigned char smem_raw[];
	wzk_att_smem *sm = (wzk_att_smem *)smem_raw;
	int s = blockIdx.x, hg = blockIdx.y, b = blockIdx.z, tid = threadIdx.x, nt = blockDim.x;
	int c0, c1;
	wzk_att_range(&a, s, b, &c0, &c1);
	wzk_att_init(&a, hg, b, tid, nt, sm);
	__syncthreads();
	for (int n0 = c0; n0 < c1; n0 += WZK_ATT_TILE) {
		int n = c1 - n0 < WZK_ATT_TILE ? c1 - n0 : WZK_ATT_TILE;
		wzk_att_decode1(&a, b, n0, n, tid, nt, sm);
		__syncthreads();
		if (a.fmt == WZK_FMT_WZ) {
			wzk_att_decode2(&a, b, n0, n, tid, nt, sm);
			__syncthreads();
			if (a.f.nu) {
				wzk_att_walk_runs(&a, n, tid, nt, sm);
				__syncthreads();
				wzk_att_walk(&a, n, tid, nt, sm);
				__syncthreads();
			}
			wzk_att_decode3(&a, n0, n, tid, nt, sm);
			__syncthreads();
		}
		wzk_att_scores(&a, hg, b, n, tid, nt, sm);
		__syncthreads();
		wzk_att_softmax(n, tid, nt, sm);
		__syncthreads();
		wzk_att_accumulate(&a, n, tid, nt, sm);
		__syncthreads();
	}
	wzk_att_finish(&a, s, hg, b, tid, nt, sm);
}

__global__ void wzk_combine_kernel(const __grid_constant__ wzk_att_args a, float *out)
{
	int bh = blockIdx.x;
	for (int d = threadIdx.x; d < a.R; d += blockDim.x)
		out[(size_t)bh * a.R + d] = wzk_att_combine(&a, bh, d);
}

extern "C" size_t wzk_cuda_attention_work_floats(int B, int H, int R, int nsplit)
{
	return (size_t)B * H * nsplit * ((size_t)R + 2);
}

extern "C" int wzk_cuda_attention(const wzk_cuda_attention_args *in)
{
	wzk_att_args a;
	memset(&a, 0, sizeof a);
	a.fmt = in->fmt;
	if (in->R > WZK_ATT_MAXR || in->P > WZK_ATT_MAXP || in->chunk <= 0 ||
	    in->chunk % WZK_ATT_TILE || in->nsplit <= 0)
		return (int)cudaErrorInvalidValue;
	if (in->fmt == WZK_FMT_WZ) {
		if (!in->wz)
			return (int)cudaErrorInvalidValue;
		a.f = *wzc_cuda_wz_view(in->wz);
		if (a.f.R != in->R || a.f.P != in->P)
			return (int)cudaErrorInvalidValue;
		a.l.R = in->R;
		a.l.P = in->P;
		a.l.rb = a.f.record_bytes;
	} else if (in->fmt == WZK_BF16 || in->fmt == WZK_FP8_MIX) {
		a.l = wzk_layout_of(in->fmt, in->R, in->P);
		if (!a.l.rb)
			return (int)cudaErrorInvalidValue;
	} else {
		return (int)cudaErrorInvalidValue;
	}
	a.R = in->R;
	a.P = in->P;
	a.H = in->H;
	a.B = in->B;
	a.ctx_len = in->ctx_len;
	a.pages = in->pages;
	a.max_pages = in->max_pages;
	a.pool = in->pool;
	a.q = in->q;
	a.bias = in->bias;
	a.scale = in->scale;
	a.chunk = in->chunk;
	a.nsplit = in->nsplit;
	a.part_o = in->work;
	a.part_ml = in->work + (size_t)in->B * in->H * in->nsplit * in->R;
	static int attr_set;
	size_t smem = sizeof(wzk_att_smem);
	if (!attr_set) {
		cudaError_t e = cudaFuncSetAttribute(wzk_attention_kernel,
						     cudaFuncAttributeMaxDynamicSharedMemorySize,
						     (int)smem);
		if (e != cudaSuccess)
			return (int)e;
		attr_set = 1;
	}
	dim3 grid((unsigned)in->nsplit, (unsigned)((in->H + WZK_ATT_HEADS - 1) / WZK_ATT_HEADS),
		  (unsigned)in->B);
	wzk_attention_kernel<<<grid, WZK_ATT_THREADS, smem>>>(a);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		return (int)e;
	wzk_combine_kernel<<<in->B * in->H, 128>>>(a, in->out);
	return (int)cudaGetLastError();
}

__global__ void wzk_rotate_kernel(int rows, int n, const float *M, int transposed,
				  const float *in, size_t in_stride, const float *add, float *out,
				  size_t out_stride)
{
	long total = (long)rows * n;
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
	     i += (long)gridDim.x * blockDim.x) {
		long r = i / n;
		int k = (int)(i % n);
		out[(size_t)r * out_stride + k] =
			wzk_rotate_value(n, M, transposed, in + (size_t)r * in_stride, add, k);
	}
}

extern "C" int wzk_cuda_rotate(int rows, int n, const float *M, int transposed, const float *in,
			       size_t in_stride, const float *add, float *out, size_t out_stride)
{
	if (rows <= 0 || n <= 0)
		return 0;
	long total = (long)rows * n, nblk = (total + 255) / 256;
	wzk_rotate_kernel<<<(unsigned)(nblk < 65536 ? nblk : 65536), 256>>>(
		rows, n, M, transposed, in, in_stride, add, out, out_stride);
	return (int)cudaGetLastError();
}
