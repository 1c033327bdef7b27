#!/usr/bin/env bats
# shellcheck shell=bats
#
# HOME anywhere: with HOME under /tmp (arbitrary-uid containers and CI
# images set HOME=/tmp), ward's own configuration and state directories lie
# inside the writable root /tmp. They stay out of a command's reach — the
# state directory unreadable, the configuration unwritable, their parents
# pinned — without taking /tmp away: mktemp, a file directly in /tmp, pip's
# and npm's temporary files work under workspace-write, on bwrap and on
# Landlock. Where no mount namespace can be made (user namespaces denied,
# not root), Landlock cannot do both, and ward refuses with the fix.
#
# Each test has a HOME of its own under /tmp (not /tmp itself: tests run
# side by side, and /tmp is the machine's), and a workspace under /var/tmp.

load helpers
bats_require_minimum_version 1.5.0

NOUSERNS=$E2E_BUILD/tests/nouserns

setup() {
	e2e_setup
	HOME_T=$(mktemp -d /tmp/ward-e2e-home.XXXXXX)
	chmod 0755 "$HOME_T"
	export HOME=$HOME_T
	unset XDG_CONFIG_HOME XDG_STATE_HOME XDG_RUNTIME_DIR
	CFG=$HOME/.config/ward
	STATE=$HOME/.local/state/ward
}

teardown() {
	e2e_teardown
	rm -rf "$HOME_T"
}

become() {
	if [ "$1" = nobody ]; then
		as_nobody
		chown -R 65534:65534 "$HOME_T"
		E2E_WRAP=(env HOME="$HOME")
	fi
}

# --- /tmp stays a writable root ----------------------------------------------

tmp_case() {
	local v=$1 who=$2
	require_runner_usable "$v"
	become "$who"
	ward_run "$v" workspace-write -c '
		t=$(mktemp) && echo MKTEMP && rm -f "$t"
		d=$(mktemp -d) && echo MKTEMP-D && rmdir "$d"
		echo x >"$1" && echo DIRECT
		"$2" -c "import tempfile; tempfile.NamedTemporaryFile(); tempfile.mkdtemp()" && echo PYTHON
		if command -v node >/dev/null; then
			node -e "const fs = require(\"fs\"), os = require(\"os\"); fs.rmdirSync(fs.mkdtempSync(os.tmpdir() + \"/w-\"))" && echo NODE
		else
			echo NODE
		fi' sh "$HOST_TMP" "$PY"
	assert_status 0
	[ "$(printf '%s' "$output" | tr '\n' ' ')" = "MKTEMP MKTEMP-D DIRECT PYTHON NODE" ] ||
		fail "not everything could write in /tmp: $output"
	[ -e "$HOST_TMP" ] || fail "the file made directly in /tmp is not on the host"
	[[ "$stderr" != *"entries beside"* ]] ||
		fail "ward took /tmp's top level away (it carved its directories out)"
	# ward made its configuration directory to keep it read-only (HOME
	# was empty): its own, so the guard leaves it where it is.
	[[ "$stderr" != *"appeared during the run"* ]] ||
		fail "the guard took away what ward itself made for the run: $stderr"
}

@test "HOME under /tmp: mktemp, /tmp itself, Python and Node temp files (bwrap, root)" { tmp_case bwrap root; }
@test "HOME under /tmp: mktemp, /tmp itself, Python and Node temp files (bwrap, nobody)" { tmp_case bwrap nobody; }
@test "HOME under /tmp: mktemp, /tmp itself, Python and Node temp files (landlock, root)" { tmp_case landlock root; }
@test "HOME under /tmp: mktemp, /tmp itself, Python and Node temp files (landlock, nobody)" { tmp_case landlock nobody; }
@test "HOME under /tmp: mktemp, /tmp itself, Python and Node temp files (landlock-run, root)" { tmp_case landlock-run root; }

# pip and npm as a project uses them: their own temporary directories in
# /tmp, nothing from the network (a local wheel, a local package).
tools_case() {
	local v=$1
	require_runner_usable "$v"
	"$PY" -m pip --version >/dev/null 2>&1 || skip "pip is not installed"
	mkdir -p "$WS/wheels" "$WS/pkg"
	make_wheel "$WS/wheels"
	ward_run "$v" workspace-write -- "$PY" -m pip install --no-index \
		--no-cache-dir --disable-pip-version-check \
		--find-links "$WS/wheels" --target "$WS/site" wardpkg
	assert_status 0
	[ -d "$WS/site/wardpkg" ] || fail "pip did not install into the workspace"
	if command -v npm >/dev/null; then
		echo '{"name":"wardpkg","version":"1.0.0"}' >"$WS/pkg/package.json"
		echo 'module.exports = 1;' >"$WS/pkg/index.js"
		ward_run "$v" workspace-write -c 'cd pkg && npm pack --loglevel error \
			--cache "$1/.npm" --pack-destination "$1"' sh "$WS"
		assert_status 0
		[ -f "$WS/wardpkg-1.0.0.tgz" ] || fail "npm pack made nothing"
	fi
}

@test "HOME under /tmp: pip install and npm pack work under workspace-write (bwrap)" { tools_case bwrap; }
@test "HOME under /tmp: pip install and npm pack work under workspace-write (landlock)" { tools_case landlock; }

# --- ward's directories stay out of reach --------------------------------------

