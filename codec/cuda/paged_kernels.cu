/* CUDA kernels of the baseline formats into and out of paged records
 * (codec/cuda/wz_kernels.h): each kernel runs the per-thread steps of
 * codec/cuda/paged_baseline.h between barriers, the same functions the CPU
 * emulation test runs, on the C reference's per-element conversions. */
#include <cuda_runtime.h>

#include "codec/cuda/paged_baseline.h"
#include "codec/cuda/wz_kernels.h"

__global__ void __launch_bounds__(WZK_ENC_THREADS) wzk_encode_kernel(const __grid_constant__ wzk_enc_args a)
{
	extern __shared__ __align__(16) unsigned char smem_raw[];
	wzk_enc_smem *sm = (wzk_enc_smem *)smem_raw;
	int b = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
	wzk_enc_load(&a, b, tid, nt, sm);
	__syncthreads();
	wzk_enc_partial(&a, b, tid, nt, sm);
	__syncthreads();
	wzk_enc_scales(&a, b, tid, nt, sm);
	__syncthreads();
	wzk_enc_codes(&a, b, tid, nt, sm);
	__syncthreads();
	wzk_enc_store(&a, b, tid, nt, sm);
}

__global__ void wzk_decode_kernel(const __grid_constant__ wzk_dec_args a, long total)
{
	for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
	     i += (long)gridDim.x * blockDim.x)
		wzk_dec_values(&a, i);
}

extern "C" size_t wzk_cuda_record_bytes(int fmt, int R, int P)
{
	return (size_t)wzk_layout_of(fmt, R, P).rb;
}

extern "C" int wzk_cuda_encode(int fmt, int R, int P, int n, const float *latent,
			       const float *rope, const int64_t *slots, uint8_t *pool)
{
	wzk_layout l = wzk_layout_of(fmt, R, P);
	if (!l.rb)
		return (int)cudaErrorInvalidValue;
	if (n <= 0)
		return 0;
	static int attr_set;
	size_t smem = sizeof(wzk_enc_smem);
	if (!attr_set) {
		cudaError_t e = cudaFuncSetAttribute(wzk_encode_kernel,
						     cudaFuncAttributeMaxDynamicSharedMemorySize,
						     (int)smem);
		if (e != cudaSuccess)
			return (int)e;
		attr_set = 1;
	}
	wzk_enc_args a = { l, n, latent, rope, slots, pool };
	int nblk = (n + WZK_ENC_TOKENS - 1) / WZK_ENC_TOKENS;
	wzk_encode_kernel<<<nblk, WZK_ENC_THREADS, smem>>>(a);
	return (int)cudaGetLastError();
}

extern "C" int wzk_cuda_decode(int fmt, int R, int P, int n, const int64_t *slots,
			       const uint8_t *pool, float *latent, float *rope)
{
	wzk_layout l = wzk_layout_of(fmt, R, P);
	if (!l.rb)
		return (int)cudaErrorInvalidValue;
	if (n <= 0)
		return 0;
	wzk_dec_args a = { l, n, slots, pool, latent, rope };
	long total = (long)n * (R + P);
	long nblk = (total + 255) / 256;
	wzk_decode_kernel<<<(unsigned)(nblk < 65536 ? nblk : 65536), 256>>>(a, total);
	return (int)cudaGetLastError();
}
