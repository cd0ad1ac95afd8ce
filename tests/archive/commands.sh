#!/bin/sh
# CLI tests of the archive: where it lives, propose storing runs, archive
# list/show/export/diff/check, verify (exact reproduction, changed inputs
# named) and plot.
. "$top_srcdir/tests/cli/lib.sh"
unset WZPLAN_ARCHIVE XDG_DATA_HOME
export WZ_GNUPLOT=none  # charts are tested in tests/plots; keep these quick
A="$tmp/a.sqlite"

run "$WZPLAN" propose --out "$tmp/p" --archive "$A"
expect_rc 0 "propose stores its run"
contains "$out" "Run 1 archived in $A" "prints the run id and the archive"
contains "$(cat "$tmp/p/proposal.md")" "run 1 in the archive" "the proposal names its run"

run "$WZPLAN" archive list --archive "$A"
expect_rc 0 "archive list"
contains "$out" "propose" "lists the propose run"
run "$WZPLAN" archive list --archive "$A" --format json
printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["rows"][0]["id"]==1' 2>/dev/null
ok $? "list as JSON"

run "$WZPLAN" archive show 1 --archive "$A"
expect_rc 0 "archive show"
contains "$out" "embedded:models.csv" "shows the catalogs used"
contains "$out" "XXH3" "with their hashes"
contains "$out" "cost / fp8-mix / memory_gpus = 2512" "and the figures"

run "$WZPLAN" archive export 1 --archive "$A"
expect_rc 0 "export as CSV (the default)"
contains "$(printf '%s\n' "$out" | head -1)" "run,table,row,column,value,text" "CSV header"
contains "$out" "1,cost,fp8-mix,scaling_reserved_usd_year,17520000," "a figure at full precision"
contains "$out" '1,cost,iso:1.42,label,,wz at fp8-mix quality (1.42x fewer bits)' "a text figure"
run "$WZPLAN" archive export 1 --archive "$A" --format json -o "$tmp/run1.json"
expect_rc 0 "export as JSON to a file"
python3 -c '
import json,sys
d=json.load(open(sys.argv[1]))
assert d["run"]["id"]==1 and d["run"]["command"]=="propose"
assert d["run"]["args"][:2]==["--out", sys.argv[2]]
assert any(f["table"]=="cost" and f["row"]=="fp8-mix" and f["column"]=="memory_gpus" and f["value"]==2512 for f in d["figures"])
assert {i["name"] for i in d["inputs"]}=={"scenario","models.csv","gpus.csv","prices.csv","propose"}
assert [i["kind"] for i in d["inputs"] if i["name"]=="propose"]==["request"]
assert any(f["method"]=="memory" and f["gpus"]==2512 for f in d["fleets"])
' "$tmp/run1.json" "$tmp/p" 2>"$tmp/py.err"
ok $? "JSON carries the run, its arguments, inputs, figures and fleets"
[ -s "$tmp/py.err" ] && sed 's/^/#   /' "$tmp/py.err"
run "$WZPLAN" archive export 1 --archive "$A" --format md
expect_rc 2 "export refuses other formats"

run "$WZPLAN" propose --out "$tmp/p2" --archive "$A" --users 5000
expect_rc 0 "a second run"
run "$WZPLAN" archive diff 1 1 --archive "$A"
expect_rc 0 "a run does not differ from itself"
run "$WZPLAN" archive diff 1 2 --archive "$A"
expect_rc 1 "two runs that differ"
contains "$out" "scenario / scenario / users: run 1 10000, run 2 5000" "names the differing figure"
run "$WZPLAN" archive check --archive "$A"
expect_rc 0 "integrity check"

run "$WZPLAN" verify 1 --archive "$A"
expect_rc 0 "verify reproduces a propose run"
contains "$out" "figures reproduced exactly" "says so"
contains "$out" "Every input is as recorded" "and that the inputs match"
run "$WZPLAN" verify 99 --archive "$A"
expect_rc 2 "verify of an unknown run"
contains "$err" "no run 99" "says which"

# verify recomputes the request a run stored (kind "request"), not its
# recorded arguments; a run stored before requests were (arguments only)
# is recomputed from its arguments, parsed as propose parsed them.
sql() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()' "$A" "$1"; }
contains "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT content FROM inputs WHERE run=2 AND kind=\"request\" AND name=\"propose\"").fetchone()[0])' "$A")" \
	"users = 5000" "the run stores its request as key = value lines"
sql "UPDATE runs SET args='[\"--users\",\"1\"]' WHERE id=2"
run "$WZPLAN" verify 2 --archive "$A"
expect_rc 0 "verify recomputes the stored request, whatever the arguments say"
sql "DELETE FROM inputs WHERE run=2 AND kind='request'"
run "$WZPLAN" verify 2 --archive "$A"
expect_rc 1 "a run without a request is recomputed from its arguments"
contains "$out" "scenario / scenario / users: archived 5000, recomputed 1" "(here changed, so its figures move)"
sql "DELETE FROM inputs WHERE run=1 AND kind='request'"
run "$WZPLAN" verify 1 --archive "$A"
expect_rc 0 "a run stored before requests were still verifies"
contains "$out" "figures reproduced exactly" "exactly"
sql "INSERT INTO inputs VALUES (1, 'request', 'propose', 'wzplan', NULL, 32, 'max_replicas = 100000' || char(10) || 'bogus = 1')"
run "$WZPLAN" verify 1 --archive "$A"
expect_rc 2 "a request with a key this program does not know is refused"
contains "$err" "run 1's request:2: unknown key 'bogus'" "naming the key and its line"
sql "DELETE FROM inputs WHERE run=1 AND kind='request'"

