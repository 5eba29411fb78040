"""What the first message needs, imported in a worker thread before it is sent.

Importing a vendor SDK takes about half a second and the session's own modules
(context, prompt, recorder, web tools) another tenth; done on the event loop, that
froze the app on the first message (no echo, keys not drawn). The app calls
`ChatController.prepare()` right after its first paint, and every turn awaits it
before building the session: the imports run in a thread, the loop stays free, and
a message sent before they finish waits without blocking anything.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
import threading
from collections.abc import Iterable
from concurrent.futures import Future

from wyckoff_cli.storage.config import Config

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
            importlib.import_module(name)
        except Exception:  # the real import raises it again, in context
            log.debug("warm-up import of %s failed", name, exc_info=True)
        future = _futures[name]
        if not future.done():  # never cancelled (waits shield it), but never stop the thread
            future.set_result(None)
