/* Runs of sweep points, and merging archives into one in one transaction
 * (merge.h). */
#include "archive/merge.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive/internal.h"
#include "common/wz_io.h"

void wza_point_runs_free(wza_point_run *runs, int n)
{
	for (int i = 0; runs && i < n; i++)
		free(runs[i].point), free(runs[i].sweep);
	free(runs);
}

wz_err wza_point_runs(wza_archive *a, const char *sweep, wza_point_run **out, int *n,
		      wz_diag *diag)
{
	*out = NULL;
	*n = 0;
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(a->db,
				    "SELECT p.run, p.content, s.content FROM inputs p "
				    "LEFT JOIN inputs s ON s.run = p.run AND s.kind = '" WZA_SWEEP_KIND
				    "' AND s.name = '" WZA_SWEEP_NAME "' "
				    "WHERE p.kind = '" WZA_SWEEP_KIND "' AND p.name = '" WZA_SWEEP_POINT
				    "' AND (?1 IS NULL OR s.content = ?1) ORDER BY p.run",
				    -1, &st, NULL);
	if (rc != SQLITE_OK)
		return wza_sqlite_err(a->db, rc, a->path, "read the sweep points", diag);
	if (sweep)
		sqlite3_bind_text(st, 1, sweep, -1, SQLITE_STATIC);
	int cap = 0, failed = 0;
	wza_point_run *runs = NULL;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			int ncap = cap ? cap * 2 : 64;
			wza_point_run *p = realloc(runs, (size_t)ncap * sizeof *p);
			if (!p) {
				failed = 1;
				break;
			}
			runs = p, cap = ncap;
		}
		wza_point_run *r = &runs[(*n)++];
		const unsigned char *pt = sqlite3_column_text(st, 1), *sw = sqlite3_column_text(st, 2);
		r->run = sqlite3_column_int64(st, 0);
		r->point = strdup(pt ? (const char *)pt : "");
		r->sweep = strdup(sw ? (const char *)sw : "");
		if (!r->point || !r->sweep)
			failed = 1;
	}
	wz_err err = WZ_OK;
	if (failed)
		err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	else if (rc != SQLITE_DONE)
		err = wza_sqlite_err(a->db, rc, a->path, "read the sweep points", diag);
	sqlite3_finalize(st);
	if (err) {
		wza_point_runs_free(runs, *n);
		*n = 0;
		return err;
	}
	*out = runs;
	return WZ_OK;
}

const char *wza_run_point_id(const wza_run *run)
{
	const wza_input *in = wza_run_find_input(run, WZA_SWEEP_KIND, WZA_SWEEP_POINT);
	return in ? in->content : NULL;
}

static int pragma_int(sqlite3 *db, const char *sql, int *out)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

/* Opens an input read-only, so that merging never changes (nor migrates)
 * it, and checks that it is a wzplan archive of this build's schema. */
static wz_err open_input(const char *path, wza_archive **out, wz_diag *diag)
{
	*out = NULL;
	struct stat st;
	if (stat(path, &st) != 0)
		return wz_diag_set(diag, WZ_ERR_NOT_FOUND, "%s: no archive there (%s)", path,
				   strerror(errno));
	wza_archive *a = calloc(1, sizeof *a);
	if (!a || !(a->path = strdup(path))) {
		free(a);
		return wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	}
	a->readonly = 1;
	int rc = sqlite3_open_v2(path, &a->db, SQLITE_OPEN_READONLY, NULL);
	wza_limit_queries(a);
	int app = 0, version = 0;
	if (rc == SQLITE_OK) {
		sqlite3_busy_timeout(a->db, 15000);
		rc = pragma_int(a->db, "PRAGMA application_id", &app);
	}
	if (rc == SQLITE_OK)
		rc = pragma_int(a->db, "PRAGMA user_version", &version);
	wz_err err = WZ_OK;
	if (rc != SQLITE_OK)
		err = wza_sqlite_err(a->db, rc, path, "read the archive", diag);
	else if (app != (int)WZA_APPLICATION_ID)
		err = wz_diag_set(diag, WZ_ERR_INPUT,
				  "%s: not a wzplan archive (SQLite application_id 0x%08x, not "
				  "0x%08x)", path, (unsigned)app, (unsigned)WZA_APPLICATION_ID);
	else if (version > WZA_SCHEMA_VERSION)
		err = wz_diag_set(diag, WZ_ERR_VERSION,
				  "%s: archive schema version %d is newer than this wzplan "
				  "understands (%d); merge with a newer wzplan",
				  path, version, WZA_SCHEMA_VERSION);
	else if (version < WZA_SCHEMA_VERSION)
		err = wz_diag_set(diag, WZ_ERR_VERSION,
				  "%s: archive schema version %d is older than this wzplan's (%d); "
				  "upgrade it first ('wzplan archive check --archive %s' does)",
				  path, version, WZA_SCHEMA_VERSION, path);
	else
		err = wza_check_tables(a, version, diag);
	if (err) {
		wza_close(a);
		return err;
	}
	*out = a;
	return WZ_OK;
}

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Figures that do not depend on which sweep a point ran in. */
static int compared(const wza_figure *f)
{
	return strcmp(f->table, "sweep") && !(!strcmp(f->table, "scenario") && !strcmp(f->col, "name"));
}

