/* Host side of the CUDA kernels' plan uploads (wzx_kernels.cu,
 * wze_kernels.cu): a plan's arrays packed into one staging buffer, each
 * 8-byte aligned, and copied to one device allocation. */
#ifndef WZC_CUDA_UPLOAD_H
#define WZC_CUDA_UPLOAD_H

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Arrays src[i] of sizes[i] bytes (NULL or 0: none) into one device
 * allocation *mem, array i at *mem + pos[i].  Returns 0 or a cudaError_t
 * value (*mem NULL then). */
static inline int wzk_upload_arrays(const void *const *src, const size_t *sizes, int n,
				    void **mem /* OUT */, size_t *pos /* OUT [n] */)
{
	*mem = NULL;
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		pos[i] = (at + 7) & ~(size_t)7;
		at = pos[i] + sizes[i];
	}
	uint8_t *buf = (uint8_t *)malloc(at + 8);
	if (!buf)
		return cudaErrorMemoryAllocation;
	for (int i = 0; i < n; i++)
		if (src[i] && sizes[i])
			memcpy(buf + pos[i], src[i], sizes[i]);
	cudaError_t e = cudaMalloc(mem, at + 8);
	if (!e)
		e = cudaMemcpy(*mem, buf, at, cudaMemcpyHostToDevice);
	free(buf);
	if (e) {
		cudaFree(*mem);
		*mem = NULL;
	}
	return e;
}

#endif
