#!/bin/sh
# A command stopped by SIGTERM or SIGHUP while it writes leaves no folder
# of its own behind (common/wz_cleanup.h): the private folder gnuplot
# renders in is removed before the process dies of the signal.  (SIGINT
# is handled alike, but a shell starts background jobs with it ignored,
# and an ignored signal stays ignored.)
. "$top_srcdir/tests/cli/lib.sh"
cd "$tmp" || exit 1
run "$WZPLAN" size --archive a.sqlite --users 64 --formats fp8-mix --duration 120 --warmup 10 -q
expect_rc 0 "a run to plot"
# A gnuplot that takes its time, so the signal comes while it renders.
cat > slow-gnuplot <<'END'
#!/bin/sh
touch "$(dirname "$0")/gnuplot-started"
sleep 30
END
chmod +x slow-gnuplot
for sig in TERM HUP; do
	rm -f gnuplot-started
	mkdir "p-$sig"
	WZ_GNUPLOT="$tmp/slow-gnuplot" "$WZPLAN" plot 1 --archive a.sqlite --out "p-$sig" >/dev/null 2>&1 &
	pid=$!
	i=0
	while [ ! -e gnuplot-started ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	[ -e gnuplot-started ]; ok $? "SIG$sig: gnuplot was running"
	kill -s "$sig" $pid
	wait $pid
	rc=$?
	[ "$rc" -gt 128 ]; ok $? "SIG$sig: the process died of the signal (status $rc)"
	[ -z "$(find "p-$sig" -name '.chart-*')" ]; ok $? "SIG$sig: no rendering folder left in the output"
done
cd / && done_testing
