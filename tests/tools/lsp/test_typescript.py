"""Against the real typescript-language-server, installed with npm as a user would (by
`scripts/install_test_servers.sh`, which `.ci/run` calls), where node exists — skipped with
the reason otherwise. One server shared by the module's tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from wyckoff_cli.storage.lsp_config import LspServerConfig
from wyckoff_cli.tools.builtin import default_registry
from wyckoff_cli.tools.lsp.family import LspTools
from wyckoff_cli.tools.registry import ToolRegistry

from .servers_for_tests import context, manager_for, run, tool

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

GREETING = "export function greet(name: string): string {\n  return `hello ${name}`;\n}\n"
CALLER = 'import { greet } from "./greeting";\n\nexport const message: string = greet("world");\n'


SERVERS = Path(__file__).resolve().parents[3] / ".test-servers"  # scripts/install_test_servers.sh


def _installed() -> str:
    """typescript-language-server as `scripts/install_test_servers.sh` installed it (tests never
    download)."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed: typescript-language-server cannot run here")
    server = SERVERS / "node_modules" / ".bin" / "typescript-language-server"
    if not server.exists():
        pytest.skip("typescript-language-server is not installed: run scripts/install_test_servers.sh")
    return str(server)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def ts(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Path, LspTools, ToolRegistry]]:
    server = _installed()
    root = Path(os.path.realpath(tmp_path_factory.mktemp("ts-ws")))
    (root / "greeting.ts").write_text(GREETING)
    (root / "caller.ts").write_text(CALLER)
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "target": "es2020"}}\n')
    config = LspServerConfig(command=server, args=["--stdio"])
    tools = LspTools(
        manager_for(
            root, {"typescript-language-server": config}, diagnostics_wait_ms=20_000, startup_wait_ms=60_000
        )
    )
    yield root, tools, tools.wrap(default_registry())
    await tools.manager.close()


async def test_a_type_error_is_reported_with_its_line_and_a_fix_clears_it(
    ts: tuple[Path, LspTools, ToolRegistry],
) -> None:
    root, _tools, registry = ts
    edit = registry.get("edit_file")
    assert edit is not None
    await run(registry.get("read_file"), {"path": "caller.ts"}, context(root))  # type: ignore[arg-type]
    broken = await run(
        edit, {"path": "caller.ts", "old": 'greet("world")', "new": "greet(42)"}, context(root)
    )
    assert "Diagnostics this change introduced (typescript-language-server):" in broken, broken
    (line,) = [entry for entry in broken.splitlines() if entry.startswith("caller.ts:")]
    assert line.startswith("caller.ts:3:38: error: Argument of type 'number' is not assignable"), line
    fixed = await run(edit, {"path": "caller.ts", "old": "greet(42)", "new": 'greet("world")'}, context(root))
    assert "Diagnostics" not in fixed, fixed


async def test_definition_references_and_rename_across_two_files(
    ts: tuple[Path, LspTools, ToolRegistry],
) -> None:
    root, tools, _registry = ts
    definition = await run(
        tool(tools, "lsp_definition"), {"path": "caller.ts", "line": 3, "symbol": "greet"}, context(root)
    )
    assert definition.startswith("greeting.ts:1:17:"), definition
    references = await run(
        tool(tools, "lsp_references"), {"path": "greeting.ts", "line": 1, "symbol": "greet"}, context(root)
    )
    assert {entry.split(":")[0] for entry in references.splitlines()} == {"caller.ts", "greeting.ts"}
    assert len(references.splitlines()) == 3, references
    args = {"path": "greeting.ts", "line": 1, "symbol": "greet", "new_name": "salute"}
    result = await run(tool(tools, "lsp_rename"), args, context(root, "call-ts-rename"))
    assert result == "Renamed to 'salute' in 2 file(s): caller.ts, greeting.ts."
    assert "import { salute }" in (root / "caller.ts").read_text()
    assert "export function salute(" in (root / "greeting.ts").read_text()
