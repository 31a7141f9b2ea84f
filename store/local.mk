# store/local.mk: filled in by the owner of store/.
