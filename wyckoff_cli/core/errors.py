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
    """Raised by a hook to end the run with a reason (`done.reason == "stopped"`, or
    `done_reason` when given, e.g. `budget`)."""

    def __init__(self, reason: str, done_reason: str = "stopped") -> None:
        super().__init__(reason)
        self.reason = reason
        self.done_reason = done_reason


# --------------------------------------------------------------------------- provider errors


class ProviderError(WyckoffError):
    """A model call failed. `kind` names the failure for events and exit output;
    `retryable` says whether a fallback model (or a later retry) may help;
    `retry_after` is the wait in seconds the vendor asked for (`retry-after` /
    `retry-after-ms` headers), when it said."""

    kind = "provider"
    retryable = False

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        provider: str = "",
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider
        self.retry_after = retry_after

    def reason(self, model: str) -> str:
        """The message without a leading `MODEL: `, for a line that names the model."""
        prefix = f"{model}: "
        return self.message[len(prefix) :] if self.message.startswith(prefix) else self.message


class RateLimited(ProviderError):
    kind = "rate_limited"
    retryable = True


class Overloaded(ProviderError):
    """The vendor is overloaded or had a server error (5xx, 529, in-stream error)."""

    kind = "server"
    retryable = True


class ProviderTimeout(ProviderError):
    """No answer in time, including a stream silent for longer than the watchdog."""

    kind = "timeout"
    retryable = True


class ConnectionFailed(ProviderError):
    kind = "connection"
    retryable = True


class AuthenticationFailed(ProviderError):
    kind = "auth"


class BadRequest(ProviderError):
    kind = "bad_request"


class ContextTooLong(BadRequest):
    kind = "context_too_long"


class ImagesNotSupported(BadRequest):
    """The conversation holds images and the model takes none: refused before any
    request (by the catalogue) or turned from the vendor's refusal (an unknown model)."""

    kind = "images_not_supported"


class ImageError(WyckoffError):
    """An image that cannot be attached (missing, corrupt, truncated, unsupported,
    too large, a decompression bomb): one line naming the file."""


class ProviderConfigError(ProviderError):
    """A mistake in our configuration (missing key, unknown model): never retried."""

    kind = "configuration"
    exit_code = 2
