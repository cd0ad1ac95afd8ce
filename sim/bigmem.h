/* The simulator's large arrays (sessions, requests, their links): aligned
 * and, from 2 MiB, marked for transparent huge pages where the system has
 * them.  At 10^5 users an event touches lines scattered over tens of MB,
 * and with 4 KiB pages nearly each of them is a TLB miss as well. */
#ifndef WZS_BIGMEM_H
#define WZS_BIGMEM_H

#include <stddef.h>

/* `bytes` of zeroed memory, or NULL; the caller frees it with free(). */
void *wzs_big_calloc(size_t bytes);
/* The same not zeroed: where the system maps pages at their first write,
 * as it does large blocks, room the caller never writes costs nothing. */
void *wzs_big_alloc(size_t bytes);
/* Grows the block p of old_bytes to new_bytes (its head kept, the rest
 * not zeroed); NULL when out of memory, p then untouched. */
void *wzs_big_grow(void *p, size_t old_bytes, size_t new_bytes);

#endif
