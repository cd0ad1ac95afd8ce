/* Fuzz target for the Mooncake JSONL importer: any bytes are refused with
 * a message, or give a table that keeps every promise of traffic.h, the
 * same whether out-of-order records are refused or sorted, with prefix
 * statistics that add up (hits within blocks, shared within hits). */
#include <stdint.h>
#include <stdlib.h>

#include "tests/fuzz/fuzz_file.h"
#include "traces/traffic_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("in.jsonl", data, size);
	wzt_traffic *refused = NULL, *sorted = NULL;
	size_t moved = 0;
	wz_diag refuse_diag, sort_diag;
	wzt_mooncake_stats st = { 0 };
	wz_err refuse_err = wzt_import_mooncake(path, 512, WZT_UNSORTED_REFUSE, &refused, NULL,
						NULL, &refuse_diag);
	wz_err sort_err = wzt_import_mooncake(path, 512, WZT_UNSORTED_SORT, &sorted, &moved, &st,
					      &sort_diag);
	fuzz_check_policies(refuse_err, refused, &refuse_diag, sort_err, sorted, moved,
			    &sort_diag);
	if (!sort_err && !(st.blocks >= 0 && st.hit_blocks >= 0 && st.hit_blocks <= st.blocks &&
			   st.shared_blocks >= 0 && st.shared_blocks <= st.hit_blocks))
		abort();
	wzt_traffic_free(refused);
	wzt_traffic_free(sorted);
	return 0;
}
