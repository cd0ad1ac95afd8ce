# codec/: format registry, CPU reference encoders/decoders, profiles, metrics.
# A libtool convenience library: its objects go into libwzplan below.
noinst_LTLIBRARIES += libwzcodec.la
libwzcodec_la_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzcodec_la_SOURCES = \
	codec/format.c codec/format.h \
	codec/fpconv.h codec/records.h \
	codec/codec.c codec/codec.h codec/codec_internal.h \
	codec/baseline.c \
	codec/linalg.c codec/linalg.h \
	codec/levels.c codec/levels.h \
	codec/profile.h codec/profile_io.c codec/prepare.c \
	codec/wz_codec.c codec/wz_plan.h codec/wz_flat.c codec/wz_flat.h \
	codec/wzx.c codec/wzx.h codec/wzx_file.c codec/wzx_internal.h \
	codec/wzx_rans.c codec/wzx_rans.h codec/wzx_token.h \
	codec/wz_encode.c codec/wz_gemm.c codec/wz_gemm.h \
	codec/metrics.c codec/metrics.h
libwzcodec_la_SOURCES += codec/profile_cache.c codec/profile_cache.h
libwzcodec_la_SOURCES += codec/wzx_lanes.c codec/wzx_lanes.h codec/wzx_fast.c codec/wzx_fast.h
libwzcodec_la_SOURCES += codec/wzx_restore.c

# libwzplan: the codec as an installed library (shared and static) with its
# public header and a pkg-config file.  The wzplan program links it too.
lib_LTLIBRARIES += libwzplan.la
libwzplan_la_SOURCES = codec/wz_api.c
libwzplan_la_CFLAGS = $(AM_CFLAGS) $(WZ_EXTERNAL_CFLAGS)
libwzplan_la_LIBADD = libwzcodec.la libwzcommon.la $(XXHASH_LIBS) $(CSV_LIBS) $(LIBS)
libwzplan_la_LDFLAGS = -version-info 0:0:0 -no-undefined \
	-export-symbols-regex '^wz_(version|api_version|format_|profile_|codec_|encode_layer|decode_layer|roundtrip_layer|window_bytes|strerror|diag_)'
pkginclude_HEADERS = codec/wzplan.h
wzplancommondir = $(pkgincludedir)/common
wzplancommon_HEADERS = common/wz_error.h
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = libwzplan.pc
DISTCLEANFILES += libwzplan.pc

# codec/cuda/: the CUDA kernels and their test program (tests/gpu/), built
# with nvcc by `make check` when configure found it (not with sanitizers:
# nvcc does not link ASan).  The test needs a GPU, so it is not in TESTS:
# run tests/gpu/run.sh (or tests/gpu/test_wz_gpu) on a machine with one (it skips, exit 77,
# without).
EXTRA_DIST += codec/cuda/wz_kernels.cu codec/cuda/wz_kernels.h tests/gpu/test_wz_gpu.cu tests/gpu/run.sh
if HAVE_CUDA
if !SANITIZERS
check_SCRIPTS = tests/gpu/test_wz_gpu
CLEANFILES += tests/gpu/test_wz_gpu
tests/gpu/test_wz_gpu: $(top_srcdir)/tests/gpu/test_wz_gpu.cu \
		$(top_srcdir)/codec/cuda/wz_kernels.cu $(top_srcdir)/codec/cuda/wz_kernels.h \
		$(top_srcdir)/codec/wz_flat.h $(top_srcdir)/codec/fpconv.h $(WZ_LIBS)
	@$(MKDIR_P) tests/gpu
	$(AM_V_GEN)$(NVCC) -O2 -I$(top_srcdir) -I$(top_builddir) -o $@ \
		$(top_srcdir)/tests/gpu/test_wz_gpu.cu $(top_srcdir)/codec/cuda/wz_kernels.cu \
		$(WZ_NVCC_LINK) $(WZ_EXTERNAL_LIBS)
endif
endif
