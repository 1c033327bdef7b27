#!/bin/bash
# The Debian package lane (run by .ci/run after make check): build the
# package with `make deb` (lintian must be clean), check its contents
# against the expected file list, unpack it into a throwaway root and run
# what it ships from there.
#
# Usage: tests/deb/check.sh [PACKAGE.deb]
#   With a .deb, check that one instead of building.
#
# Prints TAP ("ok N - ...", "not ok N - ...") and, last, the line
# "N passed, N failed, N skipped"; exits 1 when a check failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD

n=0 passed=0 failed=0 skipped=0
ok() {
	n=$((n + 1)) passed=$((passed + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1)) failed=$((failed + 1))
	echo "not ok $n - $1"
	shift
	[ $# -eq 0 ] || printf '#   %s\n' "$@"
}
skip() {
	n=$((n + 1)) skipped=$((skipped + 1))
	echo "ok $n - $1 # SKIP $2"
}
finish() {
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}

VERSION=$(sed -n 's/^#define WARD_VERSION "\(.*\)"/\1/p' include/ward/common.h)
TMP=$(mktemp -d /var/tmp/ward-deb-check.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# --- build -----------------------------------------------------------------

if [ $# -ge 1 ]; then
	DEB=$1
else
	if nice -n 10 make deb >"$TMP/make-deb.log" 2>&1; then
		ok "make deb builds the package and lintian finds no error or warning"
	else
		not_ok "make deb builds the package and lintian finds no error or warning" \
			"$(tail -n 30 "$TMP/make-deb.log")"
		finish
	fi
	DEB=$(ls build/deb/ward_"$VERSION"_*.deb 2>/dev/null | head -n1)
fi
ARCH=$(dpkg --print-architecture)
if [ "$(basename "$DEB")" = "ward_${VERSION}_${ARCH}.deb" ] && [ -f "$DEB" ]; then
	ok "the package is ward_${VERSION}_${ARCH}.deb"
else
	not_ok "the package is ward_${VERSION}_${ARCH}.deb" "found: ${DEB:-none}"
	finish
fi

# --- contents ------------------------------------------------------------

MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
{
	sed -e "s|@MULTIARCH@|$MA|g" -e '/^#/d' -e '/^$/d' tests/deb/files
	for f in include/ward/*.h; do echo "/usr/include/ward/${f##*/}"; done
	for f in man/*.1; do echo "/usr/share/man/man1/${f##*/}.gz"; done
	for f in man/*.5; do echo "/usr/share/man/man5/${f##*/}.gz"; done
	# The documentation (debian/ward.docs): dh_compress gzips those over
	# 4 KiB.
	for f in README.md docs/*.md; do
		if [ "$(stat -c %s "$f")" -gt 4096 ]; then
			echo "/usr/share/doc/ward/${f##*/}.gz"
		else
			echo "/usr/share/doc/ward/${f##*/}"
		fi
	done
} | sort >"$TMP/expected"
# Files and links only (tar's type letter), without the leading ".".
dpkg-deb -c "$DEB" | awk '$1 !~ /^d/ { print $6 }' | sed 's|^\./|/|' |
	sort >"$TMP/actual"
if diff -u "$TMP/expected" "$TMP/actual" >"$TMP/diff"; then
	ok "dpkg-deb -c lists exactly the expected files ($(wc -l <"$TMP/actual"))"
else
	not_ok "dpkg-deb -c lists exactly the expected files" \
		"$(grep '^[-+][^-+]' "$TMP/diff")"
fi

depends=$(dpkg-deb -f "$DEB" Depends)
if [[ ", $depends," == *", bubblewrap,"* ]]; then
	ok "it depends on bubblewrap ($depends)"
else
	not_ok "it depends on bubblewrap" "Depends: $depends"
fi

# --- unpacked into a throwaway root --------------------------------------

R=$TMP/root
mkdir -p "$R"
dpkg -x "$DEB" "$R" || {
	not_ok "dpkg -x unpacks it"
	finish
}

if out=$("$R/usr/bin/ward" --version 2>&1) && [ "$out" = "ward $VERSION" ]; then
	ok "ward --version from the package says ward $VERSION"
else
	not_ok "ward --version from the package says ward $VERSION" "$out"
fi

if readelf -lW "$R/usr/bin/ward" | grep -q 'program interpreter'; then
	not_ok "the packaged ward is static"
else
	ok "the packaged ward is static"
fi

# Built-Using names the source of every library the static binaries carry.
built_using=$(dpkg-deb -f "$DEB" Built-Using)
missing=
for src in jansson libyaml libevent musl; do
	[[ ", $built_using," == *", $src (= "* ]] || missing="$missing $src"
