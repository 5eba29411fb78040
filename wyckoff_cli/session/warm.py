"""What the first message needs, imported in a worker thread before it is sent.

Importing a vendor SDK takes about half a second and the session's own modules
(context, prompt, recorder, web tools) another tenth; done on the event loop, that
froze the app on the first message (no echo, keys not drawn). The app calls
`ChatController.prepare()` right after its first paint, and every turn awaits it
before building the session: the imports run in a thread, the loop stays free, and
a message sent before they finish waits without blocking anything.

The SDKs are imported as their providers import them (`providers.preload.import_module`:
the Anthropic one by the modules Wyckoff uses; a plain `import anthropic`, as here
before, cost 1.35 s of CPU instead of 0.53). Then `FirstProvider` builds the first
session's provider in the thread too and does its first request's one-time work
there (the SDK client's HTTP pool and TLS context, the module of the call it makes:
50-250 ms that the first request did on the event loop, before sending).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from wyckoff_cli.providers.preload import import_module, warm_up
from wyckoff_cli.storage.config import Config
from wyckoff_cli.storage.redact import secret_patterns

if TYPE_CHECKING:
    from wyckoff_cli.providers.base import LLMProvider

log = logging.getLogger(__name__)

# Imported lazily by SessionBuilder.build() and the first turn.
SESSION_MODULES = (
    "wyckoff_cli.context.manager",
    "wyckoff_cli.context.prompt",
    "wyckoff_cli.context.skills",
    "wyckoff_cli.context.memory_tool",
    "wyckoff_cli.models.facts",
    "wyckoff_cli.runtime.subagents",
    "wyckoff_cli.runtime.user_hooks",
    "wyckoff_cli.storage.recorder",
    "wyckoff_cli.tools.web.fetch",
    "wyckoff_cli.tools.web.search",
)


def modules_for(models: Iterable[str], config: Config) -> list[str]:
    """The SDKs of `models` (the one asked for and its fallbacks), then the session's."""
    from wyckoff_cli.providers.registry import entry_for
    from wyckoff_cli.providers.spec import parse_model_id

    sdks = []
    for name in models:  # only the provider is needed: no key lookup (a file read) per turn
        alias = config.models.get(name)
        try:
            sdk = entry_for(alias.provider if alias is not None else parse_model_id(name)[0]).sdk
        except Exception:  # an unknown model is reported when it is used
            continue
        if sdk:
            sdks.append(sdk)
    return list(dict.fromkeys([*sdks, *SESSION_MODULES]))


_futures: dict[str, Future[None]] = {}  # a module's import, started once per process
_lock = threading.Lock()


async def ready(modules: Iterable[str]) -> None:
    """Import `modules` in a worker thread; returns at once when all are imported.
    A module another thread is still importing counts as not imported: it is in
    `sys.modules` from the start of its import, and the loop must not wait for its
    lock (this waits for our thread instead). Cancelling the wait leaves the import
    running for the next caller."""
    for future in _start([name for name in modules if not _imported(name)]):
        # shielded: a cancelled wait (Esc, the app closing) must not cancel the shared
        # import, or every later turn's wait would raise CancelledError at once
        await asyncio.shield(asyncio.wrap_future(future))


def pending(modules: Iterable[str]) -> bool:
    """Whether `ready(modules)` would have to wait."""
    return not all(_imported(name) for name in modules)


def _imported(name: str) -> bool:
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


def _start(modules: list[str]) -> list[Future[None]]:
    with _lock:
        new = [name for name in modules if name not in _futures]
        for name in new:
            _futures[name] = Future()
        futures = [_futures[name] for name in modules]
    if new:
        threading.Thread(target=_import_all, args=(new,), name="wyckoff-warm-up", daemon=True).start()
    return futures


def _import_all(modules: list[str]) -> None:
    for name in modules:
        try:
            import_module(name)  # an SDK as its provider imports it (the Anthropic one deferred)
        except Exception:  # the real import raises it again, in context
            log.debug("warm-up import of %s failed", name, exc_info=True)
        future = _futures[name]
        if not future.done():  # never cancelled (waits shield it), but never stop the thread
            future.set_result(None)


class FirstProvider:
    """The provider of the session not built yet, made ahead in a worker thread.

    `ready(model, config, build)` builds it with `build(model)` and warms it up
    (`providers.preload.warm_up`) in a thread, once per model and config, and waits
    for that without blocking the loop (a cancelled wait leaves it going on). The
    session built next gets it from `take(model, config)`, once, when it was made for
    that model and config; a build that failed gives None, and the session builds its
    provider itself, meeting (and reporting) the failure again."""

    def __init__(self) -> None:
        self._key: tuple[str, Config] | None = None
        self._made: Future[LLMProvider | None] | None = None

    async def ready(self, model: str, config: Config, build: Callable[[str], LLMProvider]) -> None:
        made = self._made
        if made is None or not self._is(model, config):
            made = Future()
            self._key, self._made = (model, config), made
            thread = threading.Thread(
                target=_build_warm, args=(made, build, model), name="wyckoff-warm-up", daemon=True
            )
            thread.start()
        await asyncio.shield(asyncio.wrap_future(made))

    def take(self, model: str, config: Config) -> LLMProvider | None:
        made = self._made
        if made is None or not made.done() or not self._is(model, config):
            return None
        self._key = self._made = None
        return made.result()

    def _is(self, model: str, config: Config) -> bool:
        return self._key is not None and self._key[0] == model and self._key[1] is config


def _build_warm(made: Future[LLMProvider | None], build: Callable[[str], LLMProvider], model: str) -> None:
    provider: LLMProvider | None = None
    try:
        provider = build(model)
        warm_up(provider)
        secret_patterns()  # the recorder redacts the first message with them
    except Exception:  # the session's own build meets it again and reports it
        log.debug("building or warming up the provider of %s failed", model, exc_info=True)
    made.set_result(provider)