static int same_figure(const wza_figure *a, const wza_figure *b)
{
	if ((a->text == NULL) != (b->text == NULL) || (a->text && strcmp(a->text, b->text)))
		return 0;
	if (isnan(a->value) || isnan(b->value))
		return isnan(a->value) && isnan(b->value);
	return a->value == b->value;
}

/* How many figures differ between two runs of one point. */
static int count_differences(const wza_run *a, const wza_run *b)
{
	int n = 0;
	for (int i = 0; i < a->nfigures; i++) {
		if (!compared(&a->figures[i]))
			continue;
		const wza_figure *f = &a->figures[i];
		const wza_figure *g = wza_run_find_figure(b, f->table, f->row, f->col);
		n += !g || !same_figure(f, g);
	}
	for (int i = 0; i < b->nfigures; i++)
		if (compared(&b->figures[i]) &&
		    !wza_run_find_figure(a, b->figures[i].table, b->figures[i].row, b->figures[i].col))
			n++;
	return n;
}

/* Where a point was first seen: the output archive's run, or a loaded run. */
typedef struct {
	const char *point;
	long long out_run;     /* in the output, or 0 */
	const wza_run *loaded; /* from an input, or NULL */
	const char *from;      /* that input's path */
} seen_point;

typedef struct {
	seen_point *items;
	int n, cap;
} seen_set;

static const seen_point *seen_find(const seen_set *s, const char *point)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->items[i].point, point))
			return &s->items[i];
	return NULL;
}

static int seen_add(seen_set *s, seen_point p)
{
	if (s->n == s->cap) {
		int ncap = s->cap ? s->cap * 2 : 64;
		seen_point *q = realloc(s->items, (size_t)ncap * sizeof *q);
		if (!q)
			return -1;
		s->items = q, s->cap = ncap;
	}
	s->items[s->n++] = p;
	return 0;
}

typedef struct {
	wza_run **runs;
	int n, cap;
} run_list;

static int list_add(run_list *l, wza_run *r)
{
	if (l->n == l->cap) {
		int ncap = l->cap ? l->cap * 2 : 64;
		wza_run **q = realloc(l->runs, (size_t)ncap * sizeof *q);
		if (!q)
			return -1;
		l->runs = q, l->cap = ncap;
	}
	l->runs[l->n++] = r;
	return 0;
}

/* Decides whether a loaded run goes in: 1 to copy, 0 to leave out as a
 * duplicate, or an error. */
static wz_err admit(wza_archive *outa, const seen_point *first, const wza_run *run,
		    const char *from, wza_dup_policy policy, int *copy, wz_diag *diag)
{
	*copy = 1;
	if (!first)
		return WZ_OK;
	char where[PATH_MAX + 64];
	if (first->loaded)
		snprintf(where, sizeof where, "%s run %lld", first->from, first->loaded->id);
	else
		snprintf(where, sizeof where, "the output %s run %lld", wza_path(outa), first->out_run);
	if (policy == WZA_DUP_REFUSE)
		return wz_diag_set(diag, WZ_ERR_REFUSED,
				   "%s run %lld: point %s is already in %s; nothing was merged "
				   "(--skip-duplicates keeps the first of equal runs)",
				   from, run->id, first->point, where);
	wza_run *other = NULL;
	const wza_run *cmp = first->loaded;
	if (!cmp) {
		wz_err err = wza_load(outa, first->out_run, &other, diag);
		if (err)
			return err;
		cmp = other;
	}
	int diff = count_differences(run, cmp);
	wza_run_free(other);
	if (diff)
		return wz_diag_set(diag, WZ_ERR_MISMATCH,
				   "%s run %lld: point %s is also in %s, and %d figure%s differ; "
				   "nothing was merged",
				   from, run->id, first->point, where, diff, diff == 1 ? "" : "s");
	*copy = 0;
	return WZ_OK;
}

