# TAP helpers for the CLI tests (sourced).  $WZPLAN is the program under test.
n=0
failed=0
ok() { # ok COND_STATUS NAME
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi
}
# run CMD...: runs with stdout in $out, stderr in $err, status in $rc.
run() {
	"$@" > "$tmp/stdout" 2> "$tmp/stderr"
	rc=$?
	out=$(cat "$tmp/stdout")
	err=$(cat "$tmp/stderr")
}
# expect_rc WANT NAME
expect_rc() {
	[ "$rc" -eq "$1" ]; s=$?
	ok $s "$2 (exit $1)"
	[ $s -eq 0 ] || { echo "#   exit $rc; stderr: $err" | head -5; }
}
# contains TEXT PATTERN NAME (fixed string)
contains() {
	printf '%s' "$1" | grep -qF -- "$2"; s=$?
	ok $s "$3"
	[ $s -eq 0 ] || echo "#   '$2' not in: $(printf '%s' "$1" | head -3)"
}
done_testing() {
	echo "1..$n"
	rm -rf "$tmp"
	[ "$failed" -eq 0 ]
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wzplan-test.XXXXXX")
: "${WZPLAN:=./wzplan}"
# sim, size and propose archive their runs by default: never in the real
# archive of whoever runs the tests.
WZPLAN_ARCHIVE="$tmp/default-archive.sqlite"
export WZPLAN_ARCHIVE
