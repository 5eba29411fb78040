"""read_file, write_file and edit_file on real files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.tools.conftest import run_tool, write
from wyckoff_cli.core.errors import ToolError
from wyckoff_cli.tools.base import ToolContext
from wyckoff_cli.tools.edit import edit_file
from wyckoff_cli.tools.files import PAGE_CHARS, read_file, write_file

# --------------------------------------------------------------------------- read_file


async def test_read_numbers_lines_and_says_the_total(root: Path, ctx: ToolContext) -> None:
    write(root, "a.py", "one\ntwo\nthree\n")
    text = (await run_tool(read_file, ctx, path="a.py")).text
    assert text.splitlines() == [
        "a.py: lines 1-3 of 3",
        "     1\tone",
        "     2\ttwo",
        "     3\tthree",
        "[end of file]",
    ]


async def test_read_offset_and_limit(root: Path, ctx: ToolContext) -> None:
    write(root, "a.txt", "".join(f"line {i}\n" for i in range(1, 101)))
    text = (await run_tool(read_file, ctx, path="a.txt", offset=10, limit=5)).text
    assert text.splitlines()[0] == "a.txt: lines 10-14 of 100"
    assert "    10\tline 10" in text and "line 15" not in text
    assert "read_file(path='a.txt', offset=15)" in text


async def test_pages_cover_a_big_file_and_stay_under_the_inline_limit(root: Path, ctx: ToolContext) -> None:
    lines = [f"{i:06d} " + "x" * (i % 300) for i in range(1, 3001)]
    write(root, "big.txt", "\n".join(lines) + "\n")
    seen: list[str] = []
    offset = 1
    pages = 0
    while True:
        text = (await run_tool(read_file, ctx, path="big.txt", offset=offset)).text
        assert len(text) < 7_500
        pages += 1
        body = [line.split("\t", 1)[1] for line in text.splitlines() if "\t" in line]
        seen.extend(body)
        if "[end of file]" in text:
            break
        offset = int(text.rsplit("offset=", 1)[1].rstrip(")]"))
    assert seen == lines
    assert pages > 10


async def test_last_line_without_newline_counts(root: Path, ctx: ToolContext) -> None:
    write(root, "a.txt", "a\n" * 3000 + "tail")
    text = (await run_tool(read_file, ctx, path="a.txt", limit=1)).text
    assert "of 3,001" in text


async def test_long_lines_are_cut(root: Path, ctx: ToolContext) -> None:
    write(root, "min.js", "x" * 50_000 + "\nnext\n")
    text = (await run_tool(read_file, ctx, path="min.js")).text
    assert "48,000 more characters" in text
    assert "     2\tnext" in text
    assert len(text) <= PAGE_CHARS + 500


async def test_binary_refused(root: Path, ctx: ToolContext) -> None:
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    with pytest.raises(ToolError, match="binary file"):
        await run_tool(read_file, ctx, path="img.png")


async def test_any_encoding_is_shown_with_replacements(root: Path, ctx: ToolContext) -> None:
    (root / "latin.txt").write_bytes("caf\xe9\nna\xefve\n".encode("latin-1"))
    text = (await run_tool(read_file, ctx, path="latin.txt")).text
    assert "caf\ufffd" in text and "not valid UTF-8" in text


async def test_utf16_and_bom_and_crlf(root: Path, ctx: ToolContext) -> None:
    (root / "u16.txt").write_bytes(b"\xff\xfe" + "héllo\r\nwörld\r\n".encode("utf-16-le"))
    text = (await run_tool(read_file, ctx, path="u16.txt")).text
    assert "     1\théllo\n     2\twörld" in text
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbfa\r\nb\r\n")
    text = (await run_tool(read_file, ctx, path="bom.txt")).text
    assert "     1\ta\n     2\tb\n" in text


async def test_empty_missing_folder_and_past_end(root: Path, ctx: ToolContext) -> None:
    write(root, "empty.txt")
    assert "empty" in (await run_tool(read_file, ctx, path="empty.txt")).text
    write(root, "src/config.py", "x\n")
    with pytest.raises(ToolError, match="Similar names there: config.py"):
        await run_tool(read_file, ctx, path="src/confg.py")
    with pytest.raises(ToolError, match="folder"):
        await run_tool(read_file, ctx, path="src")
    with pytest.raises(ToolError, match="past the end"):
        await run_tool(read_file, ctx, path="src/config.py", offset=5)


async def test_read_refuses_unapproved_outside_path(ctx: ToolContext, outside: Path) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        await run_tool(read_file, ctx, path=str(outside / "secret.txt"))
    ctx.approved_outside_paths = frozenset({outside / "secret.txt"})
    assert "top secret" in (await run_tool(read_file, ctx, path=str(outside / "secret.txt"))).text


async def test_read_offloaded_result_in_results_dir(ctx: ToolContext) -> None:
    assert ctx.results_dir is not None
    ctx.results_dir.mkdir()
    (ctx.results_dir / "run_shell-1.txt").write_text("out\n")
    assert "out" in (await run_tool(read_file, ctx, path=str(ctx.results_dir / "run_shell-1.txt"))).text


@pytest.mark.parametrize(
    "name", ["dossier avec espaces/fichier é.txt", "日本語/ファイル 名.md", "x" * 200 + ".txt", "-dash.txt"]
)
async def test_odd_names_round_trip(root: Path, ctx: ToolContext, name: str) -> None:
    await run_tool(write_file, ctx, path=name, content="héllo\n")
    assert (root / name).read_text(encoding="utf-8") == "héllo\n"
    assert "héllo" in (await run_tool(read_file, ctx, path=name)).text
    await run_tool(edit_file, ctx, path=name, old="héllo", new="bye")
    assert (root / name).read_text(encoding="utf-8") == "bye\n"


async def test_name_too_long_is_a_tool_error(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="too long"):
        await run_tool(write_file, ctx, path="y" * 300 + ".txt", content="x")
    with pytest.raises(ToolError, match="too long"):
        await run_tool(read_file, ctx, path="y" * 300 + ".txt")


# --------------------------------------------------------------------------- write_file


async def test_write_creates_parents_and_shows_whole_new_file(root: Path, ctx: ToolContext) -> None:
    outcome = await run_tool(write_file, ctx, path="a/b/c.txt", content="one\ntwo\n")
    assert (root / "a/b/c.txt").read_text() == "one\ntwo\n"
    assert outcome.text == "Created a/b/c.txt (2 lines)."
    assert outcome.display is not None
    assert outcome.display["diff"].splitlines() == [
        "--- /dev/null",
        "+++ b/a/b/c.txt",
        "@@ -0,0 +1,2 @@",
        "+one",
        "+two",
    ]


async def test_write_keeps_crlf_bom_and_mode(root: Path, ctx: ToolContext) -> None:
    path = root / "win.txt"
    path.write_bytes(b"\xef\xbb\xbfold\r\nlines\r\n")
    path.chmod(0o751)
    outcome = await run_tool(write_file, ctx, path="win.txt", content="new\ncontent\n")
    assert path.read_bytes() == b"\xef\xbb\xbfnew\r\ncontent\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert "+new" in outcome.display["diff"]  # type: ignore[index]


async def test_write_keeps_lf_when_content_has_crlf(root: Path, ctx: ToolContext) -> None:
    write(root, "unix.txt", "a\nb\n")
    await run_tool(write_file, ctx, path="unix.txt", content="c\r\nd\r\n")
    assert (root / "unix.txt").read_bytes() == b"c\nd\n"


async def test_write_is_atomic_and_leaves_no_temp_files(root: Path, ctx: ToolContext) -> None:
    write(root, "a.txt", "old")
    await run_tool(write_file, ctx, path="a.txt", content="new")
    assert sorted(os.listdir(root)) == ["a.txt"]


async def test_write_through_symlink_inside_writes_target(root: Path, ctx: ToolContext) -> None:
    write(root, "real.txt", "old\n")
    (root / "link.txt").symlink_to(root / "real.txt")
    await run_tool(write_file, ctx, path="link.txt", content="new\n")
    assert (root / "link.txt").is_symlink()
    assert (root / "real.txt").read_text() == "new\n"


@pytest.mark.parametrize("path", [".git/config", ".git/hooks/pre-commit", "sub/.git/HEAD", ".git"])
async def test_git_internals_are_never_written(root: Path, ctx: ToolContext, path: str) -> None:
    (root / ".git").mkdir()
    with pytest.raises(ToolError, match=r"\.git"):
        await run_tool(write_file, ctx, path=path, content="x")


async def test_write_errors(root: Path, ctx: ToolContext, outside: Path) -> None:
    (root / "dir").mkdir()
    write(root, "file.txt", "x")
    with pytest.raises(ToolError, match="folder"):
        await run_tool(write_file, ctx, path="dir", content="x")
    with pytest.raises(ToolError, match="file"):
        await run_tool(write_file, ctx, path="file.txt/inner.txt", content="x")
    with pytest.raises(ToolError, match="outside the workspace"):
        await run_tool(write_file, ctx, path=str(outside / "x.txt"), content="x")
    (root / "out").symlink_to(outside)
    with pytest.raises(ToolError, match="outside the workspace"):
        await run_tool(write_file, ctx, path="out/x.txt", content="x")
    assert not (outside / "x.txt").exists()


async def test_write_preview(root: Path, ctx: ToolContext) -> None:
    write(root, "a.txt", "one\n")
    assert write_file.preview is not None
    preview = write_file.preview({"path": "a.txt", "content": "two\n"}, ctx)
    assert preview["kind"] == "diff" and preview["new_file"] is False
    assert "-one\n+two\n" in preview["diff"]
    assert preview["rule"] == "write_file(a.txt)"
    assert (root / "a.txt").read_text() == "one\n"  # a preview never writes
    new = write_file.preview({"path": "n/b.txt", "content": "x\n"}, ctx)
    assert new["new_file"] is True and "+x" in new["diff"]
    outside_preview = write_file.preview({"path": "/tmp/zz.txt", "content": "x"}, ctx)
    assert "rule" not in outside_preview


# --------------------------------------------------------------------------- edit_file

SOURCE = """def add(a, b):
    return a + b


