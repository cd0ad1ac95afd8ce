#!/bin/sh
# Codec measurements in the archive: `codec measure --archive` stores every
# row, `plot` draws the rate-distortion chart, `propose --trace --profile`
# writes the measured-quality section with provenance, `verify` reproduces
# both and names a changed trace, and a calibration window is refused.
. "$top_srcdir/tests/cli/lib.sh"
A="$tmp/a.sqlite"

small="--layers 1 --tokens 256 --queries 4 --heads 4 --quiet"
run $WZPLAN trace synth-cache --family mla-b --seed 3 $small --calibration 1 --test 1 --out "$tmp/t"
expect_rc 0 "synthetic traces"
cal="$tmp/t/mla-b-cal-0.safetensors"
test="$tmp/t/mla-b-test-0.safetensors"
run $WZPLAN codec prepare --trace "$cal" --out "$tmp/p.wzp"
expect_rc 0 "a profile from the calibration window"

# measure --archive: the run id on stderr, every row in the archive.
run $WZPLAN codec measure --trace "$test" --profile "$tmp/p.wzp" \
	--formats fp8-mix,int4-g64,wz-4.97,wz-5.44,wz-6.31 --iso --boot 40 --archive "$A"
expect_rc 0 "measure --archive"
contains "$err" "Run 1 archived in" "the run id on standard error"
contains "$out" "wz-5.44" "the table is still printed"
run $WZPLAN archive export 1 --archive "$A" --format json
expect_rc 0 "export the codec run"
printf '%s' "$out" > "$tmp/run1.json"
j=$(python3 - "$tmp/run1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for m in d["codec_measurements"]:
    ci = "ci" if m.get("ci_low") is not None else "noci"
    print("row", m["window"], m["format"], m["metric"], ci, "%.2f" % m["bits_per_value"])
for i in d["inputs"]:
    print("input", i["kind"], i.get("hash") or "-")
PY
)
contains "$j" "row mla-b-test-0 wz-5.44 nmse ci 5.43" "an nmse row of wz-5.44 with its interval and bits"
contains "$j" "row mla-b-test-0 wz-5.44 kl ci" "attention KL rows"
contains "$j" "row mla-b-test-0 wz-5.44 nmse_latent ci" "nmse of the latent"
contains "$j" "row mla-b-test-0 wz-5.44 nmse_rope ci" "nmse of the position part"
contains "$j" "row mla-b-test-0 wz-5.44 sqnr_db ci" "SQNR"
contains "$j" "row mla-b-test-0 wz-5.44 out_err ci" "attention-output error"
contains "$j" "row mla-b-test-0 wz-5.44 nmse_vs_fp8 ci" "ratios against fp8-mix"
contains "$j" "row mla-b-test-0 wz-5.44 tokens_better" "share of tokens better"
contains "$j" "row mla-b-test-0 wz-5.44 bound_gap_db" "dB from the bound"
contains "$j" "row mla-b-test-0 fp8-mix iso_bits_nmse ci 8.06" "iso-quality bits against fp8-mix"
contains "$j" "row mla-b-test-0 int4-g64 fewer_bits_nmse ci" "fewer bits against int4-g64"
contains "$j" "row mla-b-test-0 wz-6.31 nmse_bound noci 6.31" "the bound at each wz rate"
contains "$j" "input profile " "the profile is an input"
hash=$(printf '%s\n' "$j" | sed -n 's/^input trace \([0-9a-f]\{16\}\)$/\1/p')
[ -n "$hash" ]; ok $? "the trace's hash is an input"
run $WZPLAN archive export 1 --archive "$A"
contains "$out" "codec_window,mla-b-test-0,split,,test" "the window's split is a figure"
run $WZPLAN codec measure --trace "$test" --formats fp8-mix --boot 10 --no-archive
expect_rc 0 "measure --no-archive"
printf '%s' "$err" | grep -q "archived"; [ $? -ne 0 ]; ok $? "--no-archive: no run id"
run $WZPLAN archive list --archive "$A" --format csv
[ "$(printf '%s\n' "$out" | grep -c ',codec,')" -eq 1 ]; ok $? "--no-archive stored nothing"
run $WZPLAN codec measure --trace "$test" --formats fp8-mix --archive "$A" --no-archive
expect_rc 2 "--archive and --no-archive together"

