"""Translate every vendor SDK failure into the one error tree of `providers.base`.

Covers the rows of the wire reference's error table (`../shared/reference/wire/`):
HTTP statuses, error events inside a 200 stream, and the raw `httpx2` transport
errors that escape the Anthropic and Gemini SDKs mid-stream. SDKs are imported only
inside the function for their own exceptions, and only when the exception came from
that SDK, so translating a Gemini error never imports `anthropic`.

Errors inside a 200 stream (an `error` object or an `event: error`) are classified by
their status first (`status_code`, a numeric `code`), then by their type, exactly like
HTTP errors: a 400 in the stream is a bad request, not a server error. The
`retry-after` / `retry-after-ms` headers of an error response become `retry_after`.

| status / event                 | error              | retryable |
| ------------------------------ | ------------------ | --------- |
| 400, 404, 409-422 (not below)  | BadRequest         | no        |
| 400 "too long" / overflow code | ContextTooLong     | no        |
| 401, 403, Gemini "key invalid" | AuthenticationFailed | no      |
| 402 (out of credit)            | RateLimited        | yes       |
| 408                            | ProviderTimeout    | yes       |
| 429                            | RateLimited        | yes       |
| 5xx, 529, in-stream overload   | Overloaded         | yes       |
| connection refused / dropped   | ConnectionFailed   | yes       |
| read timeout                   | ProviderTimeout    | yes       |
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from collections.abc import Mapping
from typing import Any, NoReturn

from wyckoff_cli.core.errors import (
    AuthenticationFailed,
    BadRequest,
    ConnectionFailed,
    ContextTooLong,
    Overloaded,
    ProviderConfigError,
    ProviderError,
    ProviderTimeout,
    RateLimited,
)
from wyckoff_cli.providers.credentials import redact

_TOO_LONG = re.compile(
    r"prompt is too long|context[ _-]?length|context window|maximum context|too many tokens|"
    r"exceeds? the (?:maximum|max)(?: number of)? (?:input )?tokens|input token count|"
    r"reduce the length|request too large|string_above_max_length",
    re.IGNORECASE,
)
_BAD_KEY = re.compile(r"api[ _-]?key (?:not valid|invalid|is invalid)|invalid api[ _-]?key", re.IGNORECASE)

_AUTH_CODES = ("authentication_error", "permission_error", "invalid_api_key")
_RATE_CODES = ("rate_limit_error", "rate_limit_exceeded", "resource_exhausted")
_SERVER_CODES = ("overloaded_error", "api_error", "server_error", "unavailable", "internal", "overloaded")
_LABELS = {
    RateLimited: "rate limited",
    Overloaded: "server error or overloaded",
    ProviderTimeout: "timed out",
    ConnectionFailed: "connection failed",
    AuthenticationFailed: "authentication failed (check the API key)",
    BadRequest: "request rejected",
    ContextTooLong: "the conversation is too long for this model",
    ProviderConfigError: "configuration problem",
}


def make_error(
    cls: type[ProviderError],
    provider: str,
    detail: str,
    *,
    status: int | None = None,
    secret: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    where = f" (HTTP {status})" if status and status != 200 else ""
    detail = redact(" ".join(str(detail).split()), secret)
    if len(detail) > 500:
        detail = detail[:500] + "…"
    text = f"{provider}: {_LABELS.get(cls, 'failed')}{where}"
    if detail:
        text += f": {detail}"
    return cls(text, status=status, provider=provider, retry_after=retry_after)


def retry_after_seconds(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """The wait an error response asks for: `retry-after-ms`, else `retry-after` in
    seconds or as an HTTP date. None when absent or unreadable."""
    if headers is None:
        return None
    try:
        millis = headers.get("retry-after-ms")
        if millis:
            return max(0.0, float(millis) / 1000)
        value = headers.get("retry-after")
    except (TypeError, ValueError, AttributeError):
        return None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def stream_error(payload: Any, *, provider: str, secret: str | None = None) -> ProviderError:
    """The error for an error object sent inside a 200 stream (`{"error": {...}}` or
    the data of an `event: error`): by its status first, then by its type."""
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    if not isinstance(error, dict):
        return make_error(Overloaded, provider, str(error), secret=secret)
    detail = str(error.get("message") or error.get("error") or json.dumps(error)[:300])
    code = error.get("code")
    status = error.get("status_code")
    if not isinstance(status, int) and isinstance(code, int) and not isinstance(code, bool):
        status = code
    if isinstance(status, str) and status.isdigit():
        status = int(status)
    words = [code if isinstance(code, str) else None, error.get("type"), error.get("status")]
    kind = " ".join(str(w).lower() for w in words if isinstance(w, str) and w)
    if isinstance(status, int) and 400 <= status < 600:
        return classify_status(
            status, detail, provider=provider, code=next(iter(kind.split()), None), secret=secret
        )
    return _in_stream(kind, detail, provider, secret)


def classify_status(
    status: int,
    detail: str,
    *,
    provider: str,
    code: str | None = None,
    secret: str | None = None,
) -> ProviderError:
    """The error for an HTTP status (and the vendor's error code or type)."""
    code = (code or "").lower()
    cls: type[ProviderError]
    bad_key = status == 400 and _BAD_KEY.search(detail) is not None
    if status in (401, 403) or code in _AUTH_CODES or bad_key:
        cls = AuthenticationFailed
    elif status in (402, 429) or code in _RATE_CODES:  # 402: out of credit; another vendor may help
        cls = RateLimited
    elif status == 408:
        cls = ProviderTimeout
    elif status >= 500 or code in _SERVER_CODES:
        cls = Overloaded
    elif code == "context_length_exceeded" or status == 413 or _TOO_LONG.search(detail):
        cls = ContextTooLong
    else:
        cls = BadRequest
    return make_error(cls, provider, detail, status=status, secret=secret)


def translate(exc: BaseException, *, provider: str, secret: str | None = None) -> ProviderError | None:
    """The `ProviderError` for `exc`, or None when it is not a provider failure (a bug)."""
    if isinstance(exc, ProviderError):
        return exc
    module = type(exc).__module__
    if module.startswith("anthropic"):
        return _anthropic(exc, provider, secret)
    if module.startswith("openai"):
        return _openai(exc, provider, secret)
    if module.startswith("google.genai"):
        return _gemini(exc, provider, secret)
    return transport_error(exc, provider=provider, secret=secret)


def raise_translated(exc: BaseException, *, provider: str, secret: str | None = None) -> NoReturn:
    """Re-raise `exc` (being handled) as its `ProviderError`; a bug is re-raised as is."""
    error = translate(exc, provider=provider, secret=secret)
    if error is None or error is exc:
        raise exc
    raise error from exc


def transport_error(exc: BaseException, *, provider: str, secret: str | None = None) -> ProviderError | None:
    """Raw `httpx2` (or socket) errors: a timeout or a broken connection."""
    module = type(exc).__module__
    detail = _describe(exc)
    if module.startswith("httpx2"):
        import httpx2

        if isinstance(exc, httpx2.TimeoutException):
            return make_error(ProviderTimeout, provider, detail, secret=secret)
        if isinstance(exc, httpx2.TransportError | httpx2.StreamError):
            return make_error(ConnectionFailed, provider, detail, secret=secret)
        return None
    if isinstance(exc, TimeoutError):
        return make_error(ProviderTimeout, provider, detail, secret=secret)
    if isinstance(exc, ConnectionError):
        return make_error(ConnectionFailed, provider, detail, secret=secret)
    if isinstance(exc, json.JSONDecodeError):
        return make_error(Overloaded, provider, f"the server sent malformed data ({exc.msg})", secret=secret)
    return None


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def _anthropic(exc: BaseException, provider: str, secret: str | None) -> ProviderError | None:
    import anthropic._exceptions as anthropic

    if isinstance(exc, anthropic.APIStatusError):
        detail = exc.api_message or _body_message(exc.body) or str(exc)
        kind = (exc.type or "").lower()
        if exc.status_code == 200 or exc.status_code is None:
            return _in_stream(kind, detail, provider, secret)
        error = classify_status(exc.status_code, detail, provider=provider, code=kind, secret=secret)
        return _with_retry_after(error, exc)
    if isinstance(exc, anthropic.APITimeoutError):
        return make_error(ProviderTimeout, provider, "no answer in time", secret=secret)
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__
        return make_error(ConnectionFailed, provider, _describe(cause) if cause else str(exc), secret=secret)
    if isinstance(exc, anthropic.APIResponseValidationError):
        return make_error(Overloaded, provider, str(exc), status=exc.status_code, secret=secret)
    if isinstance(exc, anthropic.AnthropicError):
        return make_error(ProviderConfigError, provider, str(exc), secret=secret)
    return transport_error(exc, provider=provider, secret=secret)


def _openai(exc: BaseException, provider: str, secret: str | None) -> ProviderError | None:
    import openai._exceptions as openai  # not the package: its `__init__` imports the whole SDK

    if isinstance(exc, openai.APIStatusError):
        detail = _body_message(exc.body) or exc.message
        code = exc.code or exc.type
        error = classify_status(exc.status_code, detail, provider=provider, code=code, secret=secret)
        return _with_retry_after(error, exc)
    if isinstance(exc, openai.APITimeoutError):
        return make_error(ProviderTimeout, provider, "no answer in time", secret=secret)
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        return make_error(ConnectionFailed, provider, _describe(cause) if cause else str(exc), secret=secret)
    if isinstance(exc, openai.APIResponseValidationError):
        return make_error(Overloaded, provider, str(exc), status=exc.status_code, secret=secret)
    if isinstance(exc, openai.APIError):  # an error object inside a 200 stream
        kind = (exc.code or exc.type or "").lower()
        return _in_stream(kind, exc.message, provider, secret)
    if isinstance(exc, openai.OpenAIError):
        return make_error(ProviderConfigError, provider, str(exc), secret=secret)
    return transport_error(exc, provider=provider, secret=secret)


def _gemini(exc: BaseException, provider: str, secret: str | None) -> ProviderError | None:
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        status = exc.code if isinstance(exc.code, int) else 500
        detail = exc.message or str(exc)
        error = classify_status(status, detail, provider=provider, code=exc.status, secret=secret)
        return _with_retry_after(error, exc)
    if isinstance(exc, errors.UnknownApiResponseError):
        return make_error(Overloaded, provider, str(exc), secret=secret)
    return transport_error(exc, provider=provider, secret=secret)


def _with_retry_after(error: ProviderError, exc: BaseException) -> ProviderError:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    error.retry_after = retry_after_seconds(headers)
    return error


def _in_stream(kind: str, detail: str, provider: str, secret: str | None) -> ProviderError:
    """An error event inside a 200 stream: by its type or code (several may be given,
    space-separated; the first one known decides), a server error when none is known."""
    for word in kind.split() or [""]:
        cls = _kind_class(word, detail)
        if cls is not None:
            return make_error(cls, provider, detail, secret=secret)
    return make_error(Overloaded, provider, detail, secret=secret)


def _kind_class(kind: str, detail: str) -> type[ProviderError] | None:
    if "rate_limit" in kind or kind in _RATE_CODES:
        return RateLimited
    if kind in _AUTH_CODES:
        return AuthenticationFailed
    if kind == "context_length_exceeded" or (kind == "invalid_request_error" and _TOO_LONG.search(detail)):
        return ContextTooLong
    if kind in ("invalid_request_error", "invalid_argument", "tool_use_failed", "not_found_error"):
        return BadRequest
    if "timeout" in kind:
        return ProviderTimeout
    if kind in _SERVER_CODES:
        return Overloaded
    return None


def _body_message(body: Any) -> str:
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return ""
