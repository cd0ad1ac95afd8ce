# plots/: tables (text, Markdown, CSV, JSON) and gnuplot charts.
noinst_LIBRARIES += libwzplots.a
libwzplots_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzplots_a_SOURCES = \
	plots/table.c plots/table.h \
	plots/chart.c plots/chart.h
