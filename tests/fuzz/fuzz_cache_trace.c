/* Fuzz target for the cache-trace reader: any bytes must either be refused
 * with a message or give a trace that the writer accepts and that reads
 * back the same (so the reader never hands out a trace it would refuse). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "traces/cache_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	wzt_cache_trace *t = NULL;
	wz_diag diag;
	if (wzt_cache_trace_parse(data, size, "fuzz", &t, &diag) != WZ_OK) {
		if (t || !diag.msg[0])
			abort(); /* a refusal must come with a message and no trace */
		return 0;
	}
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
