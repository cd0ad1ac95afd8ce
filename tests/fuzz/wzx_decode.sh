#!/bin/sh
# Replays the wzx container's fuzz corpus through the fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_wzx_decode" "$top_srcdir/tests/fuzz/corpus/wzx_decode"
