# providers/local.mk: filled in by the owner of providers/.
