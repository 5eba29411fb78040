"""Logging for every command: to a private file, never to the terminal.

Diagnostics (a tool that crashed, a retried parameter, a failed compaction) go to
`wyckoff.log` in the cache folder (mode 0600, rotated at 2 MB), with every known API key
and key-looking value redacted. Nothing is printed to the terminal, so a traceback never
lands in the middle of the app or of a headless run's output. `WYCKOFF_LOG_LEVEL`
(e.g. `DEBUG`) changes the level.
"""

from __future__ import annotations

import logging
import logging.handlers
import os

from wyckoff_cli.storage import paths

MAX_BYTES = 2_000_000
HANDLER_NAME = "wyckoff-file"


class RedactingFilter(logging.Filter):
    """Replaces a record's message (and traceback text) by its redacted form."""

    def __init__(self) -> None:
        super().__init__()
        from wyckoff_cli.storage.redact import Redactor

        self.redactor = Redactor.from_environment(credentials_file=paths.credentials_file())

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = self.redactor.text(record.getMessage())
        record.args = None
        if record.exc_info:
            record.exc_text = self.redactor.text(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def setup_logging() -> None:
    root = logging.getLogger()
    target = str(paths.log_file())
    for existing in [h for h in root.handlers if h.get_name() == HANDLER_NAME]:
        if getattr(existing, "baseFilename", None) == target:
            return
        root.removeHandler(existing)  # the folders moved (WYCKOFF_HOME changed in this process)
        existing.close()
    level = os.environ.get("WYCKOFF_LOG_LEVEL", "INFO").upper()
    handler: logging.Handler
    try:
        path = paths.log_file()
        paths.ensure_private_dir(path.parent)
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=MAX_BYTES, backupCount=2, encoding="utf-8"
        )
    except OSError:  # also StorageError: an unusable folder means no log file, not a crash
        handler = logging.NullHandler()
    handler.set_name(HANDLER_NAME)
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)
    root.setLevel(getattr(logging, level, logging.INFO))
