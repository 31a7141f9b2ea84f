# common/: what gpuq and gpuqd share.
noinst_LIBRARIES += common/libcommon.a
common_libcommon_a_SOURCES = \
	common/clock.c common/clock.h \
	common/log.c common/log.h \
	common/xmalloc.c common/xmalloc.h \
	common/frame.c common/frame.h \
	common/duration.c common/duration.h \
	common/gpu.c common/gpu.h \
	common/jsonw.c common/jsonw.h \
	common/strdist.c common/strdist.h \
	common/webhook.c common/webhook.h \
	common/proto.h
common_libcommon_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)

# Unit tests of the JSON writer every reply goes through.
check_PROGRAMS += tests/unit/test-jsonw
TESTS += tests/unit/test-jsonw
tests_unit_test_jsonw_SOURCES = tests/unit/test-jsonw.c
tests_unit_test_jsonw_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_jsonw_LDADD = common/libcommon.a $(JANSSON_LIBS) \
	$(CMOCKA_LIBS) -lm

# Unit tests of the simulated clock (tests only; doc/DESIGN.md
# "Simulated time").
check_PROGRAMS += tests/unit/test-clock
TESTS += tests/unit/test-clock
tests_unit_test_clock_SOURCES = tests/unit/test-clock.c
tests_unit_test_clock_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_clock_LDADD = common/libcommon.a $(CMOCKA_LIBS)
