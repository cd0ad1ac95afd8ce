/* Folders to remove if the process is stopped by a signal (SIGINT, SIGTERM,
 * SIGHUP) while it writes them: staging folders of outputs not yet
 * published, a private folder gnuplot renders in, inputs staged for verify.
 * A process that installs the handlers (wz_cleanup_install, once, from the
 * program's main) removes every registered folder, then dies of the signal
 * as it would have.  SIGKILL cannot be caught: what it interrupts stays,
 * until the next run that stages beside it removes it (runs/publish.h). */
#ifndef WZ_CLEANUP_H
#define WZ_CLEANUP_H

/* Registers a folder (its path is copied); silently ignored past
 * WZ_CLEANUP_MAX folders or when out of memory. */
#define WZ_CLEANUP_MAX 16
void wz_cleanup_add(const char *dir);
/* Forgets a folder registered with wz_cleanup_add (published or removed). */
void wz_cleanup_forget(const char *dir);
/* Installs the handlers for SIGINT, SIGTERM and SIGHUP (those not ignored). */
void wz_cleanup_install(void);
/* Removes a folder tree with async-signal-safe calls only (openat,
 * getdents64, unlinkat), at most `depth` levels deep; for tests. */
void wz_cleanup_remove_tree(const char *dir, int depth);

#endif
