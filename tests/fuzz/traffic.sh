#!/bin/sh
# Replays the traffic fuzz corpus through its fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_traffic" "$top_srcdir/tests/fuzz/corpus/traffic"
