#!/bin/sh
# CLI tests for `wzplan traffic`: imports, info, exit codes, messages that
# name file:line and field, nothing written on failure.
. "$top_srcdir/tests/cli/lib.sh"

real="${WZ_SHARED_DIR:-}/traces/real"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }

run "$WZPLAN" traffic --help
expect_rc 0 "help"
contains "$out" "wzplan traffic import" "help shows the synopsis"
run "$WZPLAN" traffic
expect_rc 2 "no action"
run "$WZPLAN" traffic frobnicate
expect_rc 2 "unknown action"

printf 'num_prefill_tokens,num_decode_tokens\n100,10\n200,20\n300,30\n' > "$tmp/len.csv"
run "$WZPLAN" traffic import --from lengths "$tmp/len.csv" --rate 2 --seed 5 --out "$tmp/t.csv"
expect_rc 0 "lengths import"
contains "$out" "3 requests, 3 sessions" "import summary"
head -1 "$tmp/t.csv" | grep -qx 'session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens'
ok $? "the table has the header"
cp "$tmp/t.csv" "$tmp/t1.csv"
run "$WZPLAN" traffic import --from lengths "$tmp/len.csv" --rate 2 --seed 5 --out "$tmp/t.csv"
cmp -s "$tmp/t.csv" "$tmp/t1.csv"; ok $? "same seed, same bytes"

run "$WZPLAN" traffic info "$tmp/t.csv"
expect_rc 0 "info"
contains "$out" "prompt_tokens" "info lists prompt tokens"
run "$WZPLAN" traffic info "$tmp/t.csv" --format csv
expect_rc 0 "info as CSV"
contains "$out" "requests,3," "CSV: requests"
contains "$out" "prompt_tokens,,200,200,300,300,300" "CSV: mean and nearest-rank percentiles"
run "$WZPLAN" traffic info "$tmp/t.csv" --format json
expect_rc 0 "info as JSON"
contains "$out" '"measure"' "JSON members"

run "$WZPLAN" traffic import --from lengths "$tmp/len.csv" --out "$tmp/x.csv"
expect_rc 2 "lengths without --rate"
run "$WZPLAN" traffic import --from nope "$tmp/len.csv" --out "$tmp/x.csv"
expect_rc 2 "unknown format"
run "$WZPLAN" traffic import --from azure "$tmp/len.csv"
expect_rc 2 "no --out"
run "$WZPLAN" traffic import --from lengths "$tmp/len.csv" --rate 2 --cv x --out "$tmp/x.csv"
expect_rc 2 "bad --cv"
contains "$err" "--cv" "message names the option"

printf 'TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:17:03.98,10,1\r\n2023-11-16 18:17:04,5x,1\r\n' > "$tmp/az.csv"
run "$WZPLAN" traffic import --from azure "$tmp/az.csv" --out "$tmp/az-out.csv"
expect_rc 2 "bad Azure row"
contains "$err" "az.csv:3: field ContextTokens" "message names file:line and field"
[ ! -e "$tmp/az-out.csv" ]; ok $? "nothing written on failure"

printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:05,10,1\n2023-11-16 18:17:04,5,1\n' > "$tmp/az2.csv"
run "$WZPLAN" traffic import --from azure "$tmp/az2.csv" --out "$tmp/az-out.csv"
expect_rc 2 "out-of-order times refused"
contains "$err" "az2.csv:3: field TIMESTAMP" "the first row out of order is named"
run "$WZPLAN" traffic import --from azure "$tmp/az2.csv" --out "$tmp/az-out.csv" --sort
expect_rc 0 "or sorted with --sort"
contains "$err" "1 records out of time order were sorted" "with a warning"

printf 'session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens\n0,0,1,5,1,0\n1,0,0,5,1,0\n' > "$tmp/u.csv"
run "$WZPLAN" traffic info "$tmp/u.csv"
expect_rc 2 "info refuses an unsorted table"
contains "$err" "u.csv:3: field arrival_s" "naming the row"
run "$WZPLAN" traffic info "$tmp/u.csv" --sort
expect_rc 0 "info --sort"
printf 'session,turn,arrival_s,prompt_tokens,output_tokens,prefix_tokens\n0,0,1,5,1,200000000\n' > "$tmp/big.csv"
run "$WZPLAN" traffic info "$tmp/big.csv"
expect_rc 2 "absurd token count"
contains "$err" "big.csv:2: field prefix_tokens" "names it"
run "$WZPLAN" traffic info "$tmp/missing.csv"
[ "$rc" -ne 0 ]; ok $? "a missing file fails"

printf 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,ChatGPT,10,2,12,Conversation log\n3,GPT-4,20,4,24,API log\n' > "$tmp/b.csv"
run "$WZPLAN" traffic import --from burstgpt "$tmp/b.csv" "$tmp/b.csv" --out "$tmp/b-out.csv"
expect_rc 0 "BurstGPT, two files overlaid"
contains "$out" "4 requests, 4 sessions, 3.000 s" "overlay keeps sessions apart"

if [ -r "$real/synthetic_trace.jsonl" ]; then
	run "$WZPLAN" traffic import --from mooncake "$real/synthetic_trace.jsonl" --out "$tmp/mc.csv"
	expect_rc 0 "Mooncake sample"
	contains "$out" "hit ratio 64.0%" "prefix-block hit ratio 64.0%"
	contains "$out" "3,993 requests" "3,993 requests"
else
	skip "shared Mooncake sample absent"; skip "-"; skip "-"
fi
if [ -r "$real/AzureLLMInferenceTrace_code.csv" ]; then
	run "$WZPLAN" traffic import --from azure "$real/AzureLLMInferenceTrace_code.csv" --out "$tmp/code.csv"
	expect_rc 0 "Azure sample"
	run "$WZPLAN" traffic info "$tmp/code.csv" --format csv
	contains "$out" "requests,8819," "8,819 requests"
	contains "$out" "prompt_tokens,,2047.8" "input mean 2048 (2047.8)"
else
	skip "shared Azure sample absent"; skip "-"; skip "-"
fi
if [ -d "$real/servegen_deepseek-r1" ]; then
	run "$WZPLAN" traffic import --from servegen "$real/servegen_deepseek-r1" --clients 0,99999 --out "$tmp/sg.csv"
	expect_rc 2 "an unknown ServeGen client"
	run "$WZPLAN" traffic import --from servegen "$real/servegen_deepseek-r1" --clients 0 --start 43200 --duration 600 --out "$tmp/sg.csv"
	expect_rc 0 "ServeGen sample, one client, ten minutes"
else
	skip "shared ServeGen sample absent"; skip "-"
fi
done_testing
