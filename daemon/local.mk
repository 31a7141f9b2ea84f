# daemon/local.mk: gpuqd, the daemon (sbin), its manual pages and the
# unit tests of its framing and configuration.
include $(srcdir)/daemon/spec.mk

sbin_PROGRAMS += gpuqd
gpuqd_SOURCES = \
	daemon/gpuqd.c \
	daemon/conf.c daemon/conf.h \
	daemon/server.c daemon/server.h \
	daemon/api.c daemon/api.h daemon/api-int.h \
	daemon/api-cloud.c daemon/api-logs.c \
	daemon/api-wait.c \
	daemon/api-history.c \
	daemon/spec.c daemon/spec.h \
	daemon/notify.c daemon/notify.h \
	daemon/metrics.c daemon/metrics.h \
	$(GPUQD_CLOUD_SOURCES)
gpuqd_CFLAGS = $(AM_CFLAGS) $(UV_CFLAGS) $(SQLITE_CFLAGS) \
	$(JANSSON_CFLAGS) $(SYSTEMD_CFLAGS) $(INIH_CFLAGS) $(CURL_CFLAGS) \
	$(OPENSSL_CFLAGS)
# An uninstalled gpuqd (tests, the demo) finds the bundled price table in
# the source tree when GPUQ_DATADIR has none (daemon/cloud.c).
gpuqd_CPPFLAGS = $(AM_CPPFLAGS) -DGPUQ_TOP_SRCDIR='"$(abs_top_srcdir)"'
gpuqd_LDADD = store/libstore.a providers/libproviders.a common/libcommon.a \
	$(UV_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) $(SYSTEMD_LIBS) \
	$(INIH_LIBS) $(CURL_LIBS) $(OPENSSL_LIBS) -lm

# The job lifecycle: the hold on the cloud, the scheduler, the owner of
# the attempts, the reconciler and the expected-cost arithmetic.
GPUQD_CLOUD_SOURCES = \
	daemon/cloud.c daemon/cloud.h \
	daemon/sched.c daemon/sched.h \
	daemon/sched-offer.c daemon/sched-offer.h \
	daemon/sched-place.c daemon/sched-place.h \
	daemon/sched-gate.c daemon/sched-gate.h \
	daemon/attempt.c daemon/attempt.h \
	daemon/reconcile.c daemon/reconcile.h \
	daemon/cost.c daemon/cost.h \
	daemon/deadline.c daemon/deadline.h \
	daemon/sched-deadline.c daemon/sched-deadline.h \
	daemon/sched-move.c daemon/sched-move.h \
	daemon/doctor.c daemon/doctor.h \
	daemon/logs.c daemon/logs.h

# Unit tests of the expected cost (pure) and of the scheduler against
# the simulated cloud (tests/unit/gcptest.c starts tests/fakegcp).
check_PROGRAMS += tests/unit/test-cost
TESTS += tests/unit/test-cost
tests_unit_test_cost_SOURCES = tests/unit/test-cost.c \
	daemon/cost.c daemon/cost.h \
	daemon/deadline.c daemon/deadline.h
tests_unit_test_cost_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_cost_LDADD = $(CMOCKA_LIBS) -lm

# Unit tests of the deadline policy (pure) and the times it reads.
check_PROGRAMS += tests/unit/test-deadline
TESTS += tests/unit/test-deadline
tests_unit_test_deadline_SOURCES = tests/unit/test-deadline.c \
	daemon/deadline.c daemon/deadline.h
tests_unit_test_deadline_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_deadline_LDADD = common/libcommon.a $(CMOCKA_LIBS) -lm

# Unit tests: common/frame.c as the server uses it, and gpuqd.conf.
check_PROGRAMS += tests/unit/test-frame tests/unit/test-conf
TESTS += tests/unit/test-frame tests/unit/test-conf
tests_unit_test_frame_SOURCES = tests/unit/test-frame.c
tests_unit_test_frame_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_frame_LDADD = common/libcommon.a $(CMOCKA_LIBS)
tests_unit_test_conf_SOURCES = tests/unit/test-conf.c \
	daemon/conf.c daemon/conf.h
tests_unit_test_conf_CFLAGS = $(AM_CFLAGS) $(INIH_CFLAGS) $(JANSSON_CFLAGS) \
	$(CMOCKA_CFLAGS)
