# bench/: benchmark programs; `make bench` builds and runs them and prints
# their figures (medians of several runs).  Not part of `make check`.
WZ_BENCH_PROGS =
WZ_BENCH_SH =
WZ_BENCH_SH += bench/bench_sim.sh
WZ_BENCH_SH += bench/bench_sweep.sh
EXTRA_DIST += bench/bench_sweep.sh
EXTRA_DIST += bench/bench_sim.sh
# Outputs of a fixed set of runs, to diff before and after a speed change.
EXTRA_DIST += bench/sim_outputs.sh
WZ_BENCH_SH += bench/bench_unpack.sh
EXTRA_DIST += bench/bench_unpack.sh bench/bench_util.h
EXTRA_PROGRAMS += bench/bench_codec
WZ_BENCH_PROGS += bench/bench_codec
bench_bench_codec_SOURCES = bench/bench_codec.c
bench_bench_codec_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_codec_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_codec_DEPENDENCIES = $(WZ_LIBS)
EXTRA_PROGRAMS += bench/bench_restore
WZ_BENCH_PROGS += bench/bench_restore
bench_bench_restore_SOURCES = bench/bench_restore.c bench/bench_restore_speed.c bench/bench_restore.h
bench_bench_restore_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_restore_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_restore_DEPENDENCIES = $(WZ_LIBS)
EXTRA_PROGRAMS += bench/bench_deploy
WZ_BENCH_PROGS += bench/bench_deploy
bench_bench_deploy_SOURCES = bench/bench_deploy.c
bench_bench_deploy_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_deploy_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_deploy_DEPENDENCIES = $(WZ_LIBS)
EXTRA_PROGRAMS += bench/bench_sim
WZ_BENCH_PROGS += bench/bench_sim
bench_bench_sim_SOURCES = bench/bench_sim.c
bench_bench_sim_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_sim_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_sim_DEPENDENCIES = $(WZ_LIBS)
bench: $(WZ_BENCH_PROGS) wzplan
	@for b in $(WZ_BENCH_PROGS); do echo "== $$b"; ./$$b || exit 1; done
	@for s in $(WZ_BENCH_SH); do echo "== $$s"; WZPLAN=$(abs_top_builddir)/wzplan $(SHELL) $(top_srcdir)/$$s || exit 1; done
EXTRA_PROGRAMS += bench/bench_bound
WZ_BENCH_PROGS += bench/bench_bound
bench_bench_bound_SOURCES = bench/bench_bound.c
bench_bench_bound_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_bound_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_bound_DEPENDENCIES = $(WZ_LIBS)
WZ_BENCH_SH += bench/bench_measure.sh
EXTRA_DIST += bench/bench_measure.sh
EXTRA_DIST += bench/restore_table.sh

EXTRA_PROGRAMS += bench/bench_trellis
WZ_BENCH_PROGS += bench/bench_trellis
bench_bench_trellis_SOURCES = bench/bench_trellis.c
bench_bench_trellis_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_trellis_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_trellis_DEPENDENCIES = $(WZ_LIBS)

EXTRA_PROGRAMS += bench/bench_decode4
WZ_BENCH_PROGS += bench/bench_decode4
bench_bench_decode4_SOURCES = bench/bench_decode4.c
bench_bench_decode4_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_decode4_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_decode4_DEPENDENCIES = $(WZ_LIBS)
EXTRA_PROGRAMS += bench/bench_wzx_zstd
WZ_BENCH_PROGS += bench/bench_wzx_zstd
bench_bench_wzx_zstd_SOURCES = bench/bench_wzx_zstd.c
bench_bench_wzx_zstd_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_wzx_zstd_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS) $(HTSCODECS_LIBS)
bench_bench_wzx_zstd_DEPENDENCIES = $(WZ_LIBS)
EXTRA_PROGRAMS += bench/bench_rounds
bench_bench_rounds_SOURCES = bench/bench_rounds.c
bench_bench_rounds_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_rounds_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_rounds_DEPENDENCIES = $(WZ_LIBS)
EXTRA_DIST += bench/bench_vs.sh bench/bench_inproc.sh bench/bench_inproc.c bench/bench_rounds.c

EXTRA_PROGRAMS += bench/bench_scale_codes
WZ_BENCH_PROGS += bench/bench_scale_codes
bench_bench_scale_codes_SOURCES = bench/bench_scale_codes.c
bench_bench_scale_codes_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_scale_codes_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_scale_codes_DEPENDENCIES = $(WZ_LIBS)

EXTRA_PROGRAMS += bench/bench_rng
WZ_BENCH_PROGS += bench/bench_rng
bench_bench_rng_SOURCES = bench/bench_rng.c
bench_bench_rng_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_rng_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_rng_DEPENDENCIES = $(WZ_LIBS)
EXTRA_DIST += bench/wz_low_rate.sh
# The Gaussian bound at a rate against fp8-mix's error, per family
# (bench/rd_bound.sh runs it on the synthetic families).
EXTRA_PROGRAMS += bench/bench_rd5
WZ_BENCH_PROGS += bench/bench_rd5
bench_bench_rd5_SOURCES = bench/bench_rd5.c
bench_bench_rd5_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_rd5_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_rd5_DEPENDENCIES = $(WZ_LIBS)
EXTRA_DIST += bench/rd_bound.sh
EXTRA_PROGRAMS += bench/bench_predict
WZ_BENCH_PROGS += bench/bench_predict
bench_bench_predict_SOURCES = bench/bench_predict.c
bench_bench_predict_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_predict_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_predict_DEPENDENCIES = $(WZ_LIBS)
EXTRA_PROGRAMS += bench/bench_wze
WZ_BENCH_PROGS += bench/bench_wze
bench_bench_wze_SOURCES = bench/bench_wze.c
bench_bench_wze_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_wze_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_wze_DEPENDENCIES = $(WZ_LIBS)
# The deployment search's lower bound against the simulator on
# test_deploy's fixture (long: minutes; not in `make bench`'s list).
EXTRA_PROGRAMS += bench/bench_deploy_bound
bench_bench_deploy_bound_SOURCES = bench/bench_deploy_bound.c
bench_bench_deploy_bound_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
bench_bench_deploy_bound_LDADD = $(WZ_LINK) $(WZ_EXTERNAL_LIBS)
bench_bench_deploy_bound_DEPENDENCIES = $(WZ_LIBS)
