#!/bin/bash
# bench/calls.sh — the per-call targets, measured side by side (`make bench`
# runs it after bench/run.sh; it can run alone on a built tree).
#
# Every comparison is one bench_paired invocation: the commands run in
# interleaved rounds (A B C, B C A, …) so that a load that comes and goes
# hits them alike, under `chrt -f 50` when the kernel allows it. Ratios of
# medians are reported and written between the "calls:begin" and
# "calls:end" markers of docs/BENCHMARKS.md.
#
#   1. ward run --runner landlock -- true   vs  sh -c true
#      (read-only, workspace-write, and in a git workspace)
#   2. ward run --runner bwrap -- true      vs  its own raw argv
#      (ward confine --json's argv, minus nothing: the same vector)
#   3. ward run -- true (auto)              vs  ward run --runner bwrap
#   4. ward run --session at 50,000 events  vs  a new session
#   5. five --/r- globs over a 100,000-file workspace (750 matches): the
#      whole call on each runner (target: 100 ms), and 1,000 rules planned
#      for Landlock (target: 5 ms)
#   6. the Landlock layer inside bwrap: ward confine's bwrap argv with
#      and without the inner landlock-run (what defense in depth costs)
#   7. the supervisor (src/util/supervise.c): landlock-run with it against a
#      build without it (-DLANDLOCK_RUN_NO_SUPERVISOR, bench only): per
#      call (`true`), per judged system call (chmod + connect) and per
#      plain system call (the filter alone)
#   8. ward run --mode danger-full-access -- true (not confined, but kept
#      by landlock-run --unconfined) vs sh -c true, and the keeper alone
#      vs /bin/true
#   9. issue 18: ward run --json with 1,000,000 bytes of output vs the
#      same without --json (target 1.1), and 1,000 literal `--` rules vs
#      none on each runner, outside the roots (read-only) and inside them
#      (workspace-write) (target 2.0), with 10,000 rules as info and, in
#      the same rounds, the floor of 1,000 hidden files (the least kernel
#      work any implementation pays for them: bench/bench_rulefloor.c)
#  10. issue 18: landlock-run with ward's argv and ward run --runner
#      landlock against sh -c true and the no-supervisor build, root and
#      uid 65534 (CALLS_OLD=TREE adds another revision's launcher and ward),
#      with the exec floor: `ward --version` plus `true` alone (two execs
#      every `ward run -- true` makes, whatever it runs between them), and
#      what an in-process keeper would trade: the launcher's start
#      (`landlock-run --version`) against a fork() of a process of ward's
#      size instead of a vfork (bench/bench_fork.c)
#
# Knobs: CALLS_ROUNDS (default 300), CALLS_DOC (docs/BENCHMARKS.md; empty:
# do not write), CALLS_BIG=0 skips target 5 (it builds a 100k-file tree),
# CALLS_PARTS="1 2 5" runs only those parts (the table then says "not
# measured" for the others: use it with CALLS_DOC= while working).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
WARD=$ROOT/build/bin/ward
OUT=$ROOT/build/bench/calls
ROUNDS=${CALLS_ROUNDS:-300}
DOC=${CALLS_DOC-docs/BENCHMARKS.md}
BIG=${CALLS_BIG:-1}
PARTS=" ${CALLS_PARTS:-1 2 3 4 5 6 7 8 9 10} "
part() { [[ $PARTS == *" $1 "* ]]; }
mkdir -p "$OUT"
rm -f "$OUT"/*.json

PAIRED=$OUT/bench_paired
cc -O2 -std=c11 -D_GNU_SOURCE -o "$PAIRED" bench/bench_paired.c

# Real-time priority when allowed (root, or RLIMIT_RTPRIO).
RT=()
if chrt -f 50 true 2>/dev/null; then
	RT=(chrt -f 50)
fi

WORK=$(mktemp -d /var/tmp/ward-bench-calls.XXXXXX)
cleanup() { rm -rf "$WORK"; }
trap cleanup EXIT

# A private HOME: sessions and the probe cache are throwaway.
export HOME=$WORK/home
unset XDG_CONFIG_HOME XDG_STATE_HOME TMPDIR
mkdir -p "$HOME" "$WORK/ws" "$WORK/git"
git -C "$WORK/git" init -q . && echo a >"$WORK/git/a" &&
	git -C "$WORK/git" add a &&
	git -C "$WORK/git" -c user.email=b@x -c user.name=b commit -qm a

paired() { # NAME ROUNDS CMD...
	local name=$1 rounds=$2
	shift 2
	echo "bench/calls.sh: $name"
	"${RT[@]}" "$PAIRED" -n "$rounds" -w 10 --json "$OUT/$name.json" "$@"
}

# The launcher without its supervisor (bench only): $OUT/landlock-run-nosv.
build_nosv() {
	local cc
	cc=$(command -v musl-gcc || echo cc)
	$cc -std=c11 -D_GNU_SOURCE -Os -static -I"$ROOT/src" \
		-DLANDLOCK_RUN_NO_SUPERVISOR -o "$OUT/landlock-run-nosv" \
		"$ROOT/src/launcher/landlock-run.c" "$ROOT/src/util/landlock.c" \
		"$ROOT/src/util/supervise.c" "$ROOT/src/util/hide.c" \
		"$ROOT/src/util/util.c"
}

raw_bwrap() { # WS MODE -> the raw argv of `ward confine`, space-joined
	"$WARD" confine --json -w "$1" --mode "$2" --runner bwrap -- true |
		python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["argv"]))'
}

# 1 and 2: per mode and workspace.
for ws in ws git; do
	for mode in read-only workspace-write; do
		cd "$WORK/$ws"
		part 1 && paired "landlock-$ws-$mode" "$ROUNDS" \
			"sh=sh -c true" \
			"ward=$WARD run --mode $mode --runner landlock -- true"
		part 2 && paired "bwrap-$ws-$mode" "$ROUNDS" \
			"raw=$(raw_bwrap "$WORK/$ws" "$mode")" \
			"ward=$WARD run --mode $mode --runner bwrap -- true"
	done
done
cd "$WORK/ws"

# 3: the chain with its probe verdict kept across processes.
if part 3; then
	"$WARD" run -- true
	paired auto "$ROUNDS" \
		"forced=$WARD run --runner bwrap -- true" \
		"auto=$WARD run -- true"
fi

# 4: a session with 50,000 events against a new one.
if part 4; then
NEW=$("$WARD" session new --cwd "$WORK/ws")
BIG_ID=$("$WARD" session new --cwd "$WORK/ws")
python3 - "$HOME/.local/state/ward/sessions/$BIG_ID.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "a") as f:
    for i in range(25000):
        cid = "%012x" % i
        f.write(json.dumps({"type": "call/start", "time": "2026-01-01T00:00:00.000Z", "call": cid, "tool": "run", "argv": ["make", "test"], "cwd": "/w", "mode": "read-only", "mode_source": "default", "pid": 1}, separators=(",", ":")) + "\n")
        f.write(json.dumps({"type": "call/result", "time": "2026-01-01T00:00:00.000Z", "call": cid, "ran": True, "mode": "read-only", "exit_code": 0, "signal": None, "timed_out": False, "denied": False, "runner": "bwrap", "enforcement": "full"}, separators=(",", ":")) + "\n")
EOF
paired session "$((ROUNDS / 3))" \
	"new=$WARD run --session $NEW --runner landlock -- true" \
	"big=$WARD run --session $BIG_ID --runner landlock -- true"
fi

# 5: rules over a big tree.
if [ "$BIG" = 1 ] && part 5; then
	python3 - "$WORK/tree" <<'EOF'
import os, sys
root = sys.argv[1]
n = 0
for d in range(1000):
    dd = os.path.join(root, "src", "m%03d" % (d // 50), "p%04d" % d)
    os.makedirs(dd, exist_ok=True)
    for f in range(100):
        ext = ".c"
        if d % 4 == 0 and f < 3:
            ext = ".pem"          # 750 matches of **/*.pem
        open(os.path.join(dd, "f%03d%s" % (f, ext)), "w").close()
        n += 1
