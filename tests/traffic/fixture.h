/* Scratch files for the traffic tests: each test writes its fixtures into a
 * fresh temporary folder. */
#ifndef WZ_TEST_TRAFFIC_FIXTURE_H
#define WZ_TEST_TRAFFIC_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char fx_dir[256];
static char fx_path_buf[8][512];
static int fx_next;

static inline void fx_init(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(fx_dir, sizeof fx_dir, "%s/wzplan-traffic.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(fx_dir)) {
		perror("mkdtemp");
		exit(99);
	}
}

/* Writes text to a new file in the scratch folder; returns its path (valid
 * for the next 7 calls). */
static inline const char *fx_write(const char *name, const char *text)
{
	char *path = fx_path_buf[fx_next++ % 8];
	snprintf(path, 512, "%s/%s", fx_dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(text, 1, strlen(text), f) != strlen(text) || fclose(f) != 0) {
		perror(path);
		exit(99);
	}
	return path;
}

static inline const char *fx_path(const char *name)
{
	char *path = fx_path_buf[fx_next++ % 8];
	snprintf(path, 512, "%s/%s", fx_dir, name);
	return path;
}

/* Path of a shared sample trace, or NULL when the shared folder is absent. */
static inline const char *fx_sample(const char *name, char *buf, size_t n)
{
	const char *shared = getenv("WZ_SHARED_DIR");
	if (!shared || !*shared)
		return NULL;
	snprintf(buf, n, "%s/traces/real/%s", shared, name);
	return access(buf, R_OK) == 0 ? buf : NULL;
}

static inline void fx_cleanup(void)
{
	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", fx_dir);
}

#endif
