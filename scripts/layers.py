#!/usr/bin/env python3
"""scripts/layers.py — the layer check (`make check` runs it).

ward's sources are layered, lowest first:

    src/util       libc only: kernel shims, paths, I/O (also in the launchers)
    src/libward    the library (include/ward/ is its public face)
    src/mcp        the MCP server (JSON-RPC, tools), on libward's public API
    src/cli        the `ward` program, on libward's public API and mcp's entry
    src/launcher   landlock-run and ward-bridge: static, util only

Every `#include "…"` in a file is an arrow from its folder to the folder of
the file it names. An arrow may only point to the same layer or to an
allowed lower one (the table below); a front end (mcp, cli) may use only
libward's public headers (include/ward/), never its internals. Within a
folder, the arrows between modules (a module is a .c and its .h) must not
form a cycle. The script prints every violation with the file and line and
exits 1; 0 when the tree is clean.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# folder -> the folders its files may include from (besides itself)
ALLOWED = {
    "src/util": set(),
    "src/libward": {"src/util", "include/ward"},
    "include/ward": set(),
    "src/mcp": {"src/util", "include/ward"},
    "src/cli": {"src/util", "include/ward", "src/mcp"},
    "src/launcher": {"src/util"},
}
# What a front end may include from another layer's folder: only these
# files of src/mcp are its public entry.
ENTRY = {"src/mcp": {"mcp.h"}}

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


def main():
    search = [os.path.join(ROOT, "include"), os.path.join(ROOT, "src")]
    files = []
    for top in ("src", "include/ward"):
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            for n in names:
                if n.endswith((".c", ".h")):
                    files.append(os.path.join(dirpath, n))
    errors = []
    edges = {}  # (folder, module) -> set(module) within the same folder
    for f in sorted(files):
        fol = folder_of(f)
        if fol is None:
            errors.append(f"{os.path.relpath(f, ROOT)}: not in a known layer "
                          f"({', '.join(ALLOWED)})")
            continue
        mod = os.path.splitext(os.path.basename(f))[0]
        with open(f, encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                target = resolve(f, m.group(1), search)
                where = f"{os.path.relpath(f, ROOT)}:{lineno}"
                if target is None:
                    errors.append(f"{where}: #include \"{m.group(1)}\" "
                                  "names no file of the tree")
                    continue
                tfol = folder_of(target)
                if tfol is None:
                    continue
                if tfol == fol:
                    tmod = os.path.splitext(os.path.basename(target))[0]
                    if tmod != mod:
                        edges.setdefault((fol, mod), set()).add(tmod)
                    continue
                if tfol not in ALLOWED[fol]:
                    errors.append(f"{where}: {fol} may not include "
                                  f"{os.path.relpath(target, ROOT)} "
                                  f"({tfol} is not below it)")
                    continue
                entry = ENTRY.get(tfol)
                if entry is not None and os.path.basename(target) not in entry:
                    errors.append(f"{where}: {fol} may include only "
                                  f"{', '.join(sorted(entry))} of {tfol}, "
                                  f"not {os.path.basename(target)}")
    # Cycles between modules of one folder (Tarjan's algorithm).
    for fol in ALLOWED:
        graph = {m: e for (f, m), e in edges.items() if f == fol}
        index, low, stack, on, sccs = {}, {}, [], set(), []
        counter = [0]

        def strong(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in graph.get(v, ()):
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
        for comp in sccs:
            errors.append(f"{fol}: a cycle between the modules "
                          f"{', '.join(comp)}")
    for e in errors:
        print(f"layers: {e}")
    if errors:
        print(f"layers: {len(errors)} violation(s)")
        return 1
    print("layers: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
