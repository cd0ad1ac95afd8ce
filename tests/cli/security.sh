#!/bin/sh
# Inputs are untrusted: no command runs through a chart, verify writes only
# in its staging folder, and no output replaces a symbolic link or a file
# that is not a regular one (wzplan(1), SECURITY).
. "$top_srcdir/tests/cli/lib.sh"
unset WZ_GNUPLOT
A="$tmp/a.sqlite"
cd "$tmp" || exit 1

# 1. Names that would run a command in gnuplot are refused where the
# catalog is read, with file, line and field.
mkdir c && cp "$top_srcdir"/data/*.csv c/
sed -i 's/^DeepSeek-V3,/X`touch owned_catalog`,/' c/models.csv
line=$(grep -n '^X`' c/models.csv | cut -d: -f1)
run "$WZPLAN" propose --catalog c --model 'X`touch owned_catalog`' --archive "$A" --out o1 -q
expect_rc 2 "a backquote in a catalog name is bad input"
contains "$err" "c/models.csv:$line: field name" "the message names file, line and field"
[ ! -e owned_catalog ]; ok $? "no witness file from the catalog name"

# ... and a name planted in an archive (which is also input) reaches the
# chart scripts only as inert text: `plot` draws it and runs nothing.
run "$WZPLAN" propose --archive "$A" --out o2 -q
expect_rc 0 "a proposal to tamper with"
sqlite3 "$A" "UPDATE figures SET text = 'X\`touch owned_plot\`'' . system(\"touch owned_sys\") . ''
system(\"touch owned_nl\"); \" \\' WHERE tbl = 'scenario' AND col IN ('model', 'gpu')"
[ "$(sqlite3 "$A" "SELECT count(*) FROM figures WHERE text LIKE '%owned_plot%'")" -ge 1 ]
ok $? "the archive now holds the hostile name"
run "$WZPLAN" plot 1 --archive "$A" --out p
if command -v gnuplot >/dev/null 2>&1; then
	expect_rc 0 "plot draws the tampered run"
	[ -s p/cost.png ]; ok $? "and the chart is rendered"
else
	n=$((n + 1)); echo "ok $n # SKIP gnuplot is not installed"
	n=$((n + 1)); echo "ok $n # SKIP gnuplot is not installed"
fi
[ ! -e owned_plot ] && [ ! -e p/owned_plot ] && [ ! -e owned_sys ] && [ ! -e p/owned_sys ] &&
	[ ! -e owned_nl ] && [ ! -e p/owned_nl ]
ok $? "no witness file from the archived name"

# 2. verify stages inputs under names it makes itself: an archived name is
# never a path.
run "$WZPLAN" propose --archive v.db --out o3 -q
expect_rc 0 "a run to verify"
mkdir -p stage/deep
sqlite3 v.db "INSERT INTO inputs VALUES (1, 'catalog', '../../owned_verify', '/nonexistent', NULL, 6, 'x')"
run env TMPDIR="$tmp/stage/deep" "$WZPLAN" verify 1 --archive v.db
expect_rc 2 "an input name that is not one wzplan records is bad input"
contains "$err" "../../owned_verify" "the message names it"
[ ! -e owned_verify ] && [ ! -e stage/owned_verify ] && [ ! -e stage/deep/owned_verify ] &&
	[ -z "$(find "$tmp" -name owned_verify)" ]
ok $? "nothing written outside the staging folder"
[ -z "$(ls stage/deep)" ]; ok $? "and the staging folder is removed"

# 3. --out and --output never replace a symbolic link or a non-regular file.
echo keep > target
ln -s target link.csv
run "$WZPLAN" cost --output link.csv --format csv
expect_rc 2 "--output onto a symbolic link is refused"
contains "$err" "link.csv: is a symbolic link" "the message says why"
[ -L link.csv ] && [ "$(cat target)" = keep ]; ok $? "the link and its target are untouched"
# (A FIFO of our own stands for a device: a test must never risk /dev/null.)
mkfifo pipe
run "$WZPLAN" cost --output pipe --format csv
expect_rc 2 "--output onto a FIFO (not a regular file) is refused"
[ -p pipe ]; ok $? "the FIFO is still a FIFO"
mkdir realdir
ln -s realdir linkdir
run "$WZPLAN" propose --archive "$A" --out linkdir -q
expect_rc 2 "--out onto a symbolic link to a folder is refused"
[ -z "$(ls realdir)" ] && [ -L linkdir ]; ok $? "nothing written through the link"
mkdir o4 && ln -s ../target o4/proposal.md
run "$WZPLAN" propose --archive "$A" --out o4 -q
expect_rc 2 "a symbolic link in the output folder is not replaced"
[ -L o4/proposal.md ] && [ "$(cat target)" = keep ] && [ ! -e o4/summary.csv ] && [ ! -d o4/charts ]
ok $? "and nothing was published (the folder is as it was)"
ls -d o4.tmp* >/dev/null 2>&1; [ $? -ne 0 ]; ok $? "no staging folder left behind"
run "$WZPLAN" plot 1 --archive "$A" --out linkdir
expect_rc 2 "plot --out onto a symbolic link is refused"
run "$WZPLAN" trace synth-cache --family iid --calibration 1 --test 0 --out linkdir
expect_rc 2 "trace synth-cache --out onto a symbolic link is refused"
[ -z "$(ls realdir)" ]; ok $? "nothing written through the link by either"
run "$WZPLAN" cost --output plain.csv --format csv
expect_rc 0 "a new regular file is fine"
run "$WZPLAN" cost --output plain.csv --format csv
expect_rc 0 "and so is replacing one"
# 4. Names in an archive reach the terminal inert: an escape sequence (ESC,
# a C1 CSI, a bell) in a stored name is shown as \xHH, never sent.
run "$WZPLAN" size --archive e.db --users 64 --formats fp8-mix --duration 120 --warmup 10 -q
expect_rc 0 "a run to tamper with"
sqlite3 e.db "UPDATE runs SET command = 'size' || char(27) || ']0;owned' || char(7) || char(155) || '2J' WHERE id = 1"
run "$WZPLAN" archive list --archive e.db
expect_rc 0 "archive list of the tampered run"
esc=$(printf '\033')
bel=$(printf '\007')
case "$out" in *"$esc"*|*"$bel"*) false ;; *) true ;; esac; ok $? "no ESC or BEL byte reaches standard output"
contains "$out" 'size\x1b]0;owned\x07\u009b2J' "the name is shown with its control characters escaped"
# 5. Paths an archive records are read only inside the archive's folder
# and the current one: a foreign archive naming /etc/passwd as a run's
# scenario, or /dev/zero as its traffic, has verify read neither (it says
# so, uses the recorded text, and does not hang).
mkdir -p far/away here
run "$WZPLAN" propose --archive far/away/f.db --out far/away/o -q
expect_rc 0 "a run in an archive of someone else's"
sqlite3 far/away/f.db "UPDATE inputs SET origin = '/etc/passwd' WHERE kind = 'scenario'"
(cd here && run timeout 60 "$WZPLAN" verify 1 --archive ../far/away/f.db
 printf '%s\n%s\n' "$rc" "$out" > ../verify.out)
out=$(tail -n +2 verify.out)
contains "$out" "/etc/passwd is outside the archive's folder and the current folder, so not read" \
	"verify does not read a recorded path outside them"
case "$out" in *"/etc/passwd changed"*) false ;; *) true ;; esac; ok $? "and prints no hash of it"
run "$WZPLAN" size --archive far/away/t.db --users 64 --formats fp8-mix --duration 120 --warmup 10 -q
sqlite3 far/away/t.db "INSERT INTO inputs VALUES (1, 'trace', 'traffic', '/dev/zero', '0', 0, NULL)"
run timeout 60 "$WZPLAN" verify 1 --archive far/away/t.db
[ "$rc" -ne 124 ]; ok $? "verify of a run whose traffic is /dev/zero ends (exit $rc)"
cd / && done_testing
