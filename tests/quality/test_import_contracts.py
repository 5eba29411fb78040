"""The layering in STYLE.md, checked by walking every module's imports (AST).

    cli → {tui, acp, api} → session → runtime → {providers, tools, context} → {models, storage} → core

Imports only point down: a package may import its own modules and those of any
package on a lower level, never one on its own level or above (the exceptions are
listed in `SIDEWAYS`); the hosts reach the runtime only through session/ (`SKIPS`:
what a layer may not import although it is below). Nothing outside tui/ imports textual. No two modules import
each other, directly or through others: the cycles are computed over the whole
package and named. A violation names the file, the line and the import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "wyckoff_cli"

LEVELS: dict[str, int] = {
    "core": 0,
    "models": 1,
    "storage": 1,
    "providers": 2,
    "tools": 2,
    "context": 2,
    "runtime": 3,
    "session": 4,
    "tui": 5,
    "acp": 5,
    "api": 5,
    "batch": 5,
    "cli": 6,
    "testing": 6,
    "integrations": 7,
}
# same-level imports that are part of the design: the context layer uses the provider
# protocol (compaction's model calls) and the tool base (the `remember` tool)
SIDEWAYS: dict[str, set[str]] = {"context": {"providers", "tools"}}
# the hosts send requests to the session and render its events: what they show of the
# runtime (the abort signal, checkpoints, hook files) comes through session/ or core/
SKIPS: dict[str, set[str]] = {"tui": {"runtime"}, "acp": {"runtime"}, "api": {"runtime"}}
THIRD_PARTY_ONLY_IN = {"textual": "tui"}


def imports_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def layer_violations(root: Path = PACKAGE) -> list[str]:
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        layer = relative.split("/")[0]
        for line, name in imports_of(path):
            parts = name.split(".")
            if parts[0] in THIRD_PARTY_ONLY_IN and layer != THIRD_PARTY_ONLY_IN[parts[0]]:
                problems.append(
                    f"wyckoff_cli/{relative}:{line} imports {name} (only tui/ may import {parts[0]})"
                )
            if parts[0] != "wyckoff_cli" or len(parts) < 2 or layer not in LEVELS:
                continue
            target = parts[1]
            if target == layer or target not in LEVELS:
                continue
            if target in SKIPS.get(layer, set()):
                problems.append(
                    f"wyckoff_cli/{relative}:{line} imports {name} ({layer}/ reaches {target}/ through session/)"
                )
                continue
            if LEVELS[target] < LEVELS[layer] or target in SIDEWAYS.get(layer, set()):
                continue
            where = "above" if LEVELS[target] > LEVELS[layer] else "beside"
            problems.append(
                f"wyckoff_cli/{relative}:{line} imports {name} ({layer}/ must not import {target}/, {where} it)"
            )
    return problems


def module_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module name (`providers.base`) -> the modules of ours it imports."""
    modules = {
        ".".join(p.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        for p in root.rglob("*.py")
    }
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for path in root.rglob("*.py"):
        source = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
        for _, name in imports_of(path):
            parts = name.split(".")
            if parts[0] != "wyckoff_cli":
                continue
            dotted = ".".join(parts[1:])
            # `from pkg.mod import name` names a module or a member of one
            target = dotted if dotted in modules else dotted.rpartition(".")[0]
            if target in modules and target != source and target != source.rpartition(".")[0]:
                graph[source].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component: list[str] = []
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
    return sorted(found)


def test_layering_is_respected() -> None:
    assert layer_violations() == []


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert cycles(module_graph()) == []


def test_a_violation_is_reported_with_file_line_and_import(tmp_path: Path) -> None:
    fake = tmp_path / "wyckoff_cli"
    for folder in ("providers", "core", "models", "tools"):
        (fake / folder).mkdir(parents=True)
    (fake / "providers" / "bad.py").write_text(
        "import os\nfrom wyckoff_cli.tools.registry import ToolRegistry\n"
    )
    (fake / "core" / "events.py").write_text("from wyckoff_cli.providers import base\n")
    (fake / "models" / "x.py").write_text("import textual.app\n")
    (fake / "tools" / "t.py").write_text("from wyckoff_cli.runtime.loop import AgentRuntime\n")
    (fake / "tui").mkdir()
    (fake / "tui" / "screen.py").write_text("from wyckoff_cli.runtime.loop import AbortSignal\n")
    assert layer_violations(fake) == [
        "wyckoff_cli/core/events.py:1 imports wyckoff_cli.providers.base (core/ must not import providers/, above it)",
        "wyckoff_cli/models/x.py:1 imports textual.app (only tui/ may import textual)",
        "wyckoff_cli/providers/bad.py:2 imports wyckoff_cli.tools.registry.ToolRegistry (providers/ must not import tools/, beside it)",
        "wyckoff_cli/tools/t.py:1 imports wyckoff_cli.runtime.loop.AgentRuntime (tools/ must not import runtime/, above it)",
        "wyckoff_cli/tui/screen.py:1 imports wyckoff_cli.runtime.loop.AbortSignal (tui/ reaches runtime/ through session/)",
    ]


def test_a_cycle_is_named_with_every_module_in_it(tmp_path: Path) -> None:
    fake = tmp_path / "wyckoff_cli"
    (fake / "providers").mkdir(parents=True)
    (fake / "providers" / "a.py").write_text("from wyckoff_cli.providers.b import B\n")
    (fake / "providers" / "b.py").write_text("from wyckoff_cli.providers import c\n")
    (fake / "providers" / "c.py").write_text("def f():\n    from wyckoff_cli.providers.a import A\n")
    (fake / "providers" / "d.py").write_text("from wyckoff_cli.providers.a import A\n")
    assert cycles(module_graph(fake)) == [["providers.a", "providers.b", "providers.c"]]


@pytest.mark.parametrize("limit", [600])
def test_no_module_grows_past_the_limit(limit: int) -> None:
    offenders = [
        f"wyckoff_cli/{p.relative_to(PACKAGE).as_posix()}: {n} lines"
        for p in sorted(PACKAGE.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit
    ]
    assert offenders == [], f"split these modules (limit {limit} lines): {offenders}"
