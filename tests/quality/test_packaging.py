"""The wheel carries the shipped config files, and the README's lines stay true."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_non_editable_install_can_read_shipped_config(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(tmp_path / "dist"),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    wheel = next((tmp_path / "dist").glob("wyckoff-*.whl"))
    shipped = sorted(
        p.relative_to(ROOT / "config").as_posix() for p in (ROOT / "config").rglob("*") if p.is_file()
    )
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    for name in shipped:
        assert f"wyckoff_cli/_shipped_config/{name}" in names
    assert "wyckoff_cli/runtime/review/review.schema.json" in names  # `wyckoff review --format json`'s schema
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    probe = (
        "import sys, importlib.resources as r; sys.path.insert(0, sys.argv[1]); import wyckoff_cli;"
        "assert wyckoff_cli.__file__.startswith(sys.argv[1]), wyckoff_cli.__file__;"
        "root = r.files('wyckoff_cli') / '_shipped_config';"
        "print(sorted(p.name for p in root.iterdir()))"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run(
        [sys.executable, "-s", "-c", probe, str(target)],
        check=True,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    ).stdout
    assert sorted(Path(n).name for n in shipped) == eval(out)


def _readme_line(pattern: str) -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [line.strip() for line in readme.splitlines() if re.search(pattern, line)]
    assert len(lines) == 1, f"expected one README line matching {pattern!r}, found {lines}"
    return lines[0]


def test_ci_runs_the_readme_test_line_verbatim() -> None:
    test_line = _readme_line(r"scripts/check\.py$")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test_line in ci


def test_readme_install_and_start_line_names_the_app() -> None:
    line = _readme_line(r"pip install .*&& .*wyckoff( |$)")
    assert line.startswith("python3 -m venv .venv && ")
