#!/bin/sh
# wzplan sweep from the command line: points in their documented order,
# the same figures for --jobs 1, --jobs 2 and two shards merged, resume
# after a SIGKILL (no point lost or run twice), and bad sweep files refused
# naming file, line and key.
. "$top_srcdir/tests/cli/lib.sh"
export WZ_GNUPLOT=none
W="$WZPLAN"
S="$tmp/grid.sweep"
cat > "$S" <<'END'
# 16 points: 2 GPUs x 2 user counts x 2 contexts x with/without simulation
sweep = grid-test
set.price_set = catalog
set.mode = memory
set.formats = fp8-mix, wz-5.44
set.duration_s = 600
set.warmup_s = 60
max_replicas = 64
axis.gpu = H100 SXM 80GB | H200 SXM
axis.users = 100 | 200
axis.context = 8k .. 32k times 4
axis.simulate = no | yes
END
runs_of() { # runs per point id: "count id" lines
	python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
for n,p in c.execute("SELECT count(*), content FROM inputs WHERE kind=\"sweep\" AND name=\"point\" GROUP BY content ORDER BY content"): print(n,p)' "$1"
}

run "$W" sweep points "$S" --format csv
expect_rc 0 "sweep points"
[ "$(printf '%s\n' "$out" | tail -n +2 | wc -l)" -eq 16 ]; ok $? "16 points"
# (the simulate axis is the third column, Simulate, alone)
contains "$(printf '%s\n' "$out" | sed -n 1p)" "index,id,simulate,price_set,mode,formats,duration_s,warmup_s,max_replicas,gpu,users,context" "the header names each parameter once"
point_row() { printf '%s\n' "$out" | sed -n "$1p" | cut -d, -f1,3-; }
[ "$(point_row 2)" = '0,no,catalog,memory,"fp8-mix, wz-5.44",600,60,64,H100 SXM 80GB,100,8000' ]; ok $? "point 0: every axis at its first value"
[ "$(point_row 3)" = '1,yes,catalog,memory,"fp8-mix, wz-5.44",600,60,64,H100 SXM 80GB,100,8000' ]; ok $? "point 1: the last axis turns fastest"
[ "$(point_row 4)" = '2,no,catalog,memory,"fp8-mix, wz-5.44",600,60,64,H100 SXM 80GB,100,32000' ]; ok $? "point 2: the range's second value"
[ "$(point_row 17)" = '15,yes,catalog,memory,"fp8-mix, wz-5.44",600,60,64,H200 SXM,200,32000' ]; ok $? "point 15: every axis at its last value"
ids1=$(printf '%s\n' "$out" | cut -d, -f2)
[ "$(printf '%s\n' "$ids1" | tail -n +2 | sort -u | wc -l)" -eq 16 ]; ok $? "16 distinct point ids"

# The same points written differently have the same ids; another sweep
# name does not change them.
sed -e 's/^sweep = grid-test/sweep = renamed/' -e 's/fp8-mix, wz-5.44/fp8-mix,wz-5.44/' \
    -e 's/8k .. 32k times 4/8000 | 32000/' "$S" > "$tmp/same.sweep"
run "$W" sweep points "$tmp/same.sweep" --format csv
[ "$(printf '%s\n' "$out" | cut -d, -f2)" = "$ids1" ]; ok $? "ids depend on the parameters only"
sed 's/set.warmup_s = 60/set.warmup_s = 61/' "$S" > "$tmp/other.sweep"
run "$W" sweep points "$tmp/other.sweep" --format csv
[ -z "$(printf '%s\n%s\n' "$(printf '%s\n' "$out" | cut -d, -f2 | tail -n +2)" "$(printf '%s\n' "$ids1" | tail -n +2)" | sort | uniq -d)" ]
ok $? "a changed parameter changes every id"

