#!/bin/sh
# Sweep benchmark (printed, not timed as a test): a 288-point sweep (2
# models x 2 GPUs x 2 user counts x 6 contexts x 3 format lists x with and
# without simulation) run four ways: --jobs 1 (the reference), --jobs on
# every core, mpirun -np 2 (one rank dealing, one running) and two shards
# run one after the other and merged.  Prints each way's wall time beside
# the reference's, each shard's, and whether the four archives' figures
# are the same bytes.
: "${WZPLAN:=./wzplan}"
now() { date +%s.%N; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/wzplan-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export WZ_GNUPLOT=none
if [ "$(id -u)" -eq 0 ]; then
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
S="$tmp/big.sweep"
cat > "$S" <<'END'
sweep = bench-big
set.price_set = catalog
set.mode = memory
set.warmup_s = 30
set.duration_s = 300
max_replicas = 64
axis.model = DeepSeek-V3 | DeepSeek-V2-Lite
axis.gpu = H100 SXM 80GB | H200 SXM
axis.users = 50 | 100
axis.context = 4k .. 128k times 2
axis.formats = fp8-mix, wz-5.44 | fp8-mix, int4-g64 | fp8-mix, nvfp4, wz-6.31
axis.simulate = no | yes
END
ncpu=$(nproc 2>/dev/null || echo 2)
# The simulator's warnings (fleets that meet no target) go to $tmp/err;
# a way that fails prints them.
finished=
trap '[ -n "$finished" ] || tail -20 "$tmp/err" >&2 2>/dev/null; rm -rf "$tmp"' EXIT
t0=$(now); "$WZPLAN" sweep "$S" -q --jobs 1 --archive "$tmp/j1.sqlite" 2>> "$tmp/err" || exit 1
ref=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
echo "sweep: 288 points (144 simulated), --jobs 1 (reference): $ref s wall"
t0=$(now); "$WZPLAN" sweep "$S" -q --jobs "$ncpu" --archive "$tmp/jall.sqlite" 2>> "$tmp/err" || exit 1
w=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
awk -v w="$w" -v r="$ref" -v n="$ncpu" 'BEGIN { printf "sweep: --jobs %d: %.1f s wall (%.2fx the reference)\n", n, w, r / w }'
ways="j1 jall"
if command -v mpirun >/dev/null 2>&1 && "$WZPLAN" sweep --help | grep -q "MPI in this build: yes"; then
	t0=$(now); mpirun -np 2 --oversubscribe "$WZPLAN" sweep "$S" -q --archive "$tmp/mpi2.sqlite" 2>> "$tmp/err" || exit 1
	w=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
	awk -v w="$w" -v r="$ref" 'BEGIN { printf "sweep: mpirun -np 2: %.1f s wall (%.2fx the reference)\n", w, r / w }'
	ways="$ways mpi2"
else
	echo "sweep: mpirun -np 2: not run (no mpirun, or a build without MPI)"
fi
t0=$(now); "$WZPLAN" sweep "$S" -q --jobs 1 --shard 1/2 --archive "$tmp/s1.sqlite" 2>> "$tmp/err" || exit 1
t1=$(now); "$WZPLAN" sweep "$S" -q --jobs 1 --shard 2/2 --archive "$tmp/s2.sqlite" 2>> "$tmp/err" || exit 1
t2=$(now); "$WZPLAN" archive merge "$tmp/merged.sqlite" "$tmp/s1.sqlite" "$tmp/s2.sqlite" > /dev/null 2>&1 || exit 1
t3=$(now)
awk -v a="$t0" -v b="$t1" -v c="$t2" -v d="$t3" 'BEGIN {
	printf "sweep: two shards (--jobs 1 each): shard 1/2 %.1f s, shard 2/2 %.1f s wall (longer / shorter %.2f); merge %.1f s\n",
		b - a, c - b, (b - a > c - b ? (b - a) / (c - b) : (c - b) / (b - a)), d - c }'
ways="$ways merged"
for a in $ways; do
	"$WZPLAN" sweep results "$S" --archive "$tmp/$a.sqlite" > "$tmp/$a.csv" || exit 1
done
same=yes
for a in $ways; do cmp -s "$tmp/j1.csv" "$tmp/$a.csv" || same=no; done
echo "sweep: figures of $(echo $ways | wc -w) archives ($ways), $(wc -l < "$tmp/j1.csv") lines each: the same bytes: $same"
finished=1
[ "$same" = yes ]
