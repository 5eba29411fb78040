"""The project's `.wyckoff/` folder, and what of it a team commits.

Shared (committable): `config.toml` (settings, permission rules), `ignore`,
`commands/`, `agents/`, `skills/`. Local to one checkout (ignored): anything named
`*.local.*`, and the `local/`, `state/` and `trust/` folders. Wyckoff writes a
`.gitignore` saying so the first time it writes into the folder; an existing one is
never changed.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from wyckoff_cli.storage.paths import PROJECT_DIR

GITIGNORE = """\
# Written by Wyckoff. Commit what your team shares: config.toml (settings and permission
# rules), ignore, commands/, agents/, skills/. What is local to this checkout is ignored:
*.local.*
/local/
/state/
/trust/
*.tmp
"""


def ensure_gitignore(folder: Path) -> Path | None:
    """Write `folder/.gitignore` when `folder` is a project's `.wyckoff/` and has none.
    Returns the file written, or None. A failure to write it is not an error."""
    if folder.name != PROJECT_DIR or not folder.is_dir():
        return None
    target = folder / ".gitignore"
    if target.exists():
        return None
    with contextlib.suppress(OSError):
        target.write_text(GITIGNORE, encoding="utf-8")
        return target
    return None
