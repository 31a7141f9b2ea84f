# client/local.mk: filled in by the owner of client/.
