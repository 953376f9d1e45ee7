# install.mk - `make install` (PREFIX, DESTDIR) and `make install-check`
#
#   make install                       # /usr/local/bin/mnemod, unit, man page, /etc/mnemod
#   make install PREFIX=/usr DESTDIR=/tmp/stage
#   make install-check                 # installs into a temporary DESTDIR and checks it
#
# The unit's ExecStart names $(BINDIR)/mnemod and $(SYSCONFDIR)/mnemod/mnemod.conf.
# An existing mnemod.conf is never overwritten; the sample is always refreshed.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL    ?= install

.PHONY: install uninstall install-check

install:
	@$(MAKE) --no-print-directory FLAVOR=release build/release/mnemod
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(MANDIR)/man1 \
	    $(DESTDIR)$(SYSCONFDIR)/mnemod
	$(INSTALL) -m 0755 build/release/mnemod $(DESTDIR)$(BINDIR)/mnemod
	sed -e 's|/usr/local/bin/mnemod|$(BINDIR)/mnemod|g' \
	    -e 's|/etc/mnemod/|$(SYSCONFDIR)/mnemod/|g' systemd/mnemod.service \
	    > $(DESTDIR)$(UNITDIR)/mnemod.service.tmp
	chmod 0644 $(DESTDIR)$(UNITDIR)/mnemod.service.tmp
	mv $(DESTDIR)$(UNITDIR)/mnemod.service.tmp $(DESTDIR)$(UNITDIR)/mnemod.service
	$(INSTALL) -m 0644 docs/mnemod.1 $(DESTDIR)$(MANDIR)/man1/mnemod.1
	$(INSTALL) -m 0644 etc/mnemod.conf.sample $(DESTDIR)$(SYSCONFDIR)/mnemod/mnemod.conf.sample
	@if [ ! -e $(DESTDIR)$(SYSCONFDIR)/mnemod/mnemod.conf ]; then \
	    echo "$(INSTALL) -m 0644 etc/mnemod.conf.sample $(DESTDIR)$(SYSCONFDIR)/mnemod/mnemod.conf"; \
	    $(INSTALL) -m 0644 etc/mnemod.conf.sample $(DESTDIR)$(SYSCONFDIR)/mnemod/mnemod.conf; \
	else echo "keeping existing $(DESTDIR)$(SYSCONFDIR)/mnemod/mnemod.conf"; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/mnemod $(DESTDIR)$(UNITDIR)/mnemod.service \
	    $(DESTDIR)$(MANDIR)/man1/mnemod.1 $(DESTDIR)$(SYSCONFDIR)/mnemod/mnemod.conf.sample
	@echo "left in place: $(DESTDIR)$(SYSCONFDIR)/mnemod/mnemod.conf and /var/lib/mnemod"

install-check:
	@$(MAKE) --no-print-directory FLAVOR=release build/release/mnemod
	sh tests/install/test_install.sh
