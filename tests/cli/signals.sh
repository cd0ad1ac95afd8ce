#!/bin/sh
# A command stopped by SIGTERM or SIGHUP while it writes leaves no folder
# of its own behind (common/wz_cleanup.h): the private folder gnuplot
# renders in is removed before the process dies of the signal.  (SIGINT
# is handled alike, but a shell starts background jobs with it ignored,
# and an ignored signal stays ignored.)  SIGKILL cannot be handled: the
# folder a killed run leaves is removed by the next run that stages beside
# it, once no process holds it (runs/publish.c) -- and only then.
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
# The signals this shell was started with ignored (nohup ignores SIGHUP):
# an ignored signal stays ignored in the command too, as it should.
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status 2>/dev/null)
ignored() { # ignored SIGNUM: 0 where the signal is ignored here
	[ -n "$ign" ] && [ $(( 0x$ign >> ($1 - 1) & 1 )) -eq 1 ]
}
for sig in TERM HUP; do
	num=15
	[ "$sig" = HUP ] && num=1
	if ignored $num; then
		for what in "gnuplot was running" "the process died of the signal" "no rendering folder left in the output"; do
			n=$((n + 1))
			echo "ok $n # SKIP SIG$sig: $what (the signal is ignored in this environment, e.g. under nohup)"
		done
		continue
	fi
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

# A verify killed with SIGKILL leaves its staging folder in $TMPDIR.
mkdir vt
run "$WZPLAN" size --archive v.sqlite --users 64 --formats fp8-mix --duration 20000 --warmup 10 -q
expect_rc 0 "a run long enough to verify"
id=$(printf '%s\n' "$err" | sed -n 's/^Run \([0-9]*\) archived.*/\1/p')
TMPDIR="$tmp/vt" "$WZPLAN" verify "$id" --archive v.sqlite >/dev/null 2>&1 &
pid=$!
i=0
while [ -z "$(ls vt)" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -s KILL $pid
wait $pid
left=$(ls vt)
[ -n "$left" ]; ok $? "SIGKILL: verify's staging folder stays behind ($left)"
# Others beside it: one held by a running process, one changed just now,
# a link to a folder elsewhere, a folder of another name; all old but one.
mkdir vt/wzplan-verify.tmpHELD01 vt/wzplan-verify.tmpFRESH1 vt/wzplan-verify.tmpOLDER0 \
      vt/wzplan-verify.notours elsewhere
touch elsewhere/keep vt/wzplan-verify.tmpHELD01/keep vt/wzplan-verify.notours/keep
ln -s "$tmp/elsewhere" vt/wzplan-verify.tmpLINK01
touch -h -d '2 minutes ago' vt/* vt/wzplan-verify.tmpHELD01 vt/wzplan-verify.notours
touch vt/wzplan-verify.tmpFRESH1
flock vt/wzplan-verify.tmpHELD01 sleep 60 &
holder=$!
sleep 0.3
run env TMPDIR="$tmp/vt" "$WZPLAN" verify "$id" --archive v.sqlite
expect_rc 0 "the next verify runs"
[ ! -e "vt/$left" ]; ok $? "the killed run's folder is removed by the next run"
[ -e vt/wzplan-verify.tmpHELD01/keep ]; ok $? "a folder another process holds is kept"
[ -d vt/wzplan-verify.tmpFRESH1 ]; ok $? "a folder changed within the minute is kept"
[ -L vt/wzplan-verify.tmpLINK01 ] && [ -e elsewhere/keep ]; ok $? "a link and its target are kept"
[ -e vt/wzplan-verify.notours/keep ]; ok $? "a folder of another name is kept"
[ ! -e vt/wzplan-verify.tmpOLDER0 ] && [ "$(ls vt | grep -c tmp)" -eq 3 ]; ok $? "an old empty one is removed too, and the second run leaves none"
kill $holder 2>/dev/null
wait $holder 2>/dev/null
cd / && done_testing
