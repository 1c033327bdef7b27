#!/usr/bin/env python3
"""scripts/layers.py [BUILD] — the layer check (`make check` runs it).

ward's sources are layered, lowest first:

    src/util       libc only: kernel shims (Landlock, the seccomp
                   supervisor, mount hiding), paths, I/O, hashing; shared
                   by libward and the launchers
    src/libward    the library; include/ward/ is its public face
    src/mcp        the MCP server, on libward's public API
    src/acp        the ACP proxy, beside the MCP server: on libward's
                   public API, and the JSON-RPC framing the two share
                   (src/mcp/jsonrpc.h)
    src/cli        the `ward` program, on libward's public API and the
                   servers' entries (src/mcp/mcp.h, src/acp/acp.h)
    src/launcher   landlock-run and ward-bridge: static, src/util only

Two views of the arrows are checked.

1. Includes: every `#include "…"` is an arrow from the file's folder to the
   folder of the file it names. It may point only to the same folder or to
   one the table below allows; a front end (mcp, acp, cli) may use
   libward only through include/ward/; cli may use src/mcp only through
   mcp.h and src/acp only through acp.h, and acp src/mcp only through
   jsonrpc.h (ENTRY, per folder that includes). (Includes within
   a folder are not judged: a module's internal header including its
   public one is no cycle; the symbols say what calls what.)
2. Symbols (with BUILD, the build directory of `make`): every object file
   that uses a symbol another object defines is an arrow from its module
   to that module (a module is a .c file). An arrow may not point to a
   higher layer, an arrow between the two servers (same rank) only from
   acp to mcp's jsonrpc.c, and the arrows between the modules of one
   folder must not form a cycle (a public header does not hide a cycle:
   render.c calling escalation.c calling render.c is one).

   A folder's subfolders are of its layer: libward's subsystems have
   folders of their own (src/libward/plan/, run/, runners/ — one file per
   runner, and the table —, ...: docs/ARCHITECTURE.md names them all), and
   each is libward, its modules named by their path ("plan/translate",
   "runners/bwrap"). Cycles are looked for across the whole layer, not per
   folder: a runner calling back into what reads the table, or a module
   of one folder calling one of another that calls it back, is a cycle
   like any other. (An include from one of them to another is an include
   within src/libward: not judged.)

3. The page: every module (.c file) is named in docs/ARCHITECTURE.md
   (a subfolder's by its path there: `runners/bwrap.c`, `plan/plan.c`).

Every violation is printed with its file (and line); the exit status is 1
when there is one, 0 when the tree is clean.
"""
import os
import re
import subprocess
import sys

ROOT = os.environ.get("LAYERS_ROOT") or os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))

# folder -> the folders its files may include from (besides itself)
ALLOWED = {
    "src/util": set(),
    "src/libward": {"src/util", "include/ward"},
    "include/ward": set(),
    "src/mcp": {"src/util", "include/ward"},
    "src/acp": {"src/util", "include/ward", "src/mcp"},
    "src/cli": {"src/util", "include/ward", "src/mcp", "src/acp"},
    "src/launcher": {"src/util"},
}
# What a folder may include from another: only these files
# ((includer, included) -> files).
ENTRY = {("src/cli", "src/mcp"): {"mcp.h"},
         ("src/cli", "src/acp"): {"acp.h"},
         ("src/acp", "src/mcp"): {"jsonrpc.h"}}
# The order of the layers that own code (for the symbol arrows). The two
# servers share a rank; between them only these modules may be used
# ((user folder, owner folder) -> owner modules).
RANK = {"src/util": 0, "src/libward": 1, "src/mcp": 2, "src/acp": 2,
        "src/cli": 3}
BESIDE = {("src/acp", "src/mcp"): {"jsonrpc"}}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(path):
    rel = os.path.relpath(path, ROOT)
    for f in ALLOWED:
        if rel.startswith(f + "/"):
            return f
    return None


