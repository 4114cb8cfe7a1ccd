"""The import graph of the project's own modules (docs/architecture.md, "Layers"): no
circle (a module never imports, even lazily or for type checking only, a module that
imports it back, however long the way round) and no import from a lower layer to a higher
one. Read from the source with ``ast``: nothing is imported or run."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("memories", "notes", "spaceduck")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" not in path.parts:
                found[_module_name(path)] = path
    return found


def _imported(node: ast.AST, here: str, is_package: bool) -> list[str]:
    """The modules an import statement names (``from a import b`` may name a.b or a)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        anchor = here.split(".")
        anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
        base = ".".join([*anchor, base] if base else anchor)
    return [base, *(f"{base}.{alias.name}" for alias in node.names)]


# Lowest first; a module's layer is that of the longest prefix naming it. What no prefix
# names is an entry point at the top (settings, urls, wsgi, spaceduck.tasks, commands).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("spaceduck.core", "spaceduck.models", "spaceduck.admin"),  # the kernel: no app
    ("memories.models", "notes.models"),
    ("memories.store",),  # shared reads, keyword and vector indexes
    ("memories.extraction",),  # the stages and the firewall
    ("memories.write",),  # everything that changes a memory
    ("memories.upkeep",),  # staleness, compaction, integrity, re-embedding
    ("memories.recall",),  # recall, second stage, dates, context
    ("memories", "notes"),  # front ends: web, api, mcp, admin, tasks, urls; the notes app
    ("spaceduck.ops",),  # what stands on the apps: API root, health, transfer, benchmarks
)
TOP = len(LAYERS)


def layer_of(module: str) -> int:
    best, found = -1, TOP
    for level, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, found = len(prefix), level
    return found


def upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import from a module to one of a higher layer, as "a -> b"."""
    return [
        f"{module} -> {other}"
        for module in sorted(graph)
        for other in sorted(graph[module])
        if layer_of(other) > layer_of(module)
    ]


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        for node in ast.walk(tree):
            for target in _imported(node, name, is_package):
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_project_has_no_import_circle() -> None:
    assert circles(import_graph()) == []


def test_no_import_runs_up_a_layer() -> None:
    assert upward(import_graph()) == []


def test_the_layers_place_modules_as_the_folders_say() -> None:
    assert layer_of("spaceduck.core.fts") < layer_of("memories.models")
    assert layer_of("memories.store.vector_index") < layer_of("memories.write.dedup")
    assert layer_of("memories.write.services") < layer_of("memories.upkeep.staleness")
    assert layer_of("memories.upkeep.compaction") < layer_of("memories.recall.context")
    assert layer_of("memories.recall.hybrid") < layer_of("memories.web.views.memory")
    assert layer_of("memories.api.memories") < layer_of("spaceduck.ops.api")
    assert layer_of("spaceduck.ops.api") < layer_of("spaceduck.urls")
    assert upward({"memories.store.selectors": {"memories.write.services"}}) == [
        "memories.store.selectors -> memories.write.services"
    ]


def test_migrations_import_only_the_kernel() -> None:
    """A migration runs on every fresh database for good: it may not import a module that
    may move (the constants it needs are copied into it), only spaceduck.core and the
    apps' models.py (Django writes field defaults as references to it)."""
    found = []
    for path in sorted(ROOT.glob("*/migrations/*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _imported(node, "", False):
                top = target.split(".")[0]
                allowed = target.startswith("spaceduck.core") or target.endswith(".models")
                if top in PACKAGES and not allowed:
                    found.append(f"{path.relative_to(ROOT)} -> {target}")
    assert found == []


def test_a_circle_is_found_when_there_is_one() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_the_graph_reads_lazy_and_relative_imports() -> None:
    graph = import_graph()
    assert "memories.tasks" in graph["memories.apps"]  # imported inside ready()
    assert "memories.extraction.firewall" in graph["memories.extraction.pipeline"]
