#!/usr/bin/env python3
"""The module graph of a crate, read from its `use crate::` and `use super::` lines (and the
`crate::` paths written inline in code), and a check that it has no cycle.

usage: python3 scripts/modules.py [--graph] CRATE_SRC_DIR...

One node per source file (`budget/mod.rs` is `budget`, `budget/ratio.rs` is `budget::ratio`).
An import of `crate::a::b::Name` is an edge to the longest module that exists on that path
(`a::b` if there is such a file, else `a`). A parent's `mod child;` and its relative
`pub use child::Name;` are not edges: they are how a folder exposes its parts, not a use.
Comments are skipped, so links in docs do not count. Exits 1, printing each cycle, if there is
one. `cargo modules` would tell the same from rustc's view, but it needs a long build of
rust-analyzer; this reads the text, which is enough for a tree that keeps its imports in `use`
lines.
"""

import re
import sys
from pathlib import Path


def module_of(src: Path, file: Path) -> tuple:
    parts = list(file.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return tuple(parts)


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] if "//" in line else line for line in text.splitlines())


def use_paths(text: str):
    """Every path a `use` names, expanded from its braces: `use a::{b, c::{d}}` gives a::b, a::c::d."""
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        yield from expand(re.sub(r"\s+", "", m.group(1)))


def expand(tree: str):
    i = tree.find("{")
    if i < 0:
        yield tree.split(" as ", 1)[0]
        return
    prefix, body = tree[:i], tree[i + 1 : tree.rfind("}")]
    depth, start = 0, 0
    for j, ch in enumerate(body + ","):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            item = body[start:j]
            start = j + 1
            if item:
                yield from expand(prefix + item)


def resolve(path: list, modules: set):
    """The longest module that `path` (segments after `crate`) lies in, or None for the root."""
    for n in range(len(path), 0, -1):
        if tuple(path[:n]) in modules:
            return tuple(path[:n])
    return None


def graph(src: Path):
    files = sorted(p for p in src.rglob("*.rs"))
    modules = {module_of(src, f): f for f in files}
    edges = {m: set() for m in modules}
    for mod, file in modules.items():
        text = strip_comments(file.read_text(encoding="utf-8"))
        here = list(mod) if file.stem not in ("mod", "lib", "main") else list(mod)
        paths = []
        for p in use_paths(text):
            segs = p.split("::")
            if segs[0] == "crate":
                paths.append(segs[1:])
            elif segs[0] == "super":
                base = list(here)
                # `super` from a file `a/b.rs` (module a::b) is `a`; from `a/mod.rs` (module a) is the root.
                while segs and segs[0] == "super":
                    base = base[:-1]
                    segs = segs[1:]
                paths.append(base + segs)
        for m in re.finditer(r"(?<![\w:])crate((?:::[A-Za-z_]\w*)+)", text):
            paths.append(m.group(1).split("::")[1:])
        for p in paths:
            target = resolve(p, set(modules))
            if target is not None and target != mod and target[: len(mod)] != mod:
                edges[mod].add(target)
    return edges


def cycles(edges):
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def name(m):
    return "::".join(m) or "crate"


def main():
    args = sys.argv[1:]
    show = "--graph" in args
    dirs = [a for a in args if a != "--graph"]
    if not dirs:
        sys.exit(__doc__)
    failed = False
    for d in dirs:
        src = Path(d)
        edges = graph(src)
        n_edges = sum(len(e) for e in edges.values())
        if show:
            print(f"# {src}")
            for m in sorted(edges):
                if edges[m]:
                    print(f"{name(m)} -> {', '.join(name(t) for t in sorted(edges[m]))}")
        found = cycles(edges)
        if found:
            failed = True
            for comp in found:
                print(f"{src}: import cycle among {len(comp)} modules: {', '.join(name(m) for m in comp)}")
        else:
            print(f"{src}: {len(edges)} modules, {n_edges} imports, no cycle")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
