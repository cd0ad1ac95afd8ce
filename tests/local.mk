# tests/: unit tests per module, CLI tests, fuzz corpora replays, GPU tests.
# Every test prints TAP; each folder lists its own tests in its local.mk.
EXTRA_DIST += tests/tap.h tests/cli/lib.sh
TEST_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
TEST_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
include tests/common/local.mk
include tests/costmodel/local.mk
include tests/codec/local.mk
include tests/cli/local.mk
include tests/fuzz/local.mk
include tests/traces/local.mk
include tests/traffic/local.mk
include tests/sim/local.mk
include tests/archive/local.mk
include tests/sweep/local.mk
include tests/plots/local.mk
include tests/capture/local.mk
include tests/gpu/local.mk
