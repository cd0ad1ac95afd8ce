#!/bin/sh
# codec measure (issue 10, item 5): the same bytes on 1 and 2 threads,
# per-layer rows, CSV and JSON holding every figure the archive stores, no
# iso figures without --iso, and the iso sweep archived.
. "$top_srcdir/tests/cli/lib.sh"

small="--layers 2 --tokens 256 --queries 4 --heads 4 --quiet"
run $WZPLAN trace synth-cache --family mla-b --seed 5 $small --calibration 1 --test 2 --out "$tmp/t"
expect_rc 0 "synthetic traces"
run $WZPLAN codec prepare --trace "$tmp/t/mla-b-cal-0.safetensors" --out "$tmp/p.wzp"
expect_rc 0 "a profile"
tests="$tmp/t/mla-b-test-0.safetensors $tmp/t/mla-b-test-1.safetensors"
m="$WZPLAN codec measure --trace $tests --profile $tmp/p.wzp --boot 30"
all="fp8-mix,int4-g64,nvfp4,wz-4.97,wz-5.44,wzx-5.4"

# The same results on one thread and on two: every output, and the archive.
for j in 1 2; do
	for f in csv json text; do
		run $m --formats "$all" --iso --per-layer --threads $j --format $f --no-archive -o "$tmp/m$j.$f"
		expect_rc 0 "measure --threads $j --format $f"
	done
	run $m --formats "$all" --iso --threads $j --archive "$tmp/a$j.sqlite"
	expect_rc 0 "measure --threads $j into an archive"
	run $WZPLAN archive export 1 --archive "$tmp/a$j.sqlite" --format json
	printf '%s' "$out" > "$tmp/a$j.json"
done
for f in csv json text; do
	cmp -s "$tmp/m1.$f" "$tmp/m2.$f"; ok $? "$f: byte-identical on 1 and 2 threads"
done
python3 - "$tmp/a1.json" "$tmp/a2.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["codec_measurements"] for p in sys.argv[1:])
sys.exit(0 if a == b and len(a) > 0 else 1)
PY
ok $? "the archived measurements are identical on 1 and 2 threads"
run $m --formats fp8-mix --threads 0 --no-archive
expect_rc 2 "--threads 0 is refused"

# A profile that caps the position part: the bound under that cap beside
# the plain one (never below it), and its columns only then.  A window of
# more tokens than values, so that the bound is not that of a rank-short
# covariance.
run $WZPLAN trace synth-cache --family mla-b --seed 5 --layers 1 --tokens 1024 --queries 0 --quiet --calibration 1 --test 2 --out "$tmp/c"
expect_rc 0 "1,024-token traces"
run $WZPLAN codec prepare --trace "$tmp/c/mla-b-cal-0.safetensors" --position-cap int8 --out "$tmp/pc.wzp"
expect_rc 0 "a profile with the position cap"
run $WZPLAN codec measure --trace "$tmp/c/mla-b-test-0.safetensors" "$tmp/c/mla-b-test-1.safetensors" --profile "$tmp/pc.wzp" --boot 30 --formats fp8-mix,wz-5.44 --format csv --no-archive
expect_rc 0 "measure with the capped profile"
printf '%s\n' "$out" > "$tmp/capped.csv"
python3 - "$tmp/capped.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
ok = len(rows) == 4
for r in rows:
    g, c = float(r["bound_gap_db"]), float(r["bound_capped_gap_db"])
    b, bc = float(r["nmse_bound"]), float(r["nmse_bound_capped"]) if r.get("nmse_bound_capped") else float("nan")
    ok &= c <= g + 1e-9
    if r["format"] == "wz-5.44":
        ok &= c < g  # the int8 cap binds at 5.44 bits
print("#", [(r["format"], r["bound_gap_db"], r["bound_capped_gap_db"]) for r in rows])
sys.exit(0 if ok else 1)
PY
ok $? "the capped bound: at most the gap to the plain bound, below it where the cap binds"
run $m --formats wz-5.44 --format csv --no-archive
contains_not() { case "$1" in *"$2"*) ok 1 "$3" ;; *) ok 0 "$3" ;; esac; }
contains_not "$out" "bound_capped_gap_db" "no capped columns without a cap"

