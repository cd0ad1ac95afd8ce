#!/bin/sh
# The shared prefix cache from the command line: the Mooncake importer
# names a system prompt that ten conversations share, a replay with an HBM
# prefix cache hits it for all but the first, the hit ratios are printed
# and archived, and without the cache nothing is looked up.
. "$top_srcdir/tests/cli/lib.sh"
mc="$tmp/mc.jsonl"
: > "$mc"
i=0
while [ $i -lt 10 ]; do
	printf '{"timestamp": %d, "input_length": 1600, "output_length": 20, "hash_ids": [100, 101, %d, %d]}\n' \
		$((i * 20000)) $((200 + i)) $((300 + i)) >> "$mc"
	i=$((i + 1))
done
run "$WZPLAN" traffic import --from mooncake "$mc" --out "$tmp/t.csv"
expect_rc 0 "import a trace whose conversations share a prompt"
table=$(cat "$tmp/t.csv")
contains "$table" "prefix_tokens,shared_prefix,shared_prefix_tokens" "the table has the shared prefix columns"
contains "$table" "9,0,180,576,20,1024,0,1024" "the tenth conversation begins with the shared 1,024 tokens"
S="$tmp/s.scenario"
cp "$top_srcdir/data/scenarios/product-page.scenario" "$S"
echo 'warmup_s = 0' >> "$S"
run "$WZPLAN" sim --scenario "$S" --traffic "$tmp/t.csv" --replicas 1 --no-archive -q
expect_rc 0 "replay without a prefix cache"
contains "$out" "prefix_lookups = 0" "nothing is looked up"
contains "$out" "prefix_hit_ratio_hbm = none" "and no hit ratio is printed as a number"
echo 'prefix_cache_hbm_gib = 4' >> "$S"
A="$tmp/a.sqlite"
run "$WZPLAN" sim --scenario "$S" --traffic "$tmp/t.csv" --replicas 1 --archive "$A" -q
expect_rc 0 "replay with a 4 GiB HBM prefix cache"
contains "$out" "prefix_cache_hbm_gib_per_rank = 4" "the model shows the tier's capacity"
contains "$out" "prefix_lookups = 10" "every new conversation looks its prompt up"
contains "$out" "prefix_hit_ratio_hbm = 0.900000" "all but the first hit in HBM"
contains "$out" "prefix_tokens_saved = 9216" "9 x 1,024 prefill tokens saved"
run "$WZPLAN" archive export 1 --format json --archive "$A"
json=$(printf '%s' "$out" | tr -d ' \n')
contains "$json" '"metric":"prefix_hit_hbm","value":0.9000' "the archive has the HBM hit ratio"
contains "$json" '"metric":"prefix_hit_cpu","value":0.0,' "and the other tiers'"
contains "$json" '"metric":"prefix_lookups","value":10.0,' "and the lookups"
# Prefixes that share their first blocks: four conversations begin with
# the same 1,024-token prompt (blocks 100, 101), then two of them with
# block 102 and two with 103 (a late divergence, in the third of four
# 512-token blocks).  The importer names the 1,536-token prefixes 101-102
# and 101-103 and gives each the 1,024-token prompt as its chain; a cache
# that hits a prefix's first segments hits 1,024 tokens for the second
# conversation (only the prompt is cached then) and all 1,536 for the
# third and fourth: 4,096 tokens saved of 4 x 1,536 = 6,144 looked up, 3
# of 4 lookups hitting in HBM.  Matching whole prefixes by id saves only
# the third's and fourth's 3,072 and hits 2 of 4.
mc2="$tmp/mc2.jsonl"
printf '{"timestamp": 0, "input_length": 2048, "output_length": 20, "hash_ids": [100, 101, 102, 200]}\n' > "$mc2"
printf '{"timestamp": 20000, "input_length": 2048, "output_length": 20, "hash_ids": [100, 101, 103, 201]}\n' >> "$mc2"
printf '{"timestamp": 40000, "input_length": 2048, "output_length": 20, "hash_ids": [100, 101, 102, 202]}\n' >> "$mc2"
printf '{"timestamp": 60000, "input_length": 2048, "output_length": 20, "hash_ids": [100, 101, 103, 203]}\n' >> "$mc2"
run "$WZPLAN" traffic import --from mooncake "$mc2" --out "$tmp/t2.csv"
expect_rc 0 "import conversations whose prefixes diverge late"
contains "$(cat "$tmp/t2.csv")" "1,0,20,1024,20,1024,2,1536,0:1024" "the second's prefix begins with the shared prompt"
run "$WZPLAN" sim --scenario "$S" --traffic "$tmp/t2.csv" --replicas 1 --no-archive -q
expect_rc 0 "replay with the HBM prefix cache"
contains "$out" "prefix_lookups = 4" "every conversation looks its prefix up"
contains "$out" "prefix_tokens_saved = 4096" "the shared prompt's 1,024 tokens hit for the second"
contains "$out" "prefix_hit_ratio_hbm = 0.750000" "3 of 4 lookups hit in HBM"
contains "$out" "prefix_token_hit_ratio_hbm = 0.666667" "4,096 of 6,144 tokens"
# Two files overlaid: the second's prefixes are other prompts, renumbered
# after the first's with their chains.
run "$WZPLAN" traffic import --from mooncake "$mc2" "$mc2" --out "$tmp/t3.csv"
expect_rc 0 "import two files"
t3=$(cat "$tmp/t3.csv")
contains "$t3" "5,0,20,1024,20,1024,5,1536,3:1024" "the second file's prefixes follow the first's, chains too"
contains "$t3" "1,0,20,1024,20,1024,2,1536,0:1024" "and the first's keep theirs"
printf 'prefix_cache_evict = segments\n' >> "$S"
run "$WZPLAN" sim --scenario "$S" --traffic "$tmp/t2.csv" --replicas 1 --no-archive -q
expect_rc 0 "evicting whole segments"
contains "$out" "prefix_cache_evict = segments" "the inputs say how prefixes are evicted"
contains "$out" "prefix_tokens_saved = 4096" "with room for all, the same hits"
printf 'prefix_cache_evict = pages\n' > "$tmp/bad.scenario"
cat "$top_srcdir/data/scenarios/product-page.scenario" "$tmp/bad.scenario" > "$tmp/bad2.scenario"
run "$WZPLAN" sim --scenario "$tmp/bad2.scenario" --replicas 1 --duration 2 --no-archive -q
expect_rc 2 "an unknown eviction is refused"
contains "$err" "prefix_cache_evict: 'pages': use blocks or segments" "naming the key and the choices"
done_testing
