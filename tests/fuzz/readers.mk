# Fuzz targets for the readers of text inputs: scenarios, catalogs, the
# normalized traffic table and each traffic importer (tests/fuzz/local.mk
# explains the pattern; fuzz_file.c writes each input to a private file,
# since these readers take a path).  Each corpus is replayed by `make
# check`; with --enable-fuzzers (configured as in cache_trace.mk), e.g.
#   tests/fuzz/fuzz_scenario -max_len=4096 ../tests/fuzz/corpus/scenario
# ServeGen's target reads its two files from one input, split at "\n====\n".
check_PROGRAMS += tests/fuzz/replay_scenario
TESTS += tests/fuzz/scenario.sh
EXTRA_DIST += tests/fuzz/scenario.sh tests/fuzz/corpus/scenario
tests_fuzz_replay_scenario_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_scenario.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_replay_scenario_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_scenario_LDADD = $(TEST_LDADD)
tests_fuzz_replay_scenario_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_scenario
tests_fuzz_fuzz_scenario_SOURCES = tests/fuzz/fuzz_scenario.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_fuzz_scenario_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_scenario_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_scenario_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_scenario_DEPENDENCIES = $(WZ_LIBS)
endif
check_PROGRAMS += tests/fuzz/replay_catalog
TESTS += tests/fuzz/catalog.sh
EXTRA_DIST += tests/fuzz/catalog.sh tests/fuzz/corpus/catalog
tests_fuzz_replay_catalog_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_catalog.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_replay_catalog_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_catalog_LDADD = $(TEST_LDADD)
tests_fuzz_replay_catalog_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_catalog
tests_fuzz_fuzz_catalog_SOURCES = tests/fuzz/fuzz_catalog.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_fuzz_catalog_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_catalog_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_catalog_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_catalog_DEPENDENCIES = $(WZ_LIBS)
endif
check_PROGRAMS += tests/fuzz/replay_traffic
TESTS += tests/fuzz/traffic.sh
EXTRA_DIST += tests/fuzz/traffic.sh tests/fuzz/corpus/traffic
tests_fuzz_replay_traffic_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_traffic.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_replay_traffic_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_traffic_LDADD = $(TEST_LDADD)
tests_fuzz_replay_traffic_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_traffic
tests_fuzz_fuzz_traffic_SOURCES = tests/fuzz/fuzz_traffic.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_fuzz_traffic_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_traffic_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_traffic_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_traffic_DEPENDENCIES = $(WZ_LIBS)
endif
check_PROGRAMS += tests/fuzz/replay_azure
TESTS += tests/fuzz/azure.sh
EXTRA_DIST += tests/fuzz/azure.sh tests/fuzz/corpus/azure
tests_fuzz_replay_azure_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_azure.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_replay_azure_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_azure_LDADD = $(TEST_LDADD)
tests_fuzz_replay_azure_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_azure
tests_fuzz_fuzz_azure_SOURCES = tests/fuzz/fuzz_azure.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_fuzz_azure_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_azure_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_azure_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_azure_DEPENDENCIES = $(WZ_LIBS)
endif
check_PROGRAMS += tests/fuzz/replay_burstgpt
TESTS += tests/fuzz/burstgpt.sh
EXTRA_DIST += tests/fuzz/burstgpt.sh tests/fuzz/corpus/burstgpt
tests_fuzz_replay_burstgpt_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_burstgpt.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_replay_burstgpt_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_burstgpt_LDADD = $(TEST_LDADD)
tests_fuzz_replay_burstgpt_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_burstgpt
tests_fuzz_fuzz_burstgpt_SOURCES = tests/fuzz/fuzz_burstgpt.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_fuzz_burstgpt_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_burstgpt_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_burstgpt_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_burstgpt_DEPENDENCIES = $(WZ_LIBS)
endif
check_PROGRAMS += tests/fuzz/replay_mooncake
TESTS += tests/fuzz/mooncake.sh
EXTRA_DIST += tests/fuzz/mooncake.sh tests/fuzz/corpus/mooncake
tests_fuzz_replay_mooncake_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_mooncake.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_replay_mooncake_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_mooncake_LDADD = $(TEST_LDADD)
tests_fuzz_replay_mooncake_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_mooncake
tests_fuzz_fuzz_mooncake_SOURCES = tests/fuzz/fuzz_mooncake.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_fuzz_mooncake_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_mooncake_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_mooncake_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_mooncake_DEPENDENCIES = $(WZ_LIBS)
endif
check_PROGRAMS += tests/fuzz/replay_lengths
TESTS += tests/fuzz/lengths.sh
EXTRA_DIST += tests/fuzz/lengths.sh tests/fuzz/corpus/lengths
tests_fuzz_replay_lengths_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_lengths.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_replay_lengths_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_lengths_LDADD = $(TEST_LDADD)
tests_fuzz_replay_lengths_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_lengths
tests_fuzz_fuzz_lengths_SOURCES = tests/fuzz/fuzz_lengths.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_fuzz_lengths_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_lengths_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_lengths_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_lengths_DEPENDENCIES = $(WZ_LIBS)
endif
check_PROGRAMS += tests/fuzz/replay_servegen
TESTS += tests/fuzz/servegen.sh
EXTRA_DIST += tests/fuzz/servegen.sh tests/fuzz/corpus/servegen
tests_fuzz_replay_servegen_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_servegen.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_replay_servegen_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_servegen_LDADD = $(TEST_LDADD)
tests_fuzz_replay_servegen_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_servegen
tests_fuzz_fuzz_servegen_SOURCES = tests/fuzz/fuzz_servegen.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_fuzz_servegen_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_servegen_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_servegen_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_servegen_DEPENDENCIES = $(WZ_LIBS)
endif
check_PROGRAMS += tests/fuzz/replay_sweep
TESTS += tests/fuzz/sweep.sh
EXTRA_DIST += tests/fuzz/sweep.sh tests/fuzz/corpus/sweep
tests_fuzz_replay_sweep_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_sweep.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_replay_sweep_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_sweep_LDADD = $(TEST_LDADD)
tests_fuzz_replay_sweep_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_sweep
tests_fuzz_fuzz_sweep_SOURCES = tests/fuzz/fuzz_sweep.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_fuzz_sweep_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_sweep_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_sweep_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_sweep_DEPENDENCIES = $(WZ_LIBS)
endif
check_PROGRAMS += tests/fuzz/replay_live_kl
TESTS += tests/fuzz/live_kl.sh
EXTRA_DIST += tests/fuzz/live_kl.sh tests/fuzz/corpus/live_kl
tests_fuzz_replay_live_kl_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_live_kl.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_replay_live_kl_CFLAGS = $(TEST_CFLAGS)
tests_fuzz_replay_live_kl_LDADD = $(TEST_LDADD)
tests_fuzz_replay_live_kl_DEPENDENCIES = $(WZ_LIBS)
if FUZZERS
noinst_PROGRAMS += tests/fuzz/fuzz_live_kl
tests_fuzz_fuzz_live_kl_SOURCES = tests/fuzz/fuzz_live_kl.c tests/fuzz/fuzz_file.c tests/fuzz/fuzz_file.h
tests_fuzz_fuzz_live_kl_CFLAGS = $(TEST_CFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_live_kl_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
tests_fuzz_fuzz_live_kl_LDADD = $(TEST_LDADD)
tests_fuzz_fuzz_live_kl_DEPENDENCIES = $(WZ_LIBS)
endif
