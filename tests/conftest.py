"""Suite-wide fixtures: every test runs isolated from the user's machine.

- `WYCKOFF_HOME` points at a fresh temporary folder (config, data, cache), and
  `CLAUDE_CONFIG_DIR` (Claude Code's `~/.claude`) at a folder inside it; the managed
  policy's path (`storage.managed.MANAGED_PATH`) at a file there that does not exist.
- API keys, proxy variables and `OTEL_*` (OpenTelemetry export) are removed; `NO_PROXY` covers loopback, so the only
  network a test can reach is 127.0.0.1.
- `FORCE_HYPERLINK=0`: `[ui] hyperlinks = "auto"` shows URLs as text whatever terminal
  the tests run in, so snapshots do not depend on it.
- Tests marked `live` (real LLM APIs) run only with `--run-live`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_SECRET_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN", "_ACCESS_TOKEN")
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_VENDOR_VARS = (
    "ANTHROPIC_BASE_URL",
    "OPENAI_BASE_URL",
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_GENAI_API_VERSION",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_GENAI_USE_VERTEXAI",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-live", action="store_true", help="run tests that call real LLM APIs")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--run-live"):
        return
    skip = pytest.mark.skip(reason="talks to a real API: pass --run-live to run it")
    for item in items:
        if "live" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("wyckoff-home")
    monkeypatch.setenv("WYCKOFF_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / "claude-home"))  # never the real ~/.claude
    from wyckoff_cli.storage import managed

    monkeypatch.setattr(managed, "MANAGED_PATH", home / "managed" / "managed.toml")  # never /etc/wyckoff
    for key in list(os.environ):
        vendor = key in _PROXY_VARS or key in _VENDOR_VARS
        telemetry = key.startswith("OTEL_")  # never export a test's telemetry to the machine's collector
        if key.upper().endswith(_SECRET_SUFFIXES) or vendor or telemetry:
            monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("FORCE_HYPERLINK", "0")
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty project folder (a git-less workspace root)."""
    root = tmp_path / "project"
    (root / ".wyckoff").mkdir(parents=True)
    return root
