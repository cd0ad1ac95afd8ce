check_PROGRAMS += tests/sim/test_sim
TESTS += tests/sim/test_sim tests/sim/cli.sh tests/sim/archive.sh
EXTRA_DIST += tests/sim/cli.sh tests/sim/archive.sh
tests_sim_test_sim_SOURCES = tests/sim/test_sim.c
tests_sim_test_sim_CFLAGS = $(TEST_CFLAGS)
tests_sim_test_sim_LDADD = $(TEST_LDADD)
tests_sim_test_sim_DEPENDENCIES = $(WZ_LIBS)