print(n, "files")
EOF
	cd "$WORK/tree"
	# The rules in a --config file: bench_paired splits its commands at
	# spaces, and every rule holds one.
	printf 'access: |\n  %s\n  %s\n  %s\n  %s\n  %s\n' '-- **/*.pem' \
		'-- **/*.key' 'r- **/*.lock' '-- **/id_rsa*' 'r- src/**/*.env' \
		>"$WORK/globs.yml"
	paired globs 15 \
		"bwrap=$WARD run --mode workspace-write --runner bwrap --config $WORK/globs.yml -- true" \
		"landlock=$WARD run --mode workspace-write --runner landlock --config $WORK/globs.yml -- true" \
		|| echo "bench/calls.sh: the glob call failed (see above)" >&2
	cd "$ROOT"
	# 1,000 rules planned for Landlock (bench/bench_plan.c).
	# shellcheck disable=SC2046
	if cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -o "$OUT/bench_plan" \
		bench/bench_plan.c build/lib/libward.a \
		$(pkg-config --libs jansson yaml-0.1 libevent_core libevent_extra \
			libevent_pthreads) -lpthread; then
		"${RT[@]}" "$OUT/bench_plan" -n 31 --json "$OUT/plan.json" ||
			echo "bench/calls.sh: bench_plan failed" >&2
	fi
	cd "$WORK/ws"
