#!/bin/sh
# Replays the mooncake fuzz corpus through its fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_mooncake" "$top_srcdir/tests/fuzz/corpus/mooncake"
