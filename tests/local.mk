# tests/local.mk: the Python suites (fakegcp's own, then integration),
# run by one driver so pytest's summary line reaches the log.
TESTS += tests/run-pytest
EXTRA_DIST += tests/run-pytest tests/fakegcp tests/integration tests/demo \
	tests/gpuqdtest.py tests/skipnames.py

# .ci/count on fabricated logs.
TESTS += tests/ci/test-count
EXTRA_DIST += tests/ci/test-count
