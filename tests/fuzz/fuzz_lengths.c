/* Fuzz target for the length-only CSV importer (Vidur's processed traces):
 * any bytes are refused with a message, or give one request per row in
 * file order that keeps every promise of traffic.h, the same for the same
 * seed. */
#include <stdint.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz_file.h"
#include "traces/traffic_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("in.csv", data, size);
	/* A cv of 1 draws exponential gaps, any other Gamma ones. */
	wzt_lengths_opts o = { .rate = 4, .cv = size % 2 ? 1 : 3, .seed = size };
	wzt_traffic *t = NULL, *again = NULL;
	wz_diag diag;
	wz_err err = wzt_import_lengths(path, &o, &t, &diag);
	if (err) {
		fuzz_check_refusal(t, diag.msg);
		return 0;
	}
	fuzz_check_imported(t, 1);
	if (wzt_import_lengths(path, &o, &again, &diag) != WZ_OK)
		abort();
	fuzz_check_same(t, again);
	wzt_traffic_free(again);
	wzt_traffic_free(t);
	return 0;
}
