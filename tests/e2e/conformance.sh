#!/bin/bash
# Run the end-to-end sandbox suite once per runner variant and write the
# conformance table (docs/CONFORMANCE.md): one row per case, one column per
# runner, each cell what the run observed. Nothing in the table is written
# by hand except the explanations of known differences below, and every
# difference without one is flagged UNEXPLAINED.
#
# Usage: tests/e2e/conformance.sh [OUTPUT]    (default: docs/CONFORMANCE.md)
# Exit status: 0 when every test passed, 1 when some failed (the table is
# written either way), 2 when it could not run.
set -u
cd "$(dirname "$0")/../.." || exit 2

out=${1:-docs/CONFORMANCE.md}
variants=(bwrap landlock)
titles=("bwrap" "landlock")

for b in build/bin/ward build/bin/landlock-run; do
	[ -x "$b" ] || {
		echo "conformance: $b is not built (run make)" >&2
		exit 2
	}
done
command -v bats >/dev/null || {
	echo "conformance: bats is not installed" >&2
	exit 2
}

rec=$(mktemp -d)
trap 'rm -rf "$rec"' EXIT

for v in "${variants[@]}" chain; do
	f=tests/e2e/sandbox_${v//-/_}.bats
	echo "conformance: running $f" >&2
	E2E_RECORD=$rec bats --tap "$f" >"$rec/$v.tap" 2>&1
done
# The access-rule suite (tests/e2e/rules_cases.bats.in), per variant; its
# records go to a directory of their own.
mkdir -p "$rec/rules"
for v in "${variants[@]}"; do
	f=tests/e2e/rules_${v//-/_}.bats
	echo "conformance: running $f" >&2
	E2E_RECORD=$rec/rules bats --tap "$f" >"$rec/rules-$v.tap" 2>&1
done

# TAP -> "key<TAB>result<TAB>detail" (result: ok, FAIL, skip; detail: the
# skip reason or the first FAIL: line of a failure).
tap_results() {
	awk -v prefix="$2: " '
	function flush() {
		if (key != "") print key "\t" res "\t" detail
		key = ""
	}
	/^(not )?ok [0-9]+ / {
		flush()
		line = $0
		res = (line ~ /^not ok/) ? "FAIL" : "ok"
		sub(/^(not )?ok [0-9]+ /, "", line)
		detail = ""
		if (match(line, / # [sS][kK][iI][pP]/)) {
			detail = substr(line, RSTART + 8)
			sub(/^ +/, "", detail)
			line = substr(line, 1, RSTART - 1)
			res = "skip"
		}
		if (index(line, prefix) == 1)
			line = substr(line, length(prefix) + 1)
		key = line
		next
	}
	res == "FAIL" && detail == "" && /^# .*FAIL: / {
		detail = $0
		sub(/^# .*FAIL: /, "", detail)
	}
	END { flush() }
	' "$1"
}

declare -A result detail outcome
declare -a keys chain_keys rule_keys
declare -A seen
for v in "${variants[@]}" chain; do
	while IFS=$'\t' read -r k r d; do
		result[$v|$k]=$r
		detail[$v|$k]=$d
		if [ "$v" = chain ]; then
			chain_keys+=("$k")
		elif [ -z "${seen[$k]:-}" ]; then
			seen[$k]=1
			keys+=("$k")
		fi
	done < <(tap_results "$rec/$v.tap" "$v")
	if [ -f "$rec/$v.tsv" ]; then
		while IFS=$'\t' read -r k o; do
			outcome[$v|$k]=$o
		done <"$rec/$v.tsv"
	fi
done

for v in "${variants[@]}"; do
	while IFS=$'\t' read -r k r d; do
		result[$v|$k]=$r
		detail[$v|$k]=$d
		if [ -z "${seen[$k]:-}" ]; then
			seen[$k]=1
			rule_keys+=("$k")
		fi
	done < <(tap_results "$rec/rules-$v.tap" "$v")
	if [ -f "$rec/rules/$v.tsv" ]; then
		while IFS=$'\t' read -r k o; do
			outcome[$v|$k]=$o
		done <"$rec/rules/$v.tsv"
	fi
done

if [ ${#keys[@]} -eq 0 ]; then
	echo "conformance: no test results; see the bats output:" >&2
	cat "$rec/bwrap.tap" >&2
	exit 2
fi

md_escape() {
	local s=${1//|/\\|}
	printf '%s' "${s//$'\n'/ }"
}

cell() { # cell VARIANT KEY
	local r=${result[$1|$2]:-} o=${outcome[$1|$2]:-} d=${detail[$1|$2]:-}
	case "$r" in
	"") printf 'not run' ;;
	skip) printf 'n/a (%s)' "$(md_escape "$d")" ;;
	FAIL) printf '**FAIL**: %s' "$(md_escape "${o:-no outcome recorded}")" ;;
	*) md_escape "${o:-ok}" ;;
	esac
}

# The first word of an outcome: allowed, denied, vanished, blocked, …
coarse() {
	local c=${1%% *}
	printf '%s' "${c%:}"
}

# Why a case differs between runners, when that is known and intended.
reason_for() {
	case "$1" in
	*"read-only: write in /tmp"*)
		echo "bwrap gives a read-only run a private tmpfs on /tmp: the write succeeds inside the sandbox and disappears with it, so nothing reaches the host. Landlock has no private mounts; it refuses the write (only /dev/null is writable in read-only)." ;;
	*"/dev/shm"*)
		echo "bwrap mounts a private /dev (a fresh tmpfs with a few device nodes), so the host's /dev/shm is not visible and a write there lands in the throw-away /dev or fails with ENOENT. Landlock keeps the host's /dev and grants nothing under it but /dev/null." ;;
	*chmod* | *timestamps* | *"extended attribute"* | *"set-user-ID"*)
		echo "Landlock (up to ABI 7) has no access right for metadata changes (chmod, chown, utimes, setxattr). ward's Landlock runners add a seccomp filter: with nothing writable (read-only) every such call fails with EACCES; with writable roots only a chmod that sets a set-id bit is refused, and other metadata changes on files the caller owns outside the roots remain possible (documented in docs/RUNNERS.md). bwrap's read-only bind mount refuses every change with EROFS." ;;
	*signal* | *ptrace*)
		echo "bwrap runs the command in a new PID namespace, where outside processes have no PID (ESRCH). Landlock has no PID namespace: the process is visible, and Landlock's scoping (ptrace restrictions; signal scope from ABI 6) refuses with EPERM." ;;
	*"hard link from the workspace"* | *"rename a workspace file"*)
		echo "bwrap: the workspace is a separate bind mount, so link/rename across it fails with EXDEV (mv then falls back to copying and hits the read-only mount, EROFS). Landlock refuses a link or rename that would give the file rights it lacks at its source (EXDEV), and the copy fallback is refused (EACCES)." ;;
	*"device node"*)
		echo "bwrap: the command has no CAP_MKNOD in its user namespace (EPERM). Landlock never grants MAKE_CHAR/MAKE_BLOCK (EACCES)." ;;
	*"/proc/1/root"*)
		echo "bwrap: PID 1 is the sandbox's own init, whose root is the read-only sandbox root (EROFS). Landlock: /proc/1/root is the host's init; following it needs ptrace access to init, which is refused (EACCES), and the path is governed by the ruleset anyway." ;;
	*"names the runner"* | *"--json reports"*)
		echo "Intended: the value names the runner that confined the command." ;;
	*TIOCSTI*)
		echo "Blocked everywhere; the errors differ only where the probe reopens the terminal: bwrap's private /dev has no /dev/pts/N of the host (the probe finds /dev/console instead) and no controlling terminal (ENXIO), while under Landlock the host's /dev/pts/N and /dev/tty are visible but not openable (EACCES). The inherited fds fail alike: EPERM, as the terminal is no longer the command's controlling terminal after setsid." ;;
	*"TMPDIR=/"*)
		echo "\$TMPDIR comes from the environment and may not widen the sandbox: it is a writable root only when it is a directory the caller owns under /tmp, /var/tmp or \$XDG_RUNTIME_DIR; a \$TMPDIR of / (or \$HOME, /etc, another user's directory) is left out on every runner and named in a warning (an rw rule is the deliberate way to ask for another writable place)." ;;
	*"in the workspace: read a file in it"* | *"in the workspace: write in it"* | \
		*"r- a glob in the workspace: overwrite a match"* | *"r- beats rw"* | \
		*"-- beats rw"*)
		echo "Enforced on every runner by mounts over the path (bwrap: after the writable binds; Landlock: landlock-run --hide/--hide-ro in a private mount namespace, docs/RUNNERS.md \"The hide step\"): a read-only bind for \`r-\`, an empty read-only tmpfs (directory) or /dev/null on a nodev mount (file) for \`--\`. Any difference is in the errno only." ;;
	*"protected: write .git/hooks/pre-commit"* | *"protected: change .git/config"*)
		echo "Landlock grants only add up, and the protected paths are not mounted over on Landlock (that would put every run in a git workspace through a mount namespace): ward says so at load time (a warning naming the paths and the runner); ward run's guard moves what the command changed to the quarantine after the run and puts the original back (tests/e2e/redteam_persist.bats), and ward's file operations (the fs fence) refuse the change. bwrap binds the protected paths read-only after the writable binds." ;;
	*"protected: move .git aside"*)
		echo "bwrap binds every directory between a writable root and a read-only or hidden path onto itself (a pin), so it is a mount point and cannot be renamed away (EBUSY): .git cannot be swapped for one with planted hooks. Landlock cannot protect anything inside the workspace (warned); ward run's guard moves the new .git (and the hooks planted in it) to the quarantine after the run, and the fs fence refuses the move." ;;
	*"list the hidden path's parent"* | *"created beside it during the run"*)
		echo "Landlock hides a path outside the writable roots by granting read on every entry beside it, along the way from /, instead of on its parent directories (complement expansion). The price: those directories themselves cannot be listed, and entries created in them during the run are not readable. ward states it in a warning. bwrap mounts an empty tmpfs over the hidden path and leaves the rest of the host visible." ;;
	*"-- a directory outside the roots: read"* | *"-- a file outside the roots"* | \
		*"-- in read-only mode still hides"*)
		echo "Hidden on every runner; the errno differs: bwrap puts an empty read-only tmpfs over a directory (the file is simply not there: ENOENT) and /dev/null on a nodev mount over a file (EACCES); Landlock refuses the open (EACCES)." ;;
	*"a new file at the top of \$HOME as the workspace"*)
		echo "With \$HOME as the workspace, ward's own configuration directory and session store lie inside a writable root. bwrap binds them read-only (creating them first, mode 0700), and so does Landlock's launcher where it can mount. Where no mount namespace can be made, Landlock cannot make part of a writable root read-only, so it grants write on the workspace's entries except the ones leading to ward's directories, not on the workspace itself: nothing new can be created at its top level (warned)." ;;
	*"as nobody: no capabilities"*)
		echo "bwrap empties the bounding set inside its user namespace, where it holds CAP_SETPCAP; an unprivileged Landlock caller cannot (that needs CAP_SETPCAP in the initial namespace). With no_new_privs set nothing can be gained from the bounding set at execve, so this is harmless." ;;
	*)
		return 1 ;;
	esac
}

