#!/usr/bin/env bats
# scripts/layers.py, the layer check make check runs: on the real tree it
# passes; on small made-up trees it catches each kind of violation it
# claims to (an upward include, a front end reaching past the public API,
# an upward call, a cycle of calls within a layer, also through libward's
# folders, a module the architecture page does not name).

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
LAYERS=$ROOT/scripts/layers.py
B=${WARD_BUILD:-$ROOT/build}

setup() {
	T=$(mktemp -d /var/tmp/ward-layers.XXXXXX)
	mkdir -p "$T/include/ward" "$T/src/util" "$T/src/libward" \
		"$T/src/mcp" "$T/src/acp" "$T/src/cli" "$T/src/launcher" \
		"$T/docs" "$T/b/obj/lib/util" "$T/b/obj/lib/libward" \
		"$T/b/obj/cli/mcp" "$T/b/obj/cli/acp" "$T/b/obj/cli/cli"
	printf '' >"$T/include/ward/pub.h"
	printf '' >"$T/src/libward/internal.h"
	printf 'int u(void);\n' >"$T/src/util/util.h"
	printf '#include "util.h"\nint u(void) { return 0; }\n' >"$T/src/util/util.c"
	printf '#include "ward/pub.h"\nint a(void) { return 1; }\n' >"$T/src/libward/a.c"
	printf 'int m(void) { return 2; }\n' >"$T/src/mcp/m.c"
	printf 'int jr(void);\n' >"$T/src/mcp/jsonrpc.h"
	printf '#include "jsonrpc.h"\nint jr(void) { return 5; }\n' \
		>"$T/src/mcp/jsonrpc.c"
	printf '#include "mcp/jsonrpc.h"\nint p(void) { return jr(); }\n' \
		>"$T/src/acp/p.c"
	printf 'int c(void) { return 3; }\n' >"$T/src/cli/c.c"
	doc
}

teardown() {
	rm -rf "$T"
}

