"""The fake vendor server itself: scenarios, Markdown streaming, pacing, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.providers.conftest import VENDORS, call, make_provider
from wyckoff_cli.providers.base import TextChunk
from wyckoff_cli.testing.fake_server import FakeServer, load_scenarios
from wyckoff_cli.testing.wire import render

MARKDOWN = "# Title\n\nSome *text* with `code`.\n\n```python\nprint('hi')\n```\n\n- a\n- b\n" * 5


@pytest.mark.parametrize("vendor", VENDORS)
async def test_markdown_file_streams_in_small_deltas(server: FakeServer, tmp_path: Path, vendor: str) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text(MARKDOWN, encoding="utf-8")
    server.script({"markdown_file": str(answer), "chunk_size": 4})
    parts, _, chunks = await call(make_provider(server, vendor), tools=())
    texts = [c.text for c in chunks if isinstance(c, TextChunk)]
    assert "".join(texts) == MARKDOWN
    # On the wire, one event per 4 characters (the adapter joins what arrives together).
    deltas = _text_deltas(vendor, render(vendor, {"markdown_file": str(answer), "chunk_size": 4}).events)
    assert "".join(deltas) == MARKDOWN
    assert len(deltas) == -(-len(MARKDOWN) // 4)
    assert {len(delta) for delta in deltas[:-1]} == {4}


def _text_deltas(vendor: str, events: list[bytes]) -> list[str]:
    """The text each event carries, for the events that carry some."""
    texts: list[str] = []
    for event in events:
        data = next((line[6:] for line in event.split(b"\n") if line.startswith(b"data: ")), b"")
        if not data.startswith(b"{"):
            continue
        payload = json.loads(data)
        if vendor == "anthropic":
            delta = payload.get("delta") or {}
            text = delta.get("text", "") if delta.get("type") == "text_delta" else ""
        elif vendor == "gemini":
            parts = (payload.get("candidates") or [{}])[0].get("content", {}).get("parts", [])
            text = "".join(part.get("text", "") for part in parts)
        else:
            text = ((payload.get("choices") or [{}])[0].get("delta") or {}).get("content") or ""
        if text:
            texts.append(text)
    return texts


def test_pacing_follows_the_rate() -> None:
    rendered = render("openai", {"text": "x" * 400, "chunk_size": 4, "chars_per_second": 4000})
    assert rendered.event_interval == pytest.approx(0.001)
    with FakeServer() as server:
        server.script({"text": "x" * 400, "chunk_size": 4, "chars_per_second": 2000})
        request = urllib.request.Request(server.openai_url + "/chat/completions", data=b"{}", method="POST")
        started = time.monotonic()
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        assert time.monotonic() - started >= 0.15  # 400 characters at 2000/s
        assert body.count(b'"content":"xxxx"') == 100


def test_records_requests_cycles_and_reports_an_empty_queue(server: FakeServer) -> None:
    server.script({"text": "one"})
    post = urllib.request.Request(server.url + "/v1/messages", data=b'{"model": "m"}', method="POST")
    with urllib.request.urlopen(post, timeout=5) as response:
        assert b"message_start" in response.read()
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(post, timeout=5)
    assert caught.value.code == 500
    assert server.requests[0].body == {"model": "m"}
    assert server.requests[0].vendor == "anthropic"
    server.set_cycle()
    with urllib.request.urlopen(post, timeout=5) as response:
        assert b"one" in response.read()
    unknown = urllib.request.Request(server.url + "/v1/embeddings", data=b"{}", method="POST")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(unknown, timeout=5)
    assert caught.value.code == 404


def test_scenario_files(tmp_path: Path) -> None:
    listing = tmp_path / "list.json"
    listing.write_text(json.dumps([{"text": "a"}, {"status": 429}]))
    assert load_scenarios(listing) == ([{"text": "a"}, {"status": 429}], True)
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"responses": [{"text": "a"}], "cycle": False}))
    assert load_scenarios(wrapped) == ([{"text": "a"}], False)


def test_runnable_by_hand(tmp_path: Path) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps([{"text": "Offline hello."}]))
    process = subprocess.Popen(
        [sys.executable, "-m", "wyckoff_cli.testing.fake_server", "--scenario", str(scenario)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        lines = dict(process.stdout.readline().strip().split("=", 1) for _ in range(3))
        assert set(lines) == {"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL"}
        assert lines["OPENAI_BASE_URL"] == lines["ANTHROPIC_BASE_URL"] + "/v1"
        request = urllib.request.Request(
            lines["GOOGLE_GEMINI_BASE_URL"] + "/v1beta/models/m:streamGenerateContent?alt=sse",
            data=b"{}",
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert b"Offline hello." in response.read()
    finally:
        process.terminate()
        process.wait(timeout=10)
