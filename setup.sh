#!/bin/sh
# Sets wzplan up on Debian 12 and runs one job.  As root it installs the
# Debian packages that are missing; then it configures and builds.
#
#   ./setup.sh propose   build, then `wzplan propose` on the embedded default
#                        scenario, writing ./wzplan-out/
#   ./setup.sh check     build, then run the whole test suite (make check)
#   ./setup.sh build     build only
set -eu
cd "$(dirname "$0")"
job=${1:-build}
case "$job" in propose|check|build) ;; *) echo "usage: $0 propose|check|build" >&2; exit 2 ;; esac

deps="autoconf automake libtool make gcc libc6-dev pkg-config libcsv-dev libsqlite3-dev
      libjansson-dev libxxhash-dev libzstd-dev gnuplot-nox sqlite3 python3 python3-venv
      libopenmpi-dev openmpi-bin libhtscodecs-dev"
missing=
for p in $deps; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup.sh: missing Debian packages:$missing (run as root, or install them)" >&2
		exit 1
	fi
	echo "setup.sh: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing >&2
fi

jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
	autoreconf -fi >&2
fi
if [ ! -f Makefile ] || [ configure -nt Makefile ]; then
	./configure ${WZPLAN_CONFIGURE_FLAGS:-} >&2
fi
make -j"$jobs" >&2

case "$job" in
propose) ./wzplan propose --out wzplan-out ;;
check)
	# The Python tools' tests (tests/capture/) run in a virtual environment;
	# without one (no network) they are skipped, the C tests still run.
	traces/capture/venv.sh || echo "setup.sh: could not make the Python environment; its tests will be skipped" >&2
	make -j"$jobs" check ;;
build) ;;
esac