tests_unit_test_conf_CPPFLAGS = $(AM_CPPFLAGS) \
	-DGPUQ_TEST_SRCDIR='"$(abs_top_srcdir)"'
# test-conf compares conf.c's defaults with gcp-conf.c's.
tests_unit_test_conf_LDADD = tests/unit/libunittest.a \
	providers/libproviders.a common/libcommon.a \
	$(INIH_LIBS) $(CMOCKA_LIBS)

# Manual pages of the daemon and its configuration (man/local.mk lints
# every page in man/).
dist_man_MANS += man/gpuqd.8 man/gpuqd.conf.5

# The scheduler's pure parts on a market given as plain data (linked
# with quota.c, which sched-place.c reads buckets from outside tests).
check_PROGRAMS += tests/unit/test-sched-offer tests/unit/test-sched-place
TESTS += tests/unit/test-sched-offer tests/unit/test-sched-place
SCHED_PURE_SOURCES = tests/unit/schedtest.c tests/unit/schedtest.h \
	daemon/sched-offer.c daemon/sched-offer.h \
	daemon/sched-place.c daemon/sched-place.h \
	daemon/cost.c daemon/cost.h \
	daemon/deadline.c daemon/deadline.h
tests_unit_test_sched_offer_SOURCES = tests/unit/test-sched-offer.c \
	$(SCHED_PURE_SOURCES)
tests_unit_test_sched_offer_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) \
	$(CMOCKA_CFLAGS)
tests_unit_test_sched_offer_LDADD = providers/libproviders.a \
	common/libcommon.a $(UV_LIBS) $(JANSSON_LIBS) $(CURL_LIBS) \
	$(OPENSSL_LIBS) $(CMOCKA_LIBS) -lm
tests_unit_test_sched_place_SOURCES = tests/unit/test-sched-place.c \
	$(SCHED_PURE_SOURCES)
tests_unit_test_sched_place_CFLAGS = $(tests_unit_test_sched_offer_CFLAGS)
tests_unit_test_sched_place_LDADD = $(tests_unit_test_sched_offer_LDADD)

# The scheduler, the attempts' outcomes and the reconciler, each over
# the fixture of tests/unit/cloudtest.h (the simulated cloud for quotas
# and zones, scripted providers for launches and listings).
CLOUDTEST_SOURCES = tests/unit/cloudtest.c tests/unit/cloudtest.h \
	tests/unit/gcptest.c tests/unit/gcptest.h \
	$(GPUQD_CLOUD_SOURCES) \
	daemon/conf.c daemon/conf.h \
	daemon/spec.c daemon/spec.h
CLOUDTEST_CFLAGS = $(AM_CFLAGS) $(UV_CFLAGS) $(SQLITE_CFLAGS) \
	$(JANSSON_CFLAGS) $(INIH_CFLAGS) $(CURL_CFLAGS) $(OPENSSL_CFLAGS) \
	$(CMOCKA_CFLAGS) -DTOP_SRCDIR='"$(abs_top_srcdir)"'
CLOUDTEST_LDADD = tests/unit/libunittest.a store/libstore.a \
	providers/libproviders.a \
	common/libcommon.a $(UV_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) \
	$(INIH_LIBS) $(CURL_LIBS) $(OPENSSL_LIBS) $(CMOCKA_LIBS) -lm

check_PROGRAMS += tests/unit/test-sched tests/unit/test-attempt \
	tests/unit/test-reconcile tests/unit/test-logs
TESTS += tests/unit/test-sched tests/unit/test-attempt \
	tests/unit/test-reconcile tests/unit/test-logs
tests_unit_test_logs_SOURCES = tests/unit/test-logs.c $(CLOUDTEST_SOURCES)
tests_unit_test_logs_CFLAGS = $(CLOUDTEST_CFLAGS)
tests_unit_test_logs_LDADD = $(CLOUDTEST_LDADD)
tests_unit_test_sched_SOURCES = tests/unit/test-sched.c $(CLOUDTEST_SOURCES)
tests_unit_test_sched_CFLAGS = $(CLOUDTEST_CFLAGS)
tests_unit_test_sched_LDADD = $(CLOUDTEST_LDADD)
tests_unit_test_attempt_SOURCES = tests/unit/test-attempt.c \
	$(CLOUDTEST_SOURCES)
