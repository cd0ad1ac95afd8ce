/* Out of memory at every allocation: a profile read from its file, a codec
 * made for it, every layer encoded and decoded, everything freed, with the
 * k-th allocation refused for k = 0, 1, 2, ... until a pass refuses none.
 * Each pass must end in WZ_ERR_NOMEM or in the records and values of a
 * pass with memory (a fallback that copes is fine), and free everything
 * it allocated.  The allocator is wrapped at link time (-Wl,--wrap: the
 * project's own calls only, not the C library's), its live blocks
 * counted.  OOM_DEBUG=1 prints each pass that ends otherwise;
 * OOM_TRACE=FORMAT also prints the stack of the first such refusal. */
#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/codec.h"
#include "codec/profile/profile.h"
#include "tests/codec/window.h"
#include "tests/tap.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
void *__real_aligned_alloc(size_t al, size_t n);
int __real_posix_memalign(void **p, size_t al, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
void __wrap_free(void *p);
void *__wrap_aligned_alloc(size_t al, size_t n);
int __wrap_posix_memalign(void **p, size_t al, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

/* The live blocks the wrappers handed out: an open-addressed set. */
enum { SLOTS = 1 << 20 };
static void *live[SLOTS];
static long nlive;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long calls, fail_at = -1;

static size_t slot_of(const void *p)
{
	uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 44) & (SLOTS - 1);
}

static void track(void *p)
{
	size_t i = slot_of(p);
	while (live[i])
		i = (i + 1) & (SLOTS - 1);
	live[i] = p;
	nlive++;
}

/* Removes p from the set (backward-shift deletion); 0 where it was not
 * there (a block of the C library's). */
static int untrack(void *p)
{
	size_t i = slot_of(p);
	while (live[i] && live[i] != p)
		i = (i + 1) & (SLOTS - 1);
	if (!live[i])
		return 0;
	live[i] = NULL;
	nlive--;
	for (size_t j = (i + 1) & (SLOTS - 1); live[j]; j = (j + 1) & (SLOTS - 1)) {
		size_t k = slot_of(live[j]);
		/* move live[j] back to i when its home k is not in (i, j] */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			live[i] = live[j];
			live[j] = NULL;
			i = j;
		}
	}
	return 1;
}

/* 1 where this allocation is refused. */
static long trace_at = -1;
static int refuse(void)
{
	if (calls == fail_at && fail_at == trace_at) {
		void *bt[16];
		int nb = backtrace(bt, 16);
		backtrace_symbols_fd(bt, nb, 2);
	}
	return calls++ == fail_at;
}

/* An allocation's turn: the lock taken, 1 where it is refused; kept(p)
 * tracks what the real allocator made of it and lets the lock go. */
static int turn(void)
{
	pthread_mutex_lock(&lock);
	return refuse();
}

static void *kept(void *p)
{
	if (p)
		track(p);
	pthread_mutex_unlock(&lock);
	return p;
}

void *__wrap_malloc(size_t n)
{
	return kept(turn() ? NULL : __real_malloc(n));
}

void *__wrap_calloc(size_t a, size_t b)
{
	return kept(turn() ? NULL : __real_calloc(a, b));
}

void *__wrap_realloc(void *p, size_t n)
{
	if (turn())
		return kept(NULL);
	int mine = p && untrack(p);
	void *q = __real_realloc(p, n);
	if (!q && mine)
		track(p); /* refused by the C library: p stays */
	return kept(q);
}

void __wrap_free(void *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&lock);
	untrack(p);
	pthread_mutex_unlock(&lock);
	__real_free(p);
}

void *__wrap_aligned_alloc(size_t al, size_t n)
{
	return kept(turn() ? NULL : __real_aligned_alloc(al, n));
}

int __wrap_posix_memalign(void **out, size_t al, size_t n)
{
	int e = turn() ? ENOMEM : __real_posix_memalign(out, al, n);
	kept(e ? NULL : *out);
	return e;
}

char *__wrap_strndup(const char *s, size_t n)
{
	size_t m = strnlen(s, n);
	char *d = __wrap_malloc(m + 1);
	if (d) {
		memcpy(d, s, m);
		d[m] = 0;
	}
	return d;
}

char *__wrap_strdup(const char *s)
{
	return __wrap_strndup(s, strlen(s));
}

enum { L = 2, T = 96, R = 64, P = 16 };

/* One pass: the profile read, the codec made, each layer encoded into
 * rec and decoded into val, everything freed.  0 or the error. */
