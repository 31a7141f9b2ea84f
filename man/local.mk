# man/local.mk: filled in by the owner of man/.
