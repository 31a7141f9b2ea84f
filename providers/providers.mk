# providers/providers.mk: the ways to run a job (Vertex AI, Cloud Batch,
# Compute Engine), the null provider for tests, and their unit tests.
# Included from providers/local.mk after providers/libproviders.a is
# defined there: this file only appends to it.

providers_libproviders_a_SOURCES += \
	providers/provider.c providers/provider.h providers/prov-impl.h \
	providers/vertex.c providers/batch.c providers/gce.c \
	providers/null.c providers/pypkg.c providers/prov-site.c \
	providers/gang.c providers/capacity.c

# The VM startup script lives in one place, gce-startup.sh; gce.c sees
# it as the C string gce_startup_script, generated at build time.
nodist_providers_libproviders_a_SOURCES = providers/gce-startup.c \
	providers/pypkg-run.c
EXTRA_DIST += providers/gce-startup.sh providers/README \
	providers/pypkg-run.sh
CLEANFILES += providers/gce-startup.c providers/pypkg-run.c

# The same for the script that runs a python_package job (pypkg.c).
providers/pypkg-run.c: $(srcdir)/providers/pypkg-run.sh
	$(AM_V_GEN)$(MKDIR_P) providers && { \
	  echo '/* Generated from providers/pypkg-run.sh: do not edit. */'; \
	  echo '#include "providers/prov-impl.h"'; \
	  echo 'const char prov_pypkg_script[] ='; \
	  sed -e '/^[[:space:]]*#/d' -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/	/\\t/g' \
	      -e 's/^/"/' -e 's/$$/\\n"/' $(srcdir)/providers/pypkg-run.sh; \
	  echo ';'; \
	} > $@.tmp && mv $@.tmp $@

providers/gce-startup.c: $(srcdir)/providers/gce-startup.sh
	$(AM_V_GEN)$(MKDIR_P) providers && { \
	  echo '/* Generated from providers/gce-startup.sh: do not edit. */'; \
	  echo '#include "providers/prov-impl.h"'; \
	  echo 'const char gce_startup_script[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/	/\\t/g' \
	      -e 's/^/"/' -e 's/$$/\\n"/' $(srcdir)/providers/gce-startup.sh; \
	  echo ';'; \
	} > $@.tmp && mv $@.tmp $@

PROV_TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(JANSSON_CFLAGS) \
	$(UV_CFLAGS)
PROV_TEST_LDADD = providers/libproviders.a common/libcommon.a \
	$(CMOCKA_LIBS) $(JANSSON_LIBS) $(CURL_LIBS) $(UV_LIBS) \
	$(OPENSSL_LIBS) -lm

PROV_UNIT_TESTS = tests/unit/test-provider tests/unit/test-vertex \
	tests/unit/test-batch tests/unit/test-gce \
	tests/unit/test-providers-live tests/unit/test-site
check_PROGRAMS += $(PROV_UNIT_TESTS)
TESTS += $(PROV_UNIT_TESTS)

# The builder and mapper tests share a launch fixture and JSON helpers.
PROVTEST_SOURCES = tests/unit/provtest.c tests/unit/provtest.h

tests_unit_test_provider_SOURCES = tests/unit/test-provider.c
tests_unit_test_provider_CFLAGS = $(PROV_TEST_CFLAGS)
# It reads daemon/*.c to check that none branches on a provider's name.
tests_unit_test_provider_CPPFLAGS = $(AM_CPPFLAGS) \
	-DGPUQ_TEST_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_provider_LDADD = $(PROV_TEST_LDADD)
tests_unit_test_vertex_SOURCES = tests/unit/test-vertex.c \
	$(PROVTEST_SOURCES)
tests_unit_test_vertex_CFLAGS = $(PROV_TEST_CFLAGS)
tests_unit_test_vertex_LDADD = $(PROV_TEST_LDADD)
tests_unit_test_batch_SOURCES = tests/unit/test-batch.c \
	$(PROVTEST_SOURCES)
tests_unit_test_batch_CFLAGS = $(PROV_TEST_CFLAGS)
tests_unit_test_batch_LDADD = $(PROV_TEST_LDADD)
tests_unit_test_gce_SOURCES = tests/unit/test-gce.c \
	$(PROVTEST_SOURCES)
tests_unit_test_gce_CFLAGS = $(PROV_TEST_CFLAGS)
tests_unit_test_gce_LDADD = $(PROV_TEST_LDADD)
tests_unit_test_site_SOURCES = tests/unit/test-site.c \
	$(PROVTEST_SOURCES)
tests_unit_test_site_CFLAGS = $(PROV_TEST_CFLAGS)
tests_unit_test_site_LDADD = $(PROV_TEST_LDADD)
# Against the simulated cloud (tests/fakegcp); fails without it.
tests_unit_test_providers_live_SOURCES = tests/unit/test-providers-live.c \
	tests/unit/gcptest.c tests/unit/gcptest.h
tests_unit_test_providers_live_CFLAGS = $(PROV_TEST_CFLAGS) \
	$(CURL_CFLAGS) $(OPENSSL_CFLAGS) -DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_providers_live_LDADD = tests/unit/libunittest.a \
	$(PROV_TEST_LDADD)
