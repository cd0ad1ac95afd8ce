/* Fuzz target for the BurstGPT CSV importer: any bytes are refused with a message, or
 * give a table that keeps every promise of traffic.h, the same whether
 * out-of-order rows are refused or sorted (fuzz_check_policies). */
#include <stdint.h>

#include "tests/fuzz/fuzz_file.h"
#include "traces/traffic_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("in.csv", data, size);
	wzt_traffic *refused = NULL, *sorted = NULL;
	size_t moved = 0;
	wz_diag refuse_diag, sort_diag;
	wz_err refuse_err = wzt_import_burstgpt(path, NULL, WZT_UNSORTED_REFUSE,
					&refused, NULL, &refuse_diag);
	wz_err sort_err = wzt_import_burstgpt(path, NULL, WZT_UNSORTED_SORT,
					&sorted, &moved, &sort_diag);
	fuzz_check_policies(refuse_err, refused, &refuse_diag, sort_err, sorted, moved,
			    &sort_diag);
	wzt_traffic_free(refused);
	wzt_traffic_free(sorted);
	return 0;
}
