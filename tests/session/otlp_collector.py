"""An OTLP/HTTP collector for the telemetry tests: a real HTTP server on 127.0.0.1 that
decodes what it receives with the `opentelemetry-proto` types and keeps it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


def plain(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    return getattr(value, kind) if kind else None


@dataclass
class ReceivedSpan:
    name: str
    span_id: bytes
    parent_span_id: bytes
    trace_id: bytes
    attributes: dict[str, Any]
    events: list[str]
    status_code: int


@dataclass
class Collector:
    traces: list[ExportTraceServiceRequest] = field(default_factory=list)
    metrics: list[ExportMetricsServiceRequest] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    url: str = ""

    def spans(self) -> list[ReceivedSpan]:
        with self.lock:
            requests = list(self.traces)
        return [
            ReceivedSpan(
                span.name,
                span.span_id,
                span.parent_span_id,
                span.trace_id,
                {a.key: plain(a.value) for a in span.attributes},
                [e.name for e in span.events],
                span.status.code,
            )
            for request in requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]

    def resource_attributes(self) -> dict[str, Any]:
        with self.lock:
            request = self.traces[0]
        return {a.key: plain(a.value) for a in request.resource_spans[0].resource.attributes}

    def sums(self, name: str) -> Iterator[tuple[dict[str, Any], float]]:
        """(attributes, value) of every data point of the counter `name` (cumulative:
        the last export holds the totals)."""
        with self.lock:
            last = self.metrics[-1] if self.metrics else None
        if last is None:
            return
        for resource in last.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name and metric.HasField("sum"):
                        for point in metric.sum.data_points:
                            labels = {a.key: plain(a.value) for a in point.attributes}
                            yield labels, point.as_int if point.HasField("as_int") else point.as_double

    def histogram_counts(self, name: str) -> dict[tuple[tuple[str, Any], ...], int]:
        with self.lock:
            last = self.metrics[-1] if self.metrics else None
        counts: dict[tuple[tuple[str, Any], ...], int] = {}
        if last is None:
            return counts
        for resource in last.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name and metric.HasField("histogram"):
                        for point in metric.histogram.data_points:
                            key = tuple(sorted((a.key, plain(a.value)) for a in point.attributes))
                            counts[key] = point.count
        return counts

    def total(self, name: str, **labels: Any) -> float:
        return sum(v for attrs, v in self.sums(name) if all(attrs.get(k) == w for k, w in labels.items()))


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        collector = self.server.collector
        with collector.lock:
            collector.headers.append({k.lower(): v for k, v in self.headers.items()})
            if self.path == "/v1/traces":
                collector.traces.append(ExportTraceServiceRequest.FromString(body))
                reply = ExportTraceServiceResponse().SerializeToString()
            elif self.path == "/v1/metrics":
                collector.metrics.append(ExportMetricsServiceRequest.FromString(body))
                reply = ExportMetricsServiceResponse().SerializeToString()
            else:
                self.send_error(404)
                return
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    collector: Collector


class OtlpCollector:
    """`with OtlpCollector() as collector:` a collector listening on 127.0.0.1."""

    def __enter__(self) -> Collector:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.collector = Collector(url=f"http://127.0.0.1:{self._server.server_address[1]}")
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self._server.collector

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
