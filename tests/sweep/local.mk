# tests/sweep/: sweep files and the worker pool (unit tests); wzplan sweep
# and archive merge from the command line.
check_PROGRAMS += tests/sweep/test_sweep
TESTS += tests/sweep/test_sweep tests/sweep/sweep.sh tests/sweep/merge.sh
TESTS += tests/sweep/report.sh tests/sweep/mpi.sh tests/sweep/concurrent.sh
EXTRA_DIST += tests/sweep/concurrent.sh
EXTRA_DIST += tests/sweep/report.sh tests/sweep/mpi.sh tests/sweep/lsan-openmpi.supp
EXTRA_DIST += tests/sweep/sweep.sh tests/sweep/merge.sh
tests_sweep_test_sweep_SOURCES = tests/sweep/test_sweep.c
tests_sweep_test_sweep_CFLAGS = $(TEST_CFLAGS)
tests_sweep_test_sweep_LDADD = $(TEST_LDADD)
tests_sweep_test_sweep_DEPENDENCIES = $(WZ_LIBS)