# Per-layer rows: every layer of every window and format, after the
# window's row; the window's KL is the mean of its layers'.
python3 - "$tmp/m1.json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r["kind"] == "measured"]
bad = []
keys = sorted({(r["window"], r["format"]) for r in rows})
if len(keys) != 2 * 6:
    bad.append("%d (window, format) pairs" % len(keys))
for w, f in keys:
    rs = [r for r in rows if r["window"] == w and r["format"] == f]
    if [r["layer"] for r in rs] != ["all", 0, 1]:
        bad.append("%s %s layers %s" % (w, f, [r["layer"] for r in rs]))
        continue
    kl = (rs[1]["kl"] + rs[2]["kl"]) / 2
    if abs(kl - rs[0]["kl"]) > 1e-12 * rs[0]["kl"]:
        bad.append("%s %s: KL %g is not the mean of its layers' %g" % (w, f, rs[0]["kl"], kl))
    for r in rs[1:]:
        if r["bound_gap_db"] is None or r["nmse_bound"] is None or r["nmse"] is None:
            bad.append("%s %s layer %s without nmse or bound" % (w, f, r["layer"]))
    if f != "fp8-mix" and rs[1]["nmse_vs_fp8"] is None:
        bad.append("%s %s: no per-layer ratio to fp8-mix" % (w, f))
    if f in ("int4-g64", "nvfp4") and rs[2]["iso_bits_nmse"] is None:
        bad.append("%s %s: no per-layer iso bits" % (w, f))
for b in bad:
    print("#", b)
sys.exit(1 if bad else 0)
PY
ok $? "--per-layer: a row per layer with its ratios, bound and iso bits"
contains "$(cat "$tmp/m1.text")" "Layer" "the text table has a layer column"

# CSV and JSON hold every figure the archive stores, interval included,
# and the censoring of the iso rate; the sweep's rows are there too.
head -1 "$tmp/m1.csv" > "$tmp/header"
for c in nmse_latent_lo nmse_rope_hi out_err_lo sqnr_db_lo queries_better nmse_bound \
	iso_censored_nmse iso_censored_kl fewer_bits_nmse_lo fewer_bits_kl fewer_bits_kl_hi kind; do
	grep -q "\(^\|,\)$c\(,\|\$\)" "$tmp/header"; ok $? "CSV column $c"
done
python3 - "$tmp/a1.json" "$tmp/m1.json" <<'PY'
import json, math, sys
arch = json.load(open(sys.argv[1]))["codec_measurements"]
rows = {(r["window"], r["format"]): r for r in json.load(open(sys.argv[2]))["rows"]
        if r["layer"] == "all"}
bad, seen = [], 0
def close(x, y):
    return x is not None and y is not None and abs(x - y) <= 1e-9 * max(abs(x), abs(y), 1e-300)
for m in arch:
    r = rows.get((m["window"], m["format"]))
    if r is None:
        bad.append("no JSON row for %s %s" % (m["window"], m["format"]))
        continue
    name = m["metric"]
    if name.startswith("sweep_"):
        name = name[len("sweep_"):]
        if r["kind"] != "iso sweep":
            bad.append("sweep row %s is not marked" % m["format"])
    if name.startswith("iso_censored_"):
        if r[name] != 1:
            bad.append("%s %s censored in the archive, %s in JSON" % (m["window"], m["format"], r[name]))
        continue
    seen += 1
    if not close(r.get(name), m["value"]):
        bad.append("%s %s %s: archive %s, JSON %s" % (m["window"], m["format"], name, m["value"], r.get(name)))
    for end, key in (("ci_low", "_lo"), ("ci_high", "_hi")):
        if m.get(end) is not None and not close(r.get(name + key), m[end]):
            bad.append("%s %s %s%s: archive %s, JSON %s" % (m["window"], m["format"], name, key, m[end], r.get(name + key)))
# a mark in JSON is one in the archive
for (w, f), r in rows.items():
    for k in ("nmse", "kl"):
        c = r.get("iso_censored_" + k)
        if c == 1 and not any(m["metric"] == "iso_censored_" + k and m["window"] == w and m["format"] == f for m in arch):
            bad.append("%s %s censored in JSON only" % (w, f))
        if c not in (None, 0, 1):
            bad.append("%s %s censoring %s" % (w, f, c))
for b in bad[:10]:
    print("#", b)
print("# %d archived figures compared" % seen)
sys.exit(1 if bad or seen < 100 else 0)
PY
ok $? "every archived figure and interval is in the JSON output, the same"

