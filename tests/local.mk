# tests/local.mk: the Python suites (fakegcp's own, then integration),
# run by one driver so pytest's summary line reaches the log.
TESTS += tests/run-pytest
EXTRA_DIST += tests/run-pytest tests/fakegcp tests/integration tests/demo \
	tests/gpuqdtest.py tests/skipnames.py

# .ci/count on fabricated logs.
TESTS += tests/ci/test-count
EXTRA_DIST += tests/ci/test-count

# The C unit tests' fixture (tests/unit/unittest.h): the store and the
# loop are objects of their own, so a test without them needs neither
# SQLite nor libuv.
check_LIBRARIES = tests/unit/libunittest.a
tests_unit_libunittest_a_SOURCES = tests/unit/unittest.h \
	tests/unit/unittest.c tests/unit/unittest-store.c \
	tests/unit/unittest-loop.c
tests_unit_libunittest_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) \
	$(UV_CFLAGS) $(CMOCKA_CFLAGS)
