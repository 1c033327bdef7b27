# ward — one non-recursive Makefile.
#
#   make              build/bin/ward (static, against Debian's own
#                     archives; WARD_LINK below), build/bin/landlock-run
#                     and build/bin/ward-bridge (static, musl),
#                     build/lib/libward.a, build/lib/libward.so
#   make demo         build, then show a denied write and an allowed one
#   make check        every test; ends with "N passed, N failed, N skipped"
#   make check-slow   the tests too slow for check (a 70 s MCP call, …)
#   make check-asan   the unit and e2e suites against an ASan+UBSan+LSan
#                     build in build-asan/ (its own tree; e2e: ASAN_E2E)
#   make fuzz         every libFuzzer target for FUZZ_SECONDS (default 60)
#   make bench        benchmarks (not part of check); see docs/BENCHMARKS.md
#   make install      honours PREFIX and DESTDIR; make uninstall undoes it
#   make deb          build/deb/ward_<version>_<arch>.deb (debian/), linted
#   make npm          build/npm/ward-sandbox-<version>.tgz and the platform
#                     package's tarball (npm/; docs/NPM.md)
#   make format-check / make format
#
# Missing Debian packages are installed by scripts/deps.sh (as root) or
# named with the exact command to run (otherwise), one set per goal: a
# plain `make` needs only the build set; `make check` the test set, `make
# bench` the bench set, `make deb` the deb set. DEPS_FLAGS=--check only
# checks (the package build uses it: it never installs anything).

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
LIBEXECDIR ?= $(PREFIX)/libexec/ward
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
DESTDIR    ?=

# The one version: include/ward/common.h's WARD_VERSION (ward.pc, the
# package and `ward --version` all say it).
VERSION  := $(shell sed -n 's/^\#define WARD_VERSION "\(.*\)"/\1/p' \
              include/ward/common.h)

CC       ?= cc
B        := build
# Quiet by default; `make V=1` shows every command.
V        ?= 0
ifeq ($(V),1)
Q :=
else
Q := @
endif
WARNINGS := -Wall -Wextra -Werror=implicit-function-declaration -Wshadow \
            -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
CSTD     := -std=c11 -D_GNU_SOURCE
OPT      ?= -O2 -g
CFLAGS   ?=
CPPFLAGS += -Iinclude -Isrc -DWARD_LIBEXECDIR='"$(LIBEXECDIR)"'
DEPFLAGS  = -MMD -MP
LIB_CFLAGS := $(CSTD) $(WARNINGS) $(OPT) -fPIC -fvisibility=hidden \
              -DWARD_BUILDING $(CFLAGS)
APP_CFLAGS := $(CSTD) $(WARNINGS) $(OPT) $(CFLAGS)

# libyaml (yaml-0.1) parses ward.yml; libevent is the network proxy's loop
# (core), its resolver (extra) and its locking (pthreads).
PKGS      := jansson yaml-0.1 libevent_core libevent_extra libevent_pthreads
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LIB_LIBS   = $(PKG_LIBS) -lpthread

# The launcher: static, libc only; musl when present. Looked up when a
# launcher is linked, not when make starts: on a new machine scripts/deps.sh
# installs musl-tools during this very make (the launchers depend on it).
LAUNCH_CC = $(or $(shell command -v musl-gcc 2>/dev/null),$(CC))
# (musl-gcc's link drops gcc's --build-id; the package's debug symbols
# need it.)
LAUNCH_CFLAGS := $(CSTD) $(WARNINGS) -Os -static -Wl,--build-id -Isrc

DEPS_FLAGS ?=
DEPS_STAMP := $(B)/.deps-build-ok
DEPS_TEST_STAMP := $(B)/.deps-test-ok
# Objects that compile in an installation path are rebuilt when it changes
# (`make install PREFIX=/usr` after a plain `make` must not ship a ward that
# looks for landlock-run under /usr/local).
PATHS_STAMP := $(B)/paths-$(shell printf '%s' '$(LIBEXECDIR)' | cksum | cut -d' ' -f1).stamp

# How build/bin/ward is linked (docs/BENCHMARKS.md, "How ward is linked",
# has the start-up figures of each):
#   WARD_LINK=static   the default: glibc, static-pie, against the archives
#                      Debian's -dev packages ship (libjansson.a, libyaml.a,
#                      libevent_*.a); runs on any Linux, loads nothing
#   WARD_LINK=dynamic  glibc, against the shared libraries (what the
#                      sanitizer lane builds)
#   WARD_LINK=musl     opt-in: static musl, the fastest start-up; jansson,
#                      libyaml and libevent are built for musl from Debian's
#                      source packages by scripts/musl-deps.sh (needs
#                      deb-src access; once, into build/musl/prefix)
# libward.a, libward.so and the unit tests are always glibc, dynamic.
WARD_LINK ?= static
ifeq ($(filter $(WARD_LINK),static dynamic musl),)
$(error WARD_LINK=$(WARD_LINK): expected static, dynamic or musl)
endif
# The static link, archive by archive (pkg-config's order would put
# libevent_core before the libraries that need it). static-pie keeps
# address-space randomisation for ward's own code.
STATIC_LIBS = -lyaml -ljansson -levent_extra \
              -levent_pthreads -levent_core -lpthread
