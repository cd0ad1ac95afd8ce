# codec/: format registry, CPU reference encoders/decoders, profiles, metrics.
# A libtool convenience library: its objects go into libwzplan below.
noinst_LTLIBRARIES += libwzcodec.la
libwzcodec_la_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
# PIC objects (not AM_LDFLAGS's -static) since they go into a shared library:
# non-PIC code breaks it as soon as it refers to outside data (the
# sanitizers' runtime, stderr).
libwzcodec_la_LDFLAGS =
libwzcodec_la_SOURCES = \
	codec/formats/format.c codec/formats/format.h \
	codec/formats/fpconv.h codec/formats/records.h \
	codec/codec.c codec/codec.h codec/codec_internal.h codec/registry.c codec/cores.h \
	codec/formats/window.h codec/formats/bytes.h codec/formats/baseline.h codec/profile/scale_code.h \
	codec/formats/baseline.c \
	codec/profile/linalg.c codec/profile/linalg.h \
	codec/profile/levels.c codec/profile/levels.h \
	codec/profile/profile.h codec/profile/profile_io.c codec/profile/profile_internal.h codec/profile/profile_layers.c codec/profile/profile_parse.c codec/profile/prepare.c codec/profile/prepare_fit.c codec/profile/prepare_internal.h codec/profile/predict_fit.c codec/profile/predict_fit.h codec/profile/predict.h codec/profile/rope.c codec/profile/rope.h \
	codec/wz/wz_codec.c codec/wz/wz_plan.c codec/wz/wz_plan.h codec/wz/wz_predict.c codec/wz/wz_predict.h codec/wz/wz_flat.c codec/wz/wz_flat.h \
	codec/wz/wz_allocate.c codec/wz/wz_allocate.h \
	codec/wzx/wzx.c codec/wzx/wzx_grid.c codec/wzx/wzx.h codec/wzx/wzx_file.c codec/wzx/wzx_read.c codec/wzx/wzx_reader.h codec/wzx/wzx_internal.h codec/first_fail.h \
	codec/wzx/wzx_rans.c codec/wzx/wzx_rans.h codec/wzx/wzx_token.h \
	codec/wz/wz_encode.c codec/wz/wz_encode_block.c codec/wz/wz_encode_overload.c \
	codec/wz/wz_encode_internal.h codec/wz/wz_gemm.c codec/wz/wz_gemm.h \
	codec/wz/wz_gemm_x86.c codec/wz/wz_gemm_internal.h \
	codec/measure/metrics.c codec/measure/metrics.h
libwzcodec_la_SOURCES += codec/profile/profile_cache.c codec/profile/profile_cache.h
libwzcodec_la_SOURCES += codec/wzx/wzx_lanes.c codec/wzx/wzx_lanes.h codec/wzx/wzx_fast.c codec/wzx/wzx_fast.h
libwzcodec_la_SOURCES += codec/wzx/wzx_pack.c codec/wzx/wzx_lanes32.c
libwzcodec_la_SOURCES += codec/wzx/legacy/wzx_legacy.h codec/wzx/legacy/wzx_fast12.c codec/wzx/legacy/wzx_fast32.c
libwzcodec_la_SOURCES += codec/wzx/legacy/wzx_fast32_x86.c codec/wzx/wzx_fast32_internal.h
libwzcodec_la_SOURCES += codec/wzx/wzx_fast5.c codec/wzx/wzx_fast5_x86.c codec/wzx/wzx_fast5_internal.h codec/wzx/wzx_avx2_lanes.h
libwzcodec_la_SOURCES += codec/wzx/wzx_records5.c codec/wzx/wzx_records5_x86.c codec/wzx/wzx_fused_loop.h codec/wzx/wzx_rec5.h
libwzcodec_la_SOURCES += codec/wzx/wzx_lanes6.c codec/wzx/wzx_rec6.h
libwzcodec_la_SOURCES += codec/wzx/wzx_restore.c codec/wzx/wzx_files.c codec/wzx/wzx_files.h
libwzcodec_la_SOURCES += codec/wzx/wzx_transform.c codec/hot.h
libwzcodec_la_SOURCES += codec/formats/baseline_fp4.c codec/formats/fp4conv.h
libwzcodec_la_SOURCES += codec/measure/paired.c codec/measure/paired.h
libwzcodec_la_SOURCES += codec/measure/rd_bound.c
libwzcodec_la_SOURCES += codec/wz/wzt_codec.c codec/wz/wzt_fast.c codec/wz/wzt_trellis.h
libwzcodec_la_SOURCES += codec/measure/measure_run.c codec/measure/measure_run.h
libwzcodec_la_SOURCES += codec/kvtc/kvtc.c codec/kvtc/kvtc.h
libwzcodec_la_SOURCES += codec/wze/wze.h codec/wze/wze_core.h codec/wze/wze_plan.c codec/wze/wze_codec.c \
	codec/wze/wze_enc.h codec/wze/wze_fast_enc.c codec/wze/wze_fast_dec.c

# libwzplan: the codec as an installed library (shared and static) with its
# public header and a pkg-config file.  The wzplan program links it too.
lib_LTLIBRARIES += libwzplan.la
libwzplan_la_SOURCES = codec/wz_api.c
libwzplan_la_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzplan_la_LIBADD = libwzcodec.la libwzcommon.la $(XXHASH_LIBS) $(ZSTD_LIBS) $(CSV_LIBS) $(LIBS)
libwzplan_la_LDFLAGS = -version-info 1:0:1 -no-undefined \
	-export-symbols-regex '^wz_(version|api_version|format_|profile_|codec_|encode_layer|decode_layer|roundtrip_layer|window_bytes|strerror|diag_|rope_freqs)'
pkginclude_HEADERS = codec/wzplan.h
wzplancommondir = $(pkgincludedir)/common
wzplancommon_HEADERS = common/wz_error.h
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = libwzplan.pc
DISTCLEANFILES += libwzplan.pc

# codec/cuda/: the CUDA kernels; built and tested by tests/gpu/local.mk.
