/* Growable text buffers and strict number parsing used across wzplan. */
#ifndef WZ_STR_H
#define WZ_STR_H

#include <stddef.h>
#include <stdint.h>

#include "common/wz_error.h"

/* A growable NUL-terminated buffer.  Zero-initialise it; release with
 * wz_buf_free.  After an allocation failure `failed` is set and further
 * appends do nothing, so callers check once at the end. */
typedef struct {
	char *data;
	size_t len;
	size_t cap;
	int failed;
} wz_buf;

void wz_buf_free(wz_buf *buf);
void wz_buf_reset(wz_buf *buf);
void wz_buf_append(wz_buf *buf, const char *bytes, size_t n);
void wz_buf_puts(wz_buf *buf, const char *text);
void wz_buf_printf(wz_buf *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One CSV field (RFC 4180): quoted, with quotes doubled, when it holds a
 * comma, quote or line break; nothing for NULL. */
void wz_buf_csv_field(wz_buf *buf, const char *text);
/* Text from a file (a name in an archive, a catalog, a scenario) for a
 * terminal: control characters (C0, DEL and UTF-8's C1, among them ESC,
 * which starts the sequences that move the cursor, retitle the window or
 * rewrite what was printed) appear as \xHH and a backslash as \\;
 * everything else, UTF-8 included, as it is.  Nothing for NULL. */
void wz_buf_terminal(wz_buf *buf, const char *text);
/* Text from a file for one line of Markdown: the marks that make code or
 * table cells anywhere in a line (\ ` |) backslash-escaped, a ']' that
 * would close a link's text ("](", "][", "]:"), and those that make a
 * heading, a list, a rule or a link definition at a line's start
 * (# - + = * _ [) there; an interval "[0.1, 0.2]" reads as it is; '<' '>' '&' as HTML entities; line breaks and other
 * control characters as one blank.  No name then starts a heading, a link
 * (`](javascript:`), a tag or a table cell, and names such as mem_util or
 * DeepSeek-V3 read as they are.  Nothing for NULL. */
void wz_buf_markdown(wz_buf *buf, const char *text);
/* Returns the text (never NULL; "" when empty). */
const char *wz_buf_str(const wz_buf *buf);
/* Hands the data to the caller, who frees it with free(); the buffer is reset. */
char *wz_buf_take(wz_buf *buf);

/* Strict parsers: the whole string (after trimming blanks) must be a number.
 * Return 0 on success, -1 otherwise. */
int wz_parse_double(const char *text, double *out /* OUT */);
int wz_parse_long(const char *text, long *out /* OUT */);
/* Accepts plain integers with optional thousands separators "10,000" or
 * "10_000" and suffixes k/M (1e3/1e6): "100k" -> 100000. */
int wz_parse_count(const char *text, long *out /* OUT */);

/* Copies text with leading and trailing blanks removed; caller frees. */
char *wz_strdup_trim(const char *text);
/* Case-insensitive equality that ignores blanks, '-', '_' and '.':
 * "h100-sxm" matches "H100 SXM". */
int wz_name_eq(const char *a, const char *b);
/* Nonzero when `prefix` (compared as wz_name_eq does) starts `name`. */
int wz_name_prefix(const char *prefix, const char *name);

/* Splits a comma-separated list into trimmed, non-empty items.  Returns the
 * count, -1 on allocation failure.  Free with wz_strlist_free. */
int wz_split_list(const char *text, char ***items /* OUT */);
void wz_strlist_free(char **items, int n);

/* Formats 1234567.8 as "1,234,568" (with `decimals` digits after the point)
 * into out. */
void wz_format_thousands(double value, int decimals, char *out, size_t n);

#endif
