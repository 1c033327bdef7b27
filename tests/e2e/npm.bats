#!/usr/bin/env bats
# shellcheck shell=bats
#
# The npm package (make npm; docs/NPM.md): ward-sandbox (bin/ward.js) and
# ward-sandbox-linux-ARCH (static ward, landlock-run, ward-bridge), packed
# by `make check` for this machine. Installed offline from the tarballs,
# and through `npx -y ward-sandbox mcp` from a throwaway registry on
# 127.0.0.1 serving them (tests/e2e/npm_registry.py), driven by the
# official MCP SDK client (tests/mcp/npx.test.mjs). Every npm command uses
# an empty cache of the test's own, so nothing comes from anywhere else.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
BUILD=${WARD_BUILD:-$ROOT/build}
VERSION=$(sed -n 's/^#define WARD_VERSION "\(.*\)"/\1/p' "$ROOT/include/ward/common.h")
case $(uname -m) in
x86_64) ARCH=x64 ;;
aarch64) ARCH=arm64 ;;
*) ARCH=$(uname -m) ;;
esac
MAIN=$BUILD/npm/ward-sandbox-$VERSION.tgz
PLAT=$BUILD/npm/ward-sandbox-linux-$ARCH-$VERSION.tgz
MCP_DIR=$ROOT/tests/mcp

setup() {
	[ -z "${WARD_SANITIZE:-}" ] ||
		skip "the sanitizer lane's ward is dynamic; the npm package carries the static one"
	command -v npm >/dev/null || skip "npm is not installed (Debian: apt-get install npm)"
	[ -f "$MAIN" ] && [ -f "$PLAT" ] ||
		skip "the npm tarballs are not built (make npm; make check packs them)"
	T=$(mktemp -d /var/tmp/ward-npm-test.XXXXXX)
	export npm_config_cache=$T/cache npm_config_update_notifier=false \
		npm_config_audit=false npm_config_fund=false
	REGISTRY_PID=
}

teardown() {
	[ -z "${REGISTRY_PID:-}" ] || kill "$REGISTRY_PID" 2>/dev/null || true
	rm -rf "${T:-/nonexistent}"
}

# Serve the tarballs of $BUILD/npm from a registry of our own: $REGISTRY.
start_registry() {
	local i
	/usr/bin/python3 "$BATS_TEST_DIRNAME/npm_registry.py" "$BUILD/npm" \
		--lifetime 600 >"$T/registry.port" 2>"$T/registry.err" 3>&- &
	REGISTRY_PID=$!
	for i in $(seq 1 300); do
		[ -s "$T/registry.port" ] && break
		kill -0 "$REGISTRY_PID" 2>/dev/null ||
			fail "the registry died: $(cat "$T/registry.err")"
		sleep 0.1
	done
	[ -s "$T/registry.port" ] || fail "the registry did not start in 30 s"
	REGISTRY=http://127.0.0.1:$(head -n 1 "$T/registry.port")/
}

fail() {
	printf 'FAIL: %s\n' "$*"
	return 1
}

@test "npm pack: both packages carry ward's version; the platform one the three static binaries" {
	run -0 tar -xzOf "$MAIN" package/package.json
	[ "$(jq -r .version <<<"$output")" = "$VERSION" ]
	[ "$(jq -r .bin.ward <<<"$output")" = bin/ward.js ]
	[ "$(jq -r ".optionalDependencies[\"ward-sandbox-linux-$ARCH\"]" <<<"$output")" = "$VERSION" ]
	run -0 tar -xzOf "$PLAT" package/package.json
	[ "$(jq -r .version <<<"$output")" = "$VERSION" ]
	[ "$(jq -r '.cpu[0]' <<<"$output")" = "$ARCH" ]
	mkdir "$T/x"
	tar -xzf "$PLAT" -C "$T/x"
	for f in ward landlock-run ward-bridge; do
		[ -x "$T/x/package/bin/$f" ] || fail "bin/$f is not executable"
		if readelf -lW "$T/x/package/bin/$f" | grep -q 'program interpreter'; then
			fail "bin/$f is dynamic"
		fi
	done
	run -0 "$T/x/package/bin/ward" --version
	[ "$output" = "ward $VERSION" ]
}

@test "an offline install from the tarballs puts ward on the PATH; it runs landlock-run from beside itself" {
	command -v strace >/dev/null || skip "strace is not installed"
	mkdir -p "$T/prefix" "$T/ws"
	run -0 timeout -k 5 300 npm install --offline --ignore-scripts \
		--prefix "$T/prefix" "$MAIN" "$PLAT"
	run -0 "$T/prefix/node_modules/.bin/ward" --version
	[ "$output" = "ward $VERSION" ]
	# The launcher ward runs is the package's, not one installed
	# elsewhere (the compiled-in libexec directory is the fallback).
	cd "$T/ws"
	run -0 strace -f -qq -e trace=execve -o "$T/trace" \
		"$T/prefix/node_modules/.bin/ward" run --runner landlock -- true
	grep -q "execve(\"$T/prefix/node_modules/ward-sandbox-linux-$ARCH/bin/landlock-run\"" "$T/trace" ||
		fail "no landlock-run from the package: $(grep execve "$T/trace")"
	# The exit status is the command's, through the shim.
	run -3 "$T/prefix/node_modules/.bin/ward" run -- sh -c 'exit 3'
}

@test "ward-sandbox without its platform package says what is missing and exits 125" {
	mkdir -p "$T/prefix"
	# Offline, only the main tarball: the optional dependency cannot be
	# had, and npm goes on without it.
	run -0 timeout -k 5 300 npm install --offline --ignore-scripts \
		--prefix "$T/prefix" "$MAIN"
	[ ! -e "$T/prefix/node_modules/ward-sandbox-linux-$ARCH" ]
	run -125 --separate-stderr "$T/prefix/node_modules/.bin/ward" --version
	[[ "$stderr" == "ward-sandbox: the package ward-sandbox-linux-$ARCH is not installed"* ]]
}

@test "npx -y ward-sandbox mcp (and npx --package TARBALL): the official SDK client drives it" {
	command -v node >/dev/null || skip "node is not installed"
	[ -d "$MCP_DIR/node_modules/@modelcontextprotocol/sdk" ] ||
		skip "the MCP SDK is not installed (npm ci --prefix tests/mcp)"
	start_registry
	# The registry, and nothing else: the cache starts empty, and
	# --offline (second scenario) allows no fetch at all.
	run timeout -k 5 600 env WARD_NPM_REGISTRY="$REGISTRY" \
		WARD_NPM_CACHE="$T/cache" WARD_NPM_TARBALLS="$MAIN $PLAT" \
		node --test --test-reporter=tap "$MCP_DIR/npx.test.mjs"
	printf '%s\n' "$output" | grep -v '^ *at ' | head -n 80 | sed 's/^/# /'
	[ "$status" -eq 0 ]
	[[ "$output" == *"# pass 2"* ]]
}
