# tests/fuzz/: libFuzzer targets (built with --enable-fuzzers and clang) and
# their corpora, replayed by `make check` through tests/fuzz/replay.c.
# A target FOO is fuzz_FOO.c defining LLVMFuzzerTestOneInput; its corpus is
# tests/fuzz/corpus/FOO/.  Each target adds a replay program and a test:
#   check_PROGRAMS += tests/fuzz/replay_FOO
#   tests_fuzz_replay_FOO_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_FOO.c
#   (CFLAGS/LDADD as below) and a tests/fuzz/FOO.sh that runs it on the corpus.
# A libFuzzer binary's _LDFLAGS keep $(AM_LDFLAGS) (-static): without it
# libtool links the shared libwzplan, which exports only the public wz_
# API, and the codec's internal symbols are missing.  docs/fuzzing.md has
# the configure recipe, the commands and the measured rates.
EXTRA_DIST += tests/fuzz/replay.c
include tests/fuzz/cache_trace.mk
include tests/fuzz/codec.mk
include tests/fuzz/wzx.mk
include tests/fuzz/readers.mk
