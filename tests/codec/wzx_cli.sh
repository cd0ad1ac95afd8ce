#!/bin/sh
# wzplan codec pack/unpack and measure with wzx: bytes counted from the
# container, exact restore to the wz GPU tier, random access, and damaged
# containers refused with exit 2 and the block named.
. "$top_srcdir/tests/cli/lib.sh"

small="--layers 2 --tokens 200 --queries 4 --heads 4 --quiet"
run $WZPLAN trace synth-cache --family mla-b --seed 3 $small --calibration 1 --test 1 --out "$tmp/t"
expect_rc 0 "synthetic traces"
cal="$tmp/t/mla-b-cal-0.safetensors"
test="$tmp/t/mla-b-test-0.safetensors"
run $WZPLAN codec prepare --trace "$cal" --out "$tmp/p.wzp"
expect_rc 0 "prepare"

run $WZPLAN codec measure --trace "$test" --profile "$tmp/p.wzp" --formats wz-5.44,wzx-5.4 --boot 20
expect_rc 0 "measure accepts wzx"
contains "$out" "wzx-5.4" "a wzx row"

run $WZPLAN codec pack --trace "$test" --profile "$tmp/p.wzp" --grid wz-5.44 --out "$tmp/g.wzx"
expect_rc 0 "pack the wz-5.44 tier"
contains "$out" "grid 391 bytes/token/layer" "the grid is wz-5.44's record"
contains "$out" "bits/value (payload" "bits and payload reported"
run $WZPLAN codec unpack --in "$tmp/g.wzx" --profile "$tmp/p.wzp" --out "$tmp/g.rec"
expect_rc 0 "unpack to wz records"
[ "$(wc -c < "$tmp/g.rec")" -eq $((2 * 200 * 391)) ]; ok $? "2 x 200 records of 391 bytes"
run $WZPLAN codec unpack --in "$tmp/g.wzx" --profile "$tmp/p.wzp" --out "$tmp/b.bf16" --to bf16 --layer 1 --block 3
expect_rc 0 "one block by random access, as bf16"
[ "$(wc -c < "$tmp/b.bf16")" -eq $((8 * 576 * 2)) ]; ok $? "the last block holds 8 tokens"
# The profile is version 5 (a checksum per layer): one block reads its
# layer alone, so damage in layer 0 does not stop a block of layer 1, and
# is found by whatever reads layer 0.
[ "$(od -An -t u1 -j 8 -N 1 "$tmp/p.wzp" | tr -d ' ')" -eq 5 ]; ok $? "prepare writes profile version 5"
mlen=$(od -An -t u4 -j 36 -N 4 "$tmp/p.wzp" | tr -d ' ')
cp "$tmp/p.wzp" "$tmp/d.wzp"
printf 'Z' | dd of="$tmp/d.wzp" bs=1 seek=$((48 + (mlen + 3) / 4 * 4 + 2 * 8 + 1000)) conv=notrunc 2>/dev/null
run $WZPLAN codec unpack --in "$tmp/g.wzx" --profile "$tmp/d.wzp" --out "$tmp/b2.bf16" --to bf16 --layer 1 --block 3
expect_rc 0 "one block of layer 1 with layer 0 of the profile damaged"
cmp -s "$tmp/b.bf16" "$tmp/b2.bf16"; ok $? "the same bytes as with the sound profile"
run $WZPLAN codec unpack --in "$tmp/g.wzx" --profile "$tmp/d.wzp" --out "$tmp/b3.bf16" --to bf16 --layer 0 --block 0
expect_rc 2 "a block of the damaged layer exits 2"
contains "$err" "d.wzp: layer 0: checksum mismatch" "the message names the profile's layer"
run $WZPLAN codec unpack --in "$tmp/g.wzx" --profile "$tmp/d.wzp" --out "$tmp/d.rec"
expect_rc 2 "every block with the damaged profile exits 2"
[ ! -e "$tmp/d.rec" ] && [ ! -e "$tmp/b3.bf16" ]; ok $? "nothing written"

