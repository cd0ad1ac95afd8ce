/* Fuzz target for the ServeGen importer: the input holds a client's two
 * files, chunk-0-trace.csv, then a line "====" and chunk-0-dataset.json
 * (without that line, the dataset is "{}").  Any input is refused with a
 * message, or gives a table that keeps every promise of traffic.h, inside
 * the sampled span, the same for the same seed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/fuzz/fuzz_file.h"
#include "traces/traffic_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char separator[] = "\n====\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t trace_size = size, sep = sizeof separator - 1;
	for (size_t i = 0; i + sep <= size; i++)
		if (!memcmp(data + i, separator, sep)) {
			trace_size = i + 1; /* the trace keeps its last newline */
			break;
		}
	if (trace_size < size)
		fuzz_file("chunk-0-dataset.json", data + trace_size - 1 + sep,
			  size - (trace_size - 1 + sep));
	else
		fuzz_file("chunk-0-dataset.json", "{}", 2);
	fuzz_file("chunk-0-trace.csv", data, trace_size);
	const char *folder = fuzz_dir();
	wzt_servegen_opts o = { .start_s = 3600, .duration_s = 600, .seed = 5 };
	wzt_traffic *t = NULL, *again = NULL;
	wz_diag diag;
	wz_err err = wzt_import_servegen(&folder, 1, &o, &t, &diag);
	if (err) {
		fuzz_check_refusal(t, diag.msg);
		return 0;
	}
	fuzz_check_imported(t, 0);
	if (t->n && t->requests[t->n - 1].arrival_s >= o.duration_s)
		abort();
	if (wzt_import_servegen(&folder, 1, &o, &again, &diag) != WZ_OK)
		abort();
	fuzz_check_same(t, again);
	wzt_traffic_free(again);
	wzt_traffic_free(t);
	return 0;
}