# plot: the rate-distortion chart of the codec run.
run env WZ_GNUPLOT=none $WZPLAN plot 1 --archive "$A" --out "$tmp/pl"
expect_rc 0 "plot a codec run"
gp=$(cat "$tmp/pl/quality.gp")
contains "$gp" "set logscale y" "error on a log scale"
contains "$gp" "set xlabel 'Bits per value (counted from the bytes written)'" "x axis with its unit"
contains "$gp" "title 'fp8-mix'" "fp8-mix"
contains "$gp" "title 'int4-g64'" "int4-g64"
contains "$gp" "title 'wz (rates measured)'" "the wz curve"
contains "$gp" "title 'Gaussian bound (reverse water-filling)'" "the bound"
contains "$gp" "with yerrorlines" "confidence intervals"
contains "$gp" "SYNTHETIC" "synthetic data said so"
dat=$(cat "$tmp/pl/quality.dat")
contains "$dat" '"wz-5.44"	5.43' "wz-5.44 at its written bits/value"
[ -s "$tmp/pl/quality_kl.gp" ]; ok $? "the attention-KL chart"

# propose --trace --profile: measured quality with provenance.
run $WZPLAN propose --trace "$test" --profile "$tmp/p.wzp" --archive "$A" --out "$tmp/prop"
expect_rc 0 "propose with a measurement"
contains "$out" "Run 2 archived" "the propose run"
md=$(cat "$tmp/prop/proposal.md")
contains "$md" "## Measured quality" "the quality section"
contains "$md" "SYNTHETIC DATA" "synthetic, loudly"
contains "$md" "$hash" "the trace's hash"
contains "$md" "mla-b-test-0.safetensors" "the trace's name"
contains "$md" "wz profile: \`p.wzp\` (XXH3" "the profile's hash"
contains "$md" "| mla-b-test-0 | wz-5.44 | 5.43 |" "wz-5.44 at its written bits/value"
contains "$md" "Fewer bits at equal quality" "iso-quality bits"
contains "$md" "| mla-b-test-0 | fp8-mix | 8.06 | 5." "wz bits at fp8-mix quality"
contains "$md" "wz at measured iso-quality (" "the cost row at the measured rate"
contains "$md" "charts/quality.png" "the rate-distortion chart"
contains "$(cat "$tmp/prop/quality.csv")" '"mla-b-test-0","wz-5.44",nmse,' "quality.csv holds every codec row"
printf '%s\n' "$md" | grep -Eq '\| wz-5\.44 \| 5\.43 \| 0\.[0-9]+ \[0\.[0-9]+, 0\.[0-9]+\]'
ok $? "nmse with its interval"

# verify: same seed, same figures; a changed trace is named.
run $WZPLAN verify 2 --archive "$A"
expect_rc 0 "verify reproduces the propose run"
contains "$out" "codec measurements reproduced exactly" "codec rows too"
run $WZPLAN verify 1 --archive "$A"
expect_rc 0 "verify reproduces the codec run"
# ...from the request it stored, and, stored before requests were (its
# arguments only), from its arguments.
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM inputs WHERE run=1 AND kind=\"request\""); c.commit()' "$A"
run $WZPLAN verify 1 --archive "$A"
expect_rc 0 "verify reproduces a codec run from its arguments"
contains "$out" "codec measurements reproduced exactly" "every row"
cp "$test" "$tmp/keep.safetensors"
run $WZPLAN trace synth-cache --family mla-b --seed 4 $small --calibration 0 --test 1 --model synthetic-mla-b-seed3 --out "$tmp/o"
cp "$tmp/o/mla-b-test-0.safetensors" "$test"
run $WZPLAN verify 2 --archive "$A"
expect_rc 1 "verify after the trace changed"
contains "$out" "trace mla-b-test-0.safetensors: $test changed (recorded XXH3 $hash" "names the trace by its hash"
cp "$tmp/keep.safetensors" "$test"

# A calibration window given for measurement: refused, nothing written.
run $WZPLAN propose --trace "$cal" --profile "$tmp/p.wzp" --archive "$A" --out "$tmp/bad"
expect_rc 2 "propose refuses a calibration window"
contains "$err" "is a 'calibration' window" "and says why"
[ ! -e "$tmp/bad" ]; ok $? "nothing written"
run $WZPLAN archive list --archive "$A" --format csv
[ "$(printf '%s\n' "$out" | grep -c ',propose,')" -eq 1 ]; ok $? "nothing archived"

# Without a trace: no archived measurement is picked up silently.
run env WZ_GNUPLOT=none $WZPLAN propose --archive "$A" --out "$tmp/plain"
md=$(cat "$tmp/plain/proposal.md")
printf '%s\n' "$md" | grep -q "## Measured quality"; [ $? -ne 0 ]; ok $? "no quality section without a trace"
contains "$md" "no cache trace was given" "quality not measured, and said so"
contains "$md" "wzplan trace synth-cache" "how to measure it"
done_testing