done
# A static glibc ward carries glibc too (its tunables' variable name is in
# every static glibc program); a musl one does not.
if grep -q GLIBC_TUNABLES "$R/usr/bin/ward"; then
	[[ ", $built_using," == *", glibc (= "* ]] || missing="$missing glibc"
fi
if [ -z "$missing" ]; then
	ok "Built-Using names the static libraries' sources ($built_using)"
else
	not_ok "Built-Using names the static libraries' sources" \
		"missing:$missing" "Built-Using: $built_using"
fi

# lintian's informational tags include its spelling checks: none may
# fire (make deb fails only on errors and warnings).
if command -v lintian >/dev/null; then
	spelling=$(lintian -I "$DEB" 2>&1 | grep -E 'spelling-error|typo-in' || true)
	if [ -z "$spelling" ]; then
		ok "lintian -I reports no spelling error"
	else
		not_ok "lintian -I reports no spelling error" "$spelling"
	fi
else
	skip "lintian -I reports no spelling error" "lintian is not installed"
fi

# A throwaway workspace outside the tree: a read-only run works, a write is
# denied by the kernel.
WS=$(mktemp -d /var/tmp/ward-deb-ws.XXXXXX)
if out=$(cd "$WS" && "$R/usr/bin/ward" run -- true 2>&1); then
	ok "ward run -- true from the package"
else
	not_ok "ward run -- true from the package" "$out"
fi
if out=$(cd "$WS" && "$R/usr/bin/ward" run -- sh -c 'echo x > f' 2>&1); then
	not_ok "ward run from the package denies a write in read-only mode" "$out"
elif [[ "$out" == *"[sandbox: file access denied under read-only mode]"* ]] &&
	[ ! -e "$WS/f" ]; then
	ok "ward run from the package denies a write in read-only mode"
else
	not_ok "ward run from the package denies a write in read-only mode" "$out"
fi
rm -rf "$WS"

out=$("$R/usr/libexec/ward/landlock-run" --probe 2>&1 | head -n 1)
case $out in
"landlock: fully enforced" | "landlock: partially enforced")
	ok "the packaged landlock-run --probe: $out"
	;;
*)
	if [ -e /sys/kernel/security/landlock ] ||
		grep -qw landlock /sys/kernel/security/lsm 2>/dev/null; then
		not_ok "the packaged landlock-run --probe" "$out"
	else
		skip "the packaged landlock-run --probe" "no Landlock in this kernel"
	fi
	;;
esac

# libward: the soname, and a program built against the packaged headers and
# ward.pc, linked with the packaged libward.so, loads it and asks its
# version.
LIB=$R/usr/lib/$MA
soname=$(objdump -p "$LIB/libward.so.0" 2>/dev/null | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" = libward.so.0 ]; then
	ok "libward.so.0 has the soname libward.so.0"
else
	not_ok "libward.so.0 has the soname libward.so.0" "SONAME: $soname"
fi
cat >"$TMP/hello.c" <<'EOF'
#include <stdio.h>
#include <ward/common.h>
int main(void)
{
	printf("%s\n", ward_version());
	return 0;
}
EOF
cflags= libs= out=
# Only the package's own pkg-config directory: ward.pc must need no other
# package's .pc (the package does not depend on any -dev package).
cflags=$(PKG_CONFIG_SYSROOT_DIR=$R PKG_CONFIG_LIBDIR=$LIB/pkgconfig \
	pkg-config --cflags ward 2>&1) &&
	libs=$(PKG_CONFIG_SYSROOT_DIR=$R PKG_CONFIG_LIBDIR=$LIB/pkgconfig \
		pkg-config --libs ward 2>&1)
# shellcheck disable=SC2086
if cc $cflags -o "$TMP/hello" "$TMP/hello.c" $libs >"$TMP/cc.log" 2>&1 &&
	out=$(LD_LIBRARY_PATH=$LIB "$TMP/hello") && [ "$out" = "$VERSION" ]; then
	ok "a program built with the packaged ward.pc and headers runs against libward.so"
else
	not_ok "a program built with the packaged ward.pc and headers runs against libward.so" \
		"cflags: $cflags" "libs: $libs" "$(cat "$TMP/cc.log")" "out: ${out:-}"
fi

if cmp -s "$R/usr/share/bash-completion/completions/ward" \
	<("$R/usr/bin/ward" completion bash) &&
	cmp -s "$R/usr/share/zsh/vendor-completions/_ward" \
		<("$R/usr/bin/ward" completion zsh); then
	ok "the packaged completions are what the packaged ward generates"
else
	not_ok "the packaged completions are what the packaged ward generates"
fi

finish
