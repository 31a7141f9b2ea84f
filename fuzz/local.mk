# fuzz/local.mk: libFuzzer harnesses for every parser of outside input
# (fuzz/README), and the replay of the inputs that once broke gpuq.
#
# ./configure --enable-fuzz builds fuzz/fuzz-<target> with clang,
# -fsanitize=fuzzer,address,undefined; `make fuzz` runs each for
# FUZZ_SECONDS. Every build, with any compiler, builds fuzz/replay-<target>
# (the same harness with fuzz/replay.c's main) and `make check` feeds it
# the seed corpus fuzz/corpus/<target>/ and the regression inputs
# tests/unit/data/fuzz/<target>/.

FUZZ_TARGETS = \
	frame \
	request \
	spec \
	conf \
	yaml \
	jobfile \
	jscan \
	adc \
	token \
	gce \
	batch \
	vertex \
	price \
	quota \
	storage \
	gcperror \
	convert

FUZZ_CFLAGS = $(AM_CFLAGS) $(UV_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS) \
	$(INIH_CFLAGS) $(CURL_CFLAGS) $(OPENSSL_CFLAGS) $(YAML_CFLAGS)
FUZZ_LIBS = store/libstore.a client/libcli.a providers/libproviders.a \
	common/libcommon.a $(UV_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) \
	$(INIH_LIBS) $(CURL_LIBS) $(OPENSSL_LIBS) $(YAML_LIBS) -lm
FUZZ_COMMON = fuzz/fuzz.h fuzz/fuzz-util.c
# What a harness needs beyond the libraries.
FUZZ_SPEC = daemon/spec.c daemon/spec.h
FUZZ_CONF = daemon/conf.c daemon/conf.h
FUZZ_API = daemon/api.c daemon/api-cloud.c daemon/api-logs.c \
	daemon/api-wait.c daemon/api-history.c daemon/api.h \
	daemon/api-int.h \
	$(GPUQD_CLOUD_SOURCES) $(FUZZ_SPEC) $(FUZZ_CONF)

EXTRA_DIST += fuzz/README fuzz/run fuzz/run-ci fuzz/seed fuzz/dict \
	fuzz/corpus tests/unit/data/fuzz

# Replays, in every build.
check_PROGRAMS += \
	fuzz/replay-frame \
	fuzz/replay-request \
	fuzz/replay-spec \
	fuzz/replay-conf \
	fuzz/replay-yaml \
	fuzz/replay-jobfile \
	fuzz/replay-jscan \
	fuzz/replay-adc \
	fuzz/replay-token \
	fuzz/replay-gce \
	fuzz/replay-batch \
	fuzz/replay-vertex \
	fuzz/replay-price \
	fuzz/replay-quota \
	fuzz/replay-storage \
	fuzz/replay-gcperror \
	fuzz/replay-convert
TESTS += fuzz/replay-all
EXTRA_DIST += fuzz/replay-all

fuzz_replay_frame_SOURCES = fuzz/fuzz-frame.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_frame_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_frame_LDADD = $(FUZZ_LIBS)
fuzz_replay_request_SOURCES = fuzz/fuzz-request.c fuzz/replay.c $(FUZZ_COMMON) $(FUZZ_API)
fuzz_replay_request_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_request_LDADD = $(FUZZ_LIBS)
fuzz_replay_spec_SOURCES = fuzz/fuzz-spec.c fuzz/replay.c $(FUZZ_COMMON) $(FUZZ_SPEC)
fuzz_replay_spec_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_spec_LDADD = $(FUZZ_LIBS)
fuzz_replay_conf_SOURCES = fuzz/fuzz-conf.c fuzz/replay.c $(FUZZ_COMMON) $(FUZZ_CONF)
fuzz_replay_conf_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_conf_LDADD = $(FUZZ_LIBS)
fuzz_replay_yaml_SOURCES = fuzz/fuzz-yaml.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_yaml_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_yaml_LDADD = $(FUZZ_LIBS)
fuzz_replay_jobfile_SOURCES = fuzz/fuzz-jobfile.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_jobfile_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_jobfile_LDADD = $(FUZZ_LIBS)
fuzz_replay_jscan_SOURCES = fuzz/fuzz-jscan.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_jscan_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_jscan_LDADD = $(FUZZ_LIBS)
fuzz_replay_adc_SOURCES = fuzz/fuzz-adc.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_adc_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_adc_LDADD = $(FUZZ_LIBS)
fuzz_replay_token_SOURCES = fuzz/fuzz-token.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_token_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_token_LDADD = $(FUZZ_LIBS)
fuzz_replay_gce_SOURCES = fuzz/fuzz-gce.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_gce_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_gce_LDADD = $(FUZZ_LIBS)
fuzz_replay_batch_SOURCES = fuzz/fuzz-batch.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_batch_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_batch_LDADD = $(FUZZ_LIBS)
fuzz_replay_vertex_SOURCES = fuzz/fuzz-vertex.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_vertex_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_vertex_LDADD = $(FUZZ_LIBS)
fuzz_replay_price_SOURCES = fuzz/fuzz-price.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_price_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_price_LDADD = $(FUZZ_LIBS)
fuzz_replay_quota_SOURCES = fuzz/fuzz-quota.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_quota_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_quota_LDADD = $(FUZZ_LIBS)
fuzz_replay_storage_SOURCES = fuzz/fuzz-storage.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_storage_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_storage_LDADD = $(FUZZ_LIBS)
fuzz_replay_gcperror_SOURCES = fuzz/fuzz-gcperror.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_gcperror_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_gcperror_LDADD = $(FUZZ_LIBS)
fuzz_replay_convert_SOURCES = fuzz/fuzz-convert.c fuzz/replay.c $(FUZZ_COMMON)
fuzz_replay_convert_CFLAGS = $(FUZZ_CFLAGS)
fuzz_replay_convert_LDADD = $(FUZZ_LIBS)

