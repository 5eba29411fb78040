"""The MCP client over streamable HTTP on 127.0.0.1, with and without OAuth."""

from __future__ import annotations

import asyncio
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.tools.mcp.conftest import http_spec
from tests.waiting import eventually
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.storage.paths import credentials_file
from wyckoff_cli.tools.base import ToolContext, ToolOutcome
from wyckoff_cli.tools.mcp.oauth import CredentialsTokenStorage

pytestmark = pytest.mark.timeout(120)


async def run(started: Any, name: str, args: dict[str, Any], tmp_path: Path) -> str:
    tool = started.registry.get(name)
    assert tool is not None, started.registry.names()
    result = await tool.run(args, ToolContext(workspace=tmp_path, results_dir=tmp_path / "r"))
    assert isinstance(result, ToolOutcome)
    return result.text


async def test_tools_over_streamable_http(start: Any, http_server: Any, tmp_path: Path) -> None:
    url = http_server()
    started = start(http_spec(url, headers={"X-Team": "${DEMO_TEAM:-core}"}, tool_timeout=1.0), expand_env={})
    await started.manager.wait_ready()
    (status,) = started.manager.statuses()
    assert (status.state, status.transport) == ("connected", "http"), status.reason
    assert await run(started, "mcp__web__echo", {"text": "over http"}, tmp_path) == "echo: over http"
    assert await run(started, "mcp__web__header", {"name": "X-Team"}, tmp_path) == "core"
    with pytest.raises(ToolError, match="broken on purpose"):
        await run(started, "mcp__web__fail", {}, tmp_path)
    with pytest.raises(ToolError, match="did not finish within 1 s"):
        await run(started, "mcp__web__slow", {"seconds": 20}, tmp_path)
    await run(started, "mcp__web__grow", {}, tmp_path)
    await eventually(lambda: "mcp__web__extra" in started.registry)
    assert "mcp__web__extra" in started.registry


async def test_sse_transport(start: Any, http_server: Any, tmp_path: Path) -> None:
    url = http_server(sse=True)
    started = start(http_spec(url, name="old", transport="sse"))
    await started.manager.wait_ready()
    (status,) = started.manager.statuses()
    assert (status.state, status.transport) == ("connected", "sse"), status.reason
    assert await run(started, "mcp__old__echo", {"text": "over sse"}, tmp_path) == "echo: over sse"


async def test_an_sse_server_configured_as_http_connects_over_sse_and_says_so(
    start: Any, http_server: Any, tmp_path: Path
) -> None:
    url = http_server(sse=True)
    started = start(http_spec(url, name="old"))  # `type` http (the default for a URL)
    await started.manager.wait_ready()
    (status,) = started.manager.statuses()
    assert (status.state, status.transport) == ("connected", "sse"), status.reason
    assert await run(started, "mcp__old__echo", {"text": "fell back"}, tmp_path) == "echo: fell back"
    (said,) = [n for n in started.notices() if "connected over SSE" in n]
    assert said.startswith("MCP server old: connected over SSE (streamable HTTP failed: ")


async def test_a_streamable_http_server_does_not_fall_back(start: Any, http_server: Any) -> None:
    started = start(http_spec(http_server(), name="web"))
    await started.manager.wait_ready()
    (status,) = started.manager.statuses()
    assert (status.state, status.transport) == ("connected", "http"), status.reason
    assert not [n for n in started.notices() if "SSE" in n]


async def test_unreachable_http_server_fails_clearly(start: Any) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = start(http_spec(f"http://127.0.0.1:{port}/mcp", startup_timeout=5.0))
    await started.manager.wait_ready()
    (status,) = started.manager.statuses()
    assert status.state == "failed"
    assert status.reason.startswith("streamable HTTP: ") and "; SSE: " in status.reason  # both were tried
    assert started.notices() == [f"MCP server web failed: {status.reason}"]


