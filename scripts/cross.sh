#!/bin/sh
# Cross-build ward's three binaries for another architecture from Debian's
# packaged parts only (make npm NPM_ARCHES="x64 arm64"; docs/NPM.md):
#
#   scripts/cross.sh ARCH OUTDIR      ARCH: arm64 (from an x86-64 machine)
#
# The compiler is Debian's cross gcc (gcc-aarch64-linux-gnu, with glibc's
# static libc.a for arm64 in libc6-dev-arm64-cross). The libraries are
# Debian's own arm64 packages, downloaded (not installed: libevent-dev is
# not co-installable across architectures) through a private apt state
# under OUTDIR/apt and unpacked into OUTDIR/sysroot: libjansson-dev,
# libyaml-dev and libevent-dev (their static archives) for ward, musl-dev
# for the launchers, which stay static musl (OUTDIR/musl-gcc.specs points
# the cross gcc at it, as musl-tools' musl-gcc does for the host). Then
# this tree's Makefile builds OUTDIR/bin/{ward,landlock-run,ward-bridge}
# (WARD_LINK=static), and each is checked: an AArch64 static executable
# (readelf), and, when qemu-user-static is installed, `ward --version` and
# a configuration parse run under qemu-aarch64-static.
#
# As root, missing tools are installed with apt-get; otherwise the exact
# command is printed. Nothing is built from source but ward.
set -eu

die() {
	echo "cross: error: $*" >&2
	exit 1
}
say() { echo "cross: $*" >&2; }

[ $# -eq 2 ] || die "usage: scripts/cross.sh ARCH OUTDIR"
ARCH=$1
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$2
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
case $ARCH in
arm64) DEB_ARCH=arm64 TRIPLET=aarch64-linux-gnu MUSL_TRIPLET=aarch64-linux-musl
	MACHINE=AArch64 QEMU=qemu-aarch64-static ;;
*) die "unsupported architecture '$ARCH' (arm64)" ;;
esac
[ "$(uname -m)" = x86_64 ] || die "cross builds start from an x86-64 machine"
CROSS_CC=$TRIPLET-gcc

# --- tools -------------------------------------------------------------------

missing=
command -v "$CROSS_CC" >/dev/null || missing="$missing gcc-$TRIPLET"
[ -e "/usr/$TRIPLET/lib/libc.a" ] || missing="$missing libc6-dev-$DEB_ARCH-cross"
command -v dpkg-deb >/dev/null || missing="$missing dpkg"
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] ||
		die "missing packages; as root run: apt-get install -y$missing"
	say "installing:$missing"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends $missing >&2 ||
		die "could not install:$missing"
fi

# --- the arm64 -dev packages, unpacked into a sysroot ------------------------

SYSROOT=$OUT/sysroot
PKGS="libjansson-dev libyaml-dev libevent-dev musl-dev"
if [ ! -s "$SYSROOT/PACKAGES" ]; then
	A=$OUT/apt
	rm -rf "$A" "$SYSROOT"
	mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/debs" \
		"$SYSROOT"
	: >"$A/status"
	# The system's sources, read only; lists, cache and status ours.
	set -- -o "APT::Architecture=$DEB_ARCH" -o "APT::Architectures=$DEB_ARCH" \
		-o "Dir::State::Lists=$A/lists" -o "Dir::State::status=$A/status" \
		-o "Dir::Cache=$A/cache" -o "Dir::Cache::pkgcache=" \
		-o "Dir::Cache::srcpkgcache="
	[ "$(id -u)" = 0 ] && set -- "$@" -o APT::Sandbox::User=root
	say "apt-get update ($DEB_ARCH lists, under $A)"
	apt-get "$@" update >"$A/update.log" 2>&1 ||
		die "apt-get update failed: $(tail -n 5 "$A/update.log")"
	say "apt-get download $PKGS ($DEB_ARCH)"
	# shellcheck disable=SC2086
	(cd "$A/debs" && apt-get "$@" download $PKGS) >"$A/download.log" 2>&1 ||
		die "apt-get download failed: $(tail -n 5 "$A/download.log")"
	for deb in "$A"/debs/*.deb; do
		dpkg-deb -x "$deb" "$SYSROOT" || die "cannot unpack $deb"
		dpkg-deb -f "$deb" Package Version Source | paste -sd ' '
	done >"$SYSROOT/PACKAGES"
fi
say "sysroot: $(paste -sd ';' "$SYSROOT/PACKAGES")"

# musl-gcc's specs, pointed at the arm64 musl in the sysroot.
SPECS=$OUT/musl-gcc.specs
MUSL_LIB=$SYSROOT/usr/lib/$MUSL_TRIPLET
MUSL_INC=$SYSROOT/usr/include/$MUSL_TRIPLET
[ -e "$MUSL_LIB/libc.a" ] || die "no musl libc.a in $MUSL_LIB"
sed -e "s|/usr/include/x86_64-linux-musl|$MUSL_INC|g" \
	-e "s|/usr/lib/x86_64-linux-musl|$MUSL_LIB|g" \
	-e "s|ld-musl-x86_64|ld-musl-aarch64|g" \
	/usr/lib/x86_64-linux-musl/musl-gcc.specs >"$SPECS" ||
	die "cannot write $SPECS (musl-tools installed?)"

# --- build ---------------------------------------------------------------------

say "building $OUT/bin/{ward,landlock-run,ward-bridge}"
# CPPFLAGS and LDFLAGS from the environment: the Makefile appends its own.
CPPFLAGS="-I$SYSROOT/usr/include -I$SYSROOT/usr/include/$TRIPLET" \
	LDFLAGS="-L$SYSROOT/usr/lib/$TRIPLET" \
	PKG_CONFIG_LIBDIR="$SYSROOT/usr/lib/$TRIPLET/pkgconfig" \
	PKG_CONFIG_SYSROOT_DIR="$SYSROOT" \
	make -s -C "$ROOT" B="$OUT" WARD_LINK=static CC="$CROSS_CC" \
	LAUNCH_CC="$CROSS_CC -specs $SPECS" \
	"$OUT/bin/ward" "$OUT/bin/landlock-run" "$OUT/bin/ward-bridge" >&2

# --- check -----------------------------------------------------------------------

for f in ward landlock-run ward-bridge; do
	readelf -h "$OUT/bin/$f" | grep -q "Machine:.*$MACHINE" ||
		die "$OUT/bin/$f is not an $ARCH executable"
	if readelf -lW "$OUT/bin/$f" | grep -q 'program interpreter'; then
		die "$OUT/bin/$f is not static"
	fi
done
say "$(cd "$OUT/bin" && file ward landlock-run ward-bridge | sed 's/, BuildID[^,]*//')"
if command -v "$QEMU" >/dev/null; then
	v=$("$QEMU" "$OUT/bin/ward" --version) ||
		die "$QEMU $OUT/bin/ward --version failed"
	printf 'mode: read-only\naccess:\n  - "-- /nonexistent/*.key"\n' \
		>"$OUT/check.yml"
	"$QEMU" "$OUT/bin/ward" config check -w / --config "$OUT/check.yml" \
		>"$OUT/check.out" 2>&1 ||
		die "$QEMU ward config check failed: $(cat "$OUT/check.out")"
	grep -q 'configuration: valid' "$OUT/check.out" ||
		die "ward config check under $QEMU: $(cat "$OUT/check.out")"
	say "under $QEMU: $v; ward config check: valid"
else
	say "$QEMU is not installed (apt-get install qemu-user-static):" \
		"the binaries were not run"
fi
