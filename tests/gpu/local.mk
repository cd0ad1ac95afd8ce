# tests/gpu/: the CUDA kernels (codec/cuda/) and their tests.  The kernels'
# per-thread steps are emulated on the CPU by two tests that always run.
# With nvcc (configure found it; not with sanitizers: nvcc does not link
# ASan) `make check` also builds the kernels, the GPU test and the GPU
# benchmark for $(CUDA_ARCH), and runs the GPU test through gpu.sh, which
# reports a skip without a CUDA device.  tests/gpu/run.sh does the whole
# GPU step on a machine with one (docs/gpu-kernels.md).
WZ_CUDA_HDRS = codec/cuda/wz_kernels.h codec/cuda/paged_baseline.h codec/cuda/paged_wz.h \
	codec/cuda/attn_tiles.h codec/cuda/wzx_kernels.h codec/cuda/wzx_restore.h codec/cuda/pred_step.h \
	codec/cuda/wze_kernels.h codec/cuda/upload.h
WZ_CUDA_SRCS = codec/cuda/wz_kernels.cu codec/cuda/paged_kernels.cu codec/cuda/attn_kernels.cu \
	codec/cuda/wzx_kernels.cu codec/cuda/wze_kernels.cu
EXTRA_DIST += $(WZ_CUDA_HDRS) $(WZ_CUDA_SRCS) tests/gpu/emulate.h tests/gpu/inputs.h \
	tests/gpu/test_wz_gpu.cu tests/gpu/gpu_check.h tests/gpu/gpu.sh tests/gpu/run.sh tests/gpu/wzx_blocks.h \
	bench/gpu/bench_gpu.cu
check_PROGRAMS += tests/gpu/test_kernels_cpu tests/gpu/test_attention_cpu tests/gpu/test_wzx_kernels_cpu
TESTS += tests/gpu/test_kernels_cpu tests/gpu/test_attention_cpu tests/gpu/test_wzx_kernels_cpu
tests_gpu_test_wzx_kernels_cpu_SOURCES = tests/gpu/test_wzx_kernels_cpu.c
tests_gpu_test_wzx_kernels_cpu_CFLAGS = $(TEST_CFLAGS)
tests_gpu_test_wzx_kernels_cpu_LDADD = $(TEST_LDADD)
tests_gpu_test_wzx_kernels_cpu_DEPENDENCIES = $(WZ_LIBS)
tests_gpu_test_kernels_cpu_SOURCES = tests/gpu/test_kernels_cpu.c
tests_gpu_test_kernels_cpu_CFLAGS = $(TEST_CFLAGS)
tests_gpu_test_kernels_cpu_LDADD = $(TEST_LDADD)
tests_gpu_test_kernels_cpu_DEPENDENCIES = $(WZ_LIBS)
tests_gpu_test_attention_cpu_SOURCES = tests/gpu/test_attention_cpu.c
tests_gpu_test_attention_cpu_CFLAGS = $(TEST_CFLAGS)
tests_gpu_test_attention_cpu_LDADD = $(TEST_LDADD)
tests_gpu_test_attention_cpu_DEPENDENCIES = $(WZ_LIBS)
if HAVE_CUDA
if !SANITIZERS
# -fmad=false: the codec kernels must not fuse the reference's separate
# multiplies and adds (attention asks for its fused ones with fmaf).
WZ_NVCC_FLAGS = -O2 -arch=$(CUDA_ARCH) -fmad=false -Xcompiler -Wall,-Wextra \
	-I$(top_srcdir) -I$(top_builddir)
WZ_CUDA_OBJS = codec/cuda/wz_kernels-cu.o codec/cuda/paged_kernels-cu.o \
	codec/cuda/attn_kernels-cu.o codec/cuda/wzx_kernels-cu.o codec/cuda/wze_kernels-cu.o
