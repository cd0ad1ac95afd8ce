#!/bin/sh
# wzplan sweep report: every table's figures checked against the archived
# runs they name (the run of each point, the median, minimum and maximum
# of each pair of axis values, each charted value), the cost-quality front
# against a codec run, and the refusals.
. "$top_srcdir/tests/cli/lib.sh"
export WZ_GNUPLOT=none
W="$WZPLAN"
S="$tmp/r.sweep"
cat > "$S" <<'END'
# 12 points: 2 GPUs x 3 user counts x 2 contexts, three formats each
sweep = report-test
set.price_set = catalog
set.mode = memory
set.formats = fp8-mix, int4-g64, wz-5.44
axis.gpu = H100 SXM 80GB | H200 SXM
axis.users = 1000 .. 3000 step 1000
axis.context = 16k | 64k
END
run "$W" sweep "$S" --jobs 2 --archive "$tmp/a.sqlite" -q
expect_rc 0 "the sweep runs"
small="--layers 2 --tokens 256 --queries 4 --heads 4 --quiet"
"$W" trace synth-cache --family mla-b --seed 3 $small --calibration 1 --test 1 --out "$tmp/t" &&
"$W" codec prepare --trace "$tmp/t/mla-b-cal-0.safetensors" --out "$tmp/p.wzp" --rate 5.44 >/dev/null 2>&1 &&
"$W" codec measure --trace "$tmp/t/mla-b-test-0.safetensors" --profile "$tmp/p.wzp" \
	--formats fp8-mix,int4-g64,wz-5.44 --boot 20 --archive "$tmp/c.sqlite" >/dev/null 2>&1
ok $? "a codec run of the sweep's formats"

run "$W" sweep report "$S" --archive "$tmp/a.sqlite" --out "$tmp/rep" --codec-run 1 \
	--codec-archive "$tmp/c.sqlite"
expect_rc 0 "sweep report"
contains "$err" "7 tables, 11 charts" "points, three pairs, two chart tables, the front; 6 + 4 + 1 charts"
for f in points pair-gpu-users pair-gpu-context pair-users-context cost-context gpus-users front; do
	[ -s "$tmp/rep/$f.csv" ]; ok $? "$f.csv written"
done
[ -s "$tmp/rep/cost-context-6.gp" ] && [ ! -e "$tmp/rep/cost-context-7.gp" ] && [ -s "$tmp/rep/gpus-users-4.dat" ] && [ -s "$tmp/rep/front.gp" ]
ok $? "the charts' gnuplot files"
contains "$(cat "$tmp/rep/report.md")" "Cost-quality front across formats" "report.md holds the tables"

# Each figure against the run it names.
python3 - "$tmp/a.sqlite" "$tmp/rep" "$tmp/c.sqlite" <<'PY'
import csv, sqlite3, sys
db, rep, cdb = sqlite3.connect(sys.argv[1]), sys.argv[2], sqlite3.connect(sys.argv[3])
def fig(run, table, row, col):
    r = db.execute("SELECT value FROM figures WHERE run=? AND tbl=? AND row_key=? AND col=?",
                   (run, table, row, col)).fetchone()
    return None if r is None else r[0]
def params(run):
    t = db.execute("SELECT content FROM inputs WHERE run=? AND kind='sweep' AND name='params'",
                   (run,)).fetchone()[0]
    return dict(l.split(" = ", 1) for l in t.splitlines())
bad = []
def check(cond, what):
    if not cond:
        bad.append(what)
rows = list(csv.DictReader(open(rep + "/points.csv")))
check(len(rows) == 12, "12 points")
for r in rows:
    pid = db.execute("SELECT content FROM inputs WHERE run=? AND kind='sweep' AND name='point'",
                     (int(r["run"]),)).fetchone()[0]
    check(pid == r["point_id"], "point %s: run %s is the point's" % (r["point"], r["run"]))
    check(params(int(r["run"]))["index"] == r["point"], "point %s: index" % r["point"])
