# The cache-trace reader's fuzz target (tests/fuzz/local.mk explains the
# pattern): a replay of tests/fuzz/corpus/cache_trace/ in `make check`, and
# with --enable-fuzzers a libFuzzer binary.  For coverage-guided fuzzing,
# configure the whole build with clang and instrumentation in a build folder
# of its own (docs/fuzzing.md), e.g.
#   ../configure --enable-fuzzers CC=clang \
#     CFLAGS='-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined'
#   make tests/fuzz/fuzz_cache_trace
#   tests/fuzz/fuzz_cache_trace -max_len=4096 ../tests/fuzz/corpus/cache_trace
check_PROGRAMS += tests/fuzz/replay_cache_trace
TESTS += tests/fuzz/cache_trace.sh
EXTRA_DIST += tests/fuzz/cache_trace.sh tests/fuzz/corpus/cache_trace \
	tests/fuzz/make_cache_trace_corpus.py
tests_fuzz_replay_cache_trace_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_cache_trace.c \
	tests/fuzz/fuzz_file.c
tests_fuzz_replay_cache_trace_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_cache_trace_LDADD = $(TEST_LDADD)
tests_fuzz_replay_cache_trace_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_cache_trace
tests_fuzz_fuzz_cache_trace_SOURCES = tests/fuzz/fuzz_cache_trace.c tests/fuzz/fuzz_file.c
tests_fuzz_fuzz_cache_trace_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_cache_trace_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_cache_trace_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_cache_trace_DEPENDENCIES = $(WZ_LIBS)
endif