if FUZZ
noinst_PROGRAMS += \
	fuzz/fuzz-frame \
	fuzz/fuzz-request \
	fuzz/fuzz-spec \
	fuzz/fuzz-conf \
	fuzz/fuzz-yaml \
	fuzz/fuzz-jobfile \
	fuzz/fuzz-jscan \
	fuzz/fuzz-adc \
	fuzz/fuzz-token \
	fuzz/fuzz-gce \
	fuzz/fuzz-batch \
	fuzz/fuzz-vertex \
	fuzz/fuzz-price \
	fuzz/fuzz-quota \
	fuzz/fuzz-storage \
	fuzz/fuzz-gcperror \
	fuzz/fuzz-convert

fuzz_fuzz_frame_SOURCES = fuzz/fuzz-frame.c $(FUZZ_COMMON)
fuzz_fuzz_frame_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_frame_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_frame_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_request_SOURCES = fuzz/fuzz-request.c $(FUZZ_COMMON) $(FUZZ_API)
fuzz_fuzz_request_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_request_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_request_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_spec_SOURCES = fuzz/fuzz-spec.c $(FUZZ_COMMON) $(FUZZ_SPEC)
fuzz_fuzz_spec_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_spec_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_spec_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_conf_SOURCES = fuzz/fuzz-conf.c $(FUZZ_COMMON) $(FUZZ_CONF)
fuzz_fuzz_conf_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_conf_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_conf_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_yaml_SOURCES = fuzz/fuzz-yaml.c $(FUZZ_COMMON)
fuzz_fuzz_yaml_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_yaml_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_yaml_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_jobfile_SOURCES = fuzz/fuzz-jobfile.c $(FUZZ_COMMON)
fuzz_fuzz_jobfile_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_jobfile_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_jobfile_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_jscan_SOURCES = fuzz/fuzz-jscan.c $(FUZZ_COMMON)
fuzz_fuzz_jscan_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_jscan_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_jscan_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_adc_SOURCES = fuzz/fuzz-adc.c $(FUZZ_COMMON)
fuzz_fuzz_adc_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_adc_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_adc_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_token_SOURCES = fuzz/fuzz-token.c $(FUZZ_COMMON)
fuzz_fuzz_token_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_token_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_token_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_gce_SOURCES = fuzz/fuzz-gce.c $(FUZZ_COMMON)
fuzz_fuzz_gce_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_gce_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_gce_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_batch_SOURCES = fuzz/fuzz-batch.c $(FUZZ_COMMON)
fuzz_fuzz_batch_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_batch_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_batch_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_vertex_SOURCES = fuzz/fuzz-vertex.c $(FUZZ_COMMON)
fuzz_fuzz_vertex_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_vertex_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_vertex_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_price_SOURCES = fuzz/fuzz-price.c $(FUZZ_COMMON)
fuzz_fuzz_price_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_price_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_price_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_quota_SOURCES = fuzz/fuzz-quota.c $(FUZZ_COMMON)
fuzz_fuzz_quota_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_quota_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_quota_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_storage_SOURCES = fuzz/fuzz-storage.c $(FUZZ_COMMON)
fuzz_fuzz_storage_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_storage_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_storage_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_gcperror_SOURCES = fuzz/fuzz-gcperror.c $(FUZZ_COMMON)
fuzz_fuzz_gcperror_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_gcperror_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_gcperror_LDADD = $(FUZZ_LIBS)
fuzz_fuzz_convert_SOURCES = fuzz/fuzz-convert.c $(FUZZ_COMMON)
fuzz_fuzz_convert_CFLAGS = $(FUZZ_CFLAGS)
fuzz_fuzz_convert_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
fuzz_fuzz_convert_LDADD = $(FUZZ_LIBS)

# Each harness for FUZZ_SECONDS; fails on any crash, leak or timeout.
FUZZ_SECONDS = 60
fuzz: $(FUZZ_TARGETS:%=fuzz/fuzz-%)
	FUZZ_SECONDS=$(FUZZ_SECONDS) top_srcdir=$(abs_top_srcdir) \
	    $(srcdir)/fuzz/run $(FUZZ_TARGETS)
else
fuzz:
	@echo "make fuzz: configure with --enable-fuzz (clang, libFuzzer)" >&2
	@exit 1
endif
.PHONY: fuzz
