#!/bin/sh
# CLI tests of `wzplan trace`: synth-cache writes what it says, the same
# bytes for the same options, and nothing on bad usage or failure; info
# reads good files and refuses bad ones with exit 2.
. "$top_srcdir/tests/cli/lib.sh"

small="--layers 2 --tokens 64 --queries 4 --heads 2"

run "$WZPLAN" trace synth-cache $small --calibration 2 --test 1 --out "$tmp/a"
expect_rc 0 "synth-cache writes windows"
for f in mla-a-cal-0 mla-a-cal-1 mla-a-test-0; do
	[ -s "$tmp/a/$f.safetensors" ]; ok $? "$f.safetensors written"
done
contains "$err" "[3/3] wrote" "progress on standard error"
[ -z "$out" ]; ok $? "nothing on standard output"

run "$WZPLAN" trace synth-cache $small --calibration 2 --test 1 --out "$tmp/b" --quiet
expect_rc 0 "synth-cache again, quiet"
[ -z "$err" ]; ok $? "--quiet prints nothing"
cmp -s "$tmp/a/mla-a-cal-1.safetensors" "$tmp/b/mla-a-cal-1.safetensors"
ok $? "same options, same bytes"
cmp -s "$tmp/a/mla-a-cal-0.safetensors" "$tmp/a/mla-a-cal-1.safetensors"
[ $? -ne 0 ]; ok $? "two windows differ"

run "$WZPLAN" trace info "$tmp/a/mla-a-test-0.safetensors"
expect_rc 0 "info reads a written window"
contains "$out" "split: test" "info shows the split"
contains "$out" "2 layers x 64 tokens, latent 512 + position part 64" "info shows the shapes"
contains "$out" "queries: 4 x 2 heads, softmax_scale 0.135234" "info shows the queries"
contains "$out" "source: synthetic:mla-a" "info shows the source"
contains "$out" "latent RMS" "info has the per-layer table"

run "$WZPLAN" trace info --format csv "$tmp/a/mla-a-cal-0.safetensors" "$tmp/a/mla-a-cal-1.safetensors"
expect_rc 0 "info --format csv"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 5 ]; ok $? "csv: a header and one row per file and layer"
contains "$out" "file,model,split,window,source,xxh3,layers,tokens" "csv header"
# The format carries no checksum: info prints the file's hash (the one the
# archive records), so that a changed byte can be noticed.
run "$WZPLAN" trace info "$tmp/a/mla-a-cal-0.safetensors"
h0=$(printf '%s\n' "$out" | sed -n 's/.*bytes, xxh3 \([0-9a-f]\{16\}\)$/\1/p')
[ -n "$h0" ]; ok $? "info prints the file's size and xxh3 hash"
cp "$tmp/a/mla-a-cal-0.safetensors" "$tmp/a/copy.safetensors"
run "$WZPLAN" trace info "$tmp/a/copy.safetensors" "$tmp/a/mla-a-cal-1.safetensors"
[ "$(printf '%s\n' "$out" | grep -c "xxh3 $h0")" -eq 1 ]
ok $? "the same bytes give the same hash, other bytes another"
run "$WZPLAN" trace info --format json "$tmp/a/mla-a-cal-0.safetensors"
expect_rc 0 "info --format json"
contains "$out" '"latent_rms"' "json rows"

for d in f32 f16; do
	run "$WZPLAN" trace synth-cache --family mla-b --layers 1 --tokens 16 --queries 0 \
		--calibration 1 --test 0 --dtype $d --out "$tmp/$d" --quiet
	expect_rc 0 "synth-cache --dtype $d"
done
s32=$(wc -c < "$tmp/f32/mla-b-cal-0.safetensors")
s16=$(wc -c < "$tmp/f16/mla-b-cal-0.safetensors")
[ "$s32" -gt "$s16" ]; ok $? "f32 files are larger than f16 ($s32 > $s16 bytes)"
run "$WZPLAN" trace info "$tmp/f16/mla-b-cal-0.safetensors"
contains "$out" "queries: none" "a window without queries"

