/* Growable buffers, strict number parsing and name matching (see wz_str.h). */
#include "common/wz_str.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void wz_buf_free(wz_buf *buf)
{
	if (!buf)
		return;
	free(buf->data);
	buf->data = NULL;
	buf->len = buf->cap = 0;
	buf->failed = 0;
}

void wz_buf_reset(wz_buf *buf)
{
	buf->len = 0;
	if (buf->data)
		buf->data[0] = '\0';
}

static int buf_reserve(wz_buf *buf, size_t extra)
{
	if (buf->failed)
		return -1;
	if (buf->len + extra + 1 <= buf->cap)
		return 0;
	size_t cap = buf->cap ? buf->cap : 256;
	while (cap < buf->len + extra + 1)
		cap *= 2;
	char *data = realloc(buf->data, cap);
	if (!data) {
		buf->failed = 1;
		return -1;
	}
	buf->data = data;
	buf->cap = cap;
	return 0;
}

void wz_buf_append(wz_buf *buf, const char *bytes, size_t n)
{
	if (buf_reserve(buf, n))
		return;
	memcpy(buf->data + buf->len, bytes, n);
	buf->len += n;
	buf->data[buf->len] = '\0';
}

void wz_buf_puts(wz_buf *buf, const char *text)
{
	wz_buf_append(buf, text, strlen(text));
}

void wz_buf_csv_field(wz_buf *buf, const char *text)
{
	if (!text)
		return;
	if (!strpbrk(text, ",\"\n\r")) {
		wz_buf_puts(buf, text);
		return;
	}
	wz_buf_puts(buf, "\"");
	for (; *text; text++) {
		if (*text == '"')
			wz_buf_puts(buf, "\"\"");
		else
			wz_buf_append(buf, text, 1);
	}
	wz_buf_puts(buf, "\"");
}

void wz_buf_printf(wz_buf *buf, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || buf_reserve(buf, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf->len += (size_t)n;
}

void wz_buf_terminal(wz_buf *buf, const char *text)
{
	if (!text)
		return;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			wz_buf_printf(buf, "\\x%02x", *p);
		else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			wz_buf_printf(buf, "\\u%04x", p[1]), p++; /* C1: U+0080..U+009F */
		else if (*p == '\\')
			wz_buf_puts(buf, "\\\\");
		else
			wz_buf_append(buf, (const char *)p, 1);
	}
}

void wz_buf_markdown(wz_buf *buf, const char *text)
{
	if (!text)
		return;
	for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			wz_buf_puts(buf, " ");
		else if (*p == '<')
			wz_buf_puts(buf, "&lt;");
		else if (*p == '>')
			wz_buf_puts(buf, "&gt;");
		else if (*p == '&')
			wz_buf_puts(buf, "&amp;");
		else if (strchr("\\`|", *p) || (*p == ']' && p[1] && strchr("([:", p[1])) ||
			 (p == (const unsigned char *)text && strchr("#-+=*_[", *p))) {
			char esc[2] = { '\\', (char)*p };
			wz_buf_append(buf, esc, 2);
		} else
			wz_buf_append(buf, (const char *)p, 1);
	}
}

const char *wz_buf_str(const wz_buf *buf)
{
	return buf->data ? buf->data : "";
}

char *wz_buf_take(wz_buf *buf)
{
	char *data = buf->data;
	if (!data)
		data = calloc(1, 1);
	buf->data = NULL;
	buf->len = buf->cap = 0;
	return data;
}