fi

# 6: the Landlock layer inside bwrap.
part 6 && for mode in read-only workspace-write; do
	full=$(raw_bwrap "$WORK/ws" "$mode")
	# The bwrap part alone: up to the first --, then the command.
	outer=$(python3 -c 'import sys
a = sys.argv[1].split(" ")
i = a.index("--")
j = a.index("--", i + 1)
b = a[:i + 1] + a[j + 1:]
k = b.index("--ro-bind", b.index("WARD_SANDBOX"))
print(" ".join(b[:k] + b[k + 3:]))' "$full")
	paired "inner-$mode" "$ROUNDS" "outer=$outer" "inner=$full"
done

# 7: the supervisor.
if part 7; then
NOSV=$OUT/landlock-run-nosv
JUDGED=$OUT/bench_judged
build_nosv
cc -O2 -std=c11 -D_GNU_SOURCE -o "$JUDGED" "$ROOT/bench/bench_judged.c"
LL="$ROOT/build/bin/landlock-run --ro / --rw /dev/null --rw $WORK/ws --"
LN="$NOSV --ro / --rw /dev/null --rw $WORK/ws --"
paired sv-true "$ROUNDS" "nosv=$LN /bin/true" "sv=$LL /bin/true"
paired sv-judged "$((ROUNDS / 3))" "nosv=$LN $JUDGED judged 2000" \
	"sv=$LL $JUDGED judged 2000"
paired sv-plain "$((ROUNDS / 3))" "nosv=$LN $JUDGED plain 1000000" \
	"sv=$LL $JUDGED plain 1000000"
fi

# 8: danger-full-access is not confined but kept (landlock-run
# --unconfined stays as the command's keeper).
part 8 && paired danger "$ROUNDS" "sh=sh -c true" \
	"ward=$WARD run --mode danger-full-access -- true" \
	"keeper=$ROOT/build/bin/landlock-run --unconfined -- /bin/true" \
	"true=/bin/true"
# 9: --json with a megabyte of output; many rules.
if part 9; then
	cd "$WORK/ws"
	python3 -c 'import sys; sys.stdout.write(("x" * 99 + "\n") * 10000)' \
		>"$WORK/ws/m1.txt"
	# The floor of a capture: the same megabyte through a pipe into a
	# process that reads it, against the same two processes and pipe
	# with the megabyte written to /dev/null.
	printf '#!/bin/sh\ncat m1.txt >/dev/null | cat >/dev/null\n' \
		>"$WORK/pipe0.sh"
	printf '#!/bin/sh\ncat m1.txt | cat >/dev/null\n' >"$WORK/pipe1.sh"
	chmod +x "$WORK/pipe0.sh" "$WORK/pipe1.sh"
	paired json "$((ROUNDS / 5))" \
		"plain=$WARD run --runner bwrap -- cat m1.txt" \
		"json=$WARD run --json --runner bwrap -- cat m1.txt" \
		"pipe0=$WORK/pipe0.sh" "pipe1=$WORK/pipe1.sh"
	mkdir -p "$WORK/rules/ws"
	(cd "$WORK/rules/ws" && seq -f 'f%g' 1 10000 | xargs touch)
	for n in 1000 10000; do
		{
			echo "access:"
			seq -f "  - \"-- $WORK/rules/ws/f%g\"" 1 "$n"
		} >"$WORK/rules$n.yml"
	done
	# The floor of 1,000 hidden files (bench/bench_rulefloor.c), in the
	# same rounds: the least kernel work any implementation pays for
	# them on top of its call without rules.
	FLOOR=$OUT/bench_rulefloor
	cc -O2 -std=c11 -D_GNU_SOURCE -o "$FLOOR" "$ROOT/bench/bench_rulefloor.c"
	D=$WORK/rules/ws
	cd "$D"
	for r in bwrap landlock; do
		for mode in read-only workspace-write; do
			c="$WARD run --mode $mode --runner $r"
			floor=("fnone=$FLOOR none $D 0 -- true"
				"fns=$FLOOR mounts $D 0 -- true"
				"fm1k=$FLOOR mounts $D 1000 -- true"
				"fmfd1k=$FLOOR mounts-fd $D 1000 -- true")
			[ "$mode" = read-only ] &&
				floor+=("fc1k=$FLOOR complement $D 1000 -- true")
			paired "rules-$r-$mode" "$((ROUNDS / 10))" \
				"none=$c -- true" \
				"r1k=$c --config $WORK/rules1000.yml -- true" \
				"r10k=$c --config $WORK/rules10000.yml -- true" \
				"${floor[@]}"
		done
	done
	cd "$WORK/ws"
fi

# 10: issue 18, the launcher's processes: landlock-run with ward's argv
# and `ward run --runner landlock -- true` against `sh -c true` and the
# no-supervisor build (part 7's; it execs the command from the confined
# process, or as root forks it from init), as root and as uid 65534, in a
# git workspace, read-only and workspace-write; with CALLS_OLD=TREE (a
# built tree of another revision) its landlock-run and ward in the same
# rounds. Printed, not written to the document (BENCHMARKS.md, "Issue 18:
# one supervisor process", has a run).
if part 10; then
	OLD=${CALLS_OLD:-}
	NOSV=$OUT/landlock-run-nosv
	build_nosv
	# A caller of ward run's size starting true by fork() or by vfork:
	# what an in-process keeper would pay where the executor pays for
	# the launcher's exec (bench/bench_fork.c).
	FORK=$OUT/bench_fork
	cc -O2 -std=c11 -static-pie -o "$FORK" "$ROOT/bench/bench_fork.c"
	RSS=$(cd "$WORK/git" && /usr/bin/time -f %M "$WARD" run \
		--runner landlock -- true 2>&1 >/dev/null | tail -n 1)
	chmod 755 "$WORK" "$OUT" "$NOSV" "$PAIRED" "$FORK"
	chmod 1777 "$WORK"
	for who in root nobody; do
		as=()
		gws=$WORK/git
		if [ "$who" = nobody ]; then
			as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
			gws=$WORK/git-nobody
			rm -rf "$gws" "$WORK/home-nobody"
			cp -a "$WORK/git" "$gws"
			mkdir -p "$WORK/home-nobody"
			chown -R 65534:65534 "$gws" "$WORK/home-nobody"
		fi
		cd "$gws"
		for mode in read-only workspace-write; do
			hm=$WORK/home
			[ "$who" = root ] || hm=$WORK/home-nobody
			argv=$(HOME=$hm "${as[@]}" "$WARD" confine --json \
				-w "$gws" --mode "$mode" --runner landlock -- true |
				python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["argv"]))')
			# The exec floor: any `ward run -- true` execs ward and
			# the command at least once each (whatever runs between).
			cmds=("sh=sh -c true"
				"true=$(command -v true)"
				"version=$WARD --version"
				"llversion=${argv%% *} --version"
				"fork=$FORK $RSS fork true"
				"vfork=$FORK $RSS vfork true"
				"nosv=$NOSV ${argv#* }"
				"launcher=$argv"
				"ward=$WARD run -w $gws --mode $mode --runner landlock -- true")
			if [ -n "$OLD" ]; then
				cmds+=("oldlauncher=$OLD/build/bin/landlock-run ${argv#* }"
					"oldward=$OLD/build/bin/ward run -w $gws --mode $mode --runner landlock -- true")
			fi
			# bench_paired itself as the user (RT priority kept).
			echo "bench/calls.sh: keeper-$who-$mode"
			HOME=$hm "${RT[@]}" "${as[@]}" "$PAIRED" -n "$ROUNDS" -w 10 \
				--json "$WORK/keeper-$who-$mode.json" "${cmds[@]}"
			cp "$WORK/keeper-$who-$mode.json" "$OUT/"
		done
	done
	python3 - "$OUT" <<'PY'
