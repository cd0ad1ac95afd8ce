#!/bin/sh
# Restores from a wzx offload tier cost the host's decode (the rates file
# bench/bench_restore writes): refused without one, slower first tokens
# with a slow one, the scenario's restore_rates read beside the scenario,
# and a bad rates file refused naming file, line and field.
. "$top_srcdir/tests/cli/lib.sh"

small="--users 120 --replicas 1 --duration 300 --warmup 30 --context 32k --no-archive -q"
wzx="--format wz-5.44 --idle-policy offload --offload-format wzx-5.4"
printf '# rates\nrestore_records_tokens_per_core_s\t1e12\ttoken-layers/s\tfar faster than any link\n' > "$tmp/fast.tsv"
printf 'restore_records_tokens_per_core_s\t2e4\ttoken-layers/s\ta slow host\nrestore_values_tokens_per_core_s\t1e4\ttoken-layers/s\tto values\n' > "$tmp/slow.tsv"
mean_ttft() { printf '%s\n' "$1" | sed -n 's/^ttft_mean_s = //p'; }

run "$WZPLAN" sim $small $wzx
expect_rc 2 "a wzx offload tier without decode rates is refused"
contains "$err" "--restore-rates" "  the message says what to give"

run "$WZPLAN" sim $small $wzx --restore-rates "$tmp/fast.tsv"
expect_rc 0 "with a rates file it runs"
contains "$out" "restore_decode_token_layers_per_gpu_s = " "  the decode rate per GPU is reported"
fast=$(mean_ttft "$out")
run "$WZPLAN" sim $small $wzx --restore-rates "$tmp/slow.tsv"
slow=$(mean_ttft "$out")
awk -v a="$slow" -v b="$fast" 'BEGIN { exit !(a > 2 * b) }'
ok $? "a slow host decode makes first tokens slower (mean TTFT $slow s against $fast s)"

mkdir -p "$tmp/scn"
cp "$tmp/slow.tsv" "$tmp/scn/rates.tsv"
cat > "$tmp/scn/r.scenario" <<'EOS'
model = DeepSeek-V3
gpu = H100 SXM 80GB
users = 120
context = 32k
formats = fp8-mix, wz-5.44
gpus_per_replica = 16
idle_policy = offload
offload_format = wzx-5.4
restore_rates = rates.tsv
EOS
(cd "$tmp" && "$WZPLAN" sim --scenario scn/r.scenario --format wz-5.44 --replicas 1 --duration 300 --warmup 30 --no-archive -q \
	> "$tmp/scn.out" 2> "$tmp/scn.err")
ok $? "the scenario's restore_rates is read beside the scenario"
[ "$(mean_ttft "$(cat "$tmp/scn.out")")" = "$slow" ]; ok $? "  with the same result as --restore-rates"

printf 'restore_records_tokens_per_core_s\t2e4\ttoken-layers/s\tok\nrestore_values_tokens_per_core_s\tfast\ttoken-layers/s\tx\n' > "$tmp/bad.tsv"
run "$WZPLAN" sim $small $wzx --restore-rates "$tmp/bad.tsv"
expect_rc 2 "a bad rates file is refused"
contains "$err" "bad.tsv:2: restore_values_tokens_per_core_s: value 'fast'" "  naming file, line and field"
run "$WZPLAN" sim $small $wzx --restore-rates "$tmp/none.tsv"
expect_rc 2 "a missing rates file is refused"

run "$WZPLAN" size --users 120 --context 32k --duration 300 --warmup 30 --formats fp8-mix,wz-5.44 \
	--idle-policy offload --offload-format wzx-5.4 --restore-rates "$tmp/slow.tsv" --max-replicas 4 \
	--no-archive -q
expect_rc 0 "size takes --restore-rates"
done_testing
