"""The OpenTelemetry side of session/telemetry.py: the SDK's providers and exporters,
and the translation of the event stream into spans and metrics (docs/COST.md).

Traces: `wyckoff.session` → `wyckoff.turn` → `wyckoff.model_call` / `wyckoff.tool_call`
/ `wyckoff.subagent` (a sub-agent's own model and tool calls under it, its span under
the `task` call that started it). Every span carries the session id and the agent's id
(`main` or the child's), name and parent. Metrics: `wyckoff.tokens` (by kind, model,
agent, purpose), `wyckoff.cost` (USD), `wyckoff.model_calls`, `wyckoff.tool.duration`
(ms) and `wyckoff.approvals` (asked and answered). Text (prompt, answer, tool arguments
and results) goes on spans only with `log_content`, redacted either way.

Imported only when export is on: this module imports the SDK at the top.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.metrics import CallbackOptions, Meter, Observation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import MetricExporter, PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import Span, Status, StatusCode
from opentelemetry.util.re import parse_env_headers

from wyckoff_cli import __version__
from wyckoff_cli.core import events as ev
from wyckoff_cli.session.telemetry_settings import ExportSettings, PriceFn

CLOSE_WAIT_SECONDS = 3.0  # the longest closing waits for the last export
PROBE_SECONDS = 0.25  # the longest closing waits to learn whether the collector listens
CONTENT_CHARS = 8_000  # a text attribute is cut to this many characters
MAIN = "main"
TURN_EVENTS = (
    ev.ModelStart,
    ev.ToolCallsReceived,
    ev.ToolStarted,
    ev.ApprovalRequested,
    ev.SubagentEvent,
    ev.TextDelta,
)
TOKEN_KINDS = ("input", "output", "cache_read", "cache_write", "reasoning")


def _exporters(settings: ExportSettings) -> tuple[SpanExporter, MetricExporter]:
    import os

    headers = dict(parse_env_headers(os.environ.get("OTEL_EXPORTER_OTLP_HEADERS", ""), liberal=True))
    headers.update(settings.headers)
    if settings.protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
                OTLPMetricExporter as GrpcMetrics,
            )
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcSpans
        except ImportError:
            raise ImportError(
                "OTLP over grpc needs `pip install opentelemetry-exporter-otlp-proto-grpc`"
            ) from None
        return (
            GrpcSpans(endpoint=settings.endpoint, headers=headers or None),
            GrpcMetrics(endpoint=settings.endpoint, headers=headers or None),
        )
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    base = settings.endpoint
    return (
        OTLPSpanExporter(endpoint=f"{base}/v1/traces" if base else None, headers=headers or None),
        OTLPMetricExporter(endpoint=f"{base}/v1/metrics" if base else None, headers=headers or None),
    )


class _Sums:
    """A counter kept as plain sums by labels and reported at each collection (an
    observable counter): adding costs a dict update on the session's thread, not the
    SDK's per-measurement work."""

    def __init__(self, meter: Meter, name: str, unit: str, description: str) -> None:
        self._values: dict[tuple[tuple[str, str], ...], float] = {}
        self._lock = threading.Lock()
        meter.create_observable_counter(name, [self._observe], unit, description)

    def add(self, amount: float, labels: dict[str, str]) -> None:
        key = tuple(labels.items())
        with self._lock:
            self._values[key] = self._values.get(key, 0) + amount

    def _observe(self, _options: CallbackOptions) -> Iterable[Observation]:
        with self._lock:
            totals = list(self._values.items())
        return [Observation(value, dict(labels)) for labels, value in totals]


@dataclass
class _Agent:
    """One agent's open spans: `scope` is what its calls hang under (the turn span for
    the main agent, its `wyckoff.subagent` span for a child)."""

    id: str
    name: str
    parent_id: str | None = None
    parent_call_id: str | None = None
    scope: Span | None = None
    model: Span | None = None
    tools: dict[str, Span] = field(default_factory=dict)
    children: dict[str, _Agent] = field(default_factory=dict)

    def __post_init__(self) -> None:
        shown = {"wyckoff.agent.id": self.id, "wyckoff.agent.name": self.name}
        if self.parent_id is not None:
            shown["wyckoff.parent.agent.id"] = self.parent_id
        if self.parent_call_id is not None:
            shown["wyckoff.parent.call.id"] = self.parent_call_id
        self._attributes = shown

    def attributes(self) -> dict[str, str]:
        """Who the agent is, for every span it makes (the same dict each time: copy to change)."""
        return self._attributes


