# ward — one non-recursive Makefile.
#
#   make              build/bin/ward (static musl when it can be had),
#                     build/bin/landlock-run and build/bin/ward-bridge
#                     (static),
#                     build/lib/libward.a, build/lib/libward.so
#   make demo         build, then show a denied write and an allowed one
#   make check        every test; ends with "N passed, N failed, N skipped"
#   make check-slow   the tests too slow for check (a 70 s MCP call, …)
#   make check-asan   the unit and e2e suites against an ASan+UBSan+LSan
#                     build in build-asan/ (its own tree)
#   make fuzz         every libFuzzer target for FUZZ_SECONDS (default 60)
#   make bench        benchmarks (not part of check); see docs/BENCHMARKS.md
#   make install      honours PREFIX and DESTDIR; make uninstall undoes it
#   make deb          build/deb/ward_<version>_<arch>.deb (debian/), linted
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

# libevent: the network proxy's loop (core), its resolver (extra) and
# its locking (pthreads).
PKGS      := jansson libfyaml libevent_core libevent_extra libevent_pthreads
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
LIB_LIBS   = $(PKG_LIBS) -lpthread

# The launcher: static, libc only; musl when present.
MUSL_GCC  := $(shell command -v musl-gcc 2>/dev/null)
LAUNCH_CC := $(if $(MUSL_GCC),$(MUSL_GCC),$(CC))
LAUNCH_CFLAGS := $(CSTD) $(WARNINGS) -Os -static -Isrc

DEPS_FLAGS ?=
DEPS_STAMP := $(B)/.deps-build-ok
DEPS_TEST_STAMP := $(B)/.deps-test-ok
# Objects that compile in an installation path are rebuilt when it changes
# (`make install PREFIX=/usr` after a plain `make` must not ship a ward that
# looks for landlock-run under /usr/local).
PATHS_STAMP := $(B)/paths-$(shell printf '%s' '$(LIBEXECDIR)' | cksum | cut -d' ' -f1).stamp

# ward itself: a static musl binary, because every glibc process start costs
# ~0.5 ms here and `ward run` pays it on each command. jansson and libfyaml
# are built for musl from Debian's source packages by scripts/musl-deps.sh
# (once; into build/musl/prefix). $(MUSL_CONF) records the outcome: when
# musl-gcc or the script fails, ward is built dynamic against glibc, with a
# warning. `make WARD_MUSL=` forces the dynamic build; rm $(MUSL_CONF) to
# retry. libward.a, libward.so and the unit tests are always glibc.
MUSL_CC     ?= musl-gcc
# WARD_MUSL_DIR shares one musl build between trees (`make deb` hands the
# package build this tree's, so the libraries are not fetched twice).
MUSL_DIR    := $(or $(WARD_MUSL_DIR),$(B)/musl)
MUSL_PREFIX := $(MUSL_DIR)/prefix
MUSL_CONF   := $(MUSL_DIR)/ward-musl.mk
MUSL_DEPLIBS := $(MUSL_PREFIX)/lib/libfyaml.a $(MUSL_PREFIX)/lib/libjansson.a \
                $(MUSL_PREFIX)/lib/libevent_extra.a \
                $(MUSL_PREFIX)/lib/libevent_pthreads.a \
                $(MUSL_PREFIX)/lib/libevent_core.a
# That libfyaml carries our patches (scripts/patches/libfyaml/):
# config_parse.c parses in-process with it, and in a child process with any
# other.
MUSL_CFLAGS := $(CSTD) $(WARNINGS) $(OPT) $(CFLAGS) -I$(MUSL_PREFIX)/include \
               -DWARD_FYAML_PATCHED
DYNAMIC_WARNING := ward: building a dynamic ward; `ward run` start-up will be slower
# Goals that never link ward need not build the musl libraries.
MUSL_SKIP_GOALS := clean format format-check uninstall deps unit fuzz \
                   fuzz-smoke deps-test deps-bench deps-deb \
                   check-asan asan-build fuzz-lane fuzz-cov

