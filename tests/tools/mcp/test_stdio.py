"""The MCP client against the SDK's own server over stdio: tools, results, errors,
timeouts, progress, list_changed, resources, prompts, environment and lifecycle."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import Started, stdio_spec
from tests.waiting import eventually
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.storage.images import ImageStore
from wyckoff_cli.tools.base import ToolContext, ToolOutcome
from wyckoff_cli.tools.mcp.extras import (
    attach_resources,
    format_table,
    prompt_commands,
    render_prompt,
    resource_completions,
)

pytestmark = pytest.mark.timeout(90)


def ctx(tmp_path: Path, out: list[str] | None = None) -> ToolContext:
    sink = out if out is not None else []
    return ToolContext(workspace=tmp_path, results_dir=tmp_path / "results", emit_output=sink.append)


async def call(started: Started, name: str, args: dict[str, Any], context: ToolContext) -> ToolOutcome:
    tool = started.registry.get(name)
    assert tool is not None, f"{name} not offered; have {started.registry.names()}"
    tool.check_arguments(args)
    result = await tool.run(args, context)
    assert isinstance(result, ToolOutcome)
    return result


async def test_tools_are_offered_with_flags_from_annotations(start: Any, tmp_path: Path) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    names = started.registry.names()
    assert names[:3] == ["mcp__demo__echo", "mcp__demo__add", "mcp__demo__image"]
    echo = started.registry.get("mcp__demo__echo")
    add = started.registry.get("mcp__demo__add")
    assert echo is not None and add is not None
    assert (echo.kind, echo.requires_approval, echo.concurrency_safe) == ("read", False, True)
    assert (add.kind, add.requires_approval, add.concurrency_safe) == ("external", True, False)
    assert "From the MCP server `demo`" in add.description
    assert started.manager.status_text() == "MCP 1/1"
    assert "mcp__demo__broken" not in names  # its schema has a dangling $ref
    assert any("broken" in n and "cannot be made valid" in n for n in started.notices())


async def test_text_structured_image_results(start: Any, tmp_path: Path) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    context = ctx(tmp_path)
    assert (await call(started, "mcp__demo__echo", {"text": "hi"}, context)).text == "echo: hi"
    added = await call(started, "mcp__demo__add", {"a": 2, "b": 3}, context)
    assert json.loads(added.text) == {"sum": 5}
    assert added.display is not None and added.display["structured"] == {"sum": 5}
    image = await call(started, "mcp__demo__image", {}, context)
    assert image.text.startswith("[image image/png, 67 bytes, saved to ")
    assert image.display is not None
    saved = Path(image.display["media"][0]["path"])
    assert saved.read_bytes().startswith(b"\x89PNG")
    assert image.images == ()  # this session's models were not said to take images
    context.images = ImageStore(tmp_path / "images")  # a store alone does not send them either
    assert (await call(started, "mcp__demo__image", {}, context)).images == ()


async def test_images_go_to_models_that_take_them(start: Any, tmp_path: Path) -> None:
    import base64

    from tests.tools.mcp.demo_server import PNG

    started = start(stdio_spec(), send_images=True)
    await started.manager.wait_ready()
    context = ctx(tmp_path)
    context.images = ImageStore(tmp_path / "images")
    image = await call(started, "mcp__demo__image", {}, context)
    ((part,),) = [image.images]
    assert (part.media_type, base64.b64encode(part.read_bytes()).decode()) == (
        "image/png",
        base64.b64encode(PNG).decode(),
    )  # the same part and storage as every image: a file in the session's image store
    assert part.path.startswith(str(tmp_path / "images"))


def test_which_sessions_see_images(workspace: Path) -> None:
    from wyckoff_cli.session.builder import open_workspace
    from wyckoff_cli.session.mcp import session_sees_images

    opened = open_workspace(workspace)
    assert session_sees_images(opened, "anthropic:claude-sonnet-4-5")
    assert not session_sees_images(opened, "openai:some-unknown-local-model")
    assert not session_sees_images(opened, "scripted:demo.json")


async def test_is_error_becomes_a_tool_error(start: Any, tmp_path: Path) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    with pytest.raises(ToolError, match="broken on purpose"):
        await call(started, "mcp__demo__fail", {}, ctx(tmp_path))
    with pytest.raises(ToolError, match="custom reason"):
        await call(started, "mcp__demo__fail", {"reason": "custom reason"}, ctx(tmp_path))


async def test_slow_tool_times_out_and_the_server_is_told(start: Any, tmp_path: Path) -> None:
    marker = tmp_path / "cancelled"
    started = start(stdio_spec(tool_timeout=1.0, env={"DEMO_CANCEL_MARKER": str(marker)}))
    await started.manager.wait_ready()
    with pytest.raises(ToolError, match=r"did not finish within 1 s \(tool_timeout\)"):
        await call(started, "mcp__demo__slow", {"seconds": 30}, ctx(tmp_path))
    await eventually(marker.exists, what="the server to be told of the cancellation")
    assert marker.read_text() == "cancelled"
    # the connection is still usable
    assert (await call(started, "mcp__demo__echo", {"text": "after"}, ctx(tmp_path))).text == "echo: after"


async def test_cancelling_a_call_cancels_it_on_the_server(start: Any, tmp_path: Path) -> None:
    marker, running = tmp_path / "cancelled", tmp_path / "started"
    started = start(stdio_spec(env={"DEMO_CANCEL_MARKER": str(marker), "DEMO_STARTED_MARKER": str(running)}))
    await started.manager.wait_ready()
    task = asyncio.create_task(call(started, "mcp__demo__slow", {"seconds": 30}, ctx(tmp_path)))
    await eventually(running.exists, what="the server to start the slow call")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await eventually(marker.exists, what="the server to be told of the cancellation")
    assert marker.exists()


async def test_progress_and_log_messages_reach_the_running_tool(start: Any, tmp_path: Path) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    out: list[str] = []
    result = await call(started, "mcp__demo__progress", {}, ctx(tmp_path, out))
    assert result.text == "done"
    assert out[:3] == ["step 1 (1/3)\n", "step 2 (2/3)\n", "step 3 (3/3)\n"]
    assert "[info] halfway there\n" in out


async def test_list_changed_refreshes_the_tool_set(start: Any, tmp_path: Path) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    assert "mcp__demo__extra" not in started.registry
    await call(started, "mcp__demo__grow", {}, ctx(tmp_path))
    await eventually(lambda: "mcp__demo__extra" in started.registry)
    assert started.registry.names()[-1] == "mcp__demo__extra"
    assert (await call(started, "mcp__demo__extra", {}, ctx(tmp_path))).text == "extra!"
    assert any("new: extra" in n for n in started.notices())


async def test_enabled_and_disabled_tools_filter(start: Any) -> None:
    started = start(stdio_spec(enabled_tools=("echo", "add", "fail"), disabled_tools=("fail",)))
    await started.manager.wait_ready()
    assert started.registry.names() == ["mcp__demo__echo", "mcp__demo__add"]


async def test_resources_mentions_and_completion(start: Any, tmp_path: Path) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    items = resource_completions(started.manager, "demo:")
    assert [i.mention for i in items] == ["@demo:demo://readme"]
    text = await attach_resources(started.manager, "Summarise @demo:demo://readme please", tmp_path)
    assert text.startswith('Summarise @demo:demo://readme please\n\n<mcp-resource server="demo"')
    assert "This is the demo resource." in text
    templated = await attach_resources(started.manager, "see @demo:demo://notes/alpha.", tmp_path)
    assert "note alpha" in templated
    missing = await attach_resources(started.manager, "see @demo:demo://nope", tmp_path)
    assert "could not be read" in missing
    assert await attach_resources(started.manager, "mail me@example.com or @other:x", tmp_path) == (
        "mail me@example.com or @other:x"
    )


async def test_prompts_as_slash_commands(start: Any) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    (command,) = prompt_commands(started.manager)
    assert command.command == "mcp__demo__review"
    assert command.hint == "<path> [focus]"
    text = await render_prompt(started.manager, "mcp__demo__review", "src/app.py security holes")
    assert text == "Please review src/app.py, looking for security holes."
    text = await render_prompt(started.manager, "mcp__demo__review", "focus=style path=a.py")
    assert text == "Please review a.py, looking for style."
    with pytest.raises(ToolError, match="needs path"):
        await render_prompt(started.manager, "mcp__demo__review", "")


async def test_child_gets_scrubbed_env_plus_its_own(start: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("SECRET_API_KEY", "sk-should-not-leak")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    started = start(stdio_spec(env={"DEMO_OWN": "mine"}), env=env)
    await started.manager.wait_ready()
    own = await call(started, "mcp__demo__env", {"name": "DEMO_OWN"}, ctx(tmp_path))
    leaked = await call(started, "mcp__demo__env", {"name": "SECRET_API_KEY"}, ctx(tmp_path))
    assert (own.text, leaked.text) == ("mine", "<unset>")


async def test_a_failing_server_reports_its_stderr_and_others_work(start: Any, tmp_path: Path) -> None:
    bad = stdio_spec(
        "bad",
        command=sys.executable,
        args=("-c", "import sys; sys.stderr.write('boom: no db\\n'); sys.exit(3)"),
    )
    missing = stdio_spec("missing", command=str(tmp_path / "no-such-program"), args=())
    started = start(bad, missing, stdio_spec())
    await started.manager.wait_ready()
    states = {s.name: s for s in started.manager.statuses()}
    assert states["demo"].state == "connected"
    assert states["bad"].state == "failed" and "boom: no db" in states["bad"].reason
    assert states["missing"].state == "failed" and "command not found" in states["missing"].reason
    failures = [n for n in started.notices() if "failed" in n]
    assert len(failures) == 2  # each reported once
    assert started.manager.status_text() == "MCP 1/3"
    table = format_table(started.manager)
    assert "boom: no db" in table and "connected" in table


async def test_startup_timeout(start: Any) -> None:
    hang = stdio_spec(
        "hang", command=sys.executable, args=("-c", "import time; time.sleep(60)"), startup_timeout=1.0
    )
    started = start(hang)
    await started.manager.wait_ready()
    (status,) = started.manager.statuses()
    assert status.state == "failed" and "did not start within 1 s" in status.reason


async def test_missing_variable_fails_that_server_only(start: Any) -> None:
    spec = stdio_spec("needs", args=("${DEMO_NOT_SET_ANYWHERE}",))
    started = start(spec, stdio_spec(), expand_env={})
    await started.manager.wait_ready()
    states = {s.name: s for s in started.manager.statuses()}
    assert states["needs"].state == "failed"
    assert "DEMO_NOT_SET_ANYWHERE is not set" in states["needs"].reason
    assert states["demo"].state == "connected"


async def test_close_kills_the_process_group(start: Any, tmp_path: Path) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    child = int((await call(started, "mcp__demo__spawn", {}, ctx(tmp_path))).text)
    os.kill(child, 0)  # alive
    await started.manager.aclose()

    def gone() -> bool:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return True
        return False

    await eventually(gone, what="the server's child process to end with the shutdown")


async def test_restart(start: Any, tmp_path: Path) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    first = started.manager.connection("demo")
    await started.manager.restart("demo")
    await started.manager.wait_ready()
    assert started.manager.connection("demo") is not first
    assert (await call(started, "mcp__demo__echo", {"text": "again"}, ctx(tmp_path))).text == "echo: again"
    assert started.registry.names().count("mcp__demo__echo") == 1


async def test_a_server_that_dies_is_reported_and_its_tools_withdrawn(start: Any, tmp_path: Path) -> None:
    started = start(stdio_spec())
    await started.manager.wait_ready()
    with pytest.raises(ToolError, match="closed the connection; its tools are withdrawn"):
        await call(started, "mcp__demo__crash", {}, ctx(tmp_path))
    (status,) = started.manager.statuses()
    assert status.state == "failed" and "crashed on purpose" in status.reason
    assert not any(n.startswith("mcp__demo__") for n in started.registry.names())
    assert sum("failed" in n for n in started.notices()) == 1
    await started.manager.restart("demo")
    await started.manager.wait_ready()
    assert (await call(started, "mcp__demo__echo", {"text": "back"}, ctx(tmp_path))).text == "echo: back"
