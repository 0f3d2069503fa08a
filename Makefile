# blockd — build, run and test. See README.md.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

PREFIX ?= /usr/local
SWIFT ?= swift
SWIFTFLAGS ?=

.PHONY: all build release run try check test clean install uninstall deb lint-man bench torture nss browser

all: build

build: nss
	@scripts/deps build
	$(SWIFT) build $(SWIFTFLAGS)

release: nss
	@scripts/deps build
	$(SWIFT) build -c release $(SWIFTFLAGS)

# libnss_blockd.so.2, the NSS hosts module for per-user web blocks (nss/nss_blockd.c), built
# with the system's gcc outside SwiftPM: glibc loads it into every program that resolves a
# name, so it links nothing but libc. Written to a temp name and renamed, so parallel builds
# (the install tests) never see half a library.
NSS_CC ?= gcc
NSS_CFLAGS ?= -O2 -g -D_FORTIFY_SOURCE=2
NSS_OUT := .build/nss/libnss_blockd.so.2
nss: $(NSS_OUT)
$(NSS_OUT): nss/nss_blockd.c
	@mkdir -p $(@D)
	$(NSS_CC) -std=c11 -Wall -Wextra -Werror $(NSS_CFLAGS) -fPIC -fvisibility=hidden -shared \
	  -Wl,-soname,libnss_blockd.so.2 -Wl,-z,relro,-z,now -o $@.$$$$ $< && mv -f $@.$$$$ $@

# B1: blockd's browser extension (browser/) packed into .build/browser: blockd.crx (Chromium's
# CRX3, signed), blockd.xpi (Firefox, unsigned), chromium-id, firefox-id and updates.xml, whose
# codebase is file://$(PREFIX)/share/blockd/browser/blockd.crx. python3 and openssl only. The
# key (EXTENSION_KEY=path, else .build/browser-key/blockd-extension.pem, made once) fixes the
# Chromium ID; see docs/BROWSER.md.
browser:
	PREFIX='$(PREFIX)' scripts/pack-extension .build/browser

# The main job: blockd in the foreground on its built-in defaults.
run: build
	$$($(SWIFT) build $(SWIFTFLAGS) --show-bin-path)/blockd $(ARGS)

# blockd in the foreground in a sandbox of its own (scripts/try): its own socket, state,
# configuration and hosts file, every machine-wide effect off, the log on the terminal; it
# prints the `export BLOCKD_SOCKET=...` line for blockc. Any user; TRY_DIR= keeps the sandbox.
try: build
	@scripts/try "$$($(SWIFT) build $(SWIFTFLAGS) --show-bin-path)" $(ARGS)

# Installs into $(DESTDIR)$(PREFIX) (blockd, stripped, with blockc and blockc-agent as symbolic
# links to it, P1; man pages, completions) and systemd's
# directories (units, sysusers.d, catalog); see scripts/install. On a live system with systemd
# as PID 1 it also creates group blockd and enables blockd.socket and blockd.service.
# BINDIR_SRC=DIR installs the blockd already built in DIR instead of a release build (tests).
# It also installs libnss_blockd.so.2 and puts `blockd` first on the hosts: line of
# $(DESTDIR)/etc/nsswitch.conf (uninstall takes exactly that out again), and (B1) the browser
# extension, packed for $(PREFIX) (updates.xml names the installed path), with its
# native-messaging host.
install: $(if $(BINDIR_SRC),,release) nss
	@PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' NSS_SRC='$(CURDIR)/$(NSS_OUT)' \
	  BINDIR_SRC="$(or $(BINDIR_SRC),$$($(SWIFT) build -c release $(SWIFTFLAGS) --show-bin-path))" \
	  scripts/install install

uninstall:
	@PREFIX='$(PREFIX)' DESTDIR='$(DESTDIR)' scripts/install uninstall

# The Debian package blockd_VERSION_ARCH.deb in the repository's root (scripts/deb, debian/):
# the release blockd and its links staged by scripts/install with PREFIX=/usr, packed by
# dpkg-deb (xz: 5 MB, about 15 s on 2 cores), then lintian, which must find no error or warning
# (debian/blockd.lintian-overrides says why each remaining finding stays). VERSION is
# BlockdVersion.version; DEB_VERSION=... and DEB_COMPRESS=gzip|none are passed to scripts/deb.
# Install it with `sudo apt install ./blockd_*.deb` (docs/SHIPPING.md, "The Debian package").
deb: release nss
	@scripts/deps deb
	@deb=$$(BINDIR_SRC="$$($(SWIFT) build -c release $(SWIFTFLAGS) --show-bin-path)" NSS_SRC='$(CURDIR)/$(NSS_OUT)' \
	  scripts/deb | tee /dev/stderr | tail -n 1) && \
	  echo "lintian --pedantic -I $$deb" && lintian --fail-on error,warning --pedantic -I "$$deb" && echo "built $$deb"

# The man pages must lint clean.
lint-man:
	mandoc -Tlint -W warning man/blockd.8 man/blockc.1 man/blockd.conf.5

# The whole test suite (what CI runs). Privileged tests run when BLOCKD_PRIVILEGED_TESTS=1.
# InstallTests and ManPageTests (BlockMetaTests) cover the DESTDIR install, systemd-analyze verify, the journal
# catalog, the completions and the man pages' lint. The last step is the bounded fast subset
# of the fault and abuse suite (`make torture` runs the whole of it). With
# BLOCKD_PRIVILEGED_TESTS=1 a skipped test fails the check (scripts/no-skips).
check:
	@scripts/deps check
	$(MAKE) --no-print-directory lint-man
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	set -o pipefail; $(SWIFT) test --skip-build $(SWIFTFLAGS) 2>&1 | tee .build/test-output.txt
	scripts/no-skips .build/test-output.txt
	PYTHONDONTWRITEBYTECODE=1 torture/run "$$($(SWIFT) build $(SWIFTFLAGS) --show-bin-path)" --quick

test: check

# Measurements, not tests (not part of `check`): each figure with a baseline from the same
# run, then the targets with pass or below and the cause of each below (bench/targets.py,
# bench/causes.json). Writes bench/results.json. A few minutes; bench/run lists the budget
# variables (BENCH_ONLY=targets, BENCH_SCALE_BUDGET, ...). The unlock-lateness bench needs
# root (a private journald).
bench: release
	@scripts/deps bench
	PYTHONDONTWRITEBYTECODE=1 bench/run "$$($(SWIFT) build -c release $(SWIFTFLAGS) --show-bin-path)"

# The fault and abuse suite (not part of `check`, which runs its fast subset): kill -9
# with restarts, hosts-file churn with user edits, hostile connections, a million libFuzzer
# inputs, DST nights and wall-clock steps under faketime, permissions. Prints `N passed, N failed`.
torture: release
	@scripts/deps torture
	PYTHONDONTWRITEBYTECODE=1 torture/run "$$($(SWIFT) build -c release $(SWIFTFLAGS) --show-bin-path)"

clean:
	$(SWIFT) package clean
