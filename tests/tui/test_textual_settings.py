"""Textual's settings the app runs with: screen updates at 120 a second (a typed key is
painted at the next screen tick: issue 36's key latency), unless the user set another."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = (
    "import wyckoff_cli.tui, textual.constants as c, textual.screen as s; print(c.MAX_FPS, s.UPDATE_PERIOD)"
)


@pytest.mark.parametrize(
    ("given", "expected"), [(None, "120 0.008333333333333333"), ("30", "30 0.03333333333333333")]
)
def test_screen_updates_at_120_a_second_unless_the_user_said(given: str | None, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    if given is not None:
        env["TEXTUAL_FPS"] = given
    shown = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    assert shown.stdout.split() == expected.split()