# One byte of the second block's payload changed: its checksum names it.
cp "$tmp/g.wzx" "$tmp/c.wzx"
off=$(od -An -t u8 -j $(( $(wc -c < "$tmp/g.wzx") - 24 - 8 * 16 + 16 )) -N 8 "$tmp/g.wzx" | tr -d ' ')
printf 'Z' | dd of="$tmp/c.wzx" bs=1 seek=$((off + 40)) conv=notrunc 2>/dev/null
run $WZPLAN codec unpack --in "$tmp/c.wzx" --profile "$tmp/p.wzp" --out "$tmp/c.rec"
expect_rc 2 "a damaged block exits 2"
contains "$err" "block 1 (layer 0, tokens 64..127): checksum mismatch" "the message names the block"
[ ! -e "$tmp/c.rec" ]; ok $? "nothing written"

# A header byte changed.
cp "$tmp/g.wzx" "$tmp/h.wzx"
printf '\003' | dd of="$tmp/h.wzx" bs=1 seek=16 conv=notrunc 2>/dev/null
run $WZPLAN codec unpack --in "$tmp/h.wzx" --profile "$tmp/p.wzp" --out "$tmp/h.rec"
expect_rc 2 "a damaged header exits 2"
contains "$err" "header checksum mismatch" "the message says so"

# Another profile.
run $WZPLAN trace synth-cache --family mla-a --seed 3 $small --calibration 1 --test 0 --out "$tmp/a"
run $WZPLAN codec prepare --trace "$tmp/a/mla-a-cal-0.safetensors" --out "$tmp/q.wzp"
run $WZPLAN codec unpack --in "$tmp/g.wzx" --profile "$tmp/q.wzp" --out "$tmp/q.rec"
expect_rc 2 "a container with another profile exits 2"
contains "$err" "another profile" "the message says so"
# Threads: the same bytes for any count, for every output; the lowest
# damaged block is the one named whatever thread finds a damaged block first.
for to in wz transformed bf16; do
	run $WZPLAN codec unpack --in "$tmp/g.wzx" --profile "$tmp/p.wzp" --out "$tmp/$to.1" --to $to --threads 1
	expect_rc 0 "unpack --to $to on one thread"
	run $WZPLAN codec unpack --in "$tmp/g.wzx" --profile "$tmp/p.wzp" --out "$tmp/$to.3" --to $to --threads 3
	expect_rc 0 "unpack --to $to on three threads"
	cmp -s "$tmp/$to.1" "$tmp/$to.3"; ok $? "--to $to: the same bytes on 1 and 3 threads"
