#!/bin/sh
# Install what ward needs to build and test, from Debian's packages.
#
# Usage: scripts/deps.sh [--check]
#   --check   only report; exit 1 when something is missing.
#
# As root it runs apt-get itself; otherwise it prints the exact command to
# run and exits 1. It never downloads anything but Debian packages.
set -eu

# Packages and a file each one provides, so the check needs no dpkg query.
PKGS="
bubblewrap:/usr/bin/bwrap
musl-tools:/usr/bin/musl-gcc
libjansson-dev:/usr/include/jansson.h
libcmocka-dev:/usr/include/cmocka.h
libfyaml-dev:/usr/include/libfyaml.h
libevent-dev:/usr/include/event2/event.h
libseccomp-dev:/usr/include/seccomp.h
bats:/usr/bin/bats
pkg-config:/usr/bin/pkg-config
hyperfine:/usr/bin/hyperfine
clang:/usr/bin/clang
clang-format:/usr/bin/clang-format
libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
git:/usr/bin/git
tmux:/usr/bin/tmux
util-linux:/usr/bin/script
libcap2-bin:/usr/sbin/capsh
strace:/usr/bin/strace
python3:/usr/bin/python3
"

missing=""
for entry in $PKGS; do
	pkg=${entry%%:*}
	file=${entry#*:}
	[ -e "$file" ] || missing="$missing $pkg"
done

[ -z "$missing" ] && exit 0

if [ "${1:-}" = "--check" ]; then
	echo "ward: missing packages:$missing" >&2
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