import json, os, sys
print("bench/calls.sh: issue 18, ratios to sh -c true (medians, ms)")
for who in ("root", "nobody"):
    for mode in ("read-only", "workspace-write"):
        p = os.path.join(sys.argv[1], "keeper-%s-%s.json" % (who, mode))
        if not os.path.exists(p):
            continue
        d = json.load(open(p))
        sh = d["sh"]["median_us"]
        print("  %-6s %-15s sh %.2f ms: " % (who, mode, sh / 1000) + ", ".join(
            "%s %.2f" % (k, v["median_us"] / sh) for k, v in d.items() if k != "sh")
            + "; exec floor (version + true) %.2f" % (
                (d["version"]["median_us"] + d["true"]["median_us"]) / sh))
        print("  %-6s %-15s in-process keeper: the launcher's start saved "
              "(landlock-run --version) %.2f, a fork of ward's size paid "
              "(fork - vfork) %.2f" % (who, mode,
                d["llversion"]["median_us"] / sh,
                (d["fork"]["median_us"] - d["vfork"]["median_us"]) / sh))
PY
	cd "$WORK/ws"
fi

cd "$ROOT"
python3 - "$OUT" "$DOC" "${RT[*]:-none}" <<'EOF'
import json, os, re, sys
out, doc, rt = sys.argv[1], sys.argv[2], sys.argv[3]

