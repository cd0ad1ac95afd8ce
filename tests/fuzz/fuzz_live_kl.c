/* Fuzz target for the live-KL summary reader (propose --live-kl, the JSON
 * `wzcapture.py report --json` writes): any bytes are refused with exit
 * status 2 and a message that names the file, or give figures that mean
 * what their columns say: KL divergences, their intervals, ratios and p99
 * at least 0, top-1 agreement in [0, 1], bits per value in (0, 64]. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "archive/archive.h"
#include "runs/propose.h"
#include "runs/say.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char said[4096];

static int keep(void *ud, wz_say_stream to, const char *text)
{
	(void)ud, (void)to;
	size_t n = strlen(said);
	if (n + 1 < sizeof said)
		strncat(said, text, sizeof said - n - 1);
	return 0;
}

static void check_figure(const wza_figure *f)
{
	double v = f->value;
	if (isnan(v))
		return;
	if (!isfinite(v))
		abort();
	int live = !strcmp(f->table, "live_kl"), iso = !strcmp(f->table, "live_kl_iso");
	if (live && (!strncmp(f->col, "kl", 2) || !strncmp(f->col, "ratio", 5) || !strcmp(f->col, "p99")) &&
	    v < 0)
		abort();
	if (live && !strcmp(f->col, "top1") && !(v >= 0 && v <= 1))
		abort();
	if ((live || iso) && (!strcmp(f->col, "bits") || (iso && (!strcmp(f->col, "lo") || !strcmp(f->col, "hi")))) &&
	    !(v > 0 && v <= 64))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	wz_say_to(keep, NULL);
	said[0] = '\0';
	const char *path = fuzz_file("in.json", data, size);
	wza_run *run = wza_run_new("propose", 0, NULL, "fuzz");
	if (!run)
		return 0;
	int rc = wz_propose_live_kl("propose", path, run);
	if (rc == 2) {
		if (!strstr(said, "in.json"))
			abort();
	} else if (rc == 1) {
		if (!strstr(said, "out of memory"))
			abort();
	} else if (rc != 0) {
		abort();
	} else {
		for (int i = 0; i < run->nfigures; i++)
			check_figure(&run->figures[i]);
	}
	wza_run_free(run);
	return 0;
}
