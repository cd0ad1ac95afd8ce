#!/bin/sh
# The catalogue of tests/cli/bad-links.md: outputs where a link stands.
. "$top_srcdir/tests/cli/lib.sh"
ARCHIVE="$tmp/one-run.sqlite"
"$WZPLAN" size --archive "$ARCHIVE" --users 64 --formats fp8-mix --duration 120 --warmup 10 -q \
	>/dev/null || { echo "Bail out! cannot make the catalogue's archive"; exit 1; }
export ARCHIVE
sh "$top_srcdir/tests/cli/bad_inputs.sh" "$top_srcdir/tests/cli/bad-links.md" 7
s=$?
rm -rf "$tmp"
exit $s