# The layers (docs/ARCHITECTURE.md; scripts/layers.py checks them):
# src/util and src/libward make libward; src/mcp (the MCP server), src/acp
# (the ACP proxy) and src/cli (the ward program) make ward on top of it;
# src/launcher holds the static launchers, which use src/util only.
UTIL_SRCS := $(wildcard src/util/*.c)
LIB_SRCS  := $(UTIL_SRCS) $(wildcard src/libward/*.c)
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

.PHONY: all deps deps-test deps-bench deps-deb demo check check-slow check-container unit e2e \
        bench install uninstall deb clean format format-check fuzz fuzz-smoke \
        fuzz-lane fuzz-cov
.DEFAULT_GOAL := all

# Sets WARD_MUSL; make builds it first (and restarts) when it is missing.
ifneq ($(filter-out $(MUSL_SKIP_GOALS),$(or $(MAKECMDGOALS),all)),)
-include $(MUSL_CONF)
endif

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

LIB_PATCHES := $(wildcard scripts/patches/*/*.patch)

$(MUSL_CONF): scripts/musl-deps.sh $(LIB_PATCHES) $(DEPS_STAMP)
	@mkdir -p $(@D)
	@if command -v $(MUSL_CC) >/dev/null && \
	    MUSL_CC=$(MUSL_CC) WARD_MUSL_DIR=$(abspath $(MUSL_DIR)) \
	    scripts/musl-deps.sh; then \
	    echo 'WARD_MUSL := 1' > $@; \
	else \
	    echo 'WARD_MUSL :=' > $@; \
	    echo '$(DYNAMIC_WARNING)' \
	        '(no $(MUSL_CC), or scripts/musl-deps.sh failed;' \
	        'rm $@ to retry)' >&2; \
	fi

$(B)/obj/musl/lib/%.o: src/%.c $(PATHS_STAMP) | $(MUSL_CONF)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  MUSLCC  $<')
	$(Q)$(MUSL_CC) $(CPPFLAGS) $(MUSL_CFLAGS) -fvisibility=hidden \
	    -DWARD_BUILDING $(DEPFLAGS) -c $< -o $@

$(B)/obj/musl/cli/%.o: src/%.c $(PATHS_STAMP) | $(MUSL_CONF)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  MUSLCC  $<')
	$(Q)$(MUSL_CC) $(CPPFLAGS) $(MUSL_CFLAGS) $(DEPFLAGS) -c $< -o $@

ifeq ($(WARD_MUSL),1)
$(WARD): $(MUSL_CLI_OBJS) $(MUSL_LIB_OBJS) $(MUSL_CONF)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  MUSLLD  $@')
	$(Q)$(MUSL_CC) -static -o $@ $(MUSL_CLI_OBJS) $(MUSL_LIB_OBJS) \
	    $(MUSL_DEPLIBS)
else
$(WARD): $(CLI_OBJS) $(LIBA)
	@mkdir -p $(@D)
	@echo '$(DYNAMIC_WARNING)' >&2
	@$(if $(Q),echo '  LD      $@')
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LIBA) $(LIB_LIBS)
endif

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
# scripts/musl-deps.sh built it (nothing in ward calls the proxy yet).
ifeq ($(WARD_MUSL),1)
PROXYD_MUSL := $(B)/tests/ward-proxyd-musl
$(PROXYD_MUSL): tests/e2e/ward-proxyd.c $(MUSL_LIB_OBJS) $(MUSL_CONF)
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

# The container lane: user namespaces denied as container runtimes deny
# them (tests/container/nouserns.c); only Landlock runs there.
NOUSERNS := $(B)/tests/nouserns
$(NOUSERNS): tests/container/nouserns.c $(DEPS_TEST_STAMP)
	@mkdir -p $(@D)
	@$(if $(Q),echo '  CCLD    $@')
	$(Q)$(CC) $(APP_CFLAGS) -o $@ $< -lseccomp

check-container: all $(BOXHELPER) $(NOUSERNS)
	@tests/container/run.sh

