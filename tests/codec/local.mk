# tests/codec/: the codec's unit tests (formats, conversions, wz, metrics)
# and the quality must-shows of issue 3 on synthetic windows.
EXTRA_DIST += tests/codec/window.h tests/codec/wzx_fixture.h
check_PROGRAMS += tests/codec/test_quality
TESTS += tests/codec/test_quality
tests_codec_test_quality_SOURCES = tests/codec/test_quality.c
tests_codec_test_quality_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_quality_LDADD = $(TEST_LDADD)
tests_codec_test_quality_DEPENDENCIES = $(WZ_LIBS)
check_PROGRAMS += tests/codec/test_formats
TESTS += tests/codec/test_formats
tests_codec_test_formats_SOURCES = tests/codec/test_formats.c
tests_codec_test_formats_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_formats_LDADD = $(TEST_LDADD)
tests_codec_test_formats_DEPENDENCIES = $(WZ_LIBS)
TESTS += tests/codec/codec_cli.sh
EXTRA_DIST += tests/codec/codec_cli.sh
check_PROGRAMS += tests/codec/test_wzx
TESTS += tests/codec/test_wzx tests/codec/wzx_cli.sh
EXTRA_DIST += tests/codec/wzx_cli.sh
EXTRA_DIST += tests/codec/golden
tests_codec_test_wzx_SOURCES = tests/codec/test_wzx.c
tests_codec_test_wzx_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wzx_LDADD = $(TEST_LDADD)
tests_codec_test_wzx_DEPENDENCIES = $(WZ_LIBS)
TESTS += tests/codec/codec_archive.sh
EXTRA_DIST += tests/codec/codec_archive.sh
check_PROGRAMS += tests/codec/test_wz_fast
TESTS += tests/codec/test_wz_fast
tests_codec_test_wz_fast_SOURCES = tests/codec/test_wz_fast.c
tests_codec_test_wz_fast_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wz_fast_LDADD = $(TEST_LDADD)
tests_codec_test_wz_fast_DEPENDENCIES = $(WZ_LIBS)
# The public API through the shared library, as an outside program links it.
check_PROGRAMS += tests/codec/test_api
TESTS += tests/codec/test_api
tests_codec_test_api_SOURCES = tests/codec/test_api.c
tests_codec_test_api_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_api_LDADD = libwzplan.la -lm
tests_codec_test_api_LDFLAGS = -no-install
# Every wz record size on every synthetic family (issue 10).
check_PROGRAMS += tests/codec/test_rate_sweep
TESTS += tests/codec/test_rate_sweep
tests_codec_test_rate_sweep_SOURCES = tests/codec/test_rate_sweep.c
tests_codec_test_rate_sweep_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_rate_sweep_LDADD = $(TEST_LDADD)
tests_codec_test_rate_sweep_DEPENDENCIES = $(WZ_LIBS)
check_PROGRAMS += tests/codec/test_wzx_fast
TESTS += tests/codec/test_wzx_fast
tests_codec_test_wzx_fast_SOURCES = tests/codec/test_wzx_fast.c
tests_codec_test_wzx_fast_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wzx_fast_LDADD = $(TEST_LDADD)
tests_codec_test_wzx_fast_DEPENDENCIES = $(WZ_LIBS)

check_PROGRAMS += tests/codec/test_overload
TESTS += tests/codec/test_overload
tests_codec_test_overload_SOURCES = tests/codec/test_overload.c
tests_codec_test_overload_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_overload_LDADD = $(TEST_LDADD)
tests_codec_test_overload_DEPENDENCIES = $(WZ_LIBS)

check_PROGRAMS += tests/codec/test_scale_invariance
TESTS += tests/codec/test_scale_invariance
tests_codec_test_scale_invariance_SOURCES = tests/codec/test_scale_invariance.c
tests_codec_test_scale_invariance_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_scale_invariance_LDADD = $(TEST_LDADD)
tests_codec_test_scale_invariance_DEPENDENCIES = $(WZ_LIBS)
# The shipped 4-bit MLA baselines, byte for byte (issue 10).
check_PROGRAMS += tests/codec/test_formats_fp4
TESTS += tests/codec/test_formats_fp4
tests_codec_test_formats_fp4_SOURCES = tests/codec/test_formats_fp4.c
tests_codec_test_formats_fp4_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_formats_fp4_LDADD = $(TEST_LDADD)
tests_codec_test_formats_fp4_DEPENDENCIES = $(WZ_LIBS)
TESTS += tests/codec/compare_cli.sh
EXTRA_DIST += tests/codec/compare_cli.sh
check_PROGRAMS += tests/codec/test_wzx_pack
TESTS += tests/codec/test_wzx_pack
tests_codec_test_wzx_pack_SOURCES = tests/codec/test_wzx_pack.c
tests_codec_test_wzx_pack_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wzx_pack_LDADD = $(TEST_LDADD)
tests_codec_test_wzx_pack_DEPENDENCIES = $(WZ_LIBS)
# The eigenvalues-only routine of the bound against the full decomposition.
check_PROGRAMS += tests/codec/test_linalg
TESTS += tests/codec/test_linalg
tests_codec_test_linalg_SOURCES = tests/codec/test_linalg.c
tests_codec_test_linalg_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_linalg_LDADD = $(TEST_LDADD)
tests_codec_test_linalg_DEPENDENCIES = $(WZ_LIBS)
# codec measure: threads, per-layer rows, outputs against the archive.
TESTS += tests/codec/measure_cli.sh
EXTRA_DIST += tests/codec/measure_cli.sh

