"""Exceptions shared across layers. Imports nothing else of ours.

Every expected failure is a `WyckoffError` with a message written for a person; the
CLI prints `message` (never a traceback) and exits with `exit_code`.
"""

from __future__ import annotations


class WyckoffError(Exception):
    """An expected failure with a message fit to show a user."""

    exit_code = 1

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(WyckoffError):
    """A configuration file or value is wrong. Names the file, line or key."""

    exit_code = 2


class UsageError(WyckoffError):
    """The command line is wrong."""

    exit_code = 2


class ToolError(Exception):
    """A tool failed in a way the model can correct. The runtime turns it into a
    `tool_error` message to the model; it never ends the turn."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class StopRun(Exception):
    """Raised by a hook to end the run with a reason (`done.reason == "stopped"`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