def load(name):
    p = os.path.join(out, name + ".json")
    return json.load(open(p)) if os.path.exists(p) else None

rows = []
def ratio(what, name, a, b, limit):
    d = load(name)
    if not d:
        rows.append((what, "not measured", "-", f"<= {limit}", "MISS"))
        return
    x, y = d[a]["median_us"], d[b]["median_us"]
    r = x / y
    rows.append((what, f"{a} {x / 1000:.3f} / {b} {y / 1000:.3f}",
                 f"{r:.3f}", f"<= {limit}", "PASS" if r <= limit else "MISS"))

def absolute(what, name, a, limit_ms):
    d = load(name)
    if not d:
        rows.append((what, "not measured", "-", f"<= {limit_ms} ms", "MISS"))
        return
    x = d[a]["median_us"] / 1000
    rows.append((what, f"{x:.1f} ms", "-", f"<= {limit_ms} ms",
                 "PASS" if x <= limit_ms else "MISS"))

for ws in ("ws", "git"):
    for mode in ("read-only", "workspace-write"):
        label = "git workspace" if ws == "git" else "workspace"
        ratio(f"`ward run --runner landlock -- true` vs `sh -c true` ({mode}, {label})",
              f"landlock-{ws}-{mode}", "ward", "sh",
              1.8 if mode == "read-only" else 2.0)
        ratio(f"`ward run --runner bwrap -- true` vs its raw argv ({mode}, {label})",
              f"bwrap-{ws}-{mode}", "ward", "raw", 1.12)