# The iso sweep in the archive: each rate's nmse and KL with intervals and
# the bound at its rate; iso figures only for formats other than wz.
python3 - "$tmp/a1.json" <<'PY'
import json, sys
arch = json.load(open(sys.argv[1]))["codec_measurements"]
bad = []
rates = ["wz-%g" % r for r in (2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8, 8.5, 9, 10, 11, 12)]
for w in ("mla-b-test-0", "mla-b-test-1"):
    for f in rates:
        got = {m["metric"] for m in arch if m["window"] == w and m["format"] == f}
        if got != {"sweep_nmse", "sweep_kl", "nmse_bound"}:
            bad.append("%s %s: %s" % (w, f, sorted(got)))
    for m in arch:
        if m["window"] == w and m["format"].startswith("wz") and m["metric"].startswith(("iso", "fewer")):
            bad.append("%s %s has %s" % (w, m["format"], m["metric"]))
    for f in ("fp8-mix", "int4-g64", "nvfp4"):
        got = {m["metric"] for m in arch if m["window"] == w and m["format"] == f}
        for need in ("iso_bits_nmse", "iso_bits_kl", "fewer_bits_nmse", "fewer_bits_kl"):
            if need not in got:
                bad.append("%s %s lacks %s" % (w, f, need))
for b in bad[:10]:
    print("#", b)
sys.exit(1 if bad else 0)
PY
ok $? "--iso archives the sweep (each rate's nmse, KL and bound) and iso figures of the baselines"

# Without --iso: no iso figures at all, in the table or the archive.
run $m --formats fp8-mix,int4-g64,wz-5.44 --archive "$tmp/n.sqlite" --format csv
expect_rc 0 "measure without --iso"
printf '%s\n' "$out" | head -1 | grep -q "iso\|fewer"; [ $? -ne 0 ]; ok $? "no iso columns without --iso"
run $WZPLAN archive export 1 --archive "$tmp/n.sqlite" --format json
printf '%s' "$out" > "$tmp/n.json"
python3 - "$tmp/n.json" <<'PY'
import json, sys
arch = json.load(open(sys.argv[1]))["codec_measurements"]
fake = [(m["format"], m["metric"], m["value"]) for m in arch
        if m["metric"].startswith(("iso", "fewer", "sweep"))]
for f in fake[:5]:
    print("#", f)
sys.exit(1 if fake or not arch else 0)
PY
ok $? "without --iso the archive holds no iso figures (no 0 bits, no infinite savings)"
# A listed wz rate that is also one of the sweep's: both rows archived (the
# bound once, from the measured row), not a refused run.
run $m --formats fp8-mix,wz-5.5 --iso --archive "$tmp/s.sqlite" --format csv
expect_rc 0 "measure --iso with wz-5.5, a sweep rate, listed"
run $WZPLAN archive export 1 --archive "$tmp/s.sqlite" --format json
printf '%s' "$out" > "$tmp/s.json"
python3 - "$tmp/s.json" <<'PY'
import json, sys
arch = json.load(open(sys.argv[1]))["codec_measurements"]
got = {m["metric"] for m in arch if m["window"] == "mla-b-test-0" and m["format"] == "wz-5.5"}
need = {"nmse", "kl", "sweep_nmse", "sweep_kl", "nmse_bound"}
print("#", sorted(got))
sys.exit(0 if need <= got else 1)
PY
ok $? "the listed rate has its measured figures and its sweep figures"
run $m --formats wz-5.44,fp8-mix,wz-5.44
expect_rc 2 "a format listed twice"
contains "$err" "wz-5.44 is listed twice" "and the message names it"

# kvtc-<bits>: its transforms fitted on --calibration windows, refused
# without them and on a test window.
run $m --formats kvtc-5 --no-archive
expect_rc 2 "kvtc without --calibration"
contains "$err" "--calibration" "and the message says what it needs"
run $m --formats kvtc-5 --calibration "$tmp/t/mla-b-test-0.safetensors" --no-archive
expect_rc 2 "kvtc fitted on a test window is refused"
run $m --formats fp8-mix,kvtc-5 --calibration "$tmp/t/mla-b-cal-0.safetensors" --format csv --no-archive -o "$tmp/k.csv"
expect_rc 0 "kvtc-5 measured with --calibration"
grep -q "kvtc-5" "$tmp/k.csv"; ok $? "its rows in the CSV"
done_testing
