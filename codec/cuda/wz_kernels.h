/* CUDA kernels of the codec, host side: batched encode of new tokens into
 * 64-token paged records and decode of any set of tokens for the GPU-tier
 * baselines, wz decode into the transformed domain that attention reads,
 * and the fused absorbed-MLA decode attention over paged records
 * (docs/gpu-kernels.md).  They run the per-thread steps of
 * codec/cuda/paged_baseline.h, paged_wz.h and attn_tiles.h, built on the
 * per-element and per-group inline functions the C reference uses
 * (codec/formats/fpconv.h, codec/wz/wz_flat.h).  Every pointer argument is device
 * memory; functions return 0 or a cudaError_t value. */
#ifndef WZC_CUDA_KERNELS_H
#define WZC_CUDA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "codec/wz/wz_flat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- baselines: fmt is a codec/formats/format.h id (bf16, fp8-mix, fp8-ds-mla,
 * int4-g64, nvfp4) ---- */

/* Record bytes of fmt for R + P, or 0 when the kernels do not take it. */
size_t wzk_cuda_record_bytes(int fmt, int R, int P);

/* Token i of latent[n][R], rope[n][P] into the record at pool + slots[i] *
 * record bytes (slots NULL: slot i); the C reference's bytes. */
int wzk_cuda_encode(int fmt, int R, int P, int n, const float *latent, const float *rope,
		    const int64_t *slots, uint8_t *pool);
/* The records at slots[i] (NULL: i) into latent[n][R], rope[n][P]. */
int wzk_cuda_decode(int fmt, int R, int P, int n, const int64_t *slots, const uint8_t *pool,
		    float *latent, float *rope);

/* fp8-mix records of R + 2 + (P ? P + 2 : 0) bytes, contiguous. */
int wzc_cuda_fp8_mix_encode(const float *latent, const float *rope, int ntok, int R, int P,
			    uint8_t *records);
int wzc_cuda_fp8_mix_decode(const uint8_t *records, int ntok, int R, int P, float *latent,
			    float *rope);

/* ---- wz ---- */

/* A flat wz plan copied to the device (one allocation).  The caller frees it
 * with wzc_cuda_wz_free. */
typedef struct wzc_cuda_wz wzc_cuda_wz;
int wzc_cuda_wz_upload(const wzc_wz_flat *host, wzc_cuda_wz **out /* OUT */);
void wzc_cuda_wz_free(wzc_cuda_wz *plan);
/* The plan's view, its pointers into device memory (host struct). */
const wzc_wz_flat *wzc_cuda_wz_view(const wzc_cuda_wz *plan);

/* The records at slots[i] (NULL: i) into out[n][R + P], transformed
 * domain.  Where the plan's profile undoes RoPE in the layer
 * (wzc_wz_flat.rope_undone), the position part comes out in the cache's
 * domain instead, turned forward at positions[i] (NULL: i), as attention
 * reads it (docs/gpu-kernels.md, "RoPE undone"). */
int wzc_cuda_wz_decode_slots_at(const wzc_cuda_wz *plan, int n, const int64_t *slots,
				const int64_t *positions, const uint8_t *pool, float *out);
/* The same at positions 0..n-1. */
int wzc_cuda_wz_decode_slots(const wzc_cuda_wz *plan, int n, const int64_t *slots,
			     const uint8_t *pool, float *out);
/* ntok contiguous records into out[ntok][R + P]. */
int wzc_cuda_wz_decode(const wzc_cuda_wz *plan, const uint8_t *records, int ntok, float *out);

/* Profile version 7: adds to rope[n][P] (decoded residuals, RoPE undone)
 * the prediction from latent[n][R] (decoded, the cache's domain) by the
 * layer's map [R][P] and latent mean [R], except at position 0
 * (positions NULL: 0, 1, ...); the CPU decoder's floats
 * (codec/cuda/pred_step.h).  The GPU decode of version 7 records around
 * it (the anchored plan, the flat plan's upload) is not there yet:
 * wzc_wz_flatten refuses a predicting layer. */
int wzc_cuda_pred_add(const float *map, const float *mean, const float *latent, int R, int P,
		      int n, const int64_t *positions, float *rope);

/* ---- fused decode attention (codec/cuda/attn_tiles.h) ---- */

typedef struct {
	int fmt;                /* WZC_FMT_BF16, WZC_FMT_FP8_MIX or WZC_FMT_WZ */
	const wzc_cuda_wz *wz;  /* the layer's plan for wz, else NULL */
	int R, P, H, B;
	const int32_t *ctx_len; /* [B]; context token i of a sequence is at position i */
	const int32_t *pages;   /* [B][max_pages] */
	int max_pages;
	const uint8_t *pool;    /* records, 64 tokens per page */
	const float *q;         /* [B][H][R + P]; for wz rotated (wzk_cuda_rotate),
				 * but the position part as cached where the plan
				 * undoes RoPE, whose bias is q_latent . mean_latent */
	const float *bias;      /* [B][H] added to every score before scaling, or NULL */
	float scale;
	int chunk;              /* context tokens per split, a multiple of 16 */
	int nsplit;             /* splits covering the longest context */
	float *work;            /* wzk_cuda_attention_work_floats(...) floats */
	float *out;             /* [B][H][R]: sum p c (for wz sum p y) */
} wzk_cuda_attention_args;

size_t wzk_cuda_attention_work_floats(int B, int H, int R, int nsplit);
int wzk_cuda_attention(const wzk_cuda_attention_args *args);

/* out[r][k] = add[k] + sum_i M[k][i] in[r][i] (transposed = 0) or
 * sum_i M[i][k] in[r][i] (transposed = 1), M n x n, rows rows of width
 * stride (the first n values of each row are read and written); add may be
 * NULL. */
int wzk_cuda_rotate(int rows, int n, const float *M, int transposed, const float *in,
		    size_t in_stride, const float *add, float *out, size_t out_stride);

#ifdef __cplusplus
}
#endif

#endif
