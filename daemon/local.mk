# daemon/local.mk: filled in by the owner of daemon/.
