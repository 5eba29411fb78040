"""Terminal environment → the notification sequence (tui/terminal_notify.py): a table."""

from __future__ import annotations

import pytest

from wyckoff_cli.tui.terminal_notify import BEL, clean, detect_method, notification, osc_sequence, tmux_wrap

OSC9 = "\x1b]9;Wyckoff: turn finished (1.0s)\x07"
OSC99 = "\x1b]99;i=wyckoff:d=0;Wyckoff\x1b\\\x1b]99;i=wyckoff:d=1:p=body;turn finished (1.0s)\x1b\\"
OSC777 = "\x1b]777;notify;Wyckoff;turn finished (1.0s)\x07"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"TERM_PROGRAM": "iTerm.app", "TERM": "xterm-256color"}, OSC9),
        ({"LC_TERMINAL": "iTerm2"}, OSC9),  # iTerm2 over ssh (LC_* travel)
        ({"ITERM_SESSION_ID": "w0t0p0:1"}, OSC9),
        ({"TERM_PROGRAM": "WezTerm"}, OSC9),
        ({"WEZTERM_PANE": "3"}, OSC9),
        ({"TERM_PROGRAM": "ghostty"}, OSC9),
        ({"TERM": "xterm-ghostty"}, OSC9),
        ({"TERM": "xterm-kitty"}, OSC99),
        ({"KITTY_WINDOW_ID": "1", "TERM": "xterm-256color"}, OSC99),
        ({"TERM": "foot"}, OSC777),
        ({"TERM": "foot-extra"}, OSC777),
        ({"TERM": "rxvt-unicode-256color"}, OSC777),
        ({"VTE_VERSION": "7600", "TERM": "xterm-256color"}, OSC777),
        ({"KONSOLE_VERSION": "240202"}, OSC777),
        ({"TERM_PROGRAM": "Apple_Terminal"}, BEL),
        ({"TERM_PROGRAM": "vscode"}, BEL),
        ({"TERM": "alacritty"}, BEL),
        ({"WT_SESSION": "abc"}, BEL),  # Windows Terminal: OSC 9 is ConEmu's command space there
        ({"ConEmuANSI": "ON"}, BEL),
        ({"TERM": "xterm-256color"}, BEL),
        ({}, BEL),
        # GNU screen: the bell, whatever terminal it runs in
        ({"STY": "123.pts-0", "KITTY_WINDOW_ID": "1", "TERM": "screen"}, BEL),
        # tmux without passthrough (the default): the bell
        ({"TMUX": "/tmp/tmux-1/default,1,0", "TERM": "tmux-256color", "TERM_PROGRAM": "tmux"}, BEL),
        ({"TMUX": "/tmp/tmux-1/default,1,0", "ITERM_SESSION_ID": "w0", "TERM_PROGRAM": "tmux"}, BEL),
    ],
)
def test_auto_picks_the_sequence_the_terminal_understands(env: dict[str, str], expected: str) -> None:
    assert notification("auto", env, "Wyckoff", "turn finished (1.0s)") == expected


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        # the outer terminal is known from what it left in tmux's environment
        (
            {"TMUX": "/tmp/t,1,0", "TERM_PROGRAM": "tmux", "ITERM_SESSION_ID": "w0"},
            "\x1bPtmux;\x1b\x1b]9;Wyckoff: turn finished (1.0s)\x07\x1b\\",
        ),
        (
            {"TMUX": "/tmp/t,1,0", "KITTY_WINDOW_ID": "1"},
            "\x1bPtmux;\x1b\x1b]99;i=wyckoff:d=0;Wyckoff\x1b\x1b\\\x1b\x1b]99;i=wyckoff:d=1:p=body;"
            "turn finished (1.0s)\x1b\x1b\\\x1b\\",
        ),
        (
            {"TMUX": "/tmp/t,1,0", "VTE_VERSION": "7600"},
            "\x1bPtmux;\x1b\x1b]777;notify;Wyckoff;turn finished (1.0s)\x07\x1b\\",
        ),
        ({"TMUX": "/tmp/t,1,0", "TERM": "tmux-256color"}, BEL),  # the outer terminal is unknown
    ],
)
def test_under_tmux_with_passthrough_the_sequence_is_wrapped(env: dict[str, str], expected: str) -> None:
    assert notification("auto", env, "Wyckoff", "turn finished (1.0s)", tmux_passthrough=True) == expected


@pytest.mark.parametrize("env", [{"TERM_PROGRAM": "iTerm.app"}, {"TERM": "xterm-kitty"}, {}])
def test_bell_always_rings_and_off_says_nothing(env: dict[str, str]) -> None:
    assert notification("bell", env, "Wyckoff", "x") == BEL
    assert notification("off", env, "Wyckoff", "x") == ""


@pytest.mark.parametrize(
    "hostile",
    [
        "pytest\x07\x1b]52;c;ZXZpbA==\x07",  # ends the OSC, then writes the clipboard
        "pytest\x1b\\\x1b[2J",  # ST, then clears the screen
        "pytest\x9c\x9d0;title\x9c",  # the 8-bit ST and OSC
        "pytest\nrm -rf /\r",
    ],
)
def test_no_control_character_from_the_text_reaches_the_terminal(hostile: str) -> None:
    # (method, ESC count, BEL count) of a sequence built from harmless text
    for method, escapes, bells in (("osc9", 1, 1), ("osc99", 4, 0), ("osc777", 1, 1)):
        sequence = osc_sequence(method, "Wyckoff", f"approval needed — run_shell `{hostile}`")
        assert (sequence.count("\x1b"), sequence.count("\x07")) == (escapes, bells), repr(sequence)
        controls = [c for c in sequence if (ord(c) < 0x20 and c not in "\x1b\x07") or 0x7F <= ord(c) <= 0x9F]
        assert controls == [], repr(sequence)
        assert "run_shell `pytest" in sequence


def test_clean_keeps_one_short_line() -> None:
    assert clean("a\n\n b\tc") == "a b c"
    assert len(clean("x" * 500)) == 200 and clean("x" * 500).endswith("…")
    # a semicolon would split OSC 777's title from its body: only the title is changed
    assert osc_sequence("osc777", "a;b", "c;d") == "\x1b]777;notify;a,b;c;d\x07"


def test_tmux_wrap_doubles_every_escape() -> None:
    assert tmux_wrap("\x1b]9;hi\x07") == "\x1bPtmux;\x1b\x1b]9;hi\x07\x1b\\"


def test_detect_method_reads_only_the_environment() -> None:
    assert detect_method({"TERM_PROGRAM": "WezTerm", "TERM": "xterm-kitty"}) == "osc9"