cost = lambda run, f: fig(run, "cost", f, "memory_reserved_usd_year")
n = 0
for pair in ("gpu-users", "gpu-context", "users-context"):
    a, b = pair.split("-")
    for r in csv.DictReader(open(rep + "/pair-%s.csv" % pair)):
        vals = []
        for k in ("median", "min", "max"):
            run = int(r["run_" + k])
            p = params(run)
            check(p[a] == r[a] and p[b] == r[b], "%s: run %d has %s and %s" % (pair, run, r[a], r[b]))
            check(abs(cost(run, r["format"]) - float(r["cost_" + k])) < 1e-9 * float(r["cost_" + k]),
                  "%s: run %d's cost" % (pair, run))
            vals.append(float(r["cost_" + k]))
        # min <= median <= max over all runs with these values
        allv = sorted(cost(int(x["run"]), r["format"]) for x in rows
                      if params(int(x["run"]))[a] == r[a] and params(int(x["run"]))[b] == r[b])
        check(int(r["points"]) == len(allv), "%s: points counted" % pair)
        check(vals[1] == allv[0] and vals[2] == allv[-1] and vals[0] == allv[(len(allv) - 1) // 2],
              "%s %s %s %s: min, median and max of the runs" % (pair, r[a], r[b], r["format"]))
        n += 1
check(n == 3 * (2 * 3 + 2 * 2 + 3 * 2), "one row per pair of values and format (%d)" % n)
for r in csv.DictReader(open(rep + "/cost-context.csv")):
    check(abs(cost(int(r["run"]), r["series"]) * 1e-6 - float(r["value"])) < 1e-12,
          "cost-context: run %s" % r["run"])
    ctx = params(int(r["run"]))["context"].replace("k", "000")
    check(ctx == r["context"], "cost-context: its context")
for r in csv.DictReader(open(rep + "/gpus-users.csv")):
    check(fig(int(r["run"]), "cost", r["series"], "memory_gpus") == float(r["value"]),
          "gpus-users: run %s" % r["run"])
front = list(csv.DictReader(open(rep + "/front.csv")))
check(len(front) == 3, "three formats on the front table")
for r in front:
    q = [v for (v,) in cdb.execute("SELECT value FROM codec_measurements WHERE format=? AND metric='nmse'",
                                   (r["format"],))]
    check(abs(sum(q) / len(q) - float(r["nmse"])) < 1e-12, "front: %s's nmse" % r["format"])
    run = int(r["run_median"])
    check(abs(cost(run, r["format"]) / cost(run, "fp8-mix") - float(r["cost_ratio_median"])) < 1e-12,
          "front: %s's cost ratio" % r["format"])
med = {r["format"]: (float(r["nmse"]), float(r["cost_ratio_median"])) for r in front}
for r in front:
    e, c = med[r["format"]]
    dominated = any(e2 <= e and c2 <= c and (e2 < e or c2 < c) for e2, c2 in med.values())
    check((r["pareto"] == "yes") == (not dominated), "front: %s's Pareto mark" % r["format"])
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
PY
ok $? "every table's figures are those of the runs it names"

run "$W" sweep report "$S" --archive "$tmp/a.sqlite" --out "$tmp/rep2"
expect_rc 0 "a report without codec measurements"
contains "$(cat "$tmp/rep2/report.md")" "front: no codec measurements given" "says the front is left out"
# A link standing at a chart's name in the output folder: refused, the
# link and its target as they were, no staging folder left.
chart=$(cd "$tmp/rep2" && find . -name '*.gp' | head -1)
mkdir -p "$tmp/rep5/$(dirname "$chart")"
echo keep > "$tmp/target"
ln -s "$tmp/target" "$tmp/rep5/$chart"
run "$W" sweep report "$S" --archive "$tmp/a.sqlite" --out "$tmp/rep5"
expect_rc 2 "sweep report --out with a link at a chart's name"
contains "$err" "is a symbolic link" "says a link is in the way"
[ -L "$tmp/rep5/$chart" ] && [ "$(cat "$tmp/target")" = keep ] && [ ! -e "$tmp/rep5/report.md" ] &&
	[ -z "$(ls -d "$tmp"/rep5.tmp* 2>/dev/null)" ]
ok $? "the link and its target as they were, nothing written, no staging folder left"
"$W" sweep "$S" --shard 1/2 --archive "$tmp/half.sqlite" -q
run "$W" sweep report "$S" --archive "$tmp/half.sqlite" --out "$tmp/rep3"
expect_rc 0 "a report of half the points"
contains "$err" "points are not in the archive" "says points are missing"
run "$W" sweep report "$S" --archive "$tmp/a.sqlite" --out "$tmp/rep4" --codec-run 1
expect_rc 2 "--codec-run naming a run without codec measurements"
run "$W" sweep points "$S" --codec-run 1
expect_rc 2 "--codec-run outside 'sweep report'"
done_testing
