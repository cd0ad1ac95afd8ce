/* The CUDA decode of wze records (docs/wze-format.md), host side: one
 * layer's tables (wze_layer_view) copied to the device, and a kernel of
 * one thread per record running codec/wze/wze_core.h's
 * wze_decode_coeffs, the CPU decoder's own body, into the coefficient
 * domain that attention reads (relative to the mean, the anchor added
 * where a record says so).  Pointer arguments of wzk_wze_decode are
 * device memory; functions return 0 or a cudaError_t value. */
#ifndef WZC_CUDA_WZE_KERNELS_H
#define WZC_CUDA_WZE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wze/wze_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct wzk_wze wzk_wze;
/* Layer tables (host pointers, wzc_wze_view) to the device: ncum
 * cumulative frequencies, nrec reconstruction points, nent per-component
 * entries (wzc_wze_view_sizes).  A layer that predicts its position part
 * is refused (cudaErrorNotSupported): its values need the decoded latent
 * through the inverse transform, which this kernel does not run.  The
 * caller frees the result with wzk_wze_free. */
int wzk_wze_upload(const wze_layer_view *host, size_t ncum, size_t nrec, size_t nent,
		   wzk_wze **out /* OUT */);
void wzk_wze_free(wzk_wze *plan);

/* The n records at pool + slots[i] * record_bytes (slots NULL: slot i)
 * into out[n][R + P]. */
int wzk_wze_decode(const wzk_wze *plan, int n, const int64_t *slots, const uint8_t *pool,
		   uint32_t record_bytes, float *out);

#ifdef __cplusplus
}
#endif

#endif
