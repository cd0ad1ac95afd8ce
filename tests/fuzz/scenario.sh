#!/bin/sh
# Replays the scenario fuzz corpus through its fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_scenario" "$top_srcdir/tests/fuzz/corpus/scenario"
