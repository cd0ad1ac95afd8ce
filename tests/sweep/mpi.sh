#!/bin/sh
# mpirun -np N wzplan sweep: the points dealt out over MPI ranks give the
# same figures, byte for byte, as --jobs 1; a resumed MPI sweep runs only
# the missing points.  Skipped without mpirun or without MPI in this build.
. "$top_srcdir/tests/cli/lib.sh"
export WZ_GNUPLOT=none
W="$WZPLAN"
if ! command -v mpirun >/dev/null 2>&1; then
	# exit 77 is automake's skip; under the TAP driver the skip is the plan.
	echo "1..0 # SKIP mpirun not found (Debian: openmpi-bin)"
	rm -rf "$tmp"
	exit 0
fi
if ! "$W" sweep --help | grep -q "MPI in this build: yes"; then
	echo "1..0 # SKIP this wzplan was built without MPI (configure --with-mpi)"
	rm -rf "$tmp"
	exit 0
fi
# Open MPI refuses root unless told; CI containers run as root.
if [ "$(id -u)" -eq 0 ]; then
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
# In a sanitizer build (configure --enable-sanitizers), LeakSanitizer finds
# Open MPI's own allocations never freed at exit (its plugins, unloaded by
# then): suppressed by library (tests/sweep/lsan-openmpi.supp), which needs
# full stacks to name them.  No effect on other builds.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$top_srcdir/tests/sweep/lsan-openmpi.supp:print_suppressions=0"
export ASAN_OPTIONS LSAN_OPTIONS
mpi() { mpirun --oversubscribe "$@"; }
S="$tmp/m.sweep"
cat > "$S" <<'END'
# 12 points, the simulated ones last on their axis
sweep = mpi-test
set.price_set = catalog
set.mode = memory
set.formats = fp8-mix, wz-5.44
set.warmup_s = 30
set.duration_s = 300
max_replicas = 32
axis.gpu = H100 SXM 80GB | H200 SXM
axis.users = 50 | 100 | 150
axis.simulate = no | yes
END
run "$W" sweep "$S" --jobs 1 --archive "$tmp/j1.sqlite" -q
expect_rc 0 "sweep --jobs 1"
"$W" sweep results "$S" --archive "$tmp/j1.sqlite" > "$tmp/j1.csv"
run mpi -np 2 "$W" sweep "$S" --archive "$tmp/n2.sqlite"
expect_rc 0 "mpirun -np 2 wzplan sweep"
contains "$err" "12 to run on 1 MPI rank" "rank 0 deals the points to the other rank"
contains "$err" "12 points archived, 0 failed" "every point archived"
"$W" sweep results "$S" --archive "$tmp/n2.sqlite" > "$tmp/n2.csv"
cmp -s "$tmp/j1.csv" "$tmp/n2.csv"; ok $? "mpirun -np 2: the same figures as --jobs 1, byte for byte"
run mpi -np 3 "$W" sweep "$S" --archive "$tmp/n3.sqlite" -q
expect_rc 0 "mpirun -np 3 (two ranks taking points as they come free)"
"$W" sweep results "$S" --archive "$tmp/n3.sqlite" > "$tmp/n3.csv"
cmp -s "$tmp/j1.csv" "$tmp/n3.csv"; ok $? "mpirun -np 3: the same figures"
# Resume: half the points there (one shard), the rest run over MPI.
"$W" sweep "$S" --shard 1/2 --archive "$tmp/r.sqlite" -q
have=$("$W" sweep results "$S" --archive "$tmp/r.sqlite" 2>/dev/null | cut -d, -f1 | sort -u | grep -c '^[0-9]')
run mpi -np 2 "$W" sweep "$S" --archive "$tmp/r.sqlite"
expect_rc 0 "an MPI sweep resumed"
contains "$err" "$have already in" "skips the $have points already archived"
"$W" sweep results "$S" --archive "$tmp/r.sqlite" > "$tmp/r.csv"
cmp -s "$tmp/j1.csv" "$tmp/r.csv"; ok $? "resumed over MPI: the same figures"
python3 -c 'import sqlite3,sys
c=sqlite3.connect(sys.argv[1])
n=[r[0] for r in c.execute("SELECT count(*) FROM inputs WHERE kind=\"sweep\" AND name=\"point\" GROUP BY content")]
sys.exit(0 if len(n)==12 and set(n)=={1} else 1)' "$tmp/r.sqlite"
ok $? "every point archived exactly once"
done_testing
