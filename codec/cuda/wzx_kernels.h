/* The CUDA restore of wzx version 5 and 6 blocks (types 5 and 6) to wz
 * records, host side (docs/restore.md, "On the GPU"): a layer's records plan and rANS
 * tables (codec/wzx/wzx_rec5.h) copied to the device, and a kernel of one
 * warp per block running codec/cuda/wzx_restore.h's steps, the CPU
 * portable loop's per symbol and per token.  The records are the CPU's bit
 * for bit and a block's verdict is the CPU's (tests/gpu).  Pointer
 * arguments of wzk_wzx5_records are device memory; functions return 0 or a
 * cudaError_t value. */
#ifndef WZC_CUDA_WZX_KERNELS_H
#define WZC_CUDA_WZX_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wzx/wzx_rec5.h"
#include "codec/wzx/wzx_rec6.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wzk_wzx5 wzk_wzx5;
/* The plan (host pointers, wzc_wzx_rec5_of) to the device.  The caller
 * frees it with wzk_wzx5_free. */
int wzk_wzx5_upload(const wzx_rec5 *host, wzk_wzx5 **out /* OUT */);
/* The same for type 6 blocks: the plan and the layer's narrow tables
 * (wzc_wzx_rec6_of). */
int wzk_wzx6_upload(const wzx_rec5 *host, const wzx_rec6 *host6, wzk_wzx5 **out /* OUT */);
void wzk_wzx5_free(wzk_wzx5 *plan);

/* nblk blocks of the plan's layer (of the plan's type): block b's payload (after its 16-byte
 * header) at pay + off[b], size[b] bytes, ntok[b] tokens (1..64), its
 * records to records + rec_off[b]; verdict[b] 0, or -1 where the payload
 * is not what the encoder writes (as wzc_wzx_decode_lanes5_records,
 * wzc_wzx_decode_lanes6_records). */
int wzk_wzx5_records(const wzk_wzx5 *plan, int nblk, const uint8_t *pay, const size_t *off,
		     const size_t *size, const int *ntok, uint8_t *records, const size_t *rec_off,
		     int *verdict);

#ifdef __cplusplus
}
#endif

#endif
