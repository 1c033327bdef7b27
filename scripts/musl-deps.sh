#!/bin/sh
# Opt-in (make WARD_LINK=musl): build ward's library dependencies, jansson,
# libyaml and libevent, as static musl libraries, so that build/bin/ward can
# be a static musl binary (its start-up is the fastest of the three builds;
# docs/BENCHMARKS.md, "How ward is linked"). The default build needs none of
# this: it links Debian's own static archives with glibc.
#
# Usage: scripts/musl-deps.sh
#
# Debian ships jansson, libyaml and libevent built for glibc only, so this
# fetches Debian's own source packages (with apt-get source, through a
# private apt state under build/musl/: the system's sources and lists are
# not touched), unpacks them with dpkg-source (which applies Debian's
# patches) and builds each with musl-gcc into build/musl/prefix/{include,
# lib}: the same versions, with the same patches, as the archives the
# default build links. None of their source is part of ward's tree;
# everything lives under build/musl/.
#
# Idempotent: does nothing when build/musl/prefix holds the libraries and
# prefix/SOURCES (the source packages they came from). Sources already
# downloaded are reused. Any failure exits non-zero with a message on
# stderr. As root, missing build tools (musl-tools, cmake, make,
# dpkg-dev) are installed with apt-get; otherwise the exact command is
# printed.
#
# Environment: WARD_MUSL_DIR (default build/musl), MUSL_CC (default musl-gcc).
set -eu

cd "$(dirname "$0")/.."
ROOT=$PWD
M=${WARD_MUSL_DIR:-$ROOT/build/musl}
case $M in /*) ;; *) M=$ROOT/$M ;; esac
PREFIX=$M/prefix
MUSL_CC=${MUSL_CC:-musl-gcc}
JOBS=$(nproc 2>/dev/null || echo 2)

say() { echo "musl-deps: $*" >&2; }
die() {
	echo "musl-deps: error: $*" >&2
	exit 1
}

if [ -s "$PREFIX/SOURCES" ] && [ -s "$PREFIX/lib/libjansson.a" ] &&
	[ -s "$PREFIX/lib/libyaml.a" ] && [ -s "$PREFIX/lib/libevent_core.a" ] &&
	[ -s "$PREFIX/lib/libevent_extra.a" ]; then
	say "up to date ($PREFIX)"
	exit 0
fi

# Run a build step quietly; on failure show the end of its log.
LOG=$M/log
step() { # step NAME COMMAND...
	name=$1
	shift
	say "$name"
	if ! "$@" >"$LOG/$name.log" 2>&1; then
		tail -n 25 "$LOG/$name.log" >&2
		die "'$name' failed (full log: $LOG/$name.log)"
	fi
}

# --- tools -------------------------------------------------------------------

# Tool and the Debian package that provides it.
missing=""
tools="$MUSL_CC:musl-tools cmake:cmake make:make dpkg-source:dpkg-dev"
tools="$tools apt-get:apt"
for entry in $tools; do
	command -v "${entry%%:*}" >/dev/null 2>&1 || missing="$missing ${entry#*:}"
done
mkdir -p "$LOG"
if [ -n "$missing" ]; then
	if [ "$(id -u)" != 0 ]; then
		die "missing tools; as root run: apt-get install -y$missing"
	fi
	say "installing:$missing (log: $LOG/apt-install.log)"
	# shellcheck disable=SC2086
	if ! { DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends $missing ||
		{ apt-get update -q &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
				--no-install-recommends $missing; }; } \
		>"$LOG/apt-install.log" 2>&1; then
		tail -n 25 "$LOG/apt-install.log" >&2
		die "could not install:$missing"
	fi
fi

# --- sources: Debian's source packages, through a private apt state --------

SRC=$M/src
mkdir -p "$SRC" "$M/apt/lists/partial" \
	"$M/apt/cache/archives/partial"

# deb-src entries for the Debian archives this system uses: its own deb822
# sources (or one-line sources.list) with the type changed, and nothing else.
LIST=$M/apt/sources.list
SOURCES=$M/apt/debian.sources
: >"$LIST"
: >"$SOURCES"
if [ -r /etc/apt/sources.list.d/debian.sources ]; then
	sed -e 's/^Types:.*/Types: deb-src/' \
		/etc/apt/sources.list.d/debian.sources >"$SOURCES"
fi
if [ -r /etc/apt/sources.list ]; then
	sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' /etc/apt/sources.list \
		>"$LIST"
fi
if ! grep -q '^Types: deb-src' "$SOURCES" && ! grep -q '^deb-src ' "$LIST"
then
	# No usable system entry: the Debian archive for this release.
	# shellcheck disable=SC1091
	codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	[ -n "$codename" ] || die "cannot tell the Debian release" \
		"(/etc/os-release has no VERSION_CODENAME)"
	cat >"$SOURCES" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi
mkdir -p "$M/apt/sources.list.d"
mv "$SOURCES" "$M/apt/sources.list.d/debian.sources"

# Lists, caches and downloads all under $M/apt; the system's stay untouched.
set -- -o "Dir::Etc::SourceList=$LIST" \
	-o "Dir::Etc::SourceParts=$M/apt/sources.list.d" \
	-o "Dir::State::Lists=$M/apt/lists" \
	-o "Dir::Cache=$M/apt/cache" \
	-o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
