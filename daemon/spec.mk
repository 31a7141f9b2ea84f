# daemon/spec.mk: job spec validation (daemon/spec.c) and its unit test.
# Included from daemon/local.mk; daemon/spec.c is also listed in gpuqd's
# sources there.
check_PROGRAMS += tests/unit/test-spec
TESTS += tests/unit/test-spec
tests_unit_test_spec_SOURCES = tests/unit/test-spec.c daemon/spec.c daemon/spec.h
# The region catalog test reads the bundled price table in the source tree.
tests_unit_test_spec_CPPFLAGS = $(AM_CPPFLAGS) \
	-DGPUQ_TOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_spec_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CMOCKA_CFLAGS)
# spec.c checks provider names against the provider table (prov_lookup).
tests_unit_test_spec_LDADD = providers/libproviders.a common/libcommon.a \
	$(JANSSON_LIBS) $(CURL_LIBS) $(UV_LIBS) $(OPENSSL_LIBS) \
	$(CMOCKA_LIBS) -lm
