/* Large zeroed arrays on huge pages where available (bigmem.h). */
#include "sim/bigmem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)  /* x86-64's and arm64's (4 KiB granule) PMD size */

/* `bytes` rounded up to the alignment, in *size. */
static void *big_alloc(size_t bytes, size_t *size)
{
	size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : 64;
	*size = (bytes + align - 1) / align * align;
	void *p;
	if (*size < bytes || posix_memalign(&p, align, *size ? *size : align))
		return NULL;
#ifdef MADV_HUGEPAGE
	/* A hint: where huge pages are off or short, 4 KiB pages serve. */
	if (align == HUGE_PAGE)
		(void)madvise(p, *size, MADV_HUGEPAGE);
#endif
	return p;
}

void *wzs_big_alloc(size_t bytes)
{
	size_t size;
	return big_alloc(bytes, &size);
}

void *wzs_big_calloc(size_t bytes)
{
	size_t size;
	void *p = big_alloc(bytes, &size);
	if (p)
		memset(p, 0, size);
	return p;
}

void *wzs_big_grow(void *p, size_t old_bytes, size_t new_bytes)
{
	void *q = wzs_big_alloc(new_bytes);
	if (!q)
		return NULL;
	if (p)
		memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
	free(p);
	return q;
}
