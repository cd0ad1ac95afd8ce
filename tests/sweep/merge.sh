#!/bin/sh
# wzplan archive merge: runs copied whole in one transaction; duplicates by
# point id refused, or left out when equal; archives of a future schema or
# another application refused; the output untouched (or not created) on
# every error.
. "$top_srcdir/tests/cli/lib.sh"
export WZ_GNUPLOT=none
W="$WZPLAN"
S="$tmp/m.sweep"
printf 'sweep = merge-test\nset.price_set = catalog\nset.mode = memory\naxis.users = 1000 | 2000 | 3000 | 4000\n' > "$S"
"$W" sweep "$S" --shard 1/2 --archive "$tmp/a.sqlite" -q || echo "# shard 1 failed"
"$W" sweep "$S" --shard 2/2 --archive "$tmp/b.sqlite" -q || echo "# shard 2 failed"
"$W" sweep "$S" --jobs 1 --archive "$tmp/all.sqlite" -q || echo "# the whole sweep failed"
"$W" propose --out "$tmp/p" --archive "$tmp/b.sqlite" > /dev/null 2>&1 || echo "# propose failed"
sum() { [ -e "$1" ] && cksum < "$1" || echo absent; }
count() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM runs").fetchone()[0])' "$1"; }

run "$W" archive merge "$tmp/out.sqlite" "$tmp/a.sqlite" "$tmp/b.sqlite"
expect_rc 0 "merge two shards into a new archive"
contains "$err" "5 runs copied" "copies the 4 points and the propose run"
[ "$(count "$tmp/out.sqlite")" -eq 5 ]; ok $? "5 runs in the output"
"$W" sweep results "$S" --archive "$tmp/out.sqlite" > "$tmp/out.csv"
"$W" sweep results "$S" --archive "$tmp/all.sqlite" > "$tmp/all.csv"
cmp -s "$tmp/out.csv" "$tmp/all.csv"; ok $? "the merged figures equal a whole sweep's"
python3 -c '
import sqlite3,sys
a=sqlite3.connect(sys.argv[1]); o=sqlite3.connect(sys.argv[2])
q="SELECT r.command,r.args,r.version,r.started,r.finished,r.status,i.kind,i.name,i.origin,i.hash,i.size,i.content FROM runs r JOIN inputs i ON i.run=r.id WHERE i.run IN (SELECT run FROM inputs WHERE kind=\"sweep\" AND name=\"point\" AND content=?) ORDER BY i.kind,i.name"
p=a.execute("SELECT content FROM inputs WHERE kind=\"sweep\" AND name=\"point\" LIMIT 1").fetchone()[0]
assert a.execute(q,(p,)).fetchall()==o.execute(q,(p,)).fetchall()
s="SELECT format,series,seq,x,y FROM sim_series WHERE run=? ORDER BY seq"
' "$tmp/a.sqlite" "$tmp/out.sqlite" 2>"$tmp/py.err"
ok $? "a merged run keeps its command, times and inputs"
[ -s "$tmp/py.err" ] && sed 's/^/#   /' "$tmp/py.err"

before=$(sum "$tmp/out.sqlite")
run "$W" archive merge "$tmp/out.sqlite" "$tmp/a.sqlite"
expect_rc 2 "merging points already in the output is refused"
contains "$err" "is already in the output" "names the duplicate"
[ "$(sum "$tmp/out.sqlite")" = "$before" ]; ok $? "the output is untouched"
run "$W" archive merge "$tmp/new.sqlite" "$tmp/a.sqlite" "$tmp/all.sqlite"
expect_rc 2 "a point in two inputs is refused"
[ ! -e "$tmp/new.sqlite" ]; ok $? "and no output is created"
ls "$tmp" | grep -q 'new.sqlite.merge'; [ $? -ne 0 ]; ok $? "nor left half-made"
run "$W" archive merge "$tmp/new.sqlite" "$tmp/a.sqlite" "$tmp/all.sqlite" --skip-duplicates
expect_rc 0 "--skip-duplicates keeps the first of equal runs"
contains "$err" "4 runs copied into $tmp/new.sqlite, 2 duplicates left out" "and says how many"

# Two runs of one point whose figures differ are never deduplicated.
cp "$tmp/a.sqlite" "$tmp/changed.sqlite"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("UPDATE figures SET value=value+1 WHERE tbl=\"cost\" AND row_key=\"fp8-mix\" AND col=\"memory_gpus\""); c.commit()' "$tmp/changed.sqlite"
before=$(sum "$tmp/new.sqlite")
run "$W" archive merge "$tmp/new.sqlite" "$tmp/changed.sqlite" --skip-duplicates
expect_rc 1 "duplicates with different figures are refused"
contains "$err" "figure differ" "saying the figures differ"
[ "$(sum "$tmp/new.sqlite")" = "$before" ]; ok $? "the output is untouched"

cp "$tmp/b.sqlite" "$tmp/future.sqlite"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version=99"); c.commit()' "$tmp/future.sqlite"
before=$(sum "$tmp/new.sqlite")
run "$W" archive merge "$tmp/new.sqlite" "$tmp/future.sqlite"
expect_rc 2 "an archive of a future schema is refused"
contains "$err" "schema version 99 is newer" "saying so"
[ "$(sum "$tmp/new.sqlite")" = "$before" ]; ok $? "the output is untouched"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA application_id=1234"); c.execute("CREATE TABLE t(x)"); c.commit()' "$tmp/other.sqlite"
run "$W" archive merge "$tmp/new.sqlite" "$tmp/b.sqlite" "$tmp/other.sqlite"
expect_rc 2 "another application's database is refused"
contains "$err" "not a wzplan archive" "saying so"
[ "$(sum "$tmp/new.sqlite")" = "$before" ]; ok $? "the output is untouched, though the first input was good"
printf 'not sqlite' > "$tmp/text.sqlite"
run "$W" archive merge "$tmp/new.sqlite" "$tmp/text.sqlite"
expect_rc 2 "a file that is not SQLite is refused"
run "$W" archive merge "$tmp/new.sqlite" "$tmp/missing.sqlite"
expect_rc 2 "a missing input is refused"
run "$W" archive merge "$tmp/new.sqlite" "$tmp/new.sqlite"
expect_rc 2 "the output as an input is refused"
run "$W" archive merge "$tmp/new.sqlite"
expect_rc 2 "merge needs an input"
[ "$(sum "$tmp/new.sqlite")" = "$before" ]; ok $? "after all these, the output is as it was"
done_testing
