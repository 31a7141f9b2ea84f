# systemd/local.mk: what `make install` puts around the binaries — the
# systemd units, the sysusers.d and tmpfiles.d snippets, the default
# gpuqd.conf and the bash completion of gpuq.
#
# Where they go, each overridable on the make command line
# (`make install sysusersdir=/usr/lib/sysusers.d`):
#   systemdsystemunitdir  from configure (systemd.pc, or --with-...)
#   sysusersdir           $(prefix)/lib/sysusers.d
#   tmpfilesdir           $(prefix)/lib/tmpfiles.d
#   gpuqconfdir           $(sysconfdir)/gpuq
#   bashcompletiondir     $(datadir)/bash-completion/completions
# systemd reads sysusers.d and tmpfiles.d only under /etc, /run and
# /usr/lib: with another prefix, run the installed snippets by path (the
# install prints how).
#
# gpuqd.conf is installed only when absent, so `make install` never undoes
# an administrator's edits, and uninstalled only while still unchanged.

sysusersdir = $(prefix)/lib/sysusers.d
tmpfilesdir = $(prefix)/lib/tmpfiles.d
gpuqconfdir = $(sysconfdir)/gpuq
bashcompletiondir = $(datadir)/bash-completion/completions

nodist_systemdsystemunit_DATA = systemd/gpuqd.service
dist_systemdsystemunit_DATA = systemd/gpuqd.socket
CLEANFILES += systemd/gpuqd.service
EXTRA_DIST += systemd/gpuqd.service.in systemd/gpuq.sysusers \
	systemd/gpuq.tmpfiles systemd/gpuqd.conf \
	client/gpuq-completion.bash

# Autotools-style substitution at make time, so the unit follows --prefix
# and --sbindir without configure knowing about it.
systemd/gpuqd.service: $(srcdir)/systemd/gpuqd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	sed -e 's|@sbindir[@]|$(sbindir)|g' \
	    -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	    $(srcdir)/systemd/gpuqd.service.in >$@.tmp && mv $@.tmp $@

# Renamed on the way in, which _DATA cannot do.
install-data-hook: systemd-install-data
uninstall-hook: systemd-uninstall-data

systemd-install-data:
	$(MKDIR_P) '$(DESTDIR)$(sysusersdir)' '$(DESTDIR)$(tmpfilesdir)' \
	    '$(DESTDIR)$(gpuqconfdir)' '$(DESTDIR)$(bashcompletiondir)'
	$(INSTALL_DATA) $(srcdir)/systemd/gpuq.sysusers \
	    '$(DESTDIR)$(sysusersdir)/gpuq.conf'
	$(INSTALL_DATA) $(srcdir)/systemd/gpuq.tmpfiles \
	    '$(DESTDIR)$(tmpfilesdir)/gpuq.conf'
	$(INSTALL_DATA) $(srcdir)/client/gpuq-completion.bash \
	    '$(DESTDIR)$(bashcompletiondir)/gpuq'
	@if test -f '$(DESTDIR)$(gpuqconfdir)/gpuqd.conf'; then \
	  echo "keeping existing $(DESTDIR)$(gpuqconfdir)/gpuqd.conf"; \
	else \
	  echo " $(INSTALL_DATA) systemd/gpuqd.conf '$(DESTDIR)$(gpuqconfdir)/gpuqd.conf'"; \
	  $(INSTALL_DATA) $(srcdir)/systemd/gpuqd.conf \
	    '$(DESTDIR)$(gpuqconfdir)/gpuqd.conf'; \
	fi
	@test -n '$(DESTDIR)' || { \
	  echo; \
	  echo "To run gpuqd under systemd:"; \
	  echo "  systemd-sysusers $(sysusersdir)/gpuq.conf"; \
	  echo "  systemd-tmpfiles --create $(tmpfilesdir)/gpuq.conf"; \
	  echo "  systemctl daemon-reload"; \
	  echo "  systemctl enable --now gpuqd.socket gpuqd.service"; \
	  echo "then edit $(gpuqconfdir)/gpuqd.conf ([gcp] project) and"; \
	  echo "  systemctl restart gpuqd; usermod -aG gpuq YOURNAME"; \
	  echo "([gcp] keys need a restart; 'systemctl reload gpuqd' applies"; \
	  echo "the keys gpuqd.conf(5) marks reload)"; \
	  echo; }

systemd-uninstall-data:
	rm -f '$(DESTDIR)$(sysusersdir)/gpuq.conf' \
	    '$(DESTDIR)$(tmpfilesdir)/gpuq.conf' \
	    '$(DESTDIR)$(bashcompletiondir)/gpuq'
	@if cmp -s $(srcdir)/systemd/gpuqd.conf \
	    '$(DESTDIR)$(gpuqconfdir)/gpuqd.conf'; then \
	  echo " rm -f '$(DESTDIR)$(gpuqconfdir)/gpuqd.conf'"; \
	  rm -f '$(DESTDIR)$(gpuqconfdir)/gpuqd.conf'; \
	elif test -f '$(DESTDIR)$(gpuqconfdir)/gpuqd.conf'; then \
	  echo "keeping edited $(DESTDIR)$(gpuqconfdir)/gpuqd.conf"; \
	fi

.PHONY: systemd-install-data systemd-uninstall-data

# distcheck installs under its own prefix, as an unprivileged user: keep
# the unit directory inside it rather than systemd's absolute one.
AM_DISTCHECK_CONFIGURE_FLAGS = \
	--with-systemdsystemunitdir='$$(prefix)/lib/systemd/system'
