#!/bin/bash
# bench/network.sh — what the network knob costs (docs/BENCHMARKS.md,
# "Network"). Not part of `make check`: figures, never assertions.
#
#   1. per call: `ward run -- true` with --network on (the host's network,
#      what every call had before the knob), off (the default: bwrap's
#      --unshare-net; Landlock's TCP rights and network filter) and an
#      allowlist (a proxy started for the call, its endpoint, ward-bridge
#      inside bwrap), on bwrap and on the Landlock runner: bench_paired,
#      interleaved rounds in a rotating order, medians and their ratios;
#   2. a connection through the proxy against a direct one (latency), and
#      100 MiB through it against direct (throughput): bench_proxy, paired
#      rounds, under chrt -f 50 when allowed.
#
# Knobs: NET_ROUNDS=400 (per-call rounds), NET_PROXY_ARGS="-n 1000 -r 9".
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=$ROOT/build/bench
WARD=$ROOT/build/bin/ward
LIBA=$ROOT/build/lib/libward.a
CC=${CC:-cc}
mkdir -p "$OUT"
LIBS=$(pkg-config --libs jansson libevent_core libevent_extra \
	libevent_pthreads 2>/dev/null ||
	echo -ljansson -levent_extra -levent_pthreads -levent_core)
for name in bench_paired bench_proxy; do
	# shellcheck disable=SC2086  # LIBS is a list of flags
	"$CC" -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc "bench/$name.c" \
		"$LIBA" $LIBS -lpthread -o "$OUT/$name"
done
WS=$(mktemp -d /var/tmp/ward-bench-net.XXXXXX)
trap 'rm -rf "$WS"' EXIT
PRIO=()
if [ "$(id -u)" = 0 ] && chrt -f 50 true 2>/dev/null; then
	PRIO=(chrt -f 50)
fi

run="$WARD run --workspace $WS"
for v in "--runner bwrap" "--runner landlock"; do
	for n in "--network on" "--network off" "--allow-domain localhost"; do
		$run $v $n -- true || {
			echo "bench/network.sh: $run $v $n -- true failed" >&2
			exit 1
		}
	done
done
echo "bench/network.sh: per call, ${NET_ROUNDS:-400} paired rounds"
"$OUT/bench_paired" -n "${NET_ROUNDS:-400}" -w 20 --json "$OUT/network_calls.json" \
	"bwrap_on=$run --runner bwrap --network on -- true" \
	"bwrap_off=$run --runner bwrap --network off -- true" \
	"bwrap_allow=$run --runner bwrap --allow-domain localhost -- true" \
	"landlock_on=$run --runner landlock --network on -- true" \
	"landlock_off=$run --runner landlock --network off -- true" \
	"landlock_allow=$run --runner landlock --allow-domain localhost -- true" |
	tee "$OUT/network_calls.out"
python3 - "$OUT/network_calls.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in ("bwrap", "landlock"):
    on = d[f"{r}_on"]["median_us"]
    for k in ("off", "allow"):
        x = d[f"{r}_{k}"]["median_us"]
        print(f"{r}: {k} vs on: {x} / {on} us = {x / on:.3f}")
PY
echo "bench/network.sh: bench_proxy ${PRIO[*]:-(no chrt)}"
# shellcheck disable=SC2086  # the arguments are a list
"${PRIO[@]}" "$OUT/bench_proxy" ${NET_PROXY_ARGS:--n 1000 -r 9} \
	--bridge "$ROOT/build/bin/ward-bridge" --json "$OUT/proxy.json" |
	tee "$OUT/bench_proxy.out"
