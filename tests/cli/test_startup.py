"""`wyckoff --help` / `--version` stay light: no textual, no provider SDK."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("textual", "anthropic", "openai", "google.genai", "httpx2", "rich")

PROBE = """
import json, sys
from wyckoff_cli.cli.main import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules)), file=sys.stderr)
"""


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["run", "--help"], ["config", "--help"]])
def test_help_and_version_import_no_heavy_module(argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    modules = json.loads(proc.stderr.strip().splitlines()[-1])
    heavy = [
        m
        for m in modules
        if m.split(".")[0] in {h.split(".")[0] for h in HEAVY}
        and any(m == h or m.startswith(h + ".") for h in HEAVY)
    ]
    assert heavy == [], f"{argv} imported {heavy}"
    assert proc.stdout.strip()


def test_version_prints_the_package_version() -> None:
    from wyckoff_cli import __version__

    proc = subprocess.run(
        [sys.executable, "-m", "wyckoff_cli", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert proc.stdout.strip() == f"wyckoff {__version__}"
