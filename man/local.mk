# man/local.mk: the manual pages, and a lint of every page in man/.
# gpuq-job(5), the job file, lives here; the other pages come with
# their program's local.mk.
TESTS += tests/lint-man
EXTRA_DIST += tests/lint-man
dist_man_MANS += man/gpuq-job.5
