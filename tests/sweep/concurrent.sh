#!/bin/sh
# Two `wzplan sweep` runs of one sweep file into one archive at the same
# time store every point once: each store looks for the point and writes
# it in one transaction.  Both runs hold each store open for 300 ms
# (WZ_ARCHIVE_TEST_SLEEP_MS), so the second has listed every point as still
# to do before the first has stored any, as on a busy machine.
. "$top_srcdir/tests/cli/lib.sh"
export WZ_GNUPLOT=none
S="$tmp/four.sweep"
A="$tmp/a.sqlite"
cat > "$S" <<'END'
sweep = concurrent-test
set.price_set = catalog
set.mode = memory
set.formats = fp8-mix, wz-5.44
axis.users = 100 | 200
axis.context = 8k | 32k
END
WZ_ARCHIVE_TEST_SLEEP_MS=300 "$WZPLAN" sweep "$S" --archive "$A" --jobs 1 2> "$tmp/one.err" &
p1=$!
WZ_ARCHIVE_TEST_SLEEP_MS=300 "$WZPLAN" sweep "$S" --archive "$A" --jobs 1 2> "$tmp/two.err" &
p2=$!
wait $p1; rc1=$?
wait $p2; rc2=$?
[ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ]; ok $? "both sweeps end well (exit $rc1 and $rc2)"
[ "$rc1" -eq 0 ] || head -3 "$tmp/one.err"
[ "$rc2" -eq 0 ] || head -3 "$tmp/two.err"
counts=$(python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
print(" ".join(str(n) for (n,) in c.execute("SELECT count(*) FROM inputs WHERE kind=\"sweep\" AND name=\"point\" GROUP BY content ORDER BY content")))' "$A")
[ "$counts" = "1 1 1 1" ]; ok $? "each of the 4 points stored once (runs per point: $counts)"
run "$WZPLAN" sweep results "$S" --archive "$A"
expect_rc 0 "and the results have every point"
done_testing
