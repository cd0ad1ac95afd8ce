# tests/plots/: chart script generation (unit test) and the proposal's charts
# with and without gnuplot.
check_PROGRAMS += tests/plots/test_chart
TESTS += tests/plots/test_chart tests/plots/charts.sh
EXTRA_DIST += tests/plots/charts.sh
tests_plots_test_chart_SOURCES = tests/plots/test_chart.c
tests_plots_test_chart_CFLAGS = $(TEST_CFLAGS)
tests_plots_test_chart_LDADD = $(TEST_LDADD)
tests_plots_test_chart_DEPENDENCIES = $(WZ_LIBS)