# A ward whose bwrap profile is deliberately broken (-DWARD_TEST_WEAK_BWRAP:
# the host bound read-write), for tests/e2e/weak_bwrap.bats: the Landlock
# layer inside bwrap must hold the must-vectors alone. Only profile_bwrap.o
# differs; landlock-run is copied beside it (ward looks for it there).
WEAK_WARD := $(B)/tests/weak/ward
WEAK_OBJ  := $(B)/obj/weak/profile_bwrap.o
ifeq ($(WARD_MUSL),1)
$(WEAK_OBJ): src/libward/profile_bwrap.c $(PATHS_STAMP) | $(MUSL_CONF)
	@mkdir -p $(@D)
	$(Q)$(MUSL_CC) $(CPPFLAGS) $(MUSL_CFLAGS) -fvisibility=hidden \
	    -DWARD_BUILDING -DWARD_TEST_WEAK_BWRAP -c $< -o $@
$(WEAK_WARD): $(MUSL_CLI_OBJS) \
	      $(filter-out %/profile_bwrap.o,$(MUSL_LIB_OBJS)) $(WEAK_OBJ) \
	      $(LAUNCHER)
	@mkdir -p $(@D)
	$(Q)$(MUSL_CC) -static -o $@ $(MUSL_CLI_OBJS) \
	    $(filter-out %/profile_bwrap.o,$(MUSL_LIB_OBJS)) $(WEAK_OBJ) \
	    $(MUSL_DEPLIBS)
	$(Q)cp $(LAUNCHER) $(@D)/landlock-run
else
$(WEAK_OBJ): src/libward/profile_bwrap.c $(DEPS_STAMP) $(PATHS_STAMP)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(LIB_CFLAGS) $(PKG_CFLAGS) \
	    -DWARD_TEST_WEAK_BWRAP -c $< -o $@
$(WEAK_WARD): $(CLI_OBJS) $(filter-out %/profile_bwrap.o,$(LIB_OBJS)) \
	      $(WEAK_OBJ) $(LAUNCHER)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) \
	    $(filter-out %/profile_bwrap.o,$(LIB_OBJS)) $(WEAK_OBJ) \
	    $(LIB_LIBS)
	$(Q)cp $(LAUNCHER) $(@D)/landlock-run
endif

# The MCP clients the e2e tests drive (the official SDK and the Inspector
# CLI, pinned by tests/mcp/package-lock.json), installed from the npm
# registry once before the suite: test files run side by side, and two
# `npm ci` into one directory at once would break each other.
NPM_STAMP := tests/mcp/node_modules/.ward-npm-ok
$(NPM_STAMP): tests/mcp/package-lock.json tests/mcp/package.json
	@command -v npm >/dev/null || { echo 'make: npm is missing (Node.js 18 or later with npm: apt-get install nodejs npm)' >&2; exit 1; }
	@npm ci --prefix tests/mcp --no-audit --no-fund --loglevel error
	@touch $@

# The ACP SDK the `ward acp` tests drive both sides with (tests/acp,
# pinned by its package-lock.json), the same way.
NPM_ACP_STAMP := tests/acp/node_modules/.ward-npm-ok
$(NPM_ACP_STAMP): tests/acp/package-lock.json tests/acp/package.json
	@command -v npm >/dev/null || { echo 'make: npm is missing (Node.js 18 or later with npm: apt-get install nodejs npm)' >&2; exit 1; }
	@npm ci --prefix tests/acp --no-audit --no-fund --loglevel error
	@touch $@

check: all $(DEPS_TEST_STAMP) $(UNIT_BINS) $(FUZZ_BINS) $(PROXYD) \
       $(PROXYD_MUSL) $(WEAK_WARD) $(BOXHELPER) $(NOUSERNS) $(NPM_STAMP) \
       $(NPM_ACP_STAMP)
	@scripts/layers.py $(B)
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
# A target first replays its committed corpus (tests/fuzz/corpus/<name>/,
# crash inputs included), then fuzzes into a scratch corpus.

FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -g -O1 $(FUZZ_SAN) $(CSTD) -Iinclude -Isrc $(TEST_INCLUDES)
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 5
# make check replays every committed corpus (crash inputs included) and
# fuzzes no further: the fuzz lane (make fuzz-lane) is where CI fuzzes.
CHECK_FUZZ_SECONDS ?= 0
FUZZ_LANE_SECONDS ?= 60
FUZZ_JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_LIB_OBJS := $(LIB_SRCS:src/%.c=$(B)/obj/fuzz/lib/%.o)
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
	    $(FUZZ_LIB_OBJS) $(LIB_LIBS)

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
	    $(FUZZ_COV_LIB_OBJS) $(LIB_LIBS)