# glibc warns that these need its shared NSS modules at run time when
# linked statically; ward never reaches them (docs/BENCHMARKS.md, "Static
# glibc and NSS"), so the warnings are dropped, and only they.
# (Each comes after a line naming the function that calls it.)
STATIC_LD_FILTER := '/in statically linked applications requires at runtime/ \
	{ if (h != "" && h !~ /: in function /) print h; h = ""; next } \
	{ if (h != "") print h; h = $$0 } END { if (h != "") print h }'
MUSL_CC     ?= musl-gcc
# WARD_MUSL_DIR shares one musl build between trees.
MUSL_DIR    := $(or $(WARD_MUSL_DIR),$(B)/musl)
MUSL_PREFIX := $(MUSL_DIR)/prefix
MUSL_STAMP  := $(MUSL_PREFIX)/SOURCES
MUSL_DEPLIBS := $(MUSL_PREFIX)/lib/libyaml.a $(MUSL_PREFIX)/lib/libjansson.a \
                $(MUSL_PREFIX)/lib/libevent_extra.a \
                $(MUSL_PREFIX)/lib/libevent_pthreads.a \
                $(MUSL_PREFIX)/lib/libevent_core.a
MUSL_CFLAGS := $(CSTD) $(WARNINGS) $(OPT) $(CFLAGS) -I$(MUSL_PREFIX)/include

