/* The simulator's scenario keys, table-driven from the one table that
 * declares them (sim/params.c, wzs_keys): every key is documented in
 * wzplan-scenario(5) and has a help line, the parser takes every key from
 * the table (a value out of range, or not yes/no, or too long, is refused
 * naming file:line and the key), and wzs_scenario_keys lists exactly the
 * table's keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/wz_io.h"
#include "common/wz_kv.h"
#include "sim/params.h"
#include "tests/tap.h"

/* Whether the man page names key as a word (not inside a longer key). */
static int documented(const char *man, const char *key)
{
	size_t n = strlen(key);
	for (const char *p = strstr(man, key); p; p = strstr(p + 1, key)) {
		int before = p == man || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z'));
		char after = p[n];
		if (before && !(after == '_' || (after >= 'a' && after <= 'z') ||
				(after >= '0' && after <= '9')))
			return 1;
	}
	return 0;
}

/* Parses "KEY = value" over the defaults; 0 when accepted, else the
 * message in why. */
static int parse_one(const char *key, const char *value, char *why, size_t n)
{
	char text[1024];
	snprintf(text, sizeof text, "# a test\n%s = %s\n", key, value);
	wz_kv *kv;
	wz_diag diag;
	wz_diag_clear(&diag);
	int rc = wz_kv_parse(text, "t.scenario", &kv, &diag) != WZ_OK;
	if (!rc) {
		wzs_params p;
		wzs_params_default(&p);
		rc = wzs_params_from_kv(kv, &p, &diag) != WZ_OK;
		wz_kv_free(kv);
	}
	snprintf(why, n, "%s", diag.msg);
	return rc;
}

int main(void)
{
	const char *top = getenv("top_srcdir");
	char path[4096];
	snprintf(path, sizeof path, "%s/man/wzplan-scenario.5", top ? top : ".");
	char *man = NULL;
	size_t len = 0;
	ok(wz_read_file(path, 1 << 20, &man, &len, NULL) == WZ_OK, "reads %s", path);
	int n = 0;
	for (const char *const *k = wzs_scenario_keys; *k; k++)
		n++;
	is_long(n, wzs_nkeys, "wzs_scenario_keys lists the table's keys");
	for (int i = 0; i < wzs_nkeys; i++) {
		const wzs_scenario_key *k = &wzs_keys[i];
		char prefix[128], why[1100], big[64];
		ok(i < n && !strcmp(wzs_scenario_keys[i], k->name), "%s: known", k->name);
		ok(man && documented(man, k->name), "%s: in wzplan-scenario(5)", k->name);
		ok(k->help && strlen(k->help) > 5, "%s: a help line", k->name);
		snprintf(prefix, sizeof prefix, "t.scenario:2: %s: ", k->name);
		switch (k->kind) {
		case WZS_KEY_NUM:
		case WZS_KEY_COUNT:
			ok(k->min < k->max, "%s: a range", k->name);
			snprintf(big, sizeof big, "%.17g", k->max * 2 + 1);
			ok(parse_one(k->name, big, why, sizeof why) && strstr(why, prefix) &&
				   strstr(why, "is not in"),
			   "%s = %s refused, naming file, line and key (%s)", k->name, big, why);
			break;
		case WZS_KEY_FLAG:
			ok(parse_one(k->name, "maybe", why, sizeof why) && strstr(why, prefix) &&
				   strstr(why, "use yes or no"),
			   "%s = maybe refused, naming file, line and key (%s)", k->name, why);
			break;
		case WZS_KEY_TEXT: {
			char *longer = malloc(k->size + 1);
			if (longer) {
				memset(longer, 'x', k->size);
				longer[k->size] = '\0';
			}
			ok(longer && parse_one(k->name, longer, why, sizeof why) &&
				   strstr(why, prefix) && strstr(why, "too long"),
			   "%s: a value longer than its field refused (%s)", k->name, why);
			free(longer);
			break;
		}
		case WZS_KEY_WORD:
			ok(parse_one(k->name, "no-such-value", why, sizeof why) &&
				   strstr(why, prefix),
			   "%s = no-such-value refused, naming file, line and key (%s)", k->name,
			   why);
			break;
		}
	}
	free(man);
	return tap_done();
}
