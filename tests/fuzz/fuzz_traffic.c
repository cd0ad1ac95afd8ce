/* Fuzz target for the normalized request table's reader (the file `sim
 * --traffic` reads): any bytes are refused with a message, or give a table
 * that is sorted, in range and the same after a trip through the writer,
 * whether out-of-order rows are refused or sorted. */
#include <stdint.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("in.csv", data, size);
	wzt_traffic *refused = NULL, *sorted = NULL;
	size_t moved = 0;
	wz_diag refuse_diag, sort_diag;
	wz_err refuse_err = wzt_traffic_read(path, WZT_UNSORTED_REFUSE, &refused, NULL,
					     &refuse_diag);
	wz_err sort_err = wzt_traffic_read(path, WZT_UNSORTED_SORT, &sorted, &moved, &sort_diag);
	if (refuse_err)
		fuzz_check_refusal(refused, refuse_diag.msg);
	if (sort_err)
		fuzz_check_refusal(sorted, sort_diag.msg);
	if (!refuse_err && (sort_err || moved))
		abort();
	if (!refuse_err)
		fuzz_check_same(refused, sorted);
	if (!sort_err)
		fuzz_check_table(sorted);
	wzt_traffic_free(refused);
	wzt_traffic_free(sorted);
	return 0;
}
