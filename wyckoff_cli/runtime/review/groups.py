"""A large change split into file groups, one reviewer sub-agent each.

Files stay with their folder where they fit: the files are sorted by path (so a
folder's files are neighbours), then packed in order into groups of at most
`max_files` files and `max_chars` characters of diff. A file larger than `max_chars`
on its own is a group of its own. Files that cannot carry findings (deleted, binary)
ride along as context with their neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wyckoff_cli.runtime.review.changes import FileDiff

MAX_GROUP_FILES = 12
MAX_GROUP_CHARS = 60_000


@dataclass(frozen=True, slots=True)
class FileGroup:
    files: tuple[FileDiff, ...]

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    @property
    def reviewable(self) -> list[str]:
        return [f.path for f in self.files if f.reviewable]

    @property
    def diff(self) -> str:
        return "".join(f.text if f.text.endswith("\n") else f.text + "\n" for f in self.files)


def split_groups(
    files: Sequence[FileDiff], max_files: int = MAX_GROUP_FILES, max_chars: int = MAX_GROUP_CHARS
) -> list[FileGroup]:
    groups: list[FileGroup] = []
    current: list[FileDiff] = []
    size = 0
    for diff in sorted(files, key=lambda f: f.path):
        if current and (len(current) >= max_files or size + diff.size > max_chars):
            groups.append(FileGroup(tuple(current)))
            current, size = [], 0
        current.append(diff)
        size += diff.size
    if current:
        groups.append(FileGroup(tuple(current)))
    return [group for group in groups if group.reviewable]
