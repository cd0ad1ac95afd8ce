/* CUDA kernels of the codec: wz decode into the transformed domain that
 * attention reads, and fp8-mix encode and decode, built on the per-element
 * and per-group inline functions the C reference uses (codec/fpconv.h,
 * codec/wz_flat.h).  Functions return 0 or a cudaError_t value. */
#ifndef WZC_CUDA_KERNELS_H
#define WZC_CUDA_KERNELS_H

#include <stdint.h>

#include "codec/wz_flat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A flat wz plan copied to the device (one allocation).  The caller frees it
 * with wzc_cuda_wz_free. */
typedef struct wzc_cuda_wz wzc_cuda_wz;
int wzc_cuda_wz_upload(const wzc_wz_flat *host, wzc_cuda_wz **out /* OUT */);
void wzc_cuda_wz_free(wzc_cuda_wz *plan);

/* ntok records (device memory, record_bytes each) into out[ntok][R + P]
 * (device), transformed domain. */
int wzc_cuda_wz_decode(const wzc_cuda_wz *plan, const uint8_t *records, int ntok, float *out);

/* fp8-mix records of R + 2 + (P ? P + 2 : 0) bytes (device) to and from
 * latent[ntok][R] and rope[ntok][P] (device); the same bytes as the CPU. */
int wzc_cuda_fp8_mix_encode(const float *latent, const float *rope, int ntok, int R, int P,
			    uint8_t *records);
int wzc_cuda_fp8_mix_decode(const uint8_t *records, int ntok, int R, int P, float *latent,
			    float *rope);

#ifdef __cplusplus
}
#endif

#endif
