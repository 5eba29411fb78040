"""Import a provider's SDK in the background as soon as the process knows it needs it.

Importing `openai`, `anthropic` or `google.genai` takes about half a second. The
factory calls `preload(module)` when it builds a provider; a daemon thread imports
the SDK while the session sets up the rest (context, prompt, UI), so the first
request does not wait for it. Python's import lock makes the main thread's own
`import` wait for the thread if it is still running, never import twice. Nothing
happens when the module is already imported, or with `WYCKOFF_NO_PRELOAD=1`.

`import_module(name)` imports a module the way the providers use it, for every
thread that imports ahead of time (this one, `session/warm.py`): the Anthropic SDK by
the modules Wyckoff uses, its package `__init__`s deferred (`lazy_packages`; a plain
`import anthropic` loads its whole type tree, 2.5 times the CPU), any other whole.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys
import threading

log = logging.getLogger(__name__)
FIRST_REQUEST_MODULES = ("anyio._backends._asyncio",)
"""Imported by the SDKs' HTTP stack (httpx, anyio) on their first request (~10 ms)."""
_started: dict[str, threading.Thread] = {}
_lock = threading.Lock()


def preload(module: str | None) -> threading.Thread | None:
    """Start importing `module` in a daemon thread (once); returns the thread, or
    None when there is nothing to do."""
    if not module or module in sys.modules or os.environ.get("WYCKOFF_NO_PRELOAD"):
        return None
    with _lock:
        thread = _started.get(module)
        if thread is None:
            thread = threading.Thread(target=_import, args=(module,), name=f"preload-{module}", daemon=True)
            _started[module] = thread
            thread.start()
    return thread


def import_module(module: str) -> None:
    """Import `module` as the providers use it: `anthropic` and `openai` as their
    `_client` with the SDK's packages deferred (what the adapters' `make_client`
    imports), any other module whole."""
    if module == "anthropic":
        from wyckoff_cli.providers.lazy_packages import import_anthropic_client

        import_anthropic_client()
        return
    if module == "openai":
        from wyckoff_cli.providers.lazy_packages import import_openai_client

        import_openai_client()
        return
    importlib.import_module(module)


def warm_up(provider: object) -> None:
    """Do `provider`'s first-request work now, in this thread: an SDK adapter's
    `warm_up()` (its client, the resource its calls use), reached through the watchdog
    and retry wrappers (they pass on what they lack) and a fallback chain (its first
    model); nothing for a provider without one (scripted)."""
    warm = getattr(provider, "warm_up", None)
    if callable(warm):
        for name in FIRST_REQUEST_MODULES:
            with contextlib.suppress(ImportError):  # another version: its first request imports it
                importlib.import_module(name)
        warm()


def _import(module: str) -> None:
    try:
        import_module(module)
    except Exception:  # the real import will raise it again, in context
        log.debug("background import of %s failed", module, exc_info=True)
