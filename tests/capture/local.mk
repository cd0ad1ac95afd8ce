# tests/capture/: the Python binding of libwzplan and the capture / live-KL
# tools, on a tiny random-weight DeepSeek-V3 config (no downloads).  They run
# in the virtual environment traces/capture/venv.sh makes (`./setup.sh check`
# makes it); without it they are skipped.
TESTS += tests/capture/binding.sh tests/capture/capture.sh tests/capture/stack.sh
EXTRA_DIST += tests/capture/binding.sh tests/capture/capture.sh tests/capture/stack.sh \
	tests/capture/test_stack_quantizers.py \
	tests/capture/test_binding.py tests/capture/test_capture.py tests/capture/tap.py \
	tests/capture/python.sh
