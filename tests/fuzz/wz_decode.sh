#!/bin/sh
# Replays the wz decoder's fuzz corpus through the fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_wz_decode" "$top_srcdir/tests/fuzz/corpus/wz_decode"
