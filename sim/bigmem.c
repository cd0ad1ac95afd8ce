/* Large zeroed arrays on huge pages where available (bigmem.h). */
#include "sim/bigmem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE_PAGE ((size_t)2 << 20)  /* x86-64's and arm64's (4 KiB granule) PMD size */

void *wzs_big_calloc(size_t bytes)
{
	size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : 64;
	size_t size = (bytes + align - 1) / align * align;
	void *p;
	if (size < bytes || posix_memalign(&p, align, size ? size : align))
		return NULL;
#ifdef MADV_HUGEPAGE
	/* A hint: where huge pages are off or short, 4 KiB pages serve. */
	if (align == HUGE_PAGE)
		(void)madvise(p, size, MADV_HUGEPAGE);
#endif
	memset(p, 0, size);
	return p;
}

void *wzs_big_grow(void *p, size_t old_bytes, size_t new_bytes)
{
	void *q = wzs_big_calloc(new_bytes);
	if (!q)
		return NULL;
	if (p)
		memcpy(q, p, old_bytes < new_bytes ? old_bytes : new_bytes);
	free(p);
	return q;
}