check_PROGRAMS += tests/codec/test_allocate
TESTS += tests/codec/test_allocate
tests_codec_test_allocate_SOURCES = tests/codec/test_allocate.c
tests_codec_test_allocate_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_allocate_LDADD = $(TEST_LDADD)
tests_codec_test_allocate_DEPENDENCIES = $(WZ_LIBS)

check_PROGRAMS += tests/codec/test_wzx_group
TESTS += tests/codec/test_wzx_group
tests_codec_test_wzx_group_SOURCES = tests/codec/test_wzx_group.c
tests_codec_test_wzx_group_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wzx_group_LDADD = $(TEST_LDADD)
tests_codec_test_wzx_group_DEPENDENCIES = $(WZ_LIBS)

check_PROGRAMS += tests/codec/test_wzx_source
TESTS += tests/codec/test_wzx_source
tests_codec_test_wzx_source_SOURCES = tests/codec/test_wzx_source.c
tests_codec_test_wzx_source_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wzx_source_LDADD = $(TEST_LDADD)
tests_codec_test_wzx_source_DEPENDENCIES = $(WZ_LIBS)
check_PROGRAMS += tests/codec/test_profile_read
TESTS += tests/codec/test_profile_read
tests_codec_test_profile_read_SOURCES = tests/codec/test_profile_read.c tests/codec/profile_util.h
tests_codec_test_profile_read_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_profile_read_LDADD = $(TEST_LDADD)
tests_codec_test_profile_read_DEPENDENCIES = $(WZ_LIBS)
check_PROGRAMS += tests/codec/test_profile_v5
TESTS += tests/codec/test_profile_v5
tests_codec_test_profile_v5_SOURCES = tests/codec/test_profile_v5.c tests/codec/profile_util.h
tests_codec_test_profile_v5_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_profile_v5_LDADD = $(TEST_LDADD)
tests_codec_test_profile_v5_DEPENDENCIES = $(WZ_LIBS)

check_PROGRAMS += tests/codec/test_wzt
TESTS += tests/codec/test_wzt
tests_codec_test_wzt_SOURCES = tests/codec/test_wzt.c
tests_codec_test_wzt_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wzt_LDADD = $(TEST_LDADD)
tests_codec_test_wzt_DEPENDENCIES = $(WZ_LIBS)
check_PROGRAMS += tests/codec/test_wzx_records
TESTS += tests/codec/test_wzx_records
tests_codec_test_wzx_records_SOURCES = tests/codec/test_wzx_records.c
tests_codec_test_wzx_records_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wzx_records_LDADD = $(TEST_LDADD)
tests_codec_test_wzx_records_DEPENDENCIES = $(WZ_LIBS)

check_PROGRAMS += tests/codec/test_wzx_records6
TESTS += tests/codec/test_wzx_records6
tests_codec_test_wzx_records6_SOURCES = tests/codec/test_wzx_records6.c
tests_codec_test_wzx_records6_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wzx_records6_LDADD = $(TEST_LDADD)
tests_codec_test_wzx_records6_DEPENDENCIES = $(WZ_LIBS)

