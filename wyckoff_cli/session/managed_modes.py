"""The permission modes a managed policy leaves (storage/managed.py): with
`disable_yolo`, yolo is never the session's mode, never shown in the status bar and
never offered by Shift+Tab; asking for it (`--yolo`, `permission_mode = "yolo"`,
`/mode yolo`) says why, naming the policy file."""

from __future__ import annotations

from wyckoff_cli.core.errors import ConfigError
from wyckoff_cli.tools.permissions.policy import PERMISSION_MODES, next_permission_mode


def _yolo_note() -> str | None:
    from wyckoff_cli.storage.managed import load_managed

    try:
        managed = load_managed()
    except ConfigError:
        return None  # the session builder reports a policy it cannot honour
    return managed.yolo_note if managed is not None and managed.disable_yolo else None


def start_mode(mode: str) -> tuple[str, str]:
    """(the mode a session starts in, a notice or ""): yolo becomes default when a
    managed policy disables it."""
    note = _yolo_note() if mode == "yolo" else None
    if note is None:
        return mode, ""
    return "default", f"{note}: the session starts in default mode"


def mode_refusal(mode: str) -> str | None:
    """Why `mode` cannot be chosen now, or None."""
    note = _yolo_note() if mode == "yolo" else None
    return f"{note}; choose one of {', '.join(allowed_modes())}" if note else None


def allowed_modes() -> tuple[str, ...]:
    disabled = _yolo_note() is not None
    return tuple(m for m in PERMISSION_MODES if not (disabled and m == "yolo"))


def next_allowed_mode(mode: str) -> str:
    """The mode after `mode` in the Shift+Tab cycle, skipping the ones a policy disables."""
    following = next_permission_mode(mode)
    return next_permission_mode(following) if mode_refusal(following) else following
