#!/bin/sh
# Replays the lengths fuzz corpus through its fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_lengths" "$top_srcdir/tests/fuzz/corpus/lengths"