static void remove_db(const char *path)
{
	char side[PATH_MAX + 8];
	unlink(path);
	snprintf(side, sizeof side, "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof side, "%s-shm", path);
	unlink(side);
}

wz_err wza_merge(const char *out, char *const *in, int nin, wza_dup_policy policy,
		 wza_merge_stats *stats, wz_diag *diag)
{
	memset(stats, 0, sizeof *stats);
	for (int i = 0; i < nin; i++)
		if (same_file(in[i], out))
			return wz_diag_set(diag, WZ_ERR_USAGE,
					   "%s: the output cannot also be an input", in[i]);
	/* Every input is read whole before the output is opened. */
	wz_err err = WZ_OK;
	run_list loaded = { 0 };
	const char **origin = NULL;
	for (int i = 0; i < nin && !err; i++) {
		wza_archive *a;
		if ((err = open_input(in[i], &a, diag)))
			break;
		wza_run_info *infos;
		int n;
		if (!(err = wza_list(a, &infos, &n, diag))) {
			const char **o = realloc(origin, (size_t)(loaded.n + n + 1) * sizeof *o);
			if (!o)
				err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
			else
				origin = o;
			/* Oldest first: wza_list gives the newest first. */
			for (int k = n - 1; k >= 0 && !err; k--) {
				wza_run *r;
				if ((err = wza_load(a, infos[k].id, &r, diag)))
					break;
				origin[loaded.n] = in[i];
				if (list_add(&loaded, r)) {
					wza_run_free(r);
					err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
				}
			}
			wza_list_free(infos, n);
		}
		wza_close(a);
	}
	/* A new output is built aside and renamed into place at the end, so
	 * that no error leaves a half-made file behind. */
	struct stat st;
	int fresh = lstat(out, &st) != 0;
	char tmp[PATH_MAX];
	const char *target = fresh ? tmp : out;
	wza_archive *outa = NULL;
	int made_tmp = 0;
	/* Never through a link (dangling or not) standing at OUT: only a
	 * regular file is merged into, and a new one is made under a name
	 * of our own (O_EXCL, which follows no link) and renamed into place. */
	if (!err && !fresh && !S_ISREG(st.st_mode))
		err = wz_diag_set(diag, WZ_ERR_REFUSED,
				  "%s: is %s; archive merge writes into a regular file or a new name",
				  out, S_ISLNK(st.st_mode) ? "a symbolic link" : S_ISDIR(st.st_mode) ? "a folder"
										    : "not a regular file");
	if (!err && fresh && strlen(out) + 32 >= sizeof tmp)
		err = wz_diag_set(diag, WZ_ERR_INPUT, "%s: path too long", out);
	if (!err && fresh) {
		snprintf(tmp, sizeof tmp, "%s.merge-XXXXXX", out);
		int fd = mkstemp(tmp);
		/* A folder that is not there or not ours is the caller's
		 * mistake (exit 2), as a link or a folder at OUT is. */
		if (fd < 0)
			err = wz_diag_set(diag, errno == ENOSPC || errno == EIO ? WZ_ERR_IO
										 : WZ_ERR_REFUSED,
					  "%s: cannot create: %s", out, strerror(errno));
		else
			close(fd), made_tmp = 1;
	}
	if (!err)
		err = wza_open(target, 1, &outa, diag);
	seen_set seen = { 0 };
	wza_point_run *existing = NULL;
	int nexisting = 0;
	if (!err)
		err = wza_point_runs(outa, NULL, &existing, &nexisting, diag);
	for (int i = 0; i < nexisting && !err; i++)
		if (!seen_find(&seen, existing[i].point) &&
		    seen_add(&seen, (seen_point){ existing[i].point, existing[i].run, NULL, NULL }))
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
	run_list copy = { 0 };
	for (int i = 0; i < loaded.n && !err; i++) {
		wza_run *r = loaded.runs[i];
		const char *point = wza_run_point_id(r);
		int keep = 1;
		if (point) {
			const seen_point *first = seen_find(&seen, point);
			err = admit(outa, first, r, origin[i], policy, &keep, diag);
			if (!err && !first && seen_add(&seen, (seen_point){ point, 0, r, origin[i] }))
				err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		}
		if (!err && keep && list_add(&copy, r))
			err = wz_diag_set(diag, WZ_ERR_NOMEM, "out of memory");
		if (!err && !keep)
			stats->duplicates++;
	}
	if (!err)
		err = wza_store_many(outa, copy.runs, copy.n, diag);
	if (!err)
		stats->copied = copy.n;
	wza_close(outa);
	if (made_tmp && !err) {
		/* mkstemp makes 0600; an archive is an ordinary file */
		mode_t mask = umask(0);
		umask(mask);
		chmod(tmp, 0666 & ~mask);
	}
	if (made_tmp && !err && rename(tmp, out) != 0)
		err = wz_diag_set(diag, WZ_ERR_IO, "%s: cannot rename %s into place: %s", out, tmp,
				  strerror(errno));
	if (made_tmp && (err || outa == NULL))
		remove_db(tmp);
	wza_point_runs_free(existing, nexisting);
	free(seen.items);
	free(copy.runs);
	for (int i = 0; i < loaded.n; i++)
		wza_run_free(loaded.runs[i]);
	free(loaded.runs);
	free(origin);
	return err;
}
