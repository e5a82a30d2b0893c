"""The layout is the architecture: no import cycle, one MLflow boundary, a light ``harness --help``.

The import graph is read from the source (``ast``), counting every import statement, including those inside
functions and ``TYPE_CHECKING`` blocks; an edge goes to the module an import names (``from harness.x import y``
is an edge to ``harness.x.y`` when that is a module, else to ``harness.x``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("harness", "verifiers")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def _imported(node: ast.AST, module: str, is_package: bool, known: set[str]) -> list[str]:
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom):
        if node.level:  # relative: resolve against this module's package
            base = module.split(".")
            base = base if is_package else base[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in known else prefix for a in node.names]
    out = []
    for name in names:
        while name and name not in known:  # ``import harness.engine.holdout`` names a module; a symbol's owner
            name = name.rpartition(".")[0]
        if name:
            out.append(name)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in its source)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        edges = set()
        for node in ast.walk(tree):
            edges.update(_imported(node, name, path.name == "__init__.py", known))
        edges.discard(name)
        graph[name] = edges
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    # harness.cli.options imports the engine only inside preflight(): the edge must still be there
    assert "harness.engine.registry" in graph["harness.cli.options"]


def test_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_mlflow_is_imported_only_under_tracking() -> None:
    offenders = []
    for name, path in _modules().items():
        if name == "harness.tracking" or name.startswith("harness.tracking."):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            targets = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{name}:{node.lineno} {t}" for t in targets if t == "mlflow" or t.startswith("mlflow.")]
    assert not offenders, offenders


@pytest.mark.parametrize("layer, forbidden", [
    ("harness.models", ("harness.engine", "harness.tracking", "harness.cli", "harness.run", "harness.analysis")),
    ("harness.engine", ("harness.tracking", "harness.cli", "harness.run", "harness.compare")),
    ("harness.analysis", ("harness.tracking", "harness.cli", "harness.engine.registry", "harness.run")),
    ("harness.skills", ("harness.engine", "harness.tracking", "harness.cli", "harness.models")),
    ("verifiers", ("harness",)),
])
def test_lower_layers_do_not_import_upper_ones(layer: str, forbidden: tuple[str, ...]) -> None:
    graph = import_graph()
    bad = [f"{m} -> {t}" for m, targets in graph.items() if m == layer or m.startswith(layer + ".")
           for t in targets if any(t == f or t.startswith(f + ".") for f in forbidden)]
    assert not bad, bad


def test_config_uses_the_standard_library_only() -> None:
    tree = ast.parse((ROOT / "harness" / "config.py").read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {(n.module or "").split(".")[0] for n in ast.walk(tree)
                 if isinstance(n, ast.ImportFrom) and n.level == 0}
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


def test_help_imports_neither_dspy_nor_pandas_nor_mlflow() -> None:
    code = ("import sys\nfrom harness.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in ('dspy', 'pandas', 'numpy', 'mlflow') if m in sys.modules)\n"
            "print('HEAVY=' + ','.join(heavy))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "Usage:" in proc.stdout and "evolve" in proc.stdout
    assert "HEAVY=\n" in proc.stdout, proc.stdout


def test_importing_the_package_changes_no_environment_variable() -> None:
    code = "import os\nbefore = dict(os.environ)\nimport harness, harness.cli\nprint(dict(os.environ) == before)\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})
    assert proc.stdout.strip() == "True", proc.stderr
