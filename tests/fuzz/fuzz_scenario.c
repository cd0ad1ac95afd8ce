/* Fuzz target for the scenario reader (wzplan-scenario(5)): the keys of
 * both modules that read a scenario, the cost model's and the simulator's.
 * Any bytes are refused with a message that names the file, or give a
 * scenario and simulator parameters that their own validation accepts
 * (one check per parameter, whether its value came from a file or a
 * flag). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/scenario.h"
#include "sim/params.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void need_origin(const wz_diag *diag)
{
	if (!diag->msg[0] || !strstr(diag->msg, "in.scenario"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("in.scenario", data, size);
	wzm_scenario *s = NULL;
	wz_diag diag;
	if (wzm_scenario_load(path, &s, &diag) != WZ_OK) {
		if (s)
			abort();
		need_origin(&diag);
		return 0;
	}
	if (s->users < 1 || s->context < 1 || s->baseline_gpus < 0 || s->nformats < 1 ||
	    !(s->mem.mem_util > 0 && s->mem.mem_util <= 1) || (!isnan(s->mem.weight_bits) && !(s->mem.weight_bits >= 1)))
		abort();
	if (wzm_scenario_validate(s, &diag) != WZ_OK)
		need_origin(&diag);
	wzs_params p;
	wzs_params_default(&p);
	if (wzs_params_from_kv(s->kv, &p, &diag) != WZ_OK)
		need_origin(&diag);
	else if (wzs_params_validate(&p, "fuzz", &diag) != WZ_OK)
		abort(); /* the file's values passed, so their own check must too */
	double factor;
	if (wzs_decode_cost(&p, "wz-5.44", &factor, &diag) == WZ_OK && !(factor > 0))
		abort();
	wzm_scenario_free(s);
	return 0;
}
