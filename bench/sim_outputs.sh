#!/bin/sh
# Writes the outputs of a fixed set of simulator runs into DIR, so that a
# change meant to make the simulator faster can be checked to leave every
# byte of them as it was:
#
#   bench/sim_outputs.sh before/      (on the old build)
#   bench/sim_outputs.sh after/       (on the new one)
#   diff -r before after
#
# The runs: the three idle policies, 100,000 users, disaggregated serving,
# a replay of a traffic table, the occupancy CSV, and `size` for two formats.
set -eu
: "${WZPLAN:=./wzplan}"
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
case $WZPLAN in /*) ;; *) WZPLAN=$(pwd)/$WZPLAN ;; esac
mkdir -p "$1"
cd "$1"   # file names in the outputs are then the same whatever DIR is
out=.
sim() { name=$1; shift; "$WZPLAN" sim --no-archive -q "$@" > "$out/$name.txt"; }

for policy in resident offload drop; do
	sim "$policy" --idle-policy "$policy" --duration 1800
done
sim offload-wz --idle-policy offload --format wz-5.44 --duration 1800 --seed 7
sim users100k --users 100k --idle-policy resident --duration 900 --warmup 30
cat > "$out/serving.scenario" <<'EOS'
model = DeepSeek-V3
gpu = H100 SXM 80GB
users = 2000
context = 32k
formats = fp8-mix, wz-5.44
gpus_per_replica = 16
mtp_acceptance = 0.7
prefill_gpus_per_replica = 16
expert_parallel = yes
prefix_cache_hbm_gib = 2
prefix_cache_cpu_gib = 16
pop_prefixes = 50
pop_prefix_tokens = 4096
pop_prefix_zipf = 1.1
EOS
sim serving --scenario "$out/serving.scenario" --duration 900 --idle-policy offload
sim disagg --scenario "$out/serving.scenario" --serving disaggregated --duration 900
sim occupancy --users 3000 --duration 900 --occupancy "$out/occupancy.csv"

# A replay: 3,000 sessions of three turns, arrivals over 20 minutes.
awk 'BEGIN { print "session,turn,arrival_s,prompt_tokens,output_tokens,reuse_tokens"
	for (i = 0; i < 3000; i++) {
		t = i * 0.4
		printf "%d,0,%.1f,%d,%d,0\n", i, t, 2000 + (i * 37) % 6000, 100 + (i * 13) % 400
	}
	for (i = 0; i < 3000; i++)
		printf "%d,1,%.1f,%d,%d,%d\n", i, 1200 + i * 0.4, 300 + (i * 7) % 900, 80 + i % 200, 2100
	for (i = 0; i < 3000; i++)
		printf "%d,2,%.1f,%d,%d,%d\n", i, 2400 + i * 0.4, 200, 50 + i % 100, 2500 }' \
	> "$out/traffic.csv"
sim replay --traffic "$out/traffic.csv" --replicas 4 --warmup 0
sim replay-offload --traffic "$out/traffic.csv" --replicas 3 --warmup 0 --idle-policy offload

"$WZPLAN" size --no-archive --max-replicas 200 -q --formats fp8-mix,wz-5.44 --users 1000 --context 16k --duration 900 \
	--threads 2 > "$out/size.txt"
