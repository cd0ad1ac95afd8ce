/* GPU test of the codec's CUDA kernels against the C reference: wz decode
 * into the transformed domain and fp8-mix encode/decode must give the
 * reference's values and bytes exactly.  Prints TAP; without a CUDA device
 * it skips (exit 77).  Built only when configure found nvcc. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "codec/codec.h"
#include "codec/profile.h"
}
#include "codec/cuda/wz_kernels.h"

static int n_ok, n_fail;
static void check(int cond, const char *name)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", n_ok + n_fail + 1, name);
	cond ? n_ok++ : n_fail++;
}

static uint64_t rng = 12345;
static float gauss(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	double u1 = ((rng >> 11) + 0.5) / 9007199254740992.0;
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	double u2 = ((rng >> 11) + 0.5) / 9007199254740992.0;
	return (float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
}

int main(void)
{
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("1..0 # SKIP no CUDA device\n");
		return 77;
	}
	const int L = 1, T = 512, R = 512, P = 64;
	float *lat = (float *)malloc(sizeof(float) * T * R), *rope = (float *)malloc(sizeof(float) * T * P);
	for (int t = 0; t < T; t++) {
		for (int i = 0; i < R; i++)
			lat[t * R + i] = gauss() * (0.02f + 0.01f * (i % 7)) + 0.5f * gauss() * (i < 8);
		for (int i = 0; i < P; i++)
			rope[t * P + i] = gauss() * 0.3f;
	}
	wzc_window w = {};
	w.L = L;
	w.T = T;
	w.R = R;
	w.P = P;
	w.latent = lat;
	w.rope = rope;
	w.split = "calibration";
	const wzc_window *wp = &w;
	wzc_profile *prof = NULL;
	wzc_format fmt;
	wzc_codec *codec = NULL;
	if (wzc_prepare(&wp, 1, NULL, &prof, NULL) || wzc_format_parse("wz-5.44", &fmt, NULL) ||
	    wzc_codec_new(&fmt, L, R, P, prof, &codec, NULL)) {
		check(0, "prepare and plan wz-5.44");
		printf("1..%d\n", n_ok + n_fail);
		return 1;
	}
	size_t rb = wzc_codec_record_bytes(codec);
	uint8_t *rec = (uint8_t *)malloc(rb * T);
	wzc_encode_layer(codec, 0, T, lat, rope, rec, NULL);
	float *want = (float *)malloc(sizeof(float) * T * (R + P)), *got = (float *)malloc(sizeof(float) * T * (R + P));
	for (int t = 0; t < T; t++)
		wzc_wz_decode_token_transformed(codec, 0, rec + t * rb, want + t * (R + P), want + t * (R + P) + R);
	wzc_wz_flat *flat = NULL;
	wzc_cuda_wz *dplan = NULL;
	uint8_t *drec;
	float *dout;
	int rc = wzc_wz_flatten(codec, 0, &flat, NULL) || wzc_cuda_wz_upload(flat, &dplan);
	rc = rc || cudaMalloc(&drec, rb * T) || cudaMalloc(&dout, sizeof(float) * T * (R + P));
	rc = rc || cudaMemcpy(drec, rec, rb * T, cudaMemcpyHostToDevice);
	rc = rc || wzc_cuda_wz_decode(dplan, drec, T, dout);
	rc = rc || cudaMemcpy(got, dout, sizeof(float) * T * (R + P), cudaMemcpyDeviceToHost);
	check(!rc, "wz-5.44: upload and decode on the GPU");
	check(!rc && !memcmp(got, want, sizeof(float) * T * (R + P)),
	      "wz-5.44: GPU transformed decode equals the C reference bit for bit");

	/* fp8-mix: bytes and values */
	wzc_format f8;
	wzc_codec *c8 = NULL;
	wzc_format_parse("fp8-mix", &f8, NULL);
	wzc_codec_new(&f8, L, R, P, NULL, &c8, NULL);
	size_t rb8 = wzc_codec_record_bytes(c8);
	uint8_t *r8 = (uint8_t *)malloc(rb8 * T), *g8 = (uint8_t *)malloc(rb8 * T);
	wzc_encode_layer(c8, 0, T, lat, rope, r8, NULL);
	float *dl, *dr, *gl = (float *)malloc(sizeof(float) * T * R), *gr = (float *)malloc(sizeof(float) * T * P);
	float *wl = (float *)malloc(sizeof(float) * T * R), *wr = (float *)malloc(sizeof(float) * T * P);
	uint8_t *dr8;
	rc = cudaMalloc(&dl, sizeof(float) * T * R) || cudaMalloc(&dr, sizeof(float) * T * P) ||
	     cudaMalloc(&dr8, rb8 * T);
	rc = rc || cudaMemcpy(dl, lat, sizeof(float) * T * R, cudaMemcpyHostToDevice) ||
	     cudaMemcpy(dr, rope, sizeof(float) * T * P, cudaMemcpyHostToDevice);
	rc = rc || wzc_cuda_fp8_mix_encode(dl, dr, T, R, P, dr8) ||
	     cudaMemcpy(g8, dr8, rb8 * T, cudaMemcpyDeviceToHost);
	check(!rc && !memcmp(g8, r8, rb8 * T), "fp8-mix: GPU encode writes the reference's bytes");
	wzc_decode_layer(c8, 0, T, r8, wl, wr);
	rc = rc || wzc_cuda_fp8_mix_decode(dr8, T, R, P, dl, dr) ||
	     cudaMemcpy(gl, dl, sizeof(float) * T * R, cudaMemcpyDeviceToHost) ||
	     cudaMemcpy(gr, dr, sizeof(float) * T * P, cudaMemcpyDeviceToHost);
	check(!rc && !memcmp(gl, wl, sizeof(float) * T * R) && !memcmp(gr, wr, sizeof(float) * T * P),
	      "fp8-mix: GPU decode equals the reference");
	printf("1..%d\n", n_ok + n_fail);
	return n_fail ? 1 : 0;
}
