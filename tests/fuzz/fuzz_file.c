/* Private files and table checks for the fuzz targets (fuzz_file.h). */
#include "tests/fuzz/fuzz_file.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/wz_io.h"
#include "traces/traffic_import.h"

static char dir[4096];
static char path[4096 + 64];

static void remove_dir(void)
{
	static const char *const names[] = { "in.csv",       "in.jsonl",
					     "in.scenario",  "models.csv",
					     "gpus.csv",     "prices.csv",
					     "back.csv",     "chunk-0-trace.csv",
					     "chunk-0-dataset.json", NULL };
	for (int i = 0; names[i]; i++)
		fuzz_unlink(names[i]);
	rmdir(dir);
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		const char *tmp = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%s/wzplan-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir))
			abort();
		atexit(remove_dir);
	}
	return dir;
}

const char *fuzz_file(const char *name, const void *data, size_t size)
{
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
	FILE *f = fopen(path, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f))
		abort();
	return path;
}

void fuzz_unlink(const char *name)
{
	snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
	unlink(path);
}

void fuzz_check_refusal(const wzt_traffic *t, const char *msg)
{
	if (t || !msg[0])
		abort();
}

void fuzz_check_same(const wzt_traffic *a, const wzt_traffic *b)
{
	if (a->n != b->n)
		abort();
	for (size_t i = 0; i < a->n; i++) {
		const wzt_request *x = &a->requests[i], *y = &b->requests[i];
		if (x->session != y->session || x->turn != y->turn ||
		    x->prompt_tokens != y->prompt_tokens || x->output_tokens != y->output_tokens ||
		    x->prefix_tokens != y->prefix_tokens || x->arrival_s != y->arrival_s)
			abort();
	}
}

/* What a table promises whoever reads it: sorted, finite, in range, and
 * the same after a trip through its file (the simulator reads that file). */
void fuzz_check_table(const wzt_traffic *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const wzt_request *r = &t->requests[i];
		if (!isfinite(r->arrival_s) || r->arrival_s < 0 ||
		    (i > 0 && r->arrival_s < t->requests[i - 1].arrival_s))
			abort();
		if (r->session < 0 || r->turn < 0 || r->prompt_tokens < 0 ||
		    r->prompt_tokens > WZT_MAX_TOKENS || r->output_tokens < 0 ||
		    r->output_tokens > WZT_MAX_TOKENS || r->prefix_tokens < 0 ||
		    r->prefix_tokens > WZT_MAX_TOKENS)
			abort();
	}
	wz_diag diag;
	char back_path[sizeof path];
	snprintf(back_path, sizeof back_path, "%s/back.csv", fuzz_dir());
	if (wzt_traffic_write(back_path, t, &diag) != WZ_OK)
		abort();
	wzt_traffic *back = NULL;
	if (wzt_traffic_read(back_path, WZT_UNSORTED_REFUSE, &back, NULL, &diag) != WZ_OK)
		abort();
	fuzz_check_same(t, back);
	wzt_traffic_free(back);
}

void fuzz_check_policies(wz_err refuse_err, const wzt_traffic *refused, const wz_diag *refuse_diag,
			 wz_err sort_err, const wzt_traffic *sorted, size_t moved,
			 const wz_diag *sort_diag)
{
	if (refuse_err)
		fuzz_check_refusal(refused, refuse_diag->msg);
	if (sort_err)
		fuzz_check_refusal(sorted, sort_diag->msg);
	if (!refuse_err && (sort_err || moved))
		abort(); /* a file read in order needs no sorting */
	if (sort_err && !refuse_err)
		abort();
	if (!refuse_err)
		fuzz_check_same(refused, sorted);
	if (!sort_err)
		fuzz_check_imported(sorted, 1);
}

void fuzz_check_imported(const wzt_traffic *t, int from_zero)
{
	fuzz_check_table(t);
	int64_t sessions = 0;
	int32_t *turns = calloc(t->n + 1, sizeof *turns);
	if (!turns || (from_zero && t->n && t->requests[0].arrival_s != 0))
		abort();
	for (size_t i = 0; i < t->n; i++) {
		const wzt_request *r = &t->requests[i];
		if (r->session > sessions)
			abort(); /* a new session takes the next number */
		if (r->session == sessions)
			sessions++;
		if (r->turn != turns[r->session]++)
			abort();
	}
	free(turns);
}
