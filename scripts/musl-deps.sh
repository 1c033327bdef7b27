#!/bin/sh
# Build ward's library dependencies, jansson, libfyaml and libevent, as static
# musl libraries, so that build/bin/ward can be a static musl binary (a glibc
# process start costs ~0.5 ms more, which `ward run` pays on every command).
#
# Usage: scripts/musl-deps.sh
#
# Debian ships jansson, libfyaml and libevent built for glibc only, so this
# fetches
# Debian's own source packages (with apt-get source, through a private apt
# state under build/musl/: the system's sources and lists are not touched),
# unpacks them with dpkg-source (which applies Debian's patches), applies
# ward's own patches (scripts/patches/<package>/*.patch: fixes ward needs
# that Debian's version lacks, each naming its upstream commit) and builds
# each with musl-gcc into build/musl/prefix/{include,lib}. None of their
# source is part of ward's tree; everything lives under build/musl/.
#
# Idempotent: does nothing when build/musl/prefix/lib/libjansson.a,
# libfyaml.a and libevent's libraries exist and were built with the current patches (their checksums
# are kept in prefix/PATCHES). Sources already downloaded are reused. Any
# failure exits non-zero with a message on stderr (the Makefile then builds
# a dynamic glibc ward instead). As root, missing build tools (musl-tools,
# cmake, m4, dpkg-dev) are installed with apt-get; otherwise the exact
# command is printed.
#
#   scripts/musl-deps.sh --host DIR
#       builds only the patched libfyaml, with $CC and $CFLAGS (the host's
#       compiler, glibc) into DIR/{include,lib}: the copy the fuzz targets
#       link, so they fuzz what a static ward ships.
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

HOST=
if [ "${1:-}" = "--host" ]; then
	[ -n "${2:-}" ] || die "--host needs a directory"
	HOST=$2
	case $HOST in /*) ;; *) HOST=$ROOT/$HOST ;; esac
fi

# The patches, and their checksums (what the built libraries must match).
PATCHES=$ROOT/scripts/patches
patch_sums() {
	for f in "$PATCHES"/*/*.patch; do
		[ -e "$f" ] && sha256sum "$f" | sed "s|  $ROOT/|  |"
	done
	return 0
}
WANT_PATCHES=$(patch_sums)

up_to_date() { # up_to_date PREFIX FILE...
	dir=$1
	shift
	for f in "$@"; do
		[ -e "$dir/$f" ] || return 1
	done
	[ "$(cat "$dir/PATCHES" 2>/dev/null)" = "$WANT_PATCHES" ]
}

if [ -n "$HOST" ]; then
	if up_to_date "$HOST" lib/libfyaml.a include/libfyaml.h; then
		say "up to date ($HOST)"
		exit 0
	fi
elif up_to_date "$PREFIX" lib/libjansson.a lib/libfyaml.a \
	lib/libevent_core.a lib/libevent_extra.a include/event2/event.h \
	include/jansson.h include/libfyaml.h; then
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

# Tool and the Debian package that provides it. m4: libfyaml's configure
# insists on it (only autoreconf would use it; we never regenerate).
missing=""
tools="cmake:cmake make:make m4:m4 dpkg-source:dpkg-dev apt-get:apt"
tools="$tools patch:patch"
[ -n "$HOST" ] || tools="$MUSL_CC:musl-tools $tools"
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

if ls "$SRC"/jansson_*.dsc "$SRC"/libfyaml_*.dsc "$SRC"/libevent_*.dsc \
	>/dev/null 2>&1; then
	# dpkg-source checks them against their .dsc below.
	say "reusing the downloaded sources ($SRC)"
else
	step apt-update apt-get "$@" update
	say "apt-get source jansson libfyaml libevent"
	rm -f "$SRC"/*.dsc "$SRC"/*.tar.* "$SRC"/*.diff.gz
	if ! (cd "$SRC" && apt-get "$@" source --download-only jansson \
		libfyaml libevent) >"$LOG/apt-source.log" 2>&1; then
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
	for p in "$PATCHES/$1"/*.patch; do
		[ -e "$p" ] || continue
		step "patch-$1-$(basename "$p" .patch)" \
			patch -p1 --forward --batch -d "$dir" -i "$p"
	done
}

# --- --host: the patched libfyaml for this machine's compiler -------------

if [ -n "$HOST" ]; then
	B=$M/build-host
	rm -rf "$B" "$HOST.new"
	mkdir -p "$B" "$HOST.new"
	unpack libfyaml
	step host-libfyaml-configure env -C "$B" \
		CC="${CC:-cc}" CFLAGS="${CFLAGS:--O2 -g -fPIC}" \
		PKG_CONFIG_LIBDIR="$HOST.new/lib/pkgconfig" PKG_CONFIG_PATH= \
		"$dir/configure" --prefix="$HOST.new" --disable-shared \
		--enable-static --disable-network --disable-dependency-tracking
	step host-libfyaml-build make -C "$B/src" -j "$JOBS" libfyaml.la
	step host-libfyaml-install make -C "$B/src" install-libLTLIBRARIES \
		install-includeHEADERS
	[ -s "$HOST.new/lib/libfyaml.a" ] || die "the build left no libfyaml.a"
	printf '%s\n' "$WANT_PATCHES" >"$HOST.new/PATCHES"
	rm -rf "$HOST" "$B"
	mv "$HOST.new" "$HOST"
	say "done: $HOST"
	exit 0
fi

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

# libfyaml: only the library (no fy-tool, tests or docs). pkg-config is
# pointed at the staging prefix so the host's glibc libyaml or check is
# never picked up.
unpack libfyaml
mkdir -p "$M/build/libfyaml"
step libfyaml-configure env -C "$M/build/libfyaml" \
	CC="$MUSL_CC" CFLAGS="$CFLAGS_MUSL" \
	PKG_CONFIG_LIBDIR="$STAGE/lib/pkgconfig" PKG_CONFIG_PATH= \
	"$dir/configure" --prefix="$STAGE" --disable-shared --enable-static \
	--disable-network --disable-dependency-tracking
step libfyaml-build make -C "$M/build/libfyaml/src" -j "$JOBS" libfyaml.la
step libfyaml-install make -C "$M/build/libfyaml/src" \
	install-libLTLIBRARIES install-includeHEADERS

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

for f in lib/libjansson.a lib/libfyaml.a include/jansson.h \
	include/jansson_config.h include/libfyaml.h lib/libevent_core.a \
	lib/libevent_extra.a include/event2/event.h include/event2/dns.h; do
	[ -s "$STAGE/$f" ] || die "the build left no $f"
done
for f in "$SRC"/*.dsc; do
	basename "$f" .dsc
done >"$STAGE/SOURCES"
printf '%s\n' "$WANT_PATCHES" >"$STAGE/PATCHES"
rm -rf "$PREFIX"
mv "$STAGE" "$PREFIX"
rm -rf "$M/build"
say "done: $PREFIX ($(paste -sd ' ' "$PREFIX/SOURCES"))"
