# blockd — build, run and test. See README.md.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin

PREFIX ?= /usr/local
SWIFT ?= swift
SWIFTFLAGS ?=

.PHONY: all build release run check test clean

all: build

build:
	@scripts/deps build
	$(SWIFT) build $(SWIFTFLAGS)

release:
	@scripts/deps build
	$(SWIFT) build -c release $(SWIFTFLAGS)

# The main job: blockd in the foreground on its built-in defaults.
run: build
	$$($(SWIFT) build $(SWIFTFLAGS) --show-bin-path)/blockd $(ARGS)

# The whole test suite (what CI runs). Privileged tests run when BLOCKD_PRIVILEGED_TESTS=1.
check:
	@scripts/deps check
	$(SWIFT) build --build-tests $(SWIFTFLAGS)
	$(SWIFT) test --skip-build $(SWIFTFLAGS)

test: check

clean:
	$(SWIFT) package clean
