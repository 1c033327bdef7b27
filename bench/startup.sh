#!/bin/bash
# bench/startup.sh — what each way of linking ward costs at start-up
# (`make bench` runs it; not part of `make check`).
#
# Builds ward three ways from this tree, each in its own build directory
# under build/bench-link/ (make B=… WARD_LINK=…):
#   static   glibc, static-pie, Debian's own archives (the default build)
#   dynamic  glibc, against the shared libraries
#   musl     static musl, libraries from scripts/musl-deps.sh (only when
#            build/musl/prefix exists or BENCH_MUSL=1: it builds them from
#            Debian's source packages)
# and the launcher two ways: landlock-run as shipped (static musl) and the
# same source linked statically against glibc. Then it times, with
# bench_paired (every command once per round, in an order that rotates
# from round to round, so a burst of load hits every command alike; under
# `chrt -f 50` when that is allowed), `sh -c true` as the yardstick and,
# for each build, `ward --version` (start-up alone), `ward run --runner
# landlock -- true` and `ward run --runner bwrap -- true`, plus the two
# launchers. Prints a table and rewrites the generated section of
# docs/BENCHMARKS.md between its "startup:begin" and "startup:end" markers.
#
# Knobs: BENCH_STARTUP_ROUNDS=300, BENCH_MUSL=1 (build the musl libraries
# if missing), BENCH_DOC=docs/BENCHMARKS.md (empty: print only).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ROUNDS=${BENCH_STARTUP_ROUNDS:-300}
DOC=${BENCH_DOC-docs/BENCHMARKS.md}
OUT=$ROOT/build/bench-link
CC=${CC:-cc}
mkdir -p "$OUT"

die() {
	echo "bench/startup.sh: $*" >&2
	exit 1
}

links="static dynamic"
if [ -e build/musl/prefix/SOURCES ] || [ "${BENCH_MUSL:-}" = 1 ]; then
	links="$links musl"
fi
for l in $links; do
	echo "bench/startup.sh: building ward (WARD_LINK=$l)"
	make -s B="$OUT/$l" WARD_LINK="$l" WARD_MUSL_DIR="$ROOT/build/musl" \
		"$OUT/$l/bin/ward" "$OUT/$l/bin/landlock-run" \
		"$OUT/$l/bin/ward-bridge" >"$OUT/$l.build.log" 2>&1 ||
		die "the $l build failed (see $OUT/$l.build.log)"
done
# The launcher linked with glibc, for comparison only.
"$CC" -std=c11 -D_GNU_SOURCE -Wall -Os -static -Isrc \
	-o "$OUT/landlock-run-glibc" src/launcher/landlock-run.c \
	src/util/landlock.c src/util/supervise.c src/util/hide.c \
	src/util/util.c || die "cannot link landlock-run with glibc"
"$CC" -std=c11 -D_GNU_SOURCE -O2 -o "$OUT/bench_paired" \
	bench/bench_paired.c || die "cannot build bench_paired"

cmds=("sh=sh -c true")
for l in $links; do
	w=$OUT/$l/bin/ward
	cmds+=("$l:version=$w --version"
		"$l:landlock=$w run --runner landlock -- true"
		"$l:bwrap=$w run --runner bwrap -- true")
done
cmds+=("launcher:musl=$OUT/static/bin/landlock-run --ro / --rw /dev/null -- true"
	"launcher:glibc=$OUT/landlock-run-glibc --ro / --rw /dev/null -- true")

PRIO=()
chrt -f 50 true 2>/dev/null && PRIO=(chrt -f 50)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench/startup.sh: ${#cmds[@]} commands, $ROUNDS rounds" \
	"${PRIO[*]:-(no chrt)}, load $LOAD0"
"${PRIO[@]}" "$OUT/bench_paired" -n "$ROUNDS" -w 20 --json "$OUT/startup.json" \
	"${cmds[@]}" || die "bench_paired failed"
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# The table (and the page).
LINKS=$links LOAD0=$LOAD0 LOAD1=$LOAD1 ROUNDS=$ROUNDS PRIO="${PRIO[*]:-}" \
	DOC=$DOC python3 - "$OUT/startup.json" <<'PY'
import json, os, re, subprocess, sys, time

r = json.load(open(sys.argv[1]))
links = os.environ["LINKS"].split()
sh = r["sh"]["median_us"]
what = {
    "static": "glibc, static-pie, Debian's archives (**default**)",
    "dynamic": "glibc, dynamic",
    "musl": "musl, static, libraries built from source (opt-in)",
}
def ms(us):
    return f"{us / 1000:.3f}"
def ratio(us):
    return f"{us / sh:.2f}"
L = []
L.append("## Start-up by build (generated)")
L.append("")
L.append(f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
         f"`bench/startup.sh`, {os.environ['ROUNDS']} interleaved rounds "
         f"(bench_paired){', under ' + os.environ['PRIO'] if os.environ['PRIO'] else ''}")
L.append(f"- load average before / after: {os.environ['LOAD0']} / "
         f"{os.environ['LOAD1']} (2 CPUs)")
L.append(f"- yardstick: `sh -c true`, median {ms(sh)} ms")
L.append("")
L.append("| build | `ward --version` ms (× sh) | `ward run --runner landlock -- true` ms (× sh) | `ward run --runner bwrap -- true` ms (× sh) |")
L.append("| --- | --- | --- | --- |")
for l in links:
    row = [what.get(l, l)]
    for k in ("version", "landlock", "bwrap"):
        m = r[f"{l}:{k}"]["median_us"]
        row.append(f"{ms(m)} ({ratio(m)})")
    L.append("| " + " | ".join(row) + " |")
L.append("")
L.append("| launcher | `landlock-run --ro / --rw /dev/null -- true` ms (× sh) |")
L.append("| --- | --- |")
for k, name in (("musl", "static musl (as shipped)"),
                ("glibc", "static glibc (for comparison)")):
    m = r[f"launcher:{k}"]["median_us"]
    L.append(f"| {name} | {ms(m)} ({ratio(m)}) |")
L.append("")
L.append("p10 / p90 (µs) of every command: " + ", ".join(
    f"{k} {v['p10_us']}/{v['p90_us']}" for k, v in r.items()) + ".")
text = "\n".join(L)
print(text)
doc = os.environ["DOC"]
if doc:
    page = open(doc).read()
    begin = "<!-- startup:begin (generated by bench/startup.sh; edits here are overwritten) -->"
    end = "<!-- startup:end -->"
    if begin not in page or end not in page:
        sys.exit(f"bench/startup.sh: {doc} has no startup markers")
    a = page.index(begin) + len(begin)
    b = page.index(end)
    page = page[:a] + "\n\n" + text + "\n\n" + page[b:]
    open(doc, "w").write(page)
    print(f"bench/startup.sh: wrote {doc}")
PY
