#!/bin/sh
# Robustness of the archive through wzplan: two writers at once both land; a
# process killed mid-write leaves a sound archive with no half-written run;
# a read-only archive, a full disk and a failing output write give clear
# errors and lose nothing.
. "$top_srcdir/tests/cli/lib.sh"
unset WZPLAN_ARCHIVE
export WZ_GNUPLOT=none
A="$tmp/a.sqlite"

count_runs() { # prints the number of runs, or -1
	"$WZPLAN" archive list --archive "$1" --format csv 2>/dev/null | tail -n +2 | wc -l
}
orphans() { # figures whose run is not in runs
	python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("SELECT (SELECT count(*) FROM figures WHERE run NOT IN (SELECT id FROM runs)) + (SELECT count(*) FROM inputs WHERE run NOT IN (SELECT id FROM runs)) + (SELECT count(*) FROM fleets WHERE run NOT IN (SELECT id FROM runs))").fetchone()[0])' "$1"
}

# Two writers at once: the first holds the write transaction for a while.
WZ_ARCHIVE_TEST_SLEEP_MS=700 "$WZPLAN" propose --out "$tmp/c1" --archive "$A" >"$tmp/c1.out" 2>&1 &
p1=$!
"$WZPLAN" propose --out "$tmp/c2" --archive "$A" --users 5000 >"$tmp/c2.out" 2>&1 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
[ $r1 -eq 0 ] && [ $r2 -eq 0 ]; ok $? "two writers at once both succeed"
[ $r1 -eq 0 ] && [ $r2 -eq 0 ] || sed 's/^/#   /' "$tmp/c1.out" "$tmp/c2.out" | tail -6
[ "$(count_runs "$A")" -eq 2 ]; ok $? "both runs landed"
run "$WZPLAN" archive check --archive "$A"
expect_rc 0 "integrity check after concurrent writes"

# Three writers creating a new archive at the same moment.
B="$tmp/b.sqlite"
for i in 1 2 3; do
	"$WZPLAN" propose --out "$tmp/b$i" --archive "$B" >"$tmp/b$i.out" 2>&1 &
done
wait
[ "$(count_runs "$B")" -eq 3 ]; ok $? "three writers creating one archive at once all land"
[ "$(count_runs "$B")" -eq 3 ] || sed 's/^/#   /' "$tmp"/b?.out | grep -v '^#   [A-Z|-]' | head -6

# SIGKILL inside the write transaction.
WZ_ARCHIVE_TEST_SLEEP_MS=20000 "$WZPLAN" propose --out "$tmp/k" --archive "$A" >/dev/null 2>&1 &
pk=$!
sleep 2
kill -KILL $pk 2>/dev/null
wait $pk; rk=$?
[ $rk -eq 137 ]; ok $? "the writer was killed mid-write (status $rk)"
run "$WZPLAN" archive check --archive "$A"
expect_rc 0 "PRAGMA integrity_check passes after SIGKILL"
[ "$(count_runs "$A")" -eq 2 ]; ok $? "no half-written run: still two runs"
[ "$(orphans "$A")" -eq 0 ]; ok $? "no figures, inputs or fleets without their run"
[ ! -e "$tmp/k" ]; ok $? "no proposal folder from the killed run"
run "$WZPLAN" propose --out "$tmp/k2" --archive "$A"
expect_rc 0 "the archive takes the next run"
contains "$out" "Run 3 archived" "as run 3"

# A full disk: SQLite's SQLITE_FULL, forced by capping the file's pages.
run env WZ_ARCHIVE_TEST_MAX_PAGES=1 "$WZPLAN" propose --out "$tmp/f" --archive "$A"
expect_rc 1 "propose on a full disk fails"
contains "$err" "the disk is full" "with a clear message"
contains "$err" "nothing stored before was changed" "that says nothing was lost"
[ ! -e "$tmp/f" ]; ok $? "and writes no proposal"
[ "$(count_runs "$A")" -eq 3 ]; ok $? "the three runs are still there"

# A failing write of the proposal's files (WZ_FAULT_WRITE): nothing appears.
run env WZ_FAULT_WRITE=3 "$WZPLAN" propose --out "$tmp/w" --archive "$A"
expect_rc 1 "a failing file write fails propose"
[ ! -e "$tmp/w" ] && [ -z "$(ls -d "$tmp"/w.tmp* 2>/dev/null)" ]
ok $? "no output folder and no staging left"
[ "$(count_runs "$A")" -eq 3 ]; ok $? "and no run archived"

# A read-only archive: file and folder not writable.  Root ignores
# permissions, so as root the reading and writing run as 'nobody'.
ro="$tmp/ro"
mkdir -p "$ro" "$tmp/rw"
cp "$A" "$ro/a.sqlite"
chmod 0444 "$ro/a.sqlite"
chmod 0555 "$ro"
chmod 0777 "$tmp/rw"
chmod 0755 "$tmp"
as_user=
if [ "$(id -u)" -eq 0 ]; then
	if command -v setpriv >/dev/null 2>&1; then
		as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
	else
		as_user=skip
	fi
fi
if [ "$as_user" = skip ]; then
	n=$((n + 1)); echo "ok $n # SKIP read-only archive: running as root without setpriv"
else
	run $as_user "$WZPLAN" propose --out "$tmp/rw/p" --archive "$ro/a.sqlite"
	expect_rc 1 "propose into a read-only archive fails"
	contains "$err" "the archive is read-only" "with a clear message"
	[ ! -e "$tmp/rw/p" ]; ok $? "and writes no proposal"
	run $as_user "$WZPLAN" archive list --archive "$ro/a.sqlite"
	expect_rc 0 "a read-only archive can still be listed"
	contains "$out" "  3  propose" "with every run in it"
	run $as_user "$WZPLAN" verify 3 --archive "$ro/a.sqlite"
	expect_rc 0 "and verified"
fi
chmod 0755 "$ro"
cmp -s "$A" "$ro/a.sqlite"; ok $? "the read-only archive is unchanged"
done_testing
