"""OpenTelemetry export (issue 33): a session through the fake server, with the real
SDKs and the real OTLP/HTTP exporter, sends its traces and metrics to a collector on
127.0.0.1, which decodes them with the `opentelemetry-proto` types."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.session.otlp_collector import Collector, OtlpCollector, ReceivedSpan
from tests.session.subagent_support import flat_cost, make_builder, task_call
from tests.waiting import until_sync
from wyckoff_cli.core import events as ev
from wyckoff_cli.core.approval import ApprovalDecision
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.session import requests as rq
from wyckoff_cli.session.controller import ChatController
from wyckoff_cli.session.telemetry_settings import ExportSettings, export_settings
from wyckoff_cli.storage.telemetry_config import TelemetryConfig
from wyckoff_cli.testing.fake_server import FakeServer

KEY = "fake-key-for-the-fake-server"
MODEL = "anthropic:claude-sonnet-4-5"
SECRET = "sk-ant-telemetrysecret0123456789abcdef"


def _script(server: FakeServer) -> None:
    server.script(
        {
            "tool_calls": [task_call("explore", "Where is answer?", call_id="t_task")],
            "usage": {"input_tokens": 1000, "output_tokens": 10},
        },
        {
            "tool_calls": [{"name": "glob", "args": {"pattern": "*.py"}, "id": "t_glob"}],
            "usage": {"input_tokens": 2000, "output_tokens": 20},
        },
        {"text": "in lib.py", "usage": {"input_tokens": 3000, "output_tokens": 30}},
        {
            "tool_calls": [
                {
                    "name": "write_file",
                    "args": {"path": "note.txt", "content": f"key {SECRET}"},
                    "id": "t_write",
                }
            ],
            "usage": {"input_tokens": 4000, "output_tokens": 40},
        },
        {"text": f"Done; the key was {SECRET}.", "usage": {"input_tokens": 5000, "output_tokens": 50}},
    )


async def _session_run(
    workspace: Path, server: FakeServer, telemetry: TelemetryConfig, prompt: str
) -> tuple[list[ev.RuntimeEvent], str | None]:
    (workspace / "lib.py").write_text("x = 1\n", encoding="utf-8")
    provider = build_provider(ModelSpec("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key=KEY))
    builder = make_builder(workspace, lambda _model: provider)
    builder.config.telemetry = telemetry
    controller = ChatController(
        builder, model=MODEL, price=lambda model, usage: (flat_cost(model, usage.usage), 0.0)
    )
    assert controller.telemetry.enabled
    events: list[ev.RuntimeEvent] = []
    async for event in controller.handle(rq.Turn(prompt)):
        events.append(event)
        if (asked := ev.approval_of(event)) is not None:
            asked.respond(ApprovalDecision.allow())
    session_id = controller.id
    await controller.aclose()
    return events, session_id


def _by_name(spans: list[ReceivedSpan], name: str) -> list[ReceivedSpan]:
    return [s for s in spans if s.name == name]


def _one(spans: list[ReceivedSpan], name: str, **attributes: Any) -> ReceivedSpan:
    found = [s for s in _by_name(spans, name) if all(s.attributes.get(k) == v for k, v in attributes.items())]
    assert len(found) == 1, (name, attributes, [(s.name, s.attributes) for s in spans])
    return found[0]


def _exported(collector: Collector) -> list[ReceivedSpan]:
    return until_sync(
        lambda: (
            (spans := collector.spans())
            and any(s.name == "wyckoff.session" for s in spans)
            and collector.metrics
            and spans
        ),
        what="the session's spans and metrics at the collector",
    )


async def test_traces_and_metrics_reach_the_collector(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-from-env=env-value")
    with OtlpCollector() as collector, FakeServer() as server:
        _script(server)
        settings = TelemetryConfig(
            otlp_endpoint=collector.url, headers={"x-team": "wyckoff"}, export_interval=600
        )
        events, session_id = await _session_run(
            workspace, server, settings, f"find answer, my key is {SECRET}"
        )
        spans = _exported(collector)
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "completed"
    assert session_id is not None

    session = _one(spans, "wyckoff.session")
    turn = _one(spans, "wyckoff.turn")
    assert turn.parent_span_id == session.span_id
    assert {s.trace_id for s in spans} == {session.trace_id}  # one trace per session
    assert all(s.attributes["wyckoff.session.id"] == session_id for s in spans)
    assert collector.resource_attributes()["service.name"] == "wyckoff"

    task = _one(spans, "wyckoff.tool_call", **{"gen_ai.tool.name": "task"})
    write = _one(spans, "wyckoff.tool_call", **{"gen_ai.tool.name": "write_file"})
    assert task.parent_span_id == write.parent_span_id == turn.span_id
    child = _one(spans, "wyckoff.subagent")
    assert child.parent_span_id == task.span_id  # the sub-agent hangs under its `task` call
    child_id = child.attributes["wyckoff.agent.id"]
    assert child_id != "main" and child.attributes["wyckoff.agent.name"] == "explore"
    assert child.attributes["wyckoff.parent.agent.id"] == "main"
    assert child.attributes["wyckoff.parent.call.id"] == "t_task"
    glob = _one(spans, "wyckoff.tool_call", **{"gen_ai.tool.name": "glob"})
    assert glob.parent_span_id == child.span_id and glob.attributes["wyckoff.agent.id"] == child_id

    calls = _by_name(spans, "wyckoff.model_call")
    assert sorted(c.attributes["gen_ai.usage.input_tokens"] for c in calls) == [1000, 2000, 3000, 4000, 5000]
    parents = {c.attributes["gen_ai.usage.input_tokens"]: c.parent_span_id for c in calls}
    assert parents[1000] == parents[4000] == parents[5000] == turn.span_id
    assert parents[2000] == parents[3000] == child.span_id
    assert all(c.attributes["wyckoff.purpose"] == "turn" for c in calls)
    assert {e for s in spans for e in s.events} >= {"approval_request", "approval_result"}

    # nothing of what was said without `log_content`, and never the key
    content_keys = {"wyckoff.prompt", "wyckoff.response", "wyckoff.tool.arguments", "wyckoff.tool.result"}
    assert not any(content_keys & s.attributes.keys() for s in spans)
    assert not any(SECRET in str(s.attributes) for s in spans)

    # metrics: tokens by kind, agent and purpose; cost; tool durations; approvals
    assert collector.total("wyckoff.tokens", kind="input") == 15_000
    assert collector.total("wyckoff.tokens", kind="output") == 150
    assert collector.total("wyckoff.tokens", kind="input", agent="explore") == 5000
    assert collector.total("wyckoff.tokens", kind="input", agent="main", purpose="turn") == 10_000
    assert collector.total("wyckoff.cost") == pytest.approx(15_150 / 1_000_000)
    assert collector.total("wyckoff.model_calls", model=MODEL) == 5
    assert collector.total("wyckoff.approvals", phase="asked", tool="write_file") == 1
    assert collector.total("wyckoff.approvals", phase="answered", decision="allow") == 1
    durations = collector.histogram_counts("wyckoff.tool.duration")
    assert durations[(("agent", "explore"), ("outcome", "ok"), ("tool", "glob"))] == 1
    assert durations[(("agent", "main"), ("outcome", "ok"), ("tool", "write_file"))] == 1
    assert all(h.get("x-team") == "wyckoff" and h.get("x-from-env") == "env-value" for h in collector.headers)


async def test_log_content_puts_the_text_on_the_spans_with_secrets_redacted(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WYCKOFF_TEST_API_KEY", "plain-looking-value-42")  # a known key: redacted by value
    with OtlpCollector() as collector, FakeServer() as server:
        _script(server)
        settings = TelemetryConfig(otlp_endpoint=collector.url, log_content=True, export_interval=600)
        prompt = f"find answer; keys {SECRET} and plain-looking-value-42"
        await _session_run(workspace, server, settings, prompt)
        spans = _exported(collector)
    turn = _one(spans, "wyckoff.turn")
    assert turn.attributes["wyckoff.prompt"].startswith("find answer; keys ")
    assert "[REDACTED]" in turn.attributes["wyckoff.prompt"]
    assert turn.attributes["wyckoff.response"].startswith("Done; the key was ")
    write = _one(spans, "wyckoff.tool_call", **{"gen_ai.tool.name": "write_file"})
    assert '"path": "note.txt"' in write.attributes["wyckoff.tool.arguments"]
    assert "wyckoff.tool.result" in write.attributes
    shown = str([s.attributes for s in spans])
    assert SECRET not in shown and "plain-looking-value-42" not in shown


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_collector_that_is_down_never_breaks_the_session(workspace: Path) -> None:
    with FakeServer() as server:
        _script(server)
        settings = TelemetryConfig(otlp_endpoint=f"http://127.0.0.1:{_closed_port()}", export_interval=0.1)
        events, _ = await _session_run(workspace, server, settings, "find answer")
    done = events[-1]
    assert isinstance(done, ev.TurnDone) and done.reason == "completed"
    assert not [e for e in events if isinstance(e, ev.Notice) and "OpenTelemetry" in e.message]


def test_closing_knows_a_collector_that_is_down() -> None:
    """Closing does not wait for a collector that refuses connections."""
    from wyckoff_cli.session.otel_export import collector_listens

    assert not collector_listens(f"http://127.0.0.1:{_closed_port()}")
    with OtlpCollector() as collector:
        assert collector_listens(collector.url)
        assert collector_listens(collector.url.removeprefix("http://"))  # a bare host:port (grpc)
    assert collector_listens("")  # nothing to tell: the exporter reports it


async def test_without_the_extra_the_session_says_so_once_and_runs(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "wyckoff_cli.session.otel_export", None)  # `import` fails
    provider = build_provider(
        ModelSpec("anthropic", "claude-sonnet-4-5", base_url="http://127.0.0.1:9", api_key=KEY)
    )
    builder = make_builder(workspace, lambda _model: provider)
    builder.config.telemetry = TelemetryConfig(otlp_endpoint="http://127.0.0.1:4318")
    with FakeServer() as server:
        server.script({"text": "one"}, {"text": "two"})
        provider = build_provider(
            ModelSpec("anthropic", "claude-sonnet-4-5", base_url=server.url, api_key=KEY)
        )
        builder.provider_factory = lambda _model: provider
        controller = ChatController(builder, model=MODEL)
        assert not controller.telemetry.enabled
        first = [e async for e in controller.handle(rq.Turn("hi"))]
        second = [e async for e in controller.handle(rq.Turn("again"))]
        await controller.aclose()
    notices = [e.message for e in first + second if isinstance(e, ev.Notice)]
    assert len(notices) == 1 and "pip install 'wyckoff[otel]'" in notices[0]
    assert "[telemetry] otlp_endpoint" in notices[0]
    assert isinstance(second[-1], ev.TurnDone) and second[-1].reason == "completed"


@pytest.mark.parametrize(
    ("config", "env", "expected"),
    [
        (TelemetryConfig(), {}, None),  # off by default
        (
            TelemetryConfig(),
            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"},
            ExportSettings(None, "http/protobuf", where="OTEL_EXPORTER_OTLP_ENDPOINT"),
        ),
        (
            TelemetryConfig(otlp_endpoint="http://c:4318/"),
            {},
            ExportSettings("http://c:4318", "http/protobuf"),
        ),
        (
            TelemetryConfig(otlp_endpoint="http://c:4318"),
            {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
            ExportSettings("http://c:4318", "grpc"),
        ),
        (
            TelemetryConfig(otlp_endpoint="http://c:4318", protocol="http/protobuf"),
            {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
            ExportSettings("http://c:4318", "http/protobuf"),
        ),
        (TelemetryConfig(otlp_endpoint="http://c:4318"), {"OTEL_SDK_DISABLED": "true"}, None),
        (
            TelemetryConfig(otlp_endpoint="http://c:4318", log_content=True, headers={"a": "b"}),
            {},
            ExportSettings("http://c:4318", "http/protobuf", {"a": "b"}, log_content=True),
        ),
    ],
)
def test_export_settings(
    config: TelemetryConfig, env: dict[str, str], expected: ExportSettings | None
) -> None:
    assert export_settings(config, env) == expected


def test_an_unknown_protocol_is_a_notice_naming_the_variable(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
    builder = make_builder(workspace, lambda _model: build_provider(ModelSpec("anthropic", "x", api_key=KEY)))
    controller = ChatController(builder, model=MODEL)
    notice = controller.telemetry.take_notice()
    assert not controller.telemetry.enabled
    assert "OTEL_EXPORTER_OTLP_PROTOCOL='http/json' is not supported" in notice


def test_the_telemetry_table_is_read_and_checked(workspace: Path) -> None:
    from wyckoff_cli.core.errors import ConfigError
    from wyckoff_cli.storage import paths
    from wyckoff_cli.storage.config import load_config

    config_file = paths.config_file()
    config_file.parent.mkdir(parents=True, exist_ok=True)
    config_file.write_text(
        '[telemetry]\notlp_endpoint = "http://127.0.0.1:4318"\nlog_content = true\n', encoding="utf-8"
    )
    telemetry = load_config(workspace).config.telemetry
    assert telemetry.otlp_endpoint == "http://127.0.0.1:4318" and telemetry.log_content
    config_file.write_text('[telemetry]\nprotocol = "carrier-pigeon"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match="telemetry.protocol"):
        load_config(workspace)


def test_wyckoff_run_exports_to_the_standard_endpoint_variable(workspace: Path) -> None:
    """`wyckoff run` (a real process) with only `OTEL_EXPORTER_OTLP_ENDPOINT` set: its
    turn, model calls and tool call reach the collector, priced from the catalogue."""
    import os
    import subprocess

    (workspace / "lib.py").write_text("x = 1\n", encoding="utf-8")
    with OtlpCollector() as collector, FakeServer() as server:
        server.script(
            {
                "tool_calls": [{"name": "glob", "args": {"pattern": "*.py"}}],
                "usage": {"input_tokens": 1000, "output_tokens": 10},
            },
            {"text": "lib.py", "usage": {"input_tokens": 2000, "output_tokens": 20}},
        )
        env = dict(
            os.environ,
            ANTHROPIC_BASE_URL=server.url,
            ANTHROPIC_API_KEY=KEY,
            OTEL_EXPORTER_OTLP_ENDPOINT=collector.url,
        )
        result = subprocess.run(
            [sys.executable, "-m", "wyckoff_cli", "run", "--model", MODEL, "which files?"],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        spans = _exported(collector)
    assert {s.name for s in spans} >= {
        "wyckoff.session",
        "wyckoff.turn",
        "wyckoff.model_call",
        "wyckoff.tool_call",
    }
    assert _one(spans, "wyckoff.turn").attributes["wyckoff.done.reason"] == "completed"
    assert collector.total("wyckoff.tokens", kind="input") == 3000
    assert collector.total("wyckoff.cost") == pytest.approx(3000 * 3e-6 + 30 * 15e-6)  # Sonnet's prices
