#!/bin/sh
# The proposal's charts: drawn with gnuplot (PNG and SVG beside their data
# and scripts), left out with a clear note when gnuplot is missing, and the
# rate-distortion chart for the codec run a proposal names.
. "$top_srcdir/tests/cli/lib.sh"
unset WZPLAN_ARCHIVE WZ_GNUPLOT
A="$tmp/a.sqlite"

# Without gnuplot.
run env WZ_GNUPLOT=/nonexistent/gnuplot "$WZPLAN" propose --out "$tmp/n" --archive "$A"
expect_rc 0 "propose without gnuplot succeeds"
contains "$out" "Charts not drawn: gnuplot not found" "and says the charts were not drawn"
md=$(cat "$tmp/n/proposal.md")
contains "$md" "The charts were not drawn" "the proposal says so"
contains "$md" "charts/cost.gp" "and points at the scripts"
[ -s "$tmp/n/charts/cost.gp" ] && [ -s "$tmp/n/charts/memory.dat" ] && ! ls "$tmp/n/charts"/*.png >/dev/null 2>&1
ok $? "scripts and data written, no images"
gp=$(cat "$tmp/n/charts/cost.gp")
contains "$gp" "set ylabel 'GPU cost per year (million US\$)'" "cost chart: y axis with its unit"
contains "$gp" "set style histogram clustered" "cost chart: grouped bars"
contains "$gp" "title 'Reserved, scaling'" "cost chart: reserved series"
contains "$gp" "title 'On demand, memory accounting'" "cost chart: on-demand series"
contains "$(cat "$tmp/n/charts/memory.gp")" "set style histogram rowstacked" "memory chart: stacked"
contains "$(cat "$tmp/n/charts/memory.gp")" "title 'Cache in use'" "memory chart: cache in use"
contains "$(cat "$tmp/n/charts/gpus_by_context.gp")" "set logscale x 2" "GPUs against context: log context axis"
contains "$(cat "$tmp/n/charts/gpus_by_context.dat")" "\"100000\"	100	2512" "the scenario's context is a data row"
contains "$md" "no codec measurements" "the rate-distortion chart is left out and why"

if ! command -v gnuplot >/dev/null 2>&1; then
	n=$((n + 1)); echo "ok $n # SKIP gnuplot is not installed"
	done_testing; exit $?
fi

# With gnuplot.
run "$WZPLAN" propose --out "$tmp/p" --archive "$A"
expect_rc 0 "propose with gnuplot"
contains "$out" "Charts: 5" "five charts"
for c in cost savings gpus_by_context users_per_gpu memory; do
	[ -s "$tmp/p/charts/$c.png" ] && [ -s "$tmp/p/charts/$c.svg" ] && [ -s "$tmp/p/charts/$c.gp" ] && [ -s "$tmp/p/charts/$c.dat" ]
	ok $? "$c: PNG, SVG, data and script"
done
head -c 4 "$tmp/p/charts/cost.png" | grep -q PNG; ok $? "a real PNG"
contains "$(cat "$tmp/p/proposal.md")" "![Annual GPU cost per cache format" "the proposal embeds the charts"
ls "$tmp/p/charts"/*.log >/dev/null 2>&1; [ $? -ne 0 ]; ok $? "no gnuplot logs left behind"
(cd "$tmp/p/charts" && rm cost.png && gnuplot cost.gp) && [ -s "$tmp/p/charts/cost.png" ]
ok $? "a person can re-render from the script"

# An archived codec run named with --codec-run: the rate-distortion chart
# and the measured-quality section with provenance.  (An archived run that
# is not named is never used: run 1 above has no quality section.)
python3 - "$A" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO runs VALUES (100, 'codec measure', '[]', 'test', '2026-11-30T00:00:00Z', '2026-11-30T00:00:01Z', 'ok')")
rows = [("w1", "fp8-mix", 8.06, 2.0e-3), ("w1", "int4-g64", 4.92, 9.0e-3),
        ("w1", "wz-4.97", 4.97, 3.1e-3), ("w1", "wz-5.44", 5.44, 1.9e-3), ("w1", "wz-6.31", 6.31, 0.8e-3),
        ("w1", "wzt-4.97", 4.97, 2.0e-3), ("w1", "wzt-5.44", 5.44, 1.2e-3)]
for w, f, b, v in rows:
    c.execute("INSERT INTO codec_measurements VALUES (100, ?, ?, 'nmse', ?, ?, ?, ?, 'abcdef0123456789')",
              (w, f, v, v * 0.9, v * 1.1, b))
c.execute("INSERT INTO codec_measurements VALUES (100, 'w1', 'bound-5.44', 'nmse_bound', 1.0e-3, NULL, NULL, 5.44, NULL)")
c.commit()
PY
run "$WZPLAN" propose --out "$tmp/q" --archive "$A" --codec-run 100
expect_rc 0 "propose with an archived codec run"
contains "$out" "Charts: 6" "six charts"
[ -s "$tmp/q/charts/quality.png" ]; ok $? "the rate-distortion chart is drawn"
q=$(cat "$tmp/q/charts/quality.gp")
contains "$q" "with yerrorlines" "with confidence intervals"
contains "$q" "title 'wz (rates measured)'" "wz rates form one curve"
contains "$q" "title 'wzt (rates measured)'" "and so do wzt's"
contains "$q" "title 'int4-g64'" "a format of one rate is named as it is"
contains "$q" "title 'Gaussian bound (reverse water-filling)'" "with the bound"
md=$(cat "$tmp/q/proposal.md")
contains "$md" "## Measured quality" "the proposal reports measured quality"
contains "$md" "abcdef0123456789" "with the trace's hash as provenance"
run "$WZPLAN" plot 1 --archive "$A" --out "$tmp/replot"
expect_rc 0 "plot redraws an archived run"
cmp -s "$tmp/replot/cost.gp" "$tmp/n/charts/cost.gp"; ok $? "from the same figures, the same script"
done_testing