run "$WZPLAN" trace info "$top_srcdir/data/sample-mla-a.safetensors"
expect_rc 0 "the sample trace reads"
contains "$out" "2 layers x 256 tokens" "the sample's shape"
# The sample is what the command in docs/cache-trace.md makes: a generator
# change that alters it must regenerate it (and bump the generator version).
run "$WZPLAN" trace synth-cache --family mla-a --seed 1 --layers 2 --tokens 256 \
	--queries 8 --heads 4 --calibration 1 --test 0 --dtype bf16 --out "$tmp/sample" --quiet
cmp -s "$tmp/sample/mla-a-cal-0.safetensors" "$top_srcdir/data/sample-mla-a.safetensors"
ok $? "data/sample-mla-a.safetensors is what its documented command writes"

# Bad input: exit 2, a message naming the file, nothing on standard output.
good="$tmp/a/mla-a-cal-0.safetensors"
head -c 1000 "$good" > "$tmp/truncated.safetensors"
run "$WZPLAN" trace info "$tmp/truncated.safetensors"
expect_rc 2 "a truncated file"
contains "$err" "truncated.safetensors" "the message names the file"
[ -z "$out" ]; ok $? "nothing on standard output"
printf '\377\377\377\377\0\0\0\0{}' > "$tmp/hlen.safetensors"
run "$WZPLAN" trace info "$tmp/hlen.safetensors"
expect_rc 2 "header length past the end"
contains "$err" "past the end" "the message says what is wrong"
run "$WZPLAN" trace info "$good" "$tmp/missing.safetensors"
expect_rc 2 "a missing file"
contains "$err" "missing.safetensors" "the message names the missing file"
run "$WZPLAN" trace info
expect_rc 2 "info without files"

# The fuzz corpus: valid-* files read, every other one is refused with
# exit 2 and a message naming it.
for f in "$top_srcdir"/tests/fuzz/corpus/cache_trace/*.safetensors; do
	name=$(basename "$f")
	run "$WZPLAN" trace info "$f"
	case "$name" in
	valid-*) expect_rc 0 "corpus $name reads" ;;
	*) expect_rc 2 "corpus $name refused"
	   contains "$err" "$name" "corpus $name: the message names the file" ;;
	esac
done

# Bad usage writes nothing.
for args in "--family mla-c" "--tokens 0" "--queries 100 --tokens 10" "--dtype f8" \
	"--calibration 0 --test 0" "--queries 0 --heads 4" "--layers x" "--bogus"; do
	run "$WZPLAN" trace synth-cache $args --out "$tmp/never"
	expect_rc 2 "synth-cache $args"
	[ ! -e "$tmp/never" ]; ok $? "synth-cache $args: nothing written"
done
run "$WZPLAN" trace synth-cache --layers 1
expect_rc 2 "synth-cache without --out"
contains "$err" "--out" "the message names --out"
run "$WZPLAN" trace frobnicate
expect_rc 2 "an unknown subcommand"

# A write that fails half-way leaves no window behind.
export WZ_FAULT_WRITE=2
run "$WZPLAN" trace synth-cache $small --calibration 2 --test 1 --out "$tmp/fault" --quiet
unset WZ_FAULT_WRITE
expect_rc 1 "a failed write fails the command"
[ -z "$(ls -A "$tmp/fault" 2>/dev/null)" ]; ok $? "no window is left after a failed write"

run "$WZPLAN" trace synth-cache --help
expect_rc 0 "synth-cache --help"
contains "$out" "Student-t (nu = 6" "help describes mla-a"
contains "$out" "mla-b  as mla-a with eigenvalues proportional to k^-1.0, nu = 4" "help describes mla-b"
contains "$out" "iid    all R + P values independent" "help describes iid"
done_testing
