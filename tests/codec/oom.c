/* The allocator of tests/codec/test_oom (tests/codec/oom.h): wrappers that
 * count allocations and refuse one, a set of the live blocks, and the
 * runner that refuses each allocation of a pass in turn. */
#include "tests/codec/oom.h"

#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A pass of f with allocation k refused (-1: none); *made gets the
 * allocations it asked for, *left the blocks it left. */
static wz_err pass_at(oom_pass_fn f, void *ctx, uint8_t *out, size_t cap, size_t *n, long k,
		      long *made, long *left)
{
	memset(out, 0, cap);
	*n = 0;
	pthread_mutex_lock(&lock);
	long before = nlive;
	calls = 0;
	fail_at = k;
	pthread_mutex_unlock(&lock);
	wz_err e = f(ctx, out, cap, n);
	pthread_mutex_lock(&lock);
	fail_at = -1;
	*made = calls;
	*left = nlive - before;
	pthread_mutex_unlock(&lock);
	return e;
}

/* The k of the i-th pass: every k below full, then one in each stride. */
static long k_of(long i, long full, long stride)
{
	if (i < full)
		return i;
	long s = i - full, k0 = full + s * stride;
	return k0 + (long)((uint64_t)(k0 * 2654435761u) % (uint64_t)stride);
}

oom_table oom_check(const char *name, oom_pass_fn f, void *ctx, size_t cap, long full_limit,
		    long sample_limit)
{
	oom_table tb = { .wrong_at = -1, .leak_at = -1 };
	const char *only = getenv("OOM_AREA");
	if (only && strcmp(only, name))
		return (oom_table){ .setup_ok = 1, .wrong_at = -1, .leak_at = -1 };
	uint8_t *out0 = malloc(cap + 1), *out = malloc(cap + 1);
	size_t n0 = 0, n = 0;
	long made, left;
	if (!out0 || !out)
		goto done;
	wz_err e0 = pass_at(f, ctx, out0, cap, &n0, -1, &made, &left);
	tb.allocs = made;
	tb.setup_ok = !e0 && !left;
	if (!tb.setup_ok) {
		printf("# %s: the pass with memory: error %d, %ld blocks left\n", name, (int)e0, left);
		goto done;
	}
	long full = getenv("OOM_ALL") ? tb.allocs + 2 : full_limit;
	long stride = tb.allocs > full ? (tb.allocs - full + sample_limit - 1) / sample_limit : 1;
	tb.full = full < tb.allocs ? full : tb.allocs;
	for (long i = 0;; i++) {
		long k = k_of(i, full, stride);
		wz_err e = pass_at(f, ctx, out, cap, &n, k, &made, &left);
		if (made <= k)
			break; /* nothing refused: every allocation has had its turn */
		tb.passes++;
		if (left) {
			tb.leaked++;
			if (tb.leak_at < 0)
				tb.leak_at = k;
		}
		if (e == WZ_ERR_NOMEM)
			tb.nomem++;
		else if (!e && n == n0 && !memcmp(out, out0, n0))
			tb.coped++;
		else {
			tb.wrong++;
			if (tb.wrong_at < 0)
				tb.wrong_at = k;
			const char *tr = getenv("OOM_TRACE");
			if (tr && trace_at < 0 && !strcmp(tr, name)) {
				trace_at = k; /* the stack of this refusal, on stderr */
				pass_at(f, ctx, out, cap, &n, k, &made, &left);
			}
			if (getenv("OOM_DEBUG"))
				printf("# %s k=%ld e=%d output %s\n", name, k, (int)e,
				       n == n0 && !memcmp(out, out0, n0) ? "same" : "differs");
		}
		if (left && getenv("OOM_DEBUG"))
			printf("# %s k=%ld e=%d left %ld blocks\n", name, k, (int)e, left);
	}
done:
	free(out0);
	free(out);
	return tb;
}