tests_unit_test_attempt_CFLAGS = $(CLOUDTEST_CFLAGS)
tests_unit_test_attempt_LDADD = $(CLOUDTEST_LDADD)
tests_unit_test_reconcile_SOURCES = tests/unit/test-reconcile.c \
	$(CLOUDTEST_SOURCES)
tests_unit_test_reconcile_CFLAGS = $(CLOUDTEST_CFLAGS)
tests_unit_test_reconcile_LDADD = $(CLOUDTEST_LDADD)

# Unit tests of the ops (a real store and server on one loop), of the
# server's framing, and of cloud.c's pure functions.
GPUQD_TEST_CFLAGS = $(AM_CFLAGS) $(UV_CFLAGS) $(SQLITE_CFLAGS) \
	$(JANSSON_CFLAGS) $(INIH_CFLAGS) $(CURL_CFLAGS) $(OPENSSL_CFLAGS) \
	$(CMOCKA_CFLAGS)
GPUQD_TEST_LDADD = tests/unit/libunittest.a store/libstore.a \
	providers/libproviders.a \
	common/libcommon.a $(UV_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) \
	$(INIH_LIBS) $(CURL_LIBS) $(OPENSSL_LIBS) $(CMOCKA_LIBS) -lm
check_PROGRAMS += tests/unit/test-api
TESTS += tests/unit/test-api
tests_unit_test_api_SOURCES = tests/unit/test-api.c \
	tests/unit/socktest.c tests/unit/socktest.h \
	daemon/api.c daemon/api-cloud.c daemon/api-logs.c daemon/api-wait.c \
	daemon/api-history.c daemon/server.c \
	daemon/conf.c daemon/spec.c $(GPUQD_CLOUD_SOURCES)
tests_unit_test_api_CFLAGS = $(GPUQD_TEST_CFLAGS)
tests_unit_test_api_LDADD = $(GPUQD_TEST_LDADD)
check_PROGRAMS += tests/unit/test-server
TESTS += tests/unit/test-server
tests_unit_test_server_SOURCES = tests/unit/test-server.c \
	tests/unit/socktest.c tests/unit/socktest.h \
	daemon/server.c daemon/conf.c
tests_unit_test_server_CFLAGS = $(GPUQD_TEST_CFLAGS)
tests_unit_test_server_LDADD = $(GPUQD_TEST_LDADD)
check_PROGRAMS += tests/unit/test-cloud
TESTS += tests/unit/test-cloud
tests_unit_test_cloud_SOURCES = tests/unit/test-cloud.c \
	daemon/conf.c $(GPUQD_CLOUD_SOURCES)
tests_unit_test_cloud_CFLAGS = $(GPUQD_TEST_CFLAGS) \
	-DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_cloud_LDADD = $(GPUQD_TEST_LDADD)

# Job events and their bodies, the store's watchers, webhook URLs, the
# Prometheus writer and the journal's fields.
check_PROGRAMS += tests/unit/test-notify
TESTS += tests/unit/test-notify
tests_unit_test_notify_SOURCES = tests/unit/test-notify.c \
	daemon/notify.c daemon/notify.h \
	daemon/metrics.c daemon/metrics.h \
	daemon/conf.c $(GPUQD_CLOUD_SOURCES)
tests_unit_test_notify_CFLAGS = $(GPUQD_TEST_CFLAGS)
tests_unit_test_notify_LDADD = $(GPUQD_TEST_LDADD)

# Dependencies and array parallelism before placement, over a real store.
check_PROGRAMS += tests/unit/test-sched-gate
TESTS += tests/unit/test-sched-gate
tests_unit_test_sched_gate_SOURCES = tests/unit/test-sched-gate.c \
	daemon/sched-gate.c daemon/sched-gate.h
tests_unit_test_sched_gate_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) \
	$(JANSSON_CFLAGS) $(UV_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_sched_gate_LDADD = tests/unit/libunittest.a store/libstore.a \
	common/libcommon.a $(SQLITE_LIBS) $(JANSSON_LIBS) $(UV_LIBS) \
	$(CMOCKA_LIBS)
