/* Codec throughput on the CPU: encode and decode of every GPU-tier format in
 * GB/s of bf16-equivalent cache (576 values x 2 bytes per token and layer),
 * one core, median of several runs; wz, wzs and wzt decode both into the
 * transformed domain attention reads and back to the cache's own domain;
 * wzt-5.44's reference encoder after the table, with a check that the fast
 * encoder's records are its bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_util.h"
#include "codec/codec.h"
#include "codec/codec_internal.h"
#include "codec/formats/baseline.h"
#include "codec/formats/bytes.h"
#include "codec/profile/scale_code.h"
#include "codec/wz/wz_plan.h"
#include "codec/wz/wz_plan.h"
#include "codec/profile/profile.h"
#include "codec/wz/wz_gemm.h"
#include "traces/synth_cache.h"

#define RUNS 7
#define TOKENS 4096

/* With arguments, only the formats they name (for profiling one). */
int main(int argc, char **argv)
{
	wzt_cache_trace *cal = bench_window("bench_codec", WZT_FAMILY_MLA_B, 11,
					  "calibration", 1, TOKENS);
	wzt_cache_trace *test = bench_window("bench_codec", WZT_FAMILY_MLA_B, 11,
					  "test", 2, TOKENS);
	if (!cal || !test)
		return 1;
	wz_diag d;
	wzc_profile *prof = bench_prepare_window("bench_codec", cal);
	if (!prof)
		return 1;
	static const char *const names[] = { "bf16", "fp8-mix", "fp8-bf16rope", "fp8-ds-mla",
					     "fp8-flat", "int4-g64", "nvfp4", "nvfp4-ds-mla",
					     "mxfp4-sgl-mla", "nvfp4-trt-cold",
					     "nvfp4-trt-cold-bf16rope", "wz-4.97",
					     "wz-5.44", "wz-6.31", "wzs-4.97", "wzs-5.44",
					     "wzs-6.31", "wzt-4.97",
					     "wzt-5.44", "wzt-6.31", "wzt8-4.97",
					     "wzt8-5.44", "wzt8-6.31", "wzt32-5.44" };
	int R = test->R, P = test->P, T = test->T;
	double gb = (double)T * (R + P) * 2 / 1e9;
	float *lat = malloc(sizeof(float) * (size_t)T * R), *rope = malloc(sizeof(float) * (size_t)T * P);
	uint8_t *rec = malloc((size_t)T * 1152);
	printf("codec throughput, one core (thread CPU time), median of %d runs, %d tokens x 576 values\n"
	       "synthetic mla-b layer; GB/s of bf16-equivalent cache (1152 bytes per token and layer)\n",
	       RUNS, T);
	printf("wz transform kernels: encode %s (exact integer sums), decode %s (fused multiply-add\n"
	       "chains); both give the scalar reference's bits\n\n",
	       wzc_igemm_kernel(), wzc_gemm_kernel());
	printf("%-23s %8s %12s %14s %20s\n", "format", "bytes", "encode GB/s", "decode GB/s",
	       "decode->transformed");
	for (size_t f = 0; f < sizeof names / sizeof names[0]; f++) {
		int wanted = argc < 2;
		for (int a = 1; a < argc; a++)
			wanted |= !strcmp(argv[a], names[f]);
		if (!wanted)
			continue;
		wzc_format fmt;
		wzc_codec *c;
		if (wzc_format_parse(names[f], &fmt, &d) ||
		    wzc_codec_new(&fmt, 1, R, P, prof, &c, &d)) {
			fprintf(stderr, "bench_codec: %s\n", d.msg);
			return 1;
		}
		size_t rb = wzc_codec_record_bytes(c);
		double enc[RUNS], dec[RUNS], dect[RUNS];
		for (int r = 0; r < RUNS; r++) {
			double t0 = bench_thread_cpu_s();
			wzc_encode_layer(c, 0, T, test->latent, test->rope, rec, NULL);
			double t1 = bench_thread_cpu_s();
			if (wzc_decode_layer(c, 0, T, rec, lat, rope))
				fprintf(stderr, "decoding failed (out of memory)\n"), exit(1);
			double t2 = bench_thread_cpu_s();
			dect[r] = 0;
			if (fmt.id == WZC_FMT_WZ || fmt.id == WZC_FMT_WZS ||
			    wzc_format_trellis_nu(fmt.id)) {
				for (int t = 0; t < T; t++)
					wzc_wz_decode_token_transformed(c, 0, rec + (size_t)t * rb,
									lat + (size_t)t * R,
									rope + (size_t)t * P);
				dect[r] = gb / (bench_thread_cpu_s() - t2);
			}
			enc[r] = gb / (t1 - t0);
			dec[r] = gb / (t2 - t1);
		}
		double mt = bench_median(dect, RUNS);
		char tr[32] = "-";
		if (mt > 0)
			snprintf(tr, sizeof tr, "%.2f", mt);
		printf("%-23s %8zu %12.3g %14.3g %20s\n", names[f], rb, bench_median(enc, RUNS),
		       bench_median(dec, RUNS), tr);
		wzc_codec_free(c);
	}
	/* wzt-5.44 by its reference encoder (median of 3: it is slow), and the
	 * fast encoder's records against it */
	wzc_format fmt0;
	wzc_codec *c0;
	if (argc < 2 && !wzc_format_parse("wzt-5.44", &fmt0, &d) &&
	    !wzc_codec_new(&fmt0, 1, R, P, prof, &c0, &d)) {
		size_t rb = wzc_codec_record_bytes(c0);
		uint8_t *ref = malloc((size_t)T * rb);
		double enc[3];
		for (int r = 0; r < 3; r++) {
			double t0 = bench_thread_cpu_s();
			wzc_wz_encode_layer_trellis(c0->wz, c0->wzt, 0, T, test->latent, test->rope, ref,
						    rb);
			enc[r] = gb / (bench_thread_cpu_s() - t0);
		}
		wzc_encode_layer(c0, 0, T, test->latent, test->rope, rec, NULL);
		printf("\nwzt-5.44 reference encoder: encode %.3g GB/s (median of 3); the fast "
		       "encoder's records are its bytes: %s\n",
		       bench_median(enc, 3), memcmp(ref, rec, (size_t)T * rb) ? "NO" : "yes");
		free(ref);
		wzc_codec_free(c0);
	}
	/* wz-5.44 encode by each integer kernel this CPU runs (all write the
	 * same bytes): what machines without AVX-512 VNNI would see */
	wzc_format fmt;
	wzc_codec *c;
	if (argc < 2 && !wzc_format_parse("wz-5.44", &fmt, &d) &&
	    !wzc_codec_new(&fmt, 1, R, P, prof, &c, &d)) {
		const char *chosen = wzc_igemm_kernel();
		static const char *const kernels[] = { "avx512vnni", "avx512bw", "avx2", "portable" };
		printf("\nwz-5.44 encode GB/s by integer kernel:");
		for (size_t k = 0; k < sizeof kernels / sizeof *kernels; k++) {
			if (wzc_gemm_force(kernels[k]))
				continue;
			double enc[RUNS];
			for (int r = 0; r < RUNS; r++) {
				double t0 = bench_thread_cpu_s();
				wzc_encode_layer(c, 0, T, test->latent, test->rope, rec, NULL);
				enc[r] = gb / (bench_thread_cpu_s() - t0);
			}
			printf(" %s %.2f", kernels[k], bench_median(enc, RUNS));
		}
		printf("\n");
		wzc_gemm_force(chosen);
		wzc_codec_free(c);
	}
	free(lat);
	free(rope);
	free(rec);
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(test);
	return 0;
}