# The layers (docs/ARCHITECTURE.md; scripts/layers.py checks them):
# src/util and src/libward make libward; src/mcp (the MCP server), src/acp
# (the ACP proxy) and src/cli (the ward program) make ward on top of it;
# src/launcher holds the static launchers, which use src/util only.
# libward's subsystems have folders of their own (src/libward/plan/,
# run/, runners/, ...); an object's path follows its source's, so two
# files of one name in two folders cannot meet in $(B)/obj/.
UTIL_SRCS := $(wildcard src/util/*.c)
LIB_SRCS  := $(UTIL_SRCS) $(wildcard src/libward/*.c src/libward/*/*.c)
LIB_OBJS  := $(LIB_SRCS:src/%.c=$(B)/obj/lib/%.o)
MCP_SRCS  := $(wildcard src/mcp/*.c)
ACP_SRCS  := $(wildcard src/acp/*.c)
# What ward links beside libward: the command line, the MCP server and
# the ACP proxy.
CLI_SRCS  := $(wildcard src/cli/*.c) $(MCP_SRCS) $(ACP_SRCS)
CLI_OBJS  := $(CLI_SRCS:src/%.c=$(B)/obj/cli/%.o)
MCP_OBJS  := $(MCP_SRCS:src/%.c=$(B)/obj/cli/%.o)
# The MCP server as an archive, for the unit tests (not installed).
MCPA      := $(B)/obj/libward-mcp.a
MUSL_LIB_OBJS := $(LIB_SRCS:src/%.c=$(B)/obj/musl/lib/%.o)
MUSL_CLI_OBJS := $(CLI_SRCS:src/%.c=$(B)/obj/musl/cli/%.o)
# The launchers' share of src/util.
LAUNCH_UTIL := src/util/landlock.c src/util/supervise.c src/util/hide.c \
               src/util/util.c
LAUNCH_UTIL_HDRS := $(wildcard src/util/*.h)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
# Defined before `check` names them as prerequisites (expanded on the spot).
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(B)/fuzz/%)
HDRS      := $(wildcard include/ward/*.h)

WARD     := $(B)/bin/ward
LAUNCHER := $(B)/bin/landlock-run
BRIDGE   := $(B)/bin/ward-bridge
LIBA     := $(B)/lib/libward.a
LIBSO    := $(B)/lib/libward.so

COMPLETIONS := $(B)/completion/ward.bash $(B)/completion/_ward

# The npm packages (make npm, below); defined here for check, which packs
# this machine's.
NPM_DIR := $(B)/npm
NPM_HOST_ARCH := $(shell uname -m | sed -e 's/^x86_64$$/x64/' \
                   -e 's/^aarch64$$/arm64/')
NPM_ARCHES ?= $(NPM_HOST_ARCH)
NPM_MAIN := $(NPM_DIR)/ward-sandbox-$(VERSION).tgz
NPM_HOST := $(NPM_DIR)/ward-sandbox-linux-$(NPM_HOST_ARCH)-$(VERSION).tgz
NPM_SRCS := $(wildcard npm/*/*.in npm/*/*.md npm/*/bin/*) scripts/npm-pack.sh

.PHONY: all deps deps-test deps-bench deps-deb demo check check-slow check-container unit e2e \
        bench install uninstall deb npm clean format format-check fuzz fuzz-smoke \
        fuzz-lane fuzz-cov fuzz-long
.DEFAULT_GOAL := all

all: $(WARD) $(LAUNCHER) $(BRIDGE) $(LIBA) $(LIBSO) $(B)/ward.pc $(COMPLETIONS)

$(DEPS_STAMP): scripts/deps.sh
	@scripts/deps.sh $(DEPS_FLAGS) build
	@mkdir -p $(B) && touch $@

$(DEPS_TEST_STAMP): scripts/deps.sh
	@scripts/deps.sh $(DEPS_FLAGS) test
	@mkdir -p $(B) && touch $@

deps: $(DEPS_STAMP)
deps-test: $(DEPS_TEST_STAMP)
# Checked every time (no stamp): they are run rarely, and cheaply checked.
deps-bench:
	@scripts/deps.sh $(DEPS_FLAGS) bench
deps-deb:
	@scripts/deps.sh $(DEPS_FLAGS) deb

$(B)/obj/lib/%.o: src/%.c $(DEPS_STAMP) $(PATHS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  CC      $<')
	$(Q)$(CC) $(CPPFLAGS) $(LIB_CFLAGS) $(PKG_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(B)/obj/cli/%.o: src/%.c $(DEPS_STAMP) $(PATHS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  CC      $<')
	$(Q)$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(PKG_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(PATHS_STAMP):
	@mkdir -p $(@D)
	@rm -f $(B)/paths-*.stamp
	@echo '$(LIBEXECDIR)' > $@

$(LIBA): $(LIB_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  AR      $@')
	$(Q)rm -f $@ && ar rcs $@ $^

$(MCPA): $(MCP_OBJS)
	@mkdir -p $(@D)
	@rm -f $@ && ar rcs $@ $^

$(LIBSO): $(LIB_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libward.so.0 -o $@ $^ $(LIB_LIBS)

# The musl libraries (WARD_LINK=musl only).
$(MUSL_STAMP): scripts/musl-deps.sh $(DEPS_STAMP)
	@command -v $(MUSL_CC) >/dev/null || { echo 'make: WARD_LINK=musl needs $(MUSL_CC) (apt-get install musl-tools)' >&2; exit 1; }
	@MUSL_CC=$(MUSL_CC) WARD_MUSL_DIR=$(abspath $(MUSL_DIR)) \
	    scripts/musl-deps.sh

$(B)/obj/musl/lib/%.o: src/%.c $(PATHS_STAMP) | $(MUSL_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  MUSLCC  $<')
	$(Q)$(MUSL_CC) $(CPPFLAGS) $(MUSL_CFLAGS) -fvisibility=hidden \
	    -DWARD_BUILDING $(DEPFLAGS) -c $< -o $@

$(B)/obj/musl/cli/%.o: src/%.c $(PATHS_STAMP) | $(MUSL_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  MUSLCC  $<')
	$(Q)$(MUSL_CC) $(CPPFLAGS) $(MUSL_CFLAGS) $(DEPFLAGS) -c $< -o $@

# ward's objects and its link, per WARD_LINK: $(call ward_link,OBJECTS)
# links $@ from them.
ifeq ($(WARD_LINK),musl)
WARD_CLI_OBJS := $(MUSL_CLI_OBJS)
WARD_LIB_OBJS := $(MUSL_LIB_OBJS)
ward_link = $(MUSL_CC) -static -o $@ $(1) $(MUSL_DEPLIBS)
else ifeq ($(WARD_LINK),static)
WARD_CLI_OBJS := $(CLI_OBJS)
WARD_LIB_OBJS := $(LIB_OBJS)
ward_link = $(CC) $(LDFLAGS) -static-pie -o $@ $(1) $(STATIC_LIBS) \
	    2>$@.ld; rc=$$?; awk $(STATIC_LD_FILTER) $@.ld >&2; rm -f $@.ld; \
	    exit $$rc
else
WARD_CLI_OBJS := $(CLI_OBJS)
WARD_LIB_OBJS := $(LIB_OBJS)
ward_link = $(CC) $(LDFLAGS) -o $@ $(1) $(LIB_LIBS)
endif

$(WARD): $(WARD_CLI_OBJS) $(WARD_LIB_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  LD      $@ ($(WARD_LINK))')
	$(Q)$(call ward_link,$(WARD_CLI_OBJS) $(WARD_LIB_OBJS))

# landlock-run shares src/util with libward: one copy of the kernel
# compatibility code, so the launcher and the executor cannot drift.
$(LAUNCHER): src/launcher/landlock-run.c $(LAUNCH_UTIL) $(LAUNCH_UTIL_HDRS) \
	     $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(LAUNCH_CC) $(LAUNCH_CFLAGS) -o $@ src/launcher/landlock-run.c \
	    $(LAUNCH_UTIL)

# ward-bridge runs inside bwrap's network namespace: static, libc only
# (src/util/landlock.c for ward_ll_drop_caps).
$(BRIDGE): src/launcher/ward-bridge.c src/util/landlock.c \
	   src/util/landlock.h $(DEPS_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(LAUNCH_CC) $(LAUNCH_CFLAGS) -o $@ src/launcher/ward-bridge.c \
	    src/util/landlock.c

$(B)/ward.pc: ward.pc.in Makefile $(PATHS_STAMP)
	@mkdir -p $(@D)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' $< > $@

# The completion scripts, generated by ward from its own command table.
$(B)/completion/ward.bash: $(WARD)
	@mkdir -p $(@D)
	$(WARD) completion bash > $@.tmp && mv $@.tmp $@

$(B)/completion/_ward: $(WARD)
	@mkdir -p $(@D)
	$(WARD) completion zsh > $@.tmp && mv $@.tmp $@

# --- tests ---------------------------------------------------------------

# The unit tests reach inside the layers they test.
TEST_INCLUDES := -Isrc/util -Isrc/libward -Isrc/mcp -Itests/unit

$(B)/tests/test_%: tests/unit/test_%.c $(LIBA) $(MCPA) \
                   $(wildcard tests/unit/*.h) $(DEPS_TEST_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  CCLD    $@')
	$(Q)$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(PKG_CFLAGS) $(TEST_INCLUDES) \
	    -o $@ $< $(MCPA) $(LIBA) $(LIB_LIBS) -lcmocka

unit: $(UNIT_BINS)

# A stand-alone host for the proxy, driven by tests/e2e/proxy.bats and
# bench/run.sh (not installed).
PROXYD := $(B)/tests/ward-proxyd
$(PROXYD): tests/e2e/ward-proxyd.c $(LIBA)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  CCLD    $@')
	$(Q)$(CC) $(CPPFLAGS) $(APP_CFLAGS) $(PKG_CFLAGS) $(TEST_INCLUDES) \
	    -o $@ $< $(LIBA) $(LIB_LIBS)

# The same, static with musl, when ward is: it checks libevent as
# scripts/musl-deps.sh built it.
ifeq ($(WARD_LINK),musl)
PROXYD_MUSL := $(B)/tests/ward-proxyd-musl
$(PROXYD_MUSL): tests/e2e/ward-proxyd.c $(MUSL_LIB_OBJS)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  MUSLLD  $@')
	$(Q)$(MUSL_CC) -static $(CPPFLAGS) $(MUSL_CFLAGS) $(TEST_INCLUDES) \
	    -o $@ $< $(MUSL_LIB_OBJS) $(MUSL_DEPLIBS)
endif

# Escapes for tests/e2e/redteam_box.bats (not installed).
BOXHELPER := $(B)/tests/boxhelper
$(BOXHELPER): tests/e2e/boxhelper.c
	@mkdir -p $(@D)
	@$(if $(Q),echo '  CCLD    $@')
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $<

# Attacks on the supervisor for tests/e2e/redteam_seal.bats (not installed).
SEALHELPER := $(B)/tests/sealhelper
$(SEALHELPER): tests/e2e/sealhelper.c
	@mkdir -p $(@D)
	@$(if $(Q),echo '  CCLD    $@')
	$(Q)$(CC) $(APP_CFLAGS) -pthread -o $@ $<

# The container lane: user namespaces denied as container runtimes deny
# them (tests/container/nouserns.c); only Landlock runs there.
NOUSERNS := $(B)/tests/nouserns
$(NOUSERNS): tests/container/nouserns.c $(DEPS_TEST_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  CCLD    $@')
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< -lseccomp

check-container: all $(BOXHELPER) $(SEALHELPER) $(NOUSERNS)
	@tests/container/run.sh

# A ward whose bwrap profile is deliberately broken (-DWARD_TEST_WEAK_BWRAP:
# the host bound read-write), for tests/e2e/weak_bwrap.bats: the Landlock
# layer inside bwrap must hold the must-vectors alone. Only profile_bwrap.o
# differs; landlock-run is copied beside it (ward looks for it there).
WEAK_WARD := $(B)/tests/weak/ward
WEAK_OBJ  := $(B)/obj/weak/profile_bwrap.o
WEAK_OBJS := $(WARD_CLI_OBJS) \
	     $(filter-out %/profile_bwrap.o,$(WARD_LIB_OBJS)) $(WEAK_OBJ)
ifeq ($(WARD_LINK),musl)
$(WEAK_OBJ): src/libward/plan/profile_bwrap.c $(PATHS_STAMP) | $(MUSL_STAMP)
	@mkdir -p $(@D)
	$(Q)$(MUSL_CC) $(CPPFLAGS) $(MUSL_CFLAGS) -fvisibility=hidden \
	    -DWARD_BUILDING -DWARD_TEST_WEAK_BWRAP -c $< -o $@
else
$(WEAK_OBJ): src/libward/plan/profile_bwrap.c $(DEPS_STAMP) $(PATHS_STAMP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(LIB_CFLAGS) $(PKG_CFLAGS) \
	    -DWARD_TEST_WEAK_BWRAP -c $< -o $@
endif
$(WEAK_WARD): $(WEAK_OBJS) $(LAUNCHER)
	@mkdir -p $(@D)
	$(Q)$(call ward_link,$(WEAK_OBJS))
	$(Q)cp $(LAUNCHER) $(@D)/landlock-run

# The MCP clients the e2e tests drive (the official SDK and the Inspector
# CLI, pinned by tests/mcp/package-lock.json), installed from the npm
# registry once before the suite: test files run side by side, and two
# `npm ci` into one directory at once would break each other.
NPM_STAMP := tests/mcp/node_modules/.ward-npm-ok
$(NPM_STAMP): tests/mcp/package-lock.json tests/mcp/package.json
	@command -v npm >/dev/null || { echo 'make: npm is missing (Node.js 18 or later with npm: apt-get install nodejs npm)' >&2; exit 1; }
	@# In the directory, not with --prefix: --prefix moves npm's global
	@# configuration too (PREFIX/etc/npmrc), so the system's (a cafile, a
	@# proxy) would not apply.
	@cd tests/mcp && npm ci --no-audit --no-fund --loglevel error
	@touch $@

# The ACP SDK the `ward acp` tests drive both sides with (tests/acp,
# pinned by its package-lock.json), the same way.
NPM_ACP_STAMP := tests/acp/node_modules/.ward-npm-ok
$(NPM_ACP_STAMP): tests/acp/package-lock.json tests/acp/package.json
	@command -v npm >/dev/null || { echo 'make: npm is missing (Node.js 18 or later with npm: apt-get install nodejs npm)' >&2; exit 1; }
	@cd tests/acp && npm ci --no-audit --no-fund --loglevel error
	@touch $@

check: all $(DEPS_TEST_STAMP) $(UNIT_BINS) $(FUZZ_BINS) $(PROXYD) \
       $(PROXYD_MUSL) $(WEAK_WARD) $(BOXHELPER) $(SEALHELPER) $(NOUSERNS) \
       $(NPM_STAMP) $(NPM_ACP_STAMP) \
       $(if $(filter dynamic,$(WARD_LINK)),,$(NPM_MAIN) $(NPM_HOST))
	@WARD_FUZZ_BINS="$(FUZZ_BINS)" WARD_FUZZ_SECONDS=$(CHECK_FUZZ_SECONDS) \
	    tests/run.sh $(UNIT_BINS)

# The tests `check` skips for their length (each says so when skipped).
check-slow: all
	@WARD_SLOW=1 bats --tap -f '\(slow\)' tests/e2e/*.bats

# --- fuzzing (libFuzzer) ------------------------------------------------
# Every tests/fuzz/fuzz_<name>.c is a libFuzzer target; each states its
# oracle (what must hold for every input) at its top. libward (and, for the
# targets that drive the command line and the MCP server, cli/ without its
# main) is compiled once with the fuzzing sanitizers into $(B)/obj/fuzz/,
# and each target links what it uses from there.
#   make fuzz [FUZZ_SECONDS=N] [FUZZ_JOBS=J]   every target N s (default 60),
#                                             J at a time (default nproc)
#   make fuzz-smoke                           the same, FUZZ_SMOKE_SECONDS
#   make fuzz-lane                            CI's lane: FUZZ_LANE_SECONDS
#   make fuzz-cov [FUZZ_SECONDS=N]            source coverage of each
#                                             target's file under test
#   make fuzz-long [FUZZ_LONG_SECONDS=N]      every target N s (default
#                                             600), then its coverage:
#                                             $(B)/fuzz/long-report.txt
# A target first replays its committed corpus (tests/fuzz/corpus/<name>/,
# crash inputs included), then fuzzes into a scratch corpus.

FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -g -O1 $(FUZZ_SAN) $(CSTD) -Iinclude -Isrc $(TEST_INCLUDES)
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
# make check replays every committed corpus (crash inputs included) and
# fuzzes no further: the fuzz lane (make fuzz-lane) is where CI fuzzes.
CHECK_FUZZ_SECONDS ?= 0
FUZZ_LANE_SECONDS ?= 10
FUZZ_JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_LIB_OBJS := $(LIB_SRCS:src/%.c=$(B)/obj/fuzz/lib/%.o)
# The targets parse YAML with the very archive a static ward links
# (libyaml.a), in-process, as ward does.
FUZZ_LIBS = $(patsubst -lyaml,-l:libyaml.a,$(LIB_LIBS))
# src/cli/ward.c's main() becomes ward_main() for the targets that need it.
FUZZ_CLI_OBJS := $(CLI_SRCS:src/%.c=$(B)/obj/fuzz/cli/%.o)
FUZZ_MCP_OBJS := $(MCP_SRCS:src/%.c=$(B)/obj/fuzz/cli/%.o)
# The targets that link src/cli (with the MCP server), and those that
# link the MCP server only; the rest link libward only.
FUZZ_WITH_CLI := fuzz_argv fuzz_mcp
FUZZ_WITH_MCP := fuzz_jsonrpc

$(B)/obj/fuzz/lib/%.o: src/%.c $(DEPS_TEST_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  FUZZCC  $<')
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -fPIC \
	    -DWARD_BUILDING $(PKG_CFLAGS) -MMD -MP -c $< -o $@

$(B)/obj/fuzz/cli/%.o: src/%.c $(DEPS_TEST_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  FUZZCC  $<')
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -Dmain=ward_main \
	    $(PKG_CFLAGS) -MMD -MP -c $< -o $@

# Those targets turn the command line's exit() into a return to the target
# (tests/fuzz/fuzz_cli.h).
FUZZ_WRAP     := -Wl,--wrap=exit -Wl,--wrap=getopt_long
FUZZ_CLI_LINK := $(FUZZ_CLI_OBJS) $(FUZZ_WRAP)

$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS) $(DEPS_TEST_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  FUZZ    $@')
	$(Q)clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -Isrc/cli $(PKG_CFLAGS) \
	    -o $@ $< \
	    $(if $(filter $(FUZZ_WITH_CLI),$(@F)),$(FUZZ_CLI_LINK)) \
	    $(if $(filter $(FUZZ_WITH_MCP),$(@F)),$(FUZZ_MCP_OBJS)) \
	    $(FUZZ_LIB_OBJS) $(FUZZ_LIBS)

$(FUZZ_WITH_CLI:%=$(B)/fuzz/%): $(FUZZ_CLI_OBJS)
$(FUZZ_WITH_MCP:%=$(B)/fuzz/%): $(FUZZ_MCP_OBJS)
.SECONDARY: $(FUZZ_LIB_OBJS) $(FUZZ_CLI_OBJS)

fuzz: $(FUZZ_BINS)
	@FUZZ_JOBS=$(FUZZ_JOBS) WARD_BUILD=$(B) \
	    tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_BINS)

fuzz-smoke: $(FUZZ_BINS)
	@FUZZ_JOBS=$(FUZZ_JOBS) WARD_BUILD=$(B) \
	    tests/fuzz/run.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_BINS)

# CI's fuzz lane: every target for FUZZ_LANE_SECONDS, FUZZ_JOBS at a time;
# ends with "N passed, N failed, N skipped" like check. A fixed seed
# (FUZZ_LANE_SEED; empty: a random one, as make fuzz) makes a lane's run
# repeatable: a finding reproduces on the next run and on another machine.
FUZZ_LANE_SEED ?= 1
fuzz-lane: $(FUZZ_BINS)
	@FUZZ_JOBS=$(FUZZ_JOBS) WARD_BUILD=$(B) FUZZ_SUMMARY=1 \
	    FUZZ_SEED=$(FUZZ_LANE_SEED) \
	    tests/fuzz/run.sh $(FUZZ_LANE_SECONDS) $(FUZZ_BINS)

-include $(FUZZ_LIB_OBJS:.o=.d) $(FUZZ_CLI_OBJS:.o=.d)

# make fuzz-cov: each target rebuilt with clang's source coverage
# (-fprofile-instr-generate -fcoverage-mapping, no sanitizer) replays its
# committed corpus and what earlier fuzzing found ($(B)/fuzz/corpus_*),
# after FUZZ_COV_SECONDS of fuzzing of its own (default 0); then
# llvm-cov reports the lines, regions and functions covered in the files
# each target is about (tests/fuzz/cov.sh names them).
FUZZ_COV_SECONDS ?= 0
FUZZ_COV_CFLAGS := -g -O1 -fprofile-instr-generate -fcoverage-mapping \
                   $(CSTD) -Iinclude -Isrc $(TEST_INCLUDES)
FUZZ_COV_LIB_OBJS := $(LIB_SRCS:src/%.c=$(B)/obj/fuzzcov/lib/%.o)
FUZZ_COV_CLI_OBJS := $(CLI_SRCS:src/%.c=$(B)/obj/fuzzcov/cli/%.o)
FUZZ_COV_MCP_OBJS := $(MCP_SRCS:src/%.c=$(B)/obj/fuzzcov/cli/%.o)
FUZZ_COV_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(B)/fuzz-cov/%)

$(B)/obj/fuzzcov/lib/%.o: src/%.c $(DEPS_TEST_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  COVCC   $<')
	$(Q)clang $(FUZZ_COV_CFLAGS) -fsanitize=fuzzer-no-link -fPIC \
	    -DWARD_BUILDING $(PKG_CFLAGS) -c $< -o $@

$(B)/obj/fuzzcov/cli/%.o: src/%.c $(DEPS_TEST_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  COVCC   $<')
	$(Q)clang $(FUZZ_COV_CFLAGS) -fsanitize=fuzzer-no-link -Dmain=ward_main \
	    $(PKG_CFLAGS) -c $< -o $@

$(B)/fuzz-cov/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_COV_LIB_OBJS) \
                      $(FUZZ_COV_CLI_OBJS) $(DEPS_TEST_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  COVLD   $@')
	$(Q)clang $(FUZZ_COV_CFLAGS) -fsanitize=fuzzer -Isrc/cli $(PKG_CFLAGS) \
	    -o $@ $< $(if $(filter $(FUZZ_WITH_CLI),$(@F)),$(FUZZ_COV_CLI_OBJS) \
	    $(FUZZ_WRAP)) \
	    $(if $(filter $(FUZZ_WITH_MCP),$(@F)),$(FUZZ_COV_MCP_OBJS)) \
	    $(FUZZ_COV_LIB_OBJS) $(FUZZ_LIBS)

.SECONDARY: $(FUZZ_COV_LIB_OBJS) $(FUZZ_COV_CLI_OBJS)

fuzz-cov: $(FUZZ_COV_BINS)
	@WARD_BUILD=$(B) tests/fuzz/cov.sh $(FUZZ_COV_SECONDS) $(FUZZ_COV_BINS)

# make fuzz-long: the long lane (not CI's): every target for
# FUZZ_LONG_SECONDS, FUZZ_JOBS at a time, then the source coverage its
# corpus reaches; per-target executions, exec/s, edges and coverage are
# kept in $(B)/fuzz/long-report.txt (tests/fuzz/long.sh).
FUZZ_LONG_SECONDS ?= 600
fuzz-long: $(FUZZ_BINS) $(FUZZ_COV_BINS)
	@FUZZ_JOBS=$(FUZZ_JOBS) WARD_BUILD=$(B) tests/fuzz/long.sh \
	    $(FUZZ_LONG_SECONDS) $(B)/fuzz/long-report.txt $(FUZZ_BINS) -- \
	    $(FUZZ_COV_BINS)


# --- sanitizer lane (make check-asan) ---------------------------------------
# libward, ward, the launcher, the bridge, the proxy host and the unit tests
# built with ASan+UBSan (LSan comes with ASan) against glibc, dynamically,
# into $(ASAN_B) (a tree of its own: a sub-make with B=$(ASAN_B)), then the
# unit and Python suites and a selection of the e2e files (ASAN_E2E) run
# against that build (WARD_BUILD=$(ASAN_B);
# WARD_SANITIZE=1 makes the two "statically linked" checks and valgrind
# skip, saying why). Every report a sanitizer writes lands in
# $(ASAN_B)/san/ and fails the lane, even when the test that ran the process
# only looked at its exit status.
ASAN_B    ?= build-asan
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
             -fno-omit-frame-pointer

# The e2e files the lane runs: the CLI (ward run, confine, probe), ward fs,
# sessions, ward mcp, ward acp, the network, the launcher and the seal's
# red-team suite. The other files drive the same code again for more users,
# runners, rules and attacks; make check runs them all, unsanitized, and
# the container lane the red-team suites again. (The whole e2e suite under
# the sanitizers took about as long as the rest of CI together.)
ASAN_E2E ?= cli fs session mcp acp network launcher redteam_seal
check-asan: $(NPM_STAMP) $(NPM_ACP_STAMP)
	$(Q)$(MAKE) --no-print-directory B=$(ASAN_B) WARD_LINK=dynamic \
	    OPT='-O1 -g $(SAN_FLAGS)' LDFLAGS='$(SAN_FLAGS)' \
	    LAUNCH_CC='$(CC)' \
	    LAUNCH_CFLAGS='$(CSTD) $(WARNINGS) -O1 -g $(SAN_FLAGS) -Isrc' \
	    asan-build
	@WARD_BUILD=$(ASAN_B) WARD_SANITIZE=1 WARD_E2E_FILES="$(ASAN_E2E)" \
	    tests/run.sh $(UNIT_SRCS:tests/unit/%.c=$(ASAN_B)/tests/%)

# Only ever made by check-asan's sub-make (B=$(ASAN_B)).
asan-build: $(WARD) $(LAUNCHER) $(BRIDGE) $(LIBA) $(LIBSO) $(B)/ward.pc \
            $(COMPLETIONS) $(DEPS_TEST_STAMP) $(UNIT_BINS) $(PROXYD) \
            $(WEAK_WARD) $(BOXHELPER) $(SEALHELPER) $(NOUSERNS)

.PHONY: check-asan asan-build
# --- end of the sanitizer lane -----------------------------------------------

# --- demo ----------------------------------------------------------------

demo: all
	@scripts/demo.sh

# --- benchmarks ----------------------------------------------------------

bench: all deps-bench
	@bench/run.sh
	@bench/calls.sh
	@bench/startup.sh

# --- install -------------------------------------------------------------

MAN1 := $(wildcard man/*.1)
MAN5 := $(wildcard man/*.5)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
	    $(DESTDIR)$(INCLUDEDIR)/ward $(DESTDIR)$(LIBEXECDIR) \
	    $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
	    $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 0755 $(WARD) $(DESTDIR)$(BINDIR)/ward
	install -m 0755 $(LAUNCHER) $(DESTDIR)$(LIBEXECDIR)/landlock-run
	install -m 0755 $(BRIDGE) $(DESTDIR)$(LIBEXECDIR)/ward-bridge
	install -m 0644 $(LIBA) $(DESTDIR)$(LIBDIR)/libward.a
	install -m 0644 $(LIBSO) $(DESTDIR)$(LIBDIR)/libward.so.0
	ln -sf libward.so.0 $(DESTDIR)$(LIBDIR)/libward.so
	install -m 0644 $(HDRS) $(DESTDIR)$(INCLUDEDIR)/ward/
	install -m 0644 $(B)/ward.pc $(DESTDIR)$(LIBDIR)/pkgconfig/ward.pc
	install -m 0644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 $(MAN5) $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 $(B)/completion/ward.bash $(DESTDIR)$(BASHCOMPDIR)/ward
	install -m 0644 $(B)/completion/_ward $(DESTDIR)$(ZSHCOMPDIR)/_ward

# Everything install put in, and ward's own directories; the shared ones
# (bin, lib, share/man/man1, ...) stay. tests/e2e/install.bats checks it.
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/ward $(DESTDIR)$(LIBEXECDIR)/landlock-run \
	    $(DESTDIR)$(LIBEXECDIR)/ward-bridge \
	    $(DESTDIR)$(LIBDIR)/libward.a $(DESTDIR)$(LIBDIR)/libward.so \
	    $(DESTDIR)$(LIBDIR)/libward.so.0 \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/ward.pc \
	    $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
	    $(addprefix $(DESTDIR)$(MANDIR)/man5/,$(notdir $(MAN5))) \
	    $(DESTDIR)$(BASHCOMPDIR)/ward $(DESTDIR)$(ZSHCOMPDIR)/_ward
	rm -rf $(DESTDIR)$(INCLUDEDIR)/ward
	rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null || true

# --- Debian package --------------------------------------------------------
#
# The tree (without build/ and .git) is copied to build/deb/ward-VERSION and
# built there by dpkg-buildpackage (debian/rules runs this Makefile with
# PREFIX=/usr and this WARD_LINK; with WARD_LINK=musl, this tree's musl
# libraries); then lintian must find no error and no warning. The package:
# build/deb/ward_VERSION_ARCH.deb; tests/deb/check.sh checks its contents.

DEB_DIR := $(B)/deb
DEB_SRC := $(DEB_DIR)/ward-$(VERSION)
LINTIAN ?= lintian

deb: deps-deb $(if $(filter musl,$(WARD_LINK)),$(MUSL_STAMP))
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_SRC)
	tar -C . --exclude=./build --exclude=./.git \
	    --exclude=./tests/mcp/node_modules --exclude=./tests/acp/node_modules \
	    -cf - . | tar -C $(DEB_SRC) -xf -
	cd $(DEB_SRC) && WARD_LINK=$(WARD_LINK) \
	    WARD_MUSL_DIR=$(abspath $(MUSL_DIR)) \
	    dpkg-buildpackage -us -uc --no-sign
	$(LINTIAN) --fail-on error,warning $(DEB_DIR)/ward_$(VERSION)_*.changes
	@ls $(DEB_DIR)/ward_$(VERSION)_*.deb

# --- npm package -------------------------------------------------------------
#
# make npm: $(NPM_DIR)/ward-sandbox-VERSION.tgz (bin/ward.js, which starts
# the binary for the machine) and, per architecture in NPM_ARCHES (npm's
# names: x64, arm64; default this machine's), ward-sandbox-linux-ARCH-
# VERSION.tgz with that architecture's static ward, landlock-run and
# ward-bridge: this tree's for this machine, a cross build's
# (scripts/cross.sh, into $(B)/cross/ARCH) for another. docs/NPM.md.


# What make check installs and runs: the main package and this machine's.
$(NPM_MAIN) $(NPM_HOST) &: $(WARD) $(LAUNCHER) $(BRIDGE) $(NPM_SRCS)
	@scripts/npm-pack.sh $(VERSION) $(NPM_DIR) \
	    $(NPM_HOST_ARCH)=$(B)/bin

npm: $(WARD) $(LAUNCHER) $(BRIDGE) $(NPM_SRCS)
	@$(foreach a,$(filter-out $(NPM_HOST_ARCH),$(NPM_ARCHES)), \
	    scripts/cross.sh $(a) $(B)/cross/$(a) &&) true
	@scripts/npm-pack.sh $(VERSION) $(NPM_DIR) \
	    $(foreach a,$(NPM_ARCHES),$(a)=$(if $(filter $(NPM_HOST_ARCH),$(a)),$(B)/bin,$(B)/cross/$(a)/bin))

# --- format --------------------------------------------------------------

FMT_SRCS = $(wildcard include/ward/*.h src/*/*.c src/*/*.h \
           src/libward/*/*.c src/libward/*/*.h \
           tests/unit/*.c tests/unit/*.h bench/*.c bench/*.h tests/fuzz/*.c)

format-check:
	@clang-format --dry-run --Werror $(FMT_SRCS) && echo "format-check: ok"

format:
	clang-format -i $(FMT_SRCS)

clean:
	rm -rf $(B)

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(MUSL_LIB_OBJS:.o=.d) \
         $(MUSL_CLI_OBJS:.o=.d)