# Root apt downloads as _apt, who cannot write into a private build tree.
[ "$(id -u)" = 0 ] && set -- "$@" -o APT::Sandbox::User=root

if ls "$SRC"/jansson_*.dsc "$SRC"/libyaml_*.dsc "$SRC"/libevent_*.dsc \
	>/dev/null 2>&1; then
	# dpkg-source checks them against their .dsc below.
	say "reusing the downloaded sources ($SRC)"
else
	step apt-update apt-get "$@" update
	say "apt-get source jansson libyaml libevent"
	rm -f "$SRC"/*.dsc "$SRC"/*.tar.* "$SRC"/*.diff.gz
	if ! (cd "$SRC" && apt-get "$@" source --download-only jansson \
		libyaml libevent) >"$LOG/apt-source.log" 2>&1; then
		tail -n 25 "$LOG/apt-source.log" >&2
		die "cannot download the source packages" \
			"(log: $LOG/apt-source.log)"
	fi
fi

# Unpack with dpkg-source, which checks the files against the .dsc (whose
# own hashes apt checked against the signed archive index) and applies
# Debian's patches.
unpack() { # unpack PACKAGE -> sets $dir
	dsc=""
	for f in "$SRC/$1"_*.dsc; do
		[ -e "$f" ] && dsc=$f
	done
	[ -n "$dsc" ] || die "no $1 .dsc was downloaded"
	dir=$SRC/$(basename "$dsc" .dsc)
	rm -rf "$dir"
	step "unpack-$1" dpkg-source -x "$dsc" "$dir"
}

# --- build into a staging prefix, then move it in place --------------------

STAGE=$M/prefix.new
rm -rf "$STAGE" "$M/build"
mkdir -p "$STAGE" "$M/build"
CFLAGS_MUSL="-O2 -g0"

unpack jansson
step jansson-configure cmake -S "$dir" -B "$M/build/jansson" \
	-DCMAKE_C_COMPILER="$MUSL_CC" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_C_FLAGS_RELEASE="$CFLAGS_MUSL" \
	-DCMAKE_INSTALL_PREFIX="$STAGE" -DCMAKE_INSTALL_LIBDIR=lib \
	-DJANSSON_BUILD_SHARED_LIBS=OFF -DJANSSON_BUILD_DOCS=OFF \
	-DJANSSON_WITHOUT_TESTS=ON -DJANSSON_EXAMPLES=OFF
step jansson-build cmake --build "$M/build/jansson" -j "$JOBS"
step jansson-install cmake --install "$M/build/jansson"

# libyaml: only the library, with its CMake files (Debian's source is the
# upstream tree, without a generated configure script).
unpack libyaml
step libyaml-configure cmake -S "$dir" -B "$M/build/libyaml" \
	-DCMAKE_C_COMPILER="$MUSL_CC" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_C_FLAGS_RELEASE="$CFLAGS_MUSL" \
	-DCMAKE_INSTALL_PREFIX="$STAGE" -DINSTALL_LIB_DIR=lib \
	-DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF
step libyaml-build cmake --build "$M/build/libyaml" -j "$JOBS" --target yaml
step libyaml-install cmake --install "$M/build/libyaml"

# libevent: the core (event loop, bufferevents, listeners) and extra (evdns)
# libraries only, built with its CMake files (Debian's patches touch the
# autotools inputs, which would want autoreconf). No OpenSSL, no mbedTLS, no
# tests, samples or benchmarks; thread support stays in (ward does not use
# libevent's locking, but the pthreads glue costs nothing unused).
unpack libevent
step libevent-configure cmake -S "$dir" -B "$M/build/libevent" \
	-DCMAKE_C_COMPILER="$MUSL_CC" -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_C_FLAGS_RELEASE="$CFLAGS_MUSL" \
	-DCMAKE_INSTALL_PREFIX="$STAGE" -DCMAKE_INSTALL_LIBDIR=lib \
	-DEVENT__LIBRARY_TYPE=STATIC -DEVENT__DISABLE_OPENSSL=ON \
	-DEVENT__DISABLE_MBEDTLS=ON -DEVENT__DISABLE_TESTS=ON \
	-DEVENT__DISABLE_REGRESS=ON -DEVENT__DISABLE_SAMPLES=ON \
	-DEVENT__DISABLE_BENCHMARK=ON -DEVENT__DISABLE_DEBUG_MODE=ON
step libevent-build cmake --build "$M/build/libevent" -j "$JOBS"
step libevent-install cmake --install "$M/build/libevent"

for f in lib/libjansson.a lib/libyaml.a include/jansson.h \
	include/jansson_config.h include/yaml.h lib/libevent_core.a \
	lib/libevent_extra.a include/event2/event.h include/event2/dns.h; do
	[ -s "$STAGE/$f" ] || die "the build left no $f"
done
for f in "$SRC"/*.dsc; do
	basename "$f" .dsc
done >"$STAGE/SOURCES"
rm -rf "$PREFIX"
mv "$STAGE" "$PREFIX"
rm -rf "$M/build"
say "done: $PREFIX ($(paste -sd ' ' "$PREFIX/SOURCES"))"
