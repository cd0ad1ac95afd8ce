#!/bin/sh
# Runs a catalogue of bad inputs (tests/cli/bad-inputs.md, or the table file
# given as $1, one per class of fault): for each row of its table, in an
# empty folder, the set-up, then the command, which must end with the row's
# exit status and a message holding the row's fragment (and print nothing on
# standard output), within 20 s of CPU time (a wall-clock limit of 120 s
# catches a command that hangs without spending CPU; CPU time, so that a
# loaded machine does not fail a row that is quick) and 4 GB of address
# space; then the row's
# last cell, when it has one, a shell condition that must hold afterwards
# (nothing written through a link, a file left as it was).
. "$top_srcdir/tests/cli/lib.sh"
table=${1:-$top_srcdir/tests/cli/bad-inputs.md}
least=${2:-40}
DATA=$(cd "$top_srcdir/data" && pwd)
GOLDEN=$(cd "$top_srcdir/tests/codec/golden" && pwd)
export DATA GOLDEN
WZPLAN=$(cd "$(dirname "$WZPLAN")" && pwd)/$(basename "$WZPLAN")
wzplan() { (ulimit -v 4000000 2>/dev/null; ulimit -t 20 2>/dev/null; exec timeout 120 "$WZPLAN" "$@"); }
# strip CELL: the cell without blanks at either end or its code quotes.
strip() {
	printf '%s' "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//; s/^`//; s/`$//'
}
rows=0
while IFS='|' read -r _ what setup command want fragment after _; do
	what=$(strip "$what")
	setup=$(strip "$setup")
	command=$(strip "$command")
	want=$(strip "$want")
	fragment=$(strip "$fragment")
	after=$(strip "$after")
	case "$want" in ''|*[!0-9]*) continue ;; esac # the header and its rule
	rows=$((rows + 1))
	dir="$tmp/row-$rows"
	mkdir "$dir" && cd "$dir" || exit 1
	eval "$setup" </dev/null
	run eval "$command" </dev/null
	expect_rc "$want" "$what"
	printf '#   %s\n' "$(printf '%s' "$err" | head -1)"
	contains "$err" "$fragment" "  message: $fragment"
	[ -z "$out" ]; ok $? "  nothing on standard output"
	if [ -n "$after" ]; then
		eval "$after" </dev/null; ok $? "  then: $after"
	fi
	cd "$tmp" || exit 1
done <<ROWS
$(grep '^| ' "$table")
ROWS
[ "$rows" -ge "$least" ]; ok $? "the catalogue has its $rows rows"
done_testing
