/* Tests of the request table: reading, checking, sorting, writing. */
#include "tests/tap.h"
#include "tests/traffic/fixture.h"
#include "traces/traffic.h"
#include "traces/traffic_import.h"

#include "common/wz_io.h"

static wz_diag d;

/* First output of xoshiro256** seeded by splitmix64 from seed 0. */
#define PINNED_FIRST 0x99ec5f36cb75f2b4ULL

/* Reads text as a table; returns the error code, d holds the message. */
static wz_err read_text(const char *text, wzt_unsorted_policy policy, wzt_traffic **t,
			size_t *moved)
{
	const char *p = fx_write("t.csv", text);
	wz_diag_clear(&d);
	return wzt_traffic_read(p, policy, t, moved, &d);
}

/* Field by field: the structs have padding, which memcmp would compare. */
static int same_requests(const wzt_traffic *a, const wzt_traffic *b)
{
	for (size_t i = 0; i < a->n; i++) {
		const wzt_request *x = &a->requests[i], *y = &b->requests[i];
		if (x->session != y->session || x->turn != y->turn || x->arrival_s != y->arrival_s ||
		    x->prompt_tokens != y->prompt_tokens || x->output_tokens != y->output_tokens ||
		    x->prefix_tokens != y->prefix_tokens ||
		    x->shared_prefix_tokens != y->shared_prefix_tokens ||
		    (x->shared_prefix_tokens > 0 && x->shared_prefix != y->shared_prefix))
			return 0;
	}
	return 1;
}

static void refused(const char *text, const char *where, const char *name)
{
	wzt_traffic *t = NULL;
	wz_err e = read_text(text, WZT_UNSORTED_REFUSE, &t, NULL);
	if (!ok(e == WZ_ERR_INPUT && t == NULL, "refused: %s", name))
		printf("#   code %d: %s\n", e, d.msg);
	has_str(d.msg, where, "  message names the place");
	wzt_traffic_free(t);
}

static void test_good(void)
{
	wzt_traffic *t = NULL;
	size_t moved = 99;
	wz_err e = read_text("session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens\n"
			     "0,0,0,100,10,0\n"
			     "1,0,0.5,2000,20,0\n"
			     "0,1,1.25,50,5,110\n",
			     WZT_UNSORTED_REFUSE, &t, &moved);
	ok(e == WZ_OK && t, "a good table reads");
	if (!t)
		return;
	is_long(t->n, 3, "three requests");
	is_long(moved, 0, "nothing reordered");
	is_long(t->requests[2].session, 0, "session");
	is_long(t->requests[2].turn, 1, "turn");
	is_double(t->requests[2].arrival_s, 1.25, 0, "arrival");
	is_long(t->requests[2].prefix_tokens, 110, "prefix");
	is_long(t->requests[1].prompt_tokens, 2000, "prompt");

	/* Round trip: write, read, write again: same bytes. */
	const char *a = fx_path("a.csv"), *b = fx_path("b.csv");
	t->requests[1].arrival_s = 0.1 + 0.2; /* not short in decimal */
	ok(wzt_traffic_write(a, t, &d) == WZ_OK, "writes");
	wzt_traffic *u = NULL;
	ok(wzt_traffic_read(a, WZT_UNSORTED_REFUSE, &u, NULL, &d) == WZ_OK && u, "reads back");
	if (u) {
		ok(u->n == t->n && same_requests(u, t), "round trip is exact (times to the last bit)");
		ok(wzt_traffic_write(b, u, &d) == WZ_OK, "writes again");
		char *x, *y;
		size_t nx, ny;
		wz_read_file(a, 1 << 20, &x, &nx, &d);
		wz_read_file(b, 1 << 20, &y, &ny, &d);
		ok(nx == ny && !memcmp(x, y, nx), "second write has the same bytes");
		free(x);
		free(y);
	}
	wzt_traffic_free(u);
	wzt_traffic_free(t);

	/* Messy but valid: BOM, CRLF, quotes, blank lines, extra and
	 * reordered columns, no prefix_tokens. */
	e = read_text("\xEF\xBB\xBF"
		      "arrival_s,note,session,turn,\"prompt_tokens\",output_tokens\r\n"
		      "\r\n"
		      "0.5,\"a, quoted\",3,0,\"12\",7\r\n"
		      "\n"
		      "2,x,3,1,5,1",
		      WZT_UNSORTED_REFUSE, &t, NULL);
	if (!ok(e == WZ_OK && t && t->n == 2, "BOM, CRLF, quotes, blank lines, extra columns"))
		printf("#   %s\n", d.msg);
	if (t) {
		is_long(t->requests[0].prompt_tokens, 12, "quoted number");
		is_long(t->requests[1].prefix_tokens, 0, "prefix_tokens defaults to 0");
	}
	wzt_traffic_free(t);

	e = read_text("session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens\n",
		      WZT_UNSORTED_REFUSE, &t, NULL);
	ok(e == WZ_OK && t && t->n == 0, "a header alone is an empty table");
	wzt_traffic_free(t);
}

