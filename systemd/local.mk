# systemd/local.mk: filled in by the owner of systemd/.
