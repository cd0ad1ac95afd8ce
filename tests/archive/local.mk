# tests/archive/: the result archive (unit tests) and its robustness through
# the wzplan program (concurrent writers, SIGKILL mid-write, read-only, full
# disk), plus archive, verify and plot from the command line.
check_PROGRAMS += tests/archive/test_archive
TESTS += tests/archive/test_archive tests/archive/commands.sh tests/archive/robust.sh
EXTRA_DIST += tests/archive/commands.sh tests/archive/robust.sh
tests_archive_test_archive_SOURCES = tests/archive/test_archive.c
tests_archive_test_archive_CFLAGS = $(TEST_CFLAGS)
tests_archive_test_archive_LDADD = $(TEST_LDADD)
tests_archive_test_archive_DEPENDENCIES = $(WZ_LIBS)
