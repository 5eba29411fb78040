"""What OpenTelemetry export is asked to do: `[telemetry]` and the standard `OTEL_*`
variables read into `ExportSettings` (session/telemetry.py, docs/COST.md)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from wyckoff_cli.core import events as ev

if TYPE_CHECKING:
    from wyckoff_cli.storage.telemetry_config import TelemetryConfig

PriceFn = Callable[[str, ev.UsageReported], "tuple[float, float] | None"]
PROTOCOLS = ("http/protobuf", "grpc")


@dataclass(frozen=True)
class ExportSettings:
    """Where and how to export. `endpoint` None: the SDK reads the standard variables
    (`OTEL_EXPORTER_OTLP_ENDPOINT` and the per-signal ones) itself."""

    endpoint: str | None
    protocol: str
    headers: dict[str, str] = field(default_factory=dict)
    log_content: bool = False
    export_interval: float = 30.0
    where: str = "[telemetry] otlp_endpoint"


def export_settings(config: TelemetryConfig, env: Mapping[str, str] | None = None) -> ExportSettings | None:
    """The export `config` and the environment ask for, or None (export off). An
    unknown `OTEL_EXPORTER_OTLP_PROTOCOL` is an error naming the variable."""
    env = os.environ if env is None else env
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    endpoint = config.otlp_endpoint or None
    if endpoint is None and not env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return None
    protocol = config.protocol or env.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").strip() or "http/protobuf"
    if protocol not in PROTOCOLS:
        from wyckoff_cli.core.errors import ConfigError

        raise ConfigError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not supported (use one of {', '.join(PROTOCOLS)})"
        )
    return ExportSettings(
        endpoint.rstrip("/") if endpoint else None,
        protocol,
        dict(config.headers),
        config.log_content,
        config.export_interval,
        "[telemetry] otlp_endpoint" if endpoint else "OTEL_EXPORTER_OTLP_ENDPOINT",
    )