static void test_errors(void)
{
	const char *h = "session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens\n";
	char buf[512];
#define ROW(r) (snprintf(buf, sizeof buf, "%s0,0,0,1,1,0\n" r "\n", h), buf)
	refused(ROW("1,0,1,x,1,0"), "t.csv:3: field prompt_tokens", "text token count");
	refused(ROW("1,0,1,-5,1,0"), "t.csv:3: field prompt_tokens: negative", "negative tokens");
	refused(ROW("1,0,1,5,100000001,0"), "t.csv:3: field output_tokens", "absurd tokens");
	refused(ROW("1,0,1,5,1,2.5"), "t.csv:3: field prefix_tokens", "fractional tokens");
	refused(ROW("1,0,nan,5,1,0"), "t.csv:3: field arrival_s", "nan time");
	refused(ROW("1,0,inf,5,1,0"), "t.csv:3: field arrival_s", "infinite time");
	refused(ROW("1,0,-1,5,1,0"), "t.csv:3: field arrival_s", "negative time");
	refused(ROW("a,0,1,5,1,0"), "t.csv:3: field session", "bad session");
	refused(ROW("2147483647,0,1,5,1,0"), "t.csv:3: field session", "session id too large");
	refused(ROW("1,-1,1,5,1,0"), "t.csv:3: field turn", "bad turn");
	refused(ROW("1,0,1"), "t.csv:3: field prompt_tokens", "short row");
	refused(ROW("1,0,1,5,1,0\n\"2,0"), "field session", "unclosed quote");
	refused("session,turn,arrival,prompt_tokens,output_tokens\n", "t.csv:1: header",
		"missing column");
	refused("", "t.csv:1", "empty file");
#undef ROW
	const char *unsorted = "session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens\n"
			       "0,0,5,1,1,0\n"
			       "1,0,3,2,1,0\n"
			       "2,0,4,3,1,0\n"
			       "3,0,6,4,1,0\n"
			       "4,0,1,5,1,0\n";
	refused(unsorted, "t.csv:3: field arrival_s", "out of order, refused");
	wzt_traffic *t = NULL;
	size_t moved = 0;
	wz_err e = read_text(unsorted, WZT_UNSORTED_SORT, &t, &moved);
	ok(e == WZ_OK && t, "out of order, sorted on request");
	if (t) {
		is_long(moved, 3, "three rows were out of order");
		int sorted = 1;
		for (size_t i = 1; i < t->n; i++)
			sorted &= t->requests[i - 1].arrival_s <= t->requests[i].arrival_s;
		ok(sorted && t->requests[0].prompt_tokens == 5, "sorted by arrival");
	}
	wzt_traffic_free(t);

	/* Ties keep file order (a stable sort). */
	e = read_text("session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens\n"
		      "0,0,2,1,1,0\n1,0,1,2,1,0\n2,0,1,3,1,0\n3,0,1,4,1,0\n",
		      WZT_UNSORTED_SORT, &t, &moved);
	ok(e == WZ_OK && t && t->requests[0].prompt_tokens == 2 &&
		   t->requests[1].prompt_tokens == 3 && t->requests[2].prompt_tokens == 4,
	   "the sort is stable");
	wzt_traffic_free(t);

	/* A failed write leaves the old file. */
	const char *p = fx_write("keep.csv", "old");
	wzt_traffic *empty = wzt_traffic_new("x", "y");
	/* The count is per process: test_good wrote twice before. */
	setenv("WZ_FAULT_WRITE", "3", 1);
	ok(wzt_traffic_write(p, empty, &d) != WZ_OK, "an injected write fault is reported");
	unsetenv("WZ_FAULT_WRITE");
	char *old;
	size_t n;
	ok(wz_read_file(p, 100, &old, &n, &d) == WZ_OK && n == 3 && !memcmp(old, "old", 3),
	   "the old file is untouched");
	free(old);
	wzt_traffic_free(empty);
}

