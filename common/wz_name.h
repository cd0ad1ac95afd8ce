/* What a name read from an input file may hold (model, GPU, price set,
 * trace window), and the check that every text input holds no NUL byte. */
#ifndef WZ_NAME_H
#define WZ_NAME_H

#include <stddef.h>

#include "common/wz_error.h"

#define WZ_NAME_MAX 255

/* Nonzero when name is 1 to WZ_NAME_MAX bytes of valid UTF-8 with no
 * control character, no blank at either end, and none of ` " \ $ | < >.
 * When it is not, *why (if not NULL) gets a short reason. */
int wz_name_valid(const char *name, const char **why /* OUT */);

/* WZ_ERR_INPUT with "ORIGIN:LINE: FIELD: REASON" when name is not valid.
 * line <= 0 leaves the line out. */
wz_err wz_name_check(const char *name, const char *origin, int line, const char *field,
		     wz_diag *diag);

/* WZ_ERR_INPUT naming the line of the first NUL byte in text[0..n), so
 * that no reader of a text format silently stops at one. */
wz_err wz_text_check(const char *text, size_t n, const char *origin, wz_diag *diag);

#endif
