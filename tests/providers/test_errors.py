"""Every row of the wire reference's error table, for every vendor, through the real SDKs."""

from __future__ import annotations

import json
import socket

import pytest

from tests.providers.conftest import TEST_KEY, VENDORS, WIRE, drain, make_provider, wire_file
from wyckoff_cli.core import errors as provider_errors
from wyckoff_cli.core.errors import ProviderError
from wyckoff_cli.core.messages import Message
from wyckoff_cli.providers.base import TextChunk
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.sdk_errors import classify_status, translate
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.testing.fake_server import FakeServer

BODIES = json.loads((WIRE / "error_bodies.json").read_text())
BODY_KEY = {"anthropic": "ANTHROPIC_ERRORS", "openai": "OPENAI_ERRORS", "gemini": "GEMINI_ERRORS"}

# (vendor, status) -> expected error, using the recorded bodies
HTTP_ROWS = [
    ("anthropic", 400, provider_errors.ContextTooLong),  # "prompt is too long"
    ("anthropic", 401, provider_errors.AuthenticationFailed),
    ("anthropic", 429, provider_errors.RateLimited),
    ("anthropic", 500, provider_errors.Overloaded),
    ("anthropic", 503, provider_errors.Overloaded),
    ("anthropic", 529, provider_errors.Overloaded),
    ("openai", 400, provider_errors.ContextTooLong),  # code context_length_exceeded
    ("openai", 401, provider_errors.AuthenticationFailed),
    ("openai", 429, provider_errors.RateLimited),
    ("openai", 500, provider_errors.Overloaded),
    ("openai", 503, provider_errors.Overloaded),
    ("gemini", 400, provider_errors.AuthenticationFailed),  # "API key not valid" arrives as a 400
    ("gemini", 401, provider_errors.AuthenticationFailed),
    ("gemini", 403, provider_errors.AuthenticationFailed),
    ("gemini", 429, provider_errors.RateLimited),
    ("gemini", 500, provider_errors.Overloaded),
    ("gemini", 503, provider_errors.Overloaded),
]


async def _fail(provider: object) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await drain(provider.chat_stream([Message.user("hi")], [], "s"))  # type: ignore[attr-defined]
    return caught.value


@pytest.mark.parametrize(("vendor", "status", "expected"), HTTP_ROWS)
async def test_http_error_statuses(server: FakeServer, vendor: str, status: int, expected: type) -> None:
    server.script({"status": status, "error_body": BODIES[BODY_KEY[vendor]][str(status)]})
    error = await _fail(make_provider(server, vendor))
    assert type(error) is expected
    assert error.retryable is expected.retryable
    assert error.status == status
    assert error.message.startswith(f"{vendor}:")
    assert TEST_KEY not in error.message
    assert len(server.requests) == 1  # max_retries=0: the SDK never retries by itself


@pytest.mark.parametrize("vendor", VENDORS)
async def test_plain_bad_request(server: FakeServer, vendor: str) -> None:
    server.script({"status": 400, "error_message": "tools.0.name: String should match pattern"})
    error = await _fail(make_provider(server, vendor))
    assert type(error) is provider_errors.BadRequest and not error.retryable


@pytest.mark.parametrize("vendor", VENDORS)
async def test_error_event_inside_a_200_stream(server: FakeServer, vendor: str) -> None:
    name = {"anthropic": "anthropic", "openai": "openai", "gemini": "gemini"}[vendor]
    server.script({"sse_file": wire_file(f"{name}_stream_midstream_error.sse")})
    provider = make_provider(server, vendor)
    seen: list[object] = []
    with pytest.raises(ProviderError) as caught:
        async for chunk in provider.chat_stream([Message.user("hi")], [], "s"):
            seen.append(chunk)
    assert type(caught.value) is provider_errors.Overloaded and caught.value.retryable
    assert any(isinstance(c, TextChunk) for c in seen)  # output had begun


@pytest.mark.parametrize("vendor", VENDORS)
async def test_in_stream_rate_limit_keeps_its_kind(server: FakeServer, vendor: str) -> None:
    detail = {
        "anthropic": {"type": "rate_limit_error", "message": "slow down"},
        "openai": {"type": "requests", "code": "rate_limit_exceeded", "message": "slow down"},
        "gemini": {"code": 429, "message": "slow down"},
    }[vendor]
    server.script({"text": "Part", "midstream_error": detail})
    error = await _fail(make_provider(server, vendor))
    assert type(error) is provider_errors.RateLimited


@pytest.mark.parametrize("vendor", VENDORS)
async def test_connection_dropped_mid_stream(server: FakeServer, vendor: str) -> None:
    server.script({"text": "half an answer", "chunk_size": 4, "drop": True})
    error = await _fail(make_provider(server, vendor))
    assert type(error) is provider_errors.ConnectionFailed and error.retryable


@pytest.mark.parametrize("vendor", VENDORS)
async def test_read_timeout_while_streaming(server: FakeServer, vendor: str) -> None:
    server.script({"text": "slow", "stall": 3})
    provider = make_provider(server, vendor, extra={"request_timeout": 0.3})
    error = await _fail(provider)
    assert type(error) is provider_errors.ProviderTimeout and error.retryable


@pytest.mark.parametrize("vendor", VENDORS)
async def test_connection_refused(vendor: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}" + ("/v1" if vendor == "openai" else "")
    provider = build_provider(ModelSpec(vendor, "m", base_url=base_url, api_key=TEST_KEY), watchdog=False)
    error = await _fail(provider)
    assert type(error) is provider_errors.ConnectionFailed and error.retryable


async def test_the_key_never_appears_in_an_error(server: FakeServer) -> None:
    body = {
        "error": {
            "message": f"Incorrect API key provided: {TEST_KEY}.",
            "type": "x",
            "code": "invalid_api_key",
        }
    }
    server.script({"status": 401, "error_body": body})
    error = await _fail(make_provider(server, "openai"))
    assert TEST_KEY not in error.message and TEST_KEY not in str(error)
    assert "***" in error.message


def test_status_table() -> None:
    cases = {
        402: provider_errors.RateLimited,
        404: provider_errors.BadRequest,
        408: provider_errors.ProviderTimeout,
        413: provider_errors.ContextTooLong,
        422: provider_errors.BadRequest,
        502: provider_errors.Overloaded,
        504: provider_errors.Overloaded,
    }
    for status, expected in cases.items():
        assert type(classify_status(status, "x", provider="p")) is expected, status


def test_raw_transport_errors() -> None:
    import httpx2

    request = httpx2.Request("POST", "http://127.0.0.1/")
    assert (
        type(translate(httpx2.ReadTimeout("t", request=request), provider="p"))
        is provider_errors.ProviderTimeout
    )
    assert (
        type(translate(httpx2.RemoteProtocolError("peer closed"), provider="p"))
        is provider_errors.ConnectionFailed
    )
    assert type(translate(httpx2.ConnectError("refused"), provider="p")) is provider_errors.ConnectionFailed
    assert type(translate(ConnectionResetError(), provider="p")) is provider_errors.ConnectionFailed
    assert translate(KeyError("a bug"), provider="p") is None
