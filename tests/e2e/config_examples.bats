#!/usr/bin/env bats
# shellcheck shell=bats
#
# Every example in docs/CONFIG.md and man/ward-config.5 is executed, taken
# from the files themselves (tests/e2e/doc_examples.py extracts them), never
# copied here: an example that stops working fails this test.
#
#   yaml      written where its first line says (~/.config/ward/config.yml:
#             the user file; .ward/config.yml: the project file of the
#             workspace), then `ward config check` must say valid and
#             `ward run -- true` must run;
#   console   each "$ command" runs, with the user example in place;
#   c         compiled against libward and run in the workspace;
#   text      an output example (an error or warning line) is reproduced
#             and must match, after the example's /home/u and /src/app
#             become the test's; a synopsis or a format is named here and
#             skipped — any other text block fails the test, so a new
#             example cannot be left out silently.
#
# The environment is a stock Debian account's: HOME set, no XDG_* variable
# (the defaults of the XDG Base Directory specification apply).

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
WARD=${WARD:-$BUILD/bin/ward}
EXTRACT="/usr/bin/python3 $BATS_TEST_DIRNAME/doc_examples.py"

setup() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	BASE=$(mktemp -d /var/tmp/ward-docex.XXXXXX)
	export HOME=$BASE/home
	APP=$HOME/src/app
	mkdir -p "$APP" "$HOME/.config/ward"
	unset XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME \
		XDG_RUNTIME_DIR TMPDIR
	cd "$APP" || return 1
}

teardown() {
	cd / && rm -rf "${BASE:-/nonexistent}"
}

fail() {
	printf 'FAIL: %s\n' "$*"
	return 1
}

# blocks FILE LANG: the blocks of FILE in LANG, as a JSON array.
blocks() {
	$EXTRACT "$ROOT/$1" | jq -c --arg l "$2" '[.[] | select(.lang == $l)]'
}

# place YAML: write an example where its first line says.
place() {
	local first
	first=$(head -n 1 <<<"$1")
	rm -f "$HOME/.config/ward/config.yml" "$APP/.ward/config.yml"
	case "$first" in
	*"~/.config/ward/config.yml"*) printf '%s' "$1" >"$HOME/.config/ward/config.yml" ;;
	*".ward/config.yml"*)
		mkdir -p "$APP/.ward"
		printf '%s' "$1" >"$APP/.ward/config.yml"
		;;
	*) fail "an example whose first line names no file: $first" ;;
	esac
}

yaml_examples() {
	local file=$1 n i y
	run -0 blocks "$file" yaml
	n=$(jq length <<<"$output")
	echo "# $file: $n yaml examples"
	[ "$n" -ge 2 ] || fail "expected the user and project examples in $file"
	for i in $(seq 0 $((n - 1))); do
		y=$(jq -r ".[$i].text" <<<"$(blocks "$file" yaml)")
		place "$y"
		run --separate-stderr "$WARD" config check -w "$APP"
		[ "$status" -eq 0 ] && [[ "${lines[0]}" == "configuration: valid" ]] ||
			fail "$file example $i: config check exited $status: $output $stderr"
		[[ "$output" != *"ignored"* ]] ||
			fail "$file example $i: something was ignored: $output"
		run --separate-stderr "$WARD" run -w "$APP" -- true
		[ "$status" -eq 0 ] ||
			fail "$file example $i: ward run exited $status: $stderr"
	done
}

@test "docs/CONFIG.md: every YAML example is valid and runs" {
	yaml_examples docs/CONFIG.md
}

@test "ward-config(5): every YAML example is valid and runs" {
	yaml_examples man/ward-config.5
}

@test "the user example's {{ env.XDG_* }} rules use the XDG defaults when unset" {
	local y
	y=$(blocks man/ward-config.5 yaml | jq -r '[.[] | select(.text | test("XDG_CACHE_HOME"))][0].text')
	[ -n "$y" ] && [ "$y" != null ]
	place "$y"
	mkdir -p "$HOME/.cache"
	run -0 --separate-stderr "$WARD" config check -w "$APP"
	[[ "$output" == *"rw $HOME/.cache  "* ]]
	[[ "$output" == *"r- $HOME/.config  "* ]]
	# The cache is a writable root, the config directory is not.
	run -0 --separate-stderr "$WARD" run -w "$APP" -- touch "$HOME/.cache/x"
	run -1 --separate-stderr "$WARD" run -w "$APP" -- touch "$HOME/.config/x"
	[ -e "$HOME/.cache/x" ] && [ ! -e "$HOME/.config/x" ]
}