def sub(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


async def test_edit_replaces_exactly_once(root: Path, ctx: ToolContext) -> None:
    write(root, "m.py", SOURCE)
    outcome = await run_tool(edit_file, ctx, path="m.py", old="    return a - b", new="    return b - a")
    assert (root / "m.py").read_text() == SOURCE.replace("a - b", "b - a")
    assert outcome.text == "Edited m.py: 1 replacement from line 6 (+1 -1 lines)."
    assert "-    return a - b\n+    return b - a" in outcome.display["diff"]  # type: ignore[index]


async def test_edit_not_found_shows_closest_candidates(root: Path, ctx: ToolContext) -> None:
    write(root, "m.py", SOURCE)
    with pytest.raises(ToolError) as info:
        await run_tool(edit_file, ctx, path="m.py", old="def sub(a, c):\n    return a - c", new="x")
    message = info.value.message
    assert "was not found in m.py" in message
    assert "Lines 5-6" in message and "     5\tdef sub(a, b):" in message
    assert (root / "m.py").read_text() == SOURCE


async def test_edit_not_found_points_at_whitespace_difference(root: Path, ctx: ToolContext) -> None:
    write(root, "m.py", SOURCE)
    with pytest.raises(ToolError, match="different whitespace or indentation is at line 9"):
        await run_tool(edit_file, ctx, path="m.py", old="def mul(a, b):\n  return a * b", new="x")


async def test_edit_ambiguous_lists_lines(root: Path, ctx: ToolContext) -> None:
    write(root, "m.py", SOURCE)
    with pytest.raises(ToolError) as info:
        await run_tool(edit_file, ctx, path="m.py", old="(a, b):", new="(a, b, c):")
    assert "occurs 3 times in m.py (lines 1, 5, 9)" in info.value.message
    assert "replace_all" in info.value.message


async def test_edit_replace_all(root: Path, ctx: ToolContext) -> None:
    write(root, "m.py", SOURCE)
    outcome = await run_tool(edit_file, ctx, path="m.py", old="(a, b):", new="(a, b, c):", replace_all=True)
    assert (root / "m.py").read_text().count("(a, b, c):") == 3
    assert "3 replacements" in outcome.text


async def test_edit_list_is_all_or_nothing(root: Path, ctx: ToolContext) -> None:
    write(root, "m.py", SOURCE)
    with pytest.raises(ToolError, match="Edit 2 of 2 failed, so none was applied"):
        await run_tool(
            edit_file,
            ctx,
            path="m.py",
            edits=[{"old": "a + b", "new": "b + a"}, {"old": "nothing like this", "new": "x"}],
        )
    assert (root / "m.py").read_text() == SOURCE
    await run_tool(
        edit_file,
        ctx,
        path="m.py",
        edits=[
            {"old": "a + b", "new": "b + a"},
            {"old": "b + a", "new": "a + b + 0"},
            {"old": "mul", "new": "times"},
        ],
    )
    assert "a + b + 0" in (root / "m.py").read_text() and "times" in (root / "m.py").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"old": "", "new": "x"}, "empty"),
        ({"old": "x", "new": "x"}, "identical"),
        ({"old": "x"}, "give `old` and `new`"),
        ({"old": "x", "new": "y", "edits": [{"old": "a", "new": "b"}]}, "not both"),
    ],
)
async def test_edit_argument_errors(
    root: Path, ctx: ToolContext, args: dict[str, object], message: str
) -> None:
    write(root, "a.txt", "x\n")
    with pytest.raises(ToolError, match=message):
        await run_tool(edit_file, ctx, path="a.txt", **args)


