"""Every kernel a command runs is compiled ahead of time, and reached through scorer.kernels.door only.

Read from the source (ast): every jitted function of scorer/kernels is exported by a stage module (door.STAGES), or
called from other jitted code (then it is compiled into its callers), or listed in door.JIT_ONLY with its reason; and no
module outside scorer/kernels imports a jitted function, or a kernels module that defines one (which would load numba).
"""

from __future__ import annotations

import ast
from pathlib import Path

from scorer.engine.kernel_examples import examples
from scorer.kernels import door

PACKAGE = Path(__file__).resolve().parent.parent / "scorer"
KERNELS = PACKAGE / "kernels"
JIT_DECORATORS = {"njit", "jit", "intrinsic", "generated_jit", "overload"}


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


def jitted(source: str) -> dict[str, ast.FunctionDef]:
    """The module's jitted functions by name."""
    return {node.name: node for node in ast.parse(source).body
            if isinstance(node, ast.FunctionDef) and any(_decorator_name(d) in JIT_DECORATORS for d in node.decorator_list)}


def names_used(function: ast.FunctionDef) -> set[str]:
    return {node.id for node in ast.walk(function) if isinstance(node, ast.Name)}


def kernels_sources() -> dict[str, str]:
    return {path.stem: path.read_text() for path in sorted(KERNELS.glob("*.py"))}


def imported_names(source: str, module: str) -> dict[str, tuple[str, str]]:
    """Names a kernels module imports from the other kernels modules: {local name: (module, name)}."""
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("scorer.kernels."):
            for alias in node.names:
                found[alias.asname or alias.name] = (node.module.rsplit(".", 1)[1], alias.name)
    return found


def helpers(sources: dict[str, str]) -> set[tuple[str, str]]:
    """(module, function) of the jitted functions that jitted code calls: numba compiles them into their callers."""
    every = {module: jitted(source) for module, source in sources.items()}
    called = set()
    for module, source in sources.items():
        visible = {name: (module, name) for name in every[module]} | imported_names(source, module)
        for function in every[module].values():
            for name in names_used(function) - {function.name}:
                if name in visible and visible[name][1] in every.get(visible[name][0], {}):
                    called.add(visible[name])
    return called


def uncovered(sources: dict[str, str], stages: dict, jit_only: dict) -> list[str]:
    """The jitted functions neither exported, nor called from jitted code, nor listed JIT-only."""
    exported = {tuple(door_target(target, name)) for names in stages.values() for name, target in names.items()}
    inner = helpers(sources)
    return sorted(f"{module}.{name}" for module, source in sources.items() for name in jitted(source)
                  if (module, name) not in exported | inner and f"{module}.{name}" not in jit_only)


def door_target(target: str, name: str) -> tuple[str, str]:
    module, _, function = target.partition(".")
    return module, function or name


def direct_imports(package: Path, sources: dict[str, str]) -> list[str]:
    """Imports, outside scorer/kernels, of a jitted function or of a kernels module that defines one."""
    with_kernels = {module for module, source in sources.items() if jitted(source)}
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.is_relative_to(package / "kernels"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            modules = []
            if isinstance(node, ast.ImportFrom) and node.module == "scorer.kernels":
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("scorer.kernels."):
                modules = [node.module.rsplit(".", 1)[1]]
            elif isinstance(node, ast.Import):
                modules = [alias.name.rsplit(".", 1)[1] for alias in node.names if alias.name.startswith("scorer.kernels.")]
            found += [f"{path.relative_to(package.parent)}:{node.lineno} imports scorer.kernels.{module}" for module in modules
                      if module in with_kernels]
    return found


def test_every_jitted_function_is_exported_called_from_jitted_code_or_jit_only():
    assert uncovered(kernels_sources(), door.STAGES, door.JIT_ONLY) == []


def test_the_exports_name_jitted_functions_and_the_jit_only_list_says_why():
    sources = kernels_sources()
    for names in door.STAGES.values():
        for name, target in names.items():
            module, function = door_target(target, name)
            assert function in jitted(sources[module]), f"{name}: {target} is no jitted function of scorer/kernels"
    assert all(reason.strip() and "." in where for where, reason in door.JIT_ONLY.items())


def test_every_export_has_an_example_of_its_arguments():
    for stage, names in door.STAGES.items():
        assert set(examples(stage)) == set(names), stage


def test_no_module_outside_the_kernels_imports_a_jitted_function():
    assert direct_imports(PACKAGE, kernels_sources()) == []


def test_the_checks_can_fail(tmp_path):
    sources = {"a": "from numba import njit\n@njit\ndef helper(x):\n    return x\n@njit(cache=True)\ndef top(x):\n    return helper(x)\n"
                    "@njit\ndef lonely(x):\n    return x\n",
               "b": "from scorer.kernels.a import helper\nfrom numba import njit\n@njit\ndef other(x):\n    return helper(x) + 1\n"}
    assert helpers(sources) == {("a", "helper")}
    assert uncovered(sources, {"s": {"top": "a"}}, {}) == ["a.lonely", "b.other"]
    assert uncovered(sources, {"s": {"top": "a", "other2": "b.other"}}, {"a.lonely": "why"}) == []
    package = tmp_path / "scorer"
    (package / "kernels").mkdir(parents=True)
    (package / "engine.py").write_text("from scorer.kernels import a, rows\nfrom scorer.kernels.b import other\nimport scorer.kernels.c\n")
    assert direct_imports(package, {**sources, "rows": "X = 1\n", "c": "Y = 2\n"}) == [
        "scorer/engine.py:1 imports scorer.kernels.a", "scorer/engine.py:2 imports scorer.kernels.b"]