static wz_err pass(const char *path, const char *name, const wzt_cache_trace *t, uint8_t *rec, size_t cap,
		   float *val)
{
	wz_diag d;
	wzc_profile *p = NULL;
	wzc_codec *c = NULL;
	wzc_format fmt;
	wz_err e = wzc_profile_read(path, &p, &d);
	if (!e)
		e = wzc_format_parse(name, &fmt, &d);
	if (!e)
		e = wzc_codec_new(&fmt, L, R, P, p, &c, &d);
	size_t B = c ? wzc_codec_record_bytes(c) : 0;
	if (!e && B * T * L > cap)
		e = WZ_ERR_RANGE;
	for (int l = 0; !e && l < L; l++) {
		size_t o = (size_t)l * T;
		e = wzc_encode_layer(c, l, T, t->latent + o * R, t->rope + o * P, rec + o * B, &d);
		if (!e)
			wzc_decode_layer(c, l, T, rec + o * B, val + o * (R + P), val + o * (R + P) + (size_t)T * R);
	}
	wzc_codec_free(c);
	wzc_profile_free(p);
	return e;
}

static void run(const char *path, const char *name, const wzt_cache_trace *t)
{
	size_t cap = (size_t)L * T * 4 * (R + P) + 64, nval = (size_t)L * T * (R + P) * 2;
	uint8_t *rec0 = calloc(cap, 1), *rec = calloc(cap, 1);
	float *val0 = calloc(nval, sizeof *val0), *val = calloc(nval, sizeof *val);
	if (!rec0 || !rec || !val0 || !val) {
		ok(0, "%s: memory for the test", name);
		return;
	}
	long before = nlive;
	calls = 0;
	wz_err e0 = pass(path, name, t, rec0, cap, val0);
	long need = calls, leak0 = nlive - before;
	ok(!e0 && leak0 == 0, "%s: a pass with memory makes %ld allocations and frees them all (%ld left)", name,
	   need, leak0);
	long passes = 0, nomem = 0, coped = 0, wrong = 0, leaked = 0, leak_at = -1, wrong_at = -1;
	for (long k = 0; k <= need + 1; k++) {
		memset(rec, 0, cap);
		memset(val, 0, sizeof *val * nval);
		before = nlive;
		pthread_mutex_lock(&lock);
		calls = 0;
		fail_at = k;
		pthread_mutex_unlock(&lock);
		wz_err e = pass(path, name, t, rec, cap, val);
		pthread_mutex_lock(&lock);
		fail_at = -1;
		long made = calls;
		pthread_mutex_unlock(&lock);
		if (made <= k)
			break; /* nothing refused: every allocation has had its turn */
		passes++;
		if (nlive != before) {
			leaked++;
			if (leak_at < 0)
				leak_at = k;
		}
		if (e == WZ_ERR_NOMEM)
			nomem++;
		else if (!e && !memcmp(rec, rec0, cap) && !memcmp(val, val0, sizeof *val * nval))
			coped++;
		else {
			wrong++;
			if (wrong_at < 0)
				wrong_at = k;
			if (getenv("OOM_TRACE") && trace_at < 0 && !strcmp(getenv("OOM_TRACE"), name)) {
				trace_at = k;
				pthread_mutex_lock(&lock);
				calls = 0;
				fail_at = k;
				pthread_mutex_unlock(&lock);
				pass(path, name, t, rec, cap, val);
				fail_at = -1;
			}
			if (getenv("OOM_DEBUG"))
				printf("# %s k=%ld e=%d rec %s val %s\n", name, k, (int)e, memcmp(rec, rec0, cap) ? "differ" : "same",
				       memcmp(val, val0, sizeof *val * nval) ? "differ" : "same");
		}
	}
	ok(passes >= need && wrong == 0 && leaked == 0,
	   "%s: each of %ld allocations refused in turn: %ld passes out of memory, %ld coped with the same "
	   "records and values, %ld otherwise (first at %ld), %ld leaked (first at %ld)",
	   name, need, nomem, coped, wrong, wrong_at, leaked, leak_at);
	free(rec0);
	free(rec);
	free(val0);
	free(val);
}

int main(void)
{
	wzt_cache_trace *cal = synth_shape(WZT_FAMILY_MLA_A, L, 256, R, P, 0, 1, "calibration");
	wzt_cache_trace *t = synth_shape(WZT_FAMILY_MLA_A, L, T, R, P, 0, 2, "test");
	char path[] = "test_oom-XXXXXX";
	int fd = mkstemp(path);
	wzc_profile *prof = NULL;
	wz_diag d;
	if (cal && fd >= 0) {
		close(fd);
		wzc_window w = window_of(cal);
		const wzc_window *ws[1] = { &w };
		wzc_prepare_opts o;
		wzc_prepare_opts_default(&o);
		o.threads = 1;
		if (wzc_prepare(ws, 1, &o, &prof, &d) || wzc_profile_write(path, prof, &d))
			printf("# %s\n", d.msg);
	}
	ok(prof && t, "a profile of %d layers x (%d + %d), written", L, R, P);
	if (prof && t) {
		static const char *const names[] = { "wz-5.0", "wze-5.0", "wzt-5.0", "wzs-5.0", "fp8-mix", "int4-g64" };
		for (size_t i = 0; i < sizeof names / sizeof *names; i++)
			run(path, names[i], t);
	}
	if (fd >= 0)
		unlink(path);
	wzc_profile_free(prof);
	wzt_cache_trace_free(cal);
	wzt_cache_trace_free(t);
	return tap_done();
}