static const char *skip_blanks(const char *s)
{
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

static int only_blanks(const char *s)
{
	return *skip_blanks(s) == '\0';
}

/* Length of a plain decimal number at s: optional sign, digits with at
 * most one point (a digit somewhere), optional exponent.  0 when there is
 * none, so strtod never sees hex, "inf", "nan" or locale forms. */
static size_t decimal_length(const char *s)
{
	size_t i = 0, digits = 0;
	if (s[i] == '+' || s[i] == '-')
		i++;
	while (s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (s[i] == '.') {
		i++;
		while (s[i] >= '0' && s[i] <= '9')
			i++, digits++;
	}
	if (!digits)
		return 0;
	if (s[i] == 'e' || s[i] == 'E') {
		size_t j = i + 1, exp_digits = 0;
		if (s[j] == '+' || s[j] == '-')
			j++;
		while (s[j] >= '0' && s[j] <= '9')
			j++, exp_digits++;
		if (!exp_digits)
			return 0;
		i = j;
	}
	return i;
}

int wz_parse_double(const char *text, double *out)
{
	if (!text)
		return -1;
	const char *s = skip_blanks(text);
	if (!*s)
		return -1;
	size_t len = decimal_length(s);
	if (!len || !only_blanks(s + len))
		return -1;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno == ERANGE || !only_blanks(end) || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int wz_parse_long(const char *text, long *out)
{
	if (!text)
		return -1;
	const char *s = skip_blanks(text);
	if (!*s)
		return -1;
	size_t len = decimal_length(s);
	if (!len || strcspn(s, ".eE") < len || !only_blanks(s + len))
		return -1;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (end == s || errno == ERANGE || !only_blanks(end))
		return -1;
	*out = v;
	return 0;
}

/* Thousands separators only between groups of three digits of the whole
 * part, one kind throughout: "10,000" and "1_000_000", never "1,0,0". */
static int grouped_correctly(const char *s)
{
	const char *sep = strpbrk(s, ",_");
	if (!sep)
		return 1;
	char kind = *sep;
	if (*s == '+' || *s == '-')
		s++;
	size_t lead = strspn(s, "0123456789");
	if (lead < 1 || lead > 3)
		return 0;
	s += lead;
	while (*s == kind) {
		if (strspn(s + 1, "0123456789") < 3)
			return 0;
		s += 4;
	}
	return !strpbrk(s, ",_") && !(*s >= '0' && *s <= '9');
}

int wz_parse_count(const char *text, long *out)
{
	if (!text)
		return -1;
	char clean[64];
	size_t n = 0;
	const char *s = skip_blanks(text);
	if (!grouped_correctly(s))
		return -1;
	for (; *s && n + 1 < sizeof clean; s++) {
		if (*s == ',' || *s == '_')
			continue;
		clean[n++] = *s;
	}
	if (*s)
		return -1;
	while (n > 0 && isspace((unsigned char)clean[n - 1]))
		n--;
	clean[n] = '\0';
	double mult = 1;
	if (n > 0 && (clean[n - 1] == 'k' || clean[n - 1] == 'K')) {
		mult = 1e3;
		clean[--n] = '\0';
	} else if (n > 0 && clean[n - 1] == 'M') {
		mult = 1e6;
		clean[--n] = '\0';
	}
	if (mult == 1)
		return wz_parse_long(clean, out);
	double v;
	if (wz_parse_double(clean, &v))
		return -1;
	v *= mult;
	if (v != floor(v) || fabs(v) > 9.0e15)
		return -1;
	*out = (long)v;
	return 0;
}

char *wz_strdup_trim(const char *text)
{
	const char *s = skip_blanks(text);
	size_t n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		n--;
	char *copy = malloc(n + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, n);
	copy[n] = '\0';
	return copy;
}

static int name_skip(char c)
{
	return c == ' ' || c == '-' || c == '_' || c == '.' || c == '\t';
}

/* Compares names ignoring separators; returns the position reached in b when
 * a is exhausted, or NULL when they differ before that. */
static const char *name_walk(const char *a, const char *b)
{
	for (;;) {
		while (*a && name_skip(*a))
			a++;
		while (*b && name_skip(*b))
			b++;
		if (!*a)
			return b;
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return NULL;
		a++;
		b++;
	}
}

int wz_name_eq(const char *a, const char *b)
{
	const char *rest = name_walk(a, b);
	return rest && *rest == '\0';
}

int wz_name_prefix(const char *prefix, const char *name)
{
	return name_walk(prefix, name) != NULL;
}

int wz_split_list(const char *text, char ***items)
{
	int n = 0, cap = 8;
	char **list = malloc(sizeof *list * (size_t)cap);
	if (!list)
		return -1;
	const char *s = text;
	while (s && *s) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		char *piece = malloc(len + 1);
		if (!piece)
			goto fail;
		memcpy(piece, s, len);
		piece[len] = '\0';
		char *item = wz_strdup_trim(piece);
		free(piece);
		if (!item)
			goto fail;
		if (*item) {
			if (n == cap) {
				cap *= 2;
				char **grown = realloc(list, sizeof *list * (size_t)cap);
				if (!grown) {
					free(item);
					goto fail;
				}
				list = grown;
			}
			list[n++] = item;
		} else {
			free(item);
		}
		s = comma ? comma + 1 : NULL;
	}
	*items = list;
	return n;
fail:
	wz_strlist_free(list, n);
	return -1;
}

void wz_strlist_free(char **items, int n)
{
	if (!items)
		return;
	for (int i = 0; i < n; i++)
		free(items[i]);
	free(items);
}

void wz_format_thousands(double value, int decimals, char *out, size_t n)
{
	char digits[64];
	snprintf(digits, sizeof digits, "%.*f", decimals, fabs(value));
	char *point = strchr(digits, '.');
	size_t int_len = point ? (size_t)(point - digits) : strlen(digits);
	char tmp[96];
	size_t k = 0;
	int negative = value < 0 && strspn(digits, "0.") != strlen(digits);
	if (negative)
		tmp[k++] = '-';
	for (size_t i = 0; i < int_len; i++) {
		tmp[k++] = digits[i];
		size_t left = int_len - i - 1;
		if (left > 0 && left % 3 == 0)
			tmp[k++] = ',';
	}
	if (point) {
		size_t rest = strlen(point);
		memcpy(tmp + k, point, rest);
		k += rest;
	}
	tmp[k] = '\0';
	snprintf(out, n, "%s", tmp);
}
