#!/bin/sh
# Replays the live-KL summary fuzz corpus through its fuzz target (TAP).
exec "$top_builddir/tests/fuzz/replay_live_kl" "$top_srcdir/tests/fuzz/corpus/live_kl"
