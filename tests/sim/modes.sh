#!/bin/sh
# propose --serving-modes: the scenario's formats sized under each serving
# mode, each row the fleet `size` finds with that serving and idle policy,
# the table and serving-modes.csv in the proposal, 'all' without a prefill
# pool leaving disaggregated serving out and saying so, bad lists refused.
. "$top_srcdir/tests/cli/lib.sh"

cat > "$tmp/m.scenario" <<'EOS'
model = DeepSeek-V3
gpu = H100 SXM 80GB
users = 300
context = 100k
formats = fp8-mix, wz-5.44
gpus_per_replica = 16
price_set = catalog
prefill_gpus_per_replica = 16
prefill_context_parallel = 8
EOS
sim="--duration 300 --warmup 30 --max-replicas 40 --threads 2"
run "$WZPLAN" propose --scenario "$tmp/m.scenario" --simulate $sim \
	--serving-modes aggregated:resident,disaggregated:offload --out "$tmp/o" --archive "$tmp/a.sqlite" -q
expect_rc 0 "propose with two serving modes"
md=$(cat "$tmp/o/proposal.md" 2>/dev/null)
contains "$md" "## Sized under each serving mode" "  the proposal has the section"
contains "$md" "| disaggregated | offload, in the GPU format |" "  a row per mode"
printf '%s\n' "$md" | grep -Eq '^\| aggregated \| resident \| [0-9,]+ \([0-9,]+\)( \*)? \| [0-9,]+ \([0-9,]+, [+-][0-9.]+%\)'
ok $? "  each cell replicas (GPUs), the other format's with its change against the baseline"
csv=$(cat "$tmp/o/serving-modes.csv" 2>/dev/null)
[ "$(printf '%s\n' "$csv" | wc -l)" -eq 5 ]; ok $? "  serving-modes.csv: a header and a row per mode and format"

# Each row is what size finds under that mode.
for mode in aggregated:resident disaggregated:offload; do
	serving=${mode%%:*} idle=${mode#*:}
	run "$WZPLAN" size --scenario "$tmp/m.scenario" $sim --serving "$serving" --idle-policy "$idle" \
		--no-archive -q --report csv
	for f in fp8-mix wz-5.44; do
		want=$(printf '%s\n' "$out" | awk -F, -v f="$f" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "replicas") c = i }
			$1 == f { print $c }')
		got=$(printf '%s\n' "$csv" | awk -F, -v s="$serving" -v i="$idle" -v f="$f" \
			'$1 == s && $2 == i && $4 == f { print $5 }')
		[ -n "$want" ] && [ "$want" = "$got" ]; ok $? "  $serving, $idle, $f: $got replicas, as size finds ($want)"
	done
done

# verify recomputes the modes too.
run "$WZPLAN" verify --archive "$tmp/a.sqlite" 1
expect_rc 0 "verify recomputes the run with its serving modes"
contains "$out" "reproduced exactly" "  every figure the same"

# 'all' without a prefill pool: aggregated only, and the proposal says why.
grep -v prefill_gpus "$tmp/m.scenario" | grep -v prefill_context > "$tmp/np.scenario"
run "$WZPLAN" propose --scenario "$tmp/np.scenario" --formats fp8-mix --simulate $sim --serving-modes all \
	--out "$tmp/o2" --archive "$tmp/a.sqlite" -q
expect_rc 0 "propose --serving-modes all"
md=$(cat "$tmp/o2/proposal.md" 2>/dev/null)
contains "$md" "| aggregated | drop |" "  aggregated with every idle policy"
printf '%s' "$md" | grep -q "| disaggregated |"; [ $? -ne 0 ]; ok $? "  no disaggregated row without a pool"
contains "$md" "disaggregated serving was not sized: the scenario names no prefill pool" "  and says why"
csv=$(cat "$tmp/o2/serving-modes.csv" 2>/dev/null)
nf=$(printf '%s\n' "$csv" | sed 's/"[^"]*"/q/g' | awk -F, '{ print NF }' | sort -u)
[ -n "$csv" ] && [ "$nf" = "$(printf '%s\n' "$csv" | head -1 | awk -F, '{ print NF }')" ]
ok $? "  serving-modes.csv: every row as many fields as its header (a Binds text's comma quoted)"

run "$WZPLAN" propose --scenario "$tmp/np.scenario" --simulate $sim --serving-modes disaggregated:resident \
	--out "$tmp/o3" --archive "$tmp/a.sqlite" -q
expect_rc 2 "a disaggregated mode without a pool is refused"
contains "$err" "prefill_gpus_per_replica" "  naming the key"
[ ! -e "$tmp/o3" ]; ok $? "  and writes nothing"
for bad in "aggregated" "aggregated:sleep" "split:resident" "aggregated:resident:wzx-5.0" "aggregated:offload:" ","; do
	run "$WZPLAN" propose --simulate --serving-modes "$bad" --out "$tmp/o4" -q
	expect_rc 2 "--serving-modes '$bad' is refused"
done
contains "$err" "no serving mode" "  an empty list says so"
run "$WZPLAN" propose --serving-modes all --out "$tmp/o4" -q
expect_rc 2 "--serving-modes without --simulate is refused"
done_testing