.SECONDARY: $(FUZZ_COV_LIB_OBJS) $(FUZZ_COV_CLI_OBJS)

fuzz-cov: $(FUZZ_COV_BINS)
	@WARD_BUILD=$(B) tests/fuzz/cov.sh $(FUZZ_COV_SECONDS) $(FUZZ_COV_BINS)


# --- sanitizer lane (make check-asan) ---------------------------------------
# libward, ward, the launcher, the bridge, the proxy host and the unit tests
# built with ASan+UBSan (LSan comes with ASan) against glibc, dynamically,
# into $(ASAN_B) (a tree of its own: a sub-make with B=$(ASAN_B)), then the
# unit, Python and e2e suites run against that build (WARD_BUILD=$(ASAN_B);
# WARD_SANITIZE=1 makes the two "statically linked" checks and valgrind
# skip, saying why). Every report a sanitizer writes lands in
# $(ASAN_B)/san/ and fails the lane, even when the test that ran the process
# only looked at its exit status.
ASAN_B    ?= build-asan
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
             -fno-omit-frame-pointer

check-asan: $(NPM_STAMP) $(NPM_ACP_STAMP)
	$(Q)$(MAKE) --no-print-directory B=$(ASAN_B) WARD_MUSL= \
	    OPT='-O1 -g $(SAN_FLAGS)' LDFLAGS='$(SAN_FLAGS)' \
	    LAUNCH_CC='$(CC)' \
	    LAUNCH_CFLAGS='$(CSTD) $(WARNINGS) -O1 -g $(SAN_FLAGS) -Isrc' \
	    asan-build
	@WARD_BUILD=$(ASAN_B) WARD_SANITIZE=1 \
	    tests/run.sh $(UNIT_SRCS:tests/unit/%.c=$(ASAN_B)/tests/%)

# Only ever made by check-asan's sub-make (B=$(ASAN_B)).
asan-build: $(WARD) $(LAUNCHER) $(BRIDGE) $(LIBA) $(LIBSO) $(B)/ward.pc \
            $(COMPLETIONS) $(DEPS_TEST_STAMP) $(UNIT_BINS) $(PROXYD) \
            $(WEAK_WARD) $(BOXHELPER) $(NOUSERNS)

.PHONY: check-asan asan-build
# --- end of the sanitizer lane -----------------------------------------------

# --- demo ----------------------------------------------------------------

demo: all
	@scripts/demo.sh

# --- benchmarks ----------------------------------------------------------

bench: all deps-bench
	@bench/run.sh
	@bench/calls.sh

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
# PREFIX=/usr), with this tree's musl libraries (WARD_MUSL_DIR); then
# lintian must find no error and no warning. The package:
# build/deb/ward_VERSION_ARCH.deb; tests/deb/check.sh checks its contents.

DEB_DIR := $(B)/deb
DEB_SRC := $(DEB_DIR)/ward-$(VERSION)
LINTIAN ?= lintian

deb: deps-deb $(MUSL_CONF)
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_SRC)
	tar -C . --exclude=./build --exclude=./.git \
	    --exclude=./tests/mcp/node_modules --exclude=./tests/acp/node_modules \
	    -cf - . | tar -C $(DEB_SRC) -xf -
	cd $(DEB_SRC) && WARD_MUSL_DIR=$(abspath $(MUSL_DIR)) \
	    dpkg-buildpackage -us -uc --no-sign
	$(LINTIAN) --fail-on error,warning $(DEB_DIR)/ward_$(VERSION)_*.changes
	@ls $(DEB_DIR)/ward_$(VERSION)_*.deb

# --- format --------------------------------------------------------------

FMT_SRCS = $(wildcard include/ward/*.h src/*/*.c src/*/*.h \
           tests/unit/*.c tests/unit/*.h bench/*.c tests/fuzz/*.c)

format-check:
	@clang-format --dry-run --Werror $(FMT_SRCS) && echo "format-check: ok"

format:
	clang-format -i $(FMT_SRCS)

clean:
	rm -rf $(B)

-include $(LIB_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(MUSL_LIB_OBJS:.o=.d) \
         $(MUSL_CLI_OBJS:.o=.d)