# A difference only in the error each runner reports for the same refusal.
errno_note="Same outcome, different errno: bwrap refuses writes through its read-only bind mounts with EROFS (\"Read-only file system\"), Landlock with EACCES (\"Permission denied\"); each runner's denial signature is matched separately."

{
	echo "# ward sandbox conformance"
	echo
	echo "Generated by \`tests/e2e/conformance.sh\` from one run of the end-to-end"
	echo "suite (\`tests/e2e/sandbox_cases.bats.in\`, run once per runner variant,"
	echo "and \`tests/e2e/sandbox_chain.bats\`) on the real kernel. Do not edit by"
	echo "hand: run \`make && tests/e2e/conformance.sh\`."
	echo
	echo "Runners: **bwrap** = \`--runner bwrap\` (with ward's Landlock layer"
	echo "inside); **landlock** = \`--runner landlock\` (every Landlock run goes"
	echo "through the static launcher, landlock-run, which stays as the command's"
	echo "keeper)."
	echo
	echo "## Environment"
	echo
	echo "- kernel: \`$(uname -srm)\`"
	echo "- Landlock: \`$(build/bin/landlock-run --probe 2>&1 | tr '\n' ' ' | sed 's/ *$//')\`"
	echo "- bubblewrap: \`$(bwrap --version 2>/dev/null || echo 'not installed')\`"
	echo "- dev.tty.legacy_tiocsti: \`$(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo 'absent')\`"
	echo "- tests run as: \`$(id -un)\` (rows \"as nobody\" switch to uid 65534 with setpriv)"
	echo
	echo "## Results"
	echo
	printf '| case |'
	for t in "${titles[@]}"; do printf ' %s |' "$t"; done
	echo
	printf '| --- |'
	for _ in "${titles[@]}"; do printf ' --- |'; done
	echo
	for k in "${keys[@]}"; do
		printf '| %s |' "$(md_escape "$k")"
		for v in "${variants[@]}"; do
			printf ' %s |' "$(cell "$v" "$k")"
		done
		echo
	done
	echo
	echo "## Access rules and protected paths"
	echo
	echo "From \`tests/e2e/rules_cases.bats.in\` (run once per runner variant):"
	echo "\`rw\`, \`r-\` and \`--\` rules given with \`--access\`, and the protected"
	echo "paths (the repository's hooks and config under workspace-write, ward's"
	echo "own configuration always; its state directory, hidden, always)."
	echo "\"not expressible: warned\" means the runner cannot apply the rule and"
	echo "\`ward config check\` names it in a warning (the test checks that); the"
	echo "fs fence still applies every rule to ward's own file operations, and"
	echo "ward run's guard checks the protected paths after the run."
	echo
	printf '| case |'
	for t in "${titles[@]}"; do printf ' %s |' "$t"; done
	echo
	printf '| --- |'
	for _ in "${titles[@]}"; do printf ' --- |'; done
	echo
	for k in "${rule_keys[@]}"; do
		printf '| %s |' "$(md_escape "$k")"
		for v in "${variants[@]}"; do
			printf ' %s |' "$(cell "$v" "$k")"
		done
		echo
	done
	echo
	echo "Outcomes: **allowed** — the effect is visible on the host; **denied"
	echo "(ERRNO)** — the command failed, nothing changed on the host and ward"
	echo "printed the denial marker (\"no marker\" when it did not); **vanished** —"
	echo "the command succeeded inside the sandbox but nothing reached the host."
	echo
	echo "Totals:"
	echo
	for i in "${!variants[@]}"; do
		v=${variants[$i]}
		p=0 f=0 s=0
		for k in "${keys[@]}" "${rule_keys[@]}"; do
			case "${result[$v|$k]:-}" in
			ok) p=$((p + 1)) ;;
			FAIL) f=$((f + 1)) ;;
			skip) s=$((s + 1)) ;;
			esac
		done
		echo "- ${titles[$i]}: $p passed, $f failed, $s skipped"
	done
	echo
	echo "## Runner chain and failures"
	echo
	echo "| case | outcome |"
	echo "| --- | --- |"
	for k in "${chain_keys[@]}"; do
		printf '| %s | %s |\n' "$(md_escape "$k")" "$(cell chain "$k")"
	done
	echo
	echo "## Differences"
	echo
	echo "Every case whose outcome is not the same under both runners,"
	echo "with the reason."
	echo
	ndiff=0
	errno_only=()
	for k in "${keys[@]}" "${rule_keys[@]}"; do
		# Compared as the table shows them: pty numbers differ per run.
		a=$(cell bwrap "$k" | sed -E 's#/dev/pts/[0-9]+#/dev/pts/N#g')
		b=$(cell landlock "$k" | sed -E 's#/dev/pts/[0-9]+#/dev/pts/N#g')
		[ "$a" = "$b" ] && continue
		ndiff=$((ndiff + 1))
		if ! why=$(reason_for "$k") &&
			[ "$(coarse "$a")" = denied ] && [ "$(coarse "$b")" = denied ]; then
			errno_only+=("$k")
			continue
		fi
		echo "- **$(md_escape "$k")** — bwrap: $a; landlock: $b."
		if why=$(reason_for "$k"); then
			echo "  $why"
		else
			echo "  UNEXPLAINED: no known reason for this difference; investigate."
		fi
	done
	if [ ${#errno_only[@]} -gt 0 ]; then
		echo "- $errno_note Cases:"
		for k in "${errno_only[@]}"; do
			echo "  $(md_escape "$k") (bwrap: $(cell bwrap "$k"); Landlock: $(cell landlock "$k"));"
		done | sed '$ s/;$/./'
	fi
	[ $ndiff -gt 0 ] || echo "None."
	echo
	echo "## Failures"
	echo
	nfail=0
	for v in "${variants[@]}" chain; do
		if [ "$v" = chain ]; then set -- "${chain_keys[@]}"; else set -- "${keys[@]}" "${rule_keys[@]}"; fi
		for k in "$@"; do
			[ "${result[$v|$k]:-}" = FAIL ] || continue
			nfail=$((nfail + 1))
			echo "- $v: **$(md_escape "$k")** — $(md_escape "${detail[$v|$k]:-see the bats output}")"
		done
	done
	[ $nfail -gt 0 ] || echo "None."
	echo
	echo "## Known properties (not failures)"
	echo
	echo "- A hard link to an outside file that already exists inside the"
	echo "  workspace before the run is writable under workspace-write on every"
	echo "  runner: it is the same inode, reached through a writable path."
	echo "  Neither bind mounts nor Landlock's path-based rules can tell it apart."
	echo "  Creating such a link from inside the sandbox is refused."
	echo "- A pathname Unix socket outside the roots can be connected to in every"
	echo "  mode on every runner (modes govern file effects, not IPC): bwrap's"
	echo "  read-only bind mount does not cover sockets and Landlock has no right"
	echo "  for connect() up to ABI 7 (its scope covers abstract sockets only). A"
	echo "  host daemon listening on such a socket (Docker, D-Bus, an ssh or gpg"
	echo "  agent) can act for the command outside the sandbox."
} >"$out.tmp" || exit 2

# Per-run names (temporary directories, unique tags, pty numbers) become
# placeholders, so that two runs on the same system give the same file.
# shellcheck disable=SC2016 # the placeholders are literal
sed -E -e 's#/var/tmp/ward-e2e-ws\.[A-Za-z0-9]+#$WS#g' \
	-e 's#/var/tmp/ward-e2e-out\.[A-Za-z0-9]+#$OUT#g' \
	-e 's#/var/tmp/ward-e2e-shim\.[A-Za-z0-9]+#$SHIM#g' \
	-e 's#ward-e2e-[0-9]+-[0-9]+-[0-9]+#ward-e2e-TAG#g' \
	-e 's#/dev/pts/[0-9]+#/dev/pts/N#g' \
	-e "s#${HOME//#/\\#}/#\$HOME/#g" \
	"$out.tmp" >"$out" || exit 2
rm -f "$out.tmp"

echo "conformance: wrote $out" >&2
for v in "${variants[@]}" chain; do
	grep -q '^not ok' "$rec/$v.tap" && exit 1
done
for v in "${variants[@]}"; do
	grep -q '^not ok' "$rec/rules-$v.tap" && exit 1
done
exit 0