run "$W" sweep "$S" --jobs 1 --archive "$tmp/j1.sqlite" -q
expect_rc 0 "sweep --jobs 1"
run "$W" sweep results "$S" --archive "$tmp/j1.sqlite" -o "$tmp/j1.csv"
expect_rc 0 "sweep results"
grep -q '^1,[0-9a-f]*,simulation,fp8-mix,gpus,' "$tmp/j1.csv"; ok $? "a simulated point has its fleet sized by simulation"
grep -q '^0,[0-9a-f]*,simulation,' "$tmp/j1.csv"; [ $? -ne 0 ]; ok $? "a point without simulation has none"
grep -q '^15,[0-9a-f]*,scenario,scenario,gpu,,H200 SXM' "$tmp/j1.csv"; ok $? "each point ran its own parameters"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); t=c.execute("SELECT content FROM inputs WHERE kind=\"sweep\" AND name=\"params\" AND content LIKE \"index = 15%\"").fetchone()[0]; assert "gpu = H200 SXM" in t and "simulate = yes" in t, t' "$tmp/j1.sqlite"
ok $? "each run carries its point's index and parameters"
run "$W" sweep "$S" --jobs 2 --archive "$tmp/j2.sqlite"
expect_rc 0 "sweep --jobs 2"
contains "$err" "16 points archived, 0 failed" "all points archived"
"$W" sweep results "$S" --archive "$tmp/j2.sqlite" > "$tmp/j2.csv"
cmp -s "$tmp/j1.csv" "$tmp/j2.csv"; ok $? "--jobs 1 and --jobs 2: the same figures, byte for byte"

run "$W" sweep "$S" --shard 1/2 --archive "$tmp/s1.sqlite" -q
expect_rc 0 "shard 1/2"
run "$W" sweep "$S" --shard 2/2 --archive "$tmp/s2.sqlite" -q
expect_rc 0 "shard 2/2"
n1=$(runs_of "$tmp/s1.sqlite" | wc -l)
[ "$n1" -gt 0 ] && [ $((n1 + $(runs_of "$tmp/s2.sqlite" | wc -l))) -eq 16 ] &&
	[ -z "$( (runs_of "$tmp/s1.sqlite"; runs_of "$tmp/s2.sqlite") | cut -d' ' -f2 | sort | uniq -d)" ]
ok $? "the two shards hold every point once between them"
# simulate turns fastest: by index modulo one shard would get every
# simulated point; by estimated cost each gets half of them.
sims() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(DISTINCT run) FROM figures WHERE tbl=\"simulation\"").fetchone()[0])' "$1"; }
[ "$(sims "$tmp/s1.sqlite")" -eq 4 ] && [ "$(sims "$tmp/s2.sqlite")" -eq 4 ]
ok $? "the simulated points are shared between the shards"
run "$W" sweep results "$S" --archive "$tmp/s1.sqlite"
expect_rc 1 "results of one shard say points are missing"
contains "$err" "$((16 - n1)) of 16 points are not in the archive" "and how many"
run "$W" archive merge "$tmp/m.sqlite" "$tmp/s1.sqlite" "$tmp/s2.sqlite"
expect_rc 0 "archive merge of the two shards"
"$W" sweep results "$S" --archive "$tmp/m.sqlite" > "$tmp/m.csv"
cmp -s "$tmp/j1.csv" "$tmp/m.csv"; ok $? "merged shards: the same figures as --jobs 1, byte for byte"

# Resume: nothing to do when complete; a killed sweep continues.
run "$W" sweep "$S" --archive "$tmp/j1.sqlite"
expect_rc 0 "a complete sweep run again"
contains "$err" "16 already in" "skips every archived point"
WZ_ARCHIVE_TEST_SLEEP_MS=400 "$W" sweep "$S" --jobs 2 --archive "$tmp/k.sqlite" -q 2>/dev/null &
pk=$!
i=0
while [ $i -lt 100 ]; do
	[ -f "$tmp/k.sqlite" ] && [ "$(runs_of "$tmp/k.sqlite" 2>/dev/null | wc -l)" -ge 3 ] && break
	sleep 0.1
	i=$((i + 1))
