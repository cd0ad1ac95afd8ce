#!/bin/sh
# The simulator with the archive and the proposal: `size` and `sim` store
# their runs (figures, latency and occupancy series, fleets), `plot` draws
# them, `verify` reproduces size runs and propose runs with a simulation,
# and `propose --simulate` / `--traffic` write the "Sized by simulation"
# section; a bad traffic table writes nothing.
. "$top_srcdir/tests/cli/lib.sh"
export WZ_GNUPLOT=none  # scripts only: rendering is tested in tests/plots
A="$tmp/a.sqlite"
small="--users 120 --context 32k --duration 300 --warmup 30 --formats fp8-mix,wz-5.44 -q"

run "$WZPLAN" size $small --archive "$A"
expect_rc 0 "size stores its run"
contains "$err" "Run 1 archived in $A" "size prints the run id"
contains "$out" "Fleets sized by simulation" "size still prints its table"
run "$WZPLAN" archive export 1 --archive "$A"
expect_rc 0 "export the size run"
contains "$out" "1,simulation,fp8-mix,replicas," "export has the sized fleet"
contains "$out" "1,simulation,wz-5.44,tpot_p99_s," "export has p99 TPOT per format"
contains "$out" "1,sim_setup,setup,seed,1," "export has the seed"
contains "$out" "1,sim_setup,setup,prefill_compute_efficiency,0.46999999999999997," "export has prefill's share of peak"
contains "$out" "1,sim_setup,setup,step_overhead_ms,5," "and the step overhead"
run "$WZPLAN" archive export 1 --format json --archive "$A"
contains "$out" '"series": "ttft_cdf"' "JSON has the TTFT distribution"
contains "$out" '"series": "occupancy"' "JSON has the occupancy series"
contains "$out" '"method": "simulation"' "JSON has the simulated fleets"
run "$WZPLAN" archive show 1 --archive "$A"
contains "$out" "tpot_cdf   wz-5.44" "show lists the series"
contains "$out" "seed      seed" "show lists the seed among the inputs"
contains "$out" "fp8-mix / throughput = " "show lists the served throughput"
contains "$out" "fp8-mix / offered_throughput = " "and the offered one, apart"

run "$WZPLAN" verify 1 --archive "$A"
expect_rc 0 "verify reproduces a size run"
contains "$out" "series points reproduced exactly" "with every series point"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("DELETE FROM inputs WHERE run=1 AND kind=\"request\""); c.commit()' "$A"
run "$WZPLAN" verify 1 --archive "$A"
expect_rc 0 "a size run without its request is recomputed from its arguments"

run "$WZPLAN" plot 1 --archive "$A" --out "$tmp/charts"
expect_rc 0 "plot draws a size run"
[ -s "$tmp/charts/sim_ttft_cdf.gp" ] && [ -s "$tmp/charts/sim_tpot_cdf.gp" ] &&
	[ -s "$tmp/charts/sim_occupancy.gp" ]
ok $? "latency distribution and occupancy chart scripts"
grep -q 'p99 target, 100 ms' "$tmp/charts/sim_tpot_cdf.dat" "$tmp/charts/sim_tpot_cdf.gp"
ok $? "the TPOT chart shows the target"

run "$WZPLAN" sim --users 120 --context 32k --duration 300 --warmup 30 -q --archive "$A"
expect_rc 0 "sim stores its run"
contains "$err" "Run 2 archived" "sim prints the run id"
run "$WZPLAN" archive export 2 --archive "$A"
contains "$out" "2,simulation,fp8-mix,reserved_usd_year," "the simulated fleet is priced"
run "$WZPLAN" sim --users 120 --context 32k --duration 300 --warmup 30 -q --no-archive \
	--archive "$A"
expect_rc 2 "--archive and --no-archive together"
run "$WZPLAN" verify 2 --archive "$A"
expect_rc 1 "verify says it cannot recompute sim runs"
contains "$err" "propose, size and codec runs only" "and which it can"

run "$WZPLAN" propose $small --simulate --out "$tmp/p" --archive "$A"
expect_rc 0 "propose --simulate"
md=$(cat "$tmp/p/proposal.md")
contains "$md" "## Sized by simulation" "the simulation section"
# The embedded scenario searches configurations: each format's own, every
# format at the baseline's, and a Pareto chart per format.
contains "$md" "| Configuration |" "each format's configuration in the table"
contains "$md" "Every format at the baseline's configuration" "and every format at fp8-mix's"
[ -s "$tmp/p/charts/pareto_fp8_mix.dat" ] && [ -s "$tmp/p/charts/pareto_wz_5_44.gp" ]
ok $? "a Pareto chart per format"
contains "$md" "| GPUs, simulation |" "the summary has the simulated GPUs"
# The verdict is on standard output, not only in the progress on stderr.
contains "$out" "GPUs, simulation" "stdout: the summary with the simulated GPUs"
contains "$out" "Which sizing binds. For the baseline fp8-mix, " "stdout: which sizing binds"
printf '%s' "$out" | grep -q '\*\*\|`'; [ $? -ne 0 ]; ok $? "stdout: plain text, no Markdown marks"
contains "$md" "p99 TTFT s (target 5)" "achieved p99 against the target"
contains "$md" "Which sizing binds." "says which sizing binds"
contains "$md" "closed population of 120 users, 270 s measured" "says what was simulated"
contains "$md" "each format at the serving configuration the deployment search chose" "says which serving mode it used"
contains "$md" "(HBM bandwidth x 0.8, decode FLOP/s x 0.6, prefill's dense matmuls x 0.47, its attention and routed experts at their own shares measured on SGLang's layers) plus 5 ms a step" "names the roofline's parameters as not measured"
[ -s "$tmp/p/charts/sim_ttft_cdf.gp" ] && [ -s "$tmp/p/charts/sim_occupancy.gp" ]
ok $? "latency and occupancy chart scripts in the proposal"
head -1 "$tmp/p/simulation.csv" | grep -q '^format,bits_per_value,replicas,gpus'
ok $? "simulation.csv"
run "$WZPLAN" verify 3 --archive "$A"
expect_rc 0 "verify reproduces propose --simulate"
contains "$out" "series points reproduced exactly" "figures and series"

