/* The CUDA decode of wze records (wze_kernels.h): the tables' upload and
 * a kernel of one thread per record, running the CPU decoder's body. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "codec/cuda/upload.h"
#include "codec/cuda/wze_kernels.h"

struct wzk_wze {
	wze_layer_view view; /* device pointers */
	void *mem;           /* one allocation holding them */
};

extern "C" int wzk_wze_upload(const wze_layer_view *h, size_t ncum, size_t nrec, size_t nent,
			      wzk_wze **out)
{
	*out = NULL;
	if (h->predicts)
		return cudaErrorNotSupported;
	enum { NA = 8 };
	const void *src[NA] = { h->tab_off, h->rec_off, h->tab_k, h->cum,
				h->recon, h->cstep, h->cls, h->delta };
	size_t sizes[NA] = { sizeof(uint32_t) * 3 * WZE_NCLASS, sizeof(uint32_t) * 3 * WZE_NCLASS,
			     sizeof(uint16_t) * 3 * WZE_NCLASS, sizeof(uint32_t) * ncum,
			     sizeof(float) * nrec, sizeof(float) * nent, sizeof(int16_t) * nent,
			     sizeof(float) * nent };
	size_t pos[NA];
	wzk_wze *p = (wzk_wze *)calloc(1, sizeof *p);
	if (!p)
		return cudaErrorMemoryAllocation;
	int e = wzk_upload_arrays(src, sizes, NA, &p->mem, pos);
	if (e) {
		free(p);
		return e;
	}
	uint8_t *d = (uint8_t *)p->mem;
	p->view = *h;
	p->view.tab_off = (const uint32_t *)(d + pos[0]);
	p->view.rec_off = (const uint32_t *)(d + pos[1]);
	p->view.tab_k = (const uint16_t *)(d + pos[2]);
	p->view.cum = (const uint32_t *)(d + pos[3]);
	p->view.recon = (const float *)(d + pos[4]);
	p->view.cstep = (const float *)(d + pos[5]);
	p->view.cls = (const int16_t *)(d + pos[6]);
	p->view.delta = (const float *)(d + pos[7]);
	*out = p;
	return 0;
}

extern "C" void wzk_wze_free(wzk_wze *p)
{
	if (!p)
		return;
	cudaFree(p->mem);
	free(p);
}

__global__ void wze_decode_kernel(wze_layer_view v, int n, const int64_t *slots,
				  const uint8_t *pool, uint32_t bytes, float *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	int64_t slot = slots ? slots[i] : i;
	wze_decode_coeffs(&v, pool + (size_t)slot * bytes, bytes, out + (size_t)i * (v.R + v.P));
}

extern "C" int wzk_wze_decode(const wzk_wze *p, int n, const int64_t *slots, const uint8_t *pool,
			      uint32_t record_bytes, float *out)
{
	if (n <= 0)
		return 0;
	int threads = 128, blocks = (n + threads - 1) / threads;
	wze_decode_kernel<<<blocks, threads>>>(p->view, n, slots, pool, record_bytes, out);
	return cudaGetLastError();
}
