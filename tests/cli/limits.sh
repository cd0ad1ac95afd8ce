#!/bin/sh
# No input makes wzplan crash, hang or allocate without bound: a file that
# shrinks while read, windows that repeat forever, counts too large to
# draw.  Each case runs under a time limit and must end with exit 0 or a
# clear exit 2, never a signal or a timeout.
. "$top_srcdir/tests/cli/lib.sh"
cd "$tmp" || exit 1

# bounded CMD...: runs with a 60 s limit; $rc 124 means it hung.
bounded() { run timeout 60 "$@"; }

# 4. A cache trace truncated while it is read.
python3 - big.safetensors <<'PY'
import json, struct, sys
L, T, R, P = 61, 8192, 512, 64
lat, rope = L * T * R * 2, L * T * P * 2
hdr = json.dumps({"__metadata__": {"format": "wz-cache-trace", "version": "1", "split": "test",
                                   "model": "m", "window": "w", "source": "synthetic:test"},
                  "latent": {"dtype": "BF16", "shape": [L, T, R], "data_offsets": [0, lat]},
                  "rope": {"dtype": "BF16", "shape": [L, T, P], "data_offsets": [lat, lat + rope]}}).encode()
hdr += b" " * (-len(hdr) % 8)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<Q", len(hdr)) + hdr)
    f.truncate(8 + len(hdr) + lat + rope)
PY
"$WZPLAN" trace info big.safetensors > /dev/null 2> shrink.err &
pid=$!
sleep 0.3
truncate -s 100000 big.safetensors
wait $pid
rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 2 ]; ok $? "a trace truncated while read: exit 0 or 2, no signal (exit $rc)"
[ "$rc" -eq 0 ] || grep -q "big.safetensors" shrink.err; ok $? "and an error names the file"
bounded "$WZPLAN" trace info big.safetensors
expect_rc 2 "the truncated trace is bad input"
contains "$err" "big.safetensors" "named in the message"
rm -f big.safetensors

# 5 and 6. ServeGen windows.
mkdir sg
printf '{"0": {"input_tokens": "{10: 1.0}", "output_tokens": "{3: 1.0}"}}' > sg/chunk-0-dataset.json
printf '0,0,0,,0,0\n1e-20,0,0,,0,0\n' > sg/chunk-0-trace.csv
bounded "$WZPLAN" traffic import --from servegen sg --duration 60 --out o.csv
expect_rc 2 "windows 1e-20 s apart do not loop forever"
contains "$err" "chunk-0-trace.csv:2: field window start" "the message names file, line and field"
printf '0,1e9,1,Gamma,1,0.5\n' > sg/chunk-0-trace.csv
bounded "$WZPLAN" traffic import --from servegen sg --out o.csv
expect_rc 2 "a rate of 1e9 per second is refused before drawing"
contains "$err" "chunk-0-trace.csv:1: field rate" "naming the field"
printf '0,1,1e-300,,0,0\n100,0,0,,0,0\n' > sg/chunk-0-trace.csv
bounded "$WZPLAN" traffic import --from servegen sg --duration 60 --out o.csv
expect_rc 2 "a CV of 1e-300 (a shape of 1e600) is refused"
contains "$err" "chunk-0-trace.csv:1: field cv" "naming the field"
printf '0,1,1,,0,0\n100,0,0,,0,0\n' > sg/chunk-0-trace.csv
bounded "$WZPLAN" traffic import --from servegen sg --duration 1e15 --out o.csv
expect_rc 2 "a duration of 1e15 s over a 200 s period is refused"
bounded "$WZPLAN" traffic import --from servegen sg --duration 600 --out o.csv
expect_rc 0 "an ordinary client still samples"
[ ! -e o.csv.tmp* ] 2>/dev/null; ok $? "no temporary file left"

# A scenario asking for a sample every microsecond.
sed 's/^occupancy_interval_s.*//' "$top_srcdir/data/scenarios/product-page.scenario" > occ.scenario
echo 'occupancy_interval_s = 1e-6' >> occ.scenario
line=$(wc -l < occ.scenario)
bounded "$WZPLAN" sim --replicas 1 --scenario occ.scenario
expect_rc 2 "an occupancy sample every 1e-6 s is refused"
contains "$err" "occ.scenario:$line: occupancy_interval_s" "naming file, line and key"

cd / && done_testing