done
kill -KILL $pk 2>/dev/null
wait $pk
rk=$?
[ $rk -eq 137 ]; ok $? "the sweep was killed mid-way (status $rk)"
sleep 1
before=$(runs_of "$tmp/k.sqlite" | wc -l)
sleep 1
[ "$(runs_of "$tmp/k.sqlite" | wc -l)" -eq "$before" ]; ok $? "its workers died with it"
[ "$before" -ge 3 ] && [ "$before" -lt 16 ]; ok $? "it stopped part-way ($before of 16 points)"
run "$W" sweep "$S" --jobs 2 --archive "$tmp/k.sqlite"
expect_rc 0 "the killed sweep resumed"
contains "$err" "$before already in" "skipping the points archived before the kill"
[ "$(runs_of "$tmp/k.sqlite" | wc -l)" -eq 16 ] && [ -z "$(runs_of "$tmp/k.sqlite" | grep -v '^1 ')" ]
ok $? "every point archived exactly once"
"$W" sweep results "$S" --archive "$tmp/k.sqlite" > "$tmp/k.csv"
cmp -s "$tmp/j1.csv" "$tmp/k.csv"; ok $? "resumed: the same figures as --jobs 1"
run "$W" verify 2 --archive "$tmp/j1.sqlite"
expect_rc 0 "verify recomputes a sweep point's run"

# Bad sweep files: exit 2, naming file, line and key.
bad() { # bad LINE PATTERN NAME: a sweep file with LINE appended is refused
	{ grep -v '^axis.simulate' "$S"; printf '%s\n' "$1"; } > "$tmp/bad.sweep"
	run "$W" sweep points "$tmp/bad.sweep"
	expect_rc 2 "$3"
	contains "$err" "$2" "$3: the message"
}
bad "frobnicate = 1" "bad.sweep:12: unknown key 'frobnicate'" "an unknown key"
bad "axis.colour = red | blue" "bad.sweep:12: unknown key 'axis.colour'" "an axis of no parameter"
bad "set.users = 5" "bad.sweep:12: set.users: the parameter 'users' is already given (line 10)" "a parameter given twice"
bad "axis.act_reserve_gib = 8 .. 4 step 1" "bad.sweep:12: axis.act_reserve_gib: range '8 .. 4 step 1' needs numbers A <= B" "a backwards range"
bad "axis.mem_util = 0.5 | lots" "bad.sweep:12: axis.mem_util: value 'lots'" "a bad value in an axis"
bad "axis.simulate = no | maybe" "bad.sweep:12: axis.simulate: 'maybe' is not yes or no" "a bad simulate value"
bad "axis.model = DeepSeek-V3 | NoSuchModel" "bad.sweep:12: axis.model: value 'NoSuchModel'" "a model not in the catalog"
bad "axis.moe_routed_experts = 256 | 300" "bad.sweep:12: axis.moe_routed_experts: value '300'" "a MoE shape larger than the model"
# A fixed value that needs a later line is taken; one that no later line
# mends is still refused at its own line.
{ grep -v '^axis.simulate' "$S"; printf 'set.serving = disaggregated\nset.prefill_gpus_per_replica = 16\n'; } > "$tmp/order.sweep"
run "$W" sweep points "$tmp/order.sweep"
expect_rc 0 "set.serving = disaggregated before the pool's size is taken"
bad "set.serving = disaggregated" "bad.sweep:12: set.serving: value 'disaggregated'" "disaggregated serving without a pool anywhere"
printf 'set.users = 10\n' > "$tmp/noname.sweep"
run "$W" sweep points "$tmp/noname.sweep"
expect_rc 2 "a sweep file without its id"
contains "$err" "no 'sweep = ID' line" "says so"
run "$W" sweep "$S" --shard 3/2
expect_rc 2 "a shard beyond N"
run "$W" sweep "$S" --jobs 0
expect_rc 2 "--jobs 0"
done_testing
