/* Replays fuzz corpora through a LLVMFuzzerTestOneInput target without
 * libFuzzer, so `make check` runs every corpus file (and, with sanitizers,
 * checks them).  Usage: replay DIR_OR_FILE...  Prints TAP. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/wz_io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count;

static void replay_file(const char *path)
{
	char *data;
	size_t size;
	if (wz_read_file(path, 64u << 20, &data, &size, NULL)) {
		printf("not ok %d - read %s\n", ++count, path);
		return;
	}
	LLVMFuzzerTestOneInput((const uint8_t *)data, size);
	free(data);
	/* Reaching here means no crash; sanitizers abort on errors. */
	printf("ok %d - %s\n", ++count, path);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			printf("not ok %d - %s missing\n", ++count, argv[i]);
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			replay_file(argv[i]);
			continue;
		}
		DIR *dir = opendir(argv[i]);
		struct dirent *e;
		char **names = NULL;
		size_t n = 0;
		while (dir && (e = readdir(dir))) {
			if (e->d_name[0] == '.')
				continue;
			names = realloc(names, sizeof *names * (n + 1));
			names[n++] = wz_path_join(argv[i], e->d_name);
		}
		if (dir)
			closedir(dir);
		if (n) /* an empty folder leaves names NULL, which qsort must not get */
			qsort(names, n, sizeof *names, by_name);
		for (size_t k = 0; k < n; k++) {
			replay_file(names[k]);
			free(names[k]);
		}
		free(names);
	}
	printf("1..%d\n", count);
	return 0;
}
