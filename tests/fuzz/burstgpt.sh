#!/bin/sh
# Replays the burstgpt fuzz corpus through its fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_burstgpt" "$top_srcdir/tests/fuzz/corpus/burstgpt"
