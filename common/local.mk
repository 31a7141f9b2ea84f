# common/: what gpuq and gpuqd share.
noinst_LIBRARIES += common/libcommon.a
common_libcommon_a_SOURCES = \
	common/log.c common/log.h \
	common/xmalloc.c common/xmalloc.h \
	common/frame.c common/frame.h \
	common/duration.c common/duration.h \
	common/gpu.c common/gpu.h \
	common/strdist.c common/strdist.h \
	common/proto.h
common_libcommon_a_CFLAGS = $(AM_CFLAGS)
