/* Fuzz target for the cache-trace readers: any bytes must either be refused
 * with a message or give a trace that the writer accepts and that reads
 * back the same (so the reader never hands out a trace it would refuse);
 * and the block reader (wzt_cache_stream_*), on the same bytes as a file,
 * must refuse them exactly when the whole-file reader does, and otherwise
 * give the same shape and, block by block, the same values. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_file.h"
#include "traces/cache_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless the block reader agrees with the whole-file reader's
 * result t (NULL: refused). */
static void check_stream(const uint8_t *data, size_t size, const wzt_cache_trace *t)
{
	wzt_cache_stream *s;
	wz_diag diag;
	diag.msg[0] = 0;
	if (wzt_cache_stream_open(fuzz_file("trace.safetensors", data, size), &s, &diag)) {
		if (t || s || !diag.msg[0])
			abort();
		return;
	}
	const wzt_cache_trace *in = wzt_cache_stream_info(s);
	float *lat = malloc(sizeof(float) * 64 * (size_t)in->R);
	float *rope = malloc(sizeof(float) * (64 * (size_t)in->P + 1));
	if (!lat || !rope)
		abort();
	wz_err e = WZ_OK;
	if (t && (in->L != t->L || in->T != t->T || in->R != t->R || in->P != t->P ||
		  in->Q != t->Q || in->H != t->H || strcmp(in->split, t->split) ||
		  strcmp(in->model, t->model) || in->softmax_scale != t->softmax_scale))
		abort();
	for (int l = 0; !e && l < in->L; l++)
		for (int t0 = 0; !e && t0 < in->T; t0 += 64) {
			int n = in->T - t0 < 64 ? in->T - t0 : 64;
			e = wzt_cache_stream_read(s, l, t0, n, lat, rope, &diag);
			if (e && (t || !diag.msg[0]))
				abort(); /* refused a block the whole reader took */
			size_t row = (size_t)l * in->T + (size_t)t0;
			if (!e && t &&
			    (memcmp(lat, t->latent + row * in->R, sizeof(float) * (size_t)n * in->R) ||
			     memcmp(rope, t->rope + row * in->P, sizeof(float) * (size_t)n * in->P)))
				abort();
		}
	if (!e && !t)
		abort(); /* took every block of a file the whole reader refused */
	free(lat);
	free(rope);
	wzt_cache_stream_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	wzt_cache_trace *t = NULL;
	wz_diag diag;
	if (wzt_cache_trace_parse(data, size, "fuzz", &t, &diag) != WZ_OK) {
		if (t || !diag.msg[0])
			abort(); /* a refusal must come with a message and no trace */
		check_stream(data, size, NULL);
		return 0;
	}
	check_stream(data, size, t);
	unsigned char *bytes;
	size_t n;
	if (wzt_cache_trace_encode(t, WZT_DTYPE_F32, &bytes, &n, &diag) != WZ_OK)
		abort();
	wzt_cache_trace *back = NULL;
	if (wzt_cache_trace_parse(bytes, n, "fuzz-again", &back, &diag) != WZ_OK ||
	    back->L != t->L || back->T != t->T || back->Q != t->Q ||
	    memcmp(back->latent, t->latent, sizeof(float) * (size_t)t->L * t->T * t->R) != 0)
		abort();
	free(bytes);
	wzt_cache_trace_free(back);
	wzt_cache_trace_free(t);
	return 0;
}
