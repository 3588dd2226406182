#!/usr/bin/env python3
"""layers — checks the shape of the code from its #include lines (issue 14).

1. Folders: the graph of includes between folders (core/runtime, trace/format, tools/cmd,
   ...) has no cycle, and every edge points down the layers that README.md's code map
   and DESIGN.md describe (LAYERS below, top first; folders on one line are peers and
   must not include each other).
2. The runtime's parts (core/runtime/part.h): no part file includes another part's
   header or the table (parts.h); only the centre (node*.c) and parts.c may.

Prints every violation as FILE:LINE and exits 1 when there is one.  Run by `make check`
(target `layers`); needs nothing but python3.
"""
import os
import re
import sys

ROOTS = ("core", "trace", "tools", "tui", "workloads")

# Top first.  A folder may include folders on later lines, and itself.
LAYERS = [
    ["tools/cmd"],
    ["tui", "tools/paper"],
    ["tools/report", "tools/bound", "tools/bench"],
    ["core/client"],
    ["trace/offline", "trace/collector"],
    ["trace/tracer"],
    ["trace/format"],
    ["workloads"],
    ["core/runtime", "core/sim"],
    ["core/kvs"],
    ["core/net"],
    ["core/policy"],
    ["core/model"],
    ["core/base"],
]

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def folder_of(path):
    d = os.path.dirname(path)
    return d if d else "."


def rank_of(folder):
    for i, row in enumerate(LAYERS):
        if folder in row:
            return i
    return None


def sources(top):
    for root in ROOTS:
        for dirpath, _, files in os.walk(os.path.join(top, root)):
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, f), top)


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    errors = []
    edges = {}
    files = sorted(sources(top))
    parts = set()
    for path in files:
        if path.startswith("core/runtime/") and path.endswith(".c"):
            with open(os.path.join(top, path), encoding="utf-8") as f:
                if re.search(r"^const struct part part_\w+\s*=", f.read(), re.M):
                    parts.add(path)
    part_headers = {p[:-2] + ".h" for p in parts if os.path.exists(os.path.join(top, p[:-2] + ".h"))}
    for path in files:
        src = folder_of(path)
        if rank_of(src) is None:
            errors.append(f"{path}:1: folder {src} is not in tests/lint/layers.py's LAYERS")
            continue
        with open(os.path.join(top, path), encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or "/" not in m.group(1):
                    continue
                inc = m.group(1)
                dst = folder_of(inc)
                if not dst.startswith(ROOTS):
                    continue
                if dst != src:
                    edges.setdefault(src, {}).setdefault(dst, f"{path}:{lineno}")
                    rs, rd = rank_of(src), rank_of(dst)
                    if rd is None:
                        errors.append(f"{path}:{lineno}: includes {inc} from unknown folder {dst}")
                    elif rd <= rs:
                        errors.append(f"{path}:{lineno}: {src} includes {inc}, which is not below it")
                if path in parts:
                    own = path[:-2] + ".h"
                    if inc in part_headers and inc != own:
                        errors.append(f"{path}:{lineno}: part includes another part's header {inc}")
                    if inc == "core/runtime/parts.h":
                        errors.append(f"{path}:{lineno}: part includes the table parts.h")
    # Cycles between folders (a rank violation implies one only when both ways exist).
    state = {}
    stack = []

    def visit(v):
        state[v] = 1
        stack.append(v)
        for w in edges.get(v, {}):
            if state.get(w) == 1:
                cyc = stack[stack.index(w):] + [w]
                where = ", ".join(edges[a][b] for a, b in zip(cyc, cyc[1:]))
                errors.append(f"cycle between folders: {' -> '.join(cyc)} ({where})")
            elif w not in state:
                visit(w)
        stack.pop()
        state[v] = 2

    for v in sorted(edges):
        if v not in state:
            visit(v)
    for e in errors:
        print(e)
    if errors:
        print(f"layers: {len(errors)} violation(s)")
        return 1
    print(f"layers: {len(files)} files, {sum(len(v) for v in edges.values())} folder edges, "
          f"{len(parts)} runtime parts: no cycle, every include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
