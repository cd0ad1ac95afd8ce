/* Validation of names read from untrusted files (wz_name.h). */
#include "common/wz_name.h"

#include <string.h>

/* Length of the UTF-8 sequence at p (1 to 4), 0 when it is not a valid,
 * shortest-form encoding of a character outside the C1 controls. */
static size_t utf8_char(const unsigned char *p)
{
	if (p[0] < 0x80)
		return 1;
	size_t n;
	unsigned cp;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
		return 0;
	return n;
}

int wz_name_valid(const char *name, const char **why)
{
	const char *reason = NULL;
	size_t n = name ? strlen(name) : 0;
	if (n == 0)
		reason = "empty";
	else if (n > WZ_NAME_MAX)
		reason = "longer than 255 bytes";
	else if (name[0] == ' ' || name[n - 1] == ' ')
		reason = "a blank at either end";
	for (const unsigned char *p = (const unsigned char *)name; !reason && *p;) {
		if (*p < 0x20 || *p == 0x7f)
			reason = "a control character";
		else if (*p == '`')
			reason = "a backquote";
		else if (*p == '"')
			reason = "a double quote";
		else if (*p == '\\')
			reason = "a backslash";
		else if (strchr("$|<>", *p))
			reason = "one of $ | < >";
		size_t k = utf8_char(p);
		if (!reason && !k)
			reason = "not valid UTF-8";
		p += k ? k : 1;
	}
	if (why)
		*why = reason;
	return reason == NULL;
}

wz_err wz_name_check(const char *name, const char *origin, int line, const char *field,
		     wz_diag *diag)
{
	const char *why;
	if (wz_name_valid(name, &why))
		return WZ_OK;
	if (line > 0)
		return wz_diag_set(diag, WZ_ERR_INPUT,
				   "%s:%d: field %s: a name must be 1 to 255 bytes of printable UTF-8 "
				   "without ` \" \\ $ | < > (this one has %s)",
				   origin, line, field, why);
	return wz_diag_set(diag, WZ_ERR_INPUT,
			   "%s: %s: a name must be 1 to 255 bytes of printable UTF-8 without "
			   "` \" \\ $ | < > (this one has %s)",
			   origin, field, why);
}

wz_err wz_text_check(const char *text, size_t n, const char *origin, wz_diag *diag)
{
	const char *nul = memchr(text, '\0', n);
	if (!nul)
		return WZ_OK;
	int line = 1;
	for (const char *p = text; p < nul; p++)
		line += *p == '\n';
	return wz_diag_set(diag, WZ_ERR_INPUT, "%s:%d: a NUL byte (this is not a text file)",
			   origin, line);
}
