# client/local.mk: gpuq(1), the command people type.
#
# client/libcli.a holds the parts unit tests drive without a daemon
# (job files, YAML, tables, formatting, the connection); gpuq adds the
# command table and the commands.
noinst_LIBRARIES += client/libcli.a
client_libcli_a_SOURCES = \
	client/cli.h \
	client/conn.c \
	client/convert.c \
	client/fmt.c \
	client/jobfile.c \
	client/jscan.c \
	client/table.c \
	client/yaml.c \
	client/yaml-out.c
client_libcli_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(YAML_CFLAGS)

bin_PROGRAMS += gpuq
gpuq_SOURCES = \
	client/gpuq.c \
	client/cli-cloud.c \
	client/cli-job.c \
	client/cli-ping.c client/cli-logs.c \
	client/cli-metrics.c \
	client/cli-doctor.c \
	client/cli-wait.c \
	client/cli-history.c \
	client/cli-show.c \
	client/cli-status.c \
	client/cli-submit.c
gpuq_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
# jansson and libyaml are linked from their static archives when the
# -dev packages ship them (configure checks; GPUQ_CLIENT_LIBS): gpuq is
# one short process per command, and loading two more shared objects cost
# it about 0.1 ms of its ~0.8 ms of CPU per run (bench/submit, one gpuq
# submit process per job).
gpuq_LDADD = client/libcli.a common/libcommon.a $(GPUQ_CLIENT_LIBS)
dist_man_MANS += man/gpuq.1

# Unit tests of the parts above (cmocka).
check_PROGRAMS += tests/unit/test-yaml tests/unit/test-table \
	tests/unit/test-convert
TESTS += tests/unit/test-yaml tests/unit/test-table tests/unit/test-convert
tests_unit_test_yaml_SOURCES = tests/unit/test-yaml.c
tests_unit_test_yaml_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_yaml_LDADD = tests/unit/libunittest.a client/libcli.a \
	common/libcommon.a \
	$(JANSSON_LIBS) $(YAML_LIBS) $(CMOCKA_LIBS)
tests_unit_test_table_SOURCES = tests/unit/test-table.c
tests_unit_test_table_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(CMOCKA_CFLAGS)
tests_unit_test_table_LDADD = client/libcli.a common/libcommon.a \
	$(JANSSON_LIBS) $(YAML_LIBS) $(CMOCKA_LIBS)
tests_unit_test_convert_SOURCES = tests/unit/test-convert.c
tests_unit_test_convert_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) \
	$(CMOCKA_CFLAGS) -DTOP_SRCDIR='"$(abs_top_srcdir)"'
tests_unit_test_convert_LDADD = client/libcli.a common/libcommon.a \
	$(JANSSON_LIBS) $(YAML_LIBS) $(CMOCKA_LIBS)
EXTRA_DIST += tests/unit/data/convert
