#!/bin/sh
# Replays the servegen fuzz corpus through its fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_servegen" "$top_srcdir/tests/fuzz/corpus/servegen"