class Browser:
    """Follows the authorization URL like a browser whose user clicks "allow"."""

    def __init__(self, think: float = 0.0) -> None:
        self.opened: list[str] = []
        self.think = think

    async def __call__(self, url: str) -> None:
        import httpx2

        self.opened.append(url)
        await asyncio.sleep(self.think)
        async with httpx2.AsyncClient(follow_redirects=True, timeout=10) as client:
            response = await client.get(url)
            assert response.status_code == 200, response.text


async def test_oauth_flow_stores_tokens_privately_and_reuses_them(
    start: Any, http_server: Any, tmp_path: Path
) -> None:
    log = tmp_path / "oauth.log"
    url = http_server(oauth=True, env={"DEMO_OAUTH_LOG": str(log)})

    headless = start(http_spec(url, name="secure"))
    await headless.manager.wait_ready()
    (status,) = headless.manager.statuses()
    assert status.state == "failed"
    assert "run `wyckoff mcp login secure`" in status.reason
    await headless.manager.aclose()

    browser = Browser()
    signed_in = start(http_spec(url, name="secure"), interactive_auth=True, open_url=browser)
    await signed_in.manager.wait_ready()
    (status,) = signed_in.manager.statuses()
    assert status.state == "connected", status.reason
    assert len(browser.opened) == 1
    opened = browser.opened[0]
    assert "code_challenge_method=S256" in opened and "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in opened
    assert await run(signed_in, "mcp__secure__echo", {"text": "authorised"}, tmp_path) == "echo: authorised"
    await signed_in.manager.aclose()

    path = credentials_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    record = tomllib.loads(path.read_text())["mcp_oauth"]["secure"]
    assert "access_token" in record["tokens"] and "client_id" in record["client_info"]

    again = Browser()
    reused = start(http_spec(url, name="secure"), interactive_auth=True, open_url=again)
    await reused.manager.wait_ready()
    assert reused.manager.statuses()[0].state == "connected"
    assert again.opened == []  # the stored token was used
    assert log.read_text().split() == ["register", "authorize", "token"]


async def test_tokens_are_refreshed_before_they_expire(start: Any, http_server: Any, tmp_path: Path) -> None:
    log = tmp_path / "oauth.log"
    # tokens live 30 s: inside the one-minute margin, so a new session refreshes first
    url = http_server(oauth=True, env={"DEMO_OAUTH_LOG": str(log), "DEMO_TOKEN_SECONDS": "30"})
    first = start(http_spec(url, name="secure"), interactive_auth=True, open_url=Browser())
    await first.manager.wait_ready()
    assert first.manager.statuses()[0].state == "connected"
    await first.manager.aclose()
    before = await CredentialsTokenStorage("secure").get_tokens()

    browser = Browser()
    second = start(http_spec(url, name="secure"), open_url=browser)  # not interactive
    await second.manager.wait_ready()
    assert second.manager.statuses()[0].state == "connected", second.manager.statuses()[0].reason
    after = await CredentialsTokenStorage("secure").get_tokens()
    assert browser.opened == []
    assert after.access_token != before.access_token
    assert "refresh" in log.read_text().split()


def test_save_credential_keeps_mcp_tokens() -> None:
    from wyckoff_cli.storage.credentials import load_credentials, save_credential, save_credential_table

    save_credential_table("mcp_oauth", "srv", {"tokens": "{}", "redirect_port": 5})
    save_credential("anthropic", "sk-ant-x")
    data = tomllib.loads(credentials_file().read_text())
    assert data["mcp_oauth"]["srv"]["redirect_port"] == 5
    assert load_credentials() == {"anthropic": "sk-ant-x"}


async def test_a_slow_sign_in_extends_the_startup_timeout(
    start: Any, http_server: Any, tmp_path: Path
) -> None:
    url = http_server(oauth=True)
    browser = Browser(think=3.0)  # the person takes longer than the 1 s start-up timeout
    started = start(
        http_spec(url, name="secure", startup_timeout=1.0), interactive_auth=True, open_url=browser
    )
    await started.manager.wait_ready(15)
    assert started.manager.statuses()[0].state == "connected", started.manager.statuses()[0].reason
    assert any("sign in in your browser" in n for n in started.notices())
