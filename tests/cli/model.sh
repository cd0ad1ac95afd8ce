#!/bin/sh
# CLI tests for `wzplan model`: the catalog's models, DeepSeek-V4's cache
# anatomy against the published figures (docs/cache-anatomy.md), output
# formats, and bad input named by file, row and field.
. "$top_srcdir/tests/cli/lib.sh"

run "$WZPLAN" model list
expect_rc 0 "model list"
contains "$out" "DeepSeek-V4-Pro" "lists V4-Pro"
contains "$out" "30 compressed 1/4 top-1024 + window 128 448+64; 31 compressed 1/128" "with its layer kinds"
contains "$out" "GLM-5" "lists GLM-5"

# 2^20 tokens: the context the published 9.62 GiB and 83.9 GiB are for
run "$WZPLAN" model show DeepSeek-V4-Pro --context 1048576 --formats bf16,fp8-model1,nvfp4-v4+mxfp4 --format csv
expect_rc 0 "model show V4-Pro, csv"
line() { printf '%s\n' "$out" | grep "^$1," ; }
gib=$(line 'bf16,all' | awk -F, '{print $NF}')
awk -v g="$gib" 'BEGIN { exit !(g > 9.62 * 0.98 && g < 9.62 * 1.02) }'; ok $? "V4-Pro BF16 cache $gib GiB within 2% of 9.62"
entry=$(line 'fp8-model1,compressed 1/4 top-1024 + window 128' | cut -d, -f7)
[ "$entry" = 584 ]; ok $? "FlashMLA's FP8 entry: 584 bytes ($entry)"
entry=$(line 'nvfp4-v4,compressed 1/128 + window 128' | cut -d, -f7)
[ "$entry" = 384 ]; ok $? "FlashInfer's NVFP4 entry: 384 bytes ($entry)"
idx=$(line 'fp8-model1,compressed 1/4 top-1024 + window 128' | cut -d, -f8,9)
[ "$idx" = "fp8,132" ]; ok $? "the indexer's fp8 key: 132 bytes ($idx)"
bytes=$(line 'fp8-model1,all' | cut -d, -f11)
awk -v b="$bytes" 'BEGIN { exit !(b == 5783720960) }'; ok $? "V4-Pro FP8 + fp8 indexer: 5,783,720,960 B ($bytes)"

run "$WZPLAN" model show DeepSeek-V3.2-Exp --context 1048576 --formats bf16 --format csv
expect_rc 0 "model show V3.2-Exp"
gib=$(printf '%s\n' "$out" | grep '^bf16,all,' | awk -F, '{print $NF}')
awk -v g="$gib" 'BEGIN { exit !(g > 83.9 * 0.98 && g < 83.9 * 1.02) }'; ok $? "V3.2-style BF16 cache $gib GiB within 2% of 83.9"

run "$WZPLAN" model show DeepSeek-V4-Flash --context 100k --format json
expect_rc 0 "json output"
printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); r=[x for x in d["rows"] if x["kind"].startswith("window")]; assert r[0]["layers"]==2 and r[0]["window_entries"]==128' 2>/dev/null
ok $? "json parses: 2 window layers of 128 entries"

run "$WZPLAN" model show DeepSeek-V4-Pro --context 1048576
expect_rc 0 "text output, default formats"
contains "$out" "Layer kind" "a table"

# bad input: exit 2 naming the file, row and field
run "$WZPLAN" model show DeepSeek-V4-Pro --context 1000 --formats fp8-ds-mla
expect_rc 2 "a format that cannot code a 448 + 64 entry"
contains "$err" "embedded:model-layers.csv:2: fields entry_nope, entry_rope: format 'fp8-ds-mla' cannot code" "names file, row and fields"
run "$WZPLAN" model show DeepSeek-V4-Pro --context 1048576 --formats fp8-ds-mla-v4 --format csv
expect_rc 0 "the codec's fp8-ds-mla-v4"
bytes=$(printf '%s\n' "$out" | grep '^fp8-ds-mla-v4,all,' | cut -d, -f11)
awk -v b="$bytes" 'BEGIN { exit !(b == 5783720960) }'; ok $? "fp8-ds-mla-v4 sizes as FlashMLA's 584-byte entry ($bytes)"
run "$WZPLAN" model show DeepSeek-V3 --context 1000 --formats fp8-ds-mla-v4
expect_rc 2 "the codec's V4 entry on a 512 + 64 latent"
run "$WZPLAN" model show DeepSeek-V3 --context 1000 --formats nvfp4-v4
expect_rc 2 "a V4 layout on a 512 + 64 entry"
contains "$err" "embedded:models.csv:5: fields kv_lora_rank, rope_dim" "names the models.csv row"
run "$WZPLAN" model show DeepSeek-V4-Pro --context 1000 --formats bf16+int2
expect_rc 2 "an unknown indexer format"
run "$WZPLAN" model show GPT-9 --context 1000
expect_rc 2 "an unknown model"
run "$WZPLAN" model show DeepSeek-V4-Pro
expect_rc 2 "show without --context"
run "$WZPLAN" model show DeepSeek-V4-Pro --context 1000 --formats ,
expect_rc 2 "an empty format"

mkdir "$tmp/c"
cp "$top_srcdir"/data/*.csv "$tmp/c/"
sed -i 's/^DeepSeek-V4-Pro,compressed,31,/DeepSeek-V4-Pro,compressed,30,/' "$tmp/c/model-layers.csv"
run "$WZPLAN" model list --catalog "$tmp/c"
expect_rc 2 "a layer pattern one short of the layer count"
contains "$err" "$tmp/c/model-layers.csv:3: field layers: DeepSeek-V4-Pro's rows add up to 60 layers" "names file, row and field"
run "$WZPLAN" cost --catalog "$tmp/c"
expect_rc 2 "every command refuses that catalog"

cp "$top_srcdir"/data/model-layers.csv "$tmp/c/"
sed -i '2s/"$//' "$tmp/c/models.csv"
run "$WZPLAN" model list --catalog "$tmp/c"
expect_rc 2 "models.csv: an unterminated quote"
contains "$err" "$tmp/c/models.csv:2: field source_url: a line break inside the field" "names file, row and field"

# the scenario files for today's models (data/scenarios/README.md)
for f in v4-pro-gb300 v4-flash-b200 kimi-k2-h200; do
	run "$WZPLAN" cost --scenario "$top_srcdir/data/scenarios/$f.scenario"
	expect_rc 0 "cost --scenario $f.scenario"
done
contains "$out" "Kimi-K2-Instruct on 16 x H200" "Kimi-K2 on two H200 nodes"
run "$WZPLAN" cost --scenario "$top_srcdir/data/scenarios/v4-pro-gb300.scenario" --format csv
bpt=$(printf '%s\n' "$out" | grep '^fp8-ds-mla-v4,' | cut -d, -f5)
# 584-byte entries and 132-byte fp8 keys at 2^20 tokens, over 2^20 tokens
want=$(awk 'BEGIN { S = 1048576; printf "%.9f", (30 * ((128 + S / 4) * 584 + S / 4 * 132) + 31 * (128 + S / 128) * 584) / S }')
awk -v a="$bpt" -v b="$want" 'BEGIN { exit !(a - b < 1e-6 && b - a < 1e-6) }'; ok $? "V4-Pro's bytes per token at 2^20: the cache per sequence over the context ($bpt, $want)"
run "$WZPLAN" sweep points "$top_srcdir/data/scenarios/today.sweep"
expect_rc 0 "the sweep file across them"
contains "$out" "Kimi-K2-Instruct   H200 SXM 141GB" "its ninth point"

done_testing
