#!/bin/sh
# Runs the catalogue of bad inputs in tests/cli/bad-inputs.md: for each row of
# its table, in an empty folder, the set-up, then the command, which must
# end with the row's exit status and a message holding the row's fragment
# (and print nothing on standard output).
. "$top_srcdir/tests/cli/lib.sh"
DATA=$(cd "$top_srcdir/data" && pwd)
GOLDEN=$(cd "$top_srcdir/tests/codec/golden" && pwd)
export DATA GOLDEN
WZPLAN=$(cd "$(dirname "$WZPLAN")" && pwd)/$(basename "$WZPLAN")
wzplan() { "$WZPLAN" "$@"; }
# strip CELL: the cell without blanks at either end or its code quotes.
strip() {
	printf '%s' "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//; s/^`//; s/`$//'
}
rows=0
while IFS='|' read -r _ what setup command want fragment _; do
	what=$(strip "$what")
	setup=$(strip "$setup")
	command=$(strip "$command")
	want=$(strip "$want")
	fragment=$(strip "$fragment")
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
	cd "$tmp" || exit 1
done <<ROWS
$(grep '^| ' "$top_srcdir/tests/cli/bad-inputs.md")
ROWS
[ "$rows" -ge 40 ]; ok $? "the catalogue has its $rows rows"
done_testing
