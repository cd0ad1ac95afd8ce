#!/bin/sh
# Replays the sweep file fuzz corpus through its fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_sweep" "$top_srcdir/tests/fuzz/corpus/sweep"
