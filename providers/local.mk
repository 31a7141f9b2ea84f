# providers/local.mk: the cloud side of gpuqd -- the shared Google Cloud
# plumbing in providers/gcp/ and, added by their authors, one file per way
# to run a job. Provider files extend the library's sources:
#   providers_libproviders_a_SOURCES += providers/vertex.c ...
noinst_LIBRARIES += providers/libproviders.a

GCP_SOURCES = \
	providers/gcp/gcp.h providers/gcp/gcp-defaults.h \
	providers/gcp/gcp-conf.c \
	providers/gcp/gcp-site.c \
	providers/gcp/gcp-error.c \
	providers/gcp/http.c providers/gcp/http.h \
	providers/gcp/auth.c providers/gcp/auth.h \
	providers/gcp/quota.c providers/gcp/quota.h \
	providers/gcp/reservation.c providers/gcp/reservation.h \
	providers/gcp/price.c providers/gcp/price.h \
	providers/gcp/price-flex.c \
	providers/gcp/storage.c providers/gcp/storage.h \
	providers/gcp/logging.c providers/gcp/logging.h \
	providers/gcp/gcp.c

providers_libproviders_a_SOURCES = $(GCP_SOURCES)
providers_libproviders_a_CFLAGS = $(AM_CFLAGS) $(UV_CFLAGS) $(CURL_CFLAGS) \
	$(JANSSON_CFLAGS) $(OPENSSL_CFLAGS)

# The bundled fallback price table (data/README.md), read from
# GPUQ_DATADIR at run time; data/ as a whole is in EXTRA_DIST already.
dist_pkgdata_DATA += data/prices.csv

# What a program linking libproviders.a needs after it.
PROVIDERS_LIBS = providers/libproviders.a common/libcommon.a \
	$(UV_LIBS) $(CURL_LIBS) $(JANSSON_LIBS) $(OPENSSL_LIBS) -lm

# Unit tests that talk real HTTP to the simulated cloud (tests/fakegcp).
GCP_TEST_CFLAGS = $(AM_CFLAGS) $(UV_CFLAGS) $(CURL_CFLAGS) \
	$(JANSSON_CFLAGS) $(OPENSSL_CFLAGS) $(CMOCKA_CFLAGS)
GCP_TEST_LIBS = tests/unit/libunittest.a $(PROVIDERS_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test-http
TESTS += tests/unit/test-http
tests_unit_test_http_SOURCES = tests/unit/test-http.c \
	tests/unit/gcptest.c tests/unit/gcptest.h
tests_unit_test_http_CFLAGS = $(GCP_TEST_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_http_LDADD = $(GCP_TEST_LIBS)

check_PROGRAMS += tests/unit/test-auth
TESTS += tests/unit/test-auth
tests_unit_test_auth_SOURCES = tests/unit/test-auth.c \
	tests/unit/gcptest.c tests/unit/gcptest.h
tests_unit_test_auth_CFLAGS = $(GCP_TEST_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_auth_LDADD = $(GCP_TEST_LIBS)

check_PROGRAMS += tests/unit/test-quota
TESTS += tests/unit/test-quota
tests_unit_test_quota_SOURCES = tests/unit/test-quota.c \
	tests/unit/gcptest.c tests/unit/gcptest.h
tests_unit_test_quota_CFLAGS = $(GCP_TEST_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_quota_LDADD = $(GCP_TEST_LIBS)

check_PROGRAMS += tests/unit/test-price
TESTS += tests/unit/test-price
tests_unit_test_price_SOURCES = tests/unit/test-price.c \
	tests/unit/gcptest.c tests/unit/gcptest.h
tests_unit_test_price_CFLAGS = $(GCP_TEST_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_price_LDADD = $(GCP_TEST_LIBS)

check_PROGRAMS += tests/unit/test-storage
TESTS += tests/unit/test-storage
tests_unit_test_storage_SOURCES = tests/unit/test-storage.c \
	tests/unit/gcptest.c tests/unit/gcptest.h
tests_unit_test_storage_CFLAGS = $(GCP_TEST_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_storage_LDADD = $(GCP_TEST_LIBS)

check_PROGRAMS += tests/unit/test-logging
TESTS += tests/unit/test-logging
tests_unit_test_logging_SOURCES = tests/unit/test-logging.c \
	tests/unit/gcptest.c tests/unit/gcptest.h
tests_unit_test_logging_CFLAGS = $(GCP_TEST_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_logging_LDADD = $(GCP_TEST_LIBS)

# The providers (vertex, batch, gce, null) and their tests, appended by
# their authors.
include $(srcdir)/providers/providers.mk

check_PROGRAMS += tests/unit/test-reservation
TESTS += tests/unit/test-reservation
tests_unit_test_reservation_SOURCES = tests/unit/test-reservation.c \
	tests/unit/gcptest.c tests/unit/gcptest.h
tests_unit_test_reservation_CFLAGS = $(GCP_TEST_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_reservation_LDADD = $(GCP_TEST_LIBS)
