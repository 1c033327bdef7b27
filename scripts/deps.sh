#!/bin/sh
# Install what ward needs, from Debian's packages, one set at a time.
#
# Usage: scripts/deps.sh [--check] [SET...]
#   SET       build (the default): what `make` needs to build ward;
#             test: what `make check` needs besides (runners, test tools);
#             bench: what `make bench` needs besides;
#             deb: what `make deb` needs besides (the package tools).
#             Each set includes build.
#   --check   only report; exit 1 when something is missing.
#
# As root it runs apt-get itself; otherwise it prints the exact command to
# run and exits 1. It never downloads anything but Debian packages.
set -eu

# Packages and a file each one provides, so the check needs no dpkg query.
#
# build: the C compiler and glibc's static archives (libc6-dev has libc.a:
# ward links statically against Debian's own archives), musl-gcc for the
# static launchers, the three libraries with their static archives
# (libjansson.a, libyaml.a, libevent_*.a) and pkg-config. Nothing is built
# from source; `make WARD_LINK=musl` (opt-in) has scripts/musl-deps.sh,
# which installs what it needs itself.
BUILD="
gcc:/usr/bin/gcc
make:/usr/bin/make
libc6-dev:/usr/include/stdio.h
musl-tools:/usr/bin/musl-gcc
libjansson-dev:/usr/include/jansson.h
libyaml-dev:/usr/include/yaml.h
libevent-dev:/usr/include/event2/event.h
pkg-config:/usr/bin/pkg-config
"

# test: the runners the e2e tests confine with, the test frameworks, the
# fuzzing compiler and runtime, the tools the tests drive ward with (git
# repositories, a terminal under tmux or script, capsh, strace, python3),
# clang-format (format-check), zsh (the completion test), libseccomp's
# headers (kept for test programs; no build step needs them), and the real
# clients and tools the network and MCP tests drive (curl, openssl for a
# local TLS server, valgrind, file, jq), and GNU parallel, which runs the
# bats files side by side (bats --jobs), time(1), which .ci/run
# measures each lane with, and npm, which installs the MCP clients the
# tests drive and packs and installs the npm package (npm/).
TEST="
bubblewrap:/usr/bin/bwrap
libcmocka-dev:/usr/include/cmocka.h
bats:/usr/bin/bats
clang:/usr/bin/clang
clang-format:/usr/bin/clang-format
libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
libseccomp-dev:/usr/include/seccomp.h
git:/usr/bin/git
tmux:/usr/bin/tmux
util-linux:/usr/bin/script
libcap2-bin:/usr/sbin/capsh
strace:/usr/bin/strace
python3:/usr/bin/python3
zsh:/usr/bin/zsh
curl:/usr/bin/curl
openssl:/usr/bin/openssl
valgrind:/usr/bin/valgrind
file:/usr/bin/file
jq:/usr/bin/jq
parallel:/usr/bin/parallel
time:/usr/bin/time
npm:/usr/bin/npm
"

# bench: the command-line benchmark tool (bench/run.sh), and bwrap, which
# the benchmarks measure.
BENCH="
hyperfine:/usr/bin/hyperfine
bubblewrap:/usr/bin/bwrap
"

# deb: dpkg-buildpackage's helpers and checkers (debian/control's
# Build-Depends are the build set plus debhelper), and bwrap, which the
# package depends on and tests/deb/check.sh runs ward under.
DEB="
debhelper:/usr/bin/dh
devscripts:/usr/bin/debuild
lintian:/usr/bin/lintian
fakeroot:/usr/bin/fakeroot
bubblewrap:/usr/bin/bwrap
"

check=
sets=
for arg in "$@"; do
	case $arg in
	--check) check=1 ;;
	build | test | bench | deb) sets="$sets $arg" ;;
	*)
		echo "ward: deps.sh: unknown set '$arg' (valid: build, test," \
			"bench, deb)" >&2
		exit 2
		;;
	esac
done
[ -n "$sets" ] || sets=build

want=$BUILD
for set in $sets; do
	case $set in
	test) want="$want $TEST" ;;
	bench) want="$want $BENCH" ;;
	deb) want="$want $DEB" ;;
	esac
done

missing=""
for entry in $want; do
	pkg=${entry%%:*}
	file=${entry#*:}
	case " $missing " in *" $pkg "*) continue ;; esac
	[ -e "$file" ] || missing="$missing $pkg"
done

[ -z "$missing" ] && exit 0

if [ -n "$check" ]; then
	echo "ward: missing packages:$missing" >&2
	echo "Hint: run as root: scripts/deps.sh$sets" >&2
	exit 1
fi

if [ "$(id -u)" != 0 ]; then
	echo "ward: missing packages:$missing" >&2
	echo "Hint: run as root: apt-get update && apt-get install -y$missing" >&2
	exit 1
fi

echo "ward: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
