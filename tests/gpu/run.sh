#!/bin/sh
# The GPU checks in one step, for a machine with an NVIDIA GPU and the CUDA
# toolkit: configure with CUDA, build, run the kernel tests against the C
# reference, and write the results to RESULTS (default gpu-results.txt;
# $OUT/gpu-results.txt when OUT is set).  Exits non-zero if a check fails.
set -u
cd "$(dirname "$0")/../.." || exit 1
results=${1:-${OUT:+$OUT/}gpu-results.txt}
{
	echo "# wzplan GPU checks, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
	[ -x configure ] || autoreconf -fi
	mkdir -p build-gpu && cd build-gpu || exit 1
	../configure -q --with-cuda && make -j"$(nproc)" >/dev/null && make tests/gpu/test_wz_gpu >/dev/null || exit 1
	./tests/gpu/test_wz_gpu
} > "$results" 2>&1
status=$?
cat "$results"
grep -q '^not ok' "$results" && exit 1
exit $status
