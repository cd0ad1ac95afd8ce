#!/bin/sh
# The GPU step in one command, for a machine with an NVIDIA GPU and the CUDA
# toolkit: build the kernels' test and benchmark (or use prebuilt ones), run
# the bit-exactness checks and the benchmarks, and write one results file
# (docs/gpu-results.md).  Exits non-zero if a check or a step fails.
#
#   tests/gpu/run.sh [--quick] [RESULTS]
#       RESULTS defaults to $OUT/gpu-results.csv when OUT is set, else
#       ./gpu-results.csv; a log of everything goes beside it (.log).
#   tests/gpu/run.sh --build-only
#       on any machine with nvcc (no GPU needed): builds both programs
#       into gpu-bin/, the external libraries linked statically, so that
#       a GPU machine without the project's packages runs them at once.
#
# Without gpu-bin/ (or when its programs cannot run here, or were built for
# another GPU architecture) it configures and builds in build-gpu/ (or
# $WZ_GPU_BUILD_DIR, which may be an already configured tree), which
# needs what ./setup.sh lists plus nvcc.  Meant to finish within 5 minutes
# on one H100/H200 with gpu-bin/ present.
set -u
cd "$(dirname "$0")/../.." || exit 1
root=$(pwd)
mode=run
quick=
results=
for a in "$@"; do
	case "$a" in
	--build-only) mode=build ;;
	--quick) quick=--quick ;;
	-*) echo "usage: $0 [--quick] [RESULTS] | --build-only" >&2; exit 2 ;;
	*) results=$a ;;
	esac
done
[ -n "$results" ] || results=${OUT:+$OUT/}gpu-results.csv
log=${results%.csv}.log

say() { echo "run.sh: $*" >&2; }

find_nvcc() {
	for n in "${NVCC:-}" /usr/local/cuda/bin/nvcc "$(command -v nvcc 2>/dev/null)"; do
		[ -n "$n" ] && [ -x "$n" ] && { echo "$n"; return 0; }
	done
	return 1
}

# sm_XY of GPU 0, or sm_90 when none answers.
gpu_arch() {
	cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
	echo "sm_${cc:-90}"
}

# Builds both programs for architecture $1 in build-gpu/ and copies them
# (with the commit they come from) to gpu-bin/.
build() {
	arch=$1
	nvcc=$(find_nvcc) || { say "nvcc not found (set NVCC or install the CUDA toolkit)"; return 1; }
	missing=
	for t in make gcc pkg-config; do command -v "$t" >/dev/null 2>&1 || missing="$missing $t"; done
	[ -x configure ] || command -v autoreconf >/dev/null 2>&1 || missing="$missing autoreconf"
	if [ -n "$missing" ]; then
		say "missing tools:$missing (./setup.sh lists the packages)"
		return 1
	fi
	[ -x configure ] || autoreconf -fi >&2 || return 1
	bdir=${WZ_GPU_BUILD_DIR:-build-gpu}
	mkdir -p "$bdir" && cd "$bdir" || return 1
	if [ ! -f Makefile ] || [ "$root/configure" -nt Makefile ] || ! grep -q "^CUDA_ARCH = $arch\$" Makefile; then
		"$root/configure" -q --with-cuda="$(dirname "$(dirname "$nvcc")")" CUDA_ARCH="$arch" >&2 || return 1
	fi
	# only the C libraries' archives, so the programs need nothing at run
	# time that a CUDA machine lacks
	# (archives by path: nvcc moves -l options past -Xlinker -Bstatic)
	static=
	for l in sqlite3 jansson xxhash zstd csv; do
		a=$(gcc -print-file-name="lib$l.a")
		[ "$a" != "lib$l.a" ] && [ -f "$a" ] && static="$static $a" || static="$static -l$l"
	done
	static="$static -lm -lpthread -ldl"
	jobs=$(nproc 2>/dev/null || echo 2)
	rm -f tests/gpu/test_wz_gpu bench/gpu/bench_gpu
	make -j"$jobs" tests/gpu/test_wz_gpu bench/gpu/bench_gpu WZ_GPU_EXTERNAL_LIBS="$static" >&2 ||
		make -j"$jobs" tests/gpu/test_wz_gpu bench/gpu/bench_gpu >&2 || return 1
	cd "$root" || return 1
	mkdir -p gpu-bin
	cp "$bdir/tests/gpu/test_wz_gpu" "$bdir/bench/gpu/bench_gpu" gpu-bin/ || return 1
	{
		echo "commit $(git describe --always --dirty 2>/dev/null || echo unknown)"
		echo "arch $arch"
		echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	} > gpu-bin/BUILD
	say "built gpu-bin/ for $arch"
}

runnable() {
	[ -x gpu-bin/test_wz_gpu ] && [ -x gpu-bin/bench_gpu ] || return 1
	grep -q "^arch $1\$" gpu-bin/BUILD 2>/dev/null || return 1
	! ldd gpu-bin/test_wz_gpu gpu-bin/bench_gpu 2>/dev/null | grep -q "not found"
}

if [ "$mode" = build ]; then
	build "${CUDA_ARCH:-sm_90}"
	exit $?
fi

start=$(date +%s)
mkdir -p "$(dirname "$results")"
: > "$log"
arch=$(gpu_arch)
if ! runnable "$arch"; then
	say "no runnable gpu-bin/ for $arch: building (see $log)"
	build "$arch" >> "$log" 2>&1 || { say "build failed; the end of $log:"; tail -n 30 "$log" >&2; exit 1; }
fi
{
	echo "# wzplan GPU results, version 1 (docs/gpu-results.md)"
	echo "kind,format,op,batch,context,heads,value,unit,note"
} > "$results"
row() { echo "$1,,$2,,,,$3,$4,$5" | tr -d '\r' >> "$results"; }
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1 | tr ',' ';')
row env gpu 1 name "${gpu:-unknown}"
row env arch 1 name "$arch"
row env build 1 name "$(tr '\n' ';' < gpu-bin/BUILD)"
row env date 1 name "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
export WZ_GPU_RESULTS="$root/$results"
case "$results" in /*) WZ_GPU_RESULTS=$results ;; esac

status=0
say "GPU checks (bit-exactness against the C reference)"
timeout 150 gpu-bin/test_wz_gpu >> "$log" 2>&1
st=$?
[ "$st" -eq 0 ] || { say "test_wz_gpu exited $st"; status=1; }
[ "$st" -eq 77 ] && say "no CUDA device answered"
say "benchmarks"
timeout 240 gpu-bin/bench_gpu $quick >> "$log" 2>&1
st=$?
[ "$st" -eq 0 ] || { say "bench_gpu exited $st"; status=1; }
npass=$(grep -c '^check,.*,pass,' "$results")
nfail=$(grep -c '^check,.*,FAIL,' "$results")
row summary checks "$npass" passed ""
row summary checks "$nfail" failed ""
row summary seconds "$(( $(date +%s) - start ))" s "wall time of run.sh"
[ "$nfail" -eq 0 ] || status=1
[ "$npass" -gt 0 ] || status=1
say "$npass checks passed, $nfail failed; results in $results"
exit $status