console_examples() {
	local file=$1 all n i cmd count=0 user
	all=$(blocks "$file" console)
	n=$(jq length <<<"$all")
	[ "$n" -ge 1 ] || fail "no console example in $file"
	# With the user example in place (the commands show what applies).
	user=$(blocks "$file" yaml | jq -r '[.[] | select(.text | startswith("# ~/.config"))][0].text')
	[ "$user" != null ] && place "$user"
	for i in $(seq 0 $((n - 1))); do
		while IFS= read -r cmd; do
			[[ "$cmd" == '$ '* ]] || continue
			cmd=${cmd#\$ }
			cmd=${cmd//\~\//$HOME/}
			cmd=${cmd//ward /$WARD }
			count=$((count + 1))
			run --separate-stderr bash -c "$cmd"
			[ "$status" -eq 0 ] ||
				fail "$file: '$cmd' exited $status: $stderr"
		done < <(jq -r ".[$i].text" <<<"$all")
	done
	echo "# $file: $count commands"
	[ "$count" -ge 2 ]
}

@test "docs/CONFIG.md: every console example runs" {
	console_examples docs/CONFIG.md
}

@test "ward-config(5): every console example runs" {
	console_examples man/ward-config.5
}

@test "docs/CONFIG.md: the C example compiles against libward and runs" {
	local c n
	[ -f "$BUILD/lib/libward.a" ] || skip "libward is not built (run make)"
	command -v cc >/dev/null || skip "no C compiler"
	c=$(blocks docs/CONFIG.md c)
	n=$(jq length <<<"$c")
	[ "$n" -eq 1 ] || fail "expected one C example, found $n"
	jq -r '.[0].text' <<<"$c" >"$BASE/example.c"
	# shellcheck disable=SC2086 # the sanitizer lane's flags, split
	run -0 cc -std=c11 -Wall -Werror -I"$ROOT/include" -o "$BASE/example" \
		${WARD_SAN_CFLAGS:-} "$BASE/example.c" "$BUILD/lib/libward.a" \
		$(pkg-config --libs jansson yaml-0.1) -lpthread
	place "$(blocks docs/CONFIG.md yaml | jq -r '.[0].text')"
	run -0 "$BASE/example"
	[[ "$output" == "mode workspace-write in $APP" ]]
}

# reproduce LINE: make the situation an output example shows and check that
# ward prints exactly it (the example's /home/u and /src/app are ours).
reproduce() {
	local line=$1 file lineno key value want
	if [[ "$line" =~ ^([^:]+):([0-9]+):\ ([a-z_]+):\ (.*)$ ]]; then
		file=${BASH_REMATCH[1]} lineno=${BASH_REMATCH[2]}
		key=${BASH_REMATCH[3]}
	else
		fail "an output example that is no FILE:LINE: KEY: line: $line"
	fi
	case "$key" in
	probe_timeout_ms) value=$(sed -n 's/.*got "\(.*\)"$/\1/p' <<<"$line") ;;
	mode) value=$(sed -n 's/.* and \([a-z-]*\) is wider than .*/\1/p' <<<"$line") ;;
	unprotect) value='[.vscode]' ;; # the warning does not repeat the paths
	*) fail "no way to reproduce an example about $key" ;;
	esac
	[ -n "$value" ] || fail "no value in: $line"
	rm -rf "$HOME/.config/ward/config.yml" "$APP/.ward"
	case "$file" in
	/home/u/.config/ward/config.yml) file=$HOME/.config/ward/config.yml ;;
	/src/app/.ward/config.yml)
		mkdir -p "$APP/.ward"
		file=$APP/.ward/config.yml
		;;
	*) fail "an example about an unexpected file: $file" ;;
	esac
	{
		for _ in $(seq 2 "$lineno"); do echo "# ..."; done
		echo "$key: $value"
	} >"$file"
	want=${line//\/home\/u/$HOME}
	want=${want//\/src\/app/$APP}
	run --separate-stderr "$WARD" config check -w "$APP"
	grep -qxF -- "  $want" <<<"$output" || grep -qxF -- "$want" <<<"$output" ||
		fail "ward did not print the example: $want
got: $output"
}

text_examples() {
	local file=$1 all n i text checked=0
	all=$(blocks "$file" text)
	n=$(jq length <<<"$all")
	for i in $(seq 0 $((n - 1))); do
		text=$(jq -r ".[$i].text" <<<"$all")
		case "$text" in
		"FILE:LINE: KEY: message"*) continue ;;       # the format
		"ward config check ["*) continue ;;            # the synopsis
		"*_TOKEN "*)                                   # the drop patterns
			rm -f "$HOME/.config/ward/config.yml"
			run -0 --separate-stderr "$WARD" config check --json -w "$APP"
			[ "$(jq -r '.env.drop | join(" ")' <<<"$output")" = "${text%$'\n'}" ] ||
				fail "the built-in drop patterns are not: $text"
			checked=$((checked + 1))
			continue
			;;
		esac
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			reproduce "$line"
			checked=$((checked + 1))
		done <<<"$text"
	done
	echo "# $file: $checked output examples reproduced"
	[ "$checked" -ge 1 ]
}

@test "docs/CONFIG.md: the output examples are what ward prints" {
	text_examples docs/CONFIG.md
}

@test "ward-config(5): the output examples are what ward prints" {
	text_examples man/ward-config.5
}

@test "every example block of both files is of a kind this test runs" {
	local f
	for f in docs/CONFIG.md man/ward-config.5; do
		run -0 $EXTRACT "$ROOT/$f"
		jq -e 'all(.[]; .lang | IN("yaml", "console", "c", "text"))' \
			<<<"$output" >/dev/null ||
			fail "$f has an example of a kind nobody runs: $(jq -c '[.[].lang] | unique' <<<"$output")"
	done
}
