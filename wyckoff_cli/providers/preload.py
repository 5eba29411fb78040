"""Import a provider's SDK in the background as soon as the process knows it needs it.

Importing `openai`, `anthropic` or `google.genai` takes about half a second. The
factory calls `preload(module)` when it builds a provider; a daemon thread imports
the SDK while the session sets up the rest (context, prompt, UI), so the first
request does not wait for it. Python's import lock makes the main thread's own
`import` wait for the thread if it is still running, never import twice. Nothing
happens when the module is already imported, or with `WYCKOFF_NO_PRELOAD=1`.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
import threading

log = logging.getLogger(__name__)
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


def _import(module: str) -> None:
    try:
        if module == "anthropic":
            from wyckoff_cli.providers.lazy_packages import import_anthropic_client

            import_anthropic_client()
            return
        importlib.import_module(module)
    except Exception:  # the real import will raise it again, in context
        log.debug("background import of %s failed", module, exc_info=True)