ratio("`ward run -- true` (auto) vs `--runner bwrap`", "auto", "auto", "forced", 1.10)
ratio("`ward run --session` at 50,000 events vs a new session", "session", "big", "new", 1.2)
absolute("5 globs, 100k files, 750 matches: whole call, bwrap", "globs", "bwrap", 100)
absolute("5 globs, 100k files, 750 matches: whole call, landlock", "globs", "landlock", 100)
absolute("1,000 `--` rules planned for Landlock (outside the roots: complement)", "plan", "outside", 5)
absolute("1,000 `--` rules planned for Landlock (inside the roots: mounts)", "plan", "inside", 5)

ratio("`ward run --json` with 1,000,000 bytes of output vs without `--json` (bwrap)",
      "json", "json", "plain", 1.1)
for r in ("bwrap", "landlock"):
    for mode, where in (("read-only", "outside the roots"),
                        ("workspace-write", "inside a root")):
        ratio(f"1,000 `--` rules vs none, {r}, {where} ({mode})",
              f"rules-{r}-{mode}", "r1k", "none", 2.0)

# Part 10: root and uid 65534 in a git workspace, with the floors measured
# in the same rounds.
for who, label in (("root", "root"), ("nobody", "uid 65534")):
    for mode in ("read-only", "workspace-write"):
        name = f"keeper-{who}-{mode}"
        ratio(f"`ward run --runner landlock -- true` vs `sh -c true` ({mode}, git workspace, {label})",
              name, "ward", "sh", 1.8 if mode == "read-only" else 2.0)
        ratio(f"`landlock-run` with ward's argv vs `sh -c true` ({mode}, git workspace, {label})",
              name, "launcher", "sh", 1.6)
        d = load(name)
        if not d:
            continue
        sh = d["sh"]["median_us"]
        floor = d["version"]["median_us"] + d["true"]["median_us"]
        rows.append((f"floor: ward's exec + the command's exec (`ward --version` + `true`) vs `sh -c true` ({mode}, {label})",
                     f"version {d['version']['median_us'] / 1000:.3f} + true {d['true']['median_us'] / 1000:.3f} / sh {sh / 1000:.3f}",
                     f"{floor / sh:.3f}", "-", "info"))
        rows.append((f"floor: the launcher without its supervisor (`nosv`) vs `sh -c true` ({mode}, {label})",
                     f"nosv {d['nosv']['median_us'] / 1000:.3f} / sh {sh / 1000:.3f}",
                     f"{d['nosv']['median_us'] / sh:.3f}", "-", "info"))

def extra(what, name, a, b, per, unit):
    d = load(name)
    if not d:
        rows.append((what, "not measured", "-", "-", "-"))
        return
    x, y = d[a]["median_us"], d[b]["median_us"]
    cost = (x - y) / per
    rows.append((what, f"{a} {x / 1000:.3f} / {b} {y / 1000:.3f}",
                 f"{x / y:.3f}", f"{cost:+.3f} {unit}", "info"))

for mode in ("read-only", "workspace-write"):
    extra(f"bwrap with the Landlock layer inside vs without ({mode})",
          f"inner-{mode}", "inner", "outer", 1000, "ms/call")
extra("landlock-run with the supervisor vs without (`true`)", "sv-true",
      "sv", "nosv", 1000, "ms/call")
extra("judged calls (2,000 chmod + 2,000 connect), supervisor vs none",
      "sv-judged", "sv", "nosv", 4000, "µs/judged call")
extra("plain calls (1,000,000 getppid), filter vs none", "sv-plain", "sv",
      "nosv", 1000000, "µs/plain call")
extra("`ward run --mode danger-full-access -- true` (kept) vs `sh -c true`",
      "danger", "ward", "sh", 1000, "ms/call")
extra("the keeper of an unconfined call (`landlock-run --unconfined`) vs `/bin/true`",
      "danger", "keeper", "true", 1000, "ms/call")
