# man/local.mk: the manual pages, and a lint of every page in man/.
# gpuq-job(5) is added here once written; the other pages come with
# their program's local.mk.
TESTS += tests/lint-man
EXTRA_DIST += tests/lint-man
