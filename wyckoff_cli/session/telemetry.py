"""OpenTelemetry export of a chat's traces and metrics (issue 33, docs/COST.md).

Off by default: `[telemetry] otlp_endpoint` or the standard `OTEL_EXPORTER_OTLP_ENDPOINT`
turns it on. The controller hands every event it observes to `SessionTelemetry`, which
passes them to the exporter (session/otel_export.py) when export is on and does nothing
otherwise. The OpenTelemetry SDK is imported only then, and it is an optional extra
(`pip install 'wyckoff[otel]'`): without it the session runs as usual and says once why
nothing is exported. Exports run in the SDK's background threads; closing waits for the
last one at most `CLOSE_WAIT_SECONDS`, so a collector that is down or slow never holds a
session up.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from wyckoff_cli.core import events as ev
from wyckoff_cli.session.telemetry_settings import ExportSettings, PriceFn, export_settings

if TYPE_CHECKING:
    from wyckoff_cli.storage.config import Config

log = logging.getLogger(__name__)

EXTRA_NOTICE = (
    "OpenTelemetry export is configured ({where}) but its packages are not installed: "
    "`pip install 'wyckoff[otel]'` (nothing is exported meanwhile)"
)


class Exporter(Protocol):
    def observe(self, event: ev.RuntimeEvent, session_id: str | None) -> None: ...
    def close(self) -> None: ...


class SessionTelemetry:
    """The controller's one telemetry object: a no-op unless export is on."""

    def __init__(
        self,
        settings: ExportSettings | None,
        price: PriceFn,
        redact: Callable[[str], str],
    ) -> None:
        self._exporter: Exporter | None = None
        self._notice = ""
        if settings is None:
            return
        try:
            from wyckoff_cli.session.otel_export import OtelExporter
        except ImportError as exc:  # the `otel` extra is not installed
            log.warning("OpenTelemetry export unavailable: %s", exc)
            self._notice = EXTRA_NOTICE.format(where=settings.where)
            return
        try:
            self._exporter = OtelExporter(settings, price, redact)
        except ImportError as exc:  # grpc asked for without its exporter
            self._notice = f"OpenTelemetry export is off: {exc}"
        except Exception as exc:  # a bad endpoint or header: the session goes on without export
            log.exception("OpenTelemetry export could not start")
            self._notice = f"OpenTelemetry export is off: {exc}"

    @classmethod
    def for_config(cls, config: Config, price: PriceFn) -> SessionTelemetry:
        """Export as `[telemetry]` and the environment say; a bad setting is a notice
        (the session runs without export), never an error that stops it."""
        from wyckoff_cli.core.errors import ConfigError

        try:
            settings = export_settings(config.telemetry)
        except ConfigError as exc:
            telemetry = cls(None, price, str)
            telemetry._notice = f"OpenTelemetry export is off: {exc}"
            return telemetry
        if settings is None:
            return cls(None, price, str)
        from wyckoff_cli.session.builder import offload_redactor

        return cls(settings, price, offload_redactor(config))

    @property
    def enabled(self) -> bool:
        return self._exporter is not None

    def take_notice(self) -> str:
        """Why export is configured but off ("" otherwise): shown once."""
        notice, self._notice = self._notice, ""
        return notice

    def observe(self, event: ev.RuntimeEvent, session_id: str | None) -> None:
        if self._exporter is None:
            return
        try:
            self._exporter.observe(event, session_id)
        except Exception:  # telemetry never breaks a session
            log.exception("OpenTelemetry export failed on a %s event", event.type)

    def close(self) -> None:
        exporter, self._exporter = self._exporter, None
        if exporter is not None:
            exporter.close()
