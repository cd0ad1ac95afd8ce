/* --serving-modes' list into modes (propose.h): parsed apart from the
 * sizing under each mode, since a request read back parses it too. */
#include "runs/propose.h"

#include <stdio.h>
#include <string.h>

const char *const wz_propose_servings[] = { "aggregated", "disaggregated" };
static const char *const idles[] = { "resident", "offload", "drop" };

static int one_of(const char *s, size_t n, const char *const *names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (strlen(names[i]) == n && !strncmp(s, names[i], n))
			return (int)i;
	return -1;
}

int wz_propose_modes_parse(const char *list, wz_propose_modes *out, char *why, size_t why_n)
{
	memset(out, 0, sizeof *out);
	if (!strcmp(list, "all")) {
		out->all = 1;
		return 0;
	}
	const char *p = list;
	while (*p) {
		while (*p == ' ' || *p == ',')
			p++;
		if (!*p)
			break;
		size_t len = strcspn(p, ",");
		while (len > 0 && p[len - 1] == ' ')
			len--;
		if (out->n == WZ_PROPOSE_MAX_MODES) {
			snprintf(why, why_n, "at most %d serving modes", WZ_PROPOSE_MAX_MODES);
			return -1;
		}
		wz_propose_mode *m = &out->modes[out->n];
		const char *c1 = memchr(p, ':', len);
		const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - p)) : NULL;
		int s = c1 ? one_of(p, (size_t)(c1 - p), wz_propose_servings, 2) : -1;
		size_t ilen = c1 ? (c2 ? (size_t)(c2 - c1 - 1) : len - (size_t)(c1 + 1 - p)) : 0;
		int i = c1 ? one_of(c1 + 1, ilen, idles, 3) : -1;
		size_t flen = c2 ? len - (size_t)(c2 + 1 - p) : 0;
		if (s < 0 || i < 0 || (c2 && (i != 1 || flen == 0 || flen >= sizeof m->offload))) {
			snprintf(why, why_n,
				 "'%.*s': use SERVING:IDLE or SERVING:offload:FORMAT (SERVING "
				 "aggregated or disaggregated, IDLE resident, offload or drop), or 'all'",
				 (int)len, p);
			return -1;
		}
		m->serving = wz_propose_servings[s];
		m->idle = idles[i];
		snprintf(m->offload, sizeof m->offload, "%.*s", (int)flen, c2 ? c2 + 1 : "");
		out->n++;
		p += len;
		while (*p && *p != ',')
			p++;
	}
	if (out->n == 0) {
		snprintf(why, why_n, "no serving mode given");
		return -1;
	}
	return 0;
}
