"""Retries before fallback: which failures are retried, backoff and `retry-after`,
the notice chunk, the cool-down, and every model named when all fail."""

from __future__ import annotations

import pytest

from tests.providers.conftest import TEST_KEY, call, drain, make_provider
from wyckoff_cli.core import errors
from wyckoff_cli.core.messages import Message, TextPart
from wyckoff_cli.providers.base import FallbackChunk, LLMProvider, RetryChunk, TextChunk
from wyckoff_cli.providers.factory import build_fallback
from wyckoff_cli.providers.fallback import FallbackProvider
from wyckoff_cli.providers.retry import RetryingProvider, RetryPolicy
from wyckoff_cli.providers.sdk_errors import retry_after_seconds
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.testing.fake_server import FakeServer


class Sleeps(list[float]):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _retrying(
    server: FakeServer, vendor: str, sleeps: Sleeps, idle_timeout: float = 0.5, **policy: float
) -> LLMProvider:
    inner = make_provider(server, vendor, watchdog=True, stream_idle_timeout=idle_timeout)
    return RetryingProvider(inner, RetryPolicy(**policy), sleep=sleeps, rng=lambda: 1.0)  # type: ignore[arg-type]


TRANSIENT = [
    {"status": 429},
    {"status": 500},
    {"status": 503},
    {"status": 529},
    {"text": "Part", "midstream_error": True},
    {"text": "Part", "drop": True},
    {"text": "Part", "no_end": True},
    {"text": "Part", "stall": 5},
]


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "gemini", "openai-responses"])
@pytest.mark.parametrize(
    "failure", TRANSIENT, ids=lambda f: next(iter(f.items()))[0] + str(f.get("status", ""))
)
async def test_transient_failures_are_retried_on_the_same_model(
    server: FakeServer, vendor: str, failure: dict[str, object]
) -> None:
    """Only the stall is caught by the watchdog, with the SDK imported and warm first
    (outside the 1 s under test); the other failures get a watchdog no loaded machine
    trips, so a slow first parse is never a second failure."""
    stall = "stall" in failure
    warm = 0
    if stall:
        server.script({"text": "warm"})
        await drain(make_provider(server, vendor).chat_stream([Message.user("warm up")], [], ""))
        warm = 1
    server.script(failure, {"text": "Whole answer."})
    sleeps = Sleeps()
    parts, _, chunks = await call(_retrying(server, vendor, sleeps, 1.0 if stall else 30.0))
    assert parts == [TextPart("Whole answer.")]
    assert len(server.requests) == 2 + warm
    retry = next(c for c in chunks if isinstance(c, RetryChunk))
    assert (retry.attempt, retry.attempts, retry.delay) == (2, 3, 1.0)
    assert retry.error and not retry.error.startswith(retry.model)  # the notice names the model once
    assert sleeps == [1.0]
    if failure.get("text"):
        texts = [c.text for c in chunks if isinstance(c, TextChunk)]
        assert chunks.index(retry) > 0 and texts[0] == "Part"  # streamed, then marked for dropping


async def test_backoff_doubles_with_jitter_and_gives_up_after_the_attempts(server: FakeServer) -> None:
    server.script({"status": 503}, {"status": 503}, {"status": 503})
    sleeps = Sleeps()
    inner = make_provider(server, "openai")
    provider = RetryingProvider(
        inner, RetryPolicy(attempts=3, initial_delay=2), sleep=sleeps, rng=lambda: 0.0
    )
    with pytest.raises(errors.Overloaded, match=r"after 3 attempts"):
        await drain(provider.chat_stream([Message.user("x")], [], ""))
    assert sleeps == [1.0, 2.0]  # 2 s and 4 s steps, each at 50 % (the jitter's low end)
    assert len(server.requests) == 3


@pytest.mark.parametrize(("headers", "wait"), [({"retry_after": 7}, 7.0), ({"retry_after_ms": 1500}, 1.5)])
async def test_retry_after_is_honoured(server: FakeServer, headers: dict[str, int], wait: float) -> None:
    server.script({"status": 429, **headers}, {"text": "ok"})
    sleeps = Sleeps()
    await call(_retrying(server, "anthropic", sleeps))
    assert sleeps == [wait]


async def test_a_retry_after_beyond_the_cap_goes_to_the_fallback_with_that_cool_down(
    server: FakeServer,
) -> None:
    now = [1000.0]
    server.script({"status": 429, "retry_after": 3600}, {"text": "from the fallback"})
    sleeps = Sleeps()
    first = _retrying(server, "openai", sleeps, max_delay=30)
    second = make_provider(server, "anthropic")
    chain = FallbackProvider([first, second], cooldown=120, clock=lambda: now[0])
    chunks = await drain(chain.chat_stream([Message.user("x")], [], ""))
    assert sleeps == []  # not retried: the server asked for an hour
    switch = next(c for c in chunks if isinstance(c, FallbackChunk))
    assert "asked to wait 3600 s" in switch.error
    now[0] += 600  # after the fixed 120 s cool-down, but within the hour
    assert chain.cooling_down() == [first.name]
    now[0] += 3600
    assert chain.cooling_down() == []


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_errors_that_are_not_transient_are_never_retried(server: FakeServer, status: int) -> None:
    server.script({"status": status}, {"text": "unused"})
    sleeps = Sleeps()
    with pytest.raises(errors.ProviderError) as caught:
        await drain(_retrying(server, "openai", sleeps).chat_stream([Message.user("x")], [], ""))
    assert not caught.value.retryable
    assert sleeps == [] and len(server.requests) == 1


async def test_configuration_errors_surface_at_once() -> None:
    with pytest.raises(errors.ProviderConfigError):
        build_fallback([ModelSpec("anthropic", "claude-x")])  # no key set


async def test_when_every_model_fails_the_error_names_each(server: FakeServer) -> None:
    server.script({"status": 429, "error_message": "slow down"}, {"status": 503, "error_message": "melting"})
    specs = [
        ModelSpec("openai", "gpt-a", base_url=server.openai_url, api_key=TEST_KEY),
        ModelSpec("anthropic", "claude-b", base_url=server.url, api_key=TEST_KEY),
    ]
    chain = build_fallback(specs, retry=RetryPolicy(attempts=1))
    with pytest.raises(errors.Overloaded) as caught:
        await drain(chain.chat_stream([Message.user("x")], [], ""))
    message = caught.value.message
    assert "openai:gpt-a: rate limited (HTTP 429): slow down" in message
    assert "anthropic:claude-b: server error or overloaded (HTTP 529)" in message or "claude-b" in message
    assert "melting" in message


def test_retry_after_header_forms() -> None:
    assert retry_after_seconds({"retry-after": "12"}) == 12.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == 10.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None and retry_after_seconds(None) is None
