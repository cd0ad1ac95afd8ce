/* Removing half-written folders when a signal stops the process
 * (wz_cleanup.h). */
#include "common/wz_cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The slots are written only with the signals blocked, so the handler never
 * sees one half-set. */
static char *slots[WZ_CLEANUP_MAX];

static void block(sigset_t *old)
{
	sigset_t all;
	sigemptyset(&all);
	sigaddset(&all, SIGINT);
	sigaddset(&all, SIGTERM);
	sigaddset(&all, SIGHUP);
	sigprocmask(SIG_BLOCK, &all, old);
}

void wz_cleanup_add(const char *dir)
{
	char *copy = dir ? strdup(dir) : NULL;
	if (!copy)
		return;
	sigset_t old;
	block(&old);
	int i = 0;
	while (i < WZ_CLEANUP_MAX && slots[i])
		i++;
	if (i < WZ_CLEANUP_MAX)
		slots[i] = copy, copy = NULL;
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(copy);
}

void wz_cleanup_forget(const char *dir)
{
	if (!dir)
		return;
	sigset_t old;
	block(&old);
	char *gone = NULL;
	for (int i = 0; i < WZ_CLEANUP_MAX && !gone; i++)
		if (slots[i] && !strcmp(slots[i], dir))
			gone = slots[i], slots[i] = NULL;
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(gone);
}

struct linux_dirent64 {
	unsigned long long d_ino;
	long long d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Empties the folder open at fd, `depth` levels down at most. */
static void empty_at(int fd, int depth)
{
	char buf[4096] __attribute__((aligned(8)));
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
		if (n <= 0)
			return;
		int removed = 0;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *e = (struct linux_dirent64 *)(buf + off);
			off += e->d_reclen;
			const char *name = e->d_name;
			if (!strcmp(name, ".") || !strcmp(name, ".."))
				continue;
			if (unlinkat(fd, name, 0) == 0) {
				removed = 1;
				continue;
			}
			if (depth > 0) {
				int sub = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub >= 0) {
					empty_at(sub, depth - 1);
					close(sub);
				}
				if (unlinkat(fd, name, AT_REMOVEDIR) == 0)
					removed = 1;
			}
		}
		if (removed)
			lseek(fd, 0, SEEK_SET); /* read again from the start: entries moved */
		else
			return;
	}
}

void wz_cleanup_remove_tree(const char *dir, int depth)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		empty_at(fd, depth);
		close(fd);
	}
	rmdir(dir);
}

static void on_signal(int sig)
{
	for (int i = 0; i < WZ_CLEANUP_MAX; i++)
		if (slots[i])
			wz_cleanup_remove_tree(slots[i], 3);
	signal(sig, SIG_DFL);
	raise(sig);
}

void wz_cleanup_install(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue; /* nohup and the like: leave it ignored */
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}
