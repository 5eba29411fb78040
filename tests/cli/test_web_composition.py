"""The session builder's part in the web tools: web_fetch in every session, the
client-side web_search only for models without their vendor's search."""

from __future__ import annotations

from pathlib import Path

import pytest

from wyckoff_cli.providers.server_search import FLAG
from wyckoff_cli.session.builder import SessionBuilder, open_workspace
from wyckoff_cli.session.models import resolve_model_spec
from wyckoff_cli.storage import paths


def write_config(text: str) -> None:
    path = paths.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("model", "tools"),
    [
        ("anthropic:claude-sonnet-4-5", ["web_fetch"]),  # Anthropic searches server-side
        ("gemini:gemini-3-pro-preview", ["web_fetch"]),
        ("openai:gpt-5.1-codex", ["web_fetch"]),  # Responses API
        ("openai:gpt-4.1-nano", ["web_fetch", "web_search"]),
        ("gemini:gemini-2.5-flash", ["web_fetch", "web_search"]),
    ],
)
def test_web_tools_per_model(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, model: str, tools: list[str]
) -> None:
    for variable in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "BRAVE_API_KEY"):
        monkeypatch.setenv(variable, "k-test")
    write_config('[web]\nsearch = "brave"\n')
    session = SessionBuilder(open_workspace(workspace), cwd=workspace).build(model=model, mode="default")
    names = session.registry.names()
    assert [n for n in names if n.startswith("web_")] == tools
    assert session.context is not None
    prompt = session.context.system_prompt
    assert "## web_fetch" in prompt and ("## web_search" in prompt) == ("web_search" in tools)


def test_server_search_can_be_turned_off(workspace: Path) -> None:
    write_config("[web]\nserver_search = false\n")
    config = open_workspace(workspace).config
    assert FLAG not in resolve_model_spec("anthropic:claude-sonnet-4-5", config).extra
    write_config("")
    assert FLAG in resolve_model_spec("anthropic:claude-sonnet-4-5", open_workspace(workspace).config).extra


def test_no_web_fetch_when_turned_off(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k-test")
    write_config("[web]\nfetch = false\n")
    session = SessionBuilder(open_workspace(workspace)).build(
        model="anthropic:claude-sonnet-4-5", mode="default"
    )
    assert "web_fetch" not in session.registry.names()