async def test_edit_keeps_crlf_mode_and_undecodable_bytes(root: Path, ctx: ToolContext) -> None:
    path = root / "legacy.txt"
    path.write_bytes(b"caf\xe9 au lait\r\nsecond line\r\n")
    path.chmod(0o700)
    await run_tool(edit_file, ctx, path="legacy.txt", old="second line", new="2nd line\nthird")
    assert path.read_bytes() == b"caf\xe9 au lait\r\n2nd line\r\nthird\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


async def test_edit_refuses_missing_binary_and_git(root: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="use write_file"):
        await run_tool(edit_file, ctx, path="nope.txt", old="a", new="b")
    (root / "b.bin").write_bytes(b"a\x00b")
    with pytest.raises(ToolError, match="binary"):
        await run_tool(edit_file, ctx, path="b.bin", old="a", new="b")
    write(root, ".git/config", "[core]\n")
    with pytest.raises(ToolError, match=r"\.git"):
        await run_tool(edit_file, ctx, path=".git/config", old="core", new="x")


async def test_edit_preview_is_a_dry_run(root: Path, ctx: ToolContext) -> None:
    write(root, "m.py", SOURCE)
    assert edit_file.preview is not None
    preview = edit_file.preview({"path": "m.py", "old": "a * b", "new": "a @ b"}, ctx)
    assert "+    return a @ b" in preview["diff"] and preview["rule"] == "edit_file(m.py)"
    failing = edit_file.preview({"path": "m.py", "old": "zzz", "new": "y"}, ctx)
    assert "not found" in failing["error"]
    assert (root / "m.py").read_text() == SOURCE
