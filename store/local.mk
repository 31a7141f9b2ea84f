# store/: the SQLite queue (store/store.h). Links against common/.
noinst_LIBRARIES += store/libstore.a
store_libstore_a_SOURCES = \
	store/store.h store/store-int.h \
	store/store.c \
	store/store-schema.c \
	store/store-job.c \
	store/store-attempt.c \
	store/store-names.c
store_libstore_a_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
