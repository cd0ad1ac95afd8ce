# sweep/: sweep files (base scenario + axes, expanded into points with
# stable ids), the process pool that runs the points on every core, and the
# sweep's report (it draws with runs/: sweep is linked before runs).
noinst_LIBRARIES += libwzsweep.a
libwzsweep_a_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS) $(MPI_CFLAGS)
if HAVE_MPI
libwzsweep_a_CPPFLAGS = $(AM_CPPFLAGS) -DWZ_HAVE_MPI=1
endif
libwzsweep_a_SOURCES = \
	sweep/sweep.h \
	sweep/sweep.c \
	sweep/pool.c \
	sweep/balance.c \
	sweep/report.h sweep/report.c \
	sweep/report_write.h sweep/report_write.c \
	sweep/point_run.h sweep/point_run.c \
	sweep/mpi.h sweep/mpi.c