WZ_CUDA_DEPS = $(top_srcdir)/codec/cuda/wz_kernels.h $(top_srcdir)/codec/cuda/paged_baseline.h \
	$(top_srcdir)/codec/cuda/paged_wz.h $(top_srcdir)/codec/cuda/attn_tiles.h \
	$(top_srcdir)/codec/wz/wz_flat.h $(top_srcdir)/codec/wz/wzt_trellis.h $(top_srcdir)/codec/formats/fpconv.h \
	$(top_srcdir)/codec/profile/rope.h $(top_srcdir)/codec/cuda/wzx_kernels.h \
	$(top_srcdir)/codec/cuda/wzx_restore.h $(top_srcdir)/codec/wzx/wzx_rec5.h $(top_srcdir)/codec/wzx/wzx_rec6.h \
	$(top_srcdir)/codec/wzx/wzx_token.h \
	$(top_srcdir)/codec/cuda/pred_step.h $(top_srcdir)/codec/profile/predict.h \
	$(top_srcdir)/codec/cuda/wze_kernels.h $(top_srcdir)/codec/wze/wze_core.h \
	$(top_srcdir)/codec/cuda/upload.h
# tests/gpu/run.sh --build-only links the external libraries statically
# instead, so that the programs run on a machine without their packages.
WZ_GPU_EXTERNAL_LIBS = $(WZ_EXTERNAL_LIBS)
check_SCRIPTS = tests/gpu/test_wz_gpu bench/gpu/bench_gpu
TESTS += tests/gpu/gpu.sh
CLEANFILES += $(WZ_CUDA_OBJS) tests/gpu/test_wz_gpu bench/gpu/bench_gpu
codec/cuda/wz_kernels-cu.o: $(top_srcdir)/codec/cuda/wz_kernels.cu $(WZ_CUDA_DEPS)
	@$(MKDIR_P) codec/cuda
	$(AM_V_GEN)$(NVCC) $(WZ_NVCC_FLAGS) -c -o $@ $(top_srcdir)/codec/cuda/wz_kernels.cu
codec/cuda/paged_kernels-cu.o: $(top_srcdir)/codec/cuda/paged_kernels.cu $(WZ_CUDA_DEPS)
	@$(MKDIR_P) codec/cuda
	$(AM_V_GEN)$(NVCC) $(WZ_NVCC_FLAGS) -c -o $@ $(top_srcdir)/codec/cuda/paged_kernels.cu
codec/cuda/attn_kernels-cu.o: $(top_srcdir)/codec/cuda/attn_kernels.cu $(WZ_CUDA_DEPS)
	@$(MKDIR_P) codec/cuda
	$(AM_V_GEN)$(NVCC) $(WZ_NVCC_FLAGS) -c -o $@ $(top_srcdir)/codec/cuda/attn_kernels.cu
codec/cuda/wzx_kernels-cu.o: $(top_srcdir)/codec/cuda/wzx_kernels.cu $(WZ_CUDA_DEPS)
	@$(MKDIR_P) codec/cuda
	$(AM_V_GEN)$(NVCC) $(WZ_NVCC_FLAGS) -c -o $@ $(top_srcdir)/codec/cuda/wzx_kernels.cu
codec/cuda/wze_kernels-cu.o: $(top_srcdir)/codec/cuda/wze_kernels.cu $(WZ_CUDA_DEPS)
	@$(MKDIR_P) codec/cuda
	$(AM_V_GEN)$(NVCC) $(WZ_NVCC_FLAGS) -c -o $@ $(top_srcdir)/codec/cuda/wze_kernels.cu
tests/gpu/test_wz_gpu: $(top_srcdir)/tests/gpu/test_wz_gpu.cu $(top_srcdir)/tests/gpu/gpu_check.h \
		$(top_srcdir)/tests/gpu/wzx_blocks.h \
		$(WZ_CUDA_OBJS) $(WZ_LIBS)
	@$(MKDIR_P) tests/gpu
	$(AM_V_GEN)$(NVCC) $(WZ_NVCC_FLAGS) -o $@ $(top_srcdir)/tests/gpu/test_wz_gpu.cu \
		$(WZ_CUDA_OBJS) $(WZ_NVCC_LINK) $(WZ_GPU_EXTERNAL_LIBS)
bench/gpu/bench_gpu: $(top_srcdir)/bench/gpu/bench_gpu.cu $(top_srcdir)/tests/gpu/gpu_check.h \
		$(WZ_CUDA_OBJS) $(WZ_LIBS)
	@$(MKDIR_P) bench/gpu
	$(AM_V_GEN)$(NVCC) $(WZ_NVCC_FLAGS) -o $@ $(top_srcdir)/bench/gpu/bench_gpu.cu \
		$(WZ_CUDA_OBJS) $(WZ_NVCC_LINK) $(WZ_GPU_EXTERNAL_LIBS)
endif
endif
