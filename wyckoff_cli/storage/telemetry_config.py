"""`[telemetry]`: OpenTelemetry export of traces and metrics (docs/COST.md, docs/CONFIG.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from wyckoff_cli.storage.config_fields import Range, doc_field


@dataclass
class TelemetryConfig:
    """`[telemetry]`: off unless an OTLP endpoint is set here or in the environment."""

    otlp_endpoint: str | None = doc_field(
        "Base URL of an OTLP collector (e.g. `http://127.0.0.1:4318`): traces go to `/v1/traces`, "
        "metrics to `/v1/metrics`. Unset: the standard `OTEL_EXPORTER_OTLP_ENDPOINT` variable, "
        "else no export. Needs the `otel` extra (`pip install 'wyckoff[otel]'`).",
        default=None,
    )
    protocol: Literal["http/protobuf", "grpc"] | None = doc_field(
        "OTLP transport; unset: `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`. "
        "`grpc` needs `opentelemetry-exporter-otlp-proto-grpc` installed.",
        default=None,
    )
    headers: dict[str, str] = doc_field(
        "Headers sent with every export (e.g. an auth token), added to `OTEL_EXPORTER_OTLP_HEADERS`.",
        default_factory=dict,
    )
    log_content: bool = doc_field(
        "Put prompt, answer, tool arguments and tool results on the spans (secrets redacted); "
        "off: only names, ids, counts and times.",
        default=False,
    )
    export_interval: float = doc_field(
        "Seconds between two metric exports (and at the session's end).",
        default=30.0,
        range=Range(0.1, 3_600),
    )
