# codec/: format registry, CPU reference encoders/decoders, profiles, metrics.
# A libtool convenience library: its objects go into libwzplan below.
noinst_LTLIBRARIES += libwzcodec.la
libwzcodec_la_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
# PIC objects (not AM_LDFLAGS's -static) since they go into a shared library:
# non-PIC code breaks it as soon as it refers to outside data (the
# sanitizers' runtime, stderr).
libwzcodec_la_LDFLAGS =
libwzcodec_la_SOURCES = \
	codec/format.c codec/format.h \
	codec/fpconv.h codec/records.h \
	codec/codec.c codec/codec.h codec/codec_internal.h \
	codec/baseline.c \
	codec/linalg.c codec/linalg.h \
	codec/levels.c codec/levels.h \
	codec/profile.h codec/profile_io.c codec/profile_internal.h codec/profile_layers.c codec/profile_parse.c codec/prepare.c codec/rope.c codec/rope.h \
	codec/wz_codec.c codec/wz_plan.h codec/wz_flat.c codec/wz_flat.h \
	codec/wz_allocate.c codec/wz_allocate.h \
	codec/wzx.c codec/wzx.h codec/wzx_file.c codec/wzx_internal.h codec/first_fail.h \
	codec/wzx_rans.c codec/wzx_rans.h codec/wzx_token.h \
	codec/wz_encode.c codec/wz_gemm.c codec/wz_gemm.h \
	codec/metrics.c codec/metrics.h
libwzcodec_la_SOURCES += codec/profile_cache.c codec/profile_cache.h
libwzcodec_la_SOURCES += codec/wzx_lanes.c codec/wzx_lanes.h codec/wzx_fast.c codec/wzx_fast.h
libwzcodec_la_SOURCES += codec/wzx_fast12.c codec/wzx_fast32.c codec/wzx_pack.c
libwzcodec_la_SOURCES += codec/wzx_fast32_x86.c codec/wzx_fast32_internal.h
libwzcodec_la_SOURCES += codec/wzx_fast5.c codec/wzx_fast5_x86.c codec/wzx_fast5_internal.h codec/wzx_avx2_lanes.h
libwzcodec_la_SOURCES += codec/wzx_restore.c codec/wzx_files.c codec/wzx_files.h
libwzcodec_la_SOURCES += codec/wzx_transform.c codec/hot.h
libwzcodec_la_SOURCES += codec/baseline_fp4.c codec/fp4conv.h
libwzcodec_la_SOURCES += codec/paired.c codec/paired.h
libwzcodec_la_SOURCES += codec/rd_bound.c
libwzcodec_la_SOURCES += codec/wzt_codec.c codec/wzt_fast.c codec/wzt_trellis.h
libwzcodec_la_SOURCES += codec/measure_run.c codec/measure_run.h

# libwzplan: the codec as an installed library (shared and static) with its
# public header and a pkg-config file.  The wzplan program links it too.
lib_LTLIBRARIES += libwzplan.la
libwzplan_la_SOURCES = codec/wz_api.c
libwzplan_la_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzplan_la_LIBADD = libwzcodec.la libwzcommon.la $(XXHASH_LIBS) $(CSV_LIBS) $(LIBS)
libwzplan_la_LDFLAGS = -version-info 1:0:1 -no-undefined \
	-export-symbols-regex '^wz_(version|api_version|format_|profile_|codec_|encode_layer|decode_layer|roundtrip_layer|window_bytes|strerror|diag_|rope_freqs)'
pkginclude_HEADERS = codec/wzplan.h
wzplancommondir = $(pkgincludedir)/common
wzplancommon_HEADERS = common/wz_error.h
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = libwzplan.pc
DISTCLEANFILES += libwzplan.pc

# codec/cuda/: the CUDA kernels; built and tested by tests/gpu/local.mk.