class OtelExporter:
    """Spans and metrics of one controller's sessions, exported over OTLP."""

    def __init__(self, settings: ExportSettings, price: PriceFn, redact: Callable[[str], str]) -> None:
        self.settings = settings
        self._price = price
        self._redact = redact
        spans, metrics = _exporters(settings)
        self._span_exporter, self._metric_exporter = spans, metrics
        resource = Resource.create({"service.name": "wyckoff", "service.version": __version__})
        self._tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self._tracer_provider.add_span_processor(BatchSpanProcessor(spans))
        reader = PeriodicExportingMetricReader(
            metrics, export_interval_millis=settings.export_interval * 1000
        )
        self._meter_provider = MeterProvider([reader], resource=resource, shutdown_on_exit=False)
        self._tracer = self._tracer_provider.get_tracer("wyckoff", __version__)
        meter = self._meter_provider.get_meter("wyckoff", __version__)
        self._tokens = _Sums(meter, "wyckoff.tokens", "{token}", "Tokens of model calls, by kind")
        self._cost = _Sums(meter, "wyckoff.cost", "USD", "Cost of model calls")
        self._calls = _Sums(meter, "wyckoff.model_calls", "{call}", "Model calls")
        self._tool_ms = meter.create_histogram("wyckoff.tool.duration", "ms", "Tool call durations")
        self._approvals = _Sums(meter, "wyckoff.approvals", "{approval}", "Approvals asked, answered")
        self._session_id: str | None = None
        self._session: Span | None = None
        self._turn: Span | None = None
        self._prompted = False  # the turn's prompt is on its span
        self._main = _Agent(MAIN, MAIN)

    # ---------------------------------------------------------------- spans

    def _start(self, name: str, parent: Span | None, attributes: dict[str, Any]) -> Span:
        context = trace.set_span_in_context(parent) if parent is not None else None
        session = {"wyckoff.session.id": self._session_id} if self._session_id else {}
        return self._tracer.start_span(name, context=context, attributes={**session, **attributes})

    def _text(self, text: str) -> str:
        redacted = self._redact(text)
        return redacted if len(redacted) <= CONTENT_CHARS else redacted[:CONTENT_CHARS] + "…"

    def _open_session(self, session_id: str | None) -> None:
        if self._session is not None and session_id == self._session_id:
            return
        self._end_session()
        self._session_id = session_id
        self._session = self._start("wyckoff.session", None, {})

    def _end_session(self) -> None:
        self._end_turn()
        if self._session is not None:
            self._session.end()
            self._session = None

    def _open_turn(self) -> None:
        if self._turn is None:
            self._turn = self._start("wyckoff.turn", self._session, self._main.attributes())
            self._main.scope = self._turn
            self._prompted = False

    def _end_turn(self, done: ev.TurnDone | None = None) -> None:
        self._end_agent(self._main)
        if self._turn is not None:
            if done is not None:
                self._finish_scope(self._turn, done)
            self._turn.end()
            self._turn = None
            self._main.scope = None

    def _finish_scope(self, span: Span, done: ev.TurnDone) -> None:
        span.set_attribute("wyckoff.done.reason", done.reason)
        span.set_attribute("wyckoff.rounds", done.rounds)
        for key, value in done.usage.items():
            span.set_attribute(f"wyckoff.usage.{key}", value)
        if done.cost_usd is not None:
            span.set_attribute("wyckoff.cost_usd", done.cost_usd)
        if self.settings.log_content and done.text:
            span.set_attribute("wyckoff.response", self._text(done.text))
        if done.reason == "error":
            span.set_status(Status(StatusCode.ERROR, done.reason))

    def _end_agent(self, agent: _Agent) -> None:
        """End what `agent` still has open (its children first); not its scope."""
        for child in agent.children.values():
            self._end_agent(child)
            if child.scope is not None:
                child.scope.end()
                child.scope = None
        agent.children.clear()
        if agent.model is not None:
            agent.model.end()
            agent.model = None
        for span in agent.tools.values():
            span.set_status(Status(StatusCode.ERROR, "unfinished"))
            span.end()
        agent.tools.clear()

    def _child(self, agent: _Agent, wrapped: ev.SubagentEvent) -> _Agent:
        child = agent.children.get(wrapped.agent_id)
        if child is None:
            child = _Agent(wrapped.agent_id, wrapped.agent, agent.id, wrapped.parent_call_id)
            parent = agent.tools.get(wrapped.parent_call_id) or agent.scope
            child.scope = self._start("wyckoff.subagent", parent, child.attributes())
            agent.children[wrapped.agent_id] = child
        return child

    # ---------------------------------------------------------------- events

    def observe(self, event: ev.RuntimeEvent, session_id: str | None) -> None:
        self._open_session(session_id)
        if isinstance(event, TURN_EVENTS) or (
            isinstance(event, ev.UsageReported) and event.purpose == "turn"
        ):
            self._open_turn()
        if isinstance(event, ev.MessageCommitted) and event.message.get("role") == "user":
            self._open_turn()
            if self.settings.log_content and self._turn is not None and not self._prompted:
                self._prompted = True  # the person's message, not a later note of the runtime's
                self._turn.set_attribute("wyckoff.prompt", self._text(_message_text(event.message)))
        self._handle(event, self._main)

    def _handle(self, event: ev.RuntimeEvent, agent: _Agent) -> None:
        match event:
            case ev.SubagentEvent():
                self._handle(event.event, self._child(agent, event))
            case ev.ModelStart(round=round_, model=model):
                if agent.model is not None:
                    agent.model.end()
                agent.model = self._start(
                    "wyckoff.model_call",
                    agent.scope,
                    {**agent.attributes(), "gen_ai.request.model": model, "wyckoff.round": round_},
                )
            case ev.UsageReported():
                self._usage(event, agent)
            case ev.ToolStarted(id=call_id, name=name, args=args) if call_id not in agent.tools:
                attributes: dict[str, Any] = {
                    **agent.attributes(),
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": call_id,
                }
                if self.settings.log_content:
                    attributes["wyckoff.tool.arguments"] = self._text(json.dumps(args, ensure_ascii=False))
                agent.tools[call_id] = self._start("wyckoff.tool_call", agent.scope, attributes)
            case ev.ToolSucceeded(id=call_id, name=name, result=text, elapsed_ms=ms):
                self._tool_done(agent, call_id, name, "ok", text, ms)
            case ev.ToolFailed(id=call_id, name=name, error=text, elapsed_ms=ms):
                self._tool_done(agent, call_id, name, "error", text, ms)
            case ev.ApprovalRequested(name=name):
                self._approvals.add(1, {"phase": "asked", "tool": name, "agent": agent.name})
                if agent.scope is not None:
                    agent.scope.add_event("approval_request", {"gen_ai.tool.name": name})
            case ev.ApprovalDecided(name=name, decision=decision):
                labels = {"phase": "answered", "decision": decision, "tool": name, "agent": agent.name}
                self._approvals.add(1, labels)
                if agent.scope is not None:
                    agent.scope.add_event("approval_result", {"gen_ai.tool.name": name, "decision": decision})
            case ev.TurnFailed(kind=kind, message=message):
                scope = agent.scope or self._session
                if scope is not None:
                    scope.set_status(Status(StatusCode.ERROR, f"{kind}: {self._text(message)}"))
            case ev.Compacted(before_tokens=before, after_tokens=after, method=method):
                target = agent.scope or self._session
                if target is not None:
                    target.add_event(
                        "compaction", {"before_tokens": before, "after_tokens": after, "method": method}
                    )
            case ev.TurnDone():
                if agent is self._main:
                    self._end_turn(event)
                elif agent.scope is not None:
                    self._end_agent(agent)
                    self._finish_scope(agent.scope, event)
            case _:
                pass

    def _usage(self, usage: ev.UsageReported, agent: _Agent) -> None:
        labels = {"model": usage.model, "agent": agent.name, "purpose": usage.purpose}
        counts = (
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_tokens,
            usage.cache_write_tokens,
            usage.reasoning_tokens,
        )
        for kind, count in zip(TOKEN_KINDS, counts, strict=True):
            if count:
                self._tokens.add(count, {**labels, "kind": kind})
        self._calls.add(1, labels)
        priced = self._price(usage.model, usage)
        if priced is not None:
            self._cost.add(priced[0], labels)
        span = agent.model if usage.purpose == "turn" else None
        if span is None:  # compaction, title, ...: a call with no `model_start` of its own
            parent = agent.scope or self._turn or self._session
            span = self._start(
                "wyckoff.model_call", parent, {**agent.attributes(), "gen_ai.request.model": usage.model}
            )
        else:
            agent.model = None
        shown: dict[str, Any] = {
            "wyckoff.purpose": usage.purpose,
            "gen_ai.response.model": usage.model,
            "gen_ai.usage.input_tokens": usage.input_tokens,
            "gen_ai.usage.output_tokens": usage.output_tokens,
        }
        for kind, count in zip(TOKEN_KINDS[2:], counts[2:], strict=True):
            if count:
                shown[f"wyckoff.usage.{kind}_tokens"] = count
        if priced is not None:
            shown["wyckoff.cost_usd"] = priced[0]
        span.set_attributes(shown)
        span.end()

    def _tool_done(self, agent: _Agent, call_id: str, name: str, outcome: str, text: str, ms: int) -> None:
        self._tool_ms.record(ms, {"tool": name, "outcome": outcome, "agent": agent.name})
        span = agent.tools.pop(call_id, None)
        for child_id, child in list(agent.children.items()):  # a `task` call's child ends with it
            if child.parent_call_id == call_id:
                self._end_agent(child)
                if child.scope is not None:
                    child.scope.end()
                del agent.children[child_id]
        if span is None:
            return
        shown: dict[str, Any] = {"wyckoff.tool.outcome": outcome, "wyckoff.tool.elapsed_ms": ms}
        if self.settings.log_content:
            shown["wyckoff.tool.result"] = self._text(text)
        span.set_attributes(shown)
        if outcome == "error":
            span.set_status(Status(StatusCode.ERROR))
        span.end()

    # ---------------------------------------------------------------- closing

    def close(self) -> None:
        """End every open span and export what is left, waiting at most
        `CLOSE_WAIT_SECONDS`; a collector that refuses connections (down) is not waited
        for at all, and one that is slow is given up on after the wait."""
        self._end_session()
        if not collector_listens(self._endpoint(), 4317 if self.settings.protocol == "grpc" else 4318):
            self._span_exporter.shutdown()  # what is left is dropped: nothing would take it
            self._metric_exporter.shutdown(timeout_millis=0)

        def shut_down() -> None:
            self._tracer_provider.shutdown()
            self._meter_provider.shutdown(timeout_millis=CLOSE_WAIT_SECONDS * 1000)

        closing = threading.Thread(target=shut_down, name="wyckoff-otel-close", daemon=True)
        closing.start()
        closing.join(CLOSE_WAIT_SECONDS)
        if closing.is_alive():  # the collector is down or slow: stop retrying, drop the rest
            self._span_exporter.shutdown()
            self._metric_exporter.shutdown(timeout_millis=0)

    def _endpoint(self) -> str:
        import os

        return self.settings.endpoint or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "")


def collector_listens(endpoint: str, default_port: int = 4318, timeout: float = PROBE_SECONDS) -> bool:
    """Whether something accepts connections at `endpoint`'s host and port (True when
    that cannot be told, e.g. an endpoint without a host)."""
    from urllib.parse import urlparse

    address = urlparse(endpoint if "//" in endpoint else f"//{endpoint}")
    if not address.hostname:
        return True
    try:
        port = address.port or (443 if address.scheme == "https" else default_port)
        with socket.create_connection((address.hostname, port), timeout=timeout):
            return True
    except ValueError:  # a port that is no number: the exporter reports it
        return True
    except OSError:
        return False


def _message_text(message: dict[str, Any]) -> str:
    parts = message.get("parts") or message.get("content") or []
    if isinstance(parts, str):
        return parts
    texts = [p.get("text", "") for p in parts if isinstance(p, dict) and p.get("type") == "text"]
    return "\n".join(t for t in texts if isinstance(t, str))