static void test_helpers(void)
{
	wzt_traffic *t = wzt_traffic_new("x", "y");
	wzt_request rs[] = { { .session = 70, .arrival_s = 12 },
			     { .session = 5, .arrival_s = 11 },
			     { .session = 70, .arrival_s = 10 } };
	for (int i = 0; i < 3; i++)
		wzt_traffic_push(t, &rs[i], &d);
	size_t moved;
	ok(wzt_traffic_finish(t, &moved, &d) == WZ_OK, "finish");
	is_long(moved, 2, "two reordered");
	is_double(t->requests[0].arrival_s, 0, 0, "rebased to 0 s");
	ok(t->requests[0].session == 0 && t->requests[0].turn == 0 &&
		   t->requests[1].session == 1 && t->requests[2].session == 0 &&
		   t->requests[2].turn == 1,
	   "sessions dense in order of first arrival, turns counted");
	wzt_traffic_free(t);
	wzt_traffic_free(NULL);

	wzt_rng a, b;
	wzt_rng_seed(&a, 42);
	wzt_rng_seed(&b, 42);
	int same = 1;
	for (int i = 0; i < 100; i++)
		same &= wzt_rng_next(&a) == wzt_rng_next(&b);
	ok(same, "the generator is deterministic per seed");
	wzt_rng_seed(&a, 0);
	/* Pins the sequence, so that a change of generator (which would
	 * change every synthetic trace) is noticed. */
	ok(wzt_rng_next(&a) == PINNED_FIRST, "seed 0 gives the pinned first value");
	double sum = 0, sum2 = 0;
	const int n = 20000;
	for (int i = 0; i < n; i++) {
		double g = wzt_rng_gamma(&a, 0.25, 4.0); /* mean 1, cv 2 */
		sum += g;
		sum2 += g * g;
	}
	double mean = sum / n, sd = sqrt(sum2 / n - mean * mean);
	ok(fabs(mean - 1) < 0.08 && fabs(sd / mean - 2) < 0.15, "Gamma(0.25) has mean 1, CV 2");
}

/* The optional shared prefix columns: read, written only when a row has
 * one, round trip exact, and refused when malformed. */
static void test_shared_prefix(void)
{
	wzt_traffic *t = NULL;
	wz_err e = read_text("session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens,"
			     "shared_prefix,shared_prefix_tokens\n"
			     "0,0,0,5000,10,0,7,4000\n"
			     "1,0,1,100,10,0,,\n"
			     "2,0,2,300,10,4000,7,4000\n",
			     WZT_UNSORTED_REFUSE, &t, NULL);
	if (!ok(e == WZ_OK && t && t->n == 3, "a table with shared prefixes reads"))
		printf("#   %s\n", d.msg);
	if (!t)
		return;
	is_long(t->requests[0].shared_prefix, 7, "shared prefix id");
	is_long(t->requests[0].shared_prefix_tokens, 4000, "shared prefix tokens");
	is_long(t->requests[1].shared_prefix_tokens, 0, "an empty field: no shared prefix");
	const char *a = fx_path("s.csv");
	wzt_traffic *u = NULL;
	ok(wzt_traffic_write(a, t, &d) == WZ_OK &&
		   wzt_traffic_read(a, WZT_UNSORTED_REFUSE, &u, NULL, &d) == WZ_OK && u &&
		   u->n == 3 && same_requests(u, t),
	   "shared prefixes survive a round trip");
	char *x = NULL;
	size_t nx;
	wz_read_file(a, 1 << 20, &x, &nx, &d);
	has_str(x ? x : "", "shared_prefix,shared_prefix_tokens\n0,0,0,5000,10,0,7,4000\n1,0,1,100,10,0,,0\n",
		"  written with the two columns");
	free(x);
	for (size_t i = 0; i < t->n; i++)
		t->requests[i].shared_prefix_tokens = 0;
	ok(wzt_traffic_write(a, t, &d) == WZ_OK && wz_read_file(a, 1 << 20, &x, &nx, &d) == WZ_OK &&
		   !strstr(x, "shared"),
	   "a table without shared prefixes is written as before");
	free(x);
	wzt_traffic_free(u);
	wzt_traffic_free(t);
	const char *h = "session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens,"
			"shared_prefix,shared_prefix_tokens\n";
	char buf[512];
#define ROW(r) (snprintf(buf, sizeof buf, "%s0,0,0,10,1,0,,\n" r "\n", h), buf)
	refused(ROW("1,0,1,10,1,0,x,5"), "t.csv:3: field shared_prefix", "a shared prefix id that is text");
	refused(ROW("1,0,1,10,1,0,-1,5"), "t.csv:3: field shared_prefix", "a negative id");
	refused(ROW("1,0,1,10,1,0,3,"), "t.csv:3: field shared_prefix_tokens", "an id without tokens");
	refused(ROW("1,0,1,10,1,5,3,16"), "t.csv:3: field shared_prefix_tokens: 16 is more",
		"more shared tokens than the context");
#undef ROW
	refused("session,turn,arrival_s,prompt_tokens,output_tokens,shared_prefix\n",
		"t.csv:1: header: column shared_prefix without shared_prefix_tokens",
		"one shared prefix column without the other");
}

