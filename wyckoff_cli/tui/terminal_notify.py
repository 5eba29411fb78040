"""Which notification a terminal understands, and the bytes that raise it. Pure: no
Textual, no I/O — the environment and tmux's answer come in as arguments.

Methods (`[ui] notifications = "auto"`):

| terminal | how we know | sequence |
| --- | --- | --- |
| iTerm2 | `TERM_PROGRAM=iTerm.app`, `LC_TERMINAL=iTerm2`, `ITERM_SESSION_ID` | OSC 9 |
| WezTerm | `TERM_PROGRAM=WezTerm`, `WEZTERM_PANE` | OSC 9 |
| Ghostty | `TERM_PROGRAM=ghostty`, `TERM=xterm-ghostty`, `GHOSTTY_RESOURCES_DIR` | OSC 9 |
| kitty | `TERM=xterm-kitty`, `KITTY_WINDOW_ID` | OSC 99 (kitty's own protocol) |
| foot | `TERM=foot…` | OSC 777 `notify` |
| rxvt-unicode | `TERM=rxvt-unicode…` (needs its `notify` perl extension) | OSC 777 `notify` |
| VTE (GNOME Terminal, Tilix…) | `VTE_VERSION` (shown where VTE carries the notify patch, as on Fedora) | OSC 777 `notify` |
| Konsole | `KONSOLE_VERSION` | OSC 777 `notify` |
| anything else (Apple Terminal, VS Code, Alacritty, Windows Terminal, ConEmu, GNU screen…) | | BEL |

OSC 9 is not sent to unknown terminals on purpose: ConEmu (and Windows Terminal's
ConEmu-compatible OSC 9 sub-commands) read OSC 9 as a command, not a message.

Under tmux (`TMUX`), the outer terminal is recognised by what its environment left
behind (tmux replaces `TERM` and `TERM_PROGRAM`), and the sequence is wrapped in tmux's
passthrough (`ESC P tmux; …payload with every ESC doubled… ESC \\`) when tmux will
forward it (`allow-passthrough all`, or `on` while the pane is shown: the caller asks
tmux); otherwise, or with an unknown outer terminal, the bell (tmux passes a bell on
to the outer terminal, `bell-action`). Under
GNU screen (`STY`), always the bell.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

Method = Literal["osc9", "osc99", "osc777", "bell"]
Mode = Literal["auto", "bell", "off"]

# what the detection reads (tests clear them all)
TERMINAL_ENV = (
    "TERM", "TERM_PROGRAM", "LC_TERMINAL", "ITERM_SESSION_ID", "WEZTERM_PANE", "GHOSTTY_RESOURCES_DIR",
    "KITTY_WINDOW_ID", "VTE_VERSION", "KONSOLE_VERSION", "TMUX", "TMUX_PANE", "STY",
)  # fmt: skip
BEL = "\x07"
ST = "\x1b\\"
MAX_TEXT = 200  # characters: a notification is a line, not a log
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")  # C0, DEL and C1: none may reach the terminal


def detect_method(env: Mapping[str, str]) -> Method:
    """The notification the terminal (the outer one, under tmux) understands."""
    program = env.get("TERM_PROGRAM", "").lower()
    term = env.get("TERM", "").lower()
    if program == "iterm.app" or env.get("LC_TERMINAL", "").lower() == "iterm2" or "ITERM_SESSION_ID" in env:
        return "osc9"
    if program == "wezterm" or "WEZTERM_PANE" in env:
        return "osc9"
    if program == "ghostty" or term == "xterm-ghostty" or "GHOSTTY_RESOURCES_DIR" in env:
        return "osc9"
    if term == "xterm-kitty" or "KITTY_WINDOW_ID" in env:
        return "osc99"
    if term.startswith(("foot", "rxvt-unicode")) or "VTE_VERSION" in env or "KONSOLE_VERSION" in env:
        return "osc777"
    return "bell"


def under_tmux(env: Mapping[str, str]) -> bool:
    return bool(env.get("TMUX"))


def clean(text: str, limit: int = MAX_TEXT) -> str:
    """One line of plain text: control characters (ESC, BEL, newlines, C1) become
    spaces, so nothing in a command or a model's text can end the sequence early or
    smuggle another one in."""
    text = " ".join(_CONTROL.sub(" ", text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def osc_sequence(method: Method, title: str, body: str) -> str:
    """The escape sequence for `method` (BEL for "bell")."""
    title, body = clean(title), clean(body)
    if method == "osc9":
        return f"\x1b]9;{title}: {body}{BEL}"
    if method == "osc99":
        # kitty: the title, then the body of the same notification (i=…, d=0 = more to come)
        return f"\x1b]99;i=wyckoff:d=0;{title}{ST}\x1b]99;i=wyckoff:d=1:p=body;{body}{ST}"
    if method == "osc777":
        return f"\x1b]777;notify;{title.replace(';', ',')};{body}{BEL}"
    return BEL


def tmux_wrap(sequence: str) -> str:
    """tmux's passthrough: the payload with every ESC doubled, inside `ESC P tmux; … ESC \\`."""
    return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + ST


def notification(
    mode: Mode, env: Mapping[str, str], title: str, body: str, *, tmux_passthrough: bool = False
) -> str:
    """What to write to the terminal for one notification ("" for `off`).
    `tmux_passthrough` says whether tmux forwards passthrough sequences (asked only
    under tmux)."""
    if mode == "off":
        return ""
    method: Method = "bell" if mode == "bell" else detect_method(env)
    if method == "bell" or env.get("STY"):  # GNU screen: the bell
        return BEL
    sequence = osc_sequence(method, title, body)
    if under_tmux(env):
        return tmux_wrap(sequence) if tmux_passthrough else BEL
    return sequence
