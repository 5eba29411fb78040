"""The layering in STYLE.md, checked by walking every module's imports (AST).

cli → tui → runtime → {providers, tools, context} → models; storage is used by cli
(and tui), never by providers, tools or runtime. Nothing outside tui/ imports
textual. A violation names the file, the line and the import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "wyckoff_cli"
SHARED = {"runtime.events", "runtime.messages", "runtime.errors"}

# layer -> layers of ours it must never import
FORBIDDEN: dict[str, set[str]] = {
    "providers": {"tools", "tui", "storage", "cli", "context"},
    "tools": {"providers", "tui", "cli", "storage", "context"},
    "runtime": {"tui", "storage", "cli"},
    "context": {"tui", "cli", "storage"},
    "models": {"runtime", "providers", "tools", "context", "storage", "tui", "cli"},
    "storage": {"providers", "tools", "tui", "cli", "context"},
    "tui": {"cli"},
}
# the shared leaf modules import nothing else of ours
LEAVES = {"runtime/events.py", "runtime/messages.py", "runtime/errors.py"}
THIRD_PARTY_ONLY_IN = {"textual": "tui"}
# layers below the runtime may use only its shared leaf modules (plus the hook protocol for context)
RUNTIME_ALLOWED = {
    "providers": SHARED,
    "tools": SHARED,
    "storage": SHARED,
    "context": SHARED | {"runtime.hooks"},
}


def imports_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.extend((node.lineno, f"{node.module}.{alias.name}") for alias in node.names)
    return found


def violations(root: Path = PACKAGE) -> list[str]:
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
            if parts[0] != "wyckoff_cli" or len(parts) < 2:
                continue
            target = parts[1]
            target_module = ".".join(parts[1:3])
            if relative in LEAVES and target_module not in SHARED | {relative[:-3].replace("/", ".")}:
                problems.append(
                    f"wyckoff_cli/{relative}:{line} imports {name} (shared leaf modules import nothing of ours)"
                )
            allowed = RUNTIME_ALLOWED.get(layer)
            if target == "runtime" and allowed is not None and target_module not in allowed:
                problems.append(
                    f"wyckoff_cli/{relative}:{line} imports {name} ({layer}/ may use only runtime's shared modules)"
                )
            if target in FORBIDDEN.get(layer, set()):
                problems.append(
                    f"wyckoff_cli/{relative}:{line} imports {name} ({layer}/ must not import {target}/)"
                )
    return problems


def test_layering_is_respected() -> None:
    assert violations() == []


def test_a_violation_is_reported_with_file_line_and_import(tmp_path: Path) -> None:
    fake = tmp_path / "wyckoff_cli"
    (fake / "providers").mkdir(parents=True)
    (fake / "providers" / "bad.py").write_text(
        "import os\nfrom wyckoff_cli.tools.registry import ToolRegistry\n"
    )
    (fake / "runtime").mkdir()
    (fake / "runtime" / "events.py").write_text("from wyckoff_cli.providers import base\n")
    (fake / "models").mkdir()
    (fake / "models" / "x.py").write_text("import textual.app\n")
    (fake / "tools").mkdir()
    (fake / "tools" / "t.py").write_text("from wyckoff_cli.runtime.loop import AgentRuntime\n")
    assert violations(fake) == [
        "wyckoff_cli/models/x.py:1 imports textual.app (only tui/ may import textual)",
        "wyckoff_cli/providers/bad.py:2 imports wyckoff_cli.tools.registry.ToolRegistry (providers/ must not import tools/)",
        "wyckoff_cli/runtime/events.py:1 imports wyckoff_cli.providers.base (shared leaf modules import nothing of ours)",
        "wyckoff_cli/tools/t.py:1 imports wyckoff_cli.runtime.loop.AgentRuntime (tools/ may use only runtime's shared modules)",
    ]


@pytest.mark.parametrize("limit", [600])
def test_no_module_grows_past_the_limit(limit: int) -> None:
    offenders = [
        f"wyckoff_cli/{p.relative_to(PACKAGE).as_posix()}: {n} lines"
        for p in sorted(PACKAGE.rglob("*.py"))
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit
    ]
    assert offenders == [], f"split these modules (limit {limit} lines): {offenders}"