done
[ "$(wc -c < "$tmp/transformed.1")" -eq $((2 * 200 * 576 * 4)) ]; ok $? "transformed: 2 x 200 x 576 float32"
cmp -s "$tmp/wz.1" "$tmp/g.rec"; ok $? "--threads 1 gives what the default gives"
off5=$(od -An -t u8 -j $(( $(wc -c < "$tmp/g.wzx") - 24 - 8 * 16 + 5 * 16 )) -N 8 "$tmp/g.wzx" | tr -d ' ')
printf 'Z' | dd of="$tmp/c.wzx" bs=1 seek=$((off5 + 40)) conv=notrunc 2>/dev/null
run $WZPLAN codec unpack --in "$tmp/c.wzx" --profile "$tmp/p.wzp" --out "$tmp/c.rec" --threads 4
expect_rc 2 "two damaged blocks on four threads exit 2"
contains "$err" "block 1 (layer 0, tokens 64..127)" "the lowest damaged block is named"
# --out - is standard output: the same bytes as a file, the summary on
# standard error, no file named "-" left behind
(cd "$tmp" && $WZPLAN codec unpack --in g.wzx --profile p.wzp --out - --to bf16 > so.bf16 2> so.err)
ok $? "unpack --out - exits 0"
cmp -s "$tmp/so.bf16" "$tmp/bf16.1"; ok $? "--out -: the bytes of --out FILE"
grep -q "standard output: 2 layers x 200 tokens as bf16" "$tmp/so.err"; ok $? "--out -: the summary on standard error"
[ ! -e "$tmp/-" ]; ok $? "--out -: no file named -"
(cd "$tmp" && $WZPLAN codec pack --trace "$test" --profile p.wzp --grid wz-5.44 --out - > so.wzx 2> so.err)
ok $? "pack --out - exits 0"
cmp -s "$tmp/so.wzx" "$tmp/g.wzx"; ok $? "pack --out -: the container of --out FILE"
run $WZPLAN codec unpack --in "$tmp/g.wzx" --profile "$tmp/p.wzp" --out "$tmp/x" --threads 0
expect_rc 2 "--threads 0 is refused"
# pack on many threads, run by run: the same container for any count
for th in 1 3 7; do
	run $WZPLAN codec pack --trace "$test" --profile "$tmp/p.wzp" --grid wz-5.44 --out "$tmp/g$th.wzx" --threads $th
	expect_rc 0 "pack on $th thread(s)"
	cmp -s "$tmp/g$th.wzx" "$tmp/g.wzx"; ok $? "pack --threads $th: the same bytes as the default"
done
contains "$out" "; 7 threads)" "pack names its thread count"
# a session of several runs (66 blocks; 16 blocks a thread per run): the
# same container whatever the runs' boundaries
run $WZPLAN trace synth-cache --family mla-b --seed 3 --layers 2 --tokens 2100 --queries 0 --quiet --calibration 0 --test 1 --out "$tmp/long"
expect_rc 0 "a longer synthetic session"
for th in 1 2 5; do
	run $WZPLAN codec pack --trace "$tmp/long/mla-b-test-0.safetensors" --profile "$tmp/p.wzp" --rate 5.4 --out "$tmp/long$th.wzx" --threads $th
	expect_rc 0 "pack 66 blocks on $th thread(s)"
