"""A server that never answers, answers garbage, dies mid-request or never finishes
starting: the tool call is a clear tool error and the session goes on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.storage.lsp_config import LspServerConfig
from wyckoff_cli.tools.lsp.family import LspTools

from .servers_for_tests import context, manager_for, run, tool

SERVER = str(Path(__file__).with_name("misbehaving_server.py"))


def _tools(root: Path, mode: str, **settings: object) -> LspTools:
    (root / "code.fake").write_text("alpha beta\n")
    config = LspServerConfig(command=sys.executable, args=[SERVER, mode], languages=[".fake"])
    return LspTools(manager_for(root, {"misbehaving": config}, **settings))


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("silent", "misbehaving did not answer definition within 0.5 s"),
        ("garbage", "misbehaving did not answer definition within 0.5 s"),
        ("die", "misbehaving died during definition"),
    ],
)
async def test_a_bad_answer_is_a_tool_error(root: Path, mode: str, message: str) -> None:
    tools = _tools(root, mode, request_timeout_ms=500)
    try:
        with pytest.raises(ToolError) as caught:
            await run(
                tool(tools, "lsp_definition"),
                {"path": "code.fake", "line": 1, "symbol": "beta"},
                context(root),
            )
        assert message in caught.value.message
    finally:
        await tools.manager.close()
    assert all(s.client is None for s in tools.manager.slots)


async def test_a_server_that_never_initialises_fails_with_a_notice(root: Path) -> None:
    tools = _tools(root, "no-init", startup_wait_ms=300)
    try:
        with pytest.raises(ToolError) as caught:
            await run(tool(tools, "lsp_hover"), {"path": "code.fake", "line": 1, "column": 1}, context(root))
        assert "no language server for code.fake" in caught.value.message
        assert "did not answer initialize within 0.3 s" in caught.value.message
        (slot,) = [s for s in tools.manager.slots if s.spec.name == "misbehaving"]
        assert slot.state == "failed"
        assert tools.manager.take_notices() == [
            "Language server misbehaving failed: misbehaving did not answer initialize within 0.3 s"
        ]
    finally:
        await tools.manager.close()


async def test_an_edit_without_a_server_is_unchanged_with_one_notice_naming_what_to_install(
    root: Path,
) -> None:
    from wyckoff_cli.core import events as ev
    from wyckoff_cli.tools.builtin import default_registry

    tools = LspTools(manager_for(root, {}))
    registry = tools.wrap(default_registry())
    events: list[object] = []
    ctx = context(root)
    ctx.emit_event = events.append
    write = registry.get("write_file")
    assert write is not None
    first = await run(write, {"path": "a.py", "content": "x: int = 'no'\n"}, ctx)
    second = await run(write, {"path": "b.py", "content": "y = 1\n"}, ctx)
    assert first.startswith("Created a.py") and "Diagnostics" not in first and "Diagnostics" not in second
    notices = [e.message for e in events if isinstance(e, ev.Notice)]
    assert notices == [
        "No language server found for .py files: install basedpyright (pip install basedpyright) or pyright "
        "(npm install -g pyright) for diagnostics after edits and the lsp_* tools."
    ]
    assert not any(name.startswith("lsp_") for name in registry.names())


async def test_a_server_that_will_not_stop_is_killed_with_its_process_group(
    root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    import logging
    import os

    from .servers_for_tests import until

    caplog.set_level(logging.INFO, logger="wyckoff_cli.tools.lsp.client")
    tools = _tools(root, "stubborn", request_timeout_ms=500)
    client = await tools.manager.client_for(root / "code.fake")
    assert client is not None and client.process is not None
    await until(
        lambda: any("child " in r.getMessage() for r in caplog.records), "the server's stderr in the log"
    )
    line = next(r.getMessage() for r in caplog.records if "child " in r.getMessage())
    assert line.startswith("misbehaving stderr: child ")
    child = int(line.rsplit(" ", 1)[1])
    await tools.manager.close()  # shutdown and exit are ignored, SIGTERM too: SIGKILL to the group
    assert client.process.returncode is not None

    def gone() -> bool:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return True
        with open(f"/proc/{child}/stat") as stat:  # a zombie waiting for init counts as gone
            return stat.read().split(") ")[1].startswith("Z")

    await until(gone, "the server's child to be killed with its group")