/* The optional chain column: the prefixes a shared prefix begins with,
 * kept as a tree, written back the same, and refused where it does not
 * hold together. */
static void test_prefix_chain(void)
{
	const char *h = "session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens,"
			"shared_prefix,shared_prefix_tokens,shared_prefix_chain\n";
	char buf[1024];
	snprintf(buf, sizeof buf,
		 "%s0,0,0,5000,10,0,7,4000,3:1000/5:2500\n1,0,1,5000,10,0,8,4500,3:1000\n"
		 "2,0,2,900,10,0,,0,\n",
		 h);
	wzt_traffic *t = NULL;
	if (!ok(read_text(buf, WZT_UNSORTED_REFUSE, &t, NULL) == WZ_OK && t,
		"a table with prefix chains reads"))
		printf("#   %s\n", d.msg);
	if (!t)
		return;
	const wzt_prefix *p7 = wzt_traffic_prefix(t, 7), *p5 = wzt_traffic_prefix(t, 5),
			 *p3 = wzt_traffic_prefix(t, 3), *p8 = wzt_traffic_prefix(t, 8);
	ok(p7 && p5 && p3 && p8 && p7->parent == 5 && p5->parent == 3 && p3->parent == -1 &&
		   p8->parent == 3 && p5->tokens == 2500 && p3->tokens == 1000,
	   "7 begins with 5, which begins with 3; 8 with 3");
	const char *a = fx_path("c.csv");
	char *x = NULL;
	size_t nx;
	ok(wzt_traffic_write(a, t, &d) == WZ_OK && wz_read_file(a, 1 << 20, &x, &nx, &d) == WZ_OK &&
		   strstr(x, "shared_prefix_chain\n0,0,0,5000,10,0,7,4000,3:1000/5:2500\n"
			     "1,0,1,5000,10,0,8,4500,3:1000\n2,0,2,900,10,0,,0,\n"),
	   "written back with the same chains");
	free(x);
	wzt_traffic_free(t);
#define ROW(r) (snprintf(buf, sizeof buf, "%s0,0,0,5000,10,0,7,4000,3:1000\n" r "\n", h), buf)
	refused(ROW("1,0,1,10,1,0,,0,3:5"), "t.csv:3: field shared_prefix_chain",
		"a chain without a shared prefix");
	refused(ROW("1,0,1,5000,1,0,8,4000,3-1000"), "t.csv:3: field shared_prefix_chain",
		"a chain that is not id:tokens");
	refused(ROW("1,0,1,5000,1,0,8,4000,3:1000/4:900"), "t.csv:3: field shared_prefix_chain",
		"tokens that do not grow along the chain");
	refused(ROW("1,0,1,5000,1,0,8,4000,3:4000"), "t.csv:3: field shared_prefix_chain",
		"an ancestor as long as the prefix");
	refused(ROW("1,0,1,5000,1,0,8,4000,3:1200"), "t.csv:3: field shared_prefix_chain: prefix 3",
		"a prefix given two lengths");
	refused(ROW("1,0,1,5000,1,0,7,4000,9:1000"), "t.csv:3: field shared_prefix_chain: prefix 7",
		"a prefix given two parents");
#undef ROW
	refused("session,turn,arrival_s,prompt_tokens,output_tokens,shared_prefix_chain\n",
		"t.csv:1: header: column shared_prefix_chain without shared_prefix",
		"a chain column without the shared prefix");
}

int main(void)
{
	fx_init();
	test_good();
	test_errors();
	test_shared_prefix();
	test_prefix_chain();
	test_helpers();
	fx_cleanup();
	return tap_done();
}
