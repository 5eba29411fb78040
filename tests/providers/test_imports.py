"""Provider modules import no SDK at import time, and nothing outside their layer."""

from __future__ import annotations

import os
import subprocess
import sys

MODULES = [
    "wyckoff_cli.providers.factory",
    "wyckoff_cli.providers.anthropic",
    "wyckoff_cli.providers.openai_compat",
    "wyckoff_cli.providers.gemini",
    "wyckoff_cli.providers.fallback",
    "wyckoff_cli.providers.watchdog",
    "wyckoff_cli.providers.credentials",
    "wyckoff_cli.providers.sdk_errors",
    "wyckoff_cli.providers.text_tool_calls",
    "wyckoff_cli.providers.openai_responses",
    "wyckoff_cli.providers.registry",
    "wyckoff_cli.providers.retry",
    "wyckoff_cli.providers.sdk_base",
    "wyckoff_cli.providers.sse",
    "wyckoff_cli.providers.preload",
    "wyckoff_cli.testing.fake_server",
]
FORBIDDEN = (
    "anthropic",
    "openai",
    "google.genai",
    "httpx2",
    "wyckoff_cli.tools",
    "wyckoff_cli.tui",
    "wyckoff_cli.storage",
)

SCRIPT = f"""
import sys
for name in {MODULES!r}:
    __import__(name)
loaded = [m for m in sys.modules if m.startswith({FORBIDDEN!r})]
print(",".join(sorted(loaded)))
"""


def test_importing_providers_loads_no_sdk_and_no_other_layer() -> None:
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_building_a_provider_loads_only_its_own_sdk() -> None:
    script = """
import sys
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec
provider = build_provider(ModelSpec("gemini", "m", api_key="k"))
provider.chat_stream([], [], "")  # creates the client; no request is made
print(",".join(sorted(m for m in ("anthropic", "openai", "google.genai") if m in sys.modules)))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "google.genai"


def test_building_a_provider_starts_importing_its_sdk_in_the_background() -> None:
    # Which thread imports the SDK is recorded by a meta-path finder: the caller's thread must
    # never import it (no timing involved, so a loaded machine cannot make this flaky).
    script = """
import sys, threading
importers = []
class Recorder:
    def find_spec(self, name, path=None, target=None):
        if name == "openai":
            importers.append(threading.current_thread().name)
        return None
sys.meta_path.insert(0, Recorder())
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec
provider = build_provider(ModelSpec("openai", "gpt-x", api_key="k"))
names = [t.name for t in threading.enumerate()]
print("preload-openai" in names, "anthropic" in sys.modules)
for thread in threading.enumerate():
    if thread.name == "preload-openai":
        thread.join(30)
print("openai" in sys.modules, importers == ["preload-openai"])
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False", "True", "True"]


def test_no_background_import_when_switched_off() -> None:
    script = """
import sys, threading
from wyckoff_cli.providers.factory import build_provider
from wyckoff_cli.providers.spec import ModelSpec
build_provider(ModelSpec("anthropic", "claude-x", api_key="k"))
print(any(t.name.startswith("preload-") for t in threading.enumerate()), "anthropic" in sys.modules)
"""
    env = {**os.environ, "WYCKOFF_NO_PRELOAD": "1"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]