run "$WZPLAN" propose --users 120 --context 32k --out "$tmp/plain" --archive "$A"
contains "$(cat "$tmp/plain/proposal.md")" "the simulation was not run" \
	"without a simulation the proposal says so"
contains "$(cat "$tmp/plain/proposal.md")" "wzplan propose --simulate" "and how to run it"
# No fleet meets a 10 ms TTFT: the proposal says what the largest fleet
# tried did and what binds, and why the latency charts are left out.
run "$WZPLAN" propose --users 8 --context 32k --duration 300 --warmup 30 --formats fp8-mix \
	-q --simulate --ttft-p99 0.01 --ttft-per-1k 0 --no-search --out "$tmp/none" --no-archive
expect_rc 0 "propose --simulate where no fleet meets the targets"
md=$(cat "$tmp/none/proposal.md" 2>/dev/null)
contains "$md" "The largest fleet the search tried, 8 replicas, missed the p99 TTFT target" \
	"the proposal says what the largest fleet tried missed"
contains "$md" "against 0.01 s); what binds: prefill compute" "against which target, and what binds"
contains "$out" "The largest fleet the search tried, 8 replicas, missed the p99 TTFT target" \
	"stdout: what the largest fleet tried missed"
contains "$out" "none met the targets" "stdout: the summary says no simulated fleet met them"
contains "$md" "because no format's fleet met the targets in the simulation" \
	"latency charts left out for that reason, not for want of a simulation"
run "$WZPLAN" propose --duration 300 --out "$tmp/x" --archive "$A"
expect_rc 2 "a simulator option without --simulate"
[ ! -e "$tmp/x" ]; ok $? "writes nothing"

# 40 sessions of two turns, in arrival order.
awk 'BEGIN { print "session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens"
	for (i = 0; i < 40; i++) printf "%d,0,%.1f,2000,100,0\n", i, i / 2
	for (i = 0; i < 40; i++) printf "%d,1,%.1f,300,80,2100\n", i, 30 + i / 2 }' > "$tmp/t.csv"
run "$WZPLAN" archive list --archive "$A" --format csv
before=$out
sed '5s/,100,0$/,-100,0/' "$tmp/t.csv" > "$tmp/bad.csv"
run "$WZPLAN" propose --traffic "$tmp/bad.csv" --warmup 0 --formats fp8-mix -q --out "$tmp/b" \
	--archive "$A"
expect_rc 2 "a traffic table with a bad row"
contains "$err" "bad.csv:5" "names file and line"
[ ! -e "$tmp/b" ]; ok $? "no proposal written"
run "$WZPLAN" archive list --archive "$A" --format csv
[ "$out" = "$before" ]; ok $? "no run archived"

run "$WZPLAN" propose --traffic "$tmp/t.csv" --warmup 0 --formats fp8-mix,wz-5.44 -q \
	--out "$tmp/t" --archive "$A"
expect_rc 0 "propose replays a traffic table"
contains "$(cat "$tmp/t/proposal.md")" "replay of" "says it replayed the table"
id=$(printf '%s\n' "$out" | sed -n 's/^Run \([0-9]*\) archived.*/\1/p')
run "$WZPLAN" verify "$id" --archive "$A"
expect_rc 0 "verify reproduces a replay"
printf '99,0,100.0,5000,100,0\n' >> "$tmp/t.csv"
run "$WZPLAN" verify "$id" --archive "$A"
expect_rc 1 "a changed traffic file"
contains "$out" "trace traffic: $tmp/t.csv changed" "is named"
run "$WZPLAN" verify "$id" --stored --archive "$A"
expect_rc 0 "--stored uses the recorded traffic table"
rm "$tmp/t.csv"
run "$WZPLAN" verify "$id" --archive "$A"
expect_rc 0 "a traffic file that is gone: its recorded text is used"
contains "$out" "t.csv is gone; using the recorded text" "and it is named"

awk 'BEGIN { print "session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens"
	for (i = 0; i < 20; i++) printf "%d,0,%.1f,2000,100,0\n", i, i }' > "$tmp/t2.csv"
cp "$top_srcdir/data/scenarios/product-page.scenario" "$tmp/d.scenario"
echo 'prefill_gpus_per_replica = 16' >> "$tmp/d.scenario"
run "$WZPLAN" propose --scenario "$tmp/d.scenario" --traffic "$tmp/t2.csv" --serving disaggregated \
	--warmup 0 --formats fp8-mix,wz-5.44 -q --out "$tmp/d" --archive "$A"
expect_rc 0 "propose with disaggregated serving"
contains "$(cat "$tmp/d/proposal.md")" \
	"disaggregated serving (a prefill pool of 16 GPUs beside each replica's 16 decode GPUs, counted in the fleet)" \
	"says which serving mode it used"
done_testing