check_PROGRAMS += tests/codec/test_wzx_lanes4
TESTS += tests/codec/test_wzx_lanes4
tests_codec_test_wzx_lanes4_SOURCES = tests/codec/test_wzx_lanes4.c
tests_codec_test_wzx_lanes4_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wzx_lanes4_LDADD = $(TEST_LDADD)
tests_codec_test_wzx_lanes4_DEPENDENCIES = $(WZ_LIBS)
# The position part coded after undoing RoPE (profile version 6).
check_PROGRAMS += tests/codec/test_rope
TESTS += tests/codec/test_rope
tests_codec_test_rope_SOURCES = tests/codec/test_rope.c tests/codec/window.h
tests_codec_test_rope_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_rope_LDADD = $(TEST_LDADD)
tests_codec_test_rope_DEPENDENCIES = $(WZ_LIBS)
# Every format of the traits table against its reference (issue 44).
check_PROGRAMS += tests/codec/test_traits
TESTS += tests/codec/test_traits
tests_codec_test_traits_SOURCES = tests/codec/test_traits.c tests/codec/window.h
tests_codec_test_traits_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_traits_LDADD = $(TEST_LDADD)
tests_codec_test_traits_DEPENDENCIES = $(WZ_LIBS)
# No circle of more than two units in codec/'s include graph, and the
# feature folders' arrows as docs/architecture.md allows them (issue 44).
TESTS += tests/codec/circle_check.sh
EXTRA_DIST += tests/codec/circle_check.sh
# The educational wzx decoder (docs/wzx-format.md in plain C) on the golden
# files of every version (issue 44).
check_PROGRAMS += tests/codec/test_edu
TESTS += tests/codec/test_edu
tests_codec_test_edu_SOURCES = tests/codec/test_edu.c tests/codec/edu/wzx_edu.c \
	tests/codec/edu/wzx_edu.h
tests_codec_test_edu_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_edu_LDADD = $(TEST_LDADD)
tests_codec_test_edu_DEPENDENCIES = $(WZ_LIBS)
# Golden bytes of fp8-ds-mla (vLLM), fp8-ds-mla-ue8m0 (FlashMLA) and
# TensorRT-LLM's zero-scale cold-page groups (issue 43).
check_PROGRAMS += tests/codec/test_baselines_exact
TESTS += tests/codec/test_baselines_exact
tests_codec_test_baselines_exact_SOURCES = tests/codec/test_baselines_exact.c
tests_codec_test_baselines_exact_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_baselines_exact_LDADD = $(TEST_LDADD)
tests_codec_test_baselines_exact_DEPENDENCIES = $(WZ_LIBS)
check_PROGRAMS += tests/codec/test_formats_v4
TESTS += tests/codec/test_formats_v4
tests_codec_test_formats_v4_SOURCES = tests/codec/test_formats_v4.c
tests_codec_test_formats_v4_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_formats_v4_LDADD = $(TEST_LDADD)
tests_codec_test_formats_v4_DEPENDENCIES = $(WZ_LIBS)
# KVTC as a baseline (issue 43): its quantizer table, fit, rate and error.
check_PROGRAMS += tests/codec/test_kvtc
TESTS += tests/codec/test_kvtc
tests_codec_test_kvtc_SOURCES = tests/codec/test_kvtc.c tests/codec/window.h
tests_codec_test_kvtc_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_kvtc_LDADD = $(TEST_LDADD)
tests_codec_test_kvtc_DEPENDENCIES = $(WZ_LIBS)
include tests/codec/ubsan.mk
EXTRA_DIST += tests/codec/ubsan.mk
# The predicted position part (profile version 7).
check_PROGRAMS += tests/codec/test_predict
TESTS += tests/codec/test_predict tests/codec/predict_cli.sh
EXTRA_DIST += tests/codec/predict_cli.sh
tests_codec_test_predict_SOURCES = tests/codec/test_predict.c tests/codec/window.h
tests_codec_test_predict_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_predict_LDADD = $(TEST_LDADD)
tests_codec_test_predict_DEPENDENCIES = $(WZ_LIBS)

check_PROGRAMS += tests/codec/test_wze
TESTS += tests/codec/test_wze
tests_codec_test_wze_SOURCES = tests/codec/test_wze.c tests/codec/window.h
tests_codec_test_wze_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wze_LDADD = $(TEST_LDADD)
tests_codec_test_wze_DEPENDENCIES = $(WZ_LIBS)
check_PROGRAMS += tests/codec/test_wze_fast
TESTS += tests/codec/test_wze_fast
tests_codec_test_wze_fast_SOURCES = tests/codec/test_wze_fast.c tests/codec/window.h
tests_codec_test_wze_fast_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_wze_fast_LDADD = $(TEST_LDADD)
tests_codec_test_wze_fast_DEPENDENCIES = $(WZ_LIBS)
check_PROGRAMS += tests/codec/test_oom
TESTS += tests/codec/test_oom
tests_codec_test_oom_SOURCES = tests/codec/test_oom.c tests/codec/oom.c tests/codec/oom.h \
	tests/codec/oom_areas.c tests/codec/oom_areas.h tests/codec/window.h
tests_codec_test_oom_CFLAGS = $(TEST_CFLAGS)
tests_codec_test_oom_LDADD = $(TEST_LDADD)
tests_codec_test_oom_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=free,--wrap=aligned_alloc,--wrap=posix_memalign,--wrap=strdup,--wrap=strndup
tests_codec_test_oom_DEPENDENCIES = $(WZ_LIBS)
