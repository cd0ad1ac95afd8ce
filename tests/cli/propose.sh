#!/bin/sh
# CLI tests for `wzplan propose`: files written, nothing written on bad input.
. "$top_srcdir/tests/cli/lib.sh"

run "$WZPLAN" propose --out "$tmp/p" --archive "$tmp/a.sqlite"
expect_rc 0 "propose on the embedded default"
[ -s "$tmp/p/proposal.md" ] && [ -s "$tmp/p/cost.csv" ] && [ -s "$tmp/p/cost.json" ]
ok $? "proposal.md, cost.csv and cost.json written"
md=$(cat "$tmp/p/proposal.md")
contains "$md" "DeepSeek-V3" "proposal names the model"
contains "$md" "config_671B.json" "assumptions cite the catalog source"
contains "$md" '$17.52M' "proposal carries the cost table"
contains "$md" "Not measured" "says what was not measured"
# --no-archive: the proposal is written and says it was not stored, and no
# archive appears anywhere (the default place under an empty home, or OUT)
mkdir -p "$tmp/home"
run env HOME="$tmp/home" XDG_DATA_HOME= WZPLAN_ARCHIVE= "$WZPLAN" propose --out "$tmp/n" \
	--no-archive
expect_rc 0 "propose --no-archive"
contains "$(cat "$tmp/n/proposal.md" 2>/dev/null)" "not stored in an archive" \
	"the proposal says its run was not archived"
contains "$out" "Run not archived" "and so does the command"
[ -z "$(find "$tmp/home" "$tmp/n" -name '*.sqlite')" ]; ok $? "no archive written"
run "$WZPLAN" propose --out "$tmp/m" --no-archive --archive "$tmp/a.sqlite"
expect_rc 2 "--archive and --no-archive together"
contains "$err" "exclude each other" "says which options clash"
run "$WZPLAN" propose --out "$tmp/q" --archive "$tmp/a.sqlite" --users 0
expect_rc 2 "bad input"
[ ! -e "$tmp/q" ]; ok $? "no output folder on bad input"
done_testing
