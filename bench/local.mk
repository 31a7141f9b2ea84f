# bench/local.mk: filled in by the owner of bench/.
