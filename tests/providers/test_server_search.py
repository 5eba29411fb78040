"""The vendors' own web search through the real SDKs and the loopback fake server:
the request asks for it, the search blocks / grounding metadata stream in as
server-tool parts and `server_tool` chunks with sources, they go back verbatim, and
the searches are counted and priced per the catalogue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.providers.conftest import call, make_provider
from tests.runtime.support import collect, of_type
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.messages import Message, ServerToolPart, TextPart
from wyckoff_cli.models.costs import cost_of
from wyckoff_cli.models.facts import resolve_model_facts
from wyckoff_cli.providers.base import ServerToolChunk
from wyckoff_cli.providers.server_search import FLAG, searches_server_side, with_server_search
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.runtime.loop import AgentRuntime
from wyckoff_cli.testing.fake_server import FakeServer
from wyckoff_cli.tools.registry import ToolRegistry

RESULTS = [
    {
        "url": "https://peps.python.org/pep-0758/",
        "title": "PEP 758",
        "snippet": "Allow except without parentheses",
    },
    {"url": "https://docs.python.org/3.14/whatsnew/3.14.html", "title": "What's new in Python 3.14"},
]
SCENARIO = {
    "web_search": {
        "query": "python 3.14 release notes",
        "results": RESULTS,
        "preamble": "Let me look that up.",
    },
    "text": "Python 3.14 allows except clauses without parentheses.",
    "usage": {"input_tokens": 3000, "output_tokens": 80},
}
SEARCH_VENDORS = {
    "anthropic": ("anthropic", "claude-sonnet-4-5", {}),
    "openai-responses": ("openai", "gpt-5.1", {"api": "responses"}),
    "gemini": ("gemini", "gemini-3-pro-preview", {}),
}


def searching(server: FakeServer, vendor: str, *, on: bool = True) -> Any:
    provider, model, options = SEARCH_VENDORS[vendor]
    extra = {FLAG: True} if on else {}
    return make_provider(server, provider, model=model, extra=extra, **options)


def search_tools(vendor: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    tools = body.get("tools") or []
    if vendor == "anthropic":
        return [t for t in tools if t.get("type", "").startswith("web_search")]
    if vendor == "gemini":
        return [t for t in tools if "googleSearch" in t]
    return [t for t in tools if t.get("type") == "web_search"]


@pytest.mark.parametrize("vendor", list(SEARCH_VENDORS))
async def test_search_is_requested_streamed_and_counted(server: FakeServer, vendor: str) -> None:
    server.script(SCENARIO)
    parts, usage, chunks = await call(searching(server, vendor))
    body = server.bodies[0]
    expected_tool = {
        "anthropic": {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
        "openai-responses": {"type": "web_search"},
        "gemini": {"googleSearch": {}},
    }[vendor]
    assert [{k: v for k, v in t.items() if k != "cache_control"} for t in search_tools(vendor, body)] == [
        expected_tool
    ]
    assert any(t.get("name") == "read_file" or "functionDeclarations" in t for t in body["tools"])
    if vendor == "openai-responses":
        assert "web_search_call.action.sources" in body["include"]
    server_chunks = [c for c in chunks if isinstance(c, ServerToolChunk)]
    summaries = [c.summary for c in server_chunks]
    assert "searched the web: python 3.14 release notes" in summaries
    urls = {s["url"] for c in server_chunks for s in c.sources}
    if vendor == "gemini":
        assert any("grounding-api-redirect" in u for u in urls)
        assert {s["title"] for c in server_chunks for s in c.sources} >= {"PEP 758"}
    else:
        assert "https://peps.python.org/pep-0758/" in urls
    stored = [p for p in parts if isinstance(p, ServerToolPart)]
    assert stored and all(p.provider == vendor for p in stored)
    text = "".join(p.text for p in parts if isinstance(p, TextPart))
    assert "Python 3.14 allows except clauses without parentheses." in text
    assert usage.web_searches == 1


async def test_anthropic_blocks_go_back_verbatim(server: FakeServer) -> None:
    server.script(SCENARIO, {"text": "You're welcome."})
    provider = searching(server, "anthropic")
    parts, _usage, _chunks = await call(provider)
    history = [
        Message.user("what's new in 3.14?"),
        Message("assistant", tuple(parts)),
        Message.user("thanks"),
    ]
    await call(provider, history)
    sent = server.bodies[1]["messages"][1]["content"]
    kinds = [block["type"] for block in sent]
    assert kinds == ["text", "server_tool_use", "web_search_tool_result", "text"]
    use = sent[1]
    assert use["id"] == "srvtoolu_01FakeSearch" and use["input"] == {"query": "python 3.14 release notes"}
    result = sent[2]
    assert result["tool_use_id"] == "srvtoolu_01FakeSearch"
    assert result["content"][0]["encrypted_content"] == "EqgfCioIARgBIiQ0fake-encrypted"
    assert result["content"][0]["url"] == RESULTS[0]["url"]


async def test_responses_search_call_goes_back(server: FakeServer) -> None:
    server.script(SCENARIO, {"text": "ok"})
    provider = searching(server, "openai-responses")
    parts, _usage, _chunks = await call(provider)
    history = [Message.user("q"), Message("assistant", tuple(parts)), Message.user("more")]
    await call(provider, history)
    items = server.bodies[1]["input"]
    search = next(i for i in items if i.get("type") == "web_search_call")
    assert search["id"] == "ws_fake_1" and search["action"]["query"] == "python 3.14 release notes"


async def test_gemini_grounding_is_kept_but_not_sent(server: FakeServer) -> None:
    scenario = {**SCENARIO, "web_search": {**SCENARIO["web_search"], "more_queries": ["pep 758"]}}
    server.script(scenario, {"text": "ok"})
    provider = searching(server, "gemini")
    parts, usage, chunks = await call(provider)
    assert usage.web_searches == 2  # Google bills grounding per search query
    metadata = [p for p in parts if isinstance(p, ServerToolPart) and p.kind == "metadata"]
    assert metadata and metadata[0].data["webSearchQueries"] == ["python 3.14 release notes", "pep 758"]
    history = [Message.user("q"), Message("assistant", tuple(parts)), Message.user("more")]
    await call(provider, history)
    assert "groundingMetadata" not in str(server.bodies[1]["contents"])


@pytest.mark.parametrize("vendor", list(SEARCH_VENDORS))
async def test_no_search_tool_when_off(server: FakeServer, vendor: str) -> None:
    server.script({"text": "plain"})
    await call(searching(server, vendor, on=False))
    assert search_tools(vendor, server.bodies[0]) == []


async def test_through_the_runtime_events_history_and_cost(server: FakeServer, tmp_path: Path) -> None:
    server.script(SCENARIO)
    provider = searching(server, "anthropic")
    runtime = AgentRuntime(provider, ToolRegistry([]), workspace=tmp_path)
    events, history = await collect(runtime, "what's new in python 3.14?")
    used = of_type(events, ev.ServerToolUsed)
    assert used[0].summary == "searched the web: python 3.14 release notes"
    assert any(s["url"] == RESULTS[0]["url"] for e in used for s in e.sources)
    answer = history[-1]
    assert answer.role == "assistant" and len(answer.server_tools) == 2
    usage_event = of_type(events, ev.UsageReported)[0]
    assert usage_event.web_searches == 1
    prices = resolve_model_facts("anthropic:claude-sonnet-4-5").prices
    assert prices.web_search == 10.0
    cost = cost_of(usage_event.usage, prices)
    assert cost is not None and cost.web_search == pytest.approx(0.01)
    assert cost.total == pytest.approx(3000 * 3 / 1e6 + 80 * 15 / 1e6 + 0.01)
    assert ev.UsageReported.from_usage("m", usage_event.usage).web_searches == 1


@pytest.mark.parametrize(
    ("provider", "model", "options", "expected"),
    [
        ("anthropic", "claude-sonnet-4-5", {}, True),
        ("anthropic", "claude-haiku-4-5-20251001", {}, True),
        ("anthropic", "claude-3-haiku-20240307", {}, False),  # not in the catalogue: no search price
        ("openai", "gpt-5.1-codex", {}, True),  # served by the Responses API
        ("openai", "gpt-5.1", {}, False),  # Chat Completions by default: the client tool instead
        ("openai", "gpt-5.1", {"api": "responses"}, True),
        ("openai", "gpt-4.1-nano", {"api": "responses"}, False),
        ("gemini", "gemini-3-pro-preview", {}, True),
        ("gemini", "gemini-2.5-pro", {}, False),
        ("openai", "deepseek-chat", {"base_url": "https://api.deepseek.com/v1"}, False),
        ("ollama", "qwen3", {}, False),
    ],
)
def test_which_models_get_the_vendor_search(
    provider: str, model: str, options: dict[str, Any], expected: bool
) -> None:
    spec = with_server_search(ModelSpec(provider, model, **options), True)
    assert (FLAG in spec.extra) is expected
    assert FLAG not in with_server_search(ModelSpec(provider, model, **options), False).extra


def test_searches_server_side_looks_through_wrappers(server: FakeServer) -> None:
    from wyckoff_cli.providers.factory import build_fallback

    on = ModelSpec("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key="k", extra={FLAG: True})
    off = ModelSpec("gemini", "gemini-2.5-pro", base_url=server.url, api_key="k")
    assert searches_server_side(build_fallback([on, off])) is True
    assert searches_server_side(build_fallback([off, on])) is False
    assert searches_server_side(object()) is False
