# store/: the SQLite queue (store/store.h). Links against common/.
noinst_LIBRARIES += store/libstore.a
store_libstore_a_SOURCES = \
	store/store.h store/store-int.h \
	store/store.c \
	store/store-schema.c \
	store/store-job.c \
	store/store-attempt.c \
	store/store-array.c \
	store/store-names.c \
	store/store-acct.c \
	store/store-deadline.c \
	store/store-queue.c
store_libstore_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)

# Unit tests of the store; data/store-v1.sql and data/store-v2.sql are
# databases as versions 1 and 2 of the schema wrote them.
check_PROGRAMS += tests/unit/test-store
TESTS += tests/unit/test-store
tests_unit_test_store_SOURCES = tests/unit/test-store.c
tests_unit_test_store_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_store_CPPFLAGS = $(AM_CPPFLAGS) \
	-DSTORE_TEST_DATA='"$(abs_top_srcdir)/tests/unit/data"'
tests_unit_test_store_LDADD = tests/unit/libunittest.a store/libstore.a \
	common/libcommon.a \
	$(SQLITE_LIBS) $(CMOCKA_LIBS)
EXTRA_DIST += tests/unit/data/store-v1.sql tests/unit/data/store-v2.sql \
	tests/unit/data/store-v13.sql
