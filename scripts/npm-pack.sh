#!/bin/sh
# Pack the npm packages (make npm; docs/NPM.md): ward-sandbox, whose
# bin/ward.js starts the binary for the machine, and one
# ward-sandbox-linux-ARCH per architecture with ward, landlock-run and
# ward-bridge.
#
# Usage: scripts/npm-pack.sh VERSION OUTDIR ARCH=BINDIR...
#   VERSION  ward's version (the Makefile's, from include/ward/common.h);
#            every package carries it
#   OUTDIR   where the tarballs go (NAME-VERSION.tgz), staged under
#            OUTDIR/stage/
#   ARCH     an npm cpu name (x64, arm64); BINDIR holds that
#            architecture's ward, landlock-run and ward-bridge, which must
#            be static executables for it
#
# Only npm pack runs (no registry is asked anything); the binaries are
# copied without their debug sections.
set -eu

die() {
	echo "npm-pack: $*" >&2
	exit 1
}

[ $# -ge 3 ] || die "usage: scripts/npm-pack.sh VERSION OUTDIR ARCH=BINDIR..."
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=$1
OUT=$2
shift 2
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
command -v npm >/dev/null ||
	die "npm is missing (Node.js 18 or later with npm: apt-get install npm)"

STAGE=$OUT/stage
rm -rf "$STAGE"
mkdir -p "$STAGE"

fill() { # fill TEMPLATE ARCH > FILE: the version and architecture put in
	sed -e "s/@VERSION@/$VERSION/g" -e "s/@ARCH@/$2/g" "$1"
}

pack() { # pack DIR: npm pack it into $OUT
	(cd "$1" && npm pack --pack-destination "$OUT" --ignore-scripts \
		--cache "$STAGE/.npm-cache" --loglevel error >/dev/null) ||
		die "npm pack failed in $1"
}

# The main package.
M=$STAGE/ward-sandbox
mkdir -p "$M/bin"
fill npm/ward-sandbox/package.json.in - >"$M/package.json"
cp npm/ward-sandbox/README.md "$M/README.md"
install -m 0755 npm/ward-sandbox/bin/ward.js "$M/bin/ward.js"
pack "$M"
echo "npm-pack: $OUT/ward-sandbox-$VERSION.tgz"

for spec in "$@"; do
	arch=${spec%%=*}
	bin=${spec#*=}
	case $arch in
	x64) machine="X86-64" triplet=x86_64-linux-gnu ;;
	arm64) machine="AArch64" triplet=aarch64-linux-gnu ;;
	*) die "unknown architecture '$arch' (x64, arm64)" ;;
	esac
	P=$STAGE/ward-sandbox-linux-$arch
	mkdir -p "$P/bin"
	for f in ward landlock-run ward-bridge; do
		[ -x "$bin/$f" ] || die "$bin/$f is missing (build it first)"
		readelf -h "$bin/$f" | grep -q "Machine:.*$machine" ||
			die "$bin/$f is not an $arch executable"
		if readelf -lW "$bin/$f" | grep -q 'program interpreter'; then
			die "$bin/$f is dynamic; the npm package carries static" \
				"binaries (make WARD_LINK=static, the default)"
		fi
		strip=$(command -v "$triplet-strip" || command -v strip)
		"$strip" --strip-debug -o "$P/bin/$f" "$bin/$f" ||
			die "cannot copy $bin/$f"
		chmod 0755 "$P/bin/$f"
	done
	fill npm/platform/package.json.in "$arch" >"$P/package.json"
	fill npm/platform/README.md.in "$arch" >"$P/README.md"
	pack "$P"
	echo "npm-pack: $OUT/ward-sandbox-linux-$arch-$VERSION.tgz"
done