# The architecture page names every module of the made-up tree.
doc() {
	{
		for f in "$T"/src/*/*.c; do
			printf '`%s`\n' "$(basename "$f")"
		done
	} >"$T/docs/ARCHITECTURE.md"
}

# Compile each module of the made-up tree where scripts/layers.py looks (as
# make does: src/libward/runners/bwrap.c to obj/lib/libward/runners/bwrap.o).
objects() {
	local f o
	for f in "$T"/src/util/*.c "$T"/src/libward/*.c "$T"/src/libward/*/*.c; do
		[ -e "$f" ] || continue
		o=$T/b/obj/lib/${f#"$T"/src/}
		mkdir -p "$(dirname "$o")"
		cc -c -I"$T/include" -I"$T/src" -o "${o%.c}.o" "$f"
	done
	for f in "$T"/src/mcp/*.c "$T"/src/acp/*.c "$T"/src/cli/*.c; do
		cc -c -I"$T/include" -I"$T/src" -o \
			"$T/b/obj/cli/$(basename "$(dirname "$f")")/$(basename "${f%.c}").o" "$f"
	done
}

check() {
	run env LAYERS_ROOT="$T" python3 "$LAYERS" "$T/b"
	printf '# %s\n' "$output"
}

@test "layers: the tree itself passes (make check runs this)" {
	[ -d "$B/obj/lib/libward" ] || skip "ward is not built (run make)"
	run python3 "$LAYERS" "$B"
	printf '# %s\n' "$output"
	[ "$status" = 0 ]
	[ "$output" = "layers: ok" ]
}

@test "layers: a clean made-up tree passes" {
	objects
	check
	[ "$status" = 0 ]
	[ "$output" = "layers: ok" ]
}

@test "layers: an include that points up is refused, with its file and line" {
	printf '#include "mcp/m.h"\n' >"$T/src/libward/up.c"
	printf '' >"$T/src/mcp/m.h"
	doc
	objects
	check
	[ "$status" = 1 ]
	[[ "$output" == *"src/libward/up.c:1: src/libward may not include src/mcp/m.h"* ]]
}

@test "layers: a front end may not include libward's internals or mcp's innards" {
	printf '#include "libward/internal.h"\n' >"$T/src/cli/in.c"
	printf '' >"$T/src/mcp/guts.h"
	printf '#include "mcp/guts.h"\n' >"$T/src/cli/guts.c"
	doc
	objects
	check
	[ "$status" = 1 ]
	[[ "$output" == *"src/cli/in.c:1: src/cli may not include src/libward/internal.h"* ]]
	[[ "$output" == *"src/cli/guts.c:1: src/cli may include only mcp.h of src/mcp, not guts.h"* ]]
}

@test "layers: the ACP proxy uses the MCP server's JSON-RPC framing and nothing else of it" {
	printf '' >"$T/src/mcp/mcp_internal.h"
	printf '#include "mcp/mcp_internal.h"\n' >"$T/src/acp/in.c"
	printf 'int m(void);\nint q(void) { return m(); }\n' >"$T/src/acp/q.c"
	printf 'int p(void);\nint r(void) { return p(); }\n' >"$T/src/mcp/r.c"
	doc
	objects
	check
	[ "$status" = 1 ]
	[[ "$output" == *"src/acp/in.c:1: src/acp may include only jsonrpc.h of src/mcp, not mcp_internal.h"* ]]
	[[ "$output" == *"src/acp/q.c uses m of src/mcp/m.c, a layer beside it"* ]]
	[[ "$output" == *"src/mcp/r.c uses p of src/acp/p.c, a layer beside it"* ]]
	[[ "$output" != *"src/acp/p.c"*"jsonrpc"* ]]
}

@test "layers: a call to a higher layer is refused" {
	printf 'int m(void);\nint b(void) { return m(); }\n' >"$T/src/libward/b.c"
	doc
	objects
	check
	[ "$status" = 1 ]
	[[ "$output" == *"src/libward/b.c uses m of src/mcp/m.c, a higher layer"* ]]
}

@test "layers: modules of one layer that call each other in a circle are refused" {
	printf 'int y(void);\nint x(void) { return y(); }\n' >"$T/src/libward/x.c"
	printf 'int z(void);\nint y(void) { return z(); }\n' >"$T/src/libward/y.c"
	printf 'int x(void);\nint z(void) { return x(); }\n' >"$T/src/libward/z.c"
	doc
	objects
	check
	[ "$status" = 1 ]
	[[ "$output" == *"src/libward: the modules x, y, z call each other (a cycle)"* ]]
	# The same circle through libward's folders (modules of one layer).
	mkdir -p "$T/src/libward/plan" "$T/src/libward/run"
	mv "$T/src/libward/y.c" "$T/src/libward/plan/y.c"
	mv "$T/src/libward/z.c" "$T/src/libward/run/z.c"
	rm "$T/b/obj/lib/libward/y.o" "$T/b/obj/lib/libward/z.o"
	printf '`plan/y.c`\n`run/z.c`\n' >>"$T/docs/ARCHITECTURE.md"
	objects
	check
	[ "$status" = 1 ]
	[[ "$output" == *"src/libward: the modules plan/y, run/z, x call each other (a cycle)"* ]]
}

@test "layers: a module the architecture page does not name is refused" {
	printf 'int n(void) { return 4; }\n' >"$T/src/libward/new.c"
	objects
	check
	[ "$status" = 1 ]
	[[ "$output" == *"docs/ARCHITECTURE.md does not name src/libward/new.c"* ]]
}

@test "layers: a runner that calls back into what reads the table is a cycle" {
	mkdir -p "$T/src/libward/runners"
	# plan.c reads the table; the table names the row; the row's
	# operation calls plan.c.
	printf 'int row(void);\nint plan(void) { return row(); }\n' \
		>"$T/src/libward/plan.c"
	printf 'int plan_helper(void);\nint row(void) { return plan_helper(); }\n' \
		>"$T/src/libward/runners/bwrap.c"
	printf 'int plan_helper(void) { return 0; }\n' >>"$T/src/libward/plan.c"
	printf '`plan.c`\n`runners/bwrap.c`\n' >>"$T/docs/ARCHITECTURE.md"
	objects
	check
	[ "$status" = 1 ]
	[[ "$output" == *"src/libward: the modules plan, runners/bwrap call each other (a cycle)"* ]]
	# The same runner calling only below the table passes.
	printf 'int row(void) { return 0; }\n' >"$T/src/libward/runners/bwrap.c"
	objects
	check
	[ "$status" = 0 ]
}

@test "layers: a runner file the architecture page does not name is refused" {
	mkdir -p "$T/src/libward/runners"
	printf 'int r(void) { return 6; }\n' >"$T/src/libward/runners/new.c"
	objects
	check
	[ "$status" = 1 ]
	[[ "$output" == *"docs/ARCHITECTURE.md does not name src/libward/runners/new.c"* ]]
	printf '`runners/new.c`\n' >>"$T/docs/ARCHITECTURE.md"
	check
	[ "$status" = 0 ]
}
