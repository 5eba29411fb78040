"""A `merge_worktree` approval over ACP shows the diff it would apply (its preview's
patch as text: it names no single file an editor's diff view could show)."""

from __future__ import annotations

from pathlib import Path

from acp import schema

from wyckoff_cli.acp.call_content import permission_content


def test_the_merge_patch_is_in_the_permission_request(tmp_path: Path) -> None:
    patch = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-a - b\n+a + b\n"
    preview = {"kind": "diff", "path": "worktree fixer-1 (branch wyckoff/fixer-1)", "diff": patch}
    content = permission_content("merge_worktree", {"name": "fixer-1"}, preview, tmp_path)
    assert content is not None and len(content) == 1
    block = content[0]
    assert isinstance(block, schema.ContentToolCallContent)
    assert isinstance(block.content, schema.TextContentBlock)
    assert block.content.text == f"worktree fixer-1 (branch wyckoff/fixer-1)\n{patch}"
