/* Catalogs and scenarios compiled into the program, so that wzplan runs
 * with no installed data files (the embedded defaults). */
#ifndef WZ_EMBEDDED_H
#define WZ_EMBEDDED_H

#include <stddef.h>

/* Returns the NUL-terminated contents of an embedded file, e.g.
 * "models.csv" or "scenarios/product-page.scenario", or NULL. */
const char *wz_embedded_file(const char *name, size_t *len /* OUT, may be NULL */);

#endif
