# tests/traffic/: the request table, the trace importers and `wzplan traffic`.
check_PROGRAMS += tests/traffic/test_traffic tests/traffic/test_import
TESTS += tests/traffic/test_traffic tests/traffic/test_import tests/traffic/cli.sh
EXTRA_DIST += tests/traffic/fixture.h tests/traffic/cli.sh
tests_traffic_test_traffic_SOURCES = tests/traffic/test_traffic.c
tests_traffic_test_traffic_CFLAGS = $(TEST_CFLAGS)
tests_traffic_test_traffic_LDADD = $(TEST_LDADD)
tests_traffic_test_traffic_DEPENDENCIES = $(WZ_LIBS)
tests_traffic_test_import_SOURCES = tests/traffic/test_import.c
tests_traffic_test_import_CFLAGS = $(TEST_CFLAGS)
tests_traffic_test_import_LDADD = $(TEST_LDADD)
tests_traffic_test_import_DEPENDENCIES = $(WZ_LIBS)
