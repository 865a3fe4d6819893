"""The package's architecture as a test: one package per stage, imports flow one way and no module cycle.

Every import counts, also one inside a function (a lazy import hides a cycle, it does not remove it).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "scorer"

# A package may import its own modules and those of a lower rank, never a higher or an equal one.
RANK = {
    "base": 0,  # scorer/errors.py, private_files.py, numba_cache.py, frames.py, file_formats.py, wording.py, schema.py,
                # handed_back.py, digests.py, file_identity.py: stdlib, numpy, pyarrow only
    "kernels": 1,
    "spec": 2, "prepare": 2,
    "truth": 3,
    "engine": 4,
    "api": 5,
    "analytics": 6,
    "adapters": 7, "dask": 7,
    "jobs": 8,  # the commands' work as functions (scorer.compare, ...): they run the analytics, adapters and Dask
    "cli": 9,
    "": 10, "__main__": 10,  # scorer/__init__.py and python -m scorer
}
BASE = {"errors", "private_files", "numba_cache", "frames", "file_formats", "wording", "schema", "handed_back", "digests",
        "file_identity"}
# numba_cache: the guard that checks numba's cache folder before numba reads it; private_files and errors: the checks of
# the ahead-of-time modules before scorer.kernels.aot imports one; digests: their SHA-256 (and the modules' key)
KERNELS_MAY_IMPORT = {"scorer.numba_cache", "scorer.private_files", "scorer.errors", "scorer.digests"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imported(path: Path, known: dict[str, Path]) -> set[str]:
    """The package's modules that `path` imports anywhere in its body."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "scorer":
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in known else node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "scorer"}
    return {name for name in found if name in known}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imported(path, known) - {name} for name, path in known.items()}


def stage(module: str) -> str:
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else ""
    return "base" if name in BASE else name


def test_every_module_belongs_to_a_stage():
    assert sorted({stage(name) for name in modules()} - set(RANK)) == []


def upward(edges: dict[str, set[str]]) -> list[str]:
    """Imports of a stage of the same or a higher rank (and kernels importing the package)."""
    found = []
    for module, targets in edges.items():
        for target in targets:
            mine, theirs = stage(module), stage(target)
            if mine == "kernels" and theirs != "kernels" and target not in KERNELS_MAY_IMPORT:
                found.append(f"{module} -> {target} (kernels import only kernels)")
            elif mine != theirs and RANK[theirs] >= RANK[mine] and target != "scorer":
                found.append(f"{module} -> {target}")
    return sorted(found)


def test_no_module_imports_a_higher_or_equal_stage():
    assert upward(graph()) == []


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(edges[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle():
    assert cycles(graph()) == []


def test_the_checks_can_fail():
    assert upward({"scorer.truth.ids": {"scorer.engine.reader"}, "scorer.kernels.parse": {"scorer.frames"},
                   "scorer.dask.run": {"scorer.adapters.kaggle"}, "scorer.cli.main": {"scorer.api"}}) == [
        "scorer.dask.run -> scorer.adapters.kaggle", "scorer.kernels.parse -> scorer.frames (kernels import only kernels)",
        "scorer.truth.ids -> scorer.engine.reader"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    assert stage("scorer.engine.reader") == "engine" and stage("scorer") == "" and stage("scorer.errors") == "base"
