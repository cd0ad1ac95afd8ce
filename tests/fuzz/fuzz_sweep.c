/* Fuzz target for the sweep file reader (wzplan-sweep(5)): any bytes are
 * refused with a message that names the file, or give a sweep of 1 to
 * 10^6 points whose first and last points build, each with a 16-digit id
 * and a scenario text, and whose axes hold no value twice. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_point(const wzsw_sweep *s, long index)
{
	wzsw_point p;
	wz_diag diag;
	wz_diag_clear(&diag);
	if (wzsw_point_build(s, index, &p, &diag) != WZ_OK) {
		/* wzsw_load builds every point: one that fails here is a bug */
		abort();
	}
	if (p.index != index || strlen(p.id) != 16 || strspn(p.id, "0123456789abcdef") != 16 ||
	    !p.scenario || (p.n > 0 && (!p.keys || !p.values)))
		abort();
	wzsw_point_clear(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("in.sweep", data, size);
	wzsw_sweep *s = NULL;
	wz_diag diag;
	wz_diag_clear(&diag);
	if (wzsw_load(path, &s, &diag) != WZ_OK) {
		if (s || !diag.msg[0] || (!strstr(diag.msg, "in.sweep") && diag.code != WZ_ERR_NOMEM))
			abort();
		return 0;
	}
	if (s->npoints < 1 || s->npoints > 1000000 || !s->name || !s->base_text)
		abort();
	for (int a = 0; a < s->naxes; a++) {
		const wzsw_axis *ax = &s->axes[a];
		if (ax->nvalues < 1 || ax->nvalues > 10000)
			abort();
		for (int i = 1; i < ax->nvalues && i < 64; i++)
			for (int j = 0; j < i; j++)
				if (!strcmp(ax->values[i], ax->values[j]))
					abort();
	}
	check_point(s, 0);
	check_point(s, s->npoints - 1);
	wzsw_free(s);
	return 0;
}