# The state directory hidden (a session log neither listed nor read), the
# configuration directory read-only (no file changed or created), and their
# parents pinned (renaming one aside to build a new one fails), with the
# directories missing at first (ward creates them to mount over them) and
# present.
dirs_case() {
	local v=$1 who=$2 id log
	require_runner_usable "$v"
	become "$who"
	# Missing first: created by ward, then out of reach all the same.
	ward_run "$v" workspace-write -c '
		mkdir -p "$1" && echo "mode: danger-full-access" >"$1/config.yml" && echo WROTE-CFG
		mkdir -p "$2/sessions" && echo forged >"$2/sessions/x.jsonl" && echo WROTE-STATE
		true' sh "$CFG" "$STATE"
	[[ "$output" != *WROTE* ]] || fail "a command wrote ward's directories: $output"
	[ ! -e "$CFG/config.yml" ] && [ ! -e "$STATE/sessions/x.jsonl" ] ||
		fail "a command created a file in ward's directories"
	# Present: a session, and a configuration file.
	id=$("${E2E_AS[@]}" env HOME="$HOME" "$WARD" session new --cwd "$WS")
	log=$STATE/sessions/$id.jsonl
	[ -f "$log" ] || fail "no session log at $log"
	"${E2E_AS[@]}" sh -c 'mkdir -p "$1" && echo "mode: read-only" >"$1/config.yml"' sh "$CFG"
	ward_run "$v" workspace-write -c '
		cat "$1" 2>/dev/null && echo READ-LOG
		ls "$2" 2>/dev/null | grep -q . && echo LISTED
		echo "mode: danger-full-access" >"$3/config.yml" 2>/dev/null && echo WROTE-CFG
		echo x >"$3/new.yml" 2>/dev/null && echo NEW-CFG
		mv "$4/.local" "$4/.local-aside" 2>/dev/null && echo MOVED-LOCAL
		mv "$4/.config" "$4/.config-aside" 2>/dev/null && echo MOVED-CONFIG
		true' sh "$log" "$STATE" "$CFG" "$HOME"
	[[ "$output" != *READ-LOG* && "$output" != *LISTED* ]] ||
		fail "a command saw the state directory: $output"
	[[ "$output" != *CFG* ]] || fail "a command changed the configuration: $output"
	[[ "$output" != *MOVED* ]] || fail "a command moved a parent aside: $output"
	[ "$(cat "$CFG/config.yml")" = "mode: read-only" ] || fail "the configuration changed"
	[ -d "$HOME/.local" ] && [ -d "$HOME/.config" ] || fail "a parent was moved"
}

@test "HOME under /tmp: ward's state unreadable, its configuration unwritable (bwrap, root)" { dirs_case bwrap root; }
@test "HOME under /tmp: ward's state unreadable, its configuration unwritable (bwrap, nobody)" { dirs_case bwrap nobody; }
@test "HOME under /tmp: ward's state unreadable, its configuration unwritable (landlock, root)" { dirs_case landlock root; }
@test "HOME under /tmp: ward's state unreadable, its configuration unwritable (landlock, nobody)" { dirs_case landlock nobody; }
@test "HOME under /tmp: ward's state unreadable, its configuration unwritable (landlock-run, root)" { dirs_case landlock-run root; }

# Another user's HOME=/tmp: root made $HOME/.config, nobody cannot create
# ward's directory in it — and neither can nobody's command, so there is
# nothing to mount over and nothing to fail (it used to exit 126).
@test "HOME under /tmp with ward's parents owned by another user: runs (bwrap and landlock, nobody)" {
	require_runner_usable bwrap
	mkdir -p "$HOME/.config" "$HOME/.local"
	chmod 0755 "$HOME/.config" "$HOME/.local"
	as_nobody
	E2E_WRAP=(env HOME="$HOME")
	for v in bwrap landlock; do
		ward_run "$v" workspace-write -c 't=$(mktemp) && echo OK && rm -f "$t"'
		assert_status 0
		[ "$output" = OK ] || fail "$v: $output"
	done
	[ ! -e "$CFG" ] || fail "ward created a directory where its user cannot"
}

# --- where no mount namespace can be made ------------------------------------

@test "HOME under /tmp, user namespaces denied, not root: Landlock refuses with the fix; outside /tmp it runs" {
	[ -x "$NOUSERNS" ] || skip "$NOUSERNS is not built (make check builds it)"
	require_runner_usable landlock
	as_nobody
	chown 65534:65534 "$HOME_T"
	"$NOUSERNS" unshare -U true 2>/dev/null && fail "nouserns did not deny a user namespace"
	# The filter first (it needs root to install), then nobody.
	E2E_AS=("$NOUSERNS" "${E2E_AS[@]}")
	E2E_WRAP=(env HOME="$HOME")
	ward_run landlock workspace-write -c 'echo RAN'
	assert_status 125
	[[ "$output" != *RAN* ]] || fail "the command ran"
	[[ "$stderr" == *"lies inside the writable root /tmp"* ]] || fail "no reason given"
	[[ "$stderr" == *"set XDG_STATE_HOME and XDG_CONFIG_HOME to directories of your own outside /tmp"* ]] ||
		fail "no fix given"
	# The fix: ward's directories outside every writable root.
	mkdir -p "$OUT_DIR/xdg"
	chown 65534:65534 "$OUT_DIR/xdg"
	E2E_WRAP=(env HOME="$HOME" XDG_STATE_HOME="$OUT_DIR/xdg/state"
		XDG_CONFIG_HOME="$OUT_DIR/xdg/config")
	ward_run landlock workspace-write -c 't=$(mktemp) && echo x >"$1" && echo OK && rm -f "$t"' sh "$HOST_TMP"
	assert_status 0
	[ "$output" = OK ] || fail "$output"
	[ -e "$HOST_TMP" ]
}
