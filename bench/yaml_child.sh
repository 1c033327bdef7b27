#!/bin/bash
# bench/yaml_child.sh — what parsing ward.yml in a child process costs a
# dynamic (glibc) ward (see docs/CONFIG.md, "A parser crash cannot disable
# ward"). Not part of `make check` or `make bench`.
#
# Builds two dynamic wards from this tree: build/bench-yaml/child (as
# shipped: libfyaml is the system's, so every file is parsed in a child)
# and build/bench-yaml/inproc (compiled as if libfyaml were our patched
# copy: parsed in-process; for this measurement only). Then, in a workspace
# whose .ward/config.yml is a small project file, runs `ward run -r RUNNER
# -- true` with hyperfine -N, ROUNDS rounds of RUNS runs, the two
# interleaved (alternating which goes first), and prints the medians of
# the round medians and their ratio.
#
# Knobs: ROUNDS=10 RUNS=100 RUNNERS="landlock bwrap"
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-10}
RUNS=${RUNS:-100}
RUNNERS=${RUNNERS:-landlock bwrap}
OUT=build/bench-yaml
ROOT_OUT=$PWD/$OUT

command -v hyperfine >/dev/null || {
	echo "bench/yaml_child.sh: hyperfine not found" >&2
	exit 2
}
make -s B="$OUT/child" WARD_MUSL= "$OUT/child/bin/ward" \
	"$OUT/child/bin/landlock-run" >/dev/null
make -s B="$OUT/inproc" WARD_MUSL= CFLAGS=-DWARD_FYAML_PATCHED \
	"$OUT/inproc/bin/ward" "$OUT/inproc/bin/landlock-run" >/dev/null

WS=$(mktemp -d /var/tmp/ward-bench-yaml.XXXXXX)
trap 'rm -rf "$WS"' EXIT
mkdir -p "$WS/.ward" "$WS/vendor"
cat >"$WS/.ward/config.yml" <<'YAML'
# a project file: it may only narrow
mode: read-only
access:
  - "-- ~/.ssh"
  - "r- ./vendor"
YAML

for r in $RUNNERS; do
	rm -f "$OUT"/r-*.json
	for i in $(seq 1 "$ROUNDS"); do
		order="child inproc"
		[ $((i % 2)) = 0 ] && order="inproc child"
		for v in $order; do
			(cd "$WS" && hyperfine -N --warmup 10 --runs "$RUNS" \
				--export-json "$ROOT_OUT/r-$v-$i.json" \
				"$ROOT_OUT/$v/bin/ward run -r $r -- true") \
				>/dev/null
		done
	done 2>/dev/null
	python3 - "$OUT" "$r" <<'PY'
import glob, json, statistics, sys
out, runner = sys.argv[1], sys.argv[2]
def med(v):
    return statistics.median(
        json.load(open(f))["results"][0]["median"]
        for f in glob.glob(f"{out}/r-{v}-*.json"))
c, p = med("child"), med("inproc")
print(f"{runner}: child {c * 1e3:.3f} ms, in-process {p * 1e3:.3f} ms, "
      f"ratio {c / p:.3f} (+{(c - p) * 1e6:.0f} us)")
PY
done