# Inputs from files: a scenario file and a catalog folder.
mkdir -p "$tmp/cat"
cp "$top_srcdir/data/scenarios/product-page.scenario" "$tmp/my.scenario"
cp "$top_srcdir/data/gpus.csv" "$tmp/cat/gpus.csv"
run "$WZPLAN" propose --out "$tmp/p3" --archive "$A" --scenario "$tmp/my.scenario" --catalog "$tmp/cat"
expect_rc 0 "propose from a scenario file and a catalog folder"
run "$WZPLAN" verify 3 --archive "$A"
expect_rc 0 "verify reproduces it"
sed 's/^H100 SXM 80GB,80,/H100 SXM 80GB,96,/' "$top_srcdir/data/gpus.csv" > "$tmp/cat/gpus.csv"
run "$WZPLAN" verify 3 --archive "$A"
expect_rc 1 "after a catalog file changed, verify fails"
contains "$out" "gpus.csv changed" "and names the changed catalog file"
contains "$out" "cost / fp8-mix / memory_gpus: archived 2512, recomputed" "and the figures that moved"
run "$WZPLAN" verify 3 --archive "$A" --stored
expect_rc 0 "--stored recomputes from the recorded texts"
cp "$top_srcdir/data/gpus.csv" "$tmp/cat/gpus.csv"
sed 's/^users = 10000/users = 12000/' "$top_srcdir/data/scenarios/product-page.scenario" > "$tmp/my.scenario"
run "$WZPLAN" verify 3 --archive "$A"
expect_rc 1 "after the scenario file changed, verify fails"
contains "$out" "my.scenario changed" "and names the scenario file"
rm -f "$tmp/my.scenario"
run "$WZPLAN" verify 3 --archive "$A"
expect_rc 0 "a deleted input: recomputed from the recorded text"
contains "$out" "my.scenario is gone" "and named"

# plot without gnuplot: the data and scripts, and a clear message.
run "$WZPLAN" plot 1 --archive "$A" --out "$tmp/charts"
expect_rc 0 "plot without gnuplot writes what it can"
contains "$err" "warning: charts not drawn" "and warns that the charts were not drawn"
[ -s "$tmp/charts/cost.gp" ] && [ -s "$tmp/charts/cost.dat" ] && [ ! -e "$tmp/charts/cost.png" ]
ok $? "but writes the data and gnuplot scripts"

# Where the archive lives by default.
mkdir -p "$tmp/home"
(cd "$tmp" && HOME="$tmp/home" "$WZPLAN" propose --out q1 >/dev/null 2>&1)
[ -s "$tmp/home/.local/share/wzplan/archive.sqlite" ]
ok $? "default: ~/.local/share/wzplan/archive.sqlite"
(cd "$tmp" && HOME="$tmp/home" XDG_DATA_HOME="$tmp/xdg" "$WZPLAN" propose --out q2 >/dev/null 2>&1)
[ -s "$tmp/xdg/wzplan/archive.sqlite" ]
ok $? "with XDG_DATA_HOME: \$XDG_DATA_HOME/wzplan/archive.sqlite"
(cd "$tmp" && WZPLAN_ARCHIVE="$tmp/env.sqlite" "$WZPLAN" propose --out q3 >/dev/null 2>&1)
[ -s "$tmp/env.sqlite" ]
ok $? "WZPLAN_ARCHIVE chooses it"
run env -u HOME "$WZPLAN" propose --out "$tmp/q4"
expect_rc 0 "no HOME: propose still works"
contains "$err" "storing the run in $tmp/q4/archive.sqlite" "and keeps the run beside the proposal"
[ -s "$tmp/q4/archive.sqlite" ] && [ -s "$tmp/q4/proposal.md" ]
ok $? "both are there"
run "$WZPLAN" archive list --archive "$tmp/nothing-here.sqlite"
expect_rc 2 "listing an archive that does not exist"

# An archive from a newer wzplan.
cp "$A" "$tmp/future.sqlite"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("PRAGMA user_version = 99"); c.commit()' "$tmp/future.sqlite"
run "$WZPLAN" archive list --archive "$tmp/future.sqlite"
expect_rc 2 "a future schema version is refused"
contains "$err" "schema version 99 is newer than this wzplan understands" "with a clear message"
run "$WZPLAN" propose --out "$tmp/p5" --archive "$tmp/future.sqlite"
expect_rc 2 "propose refuses to write into it"
[ ! -e "$tmp/p5" ]; ok $? "and writes no proposal"
done_testing