done
cmp -s "$tmp/long1.wzx" "$tmp/long2.wzx" && cmp -s "$tmp/long1.wzx" "$tmp/long5.wzx"
ok $? "66 blocks in runs of 16, 32 and 80: the same container"
run $WZPLAN codec unpack --in "$tmp/long1.wzx" --profile "$tmp/p.wzp" --out "$tmp/long1.rec" --threads 1
expect_rc 0 "unpack 66 blocks on one thread (runs of 4)"
run $WZPLAN codec unpack --in "$tmp/long1.wzx" --profile "$tmp/p.wzp" --out "$tmp/long3.rec" --threads 3
expect_rc 0 "unpack 66 blocks on three threads (runs of 12)"
cmp -s "$tmp/long1.rec" "$tmp/long3.rec"; ok $? "66 blocks: the same records on 1 and 3 threads"
# pack reads the trace a block at a time: a truncated trace is refused on
# opening, a damaged value in the last layer when its block is read; either
# way exit 2, the file and field named, and no output (an old one kept).
tsize=$(wc -c < "$test")
head -c $((tsize - 100)) "$test" > "$tmp/short.safetensors"
run $WZPLAN codec pack --trace "$tmp/short.safetensors" --profile "$tmp/p.wzp" --grid wz-5.44 --out "$tmp/s.wzx"
expect_rc 2 "pack of a truncated trace exits 2"
contains "$err" "short.safetensors: tensor" "the message names the file and the tensor"
[ ! -e "$tmp/s.wzx" ] && [ -z "$(ls "$tmp" | grep 's.wzx.tmp')" ]; ok $? "no output and no temporary file"
# a bf16 NaN (0x7fc0) at the last token of layer 1, channel 0 of latent
hl=$(od -An -t u8 -N 8 "$test" | tr -d ' ')
lat=$(dd if="$test" bs=1 skip=8 count="$hl" 2>/dev/null | sed 's/.*"latent":{[^}]*"data_offsets":\[\([0-9]*\),.*/\1/')
cp "$test" "$tmp/nan.safetensors"
printf '\300\177' | dd of="$tmp/nan.safetensors" bs=1 seek=$((8 + hl + lat + 2 * (399 * 512))) conv=notrunc 2>/dev/null
echo "an older container" > "$tmp/n.wzx"
run $WZPLAN codec pack --trace "$tmp/nan.safetensors" --profile "$tmp/p.wzp" --grid wz-5.44 --out "$tmp/n.wzx" --threads 3
expect_rc 2 "pack of a trace with a NaN in its last block exits 2"
contains "$err" "nan.safetensors: tensor 'latent': NaN at layer 1, token 199, channel 0" "the message names file, tensor, layer, token and channel"
[ "$(cat "$tmp/n.wzx")" = "an older container" ] && [ -z "$(ls "$tmp" | grep 'n.wzx.tmp')" ]; ok $? "the old output is kept, no temporary file left"
run $WZPLAN codec pack --trace "$test" --profile "$tmp/p.wzp" --grid wz-5.44 --out "$tmp/g0.wzx" --threads 0
expect_rc 2 "pack --threads 0 is refused"
[ ! -e "$tmp/g0.wzx" ]; ok $? "a refused pack writes nothing"
run $WZPLAN codec pack --trace "$test" --profile "$tmp/p.wzp" --rate 5.4 --grid wz-5.44 --out "$tmp/both.wzx"
expect_rc 2 "pack with --rate and --grid"
contains "$err" "drop --rate to pack wz-5.44's records, or drop --grid" "the message says which one to drop"
[ ! -e "$tmp/both.wzx" ]; ok $? "nothing written"
# --rate fits the grid on a sample of the trace's blocks: what it writes is
# at most the rate; --rate-fit profile takes the profile's grid unchecked
run $WZPLAN codec pack --trace "$tmp/long/mla-b-test-0.safetensors" --profile "$tmp/p.wzp" --rate 5.4 --out "$tmp/fit.wzx"
expect_rc 0 "pack --rate 5.4"
contains "$out" "--rate 5.4: the profile's grid" "the fit is reported"
written=$(echo "$out" | sed -n 's/.* bytes = \([0-9.]*\) bits\/value.*/\1/p')
awk -v w="$written" 'BEGIN { exit !(w > 0 && w <= 5.4) }'; ok $? "it writes at most 5.4 bits/value ($written)"
run $WZPLAN codec pack --trace "$tmp/long/mla-b-test-0.safetensors" --profile "$tmp/p.wzp" --rate 5.4 --rate-fit profile --out "$tmp/prof.wzx"
expect_rc 0 "pack --rate 5.4 --rate-fit profile"
pgrid=$(echo "$out" | sed -n 's/.*grid \([0-9]*\) bytes\/token\/layer.*/\1/p')
[ -n "$pgrid" ] && ! echo "$out" | grep -q "the profile's grid"; ok $? "no fit with --rate-fit profile (grid $pgrid)"
run $WZPLAN codec pack --trace "$test" --profile "$tmp/p.wzp" --rate 5.4 --rate-fit guess --out "$tmp/bad.wzx"
expect_rc 2 "--rate-fit guess is refused"
contains "$err" "--rate-fit: 'guess': use sample or profile" "the message names the choices"
run $WZPLAN codec pack --trace "$test" --profile "$tmp/p.wzp" --grid wz-5.44 --rate-fit profile --out "$tmp/bad.wzx"
expect_rc 2 "--rate-fit with --grid is refused"
contains "$err" "drop it with --grid wz-5.44" "the message says which to drop"
[ ! -e "$tmp/bad.wzx" ]; ok $? "nothing written"
done_testing