extra("the floor of `--json`'s capture: 1,000,000 bytes through a pipe into a reader vs to /dev/null",
      "json", "pipe1", "pipe0", 1000, "ms/call")
d = load("json")
if d:
    hop = d["pipe1"]["median_us"] - d["pipe0"]["median_us"]
    x, y = d["json"]["median_us"], d["plain"]["median_us"]
    rows.append(("`ward run --json` vs without, less the pipe's floor (the row above)",
                 f"json {x / 1000:.3f} - hop {hop / 1000:.3f} / plain {y / 1000:.3f}",
                 f"{(x - hop) / y:.3f}", f"{(x - y - hop) / 1000:+.3f} ms/call", "info"))
for r in ("bwrap", "landlock"):
    for mode in ("read-only", "workspace-write"):
        extra(f"10,000 `--` rules vs none, {r} ({mode})",
              f"rules-{r}-{mode}", "r10k", "none", 10000, "µs/rule")
# The floor (bench/bench_rulefloor.c): one mount(2) per hidden file in a
# private mount namespace, against the namespace alone for bwrap (its call
# without rules has one) and against no namespace for Landlock (its has
# none); for Landlock outside the roots also the complement, one
# landlock_add_rule per entry beside the hidden ones (the cheaper counts).
for r in ("bwrap", "landlock"):
    for mode in ("read-only", "workspace-write"):
        name = f"rules-{r}-{mode}"
        base = "fns" if r == "bwrap" else "fnone"
        extra(f"floor of 1,000 hidden files, {r} ({mode}): a mount(2) each",
              name, "fm1k", base, 1000, "µs/rule")
        extra(f"floor of 1,000 hidden files, {r} ({mode}): open_tree + move_mount each",
              name, "fmfd1k", base, 1000, "µs/rule")
        d = load(name)
        if r == "landlock" and mode == "read-only":
            extra(f"floor of 1,000 hidden files, {r} ({mode}): the complement "
                  "(a Landlock rule per entry beside them)",
                  name, "fc1k", base, 1000, "µs/rule")
        if not d:
            continue
        m = lambda k: d[k]["median_us"]
        floor, how = m("fm1k") - m(base), "mounts"
        if "fc1k" in d and m("fc1k") - m(base) < floor:
            floor, how = m("fc1k") - m(base), "complement"
        x, y = m("r1k"), m("none")
        rows.append((f"1,000 `--` rules vs none, {r} ({mode}), if ward paid only "
                     f"the floor ({how}); limit column: ward's part above it",
                     f"none {y / 1000:.3f} + floor {floor / 1000:.3f} / none {y / 1000:.3f}",
                     f"{(y + floor) / y:.3f}",
                     f"{(x - y - floor) / 1000:+.3f} ms/call", "info"))

print()
for r in rows:
    print(f"  {r[4]:<4} {r[2]:>6}  {r[3]:<10} {r[0]}  ({r[1]})")
if not doc:
    sys.exit(0)
L = ["<!-- calls:begin (generated by bench/calls.sh; edits here are overwritten) -->",
     "", "## Per-call targets (generated)", "",
     f"Interleaved paired rounds (bench/bench_paired.c), real-time priority: {rt}.",
     "Rows marked info have no target: their limit column is the cost per unit.", "",
     "| target | medians (ms) | ratio | limit | verdict |", "| --- | --- | --- | --- | --- |"]
for what, m, r, lim, v in rows:
    L.append(f"| {what} | {m} | {r} | {lim} | **{v}** |")
L += ["", "<!-- calls:end -->", ""]
section = "\n".join(L)
text = open(doc).read() if os.path.exists(doc) else "# ward — benchmarks\n\n"
m = re.search(r"<!-- calls:begin.*?<!-- calls:end -->\n?", text, re.S)
text = text[:m.start()] + section + text[m.end():] if m else text.rstrip("\n") + "\n\n" + section
open(doc + ".tmp", "w").write(text)
os.replace(doc + ".tmp", doc)
print(f"bench/calls.sh: wrote {doc}")
EOF
