/* Staging folders for output that must not appear half-written (publish.h). */
#include "runs/publish.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/wz_cleanup.h"
#include "common/wz_io.h"

static char *strip_slashes(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return NULL;
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	return p;
}

/* Each staging folder this process made is held by an flock on the folder
 * itself, which the kernel lets go of however the process ends, SIGKILL
 * included.  So a later run can tell a folder left by a killed run (no one
 * holds it) from one another run is still writing. */
#define HELD_MAX 16
static struct {
	char *path;
	int fd;
} held[HELD_MAX];
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

static void hold(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&held_lock);
	int i = 0;
	while (i < HELD_MAX && held[i].path)
		i++;
	if (i < HELD_MAX && (held[i].path = strdup(dir)))
		held[i].fd = fd;
	else
		close(fd); /* unheld: a later sweep may take it once it is old */
	pthread_mutex_unlock(&held_lock);
}

static void let_go(const char *dir)
{
	pthread_mutex_lock(&held_lock);
	for (int i = 0; i < HELD_MAX; i++)
		if (held[i].path && !strcmp(held[i].path, dir)) {
			close(held[i].fd);
			free(held[i].path);
			held[i].path = NULL;
		}
	pthread_mutex_unlock(&held_lock);
}

/* A staging folder is stale when its name is ours ("BASE.tmp" and six
 * characters), it is a real folder of this user, no process holds it, and
 * it has not changed for a minute (a run between mkdtemp and its flock is
 * not taken for a dead one). */
#define STALE_AFTER_S 60
static void sweep_stale(const char *parent, const char *base)
{
	DIR *d = opendir(parent);
	if (!d)
		return;
	size_t nbase = strlen(base);
	time_t now = time(NULL);
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, base, nbase) || strncmp(e->d_name + nbase, ".tmp", 4) ||
		    strlen(e->d_name + nbase + 4) != 6)
			continue;
		char *path = wz_path_join(parent, e->d_name);
		struct stat st;
		if (!path || lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != getuid() || now - st.st_mtime < STALE_AFTER_S) {
			free(path);
			continue;
		}
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
			wz_cleanup_remove_tree(path, 3);
		if (fd >= 0)
			close(fd);
		free(path);
	}
	closedir(d);
}

wz_err wz_staging_create(const char *out_dir, char **staging, wz_diag *diag)
{
	*staging = NULL;
	char *out = strip_slashes(out_dir);
	if (!out)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	char *slash = strrchr(out, '/');
	const char *base = slash ? slash + 1 : out;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		/* the root, or a folder named by a dot: the output would be
		 * spread among whatever is there */
		wz_err err = wz_diag_set(diag, WZ_ERR_USAGE,
					 "%s: not a folder of the output's own; name one (new, or "
					 "from an earlier run), e.g. wzplan-out",
					 out_dir);
		free(out);
		return err;
	}
	if (slash && slash != out) {
		*slash = '\0';
		wz_err err = wz_mkdir_p(out, diag);
		*slash = '/';
		if (err) {
			free(out);
			return err;
		}
	}
	if (slash)
		*slash = '\0';
	sweep_stale(slash ? (slash == out ? "/" : out) : ".", base);
	if (slash)
		*slash = '/';
	size_t n = strlen(out) + 16;
	char *tmp = malloc(n);
	if (!tmp) {
		free(out);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	snprintf(tmp, n, "%s.tmpXXXXXX", out);
	free(out);
	if (!mkdtemp(tmp)) {
		wz_err err = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot create a folder beside it: %s",
					 out_dir, strerror(errno));
		free(tmp);
		return err;
	}
	/* mkdtemp makes 0700; the published folder is an ordinary one */
	mode_t mask = umask(0);
	umask(mask);
	chmod(tmp, 0777 & ~mask);
	wz_cleanup_add(tmp);
	hold(tmp);
	*staging = tmp;
	return WZ_OK;
}

wz_err wz_staging_file(const char *staging, const char *name, const char *text, wz_diag *diag)
{
	char *path = wz_path_join(staging, name);
	if (!path)
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	wz_err err = wz_write_file_atomic(path, text, strlen(text), diag);
	free(path);
	return err;
}

/* A folder that is a symbolic link would send the output elsewhere. */
static wz_err real_folder_or_absent(const char *path, wz_diag *diag)
{
	struct stat st;
	if (lstat(path, &st) != 0 || (S_ISDIR(st.st_mode)))
		return WZ_OK;
	return wz_diag_set(diag, WZ_ERR_REFUSED, "%s: is %s, not a folder; wzplan writes only into "
						 "real folders",
			   path, S_ISLNK(st.st_mode) ? "a symbolic link" : "a file");
}

/* Moves each entry of from/ into to/ (folders one level down too); with
 * dry set, only checks that nothing in to/ is in the way, so that a
 * refusal leaves the output as it was. */
static wz_err move_entries(const char *from, const char *to, int depth, int dry, wz_diag *diag)
{
	DIR *d = opendir(from);
	if (!d)
		return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot read: %s", from, strerror(errno));
	wz_err err = WZ_OK;
	struct dirent *e;
	while (!err && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char *src = wz_path_join(from, e->d_name), *dst = wz_path_join(to, e->d_name);
		struct stat st;
		if (!src || !dst)
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		else if (depth == 0 && lstat(src, &st) == 0 && S_ISDIR(st.st_mode)) {
			err = real_folder_or_absent(dst, diag);
			if (!err && !dry)
				err = wz_mkdir_p(dst, diag);
			if (!err)
				err = move_entries(src, dst, depth + 1, dry, diag);
			if (!err && !dry)
				rmdir(src);
		} else if ((err = wz_check_replaceable(dst, diag)) || dry) {
			/* the message says what is in the way */
		} else if (rename(src, dst) != 0) {
			err = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot write: %s", dst, strerror(errno));
		}
		free(src);
		free(dst);
	}
	closedir(d);
	return err;
}

wz_err wz_staging_publish(const char *staging, const char *out_dir, wz_diag *diag)
{
	struct stat st;
	wz_err refused = real_folder_or_absent(out_dir, diag);
	if (refused)
		return refused;
	if (lstat(out_dir, &st) != 0) {
		if (rename(staging, out_dir) == 0) {
			wz_cleanup_forget(staging);
			let_go(staging);
			return WZ_OK;
		}
		return wz_diag_set(diag, WZ_ERR_IO, "%s: cannot create: %s", out_dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return wz_diag_set(diag, WZ_ERR_IO, "%s: exists and is not a folder", out_dir);
	wz_err err = move_entries(staging, out_dir, 0, 1, diag);
	if (!err)
		err = move_entries(staging, out_dir, 0, 0, diag);
	if (!err)
		wz_staging_remove(staging);
	return err;
}

void wz_staging_remove(const char *staging)
{
	wz_cleanup_forget(staging);
	let_go(staging);
	DIR *d = opendir(staging);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char *p = wz_path_join(staging, e->d_name);
			struct stat st;
			if (p && lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
				wz_staging_remove(p);
			else if (p)
				unlink(p);
			free(p);
		}
		closedir(d);
	}
	rmdir(staging);
}
