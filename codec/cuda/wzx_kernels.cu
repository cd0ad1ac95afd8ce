/* The CUDA restore of wzx type 5 and 6 blocks to wz records
 * (wzx_kernels.h): the plan's upload and the kernel, one warp per block, each step one of
 * codec/cuda/wzx_restore.h's. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "codec/cuda/upload.h"
#include "codec/cuda/wzx_kernels.h"
#include "codec/cuda/wzx_restore.h"

struct wzk_wzx5 {
	wzx_rec5 view;  /* device pointers */
	wzx_rec6 view6; /* type 6's narrow tables (device), where type6 */
	int type6;
	void *mem;      /* one allocation holding them */
};

static int upload(const wzx_rec5 *h, const wzx_rec6 *h6, wzk_wzx5 **out)
{
	*out = NULL;
	size_t np = h->gp[h->ng], ne = h->pe[np];
	enum { NA = 16 };
	const void *src[NA] = { h->fb, h->sym, h->qoff, h->gp, h->pe, h->pm, h->q, h->pv, h->k, h->rhi, h->rlo,
				h6 ? h6->e : NULL, h6 ? h6->qoff : NULL, h6 ? h6->qb : NULL, h6 ? h6->qf : NULL,
				h6 ? h6->qn : NULL };
	size_t sizes[NA] = { sizeof(uint32_t) * h->nslots, sizeof(uint16_t) * h->nslots, sizeof(uint32_t) * h->S5,
			     sizeof(int32_t) * (h->ng + 1), sizeof(int32_t) * (np + 1), sizeof(uint64_t) * np,
			     sizeof(int32_t) * ne, sizeof(uint32_t) * ne, (size_t)h->ng, sizeof(uint64_t) * h->ng,
			     sizeof(uint64_t) * h->ng, h6 ? sizeof(uint32_t) * h6->nslots : 0,
			     h6 ? sizeof(uint32_t) * h->S5 : 0, h6 ? (size_t)h->S5 : 0, h6 ? sizeof(uint32_t) * h->S5 : 0,
			     h6 ? sizeof(uint32_t) * h->S5 : 0 };
	size_t pos[NA];
	wzk_wzx5 *p = (wzk_wzx5 *)calloc(1, sizeof *p);
	if (!p)
		return cudaErrorMemoryAllocation;
	int e = wzk_upload_arrays(src, sizes, NA, &p->mem, pos);
	if (e) {
		free(p);
		return e;
	}
	uint8_t *d = (uint8_t *)p->mem;
	p->view = *h;
	p->view.fb = (const uint32_t *)(d + pos[0]);
	p->view.sym = (const uint16_t *)(d + pos[1]);
	p->view.qoff = (uint32_t *)(d + pos[2]);
	p->view.gp = (int32_t *)(d + pos[3]);
	p->view.pe = (int32_t *)(d + pos[4]);
	p->view.pm = (uint64_t *)(d + pos[5]);
	p->view.q = (int32_t *)(d + pos[6]);
	p->view.pv = (uint32_t *)(d + pos[7]);
	p->view.k = (uint8_t *)(d + pos[8]);
	p->view.rhi = (uint64_t *)(d + pos[9]);
	p->view.rlo = (uint64_t *)(d + pos[10]);
	p->type6 = h6 != NULL;
	if (h6) {
		p->view6 = *h6;
		p->view6.e = (const uint32_t *)(d + pos[11]);
		p->view6.qoff = (uint32_t *)(d + pos[12]);
		p->view6.qb = (uint8_t *)(d + pos[13]);
		p->view6.qf = (uint32_t *)(d + pos[14]);
		p->view6.qn = (uint32_t *)(d + pos[15]);
	}
	*out = p;
	return 0;
}

extern "C" int wzk_wzx5_upload(const wzx_rec5 *h, wzk_wzx5 **out)
{
	return upload(h, NULL, out);
}

extern "C" int wzk_wzx6_upload(const wzx_rec5 *h, const wzx_rec6 *h6, wzk_wzx5 **out)
{
	return upload(h, h6, out);
}

extern "C" void wzk_wzx5_free(wzk_wzx5 *p)
{
	if (!p)
		return;
	cudaFree(p->mem);
	free(p);
}

/* One warp per block: the rounds (a ballot orders the lanes' words), the
 * end checks, then the tokens' records from the digits in dig. */
__global__ void wzx5_records(wzx_rec5 p, wzx_rec6 p6, int type6, const uint8_t *pay, const size_t *off, const size_t *size,
			     const int *ntok, uint16_t *dig, uint8_t *records, const size_t *rec_off,
			     int *verdict)
{
	int b = blockIdx.x, lane = threadIdx.x;
	const uint8_t *pl = pay + off[b];
	size_t sz = size[b];
	int n = ntok[b];
	uint16_t *dg = dig + (size_t)b * p.S5 * WZK_WZX_TOKENS;
	int bad = sz < 4 * WZK_WZX_LANES || n < 1 || n > WZK_WZX_TOKENS;
	uint32_t x = bad ? 0 : wzk_wzx5_state(pl, lane);
	size_t pos = 4 * WZK_WZX_LANES;
	long N = (long)n * p.S5;
	for (long base = 0; !bad && base < N; base += WZK_WZX_LANES) {
		int need = wzk_wzx5_lane(&p, type6 ? &p6 : NULL, n, base, N, lane, &x, dg);
		unsigned m = __ballot_sync(0xffffffffu, need);
		int fail = need ? wzk_wzx5_refill(&x, pl, sz, pos, __popc(m & ((1u << lane) - 1))) : 0;
		pos += 2 * (size_t)__popc(m);
		bad = __any_sync(0xffffffffu, fail);
	}
	int ok = !bad && pos == sz && __all_sync(0xffffffffu, x == (1u << 16));
	__syncwarp();
	for (int k = lane; ok && k < n; k += WZK_WZX_LANES)
		wzc_wzx_rec5_token(&p, dg, n, k, records + rec_off[b] + (size_t)k * p.B);
	if (lane == 0)
		verdict[b] = ok ? 0 : -1;
}

extern "C" int wzk_wzx5_records(const wzk_wzx5 *plan, int nblk, const uint8_t *pay, const size_t *off,
				const size_t *size, const int *ntok, uint8_t *records, const size_t *rec_off,
				int *verdict)
{
	if (nblk < 1)
		return 0;
	uint16_t *dig;
	cudaError_t e = cudaMalloc(&dig, sizeof *dig * (size_t)plan->view.S5 * WZK_WZX_TOKENS * nblk);
	if (e)
		return e;
	wzx5_records<<<nblk, WZK_WZX_LANES>>>(plan->view, plan->view6, plan->type6, pay, off, size, ntok, dig, records, rec_off, verdict);
	e = cudaGetLastError();
	if (!e)
		e = cudaDeviceSynchronize();
	cudaFree(dig);
	return e;
}
