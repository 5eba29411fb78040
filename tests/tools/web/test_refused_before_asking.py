"""A web_fetch the address guard would refuse is refused before any approval dialog
(issue 28), with the reason and the setting that allows it; and a changed `[web]
allow_hosts` / `allow_private` applies to the next fetch, without a restart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.support import collect, make_runtime
from tests.tools.conftest import run_tool
from tests.tools.web.server import LocalServer, Reply
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.storage import paths
from wyckoff_cli.storage.web_config import WebConfig
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.web import web_tools

HTML = {"Content-Type": "text/html"}
PAGE = b"<html><head><title>Local docs</title></head><body><p>the local page</p></body></html>"

# Every spelling of a host the name alone shows is not public: refused before asking.
NOT_PUBLIC = [
    ("http://127.0.0.1:{port}/", "127.0.0.1", "loopback"),
    ("http://localhost:{port}/", "localhost", "loopback"),
    ("http://LOCALHOST.:{port}/docs", "localhost", "loopback"),
    ("http://api.localhost:{port}/", "api.localhost", "loopback"),
    ("http://127.1:{port}/", "127.0.0.1", "loopback"),
    ("http://0x7f000001:{port}/", "127.0.0.1", "loopback"),
    ("http://2130706433:{port}/", "127.0.0.1", "loopback"),
    ("http://0177.0.0.1:{port}/", "127.0.0.1", "loopback"),
    ("http://[::1]:{port}/", "::1", "loopback"),
    ("http://[::ffff:127.0.0.1]:{port}/", "::ffff:7f00:1", "loopback"),
    ("http://0.0.0.0:{port}/", "0.0.0.0", "unspecified"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", "link-local"),
    ("http://[fe80::1]/", "fe80::1", "link-local"),
    ("http://10.0.0.8/", "10.0.0.8", "private"),
    ("http://192.168.1.1/admin", "192.168.1.1", "private"),
]


class Asker:
    """An approver that records each question and answers `decision`."""

    def __init__(self, decision: ApprovalDecision) -> None:
        self.decision = decision
        self.asked: list[ev.ApprovalRequested] = []

    async def __call__(self, request: ev.ApprovalRequested) -> ApprovalDecision:
        self.asked.append(request)
        return self.decision


def fetch_tool(config: WebConfig | None = None, current: Any = None) -> Any:
    (tool,) = web_tools(config or WebConfig(), {}, current=current)
    return tool


def fetch_call(url: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": "w1", "name": "web_fetch", "args": {"url": url}}]}


@pytest.mark.parametrize(("url", "host", "reason"), NOT_PUBLIC)
async def test_a_refused_url_is_refused_before_any_dialog(
    server: LocalServer, workspace: Path, url: str, host: str, reason: str
) -> None:
    server.route("/", Reply(200, PAGE, HTML))
    target = url.format(port=server.port)
    asker = Asker(ApprovalDecision.allow())
    rounds = [fetch_call(target), {"text": "web_fetch refused the local address."}]
    runtime, _ = make_runtime(rounds, [fetch_tool()], workspace, approver=asker)
    events, messages = await collect(runtime, "read the local docs")
    assert asker.asked == [] and of_type(events, ev.ApprovalRequested) == []
    result = next(m for m in messages if m.role == "tool")
    assert result.is_error and result.text.startswith("Refused: web_fetch:")
    assert f"is a {reason} address" in result.text
    assert f'allow_hosts = ["{host}"]' in result.text and "allow_private = true" in result.text
    assert "[web]" in result.text and "no restart needed" in result.text
    assert server.requests == []


@pytest.mark.parametrize("url", ["file:///etc/passwd", "http://user@example.com/", "gopher://example.com/"])
async def test_a_url_web_fetch_never_reads_is_refused_before_any_dialog(workspace: Path, url: str) -> None:
    asker = Asker(ApprovalDecision.allow())
    runtime, _ = make_runtime([fetch_call(url), {"text": "no"}], [fetch_tool()], workspace, approver=asker)
    _, messages = await collect(runtime, "read it")
    assert asker.asked == []
    assert next(m for m in messages if m.role == "tool").text.startswith("Refused: web_fetch:")


async def test_a_public_name_is_still_asked_about_its_address_checked_when_fetched(workspace: Path) -> None:
    asker = Asker(ApprovalDecision.deny())  # nothing leaves the machine
    rounds = [fetch_call("https://docs.python.org/3/"), {"text": "You declined."}]
    runtime, _ = make_runtime(rounds, [fetch_tool()], workspace, approver=asker)
    await collect(runtime, "read the docs")
    assert [request.name for request in asker.asked] == ["web_fetch"]


async def test_an_allowed_host_is_asked_about_then_fetched(server: LocalServer, workspace: Path) -> None:
    server.route("/", Reply(200, PAGE, HTML))
    asker = Asker(ApprovalDecision.allow())
    tool = fetch_tool(WebConfig(allow_hosts=["127.0.0.1"]))
    rounds = [fetch_call(f"http://127.0.0.1:{server.port}/"), {"text": "It is the local page."}]
    runtime, _ = make_runtime(rounds, [tool], workspace, approver=asker)
    _, messages = await collect(runtime, "read the local docs")
    assert len(asker.asked) == 1
    result = next(m for m in messages if m.role == "tool")
    assert not result.is_error and "the local page" in result.text


def of_type(events: list[ev.RuntimeEvent], cls: type) -> list[Any]:
    return [e for e in events if isinstance(e, cls)]


def write_user_config(text: str) -> None:
    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def session_fetch_tool(workspace: Path, tmp_path: Path) -> Any:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rounds": [{"text": "hi"}]}))
    builder = SessionBuilder(open_workspace(workspace), cwd=workspace)
    session = builder.build(model=f"scripted:{script}", mode="default")
    tool = session.registry.get("web_fetch")
    assert tool is not None
    return tool


@pytest.mark.parametrize("setting", ['allow_hosts = ["127.0.0.1"]', "allow_private = true"])
async def test_a_changed_web_setting_applies_to_the_next_fetch_without_a_restart(
    server: LocalServer, workspace: Path, tmp_path: Path, ctx: ToolContext, setting: str
) -> None:
    server.route("/", Reply(200, PAGE, HTML))
    url = f"http://127.0.0.1:{server.port}/"
    tool = session_fetch_tool(workspace, tmp_path)
    with pytest.raises(ToolError, match="loopback address"):
        tool.check_arguments({"url": url})
    write_user_config(f"[web]\n{setting}\n")
    tool.check_arguments({"url": url})  # the same session's tool: no longer refused
    outcome = await run_tool(tool, ctx, url=url)
    assert "the local page" in outcome.text
    write_user_config("[web]\n")  # and taken back just as quickly
    with pytest.raises(ToolError, match="loopback address"):
        tool.check_arguments({"url": url})
    with pytest.raises(ToolError, match="loopback address"):
        await tool.run({"url": url + "other"}, ctx)  # the connection-time check reads it too
    assert len(server.requests) == 1


async def test_a_broken_config_change_keeps_the_last_good_settings(
    server: LocalServer, workspace: Path, tmp_path: Path
) -> None:
    write_user_config('[web]\nallow_hosts = ["127.0.0.1"]\n')
    tool = session_fetch_tool(workspace, tmp_path)
    url = f"http://127.0.0.1:{server.port}/"
    tool.check_arguments({"url": url})
    write_user_config("[web\nallow_hosts = ")  # a half-saved file
    tool.check_arguments({"url": url})  # still the settings the session had
