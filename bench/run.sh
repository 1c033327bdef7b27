#!/bin/bash
# bench/run.sh — ward's benchmarks (`make bench`; not part of `make check`).
#
# Builds every bench/bench_*.c against build/lib/libward.a, measures the
# CLI side by side with hyperfine (all commands in ONE invocation, medians),
# runs bench_spawn (libward spawn cost, probe cost), bench_proxy (the network
# proxy: connect latency and throughput against direct, under chrt -f 50
# when it is allowed) and the other bench programs, prints a results table
# and rewrites the generated section of docs/BENCHMARKS.md (between its
# "bench:begin" and "bench:end" markers).
#
# Knobs (environment):
#   BENCH_RUNS=300     hyperfine runs per command
#   BENCH_WARMUP=20    hyperfine warm-up runs per command
#   BENCH_N=2000       bench_spawn iterations (each runs every variant once)
#   BENCH_PROXY_ARGS="-n 1000 -r 9"   bench_proxy's rounds
#   BENCH_DOC=docs/BENCHMARKS.md   where to write; BENCH_DOC= (empty): don't
#
# Needs: the built tree (make all), hyperfine, python3; strace optional
# (counts the processes a provider's probe spawns).
#
# Exit status: 0 when everything ran (a missed target is reported, not an
# error), 1 when a measurement could not be made, 2 when a tool is missing.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD

RUNS=${BENCH_RUNS:-300}
WARMUP=${BENCH_WARMUP:-20}
N=${BENCH_N:-2000}
DOC=${BENCH_DOC-docs/BENCHMARKS.md}

WARD=$ROOT/build/bin/ward
LAUNCHER=$ROOT/build/bin/landlock-run
LIBA=$ROOT/build/lib/libward.a
OUT=$ROOT/build/bench
CC=${CC:-cc}

die() {
	echo "bench/run.sh: $*" >&2
	exit "${EXIT:-1}"
}

for tool in hyperfine python3 "$CC"; do
	command -v "$tool" >/dev/null ||
		EXIT=2 die "'$tool' not found (Debian: apt-get install" \
			"hyperfine python3 gcc)"
done
for f in "$WARD" "$LAUNCHER" "$LIBA"; do
	[ -e "$f" ] || EXIT=2 die "$f is missing; run 'make' (or 'make bench')"
done

mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.out "$OUT"/*.err "$OUT"/*.strace "$OUT"/*.rc

# How busy the machine is: /proc/stat now and at the end, minus our own CPU
# time, gives what other processes used while we measured.
STAT0=$(head -1 /proc/stat)
T0=$(date +%s.%N)

# --- build every bench program ---------------------------------------------

LIBS=$(pkg-config --libs jansson yaml-0.1 libevent_core libevent_extra \
	libevent_pthreads 2>/dev/null ||
	echo -ljansson -lyaml -levent_extra -levent_pthreads -levent_core)
BENCHES=()
for src in bench/bench_*.c; do
	[ -e "$src" ] || continue
	name=$(basename "$src" .c)
	echo "bench/run.sh: building $name"
	# shellcheck disable=SC2086  # LIBS is a list of flags
	if "$CC" -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc "$src" "$LIBA" \
		$LIBS -lpthread -o "$OUT/$name" 2>"$OUT/$name.build.err"; then
		BENCHES+=("$name")
	else
		echo "bench/run.sh: $name did not compile (see" \
			"$OUT/$name.build.err)" >&2
		rm -f "$OUT/$name"
	fi
done
[ -x "$OUT/bench_spawn" ] || die "bench_spawn did not compile:" \
	"$(head -5 "$OUT/bench_spawn.build.err")"

# --- sanity: every command must work before it is timed ---------------------

"$WARD" run --runner bwrap -- true || die "ward run --runner bwrap failed"
"$WARD" run --runner landlock -- true ||
	die "ward run --runner landlock failed"
"$LAUNCHER" --ro / --rw /dev/null -- true || die "landlock-run failed"

# The raw bwrap command: exactly the argv ward confine prints.
"$WARD" confine --runner bwrap --json -- true >"$OUT/confine.json" ||
	die "ward confine --runner bwrap --json failed"
RAW_BWRAP=$(python3 -c '
import json, shlex, sys
print(" ".join(shlex.quote(a) for a in json.load(open(sys.argv[1]))["argv"]))
' "$OUT/confine.json")
# shellcheck disable=SC2086  # RAW_BWRAP is a quoted command line
eval "$RAW_BWRAP" || die "raw bwrap failed: $RAW_BWRAP"

# --- 1. the CLI, side by side ------------------------------------------------

echo "bench/run.sh: hyperfine, $RUNS runs each (warm-up $WARMUP)"
hyperfine -N --warmup "$WARMUP" --runs "$RUNS" --style basic \
	--export-json "$OUT/hyperfine.json" \
	-n sh_c_true 'sh -c true' \
	-n ward_bwrap "$WARD run --runner bwrap -- true" \
	-n raw_bwrap "$RAW_BWRAP" \
	-n ward_landlock "$WARD run --runner landlock -- true" \
	-n raw_landlock_run "$LAUNCHER --ro / --rw /dev/null -- true" \
	-n exec_true '/bin/true' \
	-n ward_auto "$WARD run -- true" \
	>"$OUT/hyperfine.out" 2>&1 ||
	die "hyperfine failed: $(tail -5 "$OUT/hyperfine.out")"

# --- 2. libward: spawn and probe ---------------------------------------------

echo "bench/run.sh: bench_spawn, N=$N"
"$OUT/bench_spawn" -n "$N" --launcher "$LAUNCHER" --workspace "$ROOT" \
	--json "$OUT/spawn.json" | tee "$OUT/bench_spawn.out" ||
	die "bench_spawn failed"

# Count the processes one provider starts for 1 select and for 100.
if command -v strace >/dev/null; then
	for k in 1 100; do
		strace -f -c -e trace=execve,clone,clone3,fork,vfork \
			-o "$OUT/select$k.strace" "$OUT/bench_spawn" \
			--selects "$k" --launcher "$LAUNCHER" >/dev/null ||
			die "strace of bench_spawn --selects $k failed"
	done
fi

# --- 3. the network proxy ------------------------------------------------------

# Real-time priority keeps the other load of the machine off the measured
# threads (the rounds are interleaved and paired as well).
PROXY_PRIO=()
if [ "$(id -u)" = 0 ] && command -v chrt >/dev/null &&
	chrt -f 50 true 2>/dev/null; then
	PROXY_PRIO=(chrt -f 50)
fi
if [ -x "$OUT/bench_proxy" ]; then
	echo "bench/run.sh: bench_proxy ${PROXY_PRIO[*]:-(no chrt)}"
	# shellcheck disable=SC2086  # the arguments are a list
	"${PROXY_PRIO[@]}" "$OUT/bench_proxy" ${BENCH_PROXY_ARGS:-} \
		--bridge "$ROOT/build/bin/ward-bridge" --json "$OUT/proxy.json" |
		tee "$OUT/bench_proxy.out" || die "bench_proxy failed"
fi

# --- 4. the other bench programs ---------------------------------------------

# Not run here: bench_spawn and bench_proxy have sections of their own;
# bench_paired, bench_judged and bench_fork are tools bench/calls.sh runs.
NOT_OTHERS=" bench_spawn bench_proxy bench_paired bench_judged bench_fork "
for name in "${BENCHES[@]}"; do
	[[ $NOT_OTHERS == *" $name "* ]] && continue
	echo "bench/run.sh: $name"
	if timeout 900 "$OUT/$name" >"$OUT/$name.out" 2>"$OUT/$name.err"; then
		echo 0 >"$OUT/$name.rc"
	else
		echo $? >"$OUT/$name.rc"
	fi
	cat "$OUT/$name.out"
done

# --- 5. the report -------------------------------------------------------------

STAT1=$(head -1 /proc/stat)
T1=$(date +%s.%N)
# "times": this shell's user/sys, then its children's; we want the children
# (not in a command substitution: a subshell has no children of its own).
times >"$OUT/times.txt"
OUR_CPU=$(sed -n 2p "$OUT/times.txt")

MACHINE_NPROC=$(nproc) MACHINE_KERNEL=$(uname -r) \
	MACHINE_CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo |
		head -1) \
	MACHINE_DATE=$(date -u '+%Y-%m-%d %H:%M UTC') \
	MACHINE_LOAD=$(cut -d' ' -f1-3 /proc/loadavg) \
	V_HYPERFINE=$(hyperfine --version) \
	V_BWRAP=$(bwrap --version 2>/dev/null || echo "bwrap: none") \
	V_WARD=$("$WARD" --version) \
	V_CC=$("$CC" --version | head -1) \
	LANDLOCK_ABI=$("$WARD" probe --json 2>/dev/null | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["landlock"]["abi"])' \
		2>/dev/null || echo "?") \
	RUNS=$RUNS WARMUP=$WARMUP N=$N OUT=$OUT DOC=$DOC \
	RAW_BWRAP=$RAW_BWRAP BENCHES="${BENCHES[*]}" NOT_OTHERS=$NOT_OTHERS \
	PROXY_PRIO="${PROXY_PRIO[*]:-none (interleaved rounds only)}" \
	STAT0=$STAT0 STAT1=$STAT1 T0=$T0 T1=$T1 OUR_CPU=$OUR_CPU \
	python3 - <<'EOF'
import glob, json, os, re, sys

env = os.environ
out = env["OUT"]
hf = {r["command"]: r for r in
      json.load(open(f"{out}/hyperfine.json"))["results"]}
sp = json.load(open(f"{out}/spawn.json"))


def med(name):
    return hf[name]["median"] * 1e3  # ms


def strace_counts(k):
    """Processes created and successful execve calls under strace -c."""
    path = f"{out}/select{k}.strace"
    if not os.path.exists(path):
        return None
    procs = execs = 0
    for line in open(path):
        f = line.split()
        if len(f) < 5 or not f[-1].isidentifier():
            continue
        name = f[-1]
        try:
            calls = int(f[3])
            errors = int(f[4]) if len(f) == 6 else 0
        except ValueError:
            continue
        if name in ("clone", "clone3", "fork", "vfork"):
            procs += calls - errors
        elif name == "execve":
            execs += calls - errors
    return procs, execs


rows = []  # (what, a, b, ratio, target, verdict)


def busy_seconds(line):
    f = [int(x) for x in line.split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    # user nice system idle iowait irq softirq steal
    return (f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] if len(f) > 7 else 0)) / hz


def seconds(t):  # "1m2.345s" -> 62.345
    m, s = t.rstrip("s").split("m")
    return int(m) * 60 + float(s)


wall = float(env["T1"]) - float(env["T0"])
ours = sum(seconds(t) for t in env["OUR_CPU"].split())
others = max(0.0, busy_seconds(env["STAT1"]) - busy_seconds(env["STAT0"]) -
             ours)
noise = (f"{others:.1f} CPU-seconds not accounted to the benchmarks "
         f"(other processes, kernel threads) during the {wall:.0f} s run "
         f"({100 * others / wall:.0f}% of one CPU; the benchmarks used "
         f"{ours:.1f})")


def target(what, a_name, a, b_name, b, limit):
    r = a / b
    rows.append((what, f"{a_name} {a:.3f}", f"{b_name} {b:.3f}", r,
                 f"<= {limit:.2f}", "PASS" if r <= limit else "MISS"))


pr = sp["probe"]
target("libward Landlock spawn (through landlock-run) vs libward unconfined spawn",
       "landlock", sp["ward_landlock"]["median_us"] / 1e3,
       "unconfined", sp["ward_unconfined"]["median_us"] / 1e3, 1.40)
target("libward Landlock spawn (through landlock-run) vs raw fork+execve",
       "landlock", sp["ward_landlock"]["median_us"] / 1e3,
       "fork+exec", sp["raw_fork_exec"]["median_us"] / 1e3, 1.40)
target("`ward run --runner landlock -- true` vs `sh -c true`",
       "ward", med("ward_landlock"), "sh", med("sh_c_true"), 1.8)
target("`ward run --runner bwrap -- true` vs raw bwrap, same profile",
       "ward", med("ward_bwrap"), "bwrap", med("raw_bwrap"), 1.12)

c1, c100 = strace_counts(1), strace_counts(100)
once = pr["cached_child_cpu_us"] == 0 and \
    pr["cached_median_us"] < 0.01 * pr["first_median_us"]
if c1 is not None:
    once = once and c1 == c100
    counted = (f"processes started by 1 select: {c1[0]}, by 100 selects: "
               f"{c100[0]} (execs {c1[1]} / {c100[1]}, incl. bench_spawn)")
else:
    counted = "strace not installed: processes not counted"
rows.append(("probing paid once per provider (process)",
             f"1st select {pr['first_median_us'] / 1e3:.3f}",
             f"cached {pr['cached_median_us'] * 1e3:.0f} ns", None,
             "no 2nd probe", "PASS" if once else "MISS"))

px = None
if os.path.exists(f"{out}/proxy.json"):
    px = json.load(open(f"{out}/proxy.json"))
    lat = px["latency"]
    for k, label in (("connect", "HTTP CONNECT"), ("bridge",
                                                   "ward-bridge + CONNECT")):
        if k not in lat:
            continue
        added = (lat[k]["median_us"] - lat["direct"]["median_us"]) / 1e3
        rows.append((f"proxy: added connect latency, {label} (median)",
                     f"proxied {lat[k]['median_us'] / 1e3:.3f}",
                     f"direct {lat['direct']['median_us'] / 1e3:.3f}", added,
                     "<= 1.00 ms added", "PASS" if added <= 1.0 else "MISS"))
    for k, label in (("connect", "CONNECT"), ("bridge",
                                              "ward-bridge + CONNECT")):
        if k not in px["ratio"]:
            continue
        r = px["ratio"][k]
        mib = px["bytes"] / 1048576
        rows.append((f"proxy: {mib:.0f} MiB throughput through {label} vs "
                     "direct (paired rounds)",
                     f"proxied {mib / px['throughput_s'][k]:.0f} MiB/s",
                     f"direct {mib / px['throughput_s']['direct']:.0f} MiB/s",
                     r, ">= 0.90", "PASS" if r >= 0.90 else "MISS"))

# --- the console table ------------------------------------------------------
cli_names = [
    ("sh_c_true", "`sh -c true` (unconfined)"),
    ("exec_true", "`/bin/true` (one exec, unconfined)"),
    ("ward_landlock", "`ward run --runner landlock -- true`"),
    ("raw_landlock_run", "`landlock-run --ro / --rw /dev/null -- true`"),
    ("ward_bwrap", "`ward run --runner bwrap -- true`"),
    ("raw_bwrap", "`bwrap` + ward confine's argv (raw)"),
    ("ward_auto", "`ward run -- true` (auto: probe + bwrap)"),
]
spawn_names = [
    ("raw_fork_exec", "fork+execve+waitpid /bin/true"),
    ("raw_posix_spawn", "posix_spawn /bin/true (vfork)"),
    ("ward_unconfined", "libward danger-full-access (bare spawn)"),
    ("ward_landlock", "libward landlock (landlock-run), read-only"),
]

print()
print(f"CLI (hyperfine -N, {env['RUNS']} runs, medians in ms)")
for k, label in cli_names:
    r = hf[k]
    print(f"  {label.replace('`', ''):<60} {med(k):8.3f}  "
          f"(min {r['min'] * 1e3:.3f})")
print(f"libward spawn (bench_spawn, N={sp['n']} interleaved, medians in ms)")
for k, label in spawn_names:
    print(f"  {label:<60} {sp[k]['median_us'] / 1e3:8.3f}")
print(f"  {'probe: first select on a fresh provider (' + pr['runner'] + ')':<60}"
      f" {pr['first_median_us'] / 1e3:8.3f}")
print(f"  {'probe: a cached select':<60} {pr['cached_median_us'] / 1e3:8.6f}")
print(f"  {counted}")
print(f"  machine: {noise}")
print("Targets")
for what, a, b, r, t, v in rows:
    rs = f"{r:6.3f}" if r is not None else "     -"
    print(f"  {v:<4}  {rs}  {t:<12} {what}")

# --- the document -------------------------------------------------------------
doc = env.get("DOC")
if not doc:
    sys.exit(0)

L = []
L.append("<!-- bench:begin (generated by bench/run.sh; edits here are "
         "overwritten) -->")
L.append("")
L.append("## Results (generated)")
L.append("")
L.append(f"- date: {env['MACHINE_DATE']}")
L.append(f"- machine: {env['MACHINE_NPROC']} CPUs ({env['MACHINE_CPU']}), "
         f"kernel {env['MACHINE_KERNEL']}, Landlock ABI "
         f"{env['LANDLOCK_ABI']}, load average at the end "
         f"{env['MACHINE_LOAD']}")
L.append(f"- noise: {noise}")
L.append(f"- tools: {env['V_WARD']}, {env['V_BWRAP']}, {env['V_HYPERFINE']},"
         f" {env['V_CC']}")
L.append("")
L.append("### Targets")
L.append("")
L.append("| target | measured (ms, medians) | ratio | limit | verdict |")
L.append("| --- | --- | --- | --- | --- |")
for what, a, b, r, t, v in rows:
    rs = f"{r:.3f}" if r is not None else "-"
    L.append(f"| {what} | {a} / {b} | {rs} | {t} | **{v}** |")
L.append("")
L.append(f"### CLI: one hyperfine invocation (`-N --warmup {env['WARMUP']} "
         f"--runs {env['RUNS']}`)")
L.append("")
L.append("| command | median ms | mean ms | min ms | σ ms | × `sh -c true` |")
L.append("| --- | --- | --- | --- | --- | --- |")
base = med("sh_c_true")
for k, label in cli_names:
    r = hf[k]
    L.append(f"| {label} | {med(k):.3f} | {r['mean'] * 1e3:.3f} | "
             f"{r['min'] * 1e3:.3f} | {r['stddev'] * 1e3:.3f} | "
             f"{med(k) / base:.2f} |")
L.append("")
L.append("Raw bwrap command (from `ward confine --runner bwrap --json -- "
         "true`):")
L.append("")
L.append("```")
L.append(env["RAW_BWRAP"])
L.append("```")
L.append("")
L.append(f"### libward spawn: bench_spawn (N={sp['n']}, interleaved)")
L.append("")
L.append("| variant | median µs | p10 µs | p90 µs | × fork+execve |")
L.append("| --- | --- | --- | --- | --- |")
rf = sp["raw_fork_exec"]["median_us"]
for k, label in spawn_names:
    s = sp[k]
    L.append(f"| {label} | {s['median_us']:.1f} | {s['p10_us']:.1f} | "
             f"{s['p90_us']:.1f} | {s['median_us'] / rf:.3f} |")
L.append("")
L.append(f"### Probing (platform chain; {pr['providers']} fresh providers, "
         f"then {pr['selects']} selects on one)")
L.append("")
L.append(f"- first `ward_provider_select()` on a fresh provider (runs the "
         f"functional probe, chose {pr['runner']}, {pr['enforcement']}): "
         f"median {pr['first_median_us']:.0f} µs (p10 "
         f"{pr['first_p10_us']:.0f}, p90 {pr['first_p90_us']:.0f}); "
         f"children's CPU time {pr['first_child_cpu_us']:.0f} µs")
L.append(f"- a cached select: median {pr['cached_median_us'] * 1e3:.0f} ns;"
         f" {pr['selects']} selects took {pr['cached_total_us']:.1f} µs in "
         f"all and their children used {pr['cached_child_cpu_us']:.0f} µs "
         f"of CPU")
L.append(f"- {counted}")
L.append("")
if px:
    lat = px["latency"]
    names = {"direct": "direct TCP connect + 1-byte echo",
             "connect": "through the proxy: HTTP CONNECT",
             "socks5": "through the proxy: SOCKS5 (by name)",
             "bridge": "through ward-bridge + the proxy: CONNECT"}
    L.append(f"### Network proxy: bench_proxy (priority: "
             f"{env['PROXY_PRIO']})")
    L.append("")
    L.append(f"Connect latency, {px['n']} interleaved rounds (socket() until "
             "one byte went to an echo server and back):")
    L.append("")
    L.append("| path | median µs | p10 µs | p90 µs | added (median) µs |")
    L.append("| --- | --- | --- | --- | --- |")
    for k in ("direct", "connect", "socks5", "bridge"):
        if k in lat:
            L.append(f"| {names[k]} | {lat[k]['median_us']:.1f} | "
                     f"{lat[k]['p10_us']:.1f} | {lat[k]['p90_us']:.1f} | "
                     f"{lat[k]['median_us'] - lat['direct']['median_us']:.1f} |")
    L.append("")
    mib = px["bytes"] / 1048576
    L.append(f"Throughput, {px['rounds']} paired rounds of {mib:.0f} MiB "
             "(median; the ratio is the median of each round's "
             "direct/proxied time):")
    L.append("")
    L.append("| path | MiB/s | of direct | CPU ms (all threads) |")
    L.append("| --- | --- | --- | --- |")
    tp = px["throughput_s"]
    L.append(f"| direct | {mib / tp['direct']:.0f} | 1.00 | "
             f"{px['cpu_s']['direct'] * 1e3:.0f} |")
    L.append(f"| through the proxy (CONNECT) | {mib / tp['connect']:.0f} | "
             f"{px['ratio']['connect']:.2f} | "
             f"{px['cpu_s']['connect'] * 1e3:.0f} |")
    if "bridge" in tp:
        L.append(f"| through ward-bridge + the proxy | "
                 f"{mib / tp['bridge']:.0f} | {px['ratio']['bridge']:.2f} | - |")
    L.append("")
    pc = px["per_call_us"]
    L.append(f"Per call (median): a proxy (new + start + stop + free) "
             f"{pc['proxy']:.0f} µs; an endpoint on a running proxy (open + "
             f"close) {pc['endpoint']:.0f} µs.")
    L.append("")
others = [b for b in env["BENCHES"].split()
          if b not in env["NOT_OTHERS"].split()]
L.append("### Other bench programs")
L.append("")
if not others:
    L.append("(none built)")
for b in others:
    rc = open(f"{out}/{b}.rc").read().strip()
    L.append(f"`{b}` (exit {rc}):")
    L.append("")
    L.append("```")
    L.extend(open(f"{out}/{b}.out").read().rstrip("\n").splitlines())
    L.append("```")
    L.append("")
for e in sorted(glob.glob(f"{out}/bench_*.build.err")):
    b = os.path.basename(e)[:-len(".build.err")]
    if b not in env["BENCHES"].split():
        L.append(f"`{b}` did not compile:")
        L.append("")
        L.append("```")
        L.extend(open(e).read().splitlines()[:10])
        L.append("```")
        L.append("")
L.append("<!-- bench:end -->")
section = "\n".join(L) + "\n"

if os.path.exists(doc):
    text = open(doc).read()
else:
    text = "# ward — benchmarks\n\nRun `make bench`.\n\n"
m = re.search(r"<!-- bench:begin.*?<!-- bench:end -->\n?", text, re.S)
if m:
    text = text[:m.start()] + section + text[m.end():]
else:
    text = text.rstrip("\n") + "\n\n" + section
with open(doc + ".tmp", "w") as f:
    f.write(text)
os.replace(doc + ".tmp", doc)
print(f"bench/run.sh: wrote {doc}")
EOF
