"""A provider's first-request work done ahead, in a worker thread (issue 36): each SDK
adapter's `warm_up()` builds its client (HTTP pool, TLS context) and the resource its
calls use; `preload.warm_up` reaches it through the watchdog and retry wrappers and a
fallback chain (its first model). The request made afterwards on the event loop uses
that client: real SDKs against the loopback fake server."""

from __future__ import annotations

import threading

import pytest

from tests.providers.conftest import MODELS, TEST_KEY, call, make_provider
from wyckoff_cli.core.messages import TextPart
from wyckoff_cli.providers import preload
from wyckoff_cli.providers.factory import build_fallback
from wyckoff_cli.providers.retry import RetryPolicy
from wyckoff_cli.providers.scripted import ScriptedProvider
from wyckoff_cli.providers.spec import ModelSpec
from wyckoff_cli.testing.fake_server import FakeServer


def _in_a_thread(provider: object) -> None:
    failures: list[BaseException] = []

    def run() -> None:
        try:
            preload.warm_up(provider)
        except BaseException as exc:  # reported in the test, not lost in the thread
            failures.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert not thread.is_alive() and not failures, failures


@pytest.mark.parametrize("vendor", ["anthropic", "openai", "openai-responses", "gemini"])
async def test_a_provider_warmed_up_in_a_thread_streams_with_the_client_made_there(
    server: FakeServer, vendor: str
) -> None:
    server.script({"text": "Hello from the warmed-up client."})
    provider = make_provider(server, vendor, watchdog=True, retry=RetryPolicy(attempts=2))
    assert provider._client is None  # the wrappers pass the attribute on: nothing made yet
    _in_a_thread(provider)
    made = provider._client
    assert made is not None
    parts, _, _ = await call(provider)
    assert parts == [TextPart("Hello from the warmed-up client.")]
    assert provider._client is made  # the request used it, made no other


def test_a_fallback_chain_warms_up_the_model_its_next_call_starts_with(server: FakeServer) -> None:
    specs = [
        ModelSpec("anthropic", MODELS["anthropic"], base_url=server.url, api_key=TEST_KEY),
        ModelSpec("openai", MODELS["openai"], base_url=server.openai_url, api_key=TEST_KEY),
    ]
    chain = build_fallback(specs, retry=None)
    _in_a_thread(chain)
    first, second = chain.providers  # type: ignore[attr-defined]
    assert first._client is not None
    assert second._client is None  # made only if a call falls back to it


def test_a_provider_without_a_warm_up_is_left_alone() -> None:
    provider = ScriptedProvider([{"text": "hi"}])
    _in_a_thread(provider)  # nothing to do, nothing raised
    assert provider.request_count == 0