def resolve(src, name, search):
    """The file an #include "name" in @src refers to, like the compiler."""
    for d in [os.path.dirname(src)] + search:
        p = os.path.normpath(os.path.join(d, name))
        if os.path.exists(p):
            return p
    return None


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, sccs = {}, {}, [], set(), []
    counter = [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sccs


def check_includes(errors):
    search = [os.path.join(ROOT, "include"), os.path.join(ROOT, "src")]
    files = []
    for top in ("src", "include/ward"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for n in names:
                if n.endswith((".c", ".h")):
                    files.append(os.path.join(dirpath, n))
    for f in sorted(files):
        fol = folder_of(f)
        rel = os.path.relpath(f, ROOT)
        if fol is None:
            errors.append(f"{rel}: not in a known layer "
                          f"({', '.join(ALLOWED)})")
            continue
        with open(f, encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(f, m.group(1), search)
                where = f"{rel}:{lineno}"
                if target is None:
                    errors.append(f"{where}: #include \"{m.group(1)}\" "
                                  "names no file of the tree")
                    continue
                tfol = folder_of(target)
                if tfol is None:
                    continue
                if tfol == fol:
                    continue
                if tfol not in ALLOWED[fol]:
                    errors.append(f"{where}: {fol} may not include "
                                  f"{os.path.relpath(target, ROOT)} "
                                  f"({tfol} is not below it)")
                    continue
                entry = ENTRY.get((fol, tfol))
                if entry is not None and os.path.basename(target) not in entry:
                    errors.append(f"{where}: {fol} may include only "
                                  f"{', '.join(sorted(entry))} of {tfol}, "
                                  f"not {os.path.basename(target)}")


def nm(paths, *flags):
    """{path: {symbol}} of every object in @paths, from one nm run (one
    per object took seconds on a loaded machine)."""
    syms = {p: set() for p in paths}
    if not paths:
        return syms
    # -A -P: "path: symbol type [value size]", one line per symbol.
    out = subprocess.run(["nm", "-A", "-P", *flags, *paths],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        path, sep, rest = line.partition(": ")
        if sep and path in syms and rest.split():
            syms[path].add(rest.split()[0])
    return syms


def check_symbols(build, errors):
    objs = {}  # (folder, module) -> object file
    # ward's own objects: the musl build's when ward is static, else the
    # dynamic build's (libward's are always there).
    for subs, fols in ((("obj/musl/lib", "obj/lib"), ("util", "libward")),
                       (("obj/musl/cli", "obj/cli"), ("mcp", "acp", "cli"))):
        for fol in fols:
            cand = [os.path.join(build, s, fol) for s in subs]
            d = next((c for c in cand if os.path.isdir(c)), None)
            if d is None:
                errors.append(f"{cand[-1]}: no objects (run make first)")
                return
            # A folder's subfolders (libward's plan/, runners/, ...) hold
            # modules of the same layer, named by their path:
            # "runners/bwrap".
            for dirpath, _, names in sorted(os.walk(d)):
                sub = os.path.relpath(dirpath, d)
                for n in sorted(names):
                    if n.endswith(".o"):
                        mod = n[:-2] if sub == "." else f"{sub}/{n[:-2]}"
                        objs[("src/" + fol, mod)] = os.path.join(dirpath, n)
    defined, used = {}, {}
    paths = list(objs.values())
    glob_syms = nm(paths, "--defined-only", "-g")
    undef_syms = nm(paths, "-u")
    for key, path in objs.items():
        for sym in glob_syms[path]:
            defined.setdefault(sym, key)
        used[key] = undef_syms[path]
    graph = {}
    for key, syms in used.items():
        for sym in syms:
            owner = defined.get(sym)
            if owner is None or owner == key:
                continue
            if RANK[owner[0]] > RANK[key[0]]:
                errors.append(f"{key[0]}/{key[1]}.c uses {sym} of "
                              f"{owner[0]}/{owner[1]}.c, a higher layer")
                continue
            if (owner[0] != key[0] and RANK[owner[0]] == RANK[key[0]] and
                    owner[1] not in BESIDE.get((key[0], owner[0]), ())):
                errors.append(f"{key[0]}/{key[1]}.c uses {sym} of "
                              f"{owner[0]}/{owner[1]}.c, a layer beside "
                              "it")
                continue
            if owner[0] == key[0]:
                graph.setdefault(key, set()).add(owner)
    for comp in cycles(graph):
        fol = comp[0][0]
        errors.append(f"{fol}: the modules "
                      f"{', '.join(m for _, m in comp)} call each other "
                      "(a cycle)")


def check_doc(errors):
    """Every module of the tree is named in docs/ARCHITECTURE.md."""
    doc_path = os.path.join(ROOT, "docs", "ARCHITECTURE.md")
    with open(doc_path, encoding="utf-8") as fh:
        doc = fh.read()
    for fol in ALLOWED:
        d = os.path.join(ROOT, fol)
        if not fol.startswith("src/") or not os.path.isdir(d):
            continue
        for dirpath, _, names in sorted(os.walk(d)):
            for n in sorted(names):
                rel = os.path.relpath(os.path.join(dirpath, n), d)
                if n.endswith(".c") and f"`{rel}`" not in doc:
                    errors.append(f"docs/ARCHITECTURE.md does not name "
                                  f"{fol}/{rel} (its Modules tables list "
                                  "every module)")


def main():
    errors = []
    check_includes(errors)
    check_doc(errors)
    if len(sys.argv) > 1:
        check_symbols(sys.argv[1], errors)
    for e in errors:
        print(f"layers: {e}")
    if errors:
        print(f"layers: {len(errors)} violation(s)")
        return 1
    print("layers: ok" + ("" if len(sys.argv) > 1 else
                          " (includes only: no build directory given)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
