# bench/local.mk: benchmarks that print figures (not tests). bench/run
# builds these and runs bench/submit and bench/status.
noinst_PROGRAMS += bench/bench-submit bench/bench-fill bench/bench-client
bench_bench_submit_SOURCES = bench/bench-submit.c
bench_bench_submit_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_bench_submit_LDADD = $(SQLITE_LIBS)
bench_bench_client_SOURCES = bench/bench-client.c
bench_bench_client_CFLAGS = $(AM_CFLAGS)
bench_bench_fill_SOURCES = bench/bench-fill.c
bench_bench_fill_CFLAGS = $(AM_CFLAGS)
bench_bench_fill_LDADD = store/libstore.a common/libcommon.a $(SQLITE_LIBS)
EXTRA_DIST += bench/run bench/submit bench/status bench/history \
	bench/benchlib.py bench/poll.py bench/sched.py bench/array.py \
	bench/recovery.py bench/memory.py bench/README-cloud.md \
	bench/replay bench/replaylib.py bench/replay_fake.py \
	bench/replay_bound.py bench/replay_workload.py bench/data
